"""Tests of curator/engine/dedup/."""
