"""The dedup scan's verified result, kept in the page cache under the store's state (docs/design.md §9, §12).

A full dedup scan reads and shingles every page body and compares them across the wiki (many
seconds at 30,000 pages), and its answer depends on every page: boilerplate is what many pages
share. So what is kept is not per page but the scan's result for one state of the pages: every
verified pair of each signal with its score, every signal's score for each pair of pages that may
be asked about (the pairs, and every two pages joined into one family by their text), and the
inbound links of each page in a pair (what the keep rule and the impact of a family count). It is
saved with :meth:`~curator.engine.corpus.store.PageStore.save_derived` under the store's random state token, so it is
answered only to a process whose refresh finds exactly the pages it was computed from; any change
to a page gives the store a new state and the next scan is a full one. Decisions ("not
duplicates") and visibility are not part of it: they are applied to the kept pairs at answer time
exactly as to a scan's, so an agent never sees a page it may not read through it.

The key also holds the attachment files links may resolve to (they are not in the store's state
but can change an inbound count) and :data:`FORMAT` (bump it when a signal, a threshold or the
shingle rules change). A damaged or foreign blob is ignored: the caller scans again.

A result followed from the scan's basis since is kept as changes to the last one kept whole
(:func:`encode_delta`, :data:`BASE_NAME`): what a follow writes is what changed since the scan.

Beside it, the operator's families answer (:data:`FAMILIES_NAME`, :func:`encode_families`): every
family as the answer built it, saved under the state it was built for, with the digest of the
result whose pairs it grouped (:func:`kept_digest`). A later answer for the same state reads it
as it is; one whose index still holds those very pairs builds again only the families with a
page changed or re-examined since, or whose inbound counts moved (grouping every pair and
ranking 31,000 families cost a second at 100,000 pages, after every append). Which counts moved
is told from the inbound frame saved with it (:data:`InboundFrame`) when both answers followed
their counts from the same basis; else every member's count is looked up again.

Encoding (marshal, zlib): the page paths once, then per signal the pairs as indexes into them
(``int32``) with their scores, then the scored pairs with their five scores, then the inbound
counts. Scores are rounded decimals (4 places for a pair's signal, 3 for a score row) kept as
``uint16`` when that is exact, else as ``float64``.
"""

from __future__ import annotations

import hashlib
import itertools
import marshal
import operator
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from curator.engine.dedup.follow import SortedSlots

#: The name the result is saved as in the page cache (:meth:`~curator.engine.corpus.store.PageStore.save_derived`).
NAME = "dedup"
#: The name the last result kept whole is saved as too: a result followed since is kept as
#: changes to it (:func:`encode_delta`), not whole again.
BASE_NAME = "dedup-base"
#: The name the operator's families answer is saved as (:func:`encode_families`).
FAMILIES_NAME = "dedup-families"
#: The name what names the pairs of the last result kept is saved as: its digest
#: (:func:`kept_digest`), then the digest of the result kept earlier with the very same pairs
#: that the families answer names (a result followed since and kept again without a pair
#: changing, by Health's count: the answer still groups its pairs).
PAIRS_NAME = "dedup-pairs"
#: The name the pairs changed since an earlier kept result's pairs are saved as, with the name of
#: the pairs of the result kept last (:func:`encode_pair_edits`): a families answer saved for the
#: earlier pairs is patched with them (:class:`~curator.engine.dedup.index.PairEdits`).
PAIR_EDITS_NAME = "dedup-pair-edits"
#: Bump when the signals, their thresholds or the shingle rules change.
FORMAT = 6
#: How many values a saved family holds (:class:`~curator.engine.dedup.index.Family`'s fields, in order).
FAMILY_FIELDS = 9
#: Families per part of a saved families answer (:func:`encode_families`).
FAMILY_PART = 256
SCORE_KEYS: tuple[str, ...] = ("title", "tags", "slug", "body", "containment")

Pair = tuple[str, str]


