"""Tests of curator/engine/sync/."""
