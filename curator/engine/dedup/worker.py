"""The station's duplicate finder in a worker process (docs/design.md §8, §9, §12).

A full dedup scan of a 32,000-page wiki peaked at well over a gigabyte (about 600 MB now, in a
process of its own: see below), every page's
whole features (what follows a change page by page) held most of a gigabyte after it (those loaded
from the basis a scan saved, which a scan now follows too, about a quarter of that), and the scan's long numpy calls
and Python loops share the interpreter lock with whatever else runs in its process. Inside the
station they took its memory past 1.7 GB and held its GUI thread for hundreds of milliseconds. So
the station keeps its dedup index in a process of its own (:class:`DedupWorker`, one per wiki,
held by the wiki's session), started (``spawn``: the station runs threads and Qt) on first use,
whose scans and builds run at the station's background CPU priority (the short answers the
operator waits for do not), which opens the wiki itself (its own page store, link
index and :class:`~curator.engine.dedup.index.DedupIndex`) and answers, for the operator only:

* :meth:`DedupWorker.families`: :func:`~curator.engine.dedup.families.find_families` (dismissed pairs applied);
* :meth:`DedupWorker.count`: :func:`~curator.engine.dedup.families.family_count` (the Health figure);
* :meth:`DedupWorker.build`: the every-page index (:func:`~curator.engine.dedup.index.index_for` ``full``: the
  last scan's basis, else a scan), so that later changes are followed page by page;
  :meth:`DedupWorker.keep`: keep the result for the next
  open (:func:`~curator.engine.dedup.families.keep_result`); :meth:`DedupWorker.stop`.

A first scan (no result or basis kept for the pages: a wiki never opened before) runs in a
one-shot process of the worker's own (:func:`_scan_apart`), which keeps its result, families and
basis; the worker then loads them as a warm open does. The scan's peak leaves with that process:
kept in the worker, it held the station's processes at 1.2 GB after a cold open of 32,000 pages,
against 0.8 GB so (the scan's process is 0.17 GB more for as long as it runs).

Every call first brings the worker's page store up to date with the pages as the station sees
them (the pages the station saw change since the last call, or every page by (mtime, size) when
its state moved otherwise; with the store's racy-stamp rule), so an answer is never of older pages
than the station sees: a change made while the worker scans is followed exactly as in process (the call
waits for the scan, then the index follows the change page by page). The interface takes no
actor: agents (the CLI, the MCP server) keep their dedup index in their own process, and what
they may see is decided there as before. Families come back in chunks of :data:`CHUNK` (each
unpickled in a few milliseconds: the station's GUI thread never waits for one long decode).

A worker that dies (killed, out of memory) fails every call waiting on it with
:class:`WorkerGone` (one line); the next call starts another. :meth:`DedupWorker.stop` (the station
closing: :func:`stop_scans`) asks the worker to leave, waits a moment, then ends it and
the processes it started (it leads a process group of its own); a worker whose station died
without stopping it leaves by itself when its channel closes.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import multiprocessing
import os
import pickle
import resource
import signal
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from curator.engine import memory
from curator.engine.dedup.families import find_families
from curator.engine.dedup.index import DedupIndex, Family, ScanStopped, held_index
from curator.engine.errors import CuratorError
from curator.engine.policy.actor import OPERATOR

if TYPE_CHECKING:
    from curator.engine.corpus.store import ChangeSet
    from curator.engine.wiki import Wiki

#: Families per message from the worker (one unpickle each, a few milliseconds).
CHUNK = 200
#: Seconds waited for a thread or a process to end (and for an ended worker, after a signal).
STOP_WAIT = 1.0
#: Seconds a stopped worker gets to leave by itself (its scan stops at its next step, its
#: shingling processes shut down) before its process group is ended.
LEAVE_WAIT = 3.0
_STOP = 0  # the call id of "leave" (calls are numbered from 1)
#: Seconds between looks at whether a scan in a process of its own should stop (:func:`_scan_apart`).
SCAN_POLL = 0.1
#: Changed pages the station names to the worker at most (more: it compares every page).
PATHS_MAX = 2000


class WorkerGone(CuratorError):
    """The dedup worker process ended before it answered (see the module docstring)."""


class _Call:
    """One call waiting for the worker's answer."""

    __slots__ = ("conn", "done", "error", "parts", "value")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.parts: list[Any] = []
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()


