"""Bulk work in worker processes, one per core (a cold index parses 32,000 pages this way).

:func:`map_chunks` splits a list of page files into chunks (big files spread over all of them),
runs a module-level function on each chunk in a process pool and yields the results in order as
they arrive, so the caller writes rows while the workers still parse. Workers are forked when the
calling process runs a single thread and is small (the CLI at its start: cheap, nothing to
re-import) and spawned otherwise (the station and the MCP server run threads, and forking a
threaded process is unsafe; a big process's forked workers come to copy its pages, see
:data:`FORK_MAX_MB`). When no
pool can be started (a sandbox without process support, a frozen build without multiprocessing
support) it answers ``None`` and the caller does the work itself.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from curator.engine import memory
from curator.engine.corpus.walker import PageFile, cores

T = TypeVar("T")
#: Files per chunk: small enough to balance two workers, big enough to amortise pickling.
CHUNK_FILES = 500


def workers() -> int:
    """How many worker processes to use: the cores this process may run on."""
    return cores()


#: Resident MB above which a process spawns its workers instead of forking them. A forked worker
#: shares its parent's pages only until either touches them, and Python's reference counts touch
#: every object read: the shingling workers of ``health`` on a wiki it had never seen, forked from
#: a 390 MB process, came to hold 150 MB of it apart (32,000 pages: 860 MB in all, 790 spawned,
#: in the same time). A first dedup scan's, forked from its 240 MB process, came to 133-149 MB
#: each (PSS), spawned to 70-80 MB, in the same time (within the runs' noise). A command starts
#: its index's parse workers at 50-60 MB: still forked.
FORK_MAX_MB = 128


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    if ("fork" in methods and threading.active_count() == 1 and not getattr(sys, "frozen", False)
            and memory.resident_mb() <= FORK_MAX_MB):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def chunks(files: Sequence[PageFile], size: int = CHUNK_FILES) -> list[list[PageFile]]:
    """``files`` in chunks of about ``size``, dealt round-robin by size so each chunk gets its
    share of the big pages (a 2 MB index page must not make one chunk the straggler)."""
    count = max(1, (len(files) + size - 1) // size)
    ordered = sorted(files, key=lambda f: f.size, reverse=True)
    out: list[list[PageFile]] = [[] for _ in range(count)]
    for i, f in enumerate(ordered):
        out[i % count].append(f)
    return out


def map_chunks(fn: Callable[..., T], root: str, files: Sequence[PageFile],
               *args: Any, niceness: int = 0, ahead: int | None = None) -> Iterator[T] | None:
    """``fn(root, chunk, *args)`` for every chunk of ``files`` in worker processes, in order.

    ``niceness`` above 0 lowers the workers' CPU priority by that much (work in the background
    of the station: the cores go to the GUI thread first, and to the workers whenever it idles).
    ``ahead``: at most that many chunks are given to the workers beyond those the caller has
    taken (a caller slower than the workers, the search index's bulk insert, must not find the
    rest of the wiki's text waiting for it in memory); None: every chunk at once (a caller that
    does other work first and then takes them all). A result is let go once it was taken.

    None when there is a single core or no pool can be started: run ``fn`` in process then.
    """
    n = workers()
    if n < 2 or len(files) < 2:
        return None
    try:
        if niceness > 0 and hasattr(os, "nice"):
            pool = ProcessPoolExecutor(max_workers=n, mp_context=_context(), initializer=os.nice,
                                       initargs=(niceness,))
        else:
            pool = ProcessPoolExecutor(max_workers=n, mp_context=_context())
    except (OSError, ValueError, NotImplementedError):
        return None
    parts = chunks(files)
    first = len(parts) if ahead is None else min(len(parts), max(1, ahead))
    try:
        futures: deque[Future[T] | None] = deque(pool.submit(fn, root, part, *args) for part in parts[:first])
    except (OSError, RuntimeError, BrokenProcessPool):
        pool.shutdown(wait=False, cancel_futures=True)
        return None

    def results() -> Iterator[T]:
        try:
            for i in range(len(parts)):
                future = futures.popleft()  # (taken: its result is the caller's alone)
                if (more := i + len(futures) + 1) < len(parts):
                    try:
                        futures.append(pool.submit(fn, root, parts[more], *args))
                    except (OSError, RuntimeError, BrokenProcessPool):
                        futures.append(None)  # (done here when its turn comes)
                try:
                    result = future.result() if future is not None else fn(root, parts[i], *args)
                except (OSError, BrokenProcessPool):
                    # A worker died (killed, out of memory): this chunk is done here instead.
                    result = fn(root, parts[i], *args)
                del future
                yield result
                del result
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    return results()
