"""The station's background dedup build (docs/design.md §12): while every page's features are scanned
into a new index, the wiki's index goes on answering from the kept result (the Duplicates queue
never waits for the build); the built state then replaces it in one step and follows later
changes page by page; a change made during the build is waited for, not scanned a second time;
closing the station stops it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import follow
from curator.engine.dedup import index as dedup
from curator.engine.dedup.index import DedupIndex
from curator.engine.dedup.worker import stop_scans
from curator.engine.wiki import Wiki
from tests.engine.dedup.test_dedup_families import FAMILY, LEDGER, facts, family_of, full_scan, page, root  # noqa: F401

WAIT = 30  # seconds: a generous bound for what must not block


class HeldBuild:
    """Every scan of ``wiki``'s pages by an index other than its own (the build's) waits at its
    start until released; ``scans`` lists the indexes that scanned ``wiki`` (its own too)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, wiki: Wiki) -> None:
        self.wiki = wiki
        self.started = threading.Event()
        self.release = threading.Event()
        self.scans: list[dedup.DedupIndex] = []
        real = dedup.DedupIndex.scan

        def scan(index: dedup.DedupIndex) -> None:
            if index.wiki is not wiki:
                real(index)  # (full_scan's, in another process's view)
                return
            self.scans.append(index)
            if index is not wiki.session.peek(DedupIndex):
                self.started.set()
                assert self.release.wait(WAIT)
            real(index)

        monkeypatch.setattr(dedup.DedupIndex, "scan", scan)

    def start(self) -> tuple[threading.Thread, list[BaseException]]:
        """The station's build (:func:`dedup.index_for` with ``full``) in a thread, held at its scan."""
        errors: list[BaseException] = []

        def build() -> None:
            try:
                dedup.index_for(self.wiki, full=True)
            except BaseException as exc:  # (handed to the test)
                errors.append(exc)

        thread = threading.Thread(target=build)
        thread.start()
        assert self.started.wait(WAIT)
        return thread, errors


@pytest.fixture
def kept(root: Path) -> Iterator[Path]:  # noqa: F811 (the fixture imported above)
    """A full scan's result, kept for the next process, without the basis a build follows from
    (lost, or saved by an older version): the build scans every page."""
    dedup_families.find_families(Wiki(root))
    (root / ".curator" / follow.FILE).unlink()
    yield root


@pytest.fixture
def based(root: Path) -> Iterator[Path]:  # noqa: F811 (the fixture imported above)
    """A full scan's result and its basis, kept for the next process."""
    dedup_families.find_families(Wiki(root))
    assert (root / ".curator" / follow.FILE).is_file()
    yield root


def count_scans(monkeypatch: pytest.MonkeyPatch, wiki: Wiki) -> list[DedupIndex]:
    """Every index of ``wiki`` that scans from now on (not full_scan's of a copy)."""
    scans: list[DedupIndex] = []
    real = DedupIndex.scan

    def scan(index: DedupIndex) -> None:
        if index.wiki is wiki:
            scans.append(index)
        real(index)

    monkeypatch.setattr(DedupIndex, "scan", scan)
    return scans


