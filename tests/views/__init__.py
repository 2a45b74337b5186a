"""Tests of the station (pytest-qt, offscreen); one folder per view package."""
