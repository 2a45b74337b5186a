"""The walker (docs/design.md §2 exclusions, symlinks) and the persistent page cache in ``.curator/``."""

from __future__ import annotations

import gc
import os
import random
import sqlite3
import sys
import time
import zlib
from pathlib import Path

import pytest

import curator.engine.corpus.store as store_module
import curator.engine.corpus.walker as walker_module
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.walker import (
    CAN_WALK_AHEAD,
    EXCLUDED_DIRS,
    drop_ahead,
    is_page_path,
    scan,
    stamps_key,
    take_ahead,
    walk,
    walk_ahead,
)
from curator.engine.wiki import Wiki
from tests.corpus import generate, write_pages

# --- walker --------------------------------------------------------------------------------

def test_excluded_folders_are_the_spec_list() -> None:
    assert sorted(EXCLUDED_DIRS) == sorted([".git", "graphify-out", "_proposed", "proposed", "imports",
                                            "raw", "_archive", ".curator", ".obsidian", ".trash"])


@pytest.mark.timeout(60)
def test_walk_finds_exactly_the_pages(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 40, hostile=True)
    found = [f.path for f in walk(info.root)]
    assert len(found) == len(set(found))
    assert sorted(found) == info.pages
    assert not set(info.not_pages) & set(found)
    sizes = {f.path: f.size for f in walk(info.root)}
    assert sizes[info.hostile["huge"]] == (info.root / info.hostile["huge"]).stat().st_size


def test_symlinks_are_not_followed_and_loops_do_not_hang(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"wiki/a.md": "a", "wiki/sub/b.md": "b"})
    outside = write_pages(tmp_path / "outside", {"secret.md": "s", "d/inner.md": "i"})
    os.symlink("..", root / "wiki/sub/up")
    os.symlink(root, root / "wiki/root-again")
    os.symlink("loop.md", root / "wiki/loop.md")
    os.symlink(outside / "secret.md", root / "wiki/secret.md")
    os.symlink(outside / "d", root / "wiki/d")
    os.symlink("a.md", root / "wiki/a-alias.md")
    assert sorted(f.path for f in walk(root)) == ["wiki/a.md", "wiki/sub/b.md"]


def test_walk_of_a_root_given_through_a_symlink(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "real", {"a.md": "a"})
    os.symlink(root, tmp_path / "link")
    assert [f.path for f in walk(tmp_path / "link")] == ["a.md"]


def test_a_folder_is_walked_at_once_exactly_as_entry_by_entry(tmp_path: Path) -> None:
    # _entries stats a folder's pages in calls that loop in C (_entries_at_once); a folder with
    # a stat that fails goes entry by entry (the page that vanished left out). Either way: the
    # same pages, stamps, sub-folders and attachments in the same order.
    pages = {f"f/p{i}.md": "x" * i for i in range(6)}
    pages.update({"f/UP.MD": "u", "f/sub/s.md": "s", "f/raw/r.md": "r", "f/.hidden.md": "h"})
    root = write_pages(tmp_path / "w", pages)
    folder = root / "f"
    (folder / "pic.png").write_bytes(b"png")
    (folder / ".dotfile").write_bytes(b"")
    os.symlink("p1.md", folder / "alias.md")
    os.mkfifo(folder / "pipe.md")

    Walked = tuple[walker_module.Stamps, list[str], list[tuple[str, str]]]

    def walked(vanish: str | None = None) -> Walked:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
        if vanish is not None:
            os.unlink(folder / vanish)
        found = walker_module.Stamps([], [], [])
        files: list[str] = []
        subdirs = walker_module._entries(entries, str(folder), "f/", files, found)
        return found, files, subdirs

    def by_entry(vanish: str | None = None) -> Walked:
        def failing(*_args: object) -> object:
            raise OSError("as a vanished page's stat")

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(walker_module, "_entries_at_once", failing)
            return walked(vanish)

    at_once = walked()
    assert at_once == by_entry()
    found, files, subdirs = at_once
    assert found.paths == ["f/.hidden.md", "f/UP.MD", *(f"f/p{i}.md" for i in range(6))]
    assert found.sizes == [1, 1, *range(6)]
    assert files == ["f/pic.png", "f/pipe.md"]
    assert subdirs == [(f"{folder}/sub", "f/sub/")]
    gone = walked("p3.md")  # (listed, then gone before its stat: the fast path fails, the loop skips it)
    assert gone[0].paths == [p for p in found.paths if p != "f/p3.md"]
    assert gone[1:] == (files, subdirs)


@pytest.mark.parametrize(
    ("path", "is_page"),
    [("a.md", True), ("wiki/A.MD", True), ("wiki/raw/x.md", False), (".git/x.md", False),
     ("wiki/x.txt", False), ("../x.md", False), ("/abs.md", False), ("wiki/_archive/o.md", False),
     ("raw.md", True), ("wiki/imports.md", True)],
)
def test_is_page_path(path: str, is_page: bool) -> None:
    assert is_page_path(path) is is_page


# --- page cache ----------------------------------------------------------------------------

def test_a_second_open_reparses_nothing(tmp_path: Path, parse_counter: list[str]) -> None:
    info = generate(tmp_path / "w", 30)
    first = Wiki(info.root)
    assert len(first.pages) == 30 and len(parse_counter) == 30
    first.close()
    parse_counter.clear()
    second = Wiki(info.root)
    assert sorted(second.pages) == sorted(info.expected)
    assert parse_counter == []
    page = second.pages["wiki/start-here.md"]
    assert (page.title, page.layer, page.trust) == ("Start Here", "identity", 1.0)
    assert page.links and page.links[0].key == "overview"


