"""Tests of curator/views/policy/."""
