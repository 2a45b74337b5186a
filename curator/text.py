"""Small helpers for the words the station and the command line show."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1,200 pages`` (``nouns`` for an irregular plural)."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"
