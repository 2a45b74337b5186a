"""Tests of the engine as a whole (structure, layering, integrity, hardening); one folder per engine package below."""
