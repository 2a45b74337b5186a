"""What a full dedup scan keeps so that a later process follows a change instead of scanning again
(docs/design.md §9).

The kept result (:mod:`curator.engine.dedup.cache`) answers only for the exact state it was made
for: after one append, a new process (``curator dedup --groups``, ``curator health``) held no
page's features and read and shingled every page again (9 s at 32,000 pages). A full scan now also
saves its **basis**: every page's name features, the tables the signals block by, and each page's
body shingles that are rare enough to matter. A new process whose pages changed since loads the
basis and re-examines only the changed pages (and those a crossed threshold moves), exactly as the
station's index follows a change page by page (:meth:`~curator.engine.dedup.index.DedupIndex.update`).

What makes it exact without every shingle of every page (113 MB at 32,000 pages): a shingle on
more than ``boilerplate_pages`` pages is boilerplate, left out of every comparison, and only its
being boilerplate matters. So each page keeps only its shingles on at most
``boilerplate_pages + FOLLOW_MARGIN`` pages (**listed**), and the others are kept once, for the
whole wiki, as **big** (counted as many). Every page changed since the basis moves a shingle's
count by at most one, so while no more than :data:`FOLLOW_MARGIN` pages changed, a big shingle is
still boilerplate and a listed one's count is exact: the comparison is a full scan's. More changed
pages than that: the next answer is a full scan, which saves a new basis (one full scan per
``FOLLOW_MARGIN`` changed pages at most).

Saved as :data:`FILE` in the wiki's state folder, its id with
:meth:`~curator.engine.corpus.store.PageStore.save_derived` as :data:`NAME` under the scan's
store state, and found with ``derived_since`` (which says which pages changed since).
Encoding (:func:`encode`): a small marshalled header, then every array's bytes, which a follow
takes as views of the file; each page's names and listed shingles in zlib chunks of
:data:`CHUNK_PAGES` pages, decompressed when one of their pages is asked for (the shingle hashes
themselves do not compress). A damaged or foreign file is ignored, and a chunk that does not
decode when read (:class:`DamagedBasis`) makes a full scan.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import marshal
import mmap
import operator
import os
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from curator.engine.errors import CuratorError

#: The name the basis's id is saved as in the page cache (under the scan's state), and the file
#: in the wiki's state folder that holds the basis.
NAME = "dedup-basis"
FILE = "dedup-basis.bin"
#: Bump when the encoding or what is kept changes.
FORMAT = 6
#: How many pages whose text at the basis cannot be read back (see the module docstring) may
#: change since a basis before the next answer scans again; also how far above the boilerplate
#: limit a page's shingles are listed.
FOLLOW_MARGIN = 8
#: How many changed pages in all a new process follows from one basis (each is read and compared
#: again by every later process until the next scan, or the new basis a long follow writes:
#: :mod:`curator.engine.dedup.compact`): more, and it scans.
FOLLOW_MAX = 256
#: A bigger wiki follows more changed pages from one basis: one in this many of its pages
#: (:func:`follow_max`). A follow costs with the pages changed, a full scan with every page (48 s
#: at 100,000 pages, 270 s at 300,000): a burst of agents' appends between two answers is followed,
#: then a new basis written (:mod:`curator.engine.dedup.compact`).
FOLLOW_SHARE = 100
#: How many pages' names (and listed shingles) one compressed chunk of the basis holds.
CHUNK_PAGES = 512
#: The count every big shingle is given (far above any limit, whatever the changes since).
BIG = 1 << 30

#: The most a saved count holds (``uint16``): a shingle on that many pages or more is read as BIG.
SATURATED = 0xFFFF


def follow_max(pages: int) -> int:
    """How many changed pages a new process follows from one basis of ``pages`` pages."""
    return max(FOLLOW_MAX, pages // FOLLOW_SHARE)


def summed_runs(keys: np.ndarray, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct value of sorted ``keys`` and the sum of ``counts`` over its run (without
    ``counts``: the run's length)."""
    if not len(keys):
        return keys, np.zeros(0, dtype=np.int64)
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if counts is None:
        return keys[starts], np.diff(np.append(starts, len(keys)))
    return keys[starts], np.add.reduceat(counts, starts)


