"""The page list kept with the page cache (curator.engine.corpus.summaries): after any change made
by any process, what a new process loads equals the list made from every page parsed from
scratch, and it decodes only the records of the pages changed since it was kept."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

import curator.engine.corpus.store as store_module
import curator.engine.corpus.summaries as summaries_module
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.summaries import PageSummary, decode, encode
from curator.engine.wiki import Wiki
from tests.corpus import write_pages


def _pages(n: int) -> dict[str, str]:
    return {f"wiki/p{i:02d}.md": f"---\ntitle: Page {i}\ntrust: 0.{i % 9 + 1}\ntags: [t{i % 3}]\n"
                                 f"aliases: [P{i}]\nupdated: 2026-01-{i % 28 + 1:02d}\n---\nbody {i}\n"
            for i in range(n)}


def _from_scratch(root: Path, tmp: Path) -> list[PageSummary]:
    """Every page's summary, from a copy of the pages with no cache at all."""
    copy = tmp / f"scratch-{len(list(tmp.iterdir()))}"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".curator", ".git"))
    wiki = Wiki(copy)
    try:
        return [PageSummary.of(page) for _, page in sorted(wiki.pages.items())]
    finally:
        wiki.close()


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the page records decoded (one entry a record)."""
    count: list[int] = []
    original = store_module.decode_record

    def counting(blob: bytes) -> list[object]:
        count.append(1)
        return original(blob)

    monkeypatch.setattr(store_module, "decode_record", counting)
    return count


def _load(root: Path, decoded: list[int] | None = None) -> tuple[list[PageSummary], bool, bool]:
    """What a new process loads: the summaries, whether they were kept as they are, and whether
    every page was decoded for them; then keeps them, as the station does once it is usable.
    ``decoded`` counts the records decoded for the summaries (after the walk that finds the
    changes, which reads the old records of the pages it parses again)."""
    wiki = Wiki(root)
    try:
        wiki.store.refresh()
        if decoded is not None:
            decoded.clear()
        summaries = wiki.summaries()
        whole, kept = wiki.store.decoded, summaries.saved
        wiki.keep_summaries(summaries)
        return summaries.pages, kept, whole
    finally:
        wiki.close()


def test_the_kept_page_list_follows_every_change_and_decodes_only_the_changed_pages(
        tmp_path: Path, decoded: list[int]) -> None:
    root = write_pages(tmp_path / "w", _pages(30))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    first, _, whole = _load(root)
    assert whole and first == _from_scratch(root, scratch)  # nothing kept yet: every page decoded

    def append(path: str, text: str) -> None:
        with (root / path).open("a", encoding="utf-8") as f:
            f.write(text)

    steps = [
        ("an agent's append", lambda: append("wiki/p03.md", "- one more fact\n"), 1),
        ("a retitled page with new tags", lambda: (root / "wiki/p05.md").write_text(
            "---\ntitle: Renamed Five\ntags: [fresh, Other]\nlayer: core\n---\nnew body\n"), 1),
        ("a new page", lambda: (root / "notes").mkdir() or (root / "notes/new.md").write_text(
            "---\ntitle: A New Page\naliases: [Newer]\n---\nhello [[Page 1]]\n"), 1),
        ("a deleted page", lambda: (root / "wiki/p10.md").unlink(), 0),
        ("a moved page", lambda: (root / "wiki/p11.md").rename(root / "notes/p11-moved.md"), 1),
        ("two pages edited at once", lambda: (append("wiki/p01.md", "x\n"), append("wiki/p02.md", "y\n")), 2),
    ]
    for what, change, records in steps:
        change()
        loaded, kept, whole = _load(root, decoded)
        assert not whole, what
        assert not kept, what  # (brought up to date, then kept again)
        assert loaded == _from_scratch(root, scratch), what
        assert len(decoded) == records, what  # only the changed pages' records
        again, kept, whole = _load(root, decoded)  # nothing changed since: read as kept, nothing decoded
        assert (again, kept, whole, len(decoded)) == (loaded, True, False, 0), what


def test_a_list_kept_before_a_change_it_did_not_see_is_not_saved_as_current(tmp_path: Path) -> None:
    """Made, then the pages change (another process), then kept: the store refuses it (it is of
    an older state), and the next load is still exact."""
    root = write_pages(tmp_path / "w", _pages(12))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _load(root)
    (root / "wiki/p04.md").write_text("---\ntitle: Changed Meanwhile\n---\n")
    station = Wiki(root)
    summaries = station.summaries()
    other = Wiki(root)
    (root / "wiki/p06.md").write_text("---\ntitle: Changed By Another\n---\n")
    other.refresh()
    other.close()
    station.keep_summaries(summaries)  # (of the state before the other's change)
    station.close()
    assert _load(root)[0] == _from_scratch(root, scratch)


def test_a_kept_list_that_does_not_decode_is_made_again_from_every_page(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", _pages(8))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _load(root)
    with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
        assert conn.execute("UPDATE derived SET data=? WHERE name=?", (b"not a list", "summaries")).rowcount == 1
    loaded, kept, whole = _load(root)
    assert whole and not kept and loaded == _from_scratch(root, scratch)
    assert decode(b"not a list") is None
    assert decode(encode(loaded)[:-4]) is None  # (cut short)


def test_more_changes_than_the_limit_decode_every_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", _pages(8))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _load(root)
    monkeypatch.setattr(summaries_module, "MAX_CHANGED", 1)
    for name in ("wiki/p01.md", "wiki/p02.md"):
        (root / name).write_text(f"---\ntitle: {name} again\n---\n")
        os.utime(root / name, ns=(1, 1))  # (the stamps differ whatever the clock)
    loaded, _, whole = _load(root)
    assert whole and loaded == _from_scratch(root, scratch)


def test_summaries_read_as_the_pages_they_summarise(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {"top.md": "# Top\n", "ns/deep/page.md": "---\ntitle: Deep\n---\n"})
    pages, _, _ = _load(root)
    by_path = {s.path: s for s in pages}
    assert by_path["top.md"].namespace == "" and by_path["ns/deep/page.md"].namespace == "ns"
    assert decode(encode(pages)) == pages


def test_inbound_counts_kept_are_current_only_while_no_page_changed_since(tmp_path: Path) -> None:
    """The inbound counts kept with the page cache are taken as the counts (the station resolves
    no link at its open) only while no page changed since they were counted, by any process;
    counts made before a change this store has seen since are not saved as current."""
    root = tmp_path / "w"
    write_pages(root, {"wiki/a.md": "# A\n\n[[b]]\n", "wiki/b.md": "# B\n\n[[a]] [[c]]\n", "wiki/c.md": "# C\n"})
    wiki = Wiki(root)
    try:
        counts = {"wiki/a.md": 1, "wiki/b.md": 1, "wiki/c.md": 1}
        wiki.store.count()  # (walked: the store's state is known)
        assert wiki.current_inbound() is None  # (none kept)
        state = wiki.store.state
        assert wiki.keep_inbound(counts, state)
        assert wiki.current_inbound() == counts == wiki.kept_inbound()
        (root / "wiki" / "c.md").write_text("# C\n\n[[a]]\n", encoding="utf-8")
        wiki.refresh()
        assert wiki.current_inbound() is None and wiki.kept_inbound() == counts  # (shown until counted again)
        assert not wiki.keep_inbound({"wiki/a.md": 2}, state)  # (counted before the change: not current)
        assert wiki.current_inbound() is None
    finally:
        wiki.close()
    other = Wiki(root)
    try:
        other.store.count()
        assert other.current_inbound() is None
        assert other.keep_inbound({"wiki/a.md": 2, "wiki/b.md": 1, "wiki/c.md": 1})
    finally:
        other.close()
    again = Wiki(root)
    try:
        again.store.count()
        assert again.current_inbound() == {"wiki/a.md": 2, "wiki/b.md": 1, "wiki/c.md": 1}
        (root / "wiki" / "b.md").write_text("# B\n\n[[a]]\n", encoding="utf-8")  # (a change no process saw yet)
        fresh = Wiki(root)
        try:
            fresh.store.count()
            assert fresh.current_inbound() is None
        finally:
            fresh.close()
    finally:
        again.close()
