"""Work a dedup scan hands to a forked process of its own (docs/design.md §9, §12).

Once a full scan has every page's features, its title and tag pairs need no body, and the
families' inbound counts only the link index; in one process they ran one after the other with
the slugs and the body comparison (counts, bands, containment: one core busy, the other
idle), and a thread beside it gained nothing (rapidfuzz's ``cdist`` and the Python name work
hold the interpreter lock). So :func:`fork_side` forks the scanning process then (the features
are inherited: nothing is sent to the child) and runs that work in the child while the scanning
process compares the bodies; the child sends back only its answers (pairs, counts), one message
each, in the order its work produces them (:meth:`Side.take`).

Forking is safe only in a process running a single thread (the CLI; :func:`may_fork`): elsewhere
(the station, the MCP server: threads), and where processes cannot be forked, :func:`fork_side`
answers None and the caller does the work itself, as it does when the child fails or dies
(:meth:`Side.take` is None): the answer is the same either way, only where it was computed differs.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import threading
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Any

#: Seconds waited for a child told to end (:meth:`Side.close`).
_END_WAIT = 1.0

Send = Callable[[Any], None]


class _Failed:
    """What a child whose work raised sends instead of its next answer."""

    def __init__(self, why: str) -> None:
        self.why = why


class Side:
    """A forked child doing a scan's side work; its answers taken in order (:meth:`take`)."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self._process = process
        self._conn: Connection | None = conn

    def take(self) -> Any:
        """The child's next answer (waiting for it); None once it failed, died or was closed
        (then the caller computes it itself)."""
        conn = self._conn
        if conn is None:
            return None
        try:
            value = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError, pickle.UnpicklingError):
            value = None
        if value is None or isinstance(value, _Failed):
            self.close()
            return None
        return value

    def close(self) -> None:
        """End the child (done, or no longer wanted: a scan stopped or failed)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        process = self._process
        if process.exitcode is None:
            with suppress(OSError, ValueError):
                process.kill()
        process.join(_END_WAIT)


def may_fork() -> bool:
    """Whether this process may fork a child for side work: it runs a single thread (forking a
    threaded process is unsafe) and is not a frozen build."""
    return ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and not getattr(sys, "frozen", False))


def fork_side(work: Callable[[Send], None]) -> Side | None:
    """Run ``work(send)`` in a forked child; each ``send(value)`` is one answer for
    :meth:`Side.take`. None when this process may not fork (:func:`may_fork`) or the child
    cannot be started."""
    if not may_fork():
        return None
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(work, theirs), name="curator-dedup-side", daemon=True)
    try:
        process.start()
    except (OSError, RuntimeError):
        ours.close()
        theirs.close()
        return None
    theirs.close()
    return Side(process, ours)


def _child(work: Callable[[Send], None], conn: Connection) -> None:
    def send(value: Any) -> None:
        conn.send_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    try:
        work(send)
    except Exception as exc:  # (the parent does the work itself; it needs no traceback)
        with suppress(OSError, ValueError):
            send(_Failed(f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
