"""Tests of curator/engine/search/."""
