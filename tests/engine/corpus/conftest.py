"""Fixtures shared by the page cache's tests."""

from __future__ import annotations

import pytest

import curator.engine.corpus.store as store_module
from curator.engine.corpus.page import parse_page


@pytest.fixture
def parse_counter(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every path the page cache parses."""
    parsed: list[str] = []

    def counting(path: str, data: bytes, mtime_ns: int = 0):  # type: ignore[no-untyped-def]
        parsed.append(path)
        return parse_page(path, data, mtime_ns)

    monkeypatch.setattr(store_module, "parse_page", counting)
    return parsed
