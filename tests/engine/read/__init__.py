"""Tests of curator/engine/read/."""
