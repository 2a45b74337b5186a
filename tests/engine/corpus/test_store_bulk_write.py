"""The page cache's bulk write, kept exact while made cheaper (session 9): pages read with
``os.read`` to the end, the name tables of a parse in worker processes written as each chunk
arrives, records compressed only above :data:`~curator.engine.corpus.store.COMPRESS_ABOVE`."""

from __future__ import annotations

import marshal
import os
import sqlite3
import zlib
from pathlib import Path

import pytest

import curator.engine.corpus.parallel as parallel_module
import curator.engine.corpus.store as store_module
from curator.engine.corpus.page import parse_page
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.store import COMPRESS_ABOVE, decode_record, encode_record, read_page_bytes
from curator.engine.wiki import Wiki
from tests.corpus import write_pages

# --- reading a page ------------------------------------------------------------------------

@pytest.mark.parametrize("hint", [-1, 0, 5, 4095, 4096, 4097, 1 << 20])
@pytest.mark.parametrize("length", [0, 1, 4096, 3 * (1 << 20) + 7])
def test_a_page_is_read_whole_whatever_size_its_stat_said(tmp_path: Path, hint: int, length: int) -> None:
    # (a page that grew or shrank between the walk's stat and the read is read as it is now)
    data = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
    (tmp_path / "p.md").write_bytes(data)
    assert read_page_bytes(str(tmp_path), "p.md", hint) == data
    assert read_page_bytes(str(tmp_path), "p.md") == data


def test_a_missing_page_reads_as_none_and_a_symlink_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("secret")
    os.symlink(tmp_path / "real.md", tmp_path / "link.md")
    assert read_page_bytes(str(tmp_path), "gone.md", 10) is None
    assert read_page_bytes(str(tmp_path), "link.md", 6) is None


# --- records -------------------------------------------------------------------------------

def test_only_records_above_the_threshold_are_compressed_and_both_decode(tmp_path: Path) -> None:
    small = parse_page("a.md", b"# A\n\n" + b"[[b]] " * 5)[0].to_row()
    big = parse_page("h.md", b"# Hub\n\n" + b"".join(b"[[page-%d]] " % i for i in range(2000)))[0].to_row()
    small_blob, big_blob = encode_record(small), encode_record(big)
    assert len(small_blob) <= COMPRESS_ABOVE and small_blob[:1] != b"Z"
    assert marshal.loads(small_blob) == [*small[:15], [list(c) for c in zip(*small[15], strict=True)], *small[16:]]
    assert big_blob[:1] == b"Z" and len(zlib.decompress(big_blob[1:])) > max(COMPRESS_ABOVE, len(big_blob))
    for row, blob in ((small, small_blob), (big, big_blob)):
        decoded = decode_record(blob)
        decoded[15] = [list(link) for link in decoded[15]]
        assert decoded == row
    # a small record an earlier threshold compressed (a cache written before) still decodes
    decoded = decode_record(b"Z" + zlib.compress(small_blob, 1))
    decoded[15] = [list(link) for link in decoded[15]]
    assert decoded == small


# --- the name tables of a bulk write -------------------------------------------------------

def _name_rows(root: Path) -> tuple[set[tuple[str, int, int]], set[tuple[str, int, int]], dict[str, bytes]]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        records = {path: rec for path, rec in conn.execute("SELECT path, record FROM records")}
        tables = []
        for table in ("link_names", "page_names"):
            tables.append(set(conn.execute(f"SELECT r.path, t.h, 1 FROM {table} t JOIN records r ON r.rowid = t.src")))
            # every row points at a record
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE src NOT IN (SELECT rowid FROM records)"
                                ).fetchone()[0] == 0
    finally:
        conn.close()
    return tables[0], tables[1], records


def _rows(records: dict[str, bytes]) -> dict[str, list[object]]:
    """The records decoded, without their mtimes (the two wikis were written at other moments)."""
    out: dict[str, list[object]] = {}
    for path, blob in records.items():
        row = decode_record(blob)
        row[2], row[15] = 0, list(row[15])
        out[path] = row
    return out


def _pages(n: int) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for i in range(n):
        folder = ("wiki/", "notes/", "", "wiki/people/")[i % 4]
        out[f"{folder}p{i}.md"] = (f"---\ntitle: Page {i}\naliases: [P{i}, Péage {i}]\n---\n# Page {i}\n\n"
                                   f"See [[p{(i * 7) % n}]], [[wiki/p{i + 1}]] and [[Page {i // 2}]].\n")
    return out


def test_a_parse_in_worker_processes_writes_the_same_name_rows_as_one_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = _pages(230)
    serial = write_pages(tmp_path / "serial", pages)
    bulk = write_pages(tmp_path / "bulk", pages)
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 1 << 30)
    one = Wiki(serial)
    assert len(one.pages) == 230
    one.close()
    # many small chunks from two workers, their name rows written as each one comes in
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 10)
    cut = parallel_module.chunks
    monkeypatch.setattr(parallel_module, "chunks", lambda files: cut(files, 9))
    monkeypatch.setattr(parallel_module, "workers", lambda: 2)
    calls: list[int] = []
    insert = store_module.PageStore._insert_names

    def counting(self: store_module.PageStore, first: int, chunk_names: list[tuple[int, str, str]]) -> None:
        calls.append(len(chunk_names))
        insert(self, first, chunk_names)

    monkeypatch.setattr(store_module.PageStore, "_insert_names", counting)
    two = Wiki(bulk)
    assert len(two.pages) == 230
    two.close()
    assert sum(calls) == 26 and calls.count(1) >= 20  # (chunk by chunk, not all at the end)
    links_a, names_a, records_a = _name_rows(serial)
    links_b, names_b, records_b = _name_rows(bulk)
    assert _rows(records_a) == _rows(records_b)
    assert links_a == links_b and names_a == names_b and len(links_a) > 230
    # and a lookup by name finds the same pages
    again = Wiki(bulk)
    assert sorted(again.store.pages_named(["p3", "page-4"])) == sorted(Wiki(serial).store.pages_named(["p3", "page-4"]))


