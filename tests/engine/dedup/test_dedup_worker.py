"""The station's dedup work in a worker process (:mod:`curator.engine.dedup.worker`): it scans in
another process than the station's, answers exactly what the in-process index answers before and
after a change, a worker killed while a call waits is said in one line and the next call starts
another, closing stops it, and nothing changes for agents (their index stays in their process)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.index import DedupIndex
from curator.engine.dedup.worker import DedupWorker, WorkerGone, stop_scans, worker_for
from curator.engine.policy.actor import parse_actor
from curator.engine.review.health import duplicate_figure
from curator.engine.wiki import Wiki
from tests.engine.dedup.test_dedup_families import HIDDEN, LEDGER, NEXT, facts, family_of, page, root  # noqa: F401

WAIT = 60  # seconds: a generous bound for what must not block


def in_process(folder: Path) -> list[dict[str, Any]]:
    """The families a new process's in-process index gives the operator (a full scan)."""
    wiki = Wiki(folder)
    try:
        return [f.to_json() for f in dedup_families.find_families(wiki)]
    finally:
        wiki.close()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_station_scans_in_another_process_and_answers_as_in_process(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki, niceness=5)
    try:
        assert worker_for(wiki) is worker  # one per wiki
        assert [f.to_json() for f in worker.families()] == in_process(root)
        assert worker.count() == dedup_families.family_count(Wiki(root)) and worker.count("content") >= 1
        status = worker.status()
        assert status["pid"] != os.getpid() and status["pid"] == worker.pid
        assert wiki.session.peek(DedupIndex) is None  # no dedup index in this process
        worker.build()
        status = worker.status(paths=True)
        assert status["scanned"] and not status["kept"] and set(status["features"]) == set(wiki.pages)
        assert status["niced"]["build"] >= 5  # the build at the background niceness
        # a change (the station refreshes, as its watcher makes it): followed page by page
        (root / "wiki/harbour-ledger-copy.md").write_text(
            (root / LEDGER).read_text("utf-8").replace("Harbour Ledger", "Harbour Ledger Copy"), "utf-8")
        wiki.refresh()
        after = [f.to_json() for f in worker.families()]
        assert after == in_process(root)
        assert "wiki/harbour-ledger-copy.md" in {p for f in after for p in f["pages"]}
        assert worker.status()["scanned"] and worker.starts == 1  # (no new scan, no new worker)
        # the folder and signal filters are the in-process ones
        assert ([f.to_json() for f in worker.families(folder="wiki", signal="containment")]
                == [f.to_json() for f in dedup_families.find_families(Wiki(root), folder="wiki", signal="containment")])
    finally:
        stop_scans(wiki)
        wiki.close()
    assert worker.pid is None


def test_the_workers_first_scan_runs_in_a_process_of_its_own(root: Path) -> None:  # noqa: F811
    """A cold worker's first scan runs in a one-shot process that keeps its result, families and
    basis (the scan's peak leaves with it): the worker loads them as a warm open does, answers
    exactly an in-process scan's, and follows a change from the basis, scanning nothing itself."""
    assert not (root / ".curator").exists()
    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki)
    try:
        count = worker.count()
        status = worker.status()
        assert status["kept"] and not status["scanned"]  # (loaded, not scanned here)
        assert status["children_peak"] > 0  # (the scan's process)
        assert count == len(in_process(root)) and [f.to_json() for f in worker.families()] == in_process(root)
        worker.build()  # (every page's features: from the basis the scan's process saved)
        (root / "wiki/harbour-ledger-copy.md").write_text(
            (root / LEDGER).read_text("utf-8").replace("Harbour Ledger", "Harbour Ledger Copy"), "utf-8")
        wiki.refresh()
        assert [f.to_json() for f in worker.families()] == in_process(root)
        assert worker.status()["scanned"] and worker.starts == 1
    finally:
        stop_scans(wiki)
        wiki.close()


