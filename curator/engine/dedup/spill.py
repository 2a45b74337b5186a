"""A scan's every-page shingles in a file beside the wiki's state, not in memory (docs/design.md
§9, "A scan's memory").

A full scan reads every page's shingles twice: once to count on how many pages each occurs, once
more to keep each page's listed ones (those a basis lists) and its body. Held in memory between the
two, they were most of a scan's peak: 114 MB at 32,000 real-shaped pages, 450 MB at 100,000.
:class:`Spill` writes each page's as it arrives (from the page store's bulk parse, or the scan's
own shingling workers) to a temporary file, unlinked from the start, and hands them back as views
of the file's mapping. :meth:`Spill.release` drops from this process's memory what a pass has read
of the mapping (the pages stay in the system's file cache, clean and reclaimable), so a pass over
every page holds one block of pages at a time. A scan whose state folder cannot be written keeps
the shingles in memory as before (:func:`open_spill` answers None).
"""

from __future__ import annotations

import mmap
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np


class Spilled(NamedTuple):
    """Where one page's shingles are in a :class:`Spill`: bytes from ``at``, ``size`` of them."""

    at: int
    size: int


class Spill:
    """An unlinked temporary file of page shingles (uint64 arrays' bytes, one after another)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._size = 0
        self._map: mmap.mmap | None = None

    def put(self, blob: bytes) -> Spilled:
        """Write one page's shingles (``blob``: their bytes); where they are."""
        self._file.write(blob)
        at, self._size = self._size, self._size + len(blob)
        return Spilled(at, len(blob))

    def view(self, spilled: Spilled) -> np.ndarray:
        """The shingles written at ``spilled``, as a read-only uint64 view of the file's mapping
        (touching it reads the file; :meth:`release` drops what was read)."""
        if not spilled.size:
            return np.zeros(0, dtype=np.uint64)
        return np.frombuffer(self._mapping(), dtype=np.uint64, count=spilled.size // 8, offset=spilled.at)

    def _mapping(self) -> mmap.mmap:
        """The file's mapping, made again once more was written than it covers (an older one
        stays while views of it do)."""
        if self._map is None or len(self._map) < self._size:
            self._file.flush()
            self._map = mmap.mmap(self._file.fileno(), self._size, access=mmap.ACCESS_READ)
        return self._map

    def release(self) -> None:
        """Drop the mapping's pages read so far from this process's resident memory."""
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            with suppress(OSError, ValueError):
                self._map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        """Close the file; the mapping goes with the last view of it."""
        self._map = None
        with suppress(OSError):
            self._file.close()


def open_spill(folder: Path) -> Spill | None:
    """A new :class:`Spill` in ``folder`` (the wiki's state folder); None where no file can be
    made there (the shingles are then held in memory)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        file = tempfile.TemporaryFile(dir=folder, prefix=".dedup-spill-")  # noqa: SIM115 (closed by Spill.close)
    except OSError:
        return None
    return Spill(file)


class SpillingByproducts(dict[str, Any]):
    """The page store's by-products of a bulk parse (:attr:`PageStore.byproducts`: path ->
    ((mtime_ns, size), :data:`~curator.engine.dedup.index.Shingles`)) with each page's shingles
    written to ``spill`` as they arrive, a :class:`Spilled` kept in their place."""

    def __init__(self, spill: Spill) -> None:
        super().__init__()
        self.spill = spill

    def __setitem__(self, path: str, value: Any) -> None:
        stamp, (blob, entries, queries) = value
        super().__setitem__(path, (stamp, (self.spill.put(blob), entries, queries)))

