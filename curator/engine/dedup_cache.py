"""The dedup index's per-page signatures on disk (``.curator/dedup-shingles.npz``), keyed by the
page's stamp (docs/design.md §9, §12).

A page's body shingles (:func:`~.dedup.shingles`: sorted unique 64-bit hashes) are what a dedup
scan spends its time on: every body read, tokenised and hashed. They depend on the page's bytes
only, so they are kept here by (mtime_ns, size), exactly as the page cache keeps its records: a
process that scans a wiki whose pages did not change reads one file and shingles nothing; a page
whose stamp moved is shingled again. Everything derived from them across pages (boilerplate
counts, bands, pairs) is recomputed by each scan, so an answer never depends on how old this file
is. The file is local, rebuildable state like the rest of ``.curator/``: a damaged, foreign or
unreadable one is ignored and written anew.

Layout (one uncompressed ``.npz``, no pickles): ``version``; ``paths`` (the page paths, UTF-8 with
surrogate escapes, joined by NUL); ``stamps`` (n x 2 int64: mtime_ns, size); ``offsets`` (n + 1
int64); ``values`` (every page's shingles, concatenated, uint64).
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

import numpy as np

CACHE_FILE = "dedup-shingles.npz"
#: Bump when the shingle rules change (tokens, hashing, what counts as the body).
CACHE_VERSION = 1

Stamp = tuple[int, int]


def _encode_paths(paths: list[str]) -> np.ndarray:
    return np.frombuffer("\0".join(paths).encode("utf-8", "surrogateescape"), dtype=np.uint8)


def _decode_paths(data: np.ndarray, count: int) -> list[str]:
    if not count:
        return []
    paths = data.tobytes().decode("utf-8", "surrogateescape").split("\0")
    if len(paths) != count:
        raise ValueError("path count does not match")
    return paths


def load(state_dir: Path) -> dict[str, tuple[Stamp, np.ndarray]]:
    """path -> (stamp, shingles) as last saved; empty when there is no usable file."""
    try:
        with np.load(state_dir / CACHE_FILE, allow_pickle=False) as data:
            if int(data["version"]) != CACHE_VERSION:
                return {}
            stamps, offsets, values = data["stamps"], data["offsets"], data["values"]
            paths = _decode_paths(data["paths"], len(stamps))
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, UnicodeError):
        return {}
    if (values.dtype != np.uint64 or stamps.shape != (len(paths), 2) or len(offsets) != len(paths) + 1
            or (len(paths) and (offsets[0] != 0 or offsets[-1] != len(values)
                                or np.any(np.diff(offsets) < 0)))):
        return {}
    bounds = offsets.tolist()
    return {p: ((int(st[0]), int(st[1])), values[bounds[i]:bounds[i + 1]])
            for i, (p, st) in enumerate(zip(paths, stamps.tolist(), strict=True))}


def save(state_dir: Path, entries: Mapping[str, tuple[Stamp, np.ndarray]]) -> bool:
    """Write ``entries`` (path -> (stamp, shingles)) atomically; False when it cannot be written
    (a read-only wiki still answers, it only shingles again next time)."""
    paths = sorted(entries)
    stamps = np.array([entries[p][0] for p in paths], dtype=np.int64).reshape(len(paths), 2)
    arrays = [entries[p][1] for p in paths]
    offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    if arrays:
        np.cumsum([len(a) for a in arrays], out=offsets[1:])
    values = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".dedup-", suffix=".npz", dir=state_dir)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, version=np.int64(CACHE_VERSION), paths=_encode_paths(paths), stamps=stamps,
                     offsets=offsets, values=values.astype(np.uint64, copy=False))
        os.replace(tmp, state_dir / CACHE_FILE)
    except OSError:
        with suppress(OSError):
            os.unlink(tmp)
        return False
    return True

