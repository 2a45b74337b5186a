"""Bulk work handed to worker processes a few chunks ahead of a caller slower than the workers
(:func:`curator.engine.corpus.parallel.map_chunks` ``ahead``): the station's first search-index build
inserted into SQLite slower than two workers prepared the text, and every chunk's rows waited in
its memory (+110 MB at 32,000 pages, a cold open's peak over 500 MB)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from curator.engine.corpus import parallel
from curator.engine.corpus.walker import PageFile
from curator.engine.wiki import Wiki


def _mark(root: str, files: list[PageFile]) -> list[str]:
    """A chunk's work: leaves a file saying it ran (in the worker process), answers its paths."""
    (Path(root) / files[0].path).write_text("ran")
    return [f.path for f in files]


def _files() -> list[PageFile]:
    # 10 chunks of parallel.CHUNK_FILES, each named by its first (biggest) file
    n = parallel.CHUNK_FILES * 10
    return [PageFile(f"p{i:05}", 0, n - i) for i in range(n)]


def _ran(root: Path) -> int:
    return sum(1 for _ in root.iterdir())


def test_a_slow_caller_gets_chunks_a_few_ahead(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    files = _files()
    results = parallel.map_chunks(_mark, str(tmp_path), files, ahead=2)
    assert results is not None
    taken = [next(results)]
    time.sleep(1.0)  # (the workers have long finished whatever they were given)
    assert _ran(tmp_path) <= 3  # the chunk taken and two ahead, not the other seven
    for chunk in results:
        taken.append(chunk)
        time.sleep(0.01)
        assert _ran(tmp_path) <= len(taken) + 2
    expected = [[f.path for f in part] for part in parallel.chunks(files)]
    assert taken == expected  # every chunk, once, in order
    assert _ran(tmp_path) == 10


def test_without_a_limit_every_chunk_runs_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """(The dedup scan's shingling: it runs while the scan compares names, then all is taken.)"""
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    results = parallel.map_chunks(_mark, str(tmp_path), _files())
    assert results is not None
    first = next(results)
    deadline = time.monotonic() + 30
    while _ran(tmp_path) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _ran(tmp_path) == 10
    assert len([first, *results]) == 10


def test_the_search_index_build_takes_its_rows_a_few_chunks_ahead(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"p{i}.md").write_text(f"# Page {i}\n\nword{i} common text\n")
    seen: list[int | None] = []
    real = parallel.map_chunks

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(kwargs.get("ahead"))
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel, "map_chunks", spy)
    wiki = Wiki(tmp_path)
    try:
        assert wiki.search.rebuild() == 40
        assert seen and all(a is not None and a <= 2 * parallel.workers() for a in seen)
        assert [h.path for h in wiki.search.search("word7")] == ["p7.md"]
    finally:
        wiki.close()


def test_a_big_process_spawns_its_workers_a_small_one_forks_them(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    """A single-threaded process forks its workers while it is small (cheap: nothing to import
    again) and spawns them once it holds more than FORK_MAX_MB (forked, they came to copy the
    pages of its objects their reference counts touched); either way the work is done."""
    import multiprocessing
    import threading

    from curator.engine import memory

    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() != 1:
        pytest.skip("forks only where a single-threaded process can fork")
    assert memory.resident_mb() > 0  # (read from this very process)
    for resident, method in ((parallel.FORK_MAX_MB / 2, "fork"), (parallel.FORK_MAX_MB + 1, "spawn")):
        monkeypatch.setattr(memory, "resident_mb", lambda resident=resident: resident)
        assert parallel._context().get_start_method() == method
        files = [PageFile(f"p{i}", 0, 1) for i in range(3)]
        done = list(parallel.map_chunks(_mark, str(tmp_path), files) or ())
        assert [p for chunk in done for p in chunk] and (tmp_path / "p0").read_text() == "ran"
        (tmp_path / "p0").unlink()
    # a first dedup scan starts its shingling workers at 240 MB (32,000 pages): spawned, they
    # held 70-80 MB each, forked 133-149 MB (PSS)
    assert parallel.FORK_MAX_MB < 240
