"""Tests of curator/engine/policy/."""
