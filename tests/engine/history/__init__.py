"""Tests of curator/engine/history/."""
