"""Tests of curator/engine/write/."""
