"""Tests of curator/engine/review/."""
