"""The dedup index's per-page signatures on disk (``.curator/dedup-shingles.npz``), keyed by the
page's stamp (docs/design.md §9, §12).

A page's body shingles (:func:`~.dedup.shingles`: sorted unique 64-bit hashes) are what a dedup
scan spends its time on: every body read, tokenised and hashed. They depend on the page's bytes
only, so they are kept here by (mtime_ns, size), exactly as the page cache keeps its records: a
process that scans a wiki whose pages did not change reads one file and shingles nothing; a page
whose stamp moved is shingled again. A page the page cache's racy-stamp guard still checks
(:meth:`~.store.PageStore.racy_digest`: written a moment before its stamp was taken, so a
same-size rewrite in the same tick keeps the stamp) is kept with the digest of the bytes its
shingles came from, and its shingles are reused only while the store's digest (or, once the store
trusts the stamp, the file read again) is that one. Everything derived from them across pages (boilerplate
counts, bands, pairs) is recomputed by each scan, so an answer never depends on how old this file
is. The file is local, rebuildable state like the rest of ``.curator/``: a damaged, foreign or
unreadable one is ignored and written anew.

Layout (one uncompressed ``.npz``, no pickles): ``version``; ``paths`` (the page paths, UTF-8 with
surrogate escapes, joined by NUL); ``stamps`` (n x 2 int64: mtime_ns, size); ``digests`` (n x 16
uint8: the racy pages' digests, zeros for a trusted stamp); ``offsets`` (n + 1 int64); ``values``
(every page's shingles, concatenated, uint64).
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
CACHE_VERSION = 2
DIGEST_SIZE = 16  # (:func:`~.store.digest`'s)
_TRUSTED = bytes(DIGEST_SIZE)

Stamp = tuple[int, int]
#: (stamp, shingles, digest of the bytes shingled: b"" when the stamp is trusted)
Entry = tuple[Stamp, np.ndarray, bytes]


def _encode_paths(paths: list[str]) -> np.ndarray:
    return np.frombuffer("\0".join(paths).encode("utf-8", "surrogateescape"), dtype=np.uint8)


def _decode_paths(data: np.ndarray, count: int) -> list[str]:
    if not count:
        return []
    paths = data.tobytes().decode("utf-8", "surrogateescape").split("\0")
    if len(paths) != count:
        raise ValueError("path count does not match")
    return paths


def load(state_dir: Path) -> dict[str, Entry]:
    """path -> (stamp, shingles, digest) as last saved; empty when there is no usable file."""
    try:
        with np.load(state_dir / CACHE_FILE, allow_pickle=False) as data:
            if int(data["version"]) != CACHE_VERSION:
                return {}
            stamps, offsets, values, digests = data["stamps"], data["offsets"], data["values"], data["digests"]
            paths = _decode_paths(data["paths"], len(stamps))
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, UnicodeError):
        return {}
    if (values.dtype != np.uint64 or stamps.shape != (len(paths), 2) or len(offsets) != len(paths) + 1
            or digests.dtype != np.uint8 or digests.shape != (len(paths), DIGEST_SIZE)
            or (len(paths) and (offsets[0] != 0 or offsets[-1] != len(values)
                                or np.any(np.diff(offsets) < 0)))):
        return {}
    bounds = offsets.tolist()
    racy = {int(i): digests[i].tobytes() for i in np.flatnonzero(digests.any(axis=1))}
    return {p: ((int(st[0]), int(st[1])), values[bounds[i]:bounds[i + 1]], racy.get(i, b""))
            for i, (p, st) in enumerate(zip(paths, stamps.tolist(), strict=True))}


def save(state_dir: Path, entries: Mapping[str, Entry]) -> bool:
    """Write ``entries`` (path -> (stamp, shingles, digest)) atomically; False when it cannot be
    written (a read-only wiki still answers, it only shingles again next time)."""
    paths = sorted(entries)
    stamps = np.array([entries[p][0] for p in paths], dtype=np.int64).reshape(len(paths), 2)
    arrays = [entries[p][1] for p in paths]
    digests = np.frombuffer(b"".join(entries[p][2] or _TRUSTED for p in paths),
                            dtype=np.uint8).reshape(len(paths), DIGEST_SIZE)
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
                     digests=digests, offsets=offsets, values=values.astype(np.uint64, copy=False))
        os.replace(tmp, state_dir / CACHE_FILE)
    except OSError:
        with suppress(OSError):
            os.unlink(tmp)
        return False
    return True
