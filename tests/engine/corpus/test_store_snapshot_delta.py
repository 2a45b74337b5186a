"""The page cache's snapshot delta: a write records only the pages it wrote (see
``PageStore._save_snapshot``), and every process reads exactly the pages a cache built from
scratch would hold."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import curator.engine.corpus.store as store_module
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.walker import stamps_of
from curator.engine.wiki import Wiki
from tests.corpus import write_pages


def _parts(root: Path) -> dict[str, bytes]:
    with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
        return dict(conn.execute("SELECT part, data FROM snapshot").fetchall())


def _view(root: Path) -> tuple[list[tuple[str, int, str, str, float]], dict[str, tuple[int, int]], list[str]]:
    """What a new process reads: the listing, the stamps, the pages by path."""
    wiki = Wiki(root)
    try:
        return wiki.store.summaries(), wiki.store.stamps(), sorted(wiki.pages)
    finally:
        wiki.close()


def _from_scratch(root: Path, tmp: Path) -> tuple[list[tuple[str, int, str, str, float]], dict[str, tuple[int, int]], list[str]]:
    """The same, from a copy of the pages (their mtimes kept) with no cache at all."""
    copy = tmp / f"scratch-{len(list(tmp.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".curator", ".git"))
    return _view(copy)


def _pages(n: int) -> dict[str, str]:
    return {f"wiki/p{i:02d}.md": f"---\ntitle: Page {i}\ntrust: 0.{i % 9 + 1}\n---\nbody {i}\n" for i in range(n)}


def test_an_append_writes_the_delta_only_and_every_process_reads_the_pages_exactly(
        tmp_path: Path, parse_counter: list[str]) -> None:
    root = write_pages(tmp_path / "w", _pages(30))
    (tmp_path / "scratch").mkdir()
    scratch = tmp_path / "scratch"
    _view(root)
    base = _parts(root)
    assert "delta" not in base

    with (root / "wiki/p07.md").open("a") as f:  # an agent's append, by another process
        f.write("- one more fact\n")
    parse_counter.clear()
    seen = _view(root)
    assert parse_counter == ["wiki/p07.md"]  # the one page re-stamped, found without comparing page by page
    assert seen == _from_scratch(root, scratch)
    after = _parts(root)
    assert after["stamps"] == base["stamps"] and after["info"] == base["info"]  # the base is not written again
    assert after["base"] == base["base"] and "delta" in after and after["token"] != base["token"]

    # a scripted sequence, each step seen by a new process and by one that stays open
    live = Wiki(root)
    live.store.count()
    steps = [
        lambda: (root / "wiki/p03.md").write_text("---\ntitle: Renamed three\nlayer: core\n---\nnew\n"),
        lambda: write_pages(root, {"wiki/new.md": "# New page\n"}),
        lambda: (root / "wiki/p11.md").unlink(),
        lambda: (root / "wiki/new.md").unlink(),  # added since the base, and gone again
        lambda: write_pages(root, {"wiki/p11.md": "# Back again\n"}),  # removed, and back
        lambda: (root / "wiki/p20.md").rename(root / "wiki/z20.md"),
    ]
    for step in steps:
        step()
        assert _view(root) == _from_scratch(root, scratch)
        live.refresh()
        assert live.store.summaries() == _view(root)[0]
        assert live.store.stamps() == _view(root)[1]
    live.close()


def test_pages_an_action_adds_moves_and_removes_are_recorded_in_the_delta(tmp_path: Path) -> None:
    """What a long-lived process (the station, the MCP server) writes for the pages its actions
    name: every kind of change as delta, read exactly by a new process. (A walk that finds pages
    added elsewhere in its order saves the snapshot whole instead.)"""
    root = write_pages(tmp_path / "w", _pages(20))
    (tmp_path / "scratch").mkdir()
    _view(root)
    base = _parts(root)["base"]
    live = Wiki(root)
    live.store.count()
    write_pages(root, {"wiki/new.md": "# New page\n", "wiki/kept.md": "# Kept\n"})
    live.refresh(["wiki/new.md", "wiki/kept.md"])
    (root / "wiki/new.md").unlink()
    (root / "wiki/p12.md").rename(root / "wiki/z12.md")
    (root / "wiki/p03.md").write_text("---\ntitle: Three again\n---\nnew\n")
    live.refresh(["wiki/new.md", "wiki/p12.md", "wiki/z12.md", "wiki/p03.md"])
    live.close()
    saved = store_module._read_snapshot(_parts(root))
    assert saved is not None and saved.base == base  # all of it written as delta
    assert "wiki/new.md" not in saved.delta  # (added since the base and gone again: nothing to record)
    assert saved.delta["wiki/p12.md"] is None and saved.delta["wiki/z12.md"] is not None
    assert saved.delta["wiki/p03.md"] is not None and saved.delta["wiki/p03.md"][2] == "Three again"
    scratch = _from_scratch(root, tmp_path / "scratch")
    now = stamps_of(saved.key)  # (the stamps a new process compares its walk with, in one go)
    assert dict(zip(now.paths, zip(now.mtimes, now.sizes, strict=True), strict=True)) == scratch[1]
    assert _view(root) == scratch


def test_a_delta_past_its_bound_saves_the_snapshot_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "DELTA_MAX", 3)
    root = write_pages(tmp_path / "w", _pages(10))
    (tmp_path / "scratch").mkdir()
    _view(root)
    base = _parts(root)["base"]
    for i in range(3):
        with (root / f"wiki/p0{i}.md").open("a") as f:
            f.write("- fact\n")
        _view(root)
        assert _parts(root)["base"] == base
    with (root / "wiki/p05.md").open("a") as f:
        f.write("- the fourth page\n")
    _view(root)
    parts = _parts(root)
    assert parts["base"] != base and "delta" not in parts
    assert _view(root) == _from_scratch(root, tmp_path / "scratch")


def test_a_base_another_process_wrote_meanwhile_is_never_patched(tmp_path: Path) -> None:
    """Process A holds the snapshot's base; process B saves the snapshot whole (a page added
    where a walk lists it first); A's next write must not record a delta against B's base."""
    root = write_pages(tmp_path / "w", _pages(10))
    (tmp_path / "scratch").mkdir()
    _view(root)
    a = Wiki(root)
    a.store.count()
    write_pages(root, {"a-first.md": "# First\n"})
    _view(root)  # B: a whole new base, in its walk's order
    with (root / "wiki/p04.md").open("a") as f:
        f.write("- a fact A writes down\n")
    a.refresh(["wiki/p04.md"])
    a.close()
    assert store_module._read_snapshot(_parts(root)) is not None  # (saved whole: a snapshot to trust)
    assert _view(root) == _from_scratch(root, tmp_path / "scratch")


def test_a_delta_of_another_base_is_not_trusted(tmp_path: Path, parse_counter: list[str]) -> None:
    """A delta row that names another base (a damaged or mixed cache) is ignored: the table is read."""
    root = write_pages(tmp_path / "w", _pages(5))
    (tmp_path / "scratch").mkdir()
    _view(root)
    with (root / "wiki/p01.md").open("a") as f:
        f.write("- fact\n")
    _view(root)
    with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
        conn.execute("UPDATE snapshot SET data = x'0011223344556677' WHERE part = 'base'")
    assert store_module._read_snapshot(_parts(root)) is None
    assert _view(root) == _from_scratch(root, tmp_path / "scratch")


def test_a_new_process_lists_the_pages_from_the_base_and_the_delta_without_writing(
        tmp_path: Path, parse_counter: list[str]) -> None:
    """Removed and re-titled pages written as delta by one process: the next one's walk matches
    the snapshot, and its listing (``curator index``) comes from the base and the delta, as exact
    as a cache built from scratch, with nothing parsed or written."""
    root = write_pages(tmp_path / "w", _pages(12))
    (tmp_path / "scratch").mkdir()
    _view(root)
    live = Wiki(root)
    live.store.count()
    (root / "wiki/p05.md").unlink()
    (root / "wiki/p06.md").write_text("---\ntitle: Six, re-titled\nlayer: core\ntrust: 0.9\n---\nsix\n")
    live.refresh(["wiki/p05.md", "wiki/p06.md"])
    live.close()
    before = _parts(root)
    parse_counter.clear()
    wiki = Wiki(root)
    listing = wiki.store.summaries()
    wiki.close()
    assert parse_counter == [] and _parts(root)["token"] == before["token"]  # (read, not written again)
    assert ("wiki/p06.md", 57, "Six, re-titled", "core", 0.9) in listing
    assert listing == _from_scratch(root, tmp_path / "scratch")[0]


def test_a_delta_of_many_pages_gives_the_stamps_of_every_page(tmp_path: Path) -> None:
    """A delta of more pages than are looked up one by one in the snapshot's string (an action
    that rewrote twenty pages, moved one, removed one): the stamps a new process compares its
    walk with are still every page's exactly."""
    root = write_pages(tmp_path / "w", _pages(40))
    (tmp_path / "scratch").mkdir()
    _view(root)
    live = Wiki(root)
    live.store.count()
    touched = [f"wiki/p{i:02d}.md" for i in range(3, 23)]
    for path in touched:
        with (root / path).open("a") as f:
            f.write("- a fact\n")
    (root / "wiki/p30.md").unlink()
    (root / "wiki/p31.md").rename(root / "wiki/moved.md")
    live.refresh([*touched, "wiki/p30.md", "wiki/p31.md", "wiki/moved.md"])
    live.close()
    saved = store_module._read_snapshot(_parts(root))
    assert saved is not None and len(saved.delta) == 23
    now = stamps_of(saved.key)
    scratch = _from_scratch(root, tmp_path / "scratch")
    assert dict(zip(now.paths, zip(now.mtimes, now.sizes, strict=True), strict=True)) == scratch[1]
    assert now.paths[-1] == "wiki/moved.md"  # (added pages last)
    assert _view(root) == scratch