def test_changed_added_and_deleted_files_are_picked_up(tmp_path: Path, parse_counter: list[str]) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n"})
    wiki = Wiki(root)
    assert len(wiki.pages) == 3
    parse_counter.clear()
    (root / "a.md").write_text("# A changed\n")
    st = (root / "b.md").stat()
    (root / "b.md").write_text("# X\n")  # same size: only the mtime tells
    os.utime(root / "b.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    (root / "c.md").unlink()
    (root / "d.md").write_text("# D\n")
    changes = wiki.refresh()
    assert sorted(parse_counter) == ["a.md", "b.md", "d.md"]
    assert (sorted(changes.modified), changes.added, changes.removed) == (["a.md", "b.md"], ["d.md"], ["c.md"])
    assert wiki.pages["a.md"].title == "A changed" and wiki.pages["b.md"].title == "X"
    assert "c.md" not in wiki.pages
    wiki.close()
    parse_counter.clear()
    again = Wiki(root)
    assert sorted(again.pages) == ["a.md", "b.md", "d.md"] and parse_counter == []


def test_the_current_state_is_the_state_after_a_first_refresh(tmp_path: Path) -> None:
    """``current()`` refreshes on first use as ``stamps()`` does (a page changed on disk since the
    last process is seen), then answers the state without walking again."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n"})
    first = Wiki(root)
    before = first.store.current()
    assert before is not None and before == first.store.state and sorted(first.store.stamps()) == ["a.md", "b.md"]
    first.close()
    (root / "a.md").write_text("# A changed\n")
    second = Wiki(root)
    now = second.store.current()
    assert now is not None and now != before and now == second.store.state
    (root / "b.md").write_text("# B changed later\n")  # (not walked again: the state as first seen)
    assert second.store.current() == now
    second.close()


def test_refresh_of_named_paths(tmp_path: Path, parse_counter: list[str]) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n"})
    wiki = Wiki(root)
    assert len(wiki.pages) == 2
    parse_counter.clear()
    (root / "a.md").write_text("# A2\n")
    (root / "new.md").write_text("# New\n")
    (root / "b.md").unlink()
    write_pages(root, {"raw/x.md": "x"})
    os.symlink("a.md", root / "link.md")
    changes = wiki.refresh(["a.md", "new.md", "b.md", "raw/x.md", "link.md", "nothing.md"])
    assert (changes.modified, changes.added, changes.removed) == (["a.md"], ["new.md"], ["b.md"])
    assert sorted(parse_counter) == ["a.md", "new.md"]
    assert sorted(wiki.pages) == ["a.md", "new.md"]
    assert not wiki.refresh(["a.md"])  # unchanged now


def test_refresh_of_named_paths_never_goes_through_symlinks(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"wiki/a.md": "# A\n"})
    outside = write_pages(tmp_path / "outside", {"secret.md": "# Secret\n"})
    os.symlink(outside, root / "wiki/out")
    os.symlink(root / "wiki", root / "again")
    wiki = Wiki(root)
    assert list(wiki.pages) == ["wiki/a.md"]
    changes = wiki.refresh(["wiki/out/secret.md", "again/a.md", "wiki/../wiki/a.md"])
    assert not changes and list(wiki.pages) == ["wiki/a.md"]


def test_a_corrupted_or_removed_cache_is_rebuilt(tmp_path: Path, parse_counter: list[str]) -> None:
    info = generate(tmp_path / "w", 12)
    Wiki(info.root).close()
    cache = locate_state(info.root) / "cache.sqlite"
    assert cache.exists()
    cache.write_bytes(b"this is not a database" * 100)
    for extra in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (locate_state(info.root) / extra).unlink(missing_ok=True)
    parse_counter.clear()
    wiki = Wiki(info.root)
    assert sorted(wiki.pages) == sorted(info.expected) and len(parse_counter) == 12
    wiki.close()
    with sqlite3.connect(cache) as conn:  # rebuilt on disk, not just in memory
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 12
    parse_counter.clear()
    Wiki(info.root).close()
    assert parse_counter == []
    # a row that no longer decodes is re-parsed; the rest stay cached
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE records SET record=x'7b62726f6b656e' WHERE path=?", ("wiki/start-here.md",))
    parse_counter.clear()
    assert Wiki(info.root).pages["wiki/start-here.md"].title == "Start Here"
    assert parse_counter == ["wiki/start-here.md"]
    # the whole folder removed
    import shutil

    shutil.rmtree(locate_state(info.root))
    parse_counter.clear()
    assert len(Wiki(info.root).pages) == 12 and len(parse_counter) == 12
    assert cache.exists()


def test_an_old_cache_schema_is_rebuilt(tmp_path: Path, parse_counter: list[str]) -> None:
    info = generate(tmp_path / "w", 6)
    Wiki(info.root).close()
    with sqlite3.connect(locate_state(info.root) / "cache.sqlite") as conn:
        conn.execute("PRAGMA user_version=1")
    parse_counter.clear()
    assert len(Wiki(info.root).pages) == 6 and len(parse_counter) == 6


def test_pages_round_trip_through_the_cache(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 40, hostile=True)
    fresh = Wiki(info.root).pages
    cached = Wiki(info.root).pages
    assert fresh.keys() == cached.keys()
    for path, page in fresh.items():
        assert cached[path] == page, path


def test_record_and_row_forms_round_trip(tmp_path: Path) -> None:
    import json

    from curator.engine.corpus.page import Page

    info = generate(tmp_path / "w", 12, hostile=True)
    for page in Wiki(info.root).pages.values():
        assert Page.from_record(json.loads(json.dumps(page.to_record()))) == page
        assert Page.from_row(json.loads(json.dumps(page.to_row()))) == page
        # the cache's record (the links as columns), as pages are decoded and as names are dropped
        record = store_module.encode_record(page.to_row())
        assert Page.from_row(store_module.decode_record(record)) == page
        assert (store_module.link_name_hashes(store_module.decode_record(record))
                == store_module.link_name_hashes(page.to_row()))


def test_name_hashes_are_those_of_every_link_key_and_its_last_segment(tmp_path: Path) -> None:
    # (each name is hashed once per page now: the same set as hashing each link's names in turn)
    info = generate(tmp_path / "w", 60, hostile=True, profile="real-shaped")
    checked = 0
    for page in Wiki(info.root).pages.values():
        row = page.to_row()
        expected = set()
        for link in page.links:
            expected.add(zlib.crc32(link.key.encode("utf-8", "surrogatepass")))
            expected.add(zlib.crc32(link.key.rpartition("/")[2].encode("utf-8", "surrogatepass")))
        assert store_module.link_name_hashes(row) == expected
        checked += bool(expected)
    assert checked > 20


# --- the snapshot of the stamps and the racy-stamp guard -----------------------------------

def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(locate_state(root) / "cache.sqlite")


def _open_once(root: Path) -> None:
    """One process's look at the wiki (a refresh of the whole tree), then closed."""
    wiki = Wiki(root)
    wiki.store.count()
    wiki.close()


def test_walk_order_sorts_paths_as_the_walk_yields_them(tmp_path: Path) -> None:
    from curator.engine.corpus.walker import scan, walk_order

    info = generate(tmp_path / "w", 40, hostile=True)
    write_pages(info.root, {"wiki/a/z.md": "z", "wiki/a.md": "a", "wiki/a-b.md": "ab", "wiki/b/a.md": "a",
                            "wiki/zeta.png": "png", "wiki/a/alpha.pdf": "pdf", "wiki/b.png": "png"})
    walked = [f.path for f in walk(info.root)]
    assert sorted(walked, key=walk_order) == walked

    def nested(path: str) -> tuple[tuple[int, str], ...]:  # the order's definition, folder by folder
        *folders, name = path.split("/")
        return (*((1, f) for f in folders), (0, name))

    rng = random.Random(7)
    names = ["a", "b", "ab", "a-b", "a\x01", "\x01", "\x02", "A", "é", "\udcff", "x.md", "a.md"]
    for _ in range(3000):
        paths = list({"/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(12)})
        assert sorted(paths, key=walk_order) == sorted(paths, key=nested), paths
    assert walked.index("wiki/a-b.md") < walked.index("wiki/a.md") < walked.index("wiki/a/z.md")
    assert scan(info.root, ordered=True).paths == walked
    found = scan(info.root)  # in the order the folders list their files
    assert sorted(found.paths, key=walk_order) == walked
    assert found.sizes == [(info.root / p).stat().st_size for p in found.paths]
    attachments: list[str] = []
    scan(info.root, attachments)
    listed: list[str] = []
    list(walk(info.root, listed))
    assert attachments == listed  # always in walk order
    assert listed.index("wiki/b.png") < listed.index("wiki/zeta.png") < listed.index("wiki/a/alpha.pdf")


def test_a_warm_open_answers_from_the_snapshot(tmp_path: Path, parse_counter: list[str]) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "wiki/b.md": "---\ntitle: Bee\nlayer: core\n---\nb\n"})
    _open_once(root)
    with _db(root) as conn:
        assert {r[0] for r in conn.execute("SELECT part FROM snapshot")} == {"stamps", "info", "base", "token"}
    parse_counter.clear()
    wiki = Wiki(root)
    assert wiki.store.summaries() == [("a.md", 4, "A", "deep", 0.5), ("wiki/b.md", 33, "Bee", "core", 0.5)]
    assert parse_counter == []
    (root / "0.md").write_text("# Zero\n")
    assert wiki.refresh().added == ["0.md"]
    assert [s[:3] for s in wiki.store.summaries()] == [("0.md", 7, "Zero"), ("a.md", 4, "A"), ("wiki/b.md", 33, "Bee")]
    wiki.close()
    assert Wiki(root).store.summaries()[0] == ("0.md", 7, "Zero", "deep", 0.5)


def test_a_change_to_the_pages_table_by_any_other_way_drops_the_snapshot(
        tmp_path: Path, parse_counter: list[str]) -> None:
    """A snapshot present is always exactly the table: a row changed behind the store's back (an
    older Curator, a repair by hand) deletes its token, and the next refresh compares page by page."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n"})
    _open_once(root)
    with _db(root) as conn:
        conn.execute("UPDATE pages SET size = size + 1 WHERE path='b.md'")
        assert conn.execute("SELECT count(*) FROM snapshot WHERE part='token'").fetchone()[0] == 0
    parse_counter.clear()
    wiki = Wiki(root)
    assert sorted(wiki.pages) == ["a.md", "b.md"]
    assert parse_counter == ["b.md"]  # the one row that no longer matches the file
    wiki.close()
    with _db(root) as conn:  # and the snapshot is back
        assert conn.execute("SELECT count(*) FROM snapshot WHERE part='token'").fetchone()[0] == 1
        conn.execute("DELETE FROM pages WHERE path='a.md'")  # (a.md is still racy: just written)
    parse_counter.clear()
    wiki = Wiki(root)
    assert sorted(wiki.pages) == ["a.md", "b.md"] and parse_counter == ["a.md"]
    wiki.close()


def move_store_clock(monkeypatch: pytest.MonkeyPatch, ahead_ns: int) -> None:
    """The page cache's clock ``ahead_ns`` later than now, and stopped there (what the racy-stamp
    guard compares a page's mtime with)."""
    later = store_module.time.time_ns() + ahead_ns

    class Later:
        @staticmethod
        def time_ns() -> int:
            return later

    monkeypatch.setattr(store_module, "time", Later)


def _rewrite_keeping_the_stamp(path: Path, text: str) -> None:
    """Rewrite ``path`` with same-size ``text`` and its old mtime: a write within the same tick of
    a coarse file clock, as an in-place batch write (``ActionContext.write_many``) can make."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)


def test_racy_stamp_guard_sees_a_same_size_rewrite_within_one_tick(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# Alpha one\n", "b.md": "# Bee\n"})
    wiki = Wiki(root)
    assert wiki.pages["a.md"].title == "Alpha one"
    _rewrite_keeping_the_stamp(root / "a.md", "# Alpha two\n")
    changes = wiki.refresh()  # the whole tree, in the same process
    assert changes.modified == ["a.md"] and not changes.added and not changes.removed
    assert wiki.pages["a.md"].title == "Alpha two"
    _rewrite_keeping_the_stamp(root / "a.md", "# Alpha six\n")
    assert wiki.refresh(["a.md"]).modified == ["a.md"]  # the paths an action names
    assert wiki.pages["a.md"].title == "Alpha six"
    wiki.close()
    _rewrite_keeping_the_stamp(root / "a.md", "# Alpha ten\n")
    other = Wiki(root)  # another process: the digest travels in the cache
    assert other.store.page("a.md").title == "Alpha ten"  # type: ignore[union-attr]
    assert [s[2] for s in other.store.summaries()] == ["Alpha ten", "Bee"]
    other.close()


def test_racy_entries_are_checked_by_content_and_settle(tmp_path: Path, parse_counter: list[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "old.md": "# Old\n"})
    long_ago = (root / "old.md").stat().st_mtime_ns - 60 * 10**9
    os.utime(root / "old.md", ns=(long_ago, long_ago))
    wiki = Wiki(root)
    assert len(wiki.pages) == 2
    with _db(root) as conn:  # just written: racy; a minute old: not
        assert [r[0] for r in conn.execute("SELECT path FROM racy")] == ["a.md"]
    parse_counter.clear()
    assert not wiki.refresh()  # read again, same bytes: no change, nothing parsed
    assert parse_counter == []
    move_store_clock(monkeypatch, 2 * store_module.RACY_NS)
    assert not wiki.refresh() and parse_counter == []
    with _db(root) as conn:  # safely older than that check: any later write changes its stamp
        assert conn.execute("SELECT count(*) FROM racy").fetchone()[0] == 0
    wiki.close()


def test_derived_data_of_an_earlier_state_comes_with_the_pages_changed_since(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each state records the one before it and the paths its write changed: data saved under an
    earlier state is answered with those paths, and not at all once the chain is not known (another
    process wrote meanwhile, a change behind the store's back, too big a change)."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n"})
    wiki = Wiki(root)
    store = wiki.store
    wiki.refresh()
    assert store.derived_since("x") is None
    store.save_derived("x", b"data")
    assert store.derived_since("x") == (b"data", set())
    (root / "a.md").write_text("# A two\n")
    (root / "c.md").unlink()
    wiki.refresh()
    assert store.derived("x") is None and store.derived_since("x") == (b"data", {"a.md", "c.md"})
    _rewrite_keeping_the_stamp(root / "b.md", "# b\n")  # seen by the racy-stamp guard: changed too
    (root / "d.md").write_text("# D\n")
    assert sorted(wiki.refresh().paths) == ["b.md", "d.md"]
    assert store.derived_since("x") == (b"data", {"a.md", "b.md", "c.md", "d.md"})
    other = Wiki(root)  # another process follows the same chain
    other.refresh()
    assert other.store.derived_since("x") == (b"data", {"a.md", "b.md", "c.md", "d.md"})
    (root / "a.md").write_text("# A three\n")
    other.refresh()  # ... and writes a state this one has not seen: its step is known, so this
    (root / "b.md").write_text("# B again\n")  # store takes it up before writing its own
    assert sorted(wiki.store.refresh(["b.md"]).paths) == ["a.md", "b.md"]
    assert store.pages["a.md"].title == "A three"
    assert store.derived_since("x") == (b"data", {"a.md", "b.md", "c.md", "d.md"})
    with _db(root) as conn:  # another process wrote after a state it did not know (no step)
        conn.execute("DELETE FROM changes WHERE token = (SELECT data FROM snapshot WHERE part='token')")
    (root / "a.md").write_text("# A four\n")
    other.refresh()
    other.close()
    (root / "b.md").write_text("# B once more\n")
    wiki.store.refresh(["b.md"])  # written after a state it did not read: the chain is broken
    assert store.derived_since("x") is None
    wiki.close()
    fresh = Wiki(root)
    fresh.refresh()
    fresh.store.save_derived("x", b"new")
    with _db(root) as conn:  # a row changed behind the store's back: no snapshot, no state
        conn.execute("UPDATE pages SET size = size + 1 WHERE path='d.md'")
    fresh.close()
    again = Wiki(root)
    again.refresh()
    assert again.store.derived_since("x") is None
    again.store.save_derived("x", b"newer")
    monkeypatch.setattr(store_module, "CHANGES_MAX_PATHS", 1)
    for name in ("a.md", "b.md"):
        (root / name).write_text(f"# {name} changed once more\n")
    again.refresh()  # more paths than a state records: "everything"
    assert again.store.derived_since("x") is None
    again.close()


def test_a_write_after_another_process_wrote_the_same_page_keeps_the_chain_of_states(tmp_path: Path) -> None:
    """The station's store feeds the search index, so it cannot take up another process's state
    (see ``PageStore._adopt``): it writes a change, its dedup worker writes the same page after it,
    and the station's next write must still follow the worker's state, the data saved before
    answered with the pages changed since. (It did not: every kept answer, the duplicate families'
    basis too, was made again from every page after the second change.) A page the other process
    wrote as this store does not hold it still breaks the chain."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n"})
    station = Wiki(root)
    station.refresh()
    assert station.search.search("A") is not None  # (builds the search index: fed page by page since)
    worker = Wiki(root)
    worker.refresh()
    assert all(any(e.active() for e in w.store._extensions) for w in (station, worker))
    station.store.save_derived("x", b"data")
    (root / "a.md").write_text("# A two\n")
    assert station.refresh().paths == ["a.md"]
    assert worker.store.refresh(["a.md"]).paths == ["a.md"]  # (written again: it cannot adopt)
    (root / "b.md").write_text("# B two\n")
    assert station.refresh().paths == ["b.md"]
    assert station.store.derived_since("x") == (b"data", {"a.md", "b.md"})
    (root / "c.md").write_text("# C changed\n")
    assert worker.store.refresh(["c.md"]).paths == ["c.md"]  # (the station has not seen this one)
    (root / "b.md").write_text("# B three\n")
    station.store.refresh(["b.md"])
    assert station.store.derived_since("x") is None
    worker.close()
    station.close()


