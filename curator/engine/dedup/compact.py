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
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from curator.engine.dedup import follow as dedup_follow
from curator.engine.dedup.follow import (
    CHUNK_PAGES,
    SATURATED,
    Basis,
    Chunked,
    DamagedBasis,
    FollowedCounts,
    Groups,
    Names,
    Streamed,
)

#: How many pages a follow has re-examined since its basis before the process writes a new one
#: (each later process reads and compares them all again; a new basis costs a few seconds at
#: 100,000 pages, where reaching ``FOLLOW_MAX`` cost a full scan).
COMPACT_AT = 64
#: How many shingles' keys (8 bytes each) are read and written at once; as many bytes of the other
#: arrays written a block at a time.
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


def compacted(basis: Basis, changed: Sequence[Changed], counts: FollowedCounts,
              counts_now: Callable[[np.ndarray], np.ndarray], sources: tuple[np.ndarray, np.ndarray],
              new_id: bytes, head: str) -> Basis | None:
    """The basis a full scan of the pages as they are now would save, from ``basis`` (whose
    pages are the pages now, none added or removed) and the pages that differ from it
    (``changed``). ``counts``: the basis's counts as the follow moved them; ``counts_now``: the
    count now of any shingles; ``sources``: each page's linking pages now. None when a big
    shingle may have fallen back under the listed limit (see the module docstring). Raises
    :class:`~curator.engine.dedup.follow.DamagedBasis` for a part that does not decode.

    Only the shingles whose count the follow moved can have left every page or become big, so
    what changes among the keys is found from those alone; the new keys and counts are the old
    ones with those changes, read and written a block at a time (:class:`Streamed`): made whole,
    they and the tables to make them were 700 MB at 300,000 pages."""
    pages = len(basis.paths)
    limit = basis.boilerplate_pages + dedup_follow.FOLLOW_MARGIN
    texts: dict[int, Text] = {c.slot: c.text for c in changed if c.text is not None}
    keys = basis.keys

    # The old shingles whose count moved: those on no page now (gone) and those above the listed
    # limit now (rising: they leave every page's listing).
    moved, _ = counts.changes()
    now = counts[moved]
    was_big = basis.big[moved]
    if bool((was_big & (now <= limit)).any()):
        return None  # (a big shingle's holders are not kept: which pages would list it is unknown)
    gone = moved[now <= 0]
    rising = moved[(now > limit) & ~was_big]
    leaving = np.union1d(gone, rising)
    # The shingles only changed pages hold (not among the old keys), still on a page.
    held = [t.shingles for t in texts.values() if len(t.shingles)]
    fresh = np.unique(np.concatenate(held)) if held else np.zeros(0, dtype=np.uint64)
    if len(keys) and len(fresh):
        fresh = fresh[keys[np.minimum(np.searchsorted(keys, fresh), len(keys) - 1)] != fresh]
    fresh_counts = counts_now(fresh) if len(fresh) else np.zeros(0, dtype=np.int64)
    fresh, fresh_counts = fresh[fresh_counts > 0], fresh_counts[fresh_counts > 0]
    into = np.searchsorted(keys, fresh)  # (how many old keys come before each fresh one)

    def place_of(rows: np.ndarray) -> np.ndarray:
        """The new place of the old keys at ``rows`` (none of them gone)."""
        out: np.ndarray = rows - np.searchsorted(gone, rows) + np.searchsorted(into, rows, side="right")
        return out

    fresh_at = np.arange(len(fresh), dtype=np.int64) + into - np.searchsorted(gone, into)
    total = len(keys) - len(gone) + len(fresh)
    big = basis.big.copy()
    big[rising] = True
    new_big = np.insert(np.delete(big, gone), into - np.searchsorted(gone, into), fresh_counts > limit)
    del big
    changed_counts = np.minimum(now, SATURATED).astype(np.uint16)
    new_keys = Streamed(np.dtype(np.uint64), (total,), lambda: _merged(keys, gone, into, fresh, basis))
    new_counts = Streamed(np.dtype(np.uint16), (total,), lambda: _merged(
        counts.saved, gone, into, np.minimum(fresh_counts, SATURATED).astype(np.uint16), basis,
        (moved, changed_counts)))

    def listed_of(text: Text) -> np.ndarray:
        """A changed page's listing: its shingles' new places, less those big now."""
        sh = text.shingles
        at = np.minimum(np.searchsorted(keys, sh), max(0, len(keys) - 1))
        old = (keys[at] == sh) if len(keys) else np.zeros(len(sh), dtype=bool)
        places = np.empty(len(sh), dtype=np.int64)
        places[old] = place_of(at[old])
        j = np.searchsorted(fresh, sh[~old])
        places[~old] = fresh_at[j]
        big_now = np.zeros(len(sh), dtype=bool)
        big_now[old] = basis.big[at[old]] | _among(at[old], rising)
        big_now[~old] = fresh_counts[j] > limit
        return places[~big_now]

    def steps_chunk(k: int) -> tuple[bytes, np.ndarray]:
        first, last = k * CHUNK_PAGES, min((k + 1) * CHUNK_PAGES, pages)
        lengths = basis.lengths[first:last]
        steps = np.frombuffer(basis.steps.chunk(k), dtype=np.uint32)
        if len(steps) != int(lengths.sum()):
            raise DamagedBasis("listed shingles")
        rows = dedup_follow.undeltas(steps, lengths)
        if len(rows) and int(rows.max()) >= len(keys):
            raise DamagedBasis("listed shingles beyond the keys")
        stays = ~_among(rows, leaving)
        owner = np.repeat(np.arange(last - first, dtype=np.int64), lengths)
        out_lengths = np.bincount(owner[stays], minlength=last - first).astype(np.int64)
        out_rows = place_of(rows[stays])
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
    basis.release()  # (the old listed shingles' places were read whole: left to the file cache)

    names = _names(basis, texts)
    titles = list(basis.titles)
    stamps = np.array(basis.stamps, dtype=np.int64).reshape(pages, 2)  # (copies: the old ones are the file's)
    digests = np.array(basis.digests, dtype=np.uint64)
    for s, text in texts.items():
        titles[s] = text.title
        stamps[s] = text.names[0]
        digests[s] = dedup_follow.digest_of(text.shingles)
    tables = {**_bands(basis, changed), **_samples(basis, changed)}
    band_slots = tables.pop("band_slots")
    assert isinstance(band_slots, np.ndarray)
    title_groups = _regrouped(basis.title_groups, {c.slot: c.titled for c in changed}, pages)
    tag_groups = _regrouped(basis.tag_groups, {c.slot: c.tagged for c in changed}, pages)
    none = np.zeros(0, dtype=np.uint64)  # (in place of what is streamed: see Basis.streams)
    streams = {"keys": new_keys, "counts": new_counts,
               **{name: stream for name, stream in tables.items() if isinstance(stream, Streamed)}}
    return Basis(
        new_id, basis.boilerplate_pages, basis.paths, stamps, titles, names, none, none, new_big, steps,
        lengths, band_slots, none, basis.slug_entries, basis.slug_owners, none, none, none, none,
        title_groups, tag_groups, basis.attachments, sources[0], sources[1], head, digests, streams=streams)


