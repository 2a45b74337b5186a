"""The per-wiki exclusive write lock (docs/design.md §4.4, §5).

One lock file, ``.curator/write.lock``, held with ``filelock`` (an OS-level ``flock`` on POSIX, so
a killed holder releases it automatically). Every action of every process (GUI, CLI, MCP) takes it.

Patience is 3.75 s (docs/design.md §4.4; "25 tries 150 ms apart" would be one way); we poll every 15 ms
within the same 3.75 s because under contention a slow poller is starved by holders that release
and re-take the lock back to back (measured: with 8 busy appenders a 150 ms poller regularly ran
out of patience while the lock was free for most of its wait).

The lock is re-entrant per thread for the same wiki (a nested :class:`WikiLock` in the holding
thread is free), and exclusive across threads and processes.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from curator.engine.errors import CuratorError

LOCK_NAME = "write.lock"
PATIENCE_S = 3.75
POLL_S = 0.015


class Locked(CuratorError):
    """Another writer held the wiki's lock for longer than the patience allows."""


class _Held(threading.local):
    depth: dict[str, int]

    def __init__(self) -> None:
        self.depth = {}


_held = _Held()
_registry_lock = threading.Lock()
#: One in-process lock per lock FILE (not per Wiki object): two Wiki objects opened on the same
#: root in one process must exclude each other exactly as two processes do.
_thread_locks: dict[str, threading.Lock] = {}


def _thread_lock(key: str) -> threading.Lock:
    # flock on separate descriptors already excludes threads on Linux, but not on every platform
    # filelock supports, so threads of one process also queue on a plain lock.
    with _registry_lock:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


class WikiLock:
    """``with WikiLock(state_dir): ...`` holds the wiki's write lock or raises :class:`Locked`."""

    def __init__(self, state_dir: Path, patience: float = PATIENCE_S, poll: float = POLL_S) -> None:
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / LOCK_NAME
        self.key = str(self.path.resolve()) if self.path.parent.exists() else str(self.path)
        self.patience = patience
        self.poll = poll
        self._file: FileLock | None = None
        self._thread: threading.Lock | None = None

    @property
    def held(self) -> bool:
        """Whether the current thread holds this wiki's lock."""
        return _held.depth.get(self.key, 0) > 0

    def acquire(self) -> None:
        depth = _held.depth.get(self.key, 0)
        if depth:
            _held.depth[self.key] = depth + 1
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.key = str(self.path.resolve())
        deadline = time.monotonic() + self.patience
        thread_lock = _thread_lock(self.key)
        if not thread_lock.acquire(timeout=self.patience):
            raise Locked(self._message())
        try:
            file_lock = FileLock(str(self.path), thread_local=False)
            file_lock.acquire(timeout=max(0.0, deadline - time.monotonic()), poll_interval=self.poll)
        except Timeout:
            thread_lock.release()
            raise Locked(self._message()) from None
        except BaseException:
            thread_lock.release()
            raise
        self._file, self._thread = file_lock, thread_lock
        _held.depth[self.key] = 1

    def release(self) -> None:
        depth = _held.depth.get(self.key, 0)
        if depth > 1:
            _held.depth[self.key] = depth - 1
            return
        if depth == 0:
            return
        del _held.depth[self.key]
        file_lock, thread_lock = self._file, self._thread
        self._file = self._thread = None
        try:
            if file_lock is not None:
                file_lock.release()
        finally:
            if thread_lock is not None:
                thread_lock.release()

    def _message(self) -> str:
        return (f"the wiki is busy: another writer held its lock for more than {self.patience:g} s; "
                "try again")

    def __enter__(self) -> WikiLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