def test_the_walk_reports_the_pages_it_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh of the whole tree calls ``walking(found, expected)`` as the walk finds pages (every
    folder, and every few entries of a big one), ``expected`` the pages cached (0 on a first open);
    an exception it raises (a cancel) stops the refresh and loses nothing."""
    import curator.engine.corpus.walker as walker_module

    monkeypatch.setattr(walker_module, "WALK_PROGRESS_EVERY", 4)
    pages = {f"big/p{i:02}.md": f"# P{i}\n" for i in range(10)}
    pages.update({"a.md": "# A\n", "sub/b.md": "# B\n"})
    root = write_pages(tmp_path / "w", pages)
    calls: list[tuple[int, int]] = []
    wiki = Wiki(root)
    wiki.store.refresh(walking=lambda found, expected: calls.append((found, expected)))
    found = [f for f, _ in calls]
    assert found == sorted(found) and found[-1] == 12 and len(calls) >= 5  # (10 in one folder: 3 calls)
    assert {e for _, e in calls} == {0}  # nothing cached yet
    wiki.close()

    class Cancelled(Exception):
        pass

    def cancel(found: int, expected: int) -> None:
        assert expected == 12
        raise Cancelled

    (root / "c.md").write_text("# C\n")
    wiki = Wiki(root)
    with pytest.raises(Cancelled):
        wiki.store.refresh(walking=cancel)
    assert wiki.refresh().added == ["c.md"] and len(wiki.pages) == 13
    wiki.close()


def test_long_lists_of_objects_print_one_per_line_exactly(tmp_path: Path) -> None:
    import orjson

    from curator.engine.corpus.walker import _long_document, json_document_bytes

    tricky = ['},{"path":"x"}', 'quote " and }, {"', "new\nline", "tab\t", "日本語", ""]
    rows = [{"path": f"p{i}.md", "title": tricky[i % len(tricky)], "trust": i / 7, "n": None}
            for i in range(120)]
    expected = _long_document(rows, orjson.dumps, b"\n", b", ", b": ")
    assert json_document_bytes(rows) == expected
    assert expected.count(b"\n") == len(rows) + 2
    assert orjson.loads(expected) == rows
    nested = [{"path": f"p{i}.md", "items": [{"a": 1}, {"b": 2}]} for i in range(60)]  # not split
    assert json_document_bytes(nested) == _long_document(nested, orjson.dumps, b"\n", b", ", b": ")
    mixed = [*rows[:60], {}]
    assert json_document_bytes(mixed) == _long_document(mixed, orjson.dumps, b"\n", b", ", b": ")


@pytest.mark.timeout(30)
def test_a_fifo_named_like_a_page_is_no_page(tmp_path: Path) -> None:
    """Reading a FIFO blocks until someone writes to it: the walk lists regular files only, as a
    refresh of named paths does."""
    root = write_pages(tmp_path / "w", {"wiki/a.md": "# A\n"})
    os.mkfifo(root / "wiki/pipe.md")
    assert [f.path for f in walk(root)] == ["wiki/a.md"]
    wiki = Wiki(root)
    assert list(wiki.pages) == ["wiki/a.md"] and not wiki.refresh(["wiki/pipe.md"])
    wiki.close()


def test_a_refresh_of_named_pages_that_come_and_go_keeps_an_exact_snapshot(tmp_path: Path) -> None:
    """An action's refresh (named paths) keeps the last scan's order: pages gone drop out, pages
    added go last; the snapshot still holds exactly the pages, and the next process lists them."""
    from curator.engine.corpus.store import _read_snapshot
    from curator.engine.corpus.walker import stamps_of

    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n", "wiki/c.md": "# C\n"})
    _open_once(root)
    wiki = Wiki(root)
    wiki.store.count()
    (root / "b.md").unlink()
    write_pages(root, {"wiki/d.md": "# D\n"})
    changes = wiki.refresh(["b.md", "wiki/d.md"])
    assert changes.removed == ["b.md"] and changes.added == ["wiki/d.md"]
    with _db(root) as conn:
        parts = dict(conn.execute("SELECT part, data FROM snapshot").fetchall())
    saved = _read_snapshot(parts)  # (the base's stamps, and the pages written since)
    assert saved is not None
    snap = stamps_of(saved.key)
    assert snap.paths == ["a.md", "wiki/c.md", "wiki/d.md"]
    assert snap.sizes == [(root / p).stat().st_size for p in snap.paths]
    wiki.close()
    again = Wiki(root)
    assert [s[0] for s in again.store.summaries()] == ["a.md", "wiki/c.md", "wiki/d.md"]
    again.close()


def test_a_racy_page_whose_name_is_not_utf8_settles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page with a non-UTF-8 file name is racy in memory only (no UTF-8 database holds its name):
    when it settles, or is rewritten or removed, the refresh does not try to delete it from the
    racy table (it raised UnicodeEncodeError: a long-lived process, the MCP server, failed a call)."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    bad = os.fsencode(root) + b"/caf\xe9.md"
    with open(bad, "wb") as f:
        f.write(b"# Cafe\n")
    wiki = Wiki(root)
    name = os.fsdecode(b"caf\xe9.md")
    assert name in wiki.pages and wiki.store.racy_digest(name) is not None  # just written: racy
    move_store_clock(monkeypatch, 2 * store_module.RACY_NS)
    wiki.refresh([name])  # settles
    assert wiki.store.racy_digest(name) is None and name in wiki.pages
    wiki.close()


# --- the walk started ahead (walker.walk_ahead) ------------------------------------------------
needs_fork = pytest.mark.skipif(not CAN_WALK_AHEAD, reason="no fork on this platform")


@needs_fork
def test_a_walk_ahead_gives_exactly_the_stores_own_scan(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b/c.md": "# C\n", "b/d/e.MD": "# E\n",
                                        "b/x.md": "# X\n", ".git/h.md": "# H\n"})
    (root / "b" / "pic.png").write_bytes(b"png")
    before = time.time_ns()
    assert walk_ahead(root)
    taken = take_ahead(root)
    assert taken is not None and take_ahead(root) is None  # taken once
    start, key, attachments = taken
    assert before <= start <= time.time_ns()
    files: list[str] = []
    assert key == stamps_key(scan(root, files)) and attachments == files == ["b/pic.png"]


@needs_fork
def test_a_walk_ahead_shares_a_big_folders_stats_and_gives_exactly_the_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A folder of SHARE_MIN entries or more is stat'ed half here, half by a helper process: the
    # same pages in the same order with the same stamps, attachments and sub-folders as a scan.
    monkeypatch.setattr(walker_module, "SHARE_MIN", 8)
    monkeypatch.setattr(walker_module, "cores", lambda: 2)
    pages = {f"big/p{i:02}.md": "x" * i for i in range(30)}
    pages.update({"a.md": "# A\n", "big/sub/z.md": "# Z\n", "big/sub2/y.md": "# Y\n", "other/q.md": "q"})
    pages.update({f"big2/r{i}.md": "r" * i for i in range(9)})
    root = write_pages(tmp_path / "w", pages)
    (root / "big" / "pic.png").write_bytes(b"png")
    files: list[str] = []
    own = scan(root, files)
    shared = walker_module._Shared()
    found = scan(root, [], share=shared)
    assert shared._helpers  # (the big folders were shared: a helper each)
    shared.finish(found)
    assert stamps_key(found) == stamps_key(own)
    assert walk_ahead(root)
    taken = take_ahead(root)
    assert taken is not None
    assert taken[1] == stamps_key(own) and taken[2] == files == ["big/pic.png"]
    # A page gone between the folder's listing and its stat is left out, on either side.
    stat_all = walker_module._stat_all

    def vanishing(entries: list[os.DirEntry[str]]) -> object:
        for entry in entries[:1]:  # (listed through the folder's descriptor: the name alone)
            folder = "big" if (root / "big" / entry.name).exists() else "big2"
            os.unlink(root / folder / entry.name)
        return stat_all(entries)

    monkeypatch.setattr(walker_module, "_stat_all", vanishing)
    assert walk_ahead(root)
    taken = take_ahead(root)
    assert taken is not None
    assert taken[1] == stamps_key(scan(root)) and taken[1] != stamps_key(own)
    assert len(taken[1][1]) // 8 == len(own.paths) - 4  # one in each half of both big folders
    # A helper that fails makes the walk fail (the store then walks itself), never a wrong answer.
    monkeypatch.setattr(walker_module, "_stat_all", lambda entries: os._exit(3))
    assert walk_ahead(root)
    assert take_ahead(root) is None


@needs_fork
@pytest.mark.parametrize("ahead", [True, False])
def test_the_racy_guard_is_measured_from_the_walk_ahead(tmp_path: Path, ahead: bool) -> None:
    """The stamps a walk ahead took are as old as the moment it started: a page written less
    than RACY_NS before that moment is checked again (with the store's own later clock it would
    not be; the False case shows the difference)."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n"})
    now = time.time_ns()
    written = now - store_module.RACY_NS + 600_000_000  # 1.4 s before the walk
    os.utime(root / "a.md", ns=(written, written))
    if ahead:
        assert walk_ahead(root)
    time.sleep(0.9)
    wiki = Wiki(root)
    assert wiki.store.count() == 2
    assert (wiki.store.racy_digest("a.md") is not None) is ahead
    assert not walker_module._AHEAD
    wiki.close()