def _among(values: np.ndarray, sorted_few: np.ndarray) -> np.ndarray:
    """Which of ``values`` are among ``sorted_few`` (sorted, distinct)."""
    if not len(sorted_few) or not len(values):
        return np.zeros(len(values), dtype=bool)
    found: np.ndarray = sorted_few[np.minimum(np.searchsorted(sorted_few, values), len(sorted_few) - 1)] == values
    return found


def _merged(old: np.ndarray, gone: np.ndarray, into: np.ndarray, fresh: np.ndarray, basis: Basis,
            changes: tuple[np.ndarray, np.ndarray] | None = None) -> Iterator[np.ndarray]:
    """``old`` (an array of the basis file, by key) a block at a time, the places ``gone`` left
    out and ``fresh`` put in where ``into`` says (before the old place given), the values at
    ``changes``' places set to theirs: what the new basis holds of it."""
    n = len(old)
    per = max(1, _COUNT_BLOCK * 8 // max(1, old.itemsize * int(np.prod(old.shape[1:], dtype=np.int64))))  # (8 MB)
    for start in range(0, max(n, 1), per):
        stop = min(start + per, n)
        block = np.array(old[start:stop])
        if changes is not None:
            places, values = changes
            lo, hi = np.searchsorted(places, [start, stop])
            block[places[lo:hi] - start] = values[lo:hi]
        lo, hi = np.searchsorted(gone, [start, stop])
        block = np.delete(block, gone[lo:hi] - start, axis=0)
        last = stop >= n  # (fresh ones after every old key go in the last block)
        f_lo, f_hi = np.searchsorted(into, [start, n + 1 if last else stop])
        at = into[f_lo:f_hi] - start - np.searchsorted(gone[lo:hi], into[f_lo:f_hi])
        yield np.insert(block, at, fresh[f_lo:f_hi], axis=0)
        basis.release()  # (what was read of the file: left to the file cache)



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


def _bands(basis: Basis, changed: Sequence[Changed]) -> dict[str, Streamed | np.ndarray]:
    """The pages with a body (``band_slots``), their band keys (``bands``, a row a page) and each
    band's table (``band_keys`` and ``band_owners``, a row a band, sorted by key): the old ones
    less the changed pages' entries, with those they have now put in, written a block at a time."""
    width = basis.bands.shape[1] if basis.bands.ndim == 2 and basis.bands.shape[1] else len(basis.band_keys)
    ours = np.zeros(len(basis.paths), dtype=bool)
    ours[[c.slot for c in changed]] = True
    old = np.asarray(basis.band_slots, dtype=np.int64)
    now = sorted((c.slot, np.asarray(c.bands, dtype=np.uint64)) for c in changed if len(c.bands))
    new_slots = np.array([slot for slot, _ in now], dtype=np.int64)
    new_rows = np.array([keys for _, keys in now], dtype=np.uint64).reshape(len(now), width)
    gone = np.flatnonzero(ours[old])
    into = np.searchsorted(old, new_slots)
    band_slots = np.insert(np.delete(old, gone), into - np.searchsorted(gone, into), new_slots)
    slots = len(band_slots)
    bands = Streamed(np.dtype(np.uint64), (slots, width), lambda: _merged(basis.bands, gone, into, new_rows, basis))

    def table(keys_wanted: bool) -> Iterator[np.ndarray]:
        for b in range(width):
            keys, owners = basis.band_keys[b], basis.band_owners[b]
            dropped = np.flatnonzero(ours[owners])
            order = np.argsort(new_rows[:, b], kind="stable")
            added = new_rows[order, b]
            at = np.searchsorted(keys, added)
            if keys_wanted:
                yield from _merged(keys, dropped, at, added, basis)
            else:
                yield from _merged(owners, dropped, at, new_slots[order].astype(np.int32), basis)

    return {"band_slots": band_slots, "bands": bands,
            "band_keys": Streamed(np.dtype(np.uint64), (width, slots), lambda: table(True)),
            "band_owners": Streamed(np.dtype(np.int32), (width, slots), lambda: table(False))}


def _samples(basis: Basis, changed: Sequence[Changed]) -> dict[str, Streamed | np.ndarray]:
    """The containment table (``sample_keys``, ``sample_owners``): every page's sampled rare
    shingles, sorted, with their pages; the old one less the changed pages' entries, with those
    they have now put in, written a block at a time."""
    ours = np.zeros(len(basis.paths), dtype=bool)
    ours[[c.slot for c in changed]] = True
    keys, owners = basis.sample_keys, basis.sample_owners
    dropped = np.flatnonzero(ours[owners])
    basis.release()
    added = np.concatenate([np.zeros(0, dtype=np.uint64), *(np.asarray(c.samples, dtype=np.uint64) for c in changed)])
    added_owners = np.concatenate([np.zeros(0, dtype=np.int32),
                                   *(np.full(len(c.samples), c.slot, dtype=np.int32) for c in changed)])
    order = np.argsort(added, kind="stable")
    added, added_owners = added[order], added_owners[order]
    at = np.searchsorted(keys, added)
    total = len(keys) - len(dropped) + len(added)
    return {"sample_keys": Streamed(np.dtype(np.uint64), (total,), lambda: _merged(keys, dropped, at, added, basis)),
            "sample_owners": Streamed(np.dtype(np.int32), (total,),
                                      lambda: _merged(owners, dropped, at, added_owners, basis))}


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
