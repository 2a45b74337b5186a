"""The one-shot search's cheaper steps give exactly what the plain ones give (issue 17).

- the index's stamps packed in one value are its rows, and a sweep ahead by them finds in-place
  edits of the same size and pages gone; every change of the documents (whichever program makes
  it) lists the documents changed since the packing, and the packed stamps of the others with the
  listed ones' rows are the rows, whatever the changes (a page edited, added, deleted, renamed,
  put back to its packed stamp), and a sweep by them finds exactly what a sweep of the rows finds;
  past the bound the packed value is dropped and packed again whole by the next sweep;
- the ranking asked of SQLite in two steps (the best rows first, the rest only when needed)
  gives the rows of one query over everything, in the same order, whatever the filters drop;
- the snippet pattern for ASCII text finds the same as the full one there;
- a sweep that changed nothing shortly after another writes nothing.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import time
from pathlib import Path

import pytest

from curator.engine.corpus import walker
from curator.engine.corpus.state import locate_state
from curator.engine.search import index as search_mod
from curator.engine.search import query as query_mod
from curator.engine.search.query import parse_query
from curator.engine.wiki import Wiki


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _rows(root: Path) -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        return [tuple(r) for r in conn.execute(walker.SWEEP_SQL)]
    finally:
        conn.close()


def _another_programs_write(root: Path, statement: str) -> None:
    """``statement`` run by SQL alone on the page cache (as another program would)."""
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _as_rows(stamps: walker.Stamps | None) -> list[tuple[str, int, int]]:
    assert stamps is not None
    return list(zip(*stamps, strict=True))


def _packed(root: Path) -> bytes | None:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        row = conn.execute(walker.PACKED_SQL).fetchone()
        return None if row is None else bytes(row[0])
    finally:
        conn.close()


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    r = tmp_path / "w"
    for i in range(40):
        write(r, f"wiki/entities/page-{i:02d}.md", f"# Page {i}\n\nledger entry {i}\n")
    for i in range(6):
        write(r, f"wiki/deep/er/p{i}.md", f"deep ledger {i}\n")
    write(r, "top.md", "top ledger\n")
    return r


# --- the sweep ------------------------------------------------------------------------------

def test_the_packed_stamps_are_the_rows_and_the_sweep_by_them_finds_every_change(root: Path) -> None:
    w = Wiki(root)
    try:
        assert w.search.search("ledger")  # built
    finally:
        w.close()
    rows = _rows(root)
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        unpacked = walker.unpack_stamps(walker.pack_stamps(conn))
    finally:
        conn.close()
    assert unpacked is not None and list(zip(*unpacked, strict=True)) == rows
    real = os.path.realpath(root)
    # an in-place edit of the same size with only the stamp moved, a page grown, pages gone
    edited = root / "wiki/entities/page-07.md"
    edited.write_text(edited.read_text(encoding="utf-8").replace("ledger", "LEDGER"), encoding="utf-8")
    os.utime(edited, ns=(10**18, 10**18))
    (root / "wiki/entities/page-11.md").write_text("grown ledger text\n", encoding="utf-8")
    (root / "wiki/entities/page-30.md").unlink()
    (root / "top.md").unlink()
    assert sorted(walker.changed_stamps(real, zip(*unpacked, strict=True))) == [
        "top.md", "wiki/entities/page-07.md", "wiki/entities/page-11.md", "wiki/entities/page-30.md"]


def test_packed_stamps_that_are_not_ours_are_refused() -> None:
    import marshal

    assert walker.unpack_stamps(marshal.dumps(("", b"", b""))) == walker.Stamps([], [], [])
    for junk in (b"", b"not marshal", 42, None, marshal.dumps(("a\0b", b"\0" * 8, b"\0" * 16)),
                 marshal.dumps({"d": 1}), marshal.dumps(("a", b"\0" * 7, b"\0" * 8)),
                 marshal.dumps(("a", "x" * 8, b"\0" * 8)), marshal.dumps(("a", b"\0" * 8))):
        assert walker.unpack_stamps(junk) is None


def test_a_packed_value_of_another_form_is_not_read_and_gives_way(root: Path) -> None:
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
    finally:
        w.close()
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    conn.execute("DELETE FROM search_stamps")
    conn.execute("INSERT INTO search_stamps VALUES ('stamps 0', X'00')")  # (an older form, say)
    conn.commit()
    conn.close()
    page = root / "wiki/entities/page-02.md"
    page.write_text(page.read_text(encoding="utf-8").replace("ledger", "zither"), encoding="utf-8")
    os.utime(page, ns=(10**18, 10**18))
    assert walker.sweep_ahead(root)  # the child reads the rows instead
    w = Wiki(root)
    try:
        assert [h.path for h in w.search.search("zither")] == ["wiki/entities/page-02.md"]
    finally:
        w.close()
    packed = _packed(root)  # written again, in its own form, the other value gone
    assert packed is not None and _as_rows(walker.unpack_stamps(packed)) == _rows(root)
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    assert conn.execute("SELECT part FROM search_stamps").fetchall() == [(walker.PACKED_PART,)]
    conn.close()
    assert _moved(root) == []  # (the edit listed beside the other form's value: gone with it)


def _moved(root: Path) -> list[str]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        return sorted(path for (path,) in conn.execute("SELECT path FROM search_moved"))
    finally:
        conn.close()


def _swept_as(root: Path) -> tuple[bool, list[tuple[str, int, int]]]:
    """Whether a sweep reads the packed stamps, and the stamps it sweeps (sorted): the packed ones
    of the paths not moved since the packing, and the moved ones' rows."""
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        key, moved = walker.index_stamps(conn)
        packed = conn.execute(walker.PACKED_SQL).fetchone() is not None
    finally:
        conn.close()
    kept = [row for row in _as_rows(walker.stamps_of(key)) if row[0] not in moved]
    return packed, sorted(kept + [(path, *stamp) for path, stamp in moved.items() if stamp is not None])