class FollowedCounts:
    """A basis's shingle counts as a follow changes them: the saved counts (``uint16``, a view of
    the file), read where asked, with the changes kept apart by place. Made into one array of
    their own (13 million at 300,000 pages, BIG set where saturated), they cost 0.23 s of every
    follow, which changes a few hundred of them."""

    def __init__(self, saved: np.ndarray) -> None:
        self.saved = saved
        #: The changes as added (places, and what each moves by), summed by place when read (a
        #: dict entry a place cost 30 ms a follow of 130 pages).
        self._added: list[tuple[np.ndarray, np.ndarray]] = []
        self._by_place: tuple[np.ndarray, np.ndarray] | None = None  # (the changes sorted by place, made when read)

    def __len__(self) -> int:
        return len(self.saved)

    def __getitem__(self, at: np.ndarray) -> np.ndarray:
        """The counts at the places ``at`` (an array of places), as ``int64``."""
        at = np.asarray(at, dtype=np.int64)
        out: np.ndarray = self.saved[at].astype(np.int64)
        out[out == SATURATED] = BIG
        if self._added and len(out):
            places, deltas = self._changes()
            found = np.minimum(np.searchsorted(places, at), len(places) - 1)
            hit = places[found] == at
            out[hit] += deltas[found[hit]]
        return out

    def add_at(self, at: np.ndarray, delta: int) -> None:
        """Add ``delta`` to the counts at ``at`` (as ``np.add.at``: a place given twice, twice)."""
        if len(at):
            self._added.append((np.asarray(at, dtype=np.int64), np.full(len(at), delta, dtype=np.int64)))
            self._by_place = None

    def changes(self) -> tuple[np.ndarray, np.ndarray]:
        """The places whose count moved (ascending, distinct; some may have moved back) and by how much."""
        if not self._added:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return self._changes()

    def _changes(self) -> tuple[np.ndarray, np.ndarray]:
        """The changes summed by place: the places (ascending, distinct) and what each moved by."""
        if self._by_place is None:
            places = np.concatenate([at for at, _ in self._added])
            deltas = np.concatenate([moved for _, moved in self._added])
            order = np.argsort(places, kind="stable")
            self._by_place = summed_runs(places[order], deltas[order])
            self._added = [self._by_place]  # (kept summed: a later read sorts these with what came since)
        return self._by_place


#: Per page: (mtime_ns, size), folder, title_key, title_text, title_numbers, slug, slug_alnum,
#: slug_words, slug_numbers, tags (sorted): what :class:`~curator.engine.dedup.index.Features` holds besides shingles;
#: then the keys links reach the page by besides its path (its title's and aliases', sorted).
Names = tuple[tuple[int, int], str, str, str, tuple[str, ...], str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...],
              tuple[str, ...]]
#: Pages grouped by a key, as a table: the keys (sorted), where each key's pages start in the
#: members, and the members (page slots, ascending within a key).
Groups = tuple[list[Any], np.ndarray, np.ndarray]


def groups_of(table: Mapping[Any, Iterable[str]], slot: Mapping[str, int]) -> Groups:
    """A dict of key -> pages as a :data:`Groups` table (``slot``: each page's)."""
    keys = sorted(k for k, members in table.items() if members)
    members = [sorted(slot[p] for p in table[k]) for k in keys]
    starts = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(m) for m in members], out=starts[1:])
    flat = np.fromiter((i for m in members for i in m), dtype=np.int64, count=int(starts[-1]))
    return keys, starts, flat