@dataclass(slots=True)
class Kept:
    """A full scan's verified result (see the module docstring)."""

    pairs: dict[str, dict[Pair, float]]  # signal -> pair -> score
    scores: MutableMapping[Pair, dict[str, float]]  # pair -> every signal's score (decoded: ScoreRows)
    inbound: dict[str, int]  # page -> distinct pages linking to it
    #: the operator's (content, name-only) family count, and the digest of the dismissed pairs it
    #: was counted with (:func:`dismissed_digest`): Health's figure without decoding the pairs
    count: tuple[bytes, int, int] = (b"", -1, -1)
    #: The basis (:mod:`curator.engine.dedup.follow`) the result was followed from, by its id, and
    #: the pages whose features then differed from the basis's (changed since it, or discounted
    #: anew): a later process following from the same basis reuses the other pages' scores.
    basis: tuple[bytes, tuple[str, ...]] = (b"", ())
    #: Every shingle (a sorted uint64 array) and the tags, then, of each page of ``basis`` whose
    #: text differed from the basis's: a later process that finds one changed again since puts
    #: these back in the counts first, so that they are the counts the pairs above were verified with.
    followed: dict[str, tuple[np.ndarray, tuple[str, ...]]] | None = None
    #: The result kept whole that this one is kept as changes to (:func:`encode_delta`), as
    #: decoded: its id, the pairs it holds scores of, its inbound counts; None: none known.
    base: KeptBase | None = None
    #: Decoded from a result kept as changes: the pairs whose scores the changes held themselves
    #: (every other score is the base's). A later result whose pairs are all the same is kept as
    #: these scores and those of the pages changed since, without listing every pair again.
    changed_scored: frozenset[Pair] = frozenset()
    #: Decoded ``lazy``: every pair (:attr:`pairs` then empty), as indexes (:class:`PairTable`).
    table: PairTable | None = None


@dataclass(slots=True, frozen=True)
class KeptBase:
    """What a result kept as changes to a whole one (:func:`encode_delta`) is compared with."""

    id: bytes
    basis: bytes  # the basis it was followed from (:attr:`Kept.basis`): changes are kept on it under the same
    scored: AbstractSet[Pair]
    inbound: dict[str, int]


def key_of(attachments_key: bytes, settings: object) -> bytes:
    """The key a result is saved with: the attachment files (the store's
    :meth:`~curator.engine.corpus.store.PageStore.attachments_key`) and the scan's ``settings``."""
    return hashlib.blake2b(attachments_key + b"\1" + repr((FORMAT, settings)).encode(), digest_size=16).digest()


def _pack(values: list[float], scale: int) -> tuple[str, bytes]:
    arr = np.array(values, dtype=np.float64)
    ints = np.rint(arr * scale)
    if len(arr) and (ints.min() < 0 or ints.max() > 65535 or not np.array_equal(ints / scale, arr)):
        return "d", arr.tobytes()
    return "H", ints.astype(np.uint16).tobytes()


def _unpack_array(packed: tuple[str, bytes], scale: int) -> np.ndarray:
    kind, data = packed
    return np.frombuffer(data, dtype=np.float64) if kind == "d" else np.frombuffer(data, dtype=np.uint16) / scale


def _unpack(packed: tuple[str, bytes], scale: int) -> list[float]:
    values: list[float] = _unpack_array(packed, scale).tolist()
    return values