def _ended(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


class DedupWorker:
    """The wiki's dedup index in a worker process, for the operator (see the module docstring)."""

    def __init__(self, root: Path | str, niceness: int = 0, state: Callable[[], bytes | None] | None = None) -> None:
        self.root = str(root)
        #: The state of the pages as the station sees them (its store's :attr:`~curator.engine.corpus.store.PageStore.state`),
        #: sent with every call: the worker refreshes its own store when it moved (or is unknown).
        self._state = state or (lambda: None)
        #: The pages the station saw change since the last call (:meth:`note`), sent with the next
        #: one so the worker checks only those; None: not known (then it compares every page).
        self._changed: set[str] | None = None
        #: The CPU priority drop of the worker process (and of the processes its scans start).
        self.niceness = niceness
        self._lock = threading.Lock()  # the process, its channel and the calls waiting
        #: held around every wait for, and look at, the process's end: two threads waiting for one
        #: child race (one reaps it; until that thread records the exit code, the other's waitpid
        #: fails and multiprocessing reports the child alive) -- the reader's wait and stop()'s did,
        #: and a stopped worker was once reported still running
        self._reaping = threading.Lock()
        self._process: Any = None  # multiprocessing's process object
        self._conn: Connection | None = None
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self._stopped = False
        #: How many worker processes were started (a death and a retry start another).
        self.starts = 0
        _LIVE.add(self)

    def note(self, changes: ChangeSet) -> None:
        """The station's pages changed (its wiki's ``changed`` signal)."""
        with self._lock:
            if self._changed is not None:
                if changes.attachments or len(self._changed) + len(changes.paths) > PATHS_MAX:
                    self._changed = None
                else:
                    self._changed.update(changes.paths)

    # --- the calls --------------------------------------------------------------------------
    def families(self, folder: str | None = None, signal: str | None = None) -> list[Family]:
        """The operator's duplicate families (:func:`~curator.engine.dedup.families.find_families`)."""
        call = self._call("families", folder=folder, signal=signal)
        return [family for part in call.parts for family in pickle.loads(part)]

    def count(self, strength: str | None = None) -> int:
        """The operator's family count (:func:`~curator.engine.dedup.families.family_count`)."""
        return int(self._call("count", strength=strength).value)

    def build(self) -> None:
        """Make the worker's index hold every page's features (after keeping the answer of the
        last change for the next open): later changes are followed page by page."""
        self._call("build")

    def keep(self) -> None:
        """Keep the worker's last result for the next open, if it is not kept yet."""
        self._call("keep")

    def status(self, paths: bool = False) -> dict[str, Any]:
        """The worker's pid, its index's state (scanned, answering from a kept result, building,
        how many pages' features it holds, or with ``paths`` which) and its memory (bytes resident
        now and at the peak, and the peak of the processes its scans started)."""
        out: dict[str, Any] = self._call("status", paths=paths).value
        return out

    def start(self) -> None:
        """Start the worker process now, if none runs (the station, while it loads the wiki: the
        worker's own start-up, Python and the engine's imports, is then over by the first call)."""
        with self._lock:
            if not self._stopped and self._conn is None:
                self._start()

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None: none runs)."""
        with self._lock:
            process = self._process
        if process is None:
            return None
        with self._reaping:
            return process.pid if process.is_alive() else None

    def _call(self, op: str, **args: Any) -> _Call:
        with self._lock:
            if self._stopped:
                raise ScanStopped("the duplicate finder was stopped (the wiki is closing)")
            conn = self._conn if self._conn is not None else self._start()
            call_id = next(self._ids)
            call = self._calls[call_id] = _Call(conn)
            changed, self._changed = self._changed, set()
            try:
                # (the changes noted, then the state: a state that moved past them is walked in full)
                conn.send_bytes(pickle.dumps((call_id, op, args, (self._state(), changed))))
            except OSError:
                self._calls.pop(call_id, None)
                raise WorkerGone("the duplicate finder's process has ended; try again") from None
        call.done.wait()
        if call.error is not None:
            raise call.error
        return call

    # --- the process --------------------------------------------------------------------------
    def _start(self) -> Connection:
        """Start a worker (with the lock held)."""
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=serve, args=(theirs, self.root, self.niceness),
                                  name="curator-dedup", daemon=False)
        try:
            process.start()
        except (OSError, RuntimeError) as exc:
            ours.close()
            raise WorkerGone(f"cannot start the duplicate finder's process: {exc}") from exc
        finally:
            theirs.close()
        self._process, self._conn = process, ours
        self._changed = None  # (a new worker compares every page first)
        self.starts += 1
        threading.Thread(target=self._read, args=(ours, process), name="curator-dedup-reader", daemon=True).start()
        return ours

    def _read(self, conn: Connection, process: Any) -> None:
        """Hand the worker's answers to the calls waiting for them, until its channel closes."""
        while True:
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                break
            call_id, kind, value = pickle.loads(data)
            with self._lock:
                call = self._calls.get(call_id)
                if call is not None and kind != "part":
                    del self._calls[call_id]
            if call is None:
                continue
            if kind == "part":
                call.parts.append(value)  # (pickled apart: unpickled by the caller, chunk by chunk)
                continue
            if kind == "error":
                call.error = CuratorError(value)
            elif kind == "stopped":
                call.error = ScanStopped(value)
            else:
                call.value = value
            call.done.set()
        with self._reaping:
            process.join(STOP_WAIT)
            code = process.exitcode
        conn.close()
        with self._lock:
            if self._conn is conn:
                self._conn = self._process = None
            waiting = [(i, c) for i, c in self._calls.items() if c.conn is conn]
            for i, _c in waiting:
                del self._calls[i]
            stopped = self._stopped
        why = ("the duplicate finder was stopped (the wiki is closing)" if stopped else
               f"the duplicate finder's process ended unexpectedly ({_ended(code)}); "
               "it starts again when asked")
        for _i, call in waiting:
            call.error = ScanStopped(why) if stopped else WorkerGone(why)
            call.done.set()

    def stop(self) -> None:
        """Stop the worker (the station closing): asked to leave, then ended with the processes
        it started. Every later call raises :class:`~curator.engine.dedup.index.ScanStopped`."""
        with self._lock:
            self._stopped = True
            conn, process = self._conn, self._process
        if conn is None or process is None:
            return
        with suppress(OSError, ValueError):
            conn.send_bytes(pickle.dumps((_STOP, "stop", {}, (None, None))))
        with self._reaping:
            process.join(LEAVE_WAIT)
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if process.exitcode is not None:
                    break
                try:
                    os.killpg(process.pid, sig)  # (the worker leads its own group: its scan's workers too)
                except OSError:
                    with suppress(OSError):
                        os.kill(process.pid, sig)
                process.join(STOP_WAIT)