@dataclass(slots=True)
class Basis:
    """A full scan's state, enough to follow changes from (see the module docstring).

    Laid out so that a process following one change from it takes only what that change asks
    for: every page's stamp and title at once (what tells the changed pages, what similar titles
    are found among), and the rest of a page's names, its listed shingles and the groups of a
    title or a tag only when asked (:meth:`names_of`, :meth:`rows_of`); the blocking tables
    sorted as the scan sorted them (decoding and filing every page's names, shingles and keys
    again cost 1.5 s of every follow at 100,000 pages)."""

    id: bytes  # random, made by the scan: what a kept result names as the basis it followed from
    boilerplate_pages: int
    paths: list[str]  # every page, in the scan's (sorted) order
    stamps: np.ndarray  # int64 (pages, 2), by page: the (mtime_ns, size) it was scanned at
    titles: list[str]  # by page: its title_text (the similar-title search reads them all)
    names: Chunked  # every page's :data:`Names`, marshalled one after another
    keys: np.ndarray  # uint64: every distinct shingle, sorted
    counts: np.ndarray | FollowedCounts  # on how many pages each is (at most BIG): a scan's, or as read back
    big: np.ndarray  # bool: which are big (listed on no page)
    steps: Chunked  # uint32: each page's listed shingles, as places in keys (see deltas)
    lengths: np.ndarray  # int64: how many listed shingles each page has
    band_slots: np.ndarray  # int64: the pages with a body (their MinHash bands below)
    bands: np.ndarray  # uint64 (len(band_slots), bands): each such page's band keys
    #: The blocking tables as the scan sorted them: the slug table's keys in order and the page of
    #: each, each MinHash band's (one row a band), the sampled shingles' (containment).
    slug_entries: np.ndarray  # uint64
    slug_owners: np.ndarray  # int64
    band_keys: np.ndarray  # uint64 (bands, len(band_slots)): each row sorted
    band_owners: np.ndarray  # int64 (bands, len(band_slots)): the page (slot) of each key
    sample_keys: np.ndarray  # uint64
    sample_owners: np.ndarray  # int64
    title_groups: Groups  # pages by title_key
    tag_groups: Groups  # pages by (folder, tag)
    #: The attachment files (links may resolve to them), and the distinct pages linking to each
    #: page (how many per page, which: page slots one page after another), to follow inbound
    #: counts; empty when the scan had none.
    attachments: bytes = b""
    source_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    sources: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: The commit HEAD was at when the basis was scanned ("" outside git), and a digest of each
    #: page's shingles (:func:`digest_of`): a changed page's text at the basis is read back from
    #: that commit when it was committed there (its digest tells), so that its shingles, big ones
    #: included, are taken out of the counts exactly.
    head: str = ""
    digests: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    #: The file's mapping the arrays above are views of (None: it was read whole): see :meth:`release`.
    mapping: mmap.mmap | None = field(default=None, repr=False, compare=False)
    #: Arrays given a block at a time to be written, in place of the fields of the same name (a
    #: basis made from another, :mod:`curator.engine.dedup.compact`, never holds its keys whole).
    streams: dict[str, Streamed] | None = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        """Drop the pages of the file this process has read from its resident memory. They stay
        in the system's file cache (clean, shared, reclaimable), and what reads one again maps it
        back without a disk read. Decoding checks every table whole and each follow reads the
        linking pages' whole, so without this a long-lived process (the station's dedup worker)
        kept the whole file resident: 57 MB of its 250 MB at 32,000 pages."""
        if self.mapping is not None and hasattr(mmap, "MADV_DONTNEED"):
            with suppress(OSError, ValueError):  # (a closed mapping, or a system without it)
                self.mapping.madvise(mmap.MADV_DONTNEED)

    def stamp(self, i: int) -> tuple[int, int]:
        """Page ``i``'s (mtime_ns, size) at the scan."""
        row = self.stamps[i]
        return int(row[0]), int(row[1])

    def slots(self) -> SortedSlots:
        """Each page's slot by its path, found in the sorted paths (no dict of every page made)."""
        return SortedSlots(self.paths)

    def names_of(self, i: int) -> Names:
        """Page ``i``'s names (:class:`DamagedBasis` when they do not decode as names)."""
        try:
            names = marshal.loads(self.names.part(i))
        except (ValueError, TypeError, EOFError, zlib.error) as exc:
            raise DamagedBasis(str(exc)) from None
        if (not isinstance(names, tuple) or len(names) != 11 or not isinstance(names[0], tuple) or len(names[0]) != 2
                or not all(isinstance(x, int) for x in names[0]) or not all(isinstance(x, str) for x in names[1:4])
                or not all(isinstance(x, str) for x in names[5:7])
                or not all(isinstance(x, tuple) and all(isinstance(y, str) for y in x)
                           for x in (names[4], *names[7:]))):
            raise DamagedBasis(f"page {i}'s names")
        return names

    def rows_of(self, i: int) -> np.ndarray:
        """Page ``i``'s listed shingles, as places in keys (ascending)."""
        try:
            steps = np.frombuffer(self.steps.part(i), dtype=np.uint32)
        except (ValueError, zlib.error) as exc:
            raise DamagedBasis(str(exc)) from None
        rows = np.cumsum(steps, dtype=np.int64)
        if len(rows) and int(rows[-1]) >= len(self.keys):  # (a damaged blob: no place beyond the keys)
            rows = rows[rows < len(self.keys)]
        return rows

    def holding(self, places: np.ndarray) -> list[int]:
        """The pages (slots, ascending) listing a shingle at one of ``places`` (sorted, distinct
        places in keys), read a chunk of pages at a time: every page's listed shingles made into
        absolute places at once took three arrays of 62 MB at 100,000 pages (and as long to
        allocate as to compute)."""
        if not len(places) or not len(self.lengths):
            return []
        pages, out, last = len(self.paths), [], len(places) - 1
        for k, start in enumerate(range(0, pages, CHUNK_PAGES)):
            lengths = self.lengths[start:min(start + CHUNK_PAGES, pages)]
            try:
                steps = np.frombuffer(self.steps.chunk(k), dtype=np.uint32)
            except ValueError as exc:
                raise DamagedBasis(str(exc)) from None
            if len(steps) != int(lengths.sum()):
                raise DamagedBasis("listed shingles")
            rows = undeltas(steps, lengths)
            hits = np.flatnonzero(places[np.minimum(np.searchsorted(places, rows), last)] == rows)
            if len(hits):
                out += (start + np.unique(np.searchsorted(np.cumsum(lengths), hits, side="right"))).tolist()
        return out


