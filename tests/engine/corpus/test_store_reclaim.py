"""A schema change gives the dropped tables' space back to the file system (issue: a cache kept
~90 MB of free pages for good after an upgrade, since nothing else ever vacuums)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import ClassVar

import pytest

import curator.engine.corpus.store as store_module
import curator.engine.search.index as index_module
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.store import SCHEMA_VERSION
from curator.engine.wiki import Wiki
from tests.corpus import generate


def _pragma(cache: Path, name: str) -> int:
    conn = sqlite3.connect(cache)
    try:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])
    finally:
        conn.close()


def _set(cache: Path, sql: str) -> None:
    conn = sqlite3.connect(cache, isolation_level=None)
    try:
        conn.execute(sql)
    finally:
        conn.close()


def _built(tmp_path: Path, pages: int = 200, search: bool = False) -> tuple[Path, Path]:
    info = generate(tmp_path / "w", pages)
    wiki = Wiki(info.root)
    assert len(wiki.pages) == pages
    if search:
        wiki.search.refresh()
    wiki.close()
    return info.root, locate_state(info.root) / "cache.sqlite"


def test_an_old_cache_schema_leaves_no_free_pages(tmp_path: Path) -> None:
    root, cache = _built(tmp_path)
    _set(cache, f"PRAGMA user_version={SCHEMA_VERSION - 1}")
    size = cache.stat().st_size
    wiki = Wiki(root)
    try:
        assert _pragma(cache, "user_version") == SCHEMA_VERSION
        assert _pragma(cache, "freelist_count") == 0  # (before the rebuild writes anything)
        assert len(wiki.pages) == 200  # rebuilt
    finally:
        wiki.close()
    assert _pragma(cache, "freelist_count") == 0
    assert cache.stat().st_size <= size


def test_an_old_search_schema_leaves_no_free_pages(tmp_path: Path) -> None:
    root, cache = _built(tmp_path, search=True)
    _set(cache, "UPDATE search_meta SET value='old' WHERE key='schema'")
    wiki = Wiki(root)
    try:
        assert _pragma(cache, "freelist_count") == 0
        assert wiki.search.search("ledger")  # rebuilt
    finally:
        wiki.close()


def test_an_unchanged_schema_never_vacuums(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = _built(tmp_path, search=True)
    _set(cache, "DELETE FROM records WHERE rowid % 2 = 0")  # free pages, but no schema change
    assert _pragma(cache, "freelist_count") > 0
    calls: list[object] = []
    monkeypatch.setattr(store_module, "reclaim", calls.append)
    monkeypatch.setattr(index_module, "reclaim", calls.append)
    Wiki(root).close()  # (the search index attached too: its schema checked)
    assert calls == []
    assert _pragma(cache, "freelist_count") > 0


class _NoVacuum(sqlite3.Connection):
    """A connection whose VACUUM fails as when another process holds the database or the disk is full."""

    tried: ClassVar[list[str]] = []

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
        if sql.strip().upper() == "VACUUM":
            self.tried.append(sql)
            raise sqlite3.OperationalError("database or disk is full")
        return super().execute(sql, *args)  # type: ignore[arg-type]


def test_a_vacuum_that_fails_does_not_stop_the_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache = _built(tmp_path)
    _set(cache, f"PRAGMA user_version={SCHEMA_VERSION - 1}")
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connect(*a, factory=_NoVacuum, **k))
    wiki = Wiki(root)
    try:
        assert len(wiki.pages) == 200
    finally:
        wiki.close()
    monkeypatch.undo()
    assert _NoVacuum.tried == ["VACUUM"]
    conn = sqlite3.connect(cache)
    try:  # the cache was rebuilt in the file, not in memory
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 200
    finally:
        conn.close()