@pytest.mark.parametrize("touched", [3, 40, 600])
def test_pages_re_stamped_in_bulk_are_placed_once_or_not_at_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, touched: int) -> None:
    """Every page re-stamped at once (a wiki copied with its state folder, a checkout): placed one
    by one in the snapshot's paths, each a search of them all, that took hours at 300,000
    pages. More than a delta holds are not placed at all (the snapshot is saved whole); a few
    are searched for; more than that are found in the paths listed once. Every process then
    reads the pages exactly as a cache built from scratch."""
    import os

    root = write_pages(tmp_path / "w", _pages(600))
    for path in (root / "wiki").iterdir():  # (settled: no page new enough to be read again)
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 100_000_000_000))
    (tmp_path / "scratch").mkdir()
    _view(root)
    searched: list[str] = []
    real = store_module._base_place

    def counting(names: str, path: str) -> int:
        searched.append(path)
        return real(names, path)

    monkeypatch.setattr(store_module, "_base_place", counting)
    for i in range(touched):
        path = root / f"wiki/p{i:02d}.md"
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    seen = _view(root)
    assert len(searched) == (touched if touched < store_module.PLACE_BY_LIST else 0)
    assert ("delta" in _parts(root)) == (touched <= store_module.DELTA_MAX)
    assert seen == _from_scratch(root, tmp_path / "scratch")
    assert _view(root) == seen