def in_thread(func: Any) -> Any:
    """``func()`` in a thread, which must finish within WAIT seconds (it must not wait for the build)."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(func()))
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive(), "blocked by the build"
    return out[0]


def test_the_kept_result_answers_while_the_build_runs_then_the_build_follows_changes(
        kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = Wiki(kept)
    assert dedup_families.family_count(wiki) == len(full_scan(kept))
    held = HeldBuild(monkeypatch, wiki)
    thread, errors = held.start()
    index = wiki.session.peek(DedupIndex)
    assert index is not None and index.kept is not None
    # the Duplicates queue while the build is held: the kept result's families, at once
    families = in_thread(lambda: [f.to_json() for f in dedup_families.find_families(wiki)])
    assert families == full_scan(kept)
    assert index.kept is not None and held.scans == [held.scans[0]] and held.scans[0] is not index
    held.release.set()
    thread.join(WAIT)
    assert not thread.is_alive() and errors == []
    assert index.kept is None and index.scanned and set(index.features) == set(wiki.pages)
    assert wiki.session.peek(DedupIndex) is index  # (the same index, holding the built state)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(kept)
    # a change after the build: followed page by page (no scan), exactly a full scan's answer
    (kept / "wiki/harbour-ledger-again.md").write_text(page("Harbour Ledger Again", facts(6, 42)), "utf-8")
    wiki.refresh()
    scans = len(held.scans)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(kept)
    assert len(held.scans) == scans
    assert "wiki/harbour-ledger-again.md" in family_of(dedup_families.find_families(wiki), LEDGER).pages


def test_a_change_during_the_build_waits_for_it_and_is_followed_page_by_page(
        kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = Wiki(kept)
    dedup.index_for(wiki)  # (answering from the kept result)
    held = HeldBuild(monkeypatch, wiki)
    thread, errors = held.start()
    index = wiki.session.peek(DedupIndex)
    assert index is not None
    (kept / "wiki/harbour-ledger-again.md").write_text(page("Harbour Ledger Again", facts(6, 42)), "utf-8")
    wiki.refresh()
    answer: list[list[dedup.Family]] = []
    asker = threading.Thread(target=lambda: answer.append(dedup_families.find_families(wiki)))
    asker.start()
    asker.join(0.5)
    assert asker.is_alive() and not answer  # the kept result no longer answers: it waits
    held.release.set()
    thread.join(WAIT)
    asker.join(WAIT)
    assert errors == [] and not asker.is_alive()
    assert held.scans == [held.scans[0]] and held.scans[0] is not index  # one scan: the build's
    assert [f.to_json() for f in answer[0]] == full_scan(kept)
    assert "wiki/harbour-ledger-again.md" in family_of(answer[0], LEDGER).pages


def test_closing_the_station_stops_the_build(kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = Wiki(kept)
    dedup.index_for(wiki)
    held = HeldBuild(monkeypatch, wiki)
    thread, errors = held.start()
    stop_scans(wiki)  # the station closing
    held.release.set()
    thread.join(WAIT)
    assert not thread.is_alive() and len(errors) == 1 and isinstance(errors[0], dedup.ScanStopped)
    index = wiki.session.peek(DedupIndex)
    assert index is not None and not index.features and index._building is None
    assert set(family_of(dedup_families.find_families(wiki), sorted(FAMILY)[0]).pages) == FAMILY  # (the kept result still answers)


def test_a_second_build_waits_for_the_first_and_the_queue_still_answers(
        kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = Wiki(kept)
    dedup.index_for(wiki)
    held = HeldBuild(monkeypatch, wiki)
    thread, errors = held.start()
    second = threading.Thread(target=lambda: dedup.index_for(wiki, full=True))  # (the queue shown again)
    second.start()
    second.join(0.3)
    assert second.is_alive()  # waiting for the first build, not scanning the index in place
    assert [f.to_json() for f in in_thread(lambda: dedup_families.find_families(wiki))] == full_scan(kept)
    held.release.set()
    thread.join(WAIT)
    second.join(WAIT)
    assert not second.is_alive() and errors == []
    index = wiki.session.peek(DedupIndex)
    assert index is not None and index.scanned and index.kept is None
    assert held.scans == [held.scans[0]] and held.scans[0] is not index  # one scan: the first build's


def test_with_a_basis_the_build_loads_it_and_scans_nothing(based: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The station's build after its first answer: every page's features as the basis holds them
    (made as asked for), not a full scan (most of a gigabyte held at 32,000 pages); later changes
    are followed page by page, each answer exactly a full scan's."""
    wiki = Wiki(based)
    index = dedup.index_for(wiki)
    assert index.kept is not None  # (the kept result answers)
    scans = count_scans(monkeypatch, wiki)
    assert dedup.index_for(wiki, full=True) is index
    assert index.kept is None and index.scanned and index.from_basis and scans == []
    assert isinstance(index.features, dedup.BasisFeatures) and set(index.features) == set(wiki.pages)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(based)
    (based / "wiki/harbour-ledger-again.md").write_text(page("Harbour Ledger Again", facts(6, 42)), "utf-8")
    wiki.refresh()
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(based)
    assert "wiki/harbour-ledger-again.md" in family_of(dedup_families.find_families(wiki), LEDGER).pages
    (based / "wiki/harbour-ledger-again.md").unlink()
    wiki.refresh()
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(based)
    assert scans == []


@pytest.mark.parametrize("with_basis", [True, False])
def test_a_kept_answer_whose_pages_changed_follows_from_the_basis_in_the_same_process(
        root: Path, monkeypatch: pytest.MonkeyPatch, with_basis: bool) -> None:  # noqa: F811
    """A long-lived process (the station's dedup worker) that answered from the kept result and
    then sees a change loads the basis as a new process would, rather than scan every page;
    without a basis it scans, and then follows the basis that scan saved."""
    dedup_families.find_families(Wiki(root))
    if not with_basis:
        (root / ".curator" / follow.FILE).unlink()
    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    assert index.kept is not None
    scans = count_scans(monkeypatch, wiki)
    (root / "wiki/harbour-ledger-again.md").write_text(page("Harbour Ledger Again", facts(6, 42)), "utf-8")
    wiki.refresh()
    families = dedup_families.find_families(wiki)
    assert [f.to_json() for f in families] == full_scan(root)
    assert "wiki/harbour-ledger-again.md" in family_of(families, LEDGER).pages
    assert index.kept is None and index.from_basis and scans == ([] if with_basis else [index])
