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
Encoding: marshal of plain values and array bytes; the per-page names are zlib-compressed (the
shingle hashes do not compress). A damaged or foreign blob is ignored: the caller scans.
"""

from __future__ import annotations

import hashlib
import marshal
import zlib
from dataclasses import dataclass, field

import numpy as np

#: The name the basis's id is saved as in the page cache (under the scan's state), and the file
#: in the wiki's state folder that holds the basis.
NAME = "dedup-basis"
FILE = "dedup-basis.bin"
#: Bump when the encoding or what is kept changes.
FORMAT = 5
#: How many pages whose text at the basis cannot be read back (see the module docstring) may
#: change since a basis before the next answer scans again; also how far above the boilerplate
#: limit a page's shingles are listed.
FOLLOW_MARGIN = 8
#: How many changed pages in all a new process follows from one basis (each is read and compared
#: again by every later process until the next scan): more, and it scans.
FOLLOW_MAX = 256
#: The count every big shingle is given (far above any limit, whatever the changes since).
BIG = 1 << 40

#: Per page: (mtime_ns, size), folder, title_key, title_text, title_numbers, slug, slug_alnum,
#: slug_words, slug_numbers, tags (sorted): what :class:`~curator.engine.dedup.index.Features` holds besides shingles;
#: then the keys links reach the page by besides its path (its title's and aliases', sorted).
Names = tuple[tuple[int, int], str, str, str, tuple[str, ...], str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...],
              tuple[str, ...]]


@dataclass(slots=True)
class Basis:
    """A full scan's state, enough to follow changes from (see the module docstring)."""

    id: bytes  # random, made by the scan: what a kept result names as the basis it followed from
    boilerplate_pages: int
    paths: list[str]  # every page, in the scan's (sorted) order
    names: list[Names]  # by page
    keys: np.ndarray  # uint64: every distinct shingle, sorted
    counts: np.ndarray  # int64: on how many pages each is (at most BIG)
    big: np.ndarray  # bool: which are big (listed on no page)
    rows: np.ndarray  # uint32: each page's listed shingles, as places in keys, page after page
    lengths: np.ndarray  # int64: how many listed shingles each page has
    band_slots: np.ndarray  # int64: the pages with a body (their MinHash bands below)
    bands: np.ndarray  # uint64 (len(band_slots), bands): each such page's band keys
    #: The slug table as the scan sorted it: its keys in order, and the page of each (a process
    #: following the basis takes it as it is: sorting it again cost 0.4 s at 100,000 pages).
    slug_entries: np.ndarray  # uint64
    slug_owners: np.ndarray  # int64
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


def key_of(settings: object) -> bytes:
    return hashlib.blake2b(repr((FORMAT, FOLLOW_MARGIN, settings)).encode(), digest_size=16).digest()


def encode(basis: Basis, key: bytes) -> bytes:
    names = zlib.compress(marshal.dumps(basis.names), 1)
    return marshal.dumps((
        FORMAT, key, basis.id, basis.boilerplate_pages, "\0".join(basis.paths), names,
        basis.keys.astype(np.uint64).tobytes(), np.packbits(basis.big).tobytes(),
        np.minimum(basis.counts, 0xFFFF).astype(np.uint16).tobytes(),
        zlib.compress(_deltas(basis.rows, basis.lengths).tobytes(), 1), basis.lengths.astype(np.uint32).tobytes(),
        basis.band_slots.astype(np.int32).tobytes(), basis.bands.astype(np.uint64).tobytes(),
        basis.slug_entries.astype(np.uint64).tobytes(),
        basis.slug_owners.astype(np.int32).tobytes(),
        basis.attachments, basis.source_counts.astype(np.int32).tobytes(), basis.sources.astype(np.int32).tobytes(),
        basis.head, basis.digests.astype(np.uint64).tobytes()))


def digest_of(shingles: np.ndarray) -> int:
    """A digest of a page's (sorted, distinct) shingles: their sum and their number."""
    total = int(shingles.sum(dtype=np.uint64)) if len(shingles) else 0
    return (total ^ (len(shingles) * 0x9E3779B97F4A7C15)) & 0xFFFFFFFFFFFFFFFF