@needs_fork
def test_a_walk_ahead_is_used_by_the_first_refresh_only(tmp_path: Path) -> None:
    """A store whose first refresh names paths (an action) drops the walk: its full refresh later
    walks again and sees what was written meanwhile."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    Wiki(root).close()  # (cached)
    assert walk_ahead(root)
    wiki = Wiki(root)
    write_pages(root, {"b.md": "# B [[a]]\n"})
    wiki.refresh(["b.md"])
    assert not walker_module._AHEAD
    write_pages(root, {"c.md": "# C\n"})
    assert sorted(wiki.pages) == ["a.md", "b.md", "c.md"]
    wiki.close()


@needs_fork
def test_a_walk_no_refresh_took_is_dropped(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    assert walk_ahead(root)
    pid = walker_module._AHEAD[os.path.realpath(root)][0]
    drop_ahead()
    assert not walker_module._AHEAD
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # (reaped)


def test_the_cli_walks_ahead_for_a_reading_command_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script (no argv given) starts the walk for commands that read the whole wiki
    and write nothing first; never for a writing command, nor for an in-process caller."""
    from curator import cli
    from curator.engine.corpus import walker
    from curator.engine.dedup import detached as dedup_detached

    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    started: list[str] = []
    monkeypatch.setattr(walker, "walk_ahead", lambda r: started.append(str(r)) or False)
    monkeypatch.setattr(gc, "disable", lambda: None)  # (the console script's: not in this process)
    monkeypatch.setattr(gc, "freeze", lambda: None)
    for argv, walks in ((["--wiki", str(root), "index"], True), (["--wiki", str(root), "neighbors", "a"], True),
                        (["--wiki", str(root), "links", "unresolved"], True),
                        (["--wiki", str(root), "append", "a", "a fact"], False)):
        started.clear()
        monkeypatch.setattr(sys, "argv", ["curator", *argv])
        # (the console script also says it answers one command: a due dedup basis is made by a
        # process of its own; set back after the test, as each step here sets it anew)
        monkeypatch.setattr(dedup_detached, "_ONE_SHOT", False)
        cli.main()
        assert started == ([str(root)] if walks else []), argv
        assert dedup_detached.hands_off()
        monkeypatch.setattr(dedup_detached, "_ONE_SHOT", False)
        started.clear()
        cli.main(argv)
        assert started == [] and not dedup_detached.hands_off()


