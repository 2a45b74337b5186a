"""The pipeline at scale (issue 17): parallel parse, the lazy search index, fresh CLI searches.

These pin behaviour, not timings (tests/perf/test_perf_scale.py measures): pages parsed in worker
processes are exactly the pages parsed here; ``curator index`` and other commands that do not
search never build the full-text index; the first search builds it; a one-shot search finds an
edit written in place a moment before it ran.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.corpus import parallel, store
from curator.engine.corpus.page import Page
from curator.engine.corpus.state import locate_state
from curator.engine.corpus.walker import PageFile, walk
from curator.engine.wiki import Wiki
from tests.corpus import generate

CURATOR = str(Path(sys.executable).with_name("curator"))


def rows(pages: dict[str, Page]) -> dict[str, list[object]]:
    return {p: page.to_row() for p, page in sorted(pages.items())}


def name_rows(root: Path) -> dict[str, list[tuple[int, str]]]:
    """The rows of both name tables, by the path of the record each points at (none dangling)."""
    with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
        out = {table: sorted(conn.execute(f"SELECT n.h, r.path FROM {table} n LEFT JOIN records r"
                                          " ON r.rowid = n.src"))
               for table in ("link_names", "page_names")}
    conn.close()
    assert all(path is not None for table in out.values() for _, path in table)
    return out


def test_worker_processes_parse_exactly_like_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = generate(tmp_path / "w", 400, seed=9, profile="real-shaped", hostile=True)
    monkeypatch.setattr(store, "PARALLEL_MIN", 10**9)
    serial = Wiki(info.root)
    expected = rows(serial.pages)
    serial.close()
    expected_names = name_rows(info.root)
    assert len(expected_names["link_names"]) > 1000
    (locate_state(info.root) / "cache.sqlite").unlink()
    for extra in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (locate_state(info.root) / extra).unlink(missing_ok=True)
    monkeypatch.setattr(store, "PARALLEL_MIN", 2)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 37)
    calls: list[int] = []
    real_map = parallel.map_chunks

    def counting(*args: object) -> object:
        result: object = real_map(*args)  # type: ignore[arg-type]
        calls.append(result is not None)
        return result

    monkeypatch.setattr(parallel, "map_chunks", counting)
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    wiki = Wiki(info.root)
    assert rows(wiki.pages) == expected
    assert calls == [True]  # the pages really came from worker processes
    wiki.close()
    # the name tables (sent per chunk, inserted in one statement each) say what a serial build says
    assert name_rows(info.root) == expected_names
    reopened = Wiki(info.root)  # and what they parsed was cached
    assert rows(reopened.pages) == expected
    reopened.close()


def _niceness(_root: str, files: list[PageFile]) -> list[int]:
    return [os.nice(0)] * len(files)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities here")
def test_background_workers_run_at_a_lower_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    """The station's background builds (niceness > 0) leave the cores to the GUI thread first."""
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    files = [PageFile(f"p{i}.md", 0, 1) for i in range(4)]
    own = os.nice(0)
    background = parallel.map_chunks(_niceness, "", files, niceness=5)
    foreground = parallel.map_chunks(_niceness, "", files)
    assert background is not None and foreground is not None
    assert {n for chunk in background for n in chunk} == {min(own + 5, 19)}
    assert {n for chunk in foreground for n in chunk} == {own}


def test_chunks_spread_the_big_pages() -> None:
    files = [PageFile(f"p{i}.md", 0, size) for i, size in enumerate([10**6, 10**6, *[100] * 998])]
    parts = parallel.chunks(files, size=250)
    assert len(parts) == 4 and sorted(len(p) for p in parts) == [250, 250, 250, 250]
    assert sum(any(f.size == 10**6 for f in p) for p in parts) == 2
    assert sorted(f.path for p in parts for f in p) == sorted(f.path for f in files)


