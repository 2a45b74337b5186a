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
"""

from __future__ import annotations

import ctypes
import os
import sys

#: Allocations from this size are mapped on their own (glibc's first default, before it adapts).
MMAP_THRESHOLD = 256 * 1024
_M_MMAP_THRESHOLD = -3  # (mallopt's parameter number, malloc.h)


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


def trim() -> bool:
    """Give back to the system the heap memory that is free now (glibc's ``malloc_trim``: every
    free page, not only those at the heap's top). For after a pass that freed many small blocks
    at once: a scan's every page's shingles (114 MB in 230,000 blocks at 32,000 pages) stayed
    resident, free but scattered, and the blocks made next grew the heap past them. Whether
    anything was given back (False elsewhere than glibc)."""
    return _glibc("malloc_trim", 0)


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