def test_stamps_without_decoding_and_as_the_cache_holds_them(tmp_path: Path, parse_counter: list[str]) -> None:
    """What the fact index compares its pages with: the stamps of a walk (nothing decoded), or,
    with walk=False in a process that has not walked, the stamps the database holds (every
    action's and the last walk's): a page written by hand since is seen by the next walk."""
    root = tmp_path / "w"
    write_pages(root, {"a.md": "# A\n", "b.md": "# B\n"})
    first = Wiki(root)
    walked = first.store.stamps()
    assert sorted(walked) == ["a.md", "b.md"] and not first.store.decoded
    assert first.store.stamps(["b.md", "nope.md"]) == {"b.md": walked["b.md"]}
    first.close()
    write_pages(root, {"c.md": "# C\n"})
    parse_counter.clear()
    fresh = Wiki(root)
    assert sorted(fresh.store.stamps(walk=False)) == ["a.md", "b.md"]
    assert not fresh.store.loaded and parse_counter == []
    assert sorted(fresh.store.stamps()) == ["a.md", "b.md", "c.md"] and parse_counter == ["c.md"]
    fresh.close()


def test_derived_data_carried_to_a_new_state_keeps_its_bytes_unless_others_were_saved(tmp_path: Path) -> None:
    """``carry_derived`` stamps the saved bytes with the current state (an answer the change did
    not alter); when another process saved other bytes meanwhile, the bytes given are saved whole."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n", "b.md": "# B\n"})
    wiki = Wiki(root)
    store = wiki.store
    wiki.refresh()
    before = store.state
    assert store.save_derived("x", b"data")
    (root / "a.md").write_text("# A again\n")
    store.refresh(["a.md"])
    assert not store.save_derived("x", b"stale", state=before)  # (computed for a state moved on from)
    found = store.derived_since("x")
    assert found == (b"data", {"a.md"}) and found is not None
    with _db(root) as conn:
        row_bytes = conn.execute("SELECT length(data), token FROM derived WHERE name='x'").fetchone()
    store.carry_derived("x", found, state=store.state)
    assert store.derived_since("x") == (b"data", set()) and store.derived("x") == b"data"
    with _db(root) as conn:  # (stamped beside the row: the row itself, its bytes, not written again)
        assert conn.execute("SELECT length(data), token FROM derived WHERE name='x'").fetchone() == row_bytes
        assert conn.execute("SELECT token FROM derived_at WHERE name='x'").fetchone()[0] == store.state
    (root / "b.md").write_text("# B again\n")
    store.refresh(["b.md"])
    found = store.derived_since("x")
    assert found == (b"data", {"b.md"}) and found is not None
    with _db(root) as conn:  # another process saved other bytes for this state meanwhile
        conn.execute("INSERT OR REPLACE INTO derived VALUES ('x', ?, ?)", (store.state, b"other"))
    assert store.derived("x") == b"other"
    store.carry_derived("x", found, state=store.state)  # (what it found is no longer what is saved)
    assert store.derived_since("x") == (b"data", set())
    # a row stamped by an older Curator in its own row (no derived_at then) is still read right
    with _db(root) as conn:
        conn.execute("UPDATE derived SET token = ? WHERE name = 'x'", (before,))
    assert store.derived("x") is None and store.derived_since("x") == (b"data", {"a.md", "b.md"})
    wiki.close()


def test_the_pages_under_folders_are_found_without_listing_every_page(tmp_path: Path) -> None:
    """A warm store finds the pages under a few folders in the snapshot's paths as they are (no
    stamp map made), a store whose stamps are a map in it: the same pages either way, sorted,
    only those under the folders named (not a folder whose name begins the same)."""
    pages = {"auto/x.md": "# X\n", "auto/deep/y.md": "# Y\n", "_review/z.md": "# Z\n", "autos/no.md": "# No\n",
             "wiki/auto/no.md": "# No\n", "a.md": "# A\n"}
    root = write_pages(tmp_path / "w", pages)
    expected = ["_review/z.md", "auto/deep/y.md", "auto/x.md"]
    first = Wiki(root)
    assert first.store.paths_under("auto", "_review/") == expected
    first.close()
    warm = Wiki(root)
    warm.refresh()
    assert warm.store._stamp_map is None  # (the snapshot's paths as one string)
    assert warm.store.paths_under("auto", "_review") == expected
    (root / "auto/new.md").write_text("# New\n", "utf-8")
    warm.refresh()
    assert warm.store.paths_under("auto") == ["auto/deep/y.md", "auto/new.md", "auto/x.md"]
    assert warm.store.paths_under("nothing") == []
    warm.close()


def test_a_derived_row_and_what_then_does_are_saved_both_or_neither(tmp_path: Path) -> None:
    """``save_derived(..., then=)``: ``then`` runs once the row is written, before it is
    committed (a file the row names moved into place); what it raises rolls the row back, and
    a refused save never calls it."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    wiki = Wiki(root)
    store = wiki.store
    wiki.refresh()
    calls: list[str] = []
    assert store.save_derived("x", b"one", then=lambda: calls.append("moved"))
    assert calls == ["moved"] and store.derived("x") == b"one"

    def fails() -> None:
        raise OSError("the file could not be moved")

    with pytest.raises(OSError):
        store.save_derived("x", b"two", then=fails)
    assert store.derived("x") == b"one"  # (rolled back)
    other = Wiki(root)  # another process changes a page: the database moves on
    (root / "a.md").write_text("# A again\n")
    other.store.refresh()
    other.close()
    assert not store.save_derived("x", b"three", then=lambda: calls.append("moved again"))
    store.refresh()
    assert calls == ["moved"] and store.derived_since("x") == (b"one", {"a.md"})