def inbound_followed(basis: Basis, slot: Mapping[str, int], stale: Iterable[str],
                     links_out: Callable[[str], Iterable[str]]) -> tuple[np.ndarray, dict[str, int]]:
    """Every page's inbound count (distinct other pages linking to it) now, from the basis's
    linking pages: the ``stale`` pages' links counted as ``links_out`` resolves them now instead
    of as they were (a page of them not in the basis, added since, has its links counted; one
    gone, none). The counts of the basis's pages by slot, and of the pages it does not hold. No
    link index is built (every page decoded and every link resolved: 0.8 s and 200 MB at 32,000
    pages). Exact only while every other page's links resolve as at the basis: the caller makes
    every page whose links may resolve elsewhere stale (a page linking by a name that came or
    went) and checks that the attachment files are the basis's."""
    stale = sorted(stale)
    gone = np.zeros(len(basis.paths), dtype=bool)
    gone[[slot[p] for p in stale if p in slot]] = True
    kept = ~gone[basis.sources]  # (links from the stale pages are counted below, as they are now)
    at = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(kept, out=at[1:])
    starts = np.zeros(len(basis.paths) + 1, dtype=np.int64)
    np.cumsum(basis.source_counts, out=starts[1:])
    counts: np.ndarray = at[starts[1:]] - at[starts[:-1]]
    others: dict[str, int] = {}
    for path in stale:
        for target in links_out(path):
            i = slot.get(target)
            if i is not None:
                counts[i] += 1
            else:
                others[target] = others.get(target, 0) + 1
    return counts, others


