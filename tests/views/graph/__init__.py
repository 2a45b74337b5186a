"""Tests of curator/views/graph/."""
