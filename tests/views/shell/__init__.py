"""Tests of curator/views/shell/."""