class ScoreRows(MutableMapping[Pair, dict[str, float]]):
    """The score rows of a decoded result, kept as the decoded arrays: a pair's row (a dict of
    :data:`SCORE_KEYS`) is made when it is asked for, a pair found by its pages' places. A follow
    asks for a few hundred, where a dict of every row (95,000 at 300,000 pages) cost 0.2 s of
    every process that followed an append. Iterates as that dict would, changes included: the
    decoded pairs in their order, less those deleted, then the pairs set since that were not
    decoded (or were deleted first), in the order they were set."""

    def __init__(self, paths: list[str], places: Mapping[str, int], first: np.ndarray, second: np.ndarray,
                 columns: list[list[float]]) -> None:
        self._paths, self._places = paths, places
        self._first, self._second = first.astype(np.int64), second.astype(np.int64)
        keys = self._first << 32 | self._second
        self._order = np.argsort(keys, kind="stable")
        self._keys = keys[self._order]
        self._live = np.ones(len(keys), dtype=bool)  # the decoded rows not deleted
        self._columns = columns  # one list of every row's value a key of SCORE_KEYS
        self._made: dict[Pair, dict[str, float]] = {}  # rows made or set since
        self._apart: dict[Pair, None] = {}  # the pairs set since that no live decoded row holds

    def _decoded_at(self, pair: object) -> int | None:
        """Where ``pair`` is among the sorted keys of the decoded rows (live or not), if it is."""
        if not (isinstance(pair, tuple) and len(pair) == 2):
            return None
        i, j = self._places.get(pair[0]), self._places.get(pair[1])
        if i is None or j is None:
            return None
        key = i << 32 | j
        k = int(np.searchsorted(self._keys, key))
        return k if k < len(self._keys) and int(self._keys[k]) == key else None

    def _row(self, pair: object) -> int | None:
        """The live decoded row of ``pair``, if any."""
        k = self._decoded_at(pair)
        if k is None:
            return None
        row = int(self._order[k])
        return row if self._live[row] else None

    def _decoded_pairs(self, rows: np.ndarray) -> Iterator[Pair]:
        """The decoded pairs of ``rows`` (places in the decoded order)."""
        get = self._paths.__getitem__
        return zip(map(get, self._first[rows].tolist()), map(get, self._second[rows].tolist()), strict=True)

    def __getitem__(self, pair: Pair) -> dict[str, float]:
        made = self._made.get(pair)
        if made is not None:
            return made
        row = self._row(pair)
        if row is None:
            raise KeyError(pair)
        made = self._made[pair] = {k: c[row] for k, c in zip(SCORE_KEYS, self._columns, strict=True)}
        return made

    def __setitem__(self, pair: Pair, row: dict[str, float]) -> None:
        self._made[pair] = row
        if pair not in self._apart and self._row(pair) is None:
            self._apart[pair] = None

    def __delitem__(self, pair: Pair) -> None:
        row = self._row(pair)
        if row is None and pair not in self._apart:
            raise KeyError(pair)
        if row is not None:
            self._live[row] = False
        self._made.pop(pair, None)
        self._apart.pop(pair, None)

    def __contains__(self, pair: object) -> bool:
        return pair in self._apart or self._row(pair) is not None

    def __iter__(self) -> Iterator[Pair]:
        yield from self._decoded_pairs(np.flatnonzero(self._live))
        yield from list(self._apart)

    def __len__(self) -> int:
        return int(self._live.sum()) + len(self._apart)

    def _rows_touching(self, pages: AbstractSet[str]) -> np.ndarray:
        """The live decoded rows with one of ``pages`` (found at once: pair by pair, 95,000 of
        them at 300,000 pages, they cost 0.09 s)."""
        at = np.array([i for i in map(self._places.get, pages) if i is not None], dtype=np.int64)
        if not len(at):
            return np.zeros(len(self._live), dtype=bool)
        out: np.ndarray = self._live & (np.isin(self._first, at) | np.isin(self._second, at))
        return out

    def touching(self, pages: AbstractSet[str]) -> list[Pair]:
        """Every pair with one of ``pages``."""
        out = list(self._decoded_pairs(np.flatnonzero(self._rows_touching(pages))))
        return out + [pair for pair in self._apart if pair[0] in pages or pair[1] in pages]

    def drop_touching(self, pages: AbstractSet[str]) -> None:
        """Delete every pair with one of ``pages``."""
        self._live &= ~self._rows_touching(pages)
        for pair in [pair for pair in (*self._made, *self._apart) if pair[0] in pages or pair[1] in pages]:
            self._made.pop(pair, None)
            self._apart.pop(pair, None)

    def decoded(self) -> AbstractSet[Pair]:
        """The pairs as decoded (whatever was set or deleted since)."""
        return _DecodedPairs(self)


class _DecodedPairs(AbstractSet[Pair]):
    """The pairs a :class:`ScoreRows` decoded, found as it finds them (not a set of 95,000 pairs
    made at 300,000 pages: what a result kept as changes is compared with, :attr:`KeptBase.scored`)."""

    def __init__(self, rows: ScoreRows) -> None:
        self._rows = rows  # (only its decoded arrays are read: they never change)

    def __contains__(self, pair: object) -> bool:
        return self._rows._decoded_at(pair) is not None

    def __iter__(self) -> Iterator[Pair]:
        return self._rows._decoded_pairs(np.arange(len(self)))

    def __len__(self) -> int:
        return len(self._rows._keys)