# --- the snapshot's triggers and the page cache around a bulk write ------------------------

def _triggers(root: Path) -> set[str]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'"
                                                 " AND tbl_name='pages'")}
    finally:
        conn.close()


SNAPSHOT_TRIGGERS = {"pages_insert_snapshot", "pages_update_snapshot", "pages_delete_snapshot"}


def test_a_bulk_write_fires_no_trigger_per_row_and_leaves_them_as_they_were(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk write deletes the snapshot's token once and writes its rows without the per-row
    triggers; they are back when it commits, so another program's change to a page still
    deletes the token, and a later process reads the pages again instead of the snapshot."""
    root = write_pages(tmp_path / "w", _pages(60))
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 10)
    seen: list[set[str]] = []
    flush = store_module.PageStore._flush

    def flushing(self: store_module.PageStore, *args: object) -> None:
        seen.append({name for (name,) in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='pages'")})
        assert self._conn.execute("PRAGMA cache_size").fetchone()[0] == store_module.BULK_CACHE_KIB
        flush(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module.PageStore, "_flush", flushing)
    wiki = Wiki(root)
    assert len(wiki.pages) == 60
    assert seen and all(s == set() for s in seen)  # (none while the rows were written)
    assert wiki.store._conn.execute("PRAGMA cache_size").fetchone()[0] == store_module.DEFAULT_CACHE_KIB
    wiki.close()
    assert _triggers(root) == SNAPSHOT_TRIGGERS
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        assert conn.execute("SELECT count(*) FROM snapshot WHERE part='token'").fetchone()[0] == 1
        with conn:  # another program changes a page's row: the token goes
            conn.execute("UPDATE pages SET title='Changed' WHERE path='p2.md'")
        assert conn.execute("SELECT count(*) FROM snapshot WHERE part='token'").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_bulk_write_that_fails_keeps_the_triggers_and_the_cache_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", _pages(40))
    Wiki(root).close()  # (the cache made, its triggers in place)
    for i in range(40):  # every page changed: the next refresh writes them all in bulk
        path = ("wiki/", "notes/", "", "wiki/people/")[i % 4] + f"p{i}.md"
        (root / path).write_text(f"# Page {i} again\n\nNew text {i}.\n", "utf-8")
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 10)

    def failing(self: store_module.PageStore, *args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store_module.PageStore, "_flush", failing)
    wiki = Wiki(root)
    with pytest.raises(OSError):
        wiki.store.refresh()
    assert wiki.store._conn.execute("PRAGMA cache_size").fetchone()[0] == store_module.DEFAULT_CACHE_KIB
    wiki.close()
    assert _triggers(root) == SNAPSHOT_TRIGGERS
    monkeypatch.undo()
    again = Wiki(root)
    assert again.page("p2.md").title == "Page 2 again"  # (written in full by the next refresh)
    again.close()


def test_a_first_open_lists_what_the_workers_parsed_without_decoding_a_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first open (nothing cached) parsed in worker processes lists every page from what the
    workers sent of it (tags, aliases, date and snippet beside the listing's fields): the writing
    process decodes no record, where decoding them all to keep the pages was 1.8 s of it at
    100,000 pages. The list is the one every page decoded gives, and a later write retires it."""
    from curator.engine.corpus.summaries import PageSummary, load_summaries

    pages = _pages(230)
    pages["wiki/tagged.md"] = "---\ntitle: Tagged\ntags: [ledger, q3]\nupdated: 2026-11-02\n---\n# Tagged\n\nBody text.\n"
    pages["wiki/n\u00e4me.md"] = "# Umlaut\n\nplain\n"
    root = write_pages(tmp_path / "w", pages)
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 10)
    monkeypatch.setattr(parallel_module, "workers", lambda: 2)
    decoded: list[bytes] = []
    real = store_module.decode_record
    monkeypatch.setattr(store_module, "decode_record", lambda blob: decoded.append(blob) or real(blob))
    wiki = Wiki(root)
    wiki.store.refresh(keep_pages=True)
    listed = load_summaries(wiki.store)
    assert decoded == [] and not wiki.store.decoded
    every = wiki.store.pages  # (decoded now: what the list must equal)
    assert listed.pages == [PageSummary.of(every[p]) for p in sorted(every)]
    assert len(listed.pages) == len(pages) and not listed.saved
    tagged = next(s for s in listed.pages if s.path == "wiki/tagged.md")
    assert tagged.tags == ["ledger", "q3"] and tagged.updated == "2026-11-02" and tagged.snippet
    assert wiki.store.take_listing() is None  # (taken once)
    wiki.close()
    # kept only for the state that parse wrote: a write since, and it is not taken
    again = write_pages(tmp_path / "again", pages)
    wiki = Wiki(again)
    wiki.store.refresh(keep_pages=True)
    (again / "wiki/p1.md").write_text("# Changed\n\nnew\n", "utf-8")
    wiki.store.refresh(["wiki/p1.md"])
    assert wiki.store.take_listing() is None
    wiki.close()