@dataclass(slots=True)
class Streamed:
    """An array to be written a block at a time (:func:`encode_parts`), never whole in memory."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    blocks: Callable[[], Iterator[np.ndarray]]  # (made when written; rows one after another)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


class DamagedBasis(CuratorError):
    """A part of a basis read when asked for (:meth:`Basis.names_of`, :meth:`Basis.rows_of`) does
    not decode: the caller scans instead."""


class Chunked:
    """Bytes of every page one page after another, kept as zlib streams of :data:`CHUNK_PAGES`
    pages each: a page's part is read by decompressing its chunk alone (a follow reads a few
    pages: decompressing every page's names and shingles cost 0.15 s of it at 32,000 pages)."""

    def __init__(self, at: np.ndarray, raw: bytes = b"", chunks: list[bytes] | None = None) -> None:
        self.at = at  # int64 (pages + 1): where each page's part starts in the whole
        self._raw = raw
        self._chunks = chunks
        self._open: dict[int, bytes] = {}

    def part(self, i: int) -> bytes:
        """Page ``i``'s bytes."""
        at = self.at
        if self._chunks is None:
            return self._raw[int(at[i]):int(at[i + 1])]
        k = i // CHUNK_PAGES
        data = self._open.get(k)
        if data is None:
            data = self.chunk(k)
            if len(data) != int(at[min(len(at) - 1, (k + 1) * CHUNK_PAGES)]) - int(at[k * CHUNK_PAGES]):
                raise DamagedBasis("a chunk of another length")
            self._open[k] = data
        base = int(at[k * CHUNK_PAGES])
        return data[int(at[i]) - base:int(at[i + 1]) - base]

    def chunk(self, k: int) -> bytes:
        """Chunk ``k``'s bytes (its :data:`CHUNK_PAGES` pages' one after another), not kept open."""
        at, pages = self.at, len(self.at) - 1
        if self._chunks is None:
            return self._raw[int(at[k * CHUNK_PAGES]):int(at[min((k + 1) * CHUNK_PAGES, pages)])]
        found = self._open.get(k)
        if found is not None:
            return found
        try:
            return zlib.decompress(self._chunks[k])
        except (zlib.error, IndexError) as exc:
            raise DamagedBasis(str(exc)) from None

    def whole(self) -> bytes:
        """Every page's bytes."""
        if self._chunks is None:
            return self._raw
        try:
            return b"".join(self._open.get(k) or zlib.decompress(c) for k, c in enumerate(self._chunks))
        except zlib.error as exc:
            raise DamagedBasis(str(exc)) from None

    def compressed(self) -> list[bytes]:
        """The chunks (compressing them from the whole when made from it)."""
        if self._chunks is not None:
            return self._chunks
        at, pages = self.at, len(self.at) - 1
        return [zlib.compress(self._raw[int(at[k]):int(at[min(k + CHUNK_PAGES, pages)])], 1)
                for k in range(0, pages, CHUNK_PAGES)]


def key_of(settings: object) -> bytes:
    return hashlib.blake2b(repr((FORMAT, FOLLOW_MARGIN, settings)).encode(), digest_size=16).digest()


class SortedSlots(Mapping[str, int]):
    """Each of distinct ``paths`` by its slot (place in them), found by bisection among the
    first ``ascending`` (all of them by default), which are sorted, and in a dict among the rest
    (the pages a kept result added after its sorted ones): a follow looks up the few pages a
    change touches, where a dict of every page cost 0.15 s to make at 300,000 pages."""

    def __init__(self, paths: list[str], ascending: int | None = None) -> None:
        self._paths = paths
        self.ascending = len(paths) if ascending is None else ascending
        self._rest = {p: i for i, p in enumerate(paths[self.ascending:], self.ascending)}

    def __getitem__(self, path: str) -> int:
        i = self.get(path)
        if i is None:
            raise KeyError(path)
        return i

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def get(self, path: str, default: int | None = None) -> int | None:  # type: ignore[override]
        """(Mapping's ``get`` goes through a raised KeyError for each page it misses.)"""
        i = bisect.bisect_left(self._paths, path, 0, self.ascending)
        if i < self.ascending and self._paths[i] == path:
            return i
        return self._rest.get(path, default) if self._rest else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


#: What a basis file starts with (then the header's length, the header, the arrays).
MAGIC = b"CURBASIS"


#: Rows a converted array is written in (:func:`_as_saved`).
CONVERT_ROWS = 1 << 20