def test_a_scan_apart_is_asked_for_only_where_its_result_can_be_kept(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Where the state folder cannot be written, a process of its own could keep nothing for the
    index to load: the index scans itself, answering as a full scan does."""
    asked: list[threading.Event] = []
    monkeypatch.setattr(DedupIndex, "_writable_state", lambda self: False)
    wiki = Wiki(root)
    index = DedupIndex(wiki)
    index.scan_apart = lambda stop: asked.append(stop) or False
    index.update()
    assert not asked and index.scanned and index.kept is None
    assert [f.to_json() for f in dedup_families.FamilyAnswers(index).families()] == in_process(root)


def test_a_scan_apart_ends_when_told_to_stop(root: Path) -> None:  # noqa: F811
    from curator.engine.dedup.worker import _scan_apart

    stop = threading.Event()
    stop.set()
    start = time.perf_counter()
    assert _scan_apart(str(root), stop) is False  # (ended, kept nothing: the worker does not load)
    assert time.perf_counter() - start < 5 and not multiprocessing.active_children()


def test_a_change_made_while_the_worker_scans_is_followed(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            worker.build()
        except BaseException as exc:  # (handed to the test)
            errors.append(exc)

    try:
        thread = threading.Thread(target=build)
        thread.start()  # the first scan, in the worker
        (root / NEXT).write_text(page("Aizen Bg3 V2 Entry 156", facts(6, 999)), "utf-8")  # no copy of 156 any more
        wiki.refresh()
        fams = [f.to_json() for f in worker.families()]
        thread.join(WAIT)
        assert not errors and not thread.is_alive()
        assert fams == in_process(root)
        assert NEXT not in {p for f in fams if f["strength"] == "content" for p in f["pages"]}
    finally:
        stop_scans(wiki)
        wiki.close()


class HeldStore:
    """The page cache's write lock held by this process: a worker that must write what it
    refreshes (a page changed) waits for it, with the call it answers."""

    def __init__(self, folder: Path) -> None:
        self.conn = sqlite3.connect(folder / ".curator" / "cache.sqlite", timeout=WAIT, isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


def forget_the_last_step(folder: Path) -> None:
    """Drop the record of what the last write of the page cache changed: a process that had not
    read it cannot take that state up (:meth:`~curator.engine.corpus.store.PageStore._adopt`), it parses
    the pages itself and writes."""
    with sqlite3.connect(folder / ".curator" / "cache.sqlite") as conn:
        conn.execute("DELETE FROM changes WHERE token = (SELECT data FROM snapshot WHERE part='token')")
    conn.close()


def test_a_killed_worker_is_said_in_one_line_and_the_next_call_starts_another(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki)
    try:
        assert worker.count() > 0
        first = worker.pid
        assert first is not None
        (root / "wiki/new-page.md").write_text(page("A New Page", facts(6, 77)), "utf-8")
        wiki.refresh()
        forget_the_last_step(root)  # (else the worker takes up the station's write, writing nothing)
        held = HeldStore(root)
        errors: list[BaseException] = []

        def ask() -> None:
            with pytest.raises(WorkerGone) as raised:
                worker.families()
            errors.append(raised.value)

        thread = threading.Thread(target=ask)
        try:
            thread.start()
            time.sleep(1.0)  # (the call waits in the worker, at its refresh's write)
            assert thread.is_alive()
            os.kill(first, signal.SIGKILL)
            thread.join(WAIT)
        finally:
            held.release()
        assert not thread.is_alive() and len(errors) == 1
        message = str(errors[0])
        assert "ended unexpectedly" in message and "SIGKILL" in message and "\n" not in message
        # the next call starts another worker, which answers as before
        assert [f.to_json() for f in worker.families()] == in_process(root)
        assert worker.starts == 2 and worker.pid not in (None, first)
    finally:
        stop_scans(wiki)
        wiki.close()


def test_stopping_ends_the_worker_and_its_calls(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki)
    assert worker.count() > 0
    pid = worker.pid
    assert pid is not None
    start = time.perf_counter()
    stop_scans(wiki)  # (the station closing: Workspace.close)
    assert time.perf_counter() - start < 5
    assert worker.pid is None and gone(pid)
    with pytest.raises(dedup.ScanStopped):
        worker.count()
    wiki.close()


def test_agents_keep_their_index_in_process_and_see_only_their_pages(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    wiki.refresh()
    agent = parse_actor("agent:dudu", "sales")
    fams = dedup_families.find_families(wiki, agent)
    assert set(family_of(fams, NEXT).pages) == {"wiki/aizen-bg3-v2-entry-156.md", "wiki/aizen-bg3-v2-copy-entry-156.md"}
    assert all(HIDDEN not in f.pages for f in fams)
    assert wiki.session.peek(DedupIndex) is not None and wiki.session.peek(DedupWorker) is None  # in process, no worker
    with pytest.raises(ValueError, match="operator only"):
        duplicate_figure(wiki, agent, apart=True)  # the worker answers for the operator alone
    assert wiki.session.peek(DedupWorker) is None
    # the operator's figure from the worker is the in-process one
    try:
        assert duplicate_figure(wiki, apart=True).value == duplicate_figure(Wiki(root)).value
    finally:
        stop_scans(wiki)
        wiki.close()


def test_health_reads_a_kept_count_here_and_asks_the_worker_only_after_a_change(root: Path) -> None:  # noqa: F811
    """The station's duplicate figure from the result a full scan kept for these very pages is read
    in the station's process (no index loaded, no worker started: a moment); once a page changed,
    only a scan can count, and that is the worker's."""
    other = Wiki(root)
    dedup_families.find_families(other)
    dedup_families.keep_result(other)
    expected = dedup_families.family_count(other)
    other.close()
    wiki = Wiki(root)
    wiki.refresh()
    try:
        assert duplicate_figure(wiki, apart=True).value == expected
        assert wiki.session.peek(DedupIndex) is None and wiki.session.peek(DedupWorker) is None
        changed = sorted(root.glob("wiki/*.md"))[0]
        changed.write_text(changed.read_text(encoding="utf-8") + "\nA new closing sentence about harbours.\n",
                           encoding="utf-8")
        wiki.refresh()
        assert duplicate_figure(wiki, apart=True).value == duplicate_figure(Wiki(root)).value
        assert wiki.session.peek(DedupIndex) is None and wiki.session.peek(DedupWorker) is not None
    finally:
        stop_scans(wiki)
        wiki.close()


def test_the_workers_refresh_keeps_the_stations_chain_of_states(root: Path) -> None:  # noqa: F811
    """The station changes a page, then the worker follows it for the families: the worker takes
    the station's state up (it writes none of its own), so the station's lint and graph results
    are still saved under its state, and the next open finds them (before, the worker's write of
    that page made the station's saves refused and the next open recompute them in full)."""
    from curator.engine.review.lint import lint

    wiki = Wiki(root)
    wiki.refresh()
    worker = worker_for(wiki)
    try:
        worker.families()
        target = root / "wiki" / "chain-page.md"
        target.write_text(page("A Chain Page", facts(5, 41)), "utf-8")
        assert wiki.refresh().added == ["wiki/chain-page.md"]
        state = wiki.store.state
        worker.families()  # (the worker refreshes that page)
        with sqlite3.connect(root / ".curator" / "cache.sqlite") as conn:
            token = conn.execute("SELECT data FROM snapshot WHERE part='token'").fetchone()[0]
        conn.close()
        assert token == state == wiki.store.state
        issues = lint(wiki)  # saves its answer under the station's state
        assert wiki.store.derived("lint") is not None
    finally:
        stop_scans(wiki)
        wiki.close()
    again = Wiki(root)
    try:
        again.refresh()
        assert again.store.derived("lint") is not None  # found again, not computed from every page
        assert [i.to_json() for i in lint(again)] == [i.to_json() for i in issues]
    finally:
        again.close()


def test_the_worker_gives_back_what_an_answer_freed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """After each answer (and after one that failed) the worker process gives its freed heap
    back (memory.trim_if_free): what a follow or a families answer made and let go of stayed
    resident in the worker for as long as the station ran (~40 MB after a cold open of 32,000
    pages)."""
    from curator.engine import memory
    from curator.engine.dedup import worker as worker_module

    trims: list[int] = []
    monkeypatch.setattr(memory, "trim_if_free", lambda: trims.append(1) or True)
    wiki = Wiki(root)
    wiki.refresh()
    ours, theirs = multiprocessing.Pipe()
    try:
        state = (wiki.store.state, None)
        worker_module._answer(theirs, threading.Lock(), wiki, worker_module._Seen(), state, 1, "count", {})
        assert ours.poll(WAIT) and pickle.loads(ours.recv_bytes())[:2] == (1, "done") and trims == [1]
        worker_module._answer(theirs, threading.Lock(), wiki, worker_module._Seen(), state, 2, "count",
                              {"no_such_argument": True})
        assert ours.poll(WAIT) and pickle.loads(ours.recv_bytes())[:2] == (2, "error") and trims == [1, 1]
    finally:
        ours.close()
        theirs.close()
        wiki.close()


def test_the_first_scans_process_runs_on_a_lean_heap(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The one-shot process of the worker's first scan sets its allocator lean before it scans
    (memory.lean_heap: its peak is added to the station's), and keeps its families as
    ``curator dedup --groups`` does."""
    from curator.engine import memory
    from curator.engine.dedup import worker as worker_module

    order: list[str] = []
    monkeypatch.setattr(memory, "lean_heap", lambda: order.append("lean") or True)
    monkeypatch.setattr(worker_module, "find_families", lambda wiki, actor: order.append("scan") or [])
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # (not this test process's Ctrl-C)
    worker_module._scan_and_keep(str(root))
    assert order == ["lean", "scan"]