def pairs_touching(scores: Mapping[Pair, object], pages: AbstractSet[str]) -> list[Pair]:
    """The pairs of ``scores`` with one of ``pages``."""
    if isinstance(scores, ScoreRows):
        return scores.touching(pages)
    return [pair for pair in scores if pair[0] in pages or pair[1] in pages]


def _parts(kept: Kept) -> tuple[Any, ...]:
    """``kept``'s pairs, scores, inbound counts and followed pages, encoded."""
    paths = sorted({p for pairs in kept.pairs.values() for pair in pairs for p in pair}
                   | {p for pair in kept.scores for p in pair} | set(kept.inbound))
    at = {p: i for i, p in enumerate(paths)}

    def ends(pairs: Iterable[Pair]) -> tuple[bytes, bytes]:
        listed = list(pairs)
        return (array("i", [at[a] for a, _ in listed]).tobytes(), array("i", [at[b] for _, b in listed]).tobytes())

    signals = []
    for signal, pairs in sorted(kept.pairs.items()):
        signals.append((signal, *ends(pairs), _pack(list(pairs.values()), 10_000)))
    scored = list(kept.scores)
    rows = [_pack([kept.scores[p][k] for p in scored], 1000) for k in SCORE_KEYS]
    inbound = array("i", [kept.inbound.get(p, -1) for p in paths]).tobytes()
    followed = sorted((kept.followed or {}).items())
    shingled = ("\0".join(p for p, _ in followed), array("i", [len(v) for _, (v, _) in followed]).tobytes(),
                b"".join(v.astype(np.uint64).tobytes() for _, (v, _) in followed), [list(t) for _, (_, t) in followed])
    return ("\0".join(paths), signals, ends(scored), rows, inbound, kept.basis[0], "\0".join(kept.basis[1]), shingled)


def encode(kept: Kept, key: bytes, own: bytes = b"") -> bytes:
    """``kept`` whole; ``own``: the id a result kept as changes to it names it by (a whole one
    is saved as :data:`BASE_NAME` too)."""
    # (level 1: a result followed from the basis is saved after every change; level 6 took 4x
    # as long for a blob 10 % smaller)
    return zlib.compress(marshal.dumps((FORMAT, key, kept.count, own, b"", "", *_parts(kept))), 1)


def encode_delta(kept: Kept, key: bytes, base: KeptBase, changed: Iterable[str]) -> bytes:
    """``kept`` as changes to the whole result ``base``: the pairs and scores of the ``changed``
    pages (those whose pairs may differ from the base's: every page changed or discounted anew
    since the basis both are followed from), the scores the base does not hold, the inbound
    counts that differ from the base's; the counts and followed pages whole. What a followed
    result costs to keep is then what changed since the scan, not every pair of the wiki (0.4 s
    at 100,000 pages)."""
    moved = set(changed)

    def touches(pair: Pair) -> bool:
        return pair[0] in moved or pair[1] in moved

    part = Kept({s: {pair: v for pair, v in pairs.items() if touches(pair)} for s, pairs in kept.pairs.items()},
                {pair: v for pair, v in kept.scores.items() if touches(pair) or pair not in base.scored},
                {p: n for p, n in kept.inbound.items() if base.inbound.get(p) != n},
                kept.count, kept.basis, kept.followed)
    return zlib.compress(marshal.dumps((FORMAT, key, kept.count, b"", base.id, "\0".join(sorted(moved)),
                                        *_parts(part))), 1)


