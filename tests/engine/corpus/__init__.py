"""Tests of curator/engine/corpus/."""
