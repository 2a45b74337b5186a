"""Tests of curator/views/history/."""
