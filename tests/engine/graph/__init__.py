"""Tests of curator/engine/graph/."""
