"""A new basis made from a follow, without a full scan (docs/design.md §9, issue 44).

A process following changes from a basis (:mod:`curator.engine.dedup.follow`) reads and compares
again every page changed since it; past ``FOLLOW_MAX`` of them the next answer was a full scan
(48 s at 100,000 pages, 250 s at 300,000), and on a busy wiki that came every few hundred appends.
Once a follow has re-examined :data:`COMPACT_AT` pages, the process that answered it writes the
basis those pages would have given a full scan of the wiki as it is now: the pages that did not
change keep their part of the old basis, their listed shingles renumbered into the new keys, and
each changed page's part is made from its features as the follow left them.

What makes it exact: while no page was added or removed, every page's features and the tables
built from them are what the follow holds (its answer is a full scan's, see ``DedupIndex.update``),
and the shingle counts are exact when every changed page's earlier text was read back (no page
*unknown*). A shingle on more pages than the listed limit (big) is listed on no page, so which
pages hold one is not known: when a big one's count falls back to the limit or below, no basis
is made (:func:`compacted` answers None) and the next answer past ``FOLLOW_MAX`` scans, as
before. A shingle that rises above the limit becomes big and leaves every page's listing.
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from curator.engine.dedup import follow as dedup_follow
from curator.engine.dedup.follow import CHUNK_PAGES, SATURATED, Basis, Chunked, DamagedBasis, Groups, Names

#: How many pages a follow has re-examined since its basis before the process writes a new one
#: (each later process reads and compares them all again; a new basis costs a few seconds at
#: 100,000 pages, where reaching ``FOLLOW_MAX`` cost a full scan).
COMPACT_AT = 64
#: How many shingles' counts are read at once (a follow's counts are read through its changes).
_COUNT_BLOCK = 1 << 20


@dataclass(slots=True)
class Text:
    """What a page changed since the basis is now: its names, title and every shingle."""

    names: Names
    title: str
    shingles: np.ndarray  # uint64, sorted and distinct


@dataclass(slots=True)
class Changed:
    """A page whose features are not the basis's any more: its text changed (``text``), or a
    count crossing a limit moved its body (``text`` None: its text and names are the basis's)."""

    slot: int
    bands: np.ndarray  # uint64: its MinHash band keys now (empty: no body)
    samples: np.ndarray  # uint64: its sampled rare shingles now (containment)
    titled: list[Any]  # the title groups it is in now (its title's key, if it has one)
    tagged: list[Any]  # the tag groups it is in now ((folder, tag) of each of its tags)
    text: Text | None


def compacted(basis: Basis, changed: Sequence[Changed], old_counts: Callable[[np.ndarray], np.ndarray],
              counts_now: Callable[[np.ndarray], np.ndarray], sources: tuple[np.ndarray, np.ndarray],
              new_id: bytes, head: str) -> Basis | None:
    """The basis a full scan of the pages as they are now would save, from ``basis`` (whose
    pages are the pages now, none added or removed) and the pages that differ from it
    (``changed``). ``old_counts``: the count now of the shingles at some places of the basis's
    keys; ``counts_now``: the count now of any shingles; ``sources``: each page's linking pages
    now. None when a big shingle may have fallen back under the listed limit (see the module
    docstring). Raises :class:`~curator.engine.dedup.follow.DamagedBasis` for a part that does
    not decode."""
    pages = len(basis.paths)
    limit = basis.boilerplate_pages + dedup_follow.FOLLOW_MARGIN
    texts: dict[int, Text] = {c.slot: c.text for c in changed if c.text is not None}
    keys = basis.keys

    # Which old shingles are still on a page, which are big now, and their counts as saved: a
    # block at a time, a few bytes a shingle (13 million of them at 100,000 pages).
    alive = np.empty(len(keys), dtype=bool)
    big_now = np.empty(len(keys), dtype=bool)
    saved = np.empty(len(keys), dtype=np.uint16)
    for start in range(0, len(keys), _COUNT_BLOCK):
        stop = min(start + _COUNT_BLOCK, len(keys))
        now = old_counts(np.arange(start, stop, dtype=np.int64))
        np.greater(now, 0, out=alive[start:stop])
        np.greater(now, limit, out=big_now[start:stop])
        np.minimum(now, SATURATED, out=saved[start:stop], casting="unsafe")
    if bool((basis.big & ~big_now).any()):
        return None  # (a big shingle's holders are not kept: which pages would list it is unknown)
    # The shingles only changed pages hold (not among the old keys), still on a page.
    held = [t.shingles for t in texts.values() if len(t.shingles)]
    fresh = np.unique(np.concatenate(held)) if held else np.zeros(0, dtype=np.uint64)
    if len(keys) and len(fresh):
        fresh = fresh[keys[np.minimum(np.searchsorted(keys, fresh), len(keys) - 1)] != fresh]
    fresh_counts = counts_now(fresh) if len(fresh) else np.zeros(0, dtype=np.int64)
    fresh, fresh_counts = fresh[fresh_counts > 0], fresh_counts[fresh_counts > 0]
    # Each old shingle's place among the new keys (the old ones still on a page, with the fresh
    # ones between): how many of each come before it.
    place = np.cumsum(alive, dtype=np.int32)
    ahead = place[np.searchsorted(keys, fresh) - 1] if len(keys) else np.zeros(len(fresh), dtype=np.int32)
    ahead[np.searchsorted(keys, fresh) == 0] = 0
    fresh_at = np.arange(len(fresh), dtype=np.int64) + ahead
    total = int(place[-1]) + len(fresh) if len(keys) else len(fresh)
    place -= 1
    new_keys = np.empty(total, dtype=np.uint64)
    new_counts = np.empty(total, dtype=np.uint16)
    new_big = np.empty(total, dtype=bool)
    for start in range(0, len(keys), _COUNT_BLOCK):
        stop = min(start + _COUNT_BLOCK, len(keys))
        block = place[start:stop]
        block += np.searchsorted(fresh, keys[start:stop]).astype(np.int32)
        on = alive[start:stop]
        new_keys[block[on]] = keys[start:stop][on]
        new_counts[block[on]] = saved[start:stop][on]
        new_big[block[on]] = big_now[start:stop][on]
    new_keys[fresh_at] = fresh
    new_counts[fresh_at] = np.minimum(fresh_counts, SATURATED)
    new_big[fresh_at] = fresh_counts > limit
    place[~alive | big_now] = -1  # (leaves every listing: on no page now, or big now)
    del alive, big_now, saved

    def listed_of(text: Text) -> np.ndarray:
        rows = np.searchsorted(new_keys, text.shingles)
        return rows[~new_big[rows]]

    def steps_chunk(k: int) -> tuple[bytes, np.ndarray]:
        first, last = k * CHUNK_PAGES, min((k + 1) * CHUNK_PAGES, pages)
        lengths = basis.lengths[first:last]
        steps = np.frombuffer(basis.steps.chunk(k), dtype=np.uint32)
        if len(steps) != int(lengths.sum()):
            raise DamagedBasis("listed shingles")
        rows = dedup_follow._undeltas(steps, lengths)
        if len(rows) and int(rows.max()) >= len(keys):
            raise DamagedBasis("listed shingles beyond the keys")
        moved = place[rows]
        stays = moved >= 0
        owner = np.repeat(np.arange(last - first, dtype=np.int64), lengths)
        out_lengths = np.bincount(owner[stays], minlength=last - first).astype(np.int64)
        out_rows = moved[stays]
        mine = [s for s in range(first, last) if s in texts]
        if mine:  # (a changed page's listing: made from its shingles now)
            parts = np.split(out_rows, np.cumsum(out_lengths)[:-1])
            for s in mine:
                parts[s - first] = listed_of(texts[s])
                out_lengths[s - first] = len(parts[s - first])
            out_rows = np.concatenate(parts) if parts else out_rows
        return zlib.compress(dedup_follow.deltas(out_rows, out_lengths).tobytes(), 1), out_lengths

    chunks = range(-(-pages // CHUNK_PAGES))
    with ThreadPoolExecutor(max_workers=2) as pool:  # (the look-ups and zlib let go of the interpreter)
        made = list(pool.map(steps_chunk, chunks))
    lengths = np.concatenate([m[1] for m in made]) if made else np.zeros(0, dtype=np.int64)
    starts = np.zeros(pages + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    steps = Chunked(starts * 4, chunks=[m[0] for m in made])
    del made

    names = _names(basis, texts)
    titles = list(basis.titles)
    stamps = np.array(basis.stamps, dtype=np.int64).reshape(pages, 2)  # (copies: the old ones are the file's)
    digests = np.array(basis.digests, dtype=np.uint64)
    for s, text in texts.items():
        titles[s] = text.title
        stamps[s] = text.names[0]
        digests[s] = dedup_follow.digest_of(text.shingles)
    band_slots, bands, band_keys, band_owners = _bands(basis, changed)
    sample_keys, sample_owners = _samples(basis, changed)
    title_groups = _regrouped(basis.title_groups, {c.slot: c.titled for c in changed}, pages)
    tag_groups = _regrouped(basis.tag_groups, {c.slot: c.tagged for c in changed}, pages)
    return Basis(
        new_id, basis.boilerplate_pages, basis.paths, stamps, titles, names, new_keys, new_counts, new_big, steps,
        lengths, band_slots, bands, basis.slug_entries, basis.slug_owners, band_keys, band_owners,
        sample_keys, sample_owners, title_groups, tag_groups, basis.attachments,
        sources[0].astype(np.int64), sources[1].astype(np.int64), head, digests)


def _names(basis: Basis, texts: dict[int, Text]) -> Chunked:
    """Every page's names: a chunk holding no changed page as it was, compressed; the others
    made again with the changed pages' names now."""
    pages = len(basis.paths)
    old_at, old_chunks = basis.names.at, basis.names.compressed()
    sizes = np.diff(np.asarray(old_at, dtype=np.int64))
    chunks: list[bytes] = []
    for k in range(-(-pages // CHUNK_PAGES)):
        first, last = k * CHUNK_PAGES, min((k + 1) * CHUNK_PAGES, pages)
        mine = [s for s in range(first, last) if s in texts]
        if not mine:
            chunks.append(old_chunks[k])
            continue
        parts = [basis.names.part(s) for s in range(first, last)]
        for s in mine:
            parts[s - first] = marshal.dumps(texts[s].names)
            sizes[s] = len(parts[s - first])
        chunks.append(zlib.compress(b"".join(parts), 1))
    at = np.zeros(pages + 1, dtype=np.int64)
    np.cumsum(sizes, out=at[1:])
    return Chunked(at, chunks=chunks)


def _bands(basis: Basis, changed: Sequence[Changed]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pages with a body, their band keys, and each band's table sorted as a scan sorts it."""
    width = basis.bands.shape[1] if basis.bands.ndim == 2 and basis.bands.shape[1] else len(basis.band_keys)
    by_slot = {c.slot: c.bands for c in changed}
    has = np.zeros(len(basis.paths), dtype=bool)
    has[np.asarray(basis.band_slots, dtype=np.int64)] = True
    for s, keys in by_slot.items():
        has[s] = len(keys) > 0
    band_slots = np.flatnonzero(has).astype(np.int64)
    rows = np.zeros((len(band_slots), width), dtype=np.uint64)
    old = np.asarray(basis.band_slots, dtype=np.int64)
    stays = ~np.isin(old, np.fromiter(by_slot, dtype=np.int64, count=len(by_slot)))
    rows[np.searchsorted(band_slots, old[stays])] = basis.bands[stays]
    for s, keys in by_slot.items():
        if len(keys):
            rows[int(np.searchsorted(band_slots, s))] = np.asarray(keys, dtype=np.uint64)
    band_keys = np.empty((width, len(band_slots)), dtype=np.uint64)
    band_owners = np.empty((width, len(band_slots)), dtype=np.int64)
    for b in range(width):
        order = np.argsort(rows[:, b])
        band_keys[b], band_owners[b] = rows[order, b], band_slots[order]
    return band_slots, rows, band_keys, band_owners


def _samples(basis: Basis, changed: Sequence[Changed]) -> tuple[np.ndarray, np.ndarray]:
    """The containment table: every page's sampled rare shingles, sorted, with their pages."""
    ours = np.zeros(len(basis.paths), dtype=bool)
    ours[[c.slot for c in changed]] = True
    owners = np.asarray(basis.sample_owners, dtype=np.int64)
    stays = ~ours[owners]
    keys = np.concatenate([basis.sample_keys[stays], *(np.asarray(c.samples, dtype=np.uint64) for c in changed)])
    owners = np.concatenate([owners[stays], *(np.full(len(c.samples), c.slot, dtype=np.int64) for c in changed)])
    order = np.argsort(keys)
    return keys[order], owners[order]


def _regrouped(saved: Groups, now: dict[int, list[Any]], pages: int) -> Groups:
    """A basis's groups (:data:`~curator.engine.dedup.follow.Groups`) with the pages of ``now``
    filed under the keys given instead of their old ones, as a scan files them: the keys with
    a member, sorted, each one's members ascending."""
    keys, starts, members = saved
    members = np.asarray(members, dtype=np.int64)
    ours = np.zeros(pages, dtype=bool)
    ours[list(now)] = True
    stays = ~ours[members]
    given = {k for ks in now.values() for k in ks}
    every = sorted(given.union(keys))
    position = {k: i for i, k in enumerate(every)}
    old_at = np.fromiter((position[k] for k in keys), dtype=np.int64, count=len(keys))
    sizes_then: np.ndarray = np.diff(np.asarray(starts, dtype=np.int64))
    of_key = np.repeat(old_at, sizes_then)
    filed = [(position[k], s) for s, ks in now.items() for k in ks]
    at = np.concatenate([of_key[stays], np.array([k for k, _ in filed], dtype=np.int64)])
    slots = np.concatenate([members[stays], np.array([s for _, s in filed], dtype=np.int64)])
    order = np.lexsort((slots, at))
    sizes = np.bincount(at, minlength=len(every))
    out_starts = np.zeros(int((sizes > 0).sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[sizes > 0], out=out_starts[1:])
    return [k for k, n in zip(every, sizes.tolist(), strict=True) if n], out_starts, slots[order]