class PairTable:
    """Every verified pair of a kept result, per signal, as indexes into its pages (``int32``) with
    their scores: what a follow decodes instead of a dict of every pair (0.4 s to decode and file
    at 100,000 pages). The pairs of the pages a follow re-examines are taken out as it asks
    (:meth:`take`); the rest only when an answer asks for every pair (:meth:`take_all`). A pair
    is handed out once."""

    def __init__(self, paths: list[str], signals: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                 places: SortedSlots | None = None) -> None:
        self.paths = paths
        self.signals = signals  # signal -> (first page, second page, score)
        self._left = {signal: np.ones(len(a), dtype=bool) for signal, (a, _b, _v) in signals.items()}
        self._slot = places  # (made when first asked for)
        self._taken: set[str] = set()  # the pages whose pairs were handed out

    def slot(self) -> SortedSlots:
        """Each path's place (a decoded result's paths found by bisection: a dict of the 206,000
        of them at 300,000 pages cost 0.05 s of every follow, which asks for a few)."""
        if self._slot is None:
            self._slot = SortedSlots(self.paths, 0)
        return self._slot

    def take(self, pages: Iterable[str]) -> list[tuple[str, str, str, float]]:
        """(signal, a, b, score) of every pair with one of ``pages`` not handed out before."""
        slot = self.slot()
        new = [p for p in dict.fromkeys(pages) if p not in self._taken]
        self._taken.update(new)
        at = np.array([slot[p] for p in new if p in slot], dtype=np.int32)
        out: list[tuple[str, str, str, float]] = []
        if not len(at):
            return out
        paths = self.paths
        for signal, (a, b, v) in self.signals.items():
            left = self._left[signal]
            hit = np.flatnonzero(left & (np.isin(a, at) | np.isin(b, at)))
            left[hit] = False
            out += [(signal, paths[i], paths[j], score)
                    for i, j, score in zip(a[hit].tolist(), b[hit].tolist(), v[hit].tolist(), strict=True)]
        return out

    def take_all(self) -> dict[str, dict[Pair, float]]:
        """Every pair not handed out yet, per signal."""
        paths, out = self.paths, {}
        get = paths.__getitem__
        for signal, (a, b, v) in self.signals.items():
            left = self._left[signal]
            hit = np.flatnonzero(left)
            left[hit] = False
            ends = zip(map(get, a[hit].tolist()), map(get, b[hit].tolist()), strict=True)
            out[signal] = dict(zip(ends, v[hit].tolist(), strict=True))
        return out

    def merged(self, changes: PairTable, moved: set[str]) -> PairTable:
        """This table's pairs but those with a ``moved`` page, and every pair of ``changes``
        (what :func:`encode_delta` kept: the pairs of those pages now)."""
        slot = self.slot()
        extra = [p for p in dict.fromkeys(changes.paths) if p not in slot]
        paths = [*self.paths, *extra]
        added = {p: len(self.paths) + k for k, p in enumerate(extra)}
        gone = np.array([slot[p] for p in moved if p in slot], dtype=np.int32)
        remap = np.array([slot[p] if p in slot else added[p] for p in changes.paths], dtype=np.int32)
        none = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64))
        signals = {}
        for signal in sorted(self.signals.keys() | changes.signals.keys()):
            a, b, v = self.signals.get(signal, none)
            ca, cb, cv = changes.signals.get(signal, none)
            keep = ~(np.isin(a, gone) | np.isin(b, gone))
            signals[signal] = (np.concatenate([a[keep], remap[ca]]), np.concatenate([b[keep], remap[cb]]),
                               np.concatenate([v[keep], cv]))
        return PairTable(paths, signals, SortedSlots(paths, slot.ascending))


