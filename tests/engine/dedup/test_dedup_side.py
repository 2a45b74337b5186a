"""A dedup scan's side work in a forked child (curator/engine/dedup/side.py): the title and tag pairs and
the inbound counts found there answer exactly as found in process, the scanning process builds no link
index for them, a change after the scan is counted from the link index, and a child that fails or
dies is replaced by the work done in process."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from curator.engine.corpus import links as links_module
from curator.engine.dedup import index as dedup
from curator.engine.dedup import side as dedup_side
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.wiki import Wiki
from tests.corpus import generate

N_PAGES = 400


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("side") / "wiki", N_PAGES, seed=3, profile="real-shaped").root


def _answer(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[tuple[str, str], float]]]:
    """(families, candidate pairs, every signal's pairs) of a full scan of ``root`` in a new wiki,
    nothing kept (the scan's own answer)."""
    index = dedup.DedupIndex(Wiki(root))
    index.scan()
    families = [f.to_json() for f in FamilyAnswers(index).families()]
    candidates = [c.to_json() for c in FamilyAnswers(index).candidates()]
    return families, candidates, {s: dict(index.pairs[s]) for s in dedup.SIGNALS}


@pytest.fixture(scope="module")
def in_process(corpus: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[tuple[str, str], float]]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dedup, "SIDE_PAGES", 10**9)  # (never forks)
        return _answer(corpus)


def test_the_titles_and_tags_found_in_the_forked_child_answer_as_in_process(
        corpus: Path, in_process: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = tmp_path / "titles-pid"
    real = dedup.DedupIndex._scan_titles

    def titles(self: dedup.DedupIndex, feats: list[dedup.Features]) -> None:
        where.write_text(str(os.getpid()))  # (a file: the child's memory is not the test's)
        real(self, feats)

    monkeypatch.setattr(dedup.DedupIndex, "_scan_titles", titles)
    monkeypatch.setattr(dedup, "SIDE_PAGES", 1)
    built: list[int] = []
    real_links = links_module.LinkIndex  # (what wiki.py builds its link index with, imported when first used)

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(os.getpid())
        return real_links(*args, **kwargs)

    monkeypatch.setattr(links_module, "LinkIndex", counted)
    answer = _answer(corpus)
    assert int(where.read_text()) != os.getpid()  # (found in another process)
    assert not built  # (the child counted the inbound links: no link index built here)
    assert answer == in_process
    assert sum(len(p) for p in answer[2].values()) and answer[2]["title"]


def test_after_a_change_the_inbound_counts_come_from_the_link_index(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = generate(tmp_path / "wiki", 120, seed=5, profile="real-shaped").root
    monkeypatch.setattr(dedup, "SIDE_PAGES", 1)
    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    before = {f.keep: f for f in FamilyAnswers(index).families()}
    family = next(f for f in before.values() if len(f.pages) >= 2)
    target = family.pages[-1]  # (a page the keep rule ranks last: more links can make it the survivor)
    stem = Path(target).stem
    for i in range(6):  # new pages linking to it: its inbound count moves
        (root / f"linker-{i}.md").write_text(f"# Linker {i}\n\nSee [[{stem}]] and [[{target}]].\n")
    wiki.refresh()
    index = dedup.index_for(wiki)  # (an update, page by page: no scan, no child)
    after = [f.to_json() for f in FamilyAnswers(index).families()]
    monkeypatch.setattr(dedup, "SIDE_PAGES", 10**9)
    fresh = dedup.DedupIndex(Wiki(root))
    fresh.scan()
    assert after == [f.to_json() for f in FamilyAnswers(fresh).families()]
    inbound = {m["path"]: m["inbound"] for f in after for m in f["members"]}
    assert inbound[target] == {m["path"]: m["inbound"] for m in family.members}[target] + 6


def _failing(self: dedup.DedupIndex, send: dedup_side.Send, feats: list[dedup.Features]) -> None:
    raise RuntimeError("side work failed")


def _dying(self: dedup.DedupIndex, send: dedup_side.Send, feats: list[dedup.Features]) -> None:
    os._exit(3)  # (killed, out of memory: no answer at all)


def _half(self: dedup.DedupIndex, send: dedup_side.Send, feats: list[dedup.Features]) -> None:
    self._scan_titles(feats)
    self._scan_tags(feats)
    send({signal: list(self.pairs[signal].items()) for signal in dedup.SIDE_SIGNALS})
    os._exit(3)  # (dies before the inbound counts)


@pytest.mark.parametrize("work", [_failing, _dying, _half])
def test_a_child_that_fails_or_dies_leaves_the_answer_as_in_process(
        corpus: Path, in_process: Any, monkeypatch: pytest.MonkeyPatch, work: Any) -> None:
    monkeypatch.setattr(dedup, "SIDE_PAGES", 1)
    monkeypatch.setattr(dedup.DedupIndex, "_side_work", work)
    assert _answer(corpus) == in_process


def test_a_process_running_threads_does_not_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    assert dedup_side.may_fork()  # (pytest runs a single thread)
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not dedup_side.may_fork()
        assert dedup_side.fork_side(lambda send: send(1)) is None
    finally:
        release.set()
        thread.join()
    def two(send: dedup_side.Send) -> None:
        send({"pid": os.getpid()})
        send(2)

    side = dedup_side.fork_side(two)
    assert side is not None
    first = side.take()
    assert first["pid"] != os.getpid() and side.take() == 2
    assert side.take() is None  # (the child has left: nothing more)
    side.close()
