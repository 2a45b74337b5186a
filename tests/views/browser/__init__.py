"""Tests of curator/views/browser/."""