def _edit_in_place(root: Path, rel: str, old: str, new: str, ns: int) -> None:
    """``rel``'s ``old`` word become ``new`` (of the same length), its stamp set to ``ns``."""
    page = root / rel
    page.write_text(page.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    os.utime(page, ns=(ns, ns))


def test_the_packed_stamps_with_the_moved_documents_are_the_rows_after_every_change(root: Path) -> None:
    w = Wiki(root)
    try:
        assert w.search.search("ledger")  # the build: the stamps packed by its sweep's save
        packed = _packed(root)
        assert packed is not None and _as_rows(walker.unpack_stamps(packed)) == _rows(root)
        assert _moved(root) == []

        def check(moved: list[str]) -> None:
            assert _moved(root) == moved
            assert _packed(root) == packed  # (not packed again: the change costs its rows)
            assert _swept_as(root) == (True, sorted(_rows(root)))

        # an edit the index takes in: the packed value stays, the document is listed
        _edit_in_place(root, "wiki/entities/page-03.md", "ledger", "zither", 10**18)
        w.refresh(["wiki/entities/page-03.md"])
        check(["wiki/entities/page-03.md"])
        # the next sweep finds it, writes its time and packs nothing
        assert [h.path for h in w.search.search("zither")] == ["wiki/entities/page-03.md"]
        check(["wiki/entities/page-03.md"])
        # a page added, one deleted, one renamed (a folder listing changes), each found by a search
        write(root, "wiki/entities/new-one.md", "# New\n\nquince ledger\n")
        (root / "wiki/entities/page-30.md").unlink()
        (root / "wiki/deep/er/p1.md").rename(root / "wiki/deep/er/p1-moved.md")
        assert [h.path for h in w.search.search("quince")] == ["wiki/entities/new-one.md"]
        assert [h.path for h in w.search.search("deep ledger 1")] == ["wiki/deep/er/p1-moved.md"]
        check(sorted(["wiki/entities/page-03.md", "wiki/entities/new-one.md", "wiki/entities/page-30.md",
                      "wiki/deep/er/p1.md", "wiki/deep/er/p1-moved.md"]))
        # writes by SQL alone (another program's): a rename in place, an insert, a delete
        _another_programs_write(root, "UPDATE search_docs SET path = 'wiki/else.md', mtime_ns = 7"
                                      " WHERE path = 'wiki/entities/page-04.md'")
        _another_programs_write(root, "INSERT INTO search_docs (path, dir, mtime_ns, size)"
                                      " VALUES ('wiki/sql.md', 'wiki', 5, 6)")
        _another_programs_write(root, "DELETE FROM search_docs WHERE path = 'top.md'")
        _another_programs_write(root, "UPDATE search_docs SET size = size + 1 WHERE path = 'wiki/deep/er/p2.md'")
        check(sorted(["wiki/entities/page-03.md", "wiki/entities/new-one.md", "wiki/entities/page-30.md",
                      "wiki/deep/er/p1.md", "wiki/deep/er/p1-moved.md", "wiki/entities/page-04.md",
                      "wiki/else.md", "wiki/sql.md", "top.md", "wiki/deep/er/p2.md"]))
    finally:
        w.close()


def test_a_sweep_by_the_packed_stamps_and_the_moved_finds_what_a_sweep_of_the_rows_finds(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After changes the index took in, every page changed on disk again is found, in both
    halves of a sweep ahead and by this process's own sweep, and nothing else: a page edited
    twice, one added after the packing then edited, one put back to its packed stamp (only its
    row tells), and a moved page unchanged since (its stale packed stamp must not count)."""
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
        rel = {i: f"wiki/entities/page-{i:02d}.md" for i in (1, 2, 5, 35, 36, 38)}
        for i, ns in ((1, 10**18), (2, 10**18), (5, 10**18 + 7), (35, 10**18), (36, 10**18), (38, 10**18 + 7)):
            _edit_in_place(root, rel[i], "ledger", "zither", ns)
        write(root, "wiki/entities/page-99.md", "# Page 99\n\nledger entry 99\n")  # (last in the listing)
        write(root, "aaa.md", "first ledger\n")  # (first)
        os.utime(root / "aaa.md", ns=(10**18, 10**18))
        assert len(w.search.search("zither")) == 6
        assert w.search.search("first ledger") and w.search.search("entry 99")
        packed = _packed(root)
        assert packed is not None and _moved(root) == sorted([*rel.values(), "aaa.md", "wiki/entities/page-99.md"])
        rows = _rows(root)
        stale = dict((p, (m, s)) for p, m, s in _as_rows(walker.unpack_stamps(packed)))
        # edited again in place (same size, another stamp), in both halves
        _edit_in_place(root, rel[1], "zither", "oboeso", 2 * 10**18)
        _edit_in_place(root, rel[38], "zither", "oboeso", 2 * 10**18)
        _edit_in_place(root, "aaa.md", "first", "frost", 2 * 10**18)
        page = root / "wiki/entities/page-99.md"
        page.write_text(page.read_text(encoding="utf-8").replace("ledger", "oboeso"), encoding="utf-8")
        os.utime(page, ns=(2 * 10**18, 2 * 10**18))
        # put back as packed: the packed stamp matches the disk, the row does not
        for i in (2, 36):
            _edit_in_place(root, rel[i], "zither", "ledger", stale[rel[i]][0])
            assert (os.stat(root / rel[i]).st_mtime_ns, os.stat(root / rel[i]).st_size) == stale[rel[i]]
        # (5 and 35 moved and unchanged since: found by no sweep)
        expected = sorted(walker.changed_stamps(os.path.realpath(root), rows))
        assert expected == sorted(["aaa.md", rel[1], rel[2], rel[36], rel[38], "wiki/entities/page-99.md"])
        conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
        try:
            assert sorted(walker.changed_in_index(os.path.realpath(root), conn)) == expected
        finally:
            conn.close()
        for share_min in (1, 4, 10_000):  # (10,000: no helper)
            monkeypatch.setattr(walker, "SHARE_MIN", share_min)
            assert walker.sweep_ahead(root)
            assert sorted(walker.take_sweep(root) or ["the sweep failed"]) == expected, share_min
        # and the search finds them, by this process's sweep
        assert sorted(h.path for h in w.search.search("oboeso")) == sorted(["wiki/entities/page-99.md", rel[1], rel[38]])
        assert [h.path for h in w.search.search("frost")] == ["aaa.md"]
        assert sorted(h.path for h in w.search.search("zither")) == [rel[5], rel[35]]
    finally:
        w.close()


def test_past_the_bound_the_stamps_are_packed_again_and_every_change_is_still_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_mod, "MOVED_MAX", 3)  # (the triggers are made with it)
    root = tmp_path / "w"
    for i in range(8):
        write(root, f"wiki/p{i}.md", f"ledger {i}\n")
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
        first = _packed(root)
        assert first is not None
        for i in range(3):  # up to the bound: listed
            _edit_in_place(root, f"wiki/p{i}.md", "ledger", "zither", 10**18 + i)
            w.refresh([f"wiki/p{i}.md"])
        assert _moved(root) == ["wiki/p0.md", "wiki/p1.md", "wiki/p2.md"] and _packed(root) == first
        _edit_in_place(root, "wiki/p3.md", "ledger", "zither", 10**18 + 3)
        w.refresh(["wiki/p3.md"])  # one more: the packed value and the list dropped
        assert _packed(root) is None and _moved(root) == []
        assert _swept_as(root) == (False, sorted(_rows(root)))
        _edit_in_place(root, "wiki/p4.md", "ledger", "zither", 10**18 + 4)
        w.refresh(["wiki/p4.md"])  # nothing listed while no value is packed
        assert _packed(root) is None and _moved(root) == []
        # an edit after the bound, in place: found by the next sweep ahead, which packs again
        _edit_in_place(root, "wiki/p5.md", "ledger", "oboeso", 10**18 + 5)
        assert walker.sweep_ahead(root)
        assert [h.path for h in w.search.search("oboeso")] == ["wiki/p5.md"]
        again = _packed(root)
        assert again is not None and again != first and _as_rows(walker.unpack_stamps(again)) == _rows(root)
        assert _moved(root) == []
        # and the list starts again from the new packing
        _edit_in_place(root, "wiki/p6.md", "ledger", "kazoos", 10**18 + 6)
        assert walker.sweep_ahead(root)
        assert [h.path for h in w.search.search("kazoos")] == ["wiki/p6.md"]
        assert _moved(root) == ["wiki/p6.md"] and _swept_as(root) == (True, sorted(_rows(root)))
        # a bulk build starts from nothing listed
        assert w.search.rebuild() == 8
        assert _moved(root) == [] and _swept_as(root) == (True, sorted(_rows(root)))
    finally:
        w.close()


def test_a_sweep_ahead_by_the_packed_stamps_finds_an_edit_in_place(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walker, "SHARE_MIN", 4)  # (a helper takes the second half)
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
        assert _packed(root) is not None
        page = root / "wiki/entities/page-21.md"
        page.write_text(page.read_text(encoding="utf-8").replace("ledger", "zither"), encoding="utf-8")
        os.utime(page, ns=(10**18, 10**18))  # same size, only the stamp tells
        (root / "wiki/deep/er/p2.md").unlink()
        assert walker.sweep_ahead(root)
        monkeypatch.setattr(search_mod, "changed_in_index", None)  # (this process sweeps nothing)
        assert [h.path for h in w.search.search("zither")] == ["wiki/entities/page-21.md"]
        indexed = {path for path, _m, _s in _rows(root)}  # the page gone was found by the same sweep
        assert "wiki/deep/er/p2.md" not in indexed and "wiki/deep/er/p3.md" in indexed
    finally:
        w.close()


@pytest.mark.parametrize("packed", [True, False])
def test_a_sweep_ahead_split_in_two_finds_exactly_what_one_sweep_finds(
        root: Path, monkeypatch: pytest.MonkeyPatch, packed: bool) -> None:
    """The sweep ahead cuts the packed paths near their middle and a helper stats the second
    part from its own copy: whatever the cut, every page is checked once, through the root's
    descriptor (a folder gone, or become a file, counts every page in it as changed)."""
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
    finally:
        w.close()
    if not packed:  # (an index without the packed value: the child reads the rows)
        conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
        conn.execute("DELETE FROM search_stamps")
        conn.commit()
        conn.close()
    rows = _rows(root)
    edited = ["wiki/entities/page-01.md", "wiki/entities/page-38.md", "top.md"]  # both halves, the root
    for rel in edited:
        page = root / rel
        page.write_text(page.read_text(encoding="utf-8").replace("ledger", "LEDGER"), encoding="utf-8")
        os.utime(page, ns=(10**18, 10**18))
    for name in os.listdir(root / "wiki/deep/er"):
        (root / "wiki/deep/er" / name).unlink()
    (root / "wiki/deep/er").rmdir()
    (root / "wiki/deep/er").write_text("a file where the folder was\n", encoding="utf-8")
    (root / "wiki/entities/page-20.md").unlink()
    expected = sorted(walker.changed_stamps(os.path.realpath(root), rows))
    assert expected == sorted([*edited, "wiki/entities/page-20.md", *(f"wiki/deep/er/p{i}.md" for i in range(6))])
    assert sorted(walker._changed_by_full_path(os.path.realpath(root), rows)) == expected
    for share_min in (1, 4, 10_000):  # (10,000: no helper)
        monkeypatch.setattr(walker, "SHARE_MIN", share_min)
        assert walker.sweep_ahead(root)
        assert sorted(walker.take_sweep(root) or ["the sweep failed"]) == expected, share_min


# --- the ranking in two steps ------------------------------------------------------------------

@pytest.mark.parametrize("text", ["ledger", "ledger -deep", "path:deep ledger", "path:top ledger", "-ledger",
                                  "layer:core", "path:entities", "entry OR deep"])
def test_the_ranking_in_two_steps_is_the_ranking_of_one_query(root: Path, text: str) -> None:
    w = Wiki(root)
    try:
        w.search.refresh()
        q = parse_query(text)
        with w.store.connection():
            whole = list(w.search._rows(q, None))
            for first in (1, 2, 5, 46, 47, 200):
                assert list(w.search._rows(q, first)) == whole
    finally:
        w.close()


def test_a_search_whose_filter_drops_the_first_rows_finds_the_rest(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = Wiki(root)
    try:
        expected = [h.path for h in w.search.search("path:deep ledger", limit=100)]
        assert len(expected) == 6
        monkeypatch.setattr(search_mod.SearchIndex._rows, "__defaults__", (3,))  # (FIRST_ROWS, as bound)
        assert [h.path for h in w.search.search("path:deep ledger", limit=100)] == expected
        assert [h.path for h in w.search.search("path:deep ledger", limit=4)] == expected[:4]
    finally:
        w.close()


# --- snippets -------------------------------------------------------------------------------

def _spans(pattern: re.Pattern[str] | None, text: str) -> list[tuple[int, int]]:
    return [] if pattern is None else [m.span() for m in pattern.finditer(text)]


@pytest.mark.parametrize("text", ["ledger", "led*", '"refund policy"', "a OR b1 OR 12", "café menu", "付款 ledger",
                                  "x_y", "naïve* résumé", "-draft ledger", "tag:finance", "über*"])
def test_the_pattern_for_ascii_text_finds_what_the_full_one_finds(text: str) -> None:
    rng = random.Random(text)
    q = parse_query(text)
    full, ascii_only = q.highlighter(), q.highlighter(ascii_text=True)
    assert (full is None) == (ascii_only is None)
    alphabet = [*"abcdefghijklmnopqrstuvwxyz0123456789_ -.,'\"()\n\t", "ledger", "led", "refund", "policy",
                "cafe", "menu", "naive", "resume", "a", "b1", "12", "x_y", "uber"]
    for _ in range(300):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert _spans(ascii_only, sample) == _spans(full, sample)
        highlighter = search_mod.Highlighter(q)
        assert search_mod.make_snippet(sample, highlighter) == search_mod.make_snippet(sample, full)
        assert search_mod.highlight_text(sample, highlighter) == search_mod.highlight_text(sample, full)
    for sample in ("Café ledger — naïve", "付款流程 ledger", "Ünïcödé über alles", "ledger\u00a0ledger"):
        highlighter = search_mod.Highlighter(q)  # text that is not ASCII: the full pattern
        assert search_mod.make_snippet(sample, highlighter) == search_mod.make_snippet(sample, full)
        assert search_mod.highlight_text(sample, highlighter) == search_mod.highlight_text(sample, full)


def test_an_ascii_word_is_one_segment_without_the_pattern() -> None:
    for word in ("ledger", "a1", "Z", "x" * 50):
        assert query_mod._segments(word) == query_mod._segment().findall(word)
    assert query_mod._segments("付款ab") == query_mod._segment().findall("付款ab")


# --- nothing to write ---------------------------------------------------------------------------

def test_a_sweep_that_changed_nothing_just_after_another_writes_nothing(root: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
        conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        last = conn.execute("SELECT value FROM search_meta WHERE key = 'last_sweep'").fetchone()
        assert w.search.search("ledger")  # swept again: nothing changed, the record is fresh
        assert conn.execute("PRAGMA data_version").fetchone()[0] == version
        # the record goes stale: the next sweep writes its time again
        monkeypatch.setattr(search_mod, "SWEEP_RECORD_EVERY", 0.0)
        time.sleep(0.01)
        assert w.search.search("ledger")
        assert conn.execute("PRAGMA data_version").fetchone()[0] != version
        assert conn.execute("SELECT value FROM search_meta WHERE key = 'last_sweep'").fetchone() != last
        # a change is always written, the fresh record or not
        monkeypatch.setattr(search_mod, "SWEEP_RECORD_EVERY", 3600.0)
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        page = write(root, "wiki/entities/page-05.md", "# Page 5\n\nkumquat entry 5\n")
        os.utime(page, ns=(10**18, 10**18))
        assert [h.path for h in w.search.search("kumquat")] == ["wiki/entities/page-05.md"]
        assert conn.execute("PRAGMA data_version").fetchone()[0] != version
        conn.close()
    finally:
        w.close()


def _triggers(root: Path) -> set[str]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    finally:
        conn.close()


STAMP_TRIGGERS = {"search_docs_insert_moved", "search_docs_update_moved", "search_docs_delete_moved"}


def test_a_bulk_build_leaves_the_stamp_triggers_in_place_built_or_stopped(root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk build writes its rows without the stamp triggers (a trigger firing on each row made
    FTS5 write each row out on its own, twice the build's time) and puts them back in the same
    transaction: after a build, and after a build stopped part way (rolled back), every later
    change of the documents is still listed beside the packed stamps."""
    from curator.engine.search.index import BuildStopped

    seen_while_inserting: list[set[str]] = []
    insert = search_mod.SearchIndex._insert

    def watched(self: search_mod.SearchIndex, conn: sqlite3.Connection, row: tuple[object, ...],
                doc_id: int | None) -> None:
        seen_while_inserting.append({n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")})
        insert(self, conn, row, doc_id)

    monkeypatch.setattr(search_mod.SearchIndex, "_insert", watched)
    w = Wiki(root)
    try:
        assert w.search.search("ledger")
        assert len(seen_while_inserting) == 47 and not any(STAMP_TRIGGERS & s for s in seen_while_inserting)
        assert _triggers(root) >= STAMP_TRIGGERS and _packed(root) is not None
        assert w.search.rebuild() == 47
        assert _triggers(root) >= STAMP_TRIGGERS
    finally:
        w.close()
    stopped = Wiki(root)
    try:
        stopped.search.stop_building()
        with pytest.raises(BuildStopped):
            stopped.search.rebuild()
        assert _triggers(root) >= STAMP_TRIGGERS
    finally:
        stopped.close()
    w = Wiki(root)
    try:
        assert w.search.search("ledger") and _packed(root) is not None and _moved(root) == []
        _another_programs_write(root, "UPDATE search_docs SET title = 'x' WHERE path = 'top.md'")
        assert _moved(root) == ["top.md"]
    finally:
        w.close()
