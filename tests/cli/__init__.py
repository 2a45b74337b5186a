"""Tests of the `curator` command line."""
