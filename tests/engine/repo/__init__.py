"""Tests of curator/engine/repo/."""