def decode(blob: bytes, key: bytes, base: Callable[[], bytes | None] | None = None, *,
           lazy: bool = False) -> Kept | None:
    """The result :func:`encode` or :func:`encode_delta` wrote with ``key`` (``base``: gives the
    result saved as :data:`BASE_NAME`, which one kept as changes is made whole with); None for
    any other (or a damaged) blob, or changes to a base that is not the one saved. ``lazy``: its
    pairs as a :class:`PairTable` (:attr:`Kept.table`, :attr:`Kept.pairs` left empty)."""
    try:
        (version, saved_key, count, own, base_id, changed, joined, signals, (sa, sb), rows, inbound_b, basis_id,
         basis_pages, (f_joined, f_lengths, f_values, f_tags)) = marshal.loads(zlib.decompress(blob))
        if version != FORMAT or saved_key != key:
            return None
        paths = joined.split("\0") if joined else []

        def pairs_of(a: bytes, b: bytes) -> list[Pair]:
            get = paths.__getitem__  # (one map in C a column: 48,000 scored pairs at 100,000 pages)
            return list(zip(map(get, array("i", a)), map(get, array("i", b)), strict=True))

        ascending = all(map(operator.lt, paths, itertools.islice(paths, 1, None)))  # (as _parts writes them)
        places = SortedSlots(paths, len(paths) if ascending else 0)
        pairs: dict[str, dict[Pair, float]] = {}
        table = None
        if lazy:
            arrays = {}
            for signal, a, b, v in signals:
                ia, ib = np.frombuffer(a, dtype=np.int32), np.frombuffer(b, dtype=np.int32)
                values = _unpack_array(v, 10_000)
                if not len(ia) == len(ib) == len(values) or (len(ia) and (
                        min(ia.min(), ib.min()) < 0 or max(ia.max(), ib.max()) >= len(paths))):
                    return None
                arrays[str(signal)] = (ia, ib, values)
            table = PairTable(paths, arrays, places)
        else:
            pairs = {signal: dict(zip(pairs_of(a, b), _unpack(v, 10_000), strict=True))
                     for signal, a, b, v in signals}
        first, second = np.frombuffer(sa, dtype=np.int32), np.frombuffer(sb, dtype=np.int32)
        columns = [_unpack(r, 1000) for r in rows]
        if (len(first) != len(second) or len(columns) != len(SCORE_KEYS) or any(len(c) != len(first) for c in columns)
                or (len(first) and (min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >= len(paths)))):
            return None
        scores = ScoreRows(paths, places, first, second, columns)  # (each row made when asked for)
        counts = array("i", inbound_b)
        inbound = {p: n for p, n in zip(paths, counts, strict=True) if n >= 0}
        lengths = array("i", f_lengths).tolist()
        f_array = np.frombuffer(f_values, dtype=np.uint64)
        if sum(lengths) != len(f_array):
            return None
        ends_at = np.cumsum([0, *lengths]).tolist()
        followed = {p: (f_array[ends_at[i]:ends_at[i + 1]], tuple(str(t) for t in f_tags[i]))
                    for i, p in enumerate(f_joined.split("\0") if f_joined else [])}
        if len(followed) != len(lengths) or len(f_tags) != len(lengths):
            return None
    except (ValueError, TypeError, EOFError, IndexError, zlib.error, AttributeError):
        return None
    basis = (bytes(basis_id), tuple(basis_pages.split("\0")) if basis_pages else ())
    if not base_id:
        whole = Kept(pairs, scores, inbound, count, basis, followed, table=table)
        if own:
            whole.base = KeptBase(bytes(own), basis[0], scores.decoded(), dict(inbound))
        return whole
    found = base() if base is not None else None
    under = decode(found, key, lazy=lazy) if found is not None else None
    if under is None or under.base is None or under.base.id != base_id or under.basis[0] != basis[0]:
        return None  # (the base was replaced by a later scan's, or is damaged)
    moved = set(changed.split("\0")) if changed else set()
    own_scored = frozenset(scores)
    if table is not None and under.table is not None:
        table = under.table.merged(table, moved)
    for signal, found_pairs in under.pairs.items():
        merged = {pair: v for pair, v in found_pairs.items() if pair[0] not in moved and pair[1] not in moved}
        merged.update(pairs.get(signal, {}))
        pairs[signal] = merged
    merged_scores = under.scores  # (decoded for this alone: changed in place)
    assert isinstance(merged_scores, ScoreRows)  # (as decode makes them)
    merged_scores.drop_touching(moved)
    merged_scores.update(scores)
    merged_inbound = dict(under.inbound)
    merged_inbound.update(inbound)
    return Kept(pairs, merged_scores, merged_inbound, count, basis, followed, under.base, own_scored, table)


def kept_count(blob: bytes, key: bytes, dismissed: bytes) -> tuple[int, int] | None:
    """The operator's (content, name-only) family count a result holds, if it was counted with
    the same dismissed pairs (``dismissed``: their :func:`dismissed_digest`); else None."""
    try:
        version, saved_key, (digest, content, names), *_ = marshal.loads(zlib.decompress(blob))
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    if version != FORMAT or saved_key != key or digest != dismissed or content < 0:
        return None
    return int(content), int(names)


def kept_digest(blob: bytes) -> bytes:
    """What names the bytes of one kept result (what a families answer saved beside it names)."""
    return hashlib.blake2b(blob, digest_size=16).digest()


#: Whose inbound counts a families answer's rows hold: (the id of the basis they were followed
#: from, the counts of the pages whose count differs from the basis's). Two answers with frames of
#: the same basis differ in a page's count only where those dicts do (see
#: :func:`inbound_moved_between`); without one, every member's count is looked up again.
InboundFrame = tuple[bytes, dict[str, int]]


