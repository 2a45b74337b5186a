"""How a long-lived process (the station, the MCP server) gives freed memory back.

glibc serves an allocation from its heap unless it is bigger than a threshold, and it raises that
threshold (up to 32 MB) each time a big block is freed. numpy's temporaries of a fact-index query
are a few MB each: after the first ones they came from the heap, and a small object allocated
meanwhile pinned the heap's top, so the station held ~60 MB it had freed (measured at 32,000
pages: 216 MB grown, 155 MB once trimmed). A fixed threshold keeps such temporaries mapped on
their own, returned whole when freed.

Such a process also marks itself as long-lived (:func:`runs_for_long`): a heavy one-off pass
whose memory it would keep (a first whole-wiki run of the conflict queue) then runs in a process
of its own. A one-shot command needs neither: its memory goes back when it ends.

What a pass made of many small blocks and freed stays in the heap all the same: the station gives
it back after each background task (:func:`trim_when_idle`), the dedup worker after each answer
(:func:`trim_if_free`), and a one-shot process whose peak sits beside the station's (the worker's
first scan) runs on a :func:`lean_heap`.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: Allocations from this size are mapped on their own (glibc's first default, before it adapts).
MMAP_THRESHOLD = 256 * 1024
_M_MMAP_THRESHOLD = -3  # (mallopt's parameter numbers, malloc.h)
_M_ARENA_MAX = -8


_LONG_LIVED = False


def runs_for_long() -> bool:
    """Whether this process said it runs for long (:func:`return_freed_memory`)."""
    return _LONG_LIVED


def return_freed_memory() -> bool:
    """Mark this process as long-lived and fix the allocator's mapping threshold (glibc only;
    elsewhere nothing more to do). Whether the threshold was set."""
    global _LONG_LIVED
    _LONG_LIVED = True
    return _glibc("mallopt", _M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def lean_heap() -> bool:
    """For a one-shot process that runs beside a station (the dedup worker's first scan, its peak
    added to the station's): big blocks mapped on their own, as :func:`return_freed_memory`
    does (given back when freed, not kept in a heap a small block pins), and one heap for all its
    threads (each thread's own heap kept what its numpy temporaries freed: 215 MB of the heap was
    free at a scan's peak). The scan's peak at 32,000 pages: 580-605 -> 535-540 MB, for about 10 %
    more time (big temporaries mapped afresh each time): background work beside a station, not a
    command's (which keeps glibc's defaults). Whether both were set."""
    return _glibc("mallopt", _M_MMAP_THRESHOLD, MMAP_THRESHOLD) and _glibc("mallopt", _M_ARENA_MAX, 1)


def trim() -> bool:
    """Give back to the system the heap memory that is free now (glibc's ``malloc_trim``: every
    free page, not only those at the heap's top). For after a pass that freed many small blocks
    at once: a scan's every page's shingles (114 MB in 230,000 blocks at 32,000 pages) stayed
    resident, free but scattered, and the blocks made next grew the heap past them. Whether
    anything was given back (False elsewhere than glibc)."""
    return _glibc("malloc_trim", 0)


#: Free heap (MB) from which :func:`trim_when_idle` gives it back: below it a trim is not worth
#: walking the heap for (a few MB free are the heap's ordinary slack, soon allocated again).
TRIM_FREE_MB = 32


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (malloc.h, glibc 2.33 and later)."""

    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                 "fordblks", "keepcost")]


def free_heap_bytes() -> int | None:
    """The bytes the heap holds free (freed by the program, not given back to the system: glibc's
    ``mallinfo2``), or None where that cannot be asked (another system or C library, an older
    glibc). A few milliseconds on a fragmented heap of hundreds of MB."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return None
    call.restype = _MallInfo2
    info = call()
    return int(info.fordblks + info.fsmblks)


def trim_when_idle(free_mb: int = TRIM_FREE_MB) -> bool:
    """After a long-lived process's pass (each of a station's background tasks, on its thread):
    give the heap's free memory back when it is ``free_mb`` or more. The fixed mapping threshold
    (:func:`return_freed_memory`) keeps big blocks out of the heap, but a pass that made and freed
    many small objects (a cold open decodes every page's record: 70 MB of them free after it at
    32,000 pages) left them resident for as long as the station ran. A one-shot process gives
    everything back when it ends: nothing done there. Whether memory was given back."""
    return _LONG_LIVED and trim_if_free(free_mb)


def trim_if_free(free_mb: int = TRIM_FREE_MB) -> bool:
    """:func:`trim` when ``free_mb`` or more of the heap is free (:func:`free_heap_bytes`), in a
    process that serves another for as long as it runs without being marked long-lived (the
    station's dedup worker). Whether memory was given back."""
    free = free_heap_bytes()
    if free is None or free < free_mb << 20:
        return False
    return trim()


def _glibc(name: str, *args: int) -> bool:
    """glibc's allocator call ``name(*args)``, whether it answered non-zero (False on another
    system or C library: musl has neither mallopt nor malloc_trim)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(getattr(ctypes.CDLL("libc.so.6"), name)(*args))
    except (OSError, AttributeError):
        return False


def resident_bytes() -> int:
    """This process's resident memory in bytes (0 where /proc cannot tell: not Linux)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def resident_mb() -> float:
    """This process's resident memory in MB (0 where /proc cannot tell: not Linux)."""
    return resident_bytes() / (1 << 20)