def test_index_and_reads_do_not_build_the_search_index(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 60, seed=1)
    root = str(info.root)
    for argv in (["index", "--json"], ["lint"], ["graph", "--format", "json"],
                 ["neighbors", info.sample_links[0][0]]):
        subprocess.run([CURATOR, "--wiki", root, *argv], capture_output=True, timeout=120)
    db = sqlite3.connect(locate_state(info.root) / "cache.sqlite")
    assert db.execute("SELECT count(*) FROM pages").fetchone()[0] == len(info.pages)
    assert db.execute("SELECT count(*) FROM search_docs").fetchone()[0] == 0
    assert db.execute("SELECT value FROM search_meta WHERE key='built'").fetchone() is None
    db.close()
    out = subprocess.run([CURATOR, "--wiki", root, "search", "payment", "--json"], capture_output=True,
                         timeout=120, check=True).stdout
    assert json.loads(out)  # the first search built it
    db = sqlite3.connect(locate_state(info.root) / "cache.sqlite")
    assert db.execute("SELECT count(*) FROM search_docs").fetchone()[0] == len(info.pages)
    # the page cache is not a second copy of the text: contentless full-text index
    assert db.execute("SELECT sql FROM sqlite_master WHERE name='search_fts'").fetchone()[0].count("content=''")
    db.close()


def test_search_finds_an_in_place_edit_made_0_ms_ago(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 80, seed=4)
    root = info.root
    target = "wiki/" + next(p.split("/", 1)[1] for p in info.pages if p.startswith("wiki/ledger"))
    argv = [CURATOR, "--wiki", str(root), "search", "--json", "--limit", "100"]
    assert json.loads(subprocess.run([*argv, "payment"], capture_output=True, check=True).stdout)
    page = root / target
    for word in ("xylophonic", "zanzibarite", "quokkaesque"):
        # written in place (same inode, no folder change), then searched at once
        with open(page, "r+", encoding="utf-8") as fh:
            text = fh.read()
            fh.seek(0)
            fh.write(text + f"\n{word}\n")
            fh.truncate()
        out = subprocess.run([*argv, word], capture_output=True, check=True).stdout
        assert [r["path"] for r in json.loads(out)] == [target], word
    # in process too: a Wiki opened before the edit, searching right after it
    wiki = Wiki(root)
    assert wiki.search.search("quokkaesque")
    with open(page, "r+", encoding="utf-8") as fh:
        text = fh.read().replace("quokkaesque", "wombatish")
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    st = page.stat()
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # same size: the mtime tells
    assert [h.path for h in wiki.search.search("wombatish")] == [target]
    assert wiki.search.search("quokkaesque") == []
    wiki.close()


def test_search_check_decodes_no_page_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = generate(tmp_path / "w", 40, seed=2)
    Wiki(info.root).search.refresh()
    decoded: list[int] = []
    real = Page.from_row

    def counting(row: list[object]) -> Page:
        decoded.append(1)
        return real(row)

    monkeypatch.setattr(Page, "from_row", staticmethod(counting))
    wiki = Wiki(info.root)
    page = next(f.path for f in walk(info.root))
    (info.root / page).write_text("# Edited\n\nnewword here\n", encoding="utf-8")
    assert [h.path for h in wiki.search.search("newword")] == [page]
    assert len(decoded) <= 1  # only the edited page (fed to the index), never the whole cache
    wiki.close()


def test_a_huge_commit_diff_is_cut_without_reading_it_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.history import diffs
    from curator.engine.write.actions import git_of

    info = generate(tmp_path / "w", 300, seed=3, profile="real-shaped", cjk=False, git=True)
    wiki = Wiki(info.root)
    head = git_of(wiki).head()
    assert head
    monkeypatch.setattr(diffs, "MAX_DIFF_CHARS", 50_000)
    text = diffs.commit_diff(wiki, head)
    assert text.startswith(head) and text.endswith("diff cut at 50,000 characters\n")
    assert len(text) < 50_100
    assert "| " in text.split("diff --git", 1)[0]  # a per-file stat for a commit of 301 files
    monkeypatch.setattr(diffs, "MAX_STAT_FILES", 100)  # more files than that: a one-line summary
    text = diffs.commit_diff(wiki, head)
    summary = text.split("diff --git", 1)[0]
    assert "301 files changed" in summary and "| " not in summary
    wiki.close()