def _deltas(rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each page's places (ascending) as the first one and the steps between (small numbers,
    which compress)."""
    out = rows.astype(np.int64)
    if len(out):
        out[1:] -= out[:-1].copy()
        starts = np.cumsum(lengths)[:-1]
        starts = starts[starts < len(out)]
        out[starts] = rows[starts]
        out[0] = rows[0]
    return out.astype(np.uint32)


def _undeltas(steps: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`_deltas` undone."""
    total = np.cumsum(steps, dtype=np.int64)
    if not len(total):
        return total
    firsts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=firsts[1:])
    base = np.repeat(total[np.minimum(firsts, len(total) - 1)] - steps[np.minimum(firsts, len(total) - 1)], lengths)
    out: np.ndarray = total - base
    return out


def decode(blob: bytes, key: bytes) -> Basis | None:
    """The basis :func:`encode` wrote with ``key``; None for any other (or a damaged) one."""
    try:
        (version, saved_key, basis_id, boilerplate, joined, names_z, keys, big, counts, rows, lengths, band_slots,
         bands, slug_entries, slug_owners, attachments, source_counts, sources, head,
         digests) = marshal.loads(blob)
        if version != FORMAT or saved_key != key:
            return None
        paths = joined.split("\0") if joined else []
        names = marshal.loads(zlib.decompress(names_z))
        basis = Basis(
            bytes(basis_id), int(boilerplate), paths, names, np.frombuffer(keys, dtype=np.uint64),
            np.frombuffer(counts, dtype=np.uint16).astype(np.int64), np.zeros(0, dtype=bool),
            np.zeros(0, dtype=np.int64), np.frombuffer(lengths, dtype=np.uint32).astype(np.int64),
            np.frombuffer(band_slots, dtype=np.int32).astype(np.int64),
            np.frombuffer(bands, dtype=np.uint64), np.frombuffer(slug_entries, dtype=np.uint64),
            np.frombuffer(slug_owners, dtype=np.int32).astype(np.int64),
            bytes(attachments),
            np.frombuffer(source_counts, dtype=np.int32).astype(np.int64),
            np.frombuffer(sources, dtype=np.int32).astype(np.int64), str(head),
            np.frombuffer(digests, dtype=np.uint64))
        basis.rows = _undeltas(np.frombuffer(zlib.decompress(rows), dtype=np.uint32), basis.lengths)
        if len(basis.rows) and int(basis.rows.max()) >= len(basis.keys):
            return None
        basis.big = np.unpackbits(np.frombuffer(big, dtype=np.uint8), count=len(basis.keys)).astype(bool)
        basis.counts[basis.counts == 0xFFFF] = BIG
        n = len(paths)
        if (len(names) != n or len(basis.lengths) != n or int(basis.lengths.sum()) != len(basis.rows)
                or len(basis.counts) != len(basis.keys) or len(basis.slug_entries) != len(basis.slug_owners)
                or len(basis.bands) % max(1, len(basis.band_slots) or 1)
                or (len(basis.rows) and int(basis.rows.max()) >= len(basis.keys))
                or (len(basis.band_slots) and int(basis.band_slots.max()) >= n)
                or (len(basis.slug_owners) and (int(basis.slug_owners.max()) >= n or int(basis.slug_owners.min()) < 0))
                or bool((basis.slug_entries[1:] < basis.slug_entries[:-1]).any())
                or len(basis.digests) != n or len(basis.big) != len(basis.keys)
                or (len(basis.source_counts) not in (0, n)) or int(basis.source_counts.sum()) != len(basis.sources)
                or (len(basis.sources) and (int(basis.sources.max()) >= n or int(basis.sources.min()) < 0))):
            return None
        if len(basis.band_slots):
            basis.bands = basis.bands.reshape(len(basis.band_slots), -1)
        else:
            basis.bands = basis.bands.reshape(0, 0)
    except (ValueError, TypeError, EOFError, IndexError, zlib.error, AttributeError):
        return None
    return basis