_LIVE: weakref.WeakSet[DedupWorker] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    """No worker outlives its station (multiprocessing's own exit handler would wait for them)."""
    for worker in list(_LIVE):
        worker.stop()


def worker_for(wiki: Wiki, niceness: int = 0) -> DedupWorker:
    """The wiki's dedup worker (held by its session; started by its first call)."""
    session = wiki.session
    with session.services_lock:
        worker = session.peek(DedupWorker)
        if worker is None:
            store = wiki.store
            worker = session.service(DedupWorker, lambda: DedupWorker(wiki.root, niceness, lambda: store.state))
            wiki.changed.connect(worker.note)
    return worker


# --- the worker process ---------------------------------------------------------------------------

def _memory() -> dict[str, int]:
    from curator.engine import memory

    return {"rss": memory.resident_bytes(), "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "children_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}


#: The station's background niceness (set by :func:`serve`), and the niceness each kind of call
#: last ran at (:func:`_background`; in :meth:`DedupWorker.status`).
_NICENESS = [0]
_NICED: dict[str, int] = {}


def _background(op: str) -> None:
    """Lower the calling thread (and the processes it starts: a scan's shingling workers) to the
    station's background niceness: a scan or a build, never a short answer the operator waits
    for. (Linux keeps a niceness per thread; elsewhere it lowers the whole worker.)"""
    if _NICENESS[0] > 0 and hasattr(os, "nice"):
        with suppress(OSError):
            if os.getpriority(os.PRIO_PROCESS, 0) < _NICENESS[0]:
                os.nice(_NICENESS[0])
            _NICED[op] = os.getpriority(os.PRIO_PROCESS, 0)