def encode_families(key: bytes, dismissed: bytes, kept: bytes, parts: list[bytes],
                    frame: InboundFrame | None = None) -> bytes:
    """The operator's families answer, built with ``dismissed`` (:func:`dismissed_digest`) from
    the pairs of the kept result ``kept`` (:func:`kept_digest`), under ``key`` (:func:`key_of`),
    as ``parts`` (:func:`encode_family_part`): a part whose families an answer did not build
    again is saved as it was, never encoded again (encoding 31,000 families whole cost 0.2 s of
    every answer after an append at 100,000 pages). ``frame``: whose inbound counts its rows
    hold (:data:`InboundFrame`), when known."""
    if frame is None:
        return marshal.dumps((FORMAT, key, dismissed, kept, parts))
    return marshal.dumps((FORMAT, key, dismissed, kept, parts, frame))


def encode_family_part(rows: list[tuple[Any, ...]]) -> bytes:
    """Up to :data:`FAMILY_PART` families, each its fields in order (plain lists, dicts, strings
    and numbers)."""
    return zlib.compress(marshal.dumps(rows), 1)


def decode_families(blob: bytes, key: bytes, dismissed: bytes
                    ) -> tuple[bytes, list[bytes], InboundFrame | None] | None:
    """(the kept result's digest, the parts, the inbound frame or None) of an
    :func:`encode_families` saved with ``key`` and ``dismissed``; None for another one, or a
    damaged one. A frame that is not one is read as none (every count is then looked up)."""
    try:
        version, saved_key, saved_dismissed, kept, parts, *rest = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    if (version != FORMAT or saved_key != key or saved_dismissed != dismissed or not isinstance(kept, bytes)
            or not isinstance(parts, list) or not all(type(p) is bytes for p in parts) or len(rest) > 1):
        return None
    frame = rest[0] if rest else None
    if not (type(frame) is tuple and len(frame) == 2 and type(frame[0]) is bytes and type(frame[1]) is dict
            and all(type(p) is str and type(n) is int for p, n in frame[1].items())):
        frame = None
    return kept, parts, frame


def inbound_moved_between(before: InboundFrame | None, now: InboundFrame | None) -> set[str] | None:
    """The pages whose inbound count differs between two frames of the same basis (a page in one
    frame's dict only has the basis's count in the other); None when that cannot be told (no
    frame, or frames of different bases)."""
    if before is None or now is None or before[0] != now[0]:
        return None
    a, b = before[1], now[1]
    return {p for p in a.keys() | b.keys() if a.get(p) != b.get(p)}


def decode_family_part(part: bytes) -> list[tuple[Any, ...]] | None:
    """The families' rows of an :func:`encode_family_part`; None for a damaged one."""
    try:
        rows = marshal.loads(zlib.decompress(part))
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    if not isinstance(rows, list) or not all(
            type(r) is tuple and len(r) == FAMILY_FIELDS and type(r[0]) is list and type(r[1]) is str
            and type(r[7]) is list and type(r[8]) is list for r in rows):
        return None
    return rows


def dismissed_digest(pairs: Iterable[Pair]) -> bytes:
    """A digest of a set of dismissed pairs (any order)."""
    text = "\n".join(sorted(f"{a}\0{b}" for a, b in pairs)).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(text, digest_size=16).digest()



def encode_pair_edits(named: bytes, since: bytes, was: dict[tuple[str, str, str], bool]) -> bytes:
    """The pairs (signal, a, b) that changed from the pairs named ``since`` to those named
    ``named`` (:func:`kept_digest`), each with whether it was there then."""
    edits = sorted(was.items())
    return zlib.compress(marshal.dumps((FORMAT, named, since, [(*pair, there) for pair, there in edits])), 1)


def decode_pair_edits(blob: bytes | None, named: bytes | None
                      ) -> tuple[bytes, dict[tuple[str, str, str], bool]] | None:
    """(the name of the earlier pairs, the changed pairs) of an :func:`encode_pair_edits` saved
    for the pairs named ``named``; None for none, another one's, or a damaged one."""
    if blob is None or named is None:
        return None
    try:
        version, saved, since, edits = marshal.loads(zlib.decompress(blob))
        if version != FORMAT or saved != named or not isinstance(since, bytes):
            return None
        was = {(str(signal), str(a), str(b)): bool(there) for signal, a, b, there in edits}
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    return since, was