def test_a_derived_row_is_saved_unless_another_names_something_else(tmp_path: Path) -> None:
    """``save_derived(..., unless=(name, prefix))``: saved only while the row saved as ``name``
    starts with ``prefix`` (read in the same transaction): a result of a basis replaced
    meanwhile is refused."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    wiki = Wiki(root)
    store = wiki.store
    wiki.refresh()
    assert store.save_derived("basis", b"B-one and its stamp")
    assert store.save_derived("result", b"of B-one", unless=("basis", b"B-one"))
    assert store.derived("result") == b"of B-one"
    assert not store.save_derived("result", b"of B-zero", unless=("basis", b"B-zero"))
    assert not store.save_derived("result", b"of nothing", unless=("no such row", b""))
    assert store.derived("result") == b"of B-one"


def test_derived_rows_saved_together_are_saved_all_or_none(tmp_path: Path) -> None:
    """``save_derived_together``: every row and ``then`` in one transaction (a dedup basis and
    the result naming it); a failure of ``then`` or a state another process moved on leaves
    every row as it was."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n"})
    wiki = Wiki(root)
    store = wiki.store
    wiki.refresh()
    calls: list[str] = []
    assert store.save_derived_together([("basis", b"B-one"), ("result", b"of B-one")],
                                       then=lambda: calls.append("moved"))
    assert calls == ["moved"] and store.derived("basis") == b"B-one" and store.derived("result") == b"of B-one"

    def fails() -> None:
        raise OSError("the file could not be moved")

    with pytest.raises(OSError):
        store.save_derived_together([("basis", b"B-two"), ("result", b"of B-two")], then=fails)
    assert store.derived("basis") == b"B-one" and store.derived("result") == b"of B-one"  # (both rolled back)
    token = store.state
    other = Wiki(root)  # another process changes a page: the database moves on
    (root / "a.md").write_text("# A again\n")
    other.store.refresh()
    other.close()
    assert not store.save_derived_together([("basis", b"B-three"), ("result", b"of B-three")], state=token,
                                           then=lambda: calls.append("moved again"))
    store.refresh()
    assert calls == ["moved"]
    assert store.derived_since("basis") == (b"B-one", {"a.md"}) and store.derived_since("result") == (b"of B-one", {"a.md"})
    assert not store.save_derived_together([])