def _build(wiki: Wiki) -> None:
    from curator.engine.dedup.families import keep_result
    from curator.engine.dedup.index import index_for

    _background("build")
    keep_result(wiki)  # (the answer after a change: kept for the next open)
    index_for(wiki, full=True)


def _keep(wiki: Wiki) -> None:
    from curator.engine.dedup.families import keep_result

    _background("keep")
    keep_result(wiki)


def _may_scan(wiki: Wiki) -> bool:
    """Whether answering may take a full scan: the index holds no page's features, and no result
    kept for the pages as they are answers (else the answer is short: the operator waits for it)."""
    from curator.engine.dedup import cache as dedup_cache

    index = wiki.session.peek(DedupIndex)
    store = wiki.store
    if index is not None and ((index.scanned and index.kept is None) or index.kept == store.state):
        return False  # (a change is followed page by page; or the kept result answers)
    found = store.derived_since(dedup_cache.NAME) if store.state is not None else None
    return found is None or bool(found[1])


def _count(wiki: Wiki, strength: str | None = None) -> int:
    from curator.engine.dedup.families import family_count

    if _may_scan(wiki):
        _background("count")
    return family_count(wiki, OPERATOR, strength)


class _Answered:
    """The last families answered (pickled in chunks of :data:`CHUNK`) and what they depend on:
    the pages (the worker's store state: every answer is exactly a full scan's of them), the
    attachment files (inbound counts), the dismissed pairs and the filter. Health's count warms
    it (:func:`_warm`), so the Duplicates queue's first call only sends it."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    key: ClassVar[tuple[Any, ...] | None] = None
    parts: ClassVar[list[bytes]] = []


def _families(wiki: Wiki, folder: str | None = None, signal: str | None = None) -> list[bytes]:
    from curator.engine.dedup import cache as dedup_cache
    from curator.engine.dedup.index import dismissed_pairs

    if _may_scan(wiki):
        _background("families")
    with _Answered.lock:
        store = wiki.store
        key = (store.state, store.attachments_key(), dedup_cache.dismissed_digest(dismissed_pairs(wiki)),
               folder, signal)
        if key[0] is None or key != _Answered.key:
            out = find_families(wiki, OPERATOR, folder, signal)
            parts = [pickle.dumps(out[i:i + CHUNK], protocol=pickle.HIGHEST_PROTOCOL)
                     for i in range(0, len(out), CHUNK)]
            _Answered.key, _Answered.parts = (key if store.state == key[0] else None), parts
        return _Answered.parts


def _status(wiki: Wiki, paths: bool = False) -> dict[str, Any]:
    index = wiki.session.peek(DedupIndex)
    features = sorted(index.features) if index is not None else []
    return {"pid": os.getpid(), "scanned": bool(index is not None and index.scanned),
            "kept": bool(index is not None and index.kept is not None),
            "building": bool(index is not None and index._building is not None),
            "features": features if paths else len(features), "niced": dict(_NICED), **_memory()}


def _warm(wiki: Wiki) -> None:
    """After the count (Health's, at open): what the Duplicates queue will ask for next, made
    ready meanwhile (the index answering, from the kept result or a scan, and its families)."""
    from curator.engine.dedup.index import index_for

    index = index_for(wiki)
    if index.kept is None:
        _background("warm")
    _families(wiki)


_OPS: dict[str, Callable[..., Any]] = {
    "families": _families, "count": _count, "build": _build, "keep": _keep, "status": _status,
}


def serve(conn: Connection, root: str, niceness: int) -> None:
    """The worker process: answer the station's calls, each on a thread of its own (a build
    runs while families are asked for), until the station says stop or its channel closes."""
    with suppress(OSError):
        os.setpgrp()  # (the station ends this group: the worker and its scan's processes)
    with suppress(OSError, AttributeError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a Ctrl-C is the station's to handle)
    _NICENESS[0] = niceness
    from curator.engine.wiki import Wiki

    wiki = Wiki(root)
    held_index(wiki).scan_apart = functools.partial(_scan_apart, root)
    send = threading.Lock()
    seen = _Seen()
    threads: list[threading.Thread] = []
    try:
        while True:
            try:
                call_id, op, args, state = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                break
            if call_id == _STOP:
                break
            thread = threading.Thread(target=_answer, args=(conn, send, wiki, seen, state, call_id, op, args),
                                      daemon=True)
            thread.start()
            threads = [t for t in threads if t.is_alive()] + [thread]
    finally:
        stop_scans(wiki)
        for thread in threads:
            thread.join(STOP_WAIT)
        if not any(t.is_alive() for t in threads):
            wiki.close()


def _scan_apart(root: str, stop: threading.Event) -> bool:
    """A first scan of the worker's pages, in a one-shot process of its own that keeps the result
    and basis the worker then loads (:attr:`DedupIndex.scan_apart`): the scan's peak leaves with
    that process, where kept in the worker it stayed for as long as the station ran. Started from
    the calling thread (at its background niceness) and in the worker's process group (the
    station ends it with the worker); ended when ``stop`` is set. Whether it did its work."""
    process = multiprocessing.get_context("spawn").Process(target=_scan_and_keep, args=(root,),
                                                           name="curator-dedup-scan", daemon=False)
    try:
        process.start()
    except (OSError, RuntimeError):
        return False  # (the worker scans itself)
    while process.is_alive() and not stop.is_set():
        process.join(SCAN_POLL)
    if process.is_alive():
        process.terminate()
        process.join(STOP_WAIT)
        return False
    return process.exitcode == 0


def _scan_and_keep(root: str) -> None:
    """The process of :func:`_scan_apart`: the operator's families as ``curator dedup --groups``
    finds them, which keeps the scan's result, its families and its basis for the pages."""
    from curator.engine.wiki import Wiki

    with suppress(OSError, AttributeError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # (as the worker: a Ctrl-C is the station's)
    memory.lean_heap()  # (its peak is beside the station's: freed blocks given back as it goes)
    wiki = Wiki(root)
    try:
        find_families(wiki, OPERATOR)
    finally:
        wiki.close()


class _Seen:
    """The station's page state the worker's store was last refreshed for."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state: bytes | None = None

    def refresh(self, wiki: Wiki, seen: tuple[bytes | None, set[str] | None]) -> None:
        """Bring the worker's pages up to date with the station's: only the pages it saw change
        since the last call (``seen``: its state, and those pages, or None when not known) when
        it names them, every page when its state moved otherwise (or is unknown); nothing when
        neither moved (an answer is then of pages as new as the station's: a change the station
        has seen moved its state)."""
        state, changed = seen
        with self.lock:
            if state is None or self.state is None or (state != self.state and not changed) or changed is None:
                wiki.refresh()
            elif changed:
                wiki.refresh(sorted(changed))
            self.state = state


def _answer(conn: Connection, send: threading.Lock, wiki: Wiki, seen: _Seen,
            state: tuple[bytes | None, set[str] | None], call_id: int, op: str, args: dict[str, Any]) -> None:
    replies: list[tuple[int, str, Any]] = []
    value: Any = None
    try:
        seen.refresh(wiki, state)  # (never an answer of older pages than the station's)
        value = _OPS[op](wiki, **args)
        if op == "families":
            replies = [(call_id, "part", part) for part in value]
            value = None
        replies.append((call_id, "done", value))
    except ScanStopped as exc:
        replies = [(call_id, "stopped", str(exc))]
    except CuratorError as exc:
        replies = [(call_id, "error", str(exc))]
    except Exception as exc:  # (told to the station in one line, never a traceback)
        replies = [(call_id, "error", f"the duplicate finder failed: {type(exc).__name__}: {exc}")]
    with suppress(OSError, ValueError):
        for reply in replies:
            data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
            with send:
                conn.send_bytes(data)
    if op == "count" and replies[-1][1] == "done":
        with suppress(Exception):  # (only ahead of time: the queue's own call says what fails)
            _warm(wiki)
    del replies, value
    memory.trim_if_free()  # (what the answer made and let go of: given back, not held for the station's life)


def stop_scans(wiki: Wiki) -> None:
    """Abandon the wiki's dedup scan in progress, if any, and stop its dedup worker process
    (:class:`DedupWorker`), if one runs (the station closing)."""
    session = wiki.session
    with session.services_lock:
        index, worker = session.peek(DedupIndex), session.peek(DedupWorker)
    if index is not None:
        index.stop()
    if worker is not None:
        worker.stop()