def _as_saved(array: Any, dtype: Any, convert: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray | Streamed:
    """``array`` as saved, of ``dtype``: itself when it is already (no copy), else converted a
    block of :data:`CONVERT_ROWS` rows at a time as it is written (each whole array converted
    first, every copy was held at once: the scan's spike as it wrote its basis was 23 MB at
    32,000 pages, 14 MB so)."""
    dtype = np.dtype(dtype)
    if convert is None and isinstance(array, np.ndarray) and array.dtype == dtype:
        return array
    source = np.asarray(array)

    def blocks() -> Iterator[np.ndarray]:
        for start in range(0, len(source), CONVERT_ROWS):
            block = source[start:start + CONVERT_ROWS]
            yield np.asarray(convert(block) if convert is not None else block, dtype=dtype)

    return Streamed(dtype, source.shape, blocks)


def _arrays(basis: Basis) -> dict[str, np.ndarray | Streamed]:
    """The basis's arrays as saved (each read back as a view of the file's bytes), those it
    gives as streams as they are, those of another type converted as they are written."""
    stamps = np.asarray(basis.stamps, dtype=np.int64).reshape(len(basis.paths), 2)
    streams = basis.streams or {}
    counts = basis.counts
    assert isinstance(counts, np.ndarray)  # (a scan's basis: one read back is never written again)
    arrays: dict[str, np.ndarray | Streamed] = {
        "stamps": stamps, "keys": _as_saved(basis.keys, np.uint64), "big": np.packbits(basis.big),
        "counts": _as_saved(counts, np.uint16, lambda block: np.minimum(block, SATURATED)),
        "lengths": _as_saved(basis.lengths, np.uint32),
        "names_at": _as_saved(basis.names.at, np.int64), "band_slots": _as_saved(basis.band_slots, np.int32),
        "bands": _as_saved(basis.bands, np.uint64), "slug_entries": _as_saved(basis.slug_entries, np.uint64),
        "slug_owners": _as_saved(basis.slug_owners, np.int32), "band_keys": _as_saved(basis.band_keys, np.uint64),
        "band_owners": _as_saved(basis.band_owners, np.int32), "sample_keys": _as_saved(basis.sample_keys, np.uint64),
        "sample_owners": _as_saved(basis.sample_owners, np.int32),
        "title_starts": _as_saved(basis.title_groups[1], np.int64), "title_members": _as_saved(basis.title_groups[2], np.int32),
        "tag_starts": _as_saved(basis.tag_groups[1], np.int64), "tag_members": _as_saved(basis.tag_groups[2], np.int32),
        "source_counts": _as_saved(basis.source_counts, np.int32), "sources": _as_saved(basis.sources, np.int32),
        "digests": _as_saved(basis.digests, np.uint64)}
    for name, stream in streams.items():
        assert name in arrays and stream.dtype == arrays[name].dtype
        arrays[name] = stream
    return arrays


def encode_parts(basis: Basis, key: bytes) -> Iterator[bytes | memoryview]:
    """The basis as a file, a part after another (what :func:`encode` joins; written to the file
    one by one, the arrays are not copied into one blob of them all: 174 MB at 100,000 pages):
    :data:`MAGIC`, the header's length, the header (marshal of the plain values, the compressed
    chunks and where each array is), then every array's bytes, each at a multiple of 8. A
    process following the basis takes the arrays as views of the file (unmarshalling them copied
    60 MB at 32,000 pages)."""
    arrays = _arrays(basis)
    places: list[tuple[str, str, tuple[int, ...], int, int]] = []
    at = 0
    for name, array in arrays.items():
        places.append((name, array.dtype.str, array.shape, at, array.nbytes))
        at += -(-array.nbytes // 8) * 8
    header = marshal.dumps((
        FORMAT, key, basis.id, basis.boilerplate_pages, "\0".join(basis.paths),
        zlib.compress(marshal.dumps(basis.titles), 1), basis.names.compressed(), basis.steps.compressed(),
        basis.title_groups[0], basis.tag_groups[0], basis.attachments, basis.head, places))
    pad = bytes(-(len(MAGIC) + 8 + len(header)) % 8)
    yield MAGIC + (len(header) + len(pad)).to_bytes(8, "little")
    yield header  # (its own part: joined to the magic or padded, it was copied twice, 30 MB at 32,000 pages)
    yield pad
    for array in arrays.values():
        if isinstance(array, Streamed):
            written = 0
            for block in array.blocks():
                block = np.ascontiguousarray(block, dtype=array.dtype)
                written += block.nbytes
                yield block.reshape(-1).view(np.uint8).data
            if written != array.nbytes:  # (the header says otherwise: never a file that reads wrong)
                raise OSError(f"a streamed array of the basis gave {written} bytes, not {array.nbytes}")
        else:
            yield np.ascontiguousarray(array).reshape(-1).view(np.uint8).data  # (bytes: an empty array too)
        yield bytes(-array.nbytes % 8)


def encode(basis: Basis, key: bytes) -> bytes:
    """The basis as one blob (:func:`encode_parts` joined)."""
    return b"".join(encode_parts(basis, key))


def digest_of(shingles: np.ndarray) -> int:
    """A digest of a page's (sorted, distinct) shingles: their sum and their number."""
    total = int(shingles.sum(dtype=np.uint64)) if len(shingles) else 0
    return (total ^ (len(shingles) * 0x9E3779B97F4A7C15)) & 0xFFFFFFFFFFFFFFFF


def deltas(rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each page's places (ascending) as the first one and the steps between (small numbers,
    which compress)."""
    out = np.empty(len(rows), dtype=np.uint32)  # (made in place: no int64 copies of every row)
    if len(out):
        np.subtract(rows[1:], rows[:-1], out=out[1:], casting="unsafe")  # (a page's first: set below)
        starts = np.cumsum(lengths)[:-1]
        starts = starts[starts < len(out)]
        out[starts] = rows[starts]
        out[0] = rows[0]
    return out


def undeltas(steps: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`deltas` undone."""
    total = np.cumsum(steps, dtype=np.int64)
    if not len(total):
        return total
    firsts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=firsts[1:])
    base = np.repeat(total[np.minimum(firsts, len(total) - 1)] - steps[np.minimum(firsts, len(total) - 1)], lengths)
    out: np.ndarray = total - base
    return out


def _sorted(keys: np.ndarray) -> bool:
    return not bool((keys[1:] < keys[:-1]).any())


def _within(values: np.ndarray, limit: int) -> bool:
    """Every one of ``values`` is a place below ``limit``."""
    return not len(values) or (int(values.min()) >= 0 and int(values.max()) < limit)


def _groups(saved: tuple[Any, np.ndarray, np.ndarray], pages: int) -> Groups | None:
    keys, starts, members = saved
    if (not isinstance(keys, list) or starts.ndim != 1 or members.ndim != 1 or len(starts) != len(keys) + 1 or int(starts[0]) != 0
            or int(starts[-1]) != len(members) or bool((starts[1:] < starts[:-1]).any()) or not _within(members, pages)):
        return None
    return keys, starts, members


def _let_go(blob: bytes | mmap.mmap) -> None:
    """Drop the pages of a mapped basis file read so far from this process's resident memory
    (see :meth:`Basis.release`)."""
    if isinstance(blob, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        with suppress(OSError, ValueError):
            blob.madvise(mmap.MADV_DONTNEED)


def read(path: Path) -> bytes | mmap.mmap:
    """The basis file's bytes: mapped where a file can be replaced while mapped (POSIX: a later
    scan's basis is renamed over it, and this mapping keeps the file it maps), so that a follow
    reads the parts it asks for (reading 174 MB whole cost 0.3 s at 100,000 pages); read whole
    elsewhere. Raises OSError, or ValueError for an empty file."""
    return read_stamped(path)[0]


def stamp_of(st: os.stat_result) -> bytes:
    """What tells one basis file from another, as written (:func:`read_stamped`): its size,
    mtime, inode and device. Every basis file is a new file renamed into place."""
    return struct.pack("<4q", st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def read_stamped(path: Path) -> tuple[bytes | mmap.mmap, bytes]:
    """:func:`read`, and the :func:`stamp_of` the file read (b"" where a file is not mapped:
    then never taken as the file a stamp was saved for)."""
    if os.name != "posix":
        return path.read_bytes(), b""
    with path.open("rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), stamp_of(os.fstat(f.fileno()))


def decode(blob: bytes | mmap.mmap, key: bytes, *, as_written: bool = False) -> Basis | None:
    """The basis :func:`encode` wrote with ``key``; None for any other (or a damaged) one. What
    every page has is checked here; a page's own names and listed shingles when asked for
    (:class:`DamagedBasis`). ``as_written``: the file is the one a scan or a compaction wrote,
    unchanged since (its :func:`stamp_of` is the one saved with its id, as a page is known
    unchanged by its stamp): only the header and the arrays' sizes are checked. Checking every
    table read all of them, 0.1 s at 300,000 pages, and 1 s more when the file was not in the
    OS's cache, in every process following an append.

    A mapped file's pages are let go (:func:`_let_go`) after the header is read and after each
    check: the checks read most tables whole, and what they read stayed resident to the end of
    the follow (500 MB of a 970 MB follow at 300,000 pages, its peak)."""
    try:
        if blob[:len(MAGIC)] != MAGIC:
            return None
        size = int.from_bytes(blob[len(MAGIC):len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8 + size
        view = memoryview(blob)
        # (read from the mapping itself: a slice of it was a copy of the whole header, 80 MB at 300,000 pages)
        (version, saved_key, basis_id, boilerplate, joined, titles_z, names_z, steps_z, title_keys, tag_keys,
         attachments, head, places) = marshal.loads(view[len(MAGIC) + 8:start])
        _let_go(blob)
        if version != FORMAT or saved_key != key:
            return None
        arrays: dict[str, np.ndarray] = {}
        for name, dtype, shape, at, nbytes in places:
            if at < 0 or start + at + nbytes > len(blob):
                return None
            array = np.frombuffer(view[start + at:start + at + nbytes], dtype=np.dtype(dtype))
            arrays[str(name)] = array.reshape(tuple(shape))
        paths = joined.split("\0") if joined else []
        n = len(paths)
        titles = marshal.loads(zlib.decompress(titles_z))
        a = arrays
        stamps = a["stamps"]
        lengths = a["lengths"].astype(np.int64)
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        names_at = a["names_at"]
        slots = len(a["band_slots"])
        width = a["bands"].shape[1] if a["bands"].ndim == 2 else -1
        titled = _groups((title_keys, a["title_starts"], a["title_members"]), n)
        tagged = _groups((tag_keys, a["tag_starts"], a["tag_members"]), n)
        _let_go(blob)
        def sizes() -> bool:
            """Every table of the size the header and the pages say (all an as-written file gets)."""
            return not (stamps.shape != (n, 2) or not isinstance(titles, list) or len(titles) != n
                        or len(names_at) != n + 1 or (n and int(names_at[0]) != 0)
                        or bool((names_at[1:] < names_at[:-1]).any())
                        or not isinstance(names_z, list) or not isinstance(steps_z, list)
                        or len(names_z) != len(steps_z) or len(names_z) != -(-n // CHUNK_PAGES)
                        or titled is None or tagged is None or len(lengths) != n
                        or len(a["counts"]) != len(a["keys"]) or len(a["slug_entries"]) != len(a["slug_owners"])
                        or a["bands"].shape != (slots, width) or a["band_keys"].shape != (width, slots)
                        or a["band_owners"].shape != (width, slots) or len(a["sample_keys"]) != len(a["sample_owners"])
                        or len(a["digests"]) != n or len(a["source_counts"]) not in (0, n))
        checks: list[Callable[[], bool]] = [
            # (the paths strictly sorted, as the scan orders them: found by bisection, SortedSlots)
            lambda: all(map(operator.lt, paths, itertools.islice(paths, 1, None))),
            sizes,
            lambda: _within(a["band_slots"], n),
            lambda: _within(a["slug_owners"], n),
            lambda: _within(a["band_owners"], n),
            lambda: _within(a["sample_owners"], n),
            lambda: _sorted(a["slug_entries"]),
            lambda: _sorted(a["sample_keys"]),
            lambda: all(_sorted(row) for row in a["band_keys"]),
            lambda: int(a["source_counts"].sum()) == len(a["sources"]) and _within(a["sources"], n),
        ]
        for check in [sizes] if as_written else checks:  # (in order: each reads what the ones before found well formed)
            if not check():
                return None
            _let_go(blob)
        if titled is None or tagged is None:  # (checked above: for the type checker)
            return None
        counts = FollowedCounts(a["counts"])  # (the saved ones read where asked, the follow's changes apart)
        big = np.unpackbits(a["big"], count=len(a["keys"])).view(bool)  # (0 or 1 each: no copy)
        _let_go(blob)
        return Basis(
            bytes(basis_id), int(boilerplate), paths, stamps,
            titles, Chunked(names_at, chunks=[bytes(c) for c in names_z]), a["keys"], counts, big,
            Chunked(starts * 4, chunks=[bytes(c) for c in steps_z]), lengths,
            a["band_slots"], a["bands"], a["slug_entries"], a["slug_owners"], a["band_keys"], a["band_owners"],
            a["sample_keys"], a["sample_owners"], titled, tagged, bytes(attachments),
            a["source_counts"], a["sources"], str(head), a["digests"],
            blob if isinstance(blob, mmap.mmap) else None)
    except (ValueError, TypeError, EOFError, IndexError, KeyError, zlib.error, AttributeError):
        return None
