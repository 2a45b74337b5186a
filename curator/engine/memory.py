"""How a long-lived process (the station, the MCP server) gives freed memory back.

glibc serves an allocation from its heap unless it is bigger than a threshold, and it raises that
threshold (up to 32 MB) each time a big block is freed. numpy's temporaries of a fact-index query
are a few MB each: after the first ones they came from the heap, and a small object allocated
meanwhile pinned the heap's top, so the station held ~60 MB it had freed (measured at 32,000
pages: 216 MB grown, 155 MB once trimmed). A fixed threshold keeps such temporaries mapped on
their own, returned whole when freed.
"""

from __future__ import annotations

import ctypes
import sys

#: Allocations from this size are mapped on their own (glibc's first default, before it adapts).
MMAP_THRESHOLD = 256 * 1024
_M_MMAP_THRESHOLD = -3  # (mallopt's parameter number, malloc.h)


def return_freed_memory() -> bool:
    """Fix the allocator's mapping threshold (glibc only; elsewhere nothing to do). Whether it
    was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):  # another C library (musl has no mallopt)
        return False
