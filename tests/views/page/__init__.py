"""Tests of curator/views/page/."""
