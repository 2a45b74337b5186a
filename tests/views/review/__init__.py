"""Tests of curator/views/review/."""