def _shared_page(i: int) -> str:
    return (f"---\ntitle: Ledger Note {i}\ntype: concept\nlayer: core\ntags: [finance, ledger]\n"
            f"created: 2025-03-02\nupdated: 2025-04-01\n---\n# Ledger Note {i}\n\n"
            f"See [[ledger-home]] and [[Ledger Home]] #weekly.\n")


def test_every_page_decoded_shares_its_short_strings(tmp_path: Path) -> None:
    """Pages decoded from their records (a new process) share one object for each frontmatter
    key, tag, layer, type and date, and a link whose key is its target holds one string: each
    page holding its own was a fifth of every page decoded (26 of 133 MB at 32,000 pages)."""
    root = write_pages(tmp_path / "w", {f"notes/n{i}.md": _shared_page(i) for i in range(40)})
    first = Wiki(root)
    first.refresh()
    first.close()
    wiki = Wiki(root)  # (another process: every page decoded from its record)
    pages = [wiki.store.pages[f"notes/n{i}.md"] for i in range(40)]
    a, b = pages[0], pages[39]
    assert a.meta == {"title": "Ledger Note 0", "type": "concept", "layer": "core", "tags": ["finance", "ledger"],
                      "created": "2025-03-02", "updated": "2025-04-01"}
    assert [ka is kb for ka, kb in zip(a.meta, b.meta, strict=True)] == [True] * 6
    assert a.meta["type"] is b.meta["type"] and a.meta["tags"][0] is b.meta["tags"][0]
    assert a.tags == ["finance", "ledger", "weekly"] and all(x is y for x, y in zip(a.tags, b.tags, strict=True))
    assert a.created is b.created and a.updated is b.updated and a.layer is b.layer
    assert a.meta["title"] is a.title
    slug = next(link for link in a.links if link.target == "ledger-home")
    assert slug.key is slug.target
    named = next(link for link in a.links if link.target == "Ledger Home")
    assert named.key == "ledger-home"
