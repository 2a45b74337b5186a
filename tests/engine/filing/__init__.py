"""Tests of curator/engine/filing/."""
