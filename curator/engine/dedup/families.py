"""The answers the review queue asks of a dedup index: duplicate families, candidate pairs, their
count (Health's figure) and the keep rule that names each survivor (docs/design.md §9, §12).

:class:`~curator.engine.dedup.index.DedupIndex` finds and verifies the pairs of every signal and
keeps them up to date page by page; this module reads them for one reader (the pages an agent may
not see never join a family), joins the pairs whose text says they are copies into families,
ranks them by impact, and saves what an answer computed as the result the next process starts
from (:mod:`curator.engine.dedup.cache`). :func:`answers_for` keeps one :class:`FamilyAnswers` per
wiki beside its index (both on the wiki's session).

**Families** (:func:`find_families`, ``curator dedup --groups``) are the connected pages of the
pairs whose text says they are copies (body, containment); name-only pairs never join pages (a
page sharing a copy's title is not one more copy) and stay families of their own two pages,
ranked after the others. Each family names its survivor by the same keep rule as a pair
(:meth:`FamilyAnswers.keep_rank`: more trust, then more inbound links, then the older page) and
is ranked by impact (inbound links and trust of its pages).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import itertools
import os
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from typing import Any, NamedTuple

from curator.engine.corpus.links import LinkIndex
from curator.engine.corpus.lookalike import lookalike_groups, lookalike_key
from curator.engine.corpus.store import PageStore, gc_paused
from curator.engine.dedup import cache as dedup_cache
from curator.engine.dedup import follow as dedup_follow
from curator.engine.dedup.follow import DamagedBasis
from curator.engine.dedup.index import (
    CONTENT_SIGNALS,
    KEPT_FAMILY_MAX,
    LOOKALIKE,
    MAX_FANOUT,
    REPORTED_SIGNALS,
    SETTINGS,
    SIGNALS,
    Candidate,
    DedupIndex,
    Family,
    FollowedCount,
    NeedScan,
    dismissed_pairs,
    index_for,
    pair_key,
    signal_words,
)
from curator.engine.errors import CuratorError
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki

_NONE: frozenset[str] = frozenset()
#: Up to how many folded names :func:`_lookalike_pairs` looks for among every path one at a time.
_LOOKALIKE_SCANS = 8

#: Up to how many pages an answer ranks from their own records (decoding each) before it reads
#: the listing of every page instead (see ``FamilyAnswers._ranked``).
RANK_FROM_PAGES = 256


class Ranked(NamedTuple):
    """What the keep rule reads of a page (from the page cache's listing, or the page's record
    when an answer asks for a few)."""

    path: str
    title: str
    trust: float
    age: str  # its ``created`` date, else its file's mtime (ISO 8601, UTC): the older sorts first


def by_impact(families: list[Family]) -> list[Family]:
    """``families`` in the order they are listed: content families first, then by impact, size,
    survivor and pages."""
    return sorted(families, key=lambda f: (f.strength != "content", -f.impact, -len(f.pages), f.keep, f.pages))


class _Saved(NamedTuple):
    """An answer's families in the order they are saved, and its parts in order: how many of
    those families each holds (:data:`~curator.engine.dedup.cache.FAMILY_PART` when built
    whole), with its bytes as saved when none of its families was built again (None: encoded
    when saved)."""

    families: list[Family]
    parts: list[tuple[int, bytes | None]]
    #: Whose inbound counts the families' rows hold (None: not followed from a basis).
    frame: dedup_cache.InboundFrame | None = None


class FamilyAnswers:
    """What one wiki's dedup index answers, for any reader (see the module docstring)."""

    def __init__(self, index: DedupIndex) -> None:
        self.index = index
        self.wiki = index.wiki
        self._links: LinkIndex | None = None  # the link index of the families being built
        #: every page's inbound count as the scan or the follow found them (empty: none found)
        self._inbound: Mapping[str, int] = {}
        self._counted: dict[str, int] = {}  # the counts read from the link index so far
        #: The fired pairs and groups one answer computed (:meth:`_answering`): an answer and the
        #: save of its result (:meth:`_keep`) ask for the same ones up to four times.
        self._memo: dict[tuple[Any, ...], Any] | None = None
        #: The operator's last families answer: (the state it is of, the digest of the dismissed
        #: pairs it left out, the families, as saved), and what was last saved of one
        #: (:meth:`_save_families`).
        self._answered: tuple[bytes | None, bytes, list[Family], _Saved] | None = None
        self._families_saved: tuple[bytes, bytes, bytes] | None = None

    def answered(self, state: bytes | None, dismissed: bytes) -> list[Family] | None:
        """The operator's last families answer when it is of the pages at ``state`` with the
        dismissed pairs of digest ``dismissed`` (None: it is not, or there is none)."""
        answered = self._answered
        if answered is None or state is None or answered[:2] != (state, dismissed):
            return None
        return answered[2]

    def keep(self) -> None:
        """Save the result of the last scan or update for the next process, if it is not saved
        yet. A scan's is saved with its first answer; an update's by this call, which the station
        makes in the background once the answer is shown (saving costs more than the update)."""
        with self.index.lock, gc_paused():
            if self.index.unkept is not None:
                self._keep()
                self._save_families()

    def _save_families(self) -> None:
        """Save the operator's last families answer beside the kept result whose pairs it
        grouped (:func:`~curator.engine.dedup.cache.encode_families`), under the state it was
        built for, once: while this index holds the pairs of a kept result and the answer is
        of the pages as they are. Call with the lock held."""
        answered, index, store = self._answered, self.index, self.wiki.store
        if answered is None or index.kept_digest is None:
            return
        state, dismissed, _out, saved_as = answered
        if state is None or state != index.at_state or state != store.state:
            return
        saved = (state, dismissed, index.kept_digest)
        if saved == self._families_saved:
            return
        families, at, parts = saved_as.families, 0, []
        for size, found in saved_as.parts:
            parts.append(found if found is not None else dedup_cache.encode_family_part(
                [(f.pages, f.keep, f.reason, f.scores, f.signals, f.strength, f.impact, f.members, f.edges)
                 for f in families[at:at + size]]))
            at += size
        blob = dedup_cache.encode_families(index.kept_key(), dismissed, index.kept_digest, parts, saved_as.frame)
        if store.save_derived(dedup_cache.FAMILIES_NAME, blob, state=state):  # (not when the pages moved on)
            self._families_saved = saved
            index.examined.clear()  # (what their verification changed is in the answer saved)
            if index.pair_edits is not None:  # (the answer saved is of these very pairs: none changed since)
                index.pair_edits = None
                store.save_derived(dedup_cache.PAIR_EDITS_NAME, dedup_cache.encode_pair_edits(
                    index.kept_digest, index.kept_digest, {}))

    def _patched(self, dismissed: set[tuple[str, str]]) -> _Saved | None:
        """The operator's families from the answer saved beside the kept result whose pairs
        this index holds (:meth:`_save_families`), without grouping every pair: the families are
        those very groups, and only a family with a page changed or re-examined since, or whose
        inbound counts moved, is built again (a page's title, trust, age and pair scores are
        those of the answer while it did not change), in its place. Where pairs changed since
        the pairs it grouped (:attr:`~curator.engine.dedup.index.DedupIndex.pair_edits`), the
        families those pairs' pages are in, then and now, are grouped again from the pairs
        around them alone (:meth:`_regrouped`). None when there is no such answer. Call with
        the lock held."""
        index, store = self.index, self.wiki.store
        if index.at_state is None or (index.kept_digest is None and index.pair_edits is None):
            return None
        found = store.derived_since(dedup_cache.FAMILIES_NAME)
        if found is None:
            return None
        decoded = dedup_cache.decode_families(found[0], index.kept_key(), dedup_cache.dismissed_digest(dismissed))
        if decoded is None:
            return None
        region: set[str] = set()
        regrouped: list[Family] = []
        if decoded[0] != index.kept_digest:
            edits = index.pair_edits
            if edits is None or decoded[0] != edits.since:
                return None
            region, regrouped = self._regrouped(edits.was, dismissed)
        dirty = found[1].union(index.examined)  # (changed since it was saved; verified again since)
        inbound = self.inbound
        frame = self._frame()
        # The pages whose inbound count moved since the answer was saved, when both counts were
        # followed from the same basis: then a family is checked with one intersection, not a
        # look-up of each of its members' counts (100,000 of them at 300,000 pages: 0.6 s)
        moved = dedup_cache.inbound_moved_between(decoded[2], frame)
        if moved is not None:
            dirty |= moved
        out: list[Family] = []
        parts: list[tuple[int, bytes | None]] = []
        try:
            for part in decoded[1]:
                rows = dedup_cache.decode_family_part(part)
                if rows is None:
                    return None
                built, kept = False, 0
                for row in rows:
                    pages, strength, members, edges = row[0], row[5], row[7], row[8]
                    if region and region.intersection(pages):
                        built = True  # (grouped again below)
                        continue
                    kept += 1
                    if dirty.intersection(pages) or (
                            moved is None and any(m["inbound"] != inbound(m["path"]) for m in members)):
                        out.append(self._family(list(pages), {pair_key(*e["pages"]): e["signals"] for e in edges},
                                                strength))
                        built = True
                    else:
                        out.append(Family(*row))
                if kept:
                    parts.append((kept, None if built else part))
        except (TypeError, KeyError, ValueError, AttributeError):
            return None  # (damaged: the families are grouped again)
        size = dedup_cache.FAMILY_PART
        parts += [(len(regrouped[i:i + size]), None) for i in range(0, len(regrouped), size)]
        return _Saved(out + regrouped, parts, frame)

    def _regrouped(self, was: dict[tuple[str, str, str], bool], dismissed: set[tuple[str, str]]
                   ) -> tuple[set[str], list[Family]]:
        """The operator's families holding a page whose families may differ from an answer
        grouped before the pair changes ``was`` (see :meth:`_count_followed`): the pages of the
        content families holding a page with a changed pair, then and now (``region``: every
        family of the earlier answer with one of them is left out), and the families they are in
        now, content and name-only, built. Call with the lock held."""
        around = _Around(self.index, self.wiki.store, was, dismissed, self._memo)
        _then, content, region = around.region()
        out = []
        for family in content:
            edges = {}
            for page in family:
                for other, signals in around.fired(page, then=False).items():
                    if signals & CONTENT_SIGNALS and page < other:
                        edges[(page, other)] = _in_order(signals)
            out.append(self._family(sorted(family), edges, "content"))
        for pair, signals in sorted(around.name_pairs(region, then=False).items()):
            out.append(self._family(list(pair), {pair: _in_order(signals)}, "names"))
        return region, out

    def _frame(self) -> dedup_cache.InboundFrame | None:
        """Whose inbound counts this answer reads (:data:`~curator.engine.dedup.cache.InboundFrame`):
        those followed from a basis, when no kept result holds counts of its own; else None."""
        if self.index.kept is not None:
            return None
        frame: dedup_cache.InboundFrame | None = getattr(self._inbound, "frame", None)
        return frame

    def _keep(self) -> None:
        """Save the last full scan's result for its store state (once, after its first answer: the
        scores and inbound counts that answer computed are reused), unless the pages changed since
        or it read other bytes than the store (see :meth:`_all_shingles`). Call with the lock held."""
        token, self.index.unkept = self.index.unkept, None
        store = self.wiki.store
        if token is None or store.state != token:
            return
        # Many pages followed since the basis: a new basis first (what each later process
        # follows from, re-reading only what changes after it), which this result then names,
        # the two saved as one (DedupIndex.publish_staged).
        self.index.compact_basis()
        if self.index.compacting_elsewhere:
            # (a process of its own makes it and keeps the result naming it: one kept here
            # would name the old basis, and a later process reading the two would scan)
            return
        try:
            self._keep_whole_or_carried()
        finally:
            self.index.drop_staged()  # (a new basis no result was kept with: not named)

    def _keep_whole_or_carried(self) -> None:
        """:meth:`_keep`'s result, as changes (:meth:`_keep_carried`) or whole, with the new basis
        staged for it if any (then whole: no page changed since it). Call with the lock held."""
        store = self.wiki.store
        staged = self.index.staged_basis
        if staged is None and self._keep_carried():
            return
        self.index.carried = None  # (what is kept next is counted anew)
        fired = self._fired(OPERATOR, set())  # every pair any actor's answer may show is one of these
        asked = set(fired)
        for members, _edges in self._groups(OPERATOR, set())[0]:
            if len(members) <= KEPT_FAMILY_MAX:  # (any two may be a survivor and a member)
                asked.update(itertools.combinations(sorted(members), 2))
        basis = self.index.result_basis()
        # A result followed since a whole one was kept (from the same basis) is kept as changes to
        # it: the scores of the pairs it does not hold and of the pages changed since the basis.
        base = self.index.kept_base
        if base is not None and (not basis[1] or base.basis != basis[0]):
            base = None
        moved = set(basis[1])
        scores = {pair: self.index.scores(*pair) for pair in sorted(asked)
                  if base is None or pair[0] in moved or pair[1] in moved or pair not in base.scored}
        inbound = {p: self.inbound(p) for pair in asked for p in pair}
        dismissed = dismissed_pairs(self.wiki)
        joined, alone = self._groups(OPERATOR, dismissed)  # (Health's figure, answered without the pairs)
        count = (dedup_cache.dismissed_digest(dismissed), len(joined), len(alone))
        kept = dedup_cache.Kept({s: dict(self.index.pairs[s]) for s in SIGNALS}, scores, inbound, count,
                                basis, self.index.followed_shingles())
        key = self.index.kept_key()
        if base is not None:
            blob = dedup_cache.encode_delta(kept, key, base, moved)
            if store.save_derived(dedup_cache.NAME, blob, unless=self._its_basis()):
                self._kept_as(blob)
            return
        own = os.urandom(16)
        blob = dedup_cache.encode(kept, key, own)
        if staged is not None:
            if not self.index.publish_staged([(dedup_cache.BASE_NAME, blob), (dedup_cache.NAME, blob)]):
                return
        elif not store.save_derived(dedup_cache.BASE_NAME, blob, unless=self._its_basis()):
            return
        else:
            store.save_derived(dedup_cache.NAME, blob, unless=self._its_basis())
        self._kept_as(blob)
        self.index.kept_base = dedup_cache.KeptBase(own, basis[0], frozenset(scores), dict(inbound))


    # --- answers ---------------------------------------------------------------------------------
    def _keep_carried(self) -> bool:
        """Keep a followed result as changes to the same base as the result kept before it
        (:attr:`~curator.engine.dedup.index.DedupIndex.carried`), without grouping every pair:
        what is written is the pairs and scores of the pages changed since the basis, the scores
        the earlier changes held, and the inbound counts that differ from the base's. What an
        append costs to keep is then what it changed.

        While no pair changed since that result, its families, count and the pairs it asks scores
        for are the earlier one's. Where pairs changed (``carried.touched``: their pages), every
        family holding none of those pages is still an earlier one, so the count is followed over
        theirs (:meth:`_operator_count`), and the pairs asked for besides the earlier ones are
        those of the touched pages and any two pages of a family holding one (as :meth:`_keep`
        asks of every family). :meth:`_keep` does the rest when this cannot: the dismissed pairs
        changed, no base, the inbound counts are not followed, or the changed pairs outgrew
        their count. Call with the lock held."""
        index = self.index
        carried, base, known = index.carried, index.kept_base, index.known_inbound()
        basis = index.result_basis()
        dismissed = dismissed_pairs(self.wiki)
        if (carried is None or base is None or not basis[1] or base.basis != basis[0] or not known
                or carried.count[0] != dedup_cache.dismissed_digest(dismissed)):
            return False
        followed = index.followed_count
        if carried.touched and (followed is None or followed.count[0] != carried.count[0]):
            return False  # (its count is grouped from every pair: so is the result)
        moved = set(basis[1])
        index.file_pairs(moved)
        count = (carried.count[0], *self._operator_count(dismissed))
        asked = set(carried.changed_scored)
        asked.update(dedup_cache.pairs_touching(carried.scored, moved))
        held, new = carried.inbound, {}
        if carried.touched:
            around = _Around(index, self.wiki.store, {}, set(), self._memo)  # (families as _keep asks of them: none dismissed)
            around.file(carried.touched)
            for page in carried.touched:
                asked.update(pair_key(page, other) for signal in SIGNALS for other in around.mates(signal, page, False))
                asked.update(pair_key(page, other) for other in around.lookalike().get(page, ()))
            for family in around.families(sorted(carried.touched), then=False)[0]:
                if len(family) <= KEPT_FAMILY_MAX:  # (any two may be a survivor and a member)
                    asked.update(itertools.combinations(sorted(family), 2))
            new = {p: known[p] if p in known else self.inbound(p)
                   for p in sorted({p for pair in asked for p in pair if p not in held})}
            if new:
                held = {**held, **new}
        scores = {pair: index.scores(*pair) for pair in sorted(asked)}
        pairs: dict[str, dict[tuple[str, str], float]] = {}
        for signal in SIGNALS:
            found, partners = index.pairs[signal], index.partners[signal]
            pairs[signal] = {key: found[key] for key in
                             {pair_key(p, other) for p in moved for other in partners.get(p, ())}}
        # (the counts that differ from the base's: those the follow moved from the scan's, as the
        # base holds the scan's, and those of the pages the base holds none of, which earlier
        # changes or this one added; not a look-up for each of the 150,000 pages it holds at
        # 300,000. One left out is a count an answer from this result lacks: it would build the
        # link index of every page to find it, 6 s at 100,000 pages)
        inbound = {p: known[p] for p in sorted(index.inbound_moved) if p in held and p in known}
        inbound.update((p, known[p]) for p in sorted(held.keys() - base.inbound.keys()) if p in known)
        inbound.update(new)
        kept = dedup_cache.Kept(pairs, scores, inbound, count, basis, index.followed_shingles())
        blob = dedup_cache.encode_delta(kept, index.kept_key(), base, moved)
        if not self.wiki.store.save_derived(dedup_cache.NAME, blob, unless=self._its_basis()):
            return True  # (another process replaced the basis meanwhile: a result of the old one, not kept)
        self._kept_as(blob)
        # (the pairs are the kept result's now; which scores its changes hold moves, and the
        # pages it holds inbound counts of may grow)
        index.carried = dataclasses.replace(carried, count=count, changed_scored=frozenset(asked), inbound=held,
                                            touched=frozenset())
        return True

    def _its_basis(self) -> tuple[str, bytes] | None:
        """For a save of this index's result: not while the cache names another basis than the
        one the result names (another process made a new basis meanwhile: a result of the old
        one saved after it, the next process found the two apart and scanned, 52 s at 100,000
        pages). None when the index follows no basis."""
        basis_id = self.index.basis_id
        return (dedup_follow.NAME, basis_id) if basis_id else None

    def _kept_as(self, blob: bytes) -> None:
        """``blob`` was just kept, of this index's pairs: they are named as before when a kept
        result named them already (the families answer saved then groups them still), and the
        store says so of ``blob`` (:data:`~curator.engine.dedup.cache.PAIRS_NAME`); else by its
        own digest. Call with the lock held."""
        index = self.index
        digest = dedup_cache.kept_digest(blob)
        if index.kept_digest is None:
            index.kept_digest = digest
        elif index.kept_digest != digest:
            self.wiki.store.save_derived(dedup_cache.PAIRS_NAME, digest + index.kept_digest)
        edits = index.pair_edits
        if edits is not None:  # (what a families answer saved for the earlier pairs is patched with)
            self.wiki.store.save_derived(dedup_cache.PAIR_EDITS_NAME,
                                         dedup_cache.encode_pair_edits(index.kept_digest, edits.since, edits.was))

    def _fired(self, actor: Actor, dismissed: set[tuple[str, str]],
               page: str | None = None) -> dict[tuple[str, str], list[str]]:
        """Pair -> the signals that fired for it, over the pairs of pages ``actor`` may see (both
        pages), dismissed pairs left out. Call with the lock held."""
        memo = self._memo
        key = ("fired", actor, frozenset(dismissed), page)
        if memo is not None and key in memo:
            found: dict[tuple[str, str], list[str]] = memo[key]
            return found
        self.index.file_all()  # (every pair is read)
        pages = self.wiki.store.stamps()  # (which pages there are: nothing decoded for a count)
        known = pages.keys() if self.index.kept is not None else self.index.page_set()  # (a kept result: these pages)
        if actor.is_operator:
            visible = known & pages.keys()
        else:
            visible = {p for p in known if p in pages and self.wiki.visible(actor, p)}
        fired: dict[tuple[str, str], list[str]] = defaultdict(list)
        for signal in SIGNALS:
            partners = self.index.partners[signal]
            for pair in self.index.pairs[signal]:
                a, b = pair
                if a not in visible or b not in visible or pair in dismissed:
                    continue
                if page is not None and page not in pair:
                    continue
                if _crowded(signal, len(partners[a]), len(partners[b])):
                    continue
                fired[pair].append(signal)
        for pair in _lookalike_pairs(visible):
            if pair not in dismissed and (page is None or page in pair):
                fired[pair].append(LOOKALIKE)
        if memo is not None:
            memo[key] = fired
        return fired

    @contextmanager
    def _answering(self) -> Iterator[None]:
        """While one answer is computed (the lock held, the pairs as they are): :meth:`_fired` and
        :meth:`_groups` computed once per question (a scan meanwhile resets the memo: :meth:`_reset`)."""
        self._memo = {}
        try:
            yield
        finally:
            self._memo = None

    def candidates(self, actor: Actor = OPERATOR, dismissed: set[tuple[str, str]] | None = None,
                   page: str | None = None) -> list[Candidate]:
        """Candidate pairs ``actor`` may see (both pages), dismissed pairs left out."""
        with self.index.lock, self._answering():
            self._inbound = self.index.known_inbound()  # (see families)
            try:
                try:
                    fired = self._fired(actor, dismissed or set(), page)
                    out = [self._candidate(pair, signals) for pair, signals in fired.items()]
                except (NeedScan, DamagedBasis):
                    self.index.scan()
                    self._memo = {}  # (the pairs changed: nothing computed before the scan holds)
                    self._inbound = self.index.known_inbound()
                    fired = self._fired(actor, dismissed or set(), page)
                    out = [self._candidate(pair, signals) for pair, signals in fired.items()]
                if self.index.unkept is not None and not self.index.unkept_update:
                    self._keep()
            finally:
                self._inbound, self._counted = {}, {}
        out.sort(key=lambda c: (-len(c.signals), -max(c.scores[s] for s in c.signals), c.keep, c.merge))
        return out

    def families(self, actor: Actor = OPERATOR, dismissed: set[tuple[str, str]] | None = None) -> list[Family]:
        """Duplicate families ``actor`` may see (docs/design.md §12), highest impact first.

        A pair joins its pages into one family (connected components) only when their text says
        so: a content signal (body, containment). A pair with name signals only (a shared title,
        a similar slug, the same tags) never joins anything: it is a family of its own two pages
        (``strength`` ``names``) when neither page is in a content family, and is dropped
        otherwise (a page sharing a copy's title is not one more copy). Numbered series never pair at all (their names differ in the numbers).
        Families are built from the visible pages' pairs only: an agent never sees a hidden page,
        nor two pages joined through one.
        """
        with self.index.lock, gc_paused(), self._answering():  # thousands of families next to the wiki's millions of objects
            # one look-up (and policy check) for every page's count (a kept result holds its own)
            # (the scan counted every page's inbound links, or the load followed them: then none is built)
            self._inbound = self.index.known_inbound()
            self._links = self.wiki.links if self.index.kept is None and not self._inbound else None
            try:
                try:
                    saved_as = self._patched(dismissed or set()) if actor.is_operator else None
                    out = by_impact(saved_as.families) if saved_as is not None else self._families(actor, dismissed or set())
                except (NeedScan, DamagedBasis):  # a kept result without the scores a big family asks for
                    self.index.scan()
                    self._memo = {}  # (the pairs changed: nothing computed before the scan holds)
                    self._inbound = self.index.known_inbound()
                    saved_as = None
                    out = self._families(actor, dismissed or set())
                if self.index.unkept is not None and not self.index.unkept_update:
                    self._keep()
                if actor.is_operator:
                    if saved_as is None:  # (saved in the answer's order)
                        part = dedup_cache.FAMILY_PART
                        saved_as = _Saved(out, [(len(out[i:i + part]), None) for i in range(0, len(out), part)],
                                          self._frame())
                    self._answered = (self.index.at_state, dedup_cache.dismissed_digest(dismissed or set()), out,
                                      saved_as)
                    self._save_families()
                return out
            finally:
                self._links = None
                self._inbound, self._counted = {}, {}

    def _groups(self, actor: Actor, dismissed: set[tuple[str, str]]
                ) -> tuple[list[tuple[list[str], dict[tuple[str, str], list[str]]]],
                           list[tuple[tuple[str, str], list[str]]]]:
        """The families' pages before they are ranked (see :meth:`families`): (members, edges) of
        each content family, and the name-only pairs that are families of their own."""
        memo = self._memo
        key = ("groups", actor, frozenset(dismissed))
        if memo is not None and key in memo:
            found: tuple[list[tuple[list[str], dict[tuple[str, str], list[str]]]],
                         list[tuple[tuple[str, str], list[str]]]] = memo[key]
            if actor.is_operator:
                self._count_from(dismissed, found)
            return found
        fired = self._fired(actor, dismissed)
        parent: dict[str, str] = {}

        def root(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        strong = {pair: sig for pair, sig in fired.items() if CONTENT_SIGNALS & set(sig)}
        for a, b in strong:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        members: dict[str, list[str]] = defaultdict(list)
        edges: dict[str, dict[tuple[str, str], list[str]]] = defaultdict(dict)
        for x in parent:
            members[root(x)].append(x)
        for pair, sig in strong.items():
            edges[root(pair[0])][pair] = sig
        names = [(pair, sig) for pair, sig in fired.items()
                 if pair not in strong and pair[0] not in parent and pair[1] not in parent]
        out = [(members[r], edges[r]) for r in members], names
        if memo is not None:
            memo[key] = out
        if actor.is_operator:
            self._count_from(dismissed, out)
        return out

    def _count_from(self, dismissed: set[tuple[str, str]], groups: tuple[list[Any], list[Any]]) -> None:
        """The operator's count of the pairs as they are, grouped with ``dismissed`` left out:
        what later changes to the pairs are counted from (:meth:`_count_followed`)."""
        digest = dedup_cache.dismissed_digest(dismissed)
        self.index.followed_count = FollowedCount((digest, len(groups[0]), len(groups[1])), {})

    def _count_followed(self, followed: FollowedCount, dismissed: set[tuple[str, str]]) -> tuple[int, int]:
        """The operator's (content, name-only) family count now, from ``followed``'s count of the
        pairs as they were and the pairs changed since (:class:`~curator.engine.dedup.index.FollowedCount`),
        without grouping every pair; then the count is rebased on the pairs as they are. Call
        with the lock held.

        A pair whose answer changed has a page with a changed pair: its own pair, or a signal of
        that page crossing MAX_FANOUT. Every content family outside the region those pages make
        (:meth:`_Around.region`: their families then and now, made whole both ways) is the same
        family then and now, so the count moves by the region's families, then and now. A
        name-only family (a pair of two pages in no content family) changes only with a pair of a
        changed page, or when one of its pages joined or left every content family, which only
        pages of the region do: the difference is the region's name-only families, then and now."""
        around = _Around(self.index, self.wiki.store, followed.was, dismissed, self._memo)
        then_content, now_content, pages = around.region()
        counted = (followed.count[1] + len(now_content) - len(then_content),
                   followed.count[2] + len(around.name_pairs(pages, then=False)) - len(around.name_pairs(pages, then=True)))
        self.index.followed_count = FollowedCount((followed.count[0], *counted), {})
        return counted

    def _operator_count(self, dismissed: set[tuple[str, str]]) -> tuple[int, int]:
        """The operator's (content, name-only) family count of the pairs as they are: carried over
        when no pair changed since the result kept, followed over the changed pairs' families
        when that count is known, else by grouping every pair. Call with the lock held."""
        digest = dedup_cache.dismissed_digest(dismissed)
        carried, followed = self.index.carried, self.index.followed_count
        if carried is not None and not carried.touched and carried.count[0] == digest:
            return carried.count[1], carried.count[2]
        if followed is not None and followed.count[0] == digest:
            return self._count_followed(followed, dismissed)
        content, names = self._groups(OPERATOR, dismissed)
        return len(content), len(names)

    def _families(self, actor: Actor, dismissed: set[tuple[str, str]]) -> list[Family]:
        content, names = self._groups(actor, dismissed)
        out = [self._family(paths, edges, "content") for paths, edges in content]
        out += [self._family(list(pair), {pair: sig}, "names") for pair, sig in names]
        return by_impact(out)

    def count(self, actor: Actor = OPERATOR, dismissed: set[tuple[str, str]] | None = None) -> tuple[int, int]:
        """(content families, name-only families) :meth:`families` would list, without building
        them (no scores, no inbound counts): the Health figure."""
        with self.index.lock, gc_paused(), self._answering():
            dismissed = dismissed or set()
            if actor.is_operator:
                content_n, names_n = self._operator_count(dismissed)
            else:
                content, names = self._groups(actor, dismissed)
                content_n, names_n = len(content), len(names)
            if self.index.unkept is not None and not self.index.unkept_update:
                self._inbound = self.index.known_inbound()  # (a scan's or a followed basis's, else the link index)
                try:
                    self._keep()
                finally:
                    self._inbound, self._counted = {}, {}
        return content_n, names_n

    def _ranked(self, paths: Iterable[str]) -> list[Ranked]:
        """The keep rule's view of ``paths``: from the pages' own records while an answer asks
        for a few (one whose saved families stand but for a change asks for a family or two:
        the listing of every page cost 0.33 s of it at 300,000 pages), else from the listing and
        stamps, read once per answer."""
        memo = self._memo
        paths = list(paths)
        found = memo.get(("listing",)) if memo is not None else None
        store = self.wiki.store
        if found is None and memo is not None:
            own: dict[str, Ranked] = memo.setdefault(("ranked",), {})
            missing = [p for p in paths if p not in own]
            if len(own) + len(missing) <= RANK_FROM_PAGES:
                stamps = store.stamps(missing)
                for path in missing:
                    page = store.page(path)
                    if page is None or path not in stamps:
                        break  # (not a page now: the listing says what it holds)
                    age = page.created or _dt.datetime.fromtimestamp(stamps[path][0] / 1e9, _dt.UTC).isoformat()
                    own[path] = Ranked(path, page.title, page.trust, age)
                else:
                    return [own[p] for p in paths]
        if found is None:
            found = (store.details(), store.stamps())
            if memo is not None:
                memo[("listing",)] = found
        details, stamps = found
        out = []
        for path in paths:
            title, _, trust, created = details[path]
            age = created or _dt.datetime.fromtimestamp(stamps[path][0] / 1e9, _dt.UTC).isoformat()
            out.append(Ranked(path, title, trust, age))
        return out

    def _family(self, paths: list[str], edges: dict[tuple[str, str], list[str]], strength: str) -> Family:
        ordered = sorted(self._ranked(paths), key=self.keep_rank)
        keep = ordered[0]
        best: dict[str, float] = {}
        fired: set[str] = set()
        for pair, sig in edges.items():
            sc = self._pair_scores(pair, sig)
            fired.update(sig)
            for signal in sig:
                best[signal] = max(best.get(signal, 0.0), sc[signal])
        signals = [s for s in REPORTED_SIGNALS if s in fired]
        detail = []
        impact = 0.0
        for p in ordered:
            inbound = self.inbound(p.path)
            impact += (1 + inbound) * (0.5 + p.trust)
            row: dict[str, Any] = {"path": p.path, "title": p.title, "trust": p.trust, "inbound": inbound,
                                   "keep": p.path == keep.path}
            if p.path != keep.path:
                row["signals"] = edges.get(pair_key(keep.path, p.path), [])
                row["scores"] = self._pair_scores(pair_key(keep.path, p.path), row["signals"])
            detail.append(row)
        reason = (f"{len(ordered)} pages: {signal_words(signals, best)} "
                  f"({self.keep_why(keep, ordered[1])})")
        return Family(pages=[p.path for p in ordered], keep=keep.path, reason=reason, scores=best,
                      signals=signals, strength=strength, impact=round(impact, 3), members=detail,
                      edges=[{"pages": list(pair), "signals": sig} for pair, sig in sorted(edges.items())])

    def _pair_scores(self, pair: tuple[str, str], signals: list[str]) -> dict[str, float]:
        """The pair's scores; a pair only its look-alike names join has none scanned (and asks
        for no scan): its names score 1."""
        if signals == [LOOKALIKE]:
            return {LOOKALIKE: 1.0}
        scores = self.index.pair_scores(*pair)
        if LOOKALIKE in signals:
            scores[LOOKALIKE] = 1.0
        return scores

    def inbound(self, path: str) -> int:
        """Distinct pages whose links resolve to ``path``: the same number ``explain`` and the
        comparison panel show (:meth:`~curator.engine.corpus.links.LinkIndex.inbound`). A name two copies share (the
        same title) counts only for the copy the links resolve to, never for both."""
        count = self._counted.get(path)  # (within an answer: the keep rule's sort asks, then the row)
        if count is not None:
            return count
        if self.index.kept is not None and path in self.index.kept_inbound:
            count = self.index.kept_inbound[path]
        else:
            count = self._inbound.get(path)
            if count is None:
                if self._links is None:
                    return self.wiki.links.inbound(path)
                count = self._links.inbound(path)
        if self._memo is not None:  # (only while one answer is computed: see _answering)
            self._counted[path] = count
        return count

    def keep_rank(self, page: Ranked) -> tuple[float, int, str, str]:
        """The keep rule (docs/design.md §9), for pairs and families alike: sorted by this, the first page
        stays: more trust, then more inbound links (the count ``explain`` shows), then older."""
        return (-page.trust, -self.inbound(page.path), page.age, page.path)

    def keep_why(self, keep: Ranked, other: Ranked) -> str:
        """Why ``keep`` stays rather than ``other``, in the words of the rule's first difference."""
        return (f"keep {keep.path}: " + ("higher trust" if keep.trust != other.trust else
                "more inbound links" if self.inbound(keep.path) != self.inbound(other.path) else "older"))

    def _candidate(self, pair: tuple[str, str], signals: list[str]) -> Candidate:
        keep, merge = sorted(self._ranked(pair), key=self.keep_rank)
        scores = self._pair_scores(pair_key(keep.path, merge.path), signals)
        reason = signal_words(signals, scores)
        return Candidate(keep.path, merge.path, list(signals), scores,
                         f"{reason} ({self.keep_why(keep, merge)})")



class _Around:
    """The pairs around a few pages, as they are and as they were before the changes ``was``
    names (signal, a, b -> whether the pair was there), for one answer of the operator's
    (dismissed pairs left out): what :meth:`FamilyAnswers._count_followed` and a result kept
    after changed pairs (:meth:`FamilyAnswers._keep_carried`) walk instead of every pair.
    A pair fires as in :meth:`FamilyAnswers._fired`. Call with the index's lock held."""

    def __init__(self, index: DedupIndex, store: PageStore, was: Mapping[tuple[str, str, str], bool],
                 dismissed: set[tuple[str, str]], memo: dict[tuple[Any, ...], Any] | None) -> None:
        self.index, self.store, self.dismissed, self._memo = index, store, dismissed, memo
        self.back: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)  # (signal, page) -> partner -> was there
        for (signal, a, b), there in was.items():
            self.back[signal, a][b] = there
            self.back[signal, b][a] = there
        #: the pages with a changed pair
        self.changed = sorted({page for _signal, page in self.back})
        #: the pages the index holds features of; None: it answers from a kept result (every page)
        self._known = index.page_set() if index.kept is None else None
        self._visible: dict[str, bool] = {}
        self._lookalike: dict[str, list[str]] | None = None
        self._filed: set[str] = set()  # (the pages whose kept pairs are filed)
        self._spread: set[str] = set()  # (and those whose partners' are too)

    def seen(self, page: str) -> bool:
        """Whether the operator's answers hold ``page`` (a page with features, and a page now)."""
        found = self._visible.get(page)
        if found is None:
            found = self._visible[page] = (self._known is None or page in self._known) and self.store.has(page)
        return found

    def mates(self, signal: str, page: str, then: bool) -> AbstractSet[str]:
        now = self.index.partners[signal].get(page, _NONE)
        edits = self.back.get((signal, page)) if then else None
        if not edits:
            return now
        out = set(now)
        for other, there in edits.items():
            if there:
                out.add(other)
            else:
                out.discard(other)
        return out

    def file(self, pages: Iterable[str]) -> None:
        """File the kept pairs of ``pages`` and of their partners (whose fan-out a pair reads)."""
        pages = [p for p in pages if p not in self._spread]
        self._spread.update(pages)
        self.index.file_pairs(p for p in pages if p not in self._filed)
        self._filed.update(pages)
        around = {o for s in SIGNALS for p in pages for t in (False, True) for o in self.mates(s, p, t)} - self._filed
        self._filed.update(around)
        self.index.file_pairs(around)

    def fired(self, page: str, then: bool) -> dict[str, set[str]]:
        """Partner -> the signals that fire for the pair with ``page`` (filed first)."""
        out: dict[str, set[str]] = defaultdict(set)
        if not self.seen(page):
            return out
        for signal in SIGNALS:
            own = self.mates(signal, page, then)
            for other in own:
                if not self.seen(other) or pair_key(page, other) in self.dismissed:
                    continue
                if _crowded(signal, len(own), len(self.mates(signal, other, then))):
                    continue
                out[other].add(signal)
        for other in self.lookalike().get(page, ()):
            if pair_key(page, other) not in self.dismissed:
                out[other].add(LOOKALIKE)
        return out

    def lookalike(self) -> dict[str, list[str]]:
        """Page -> its look-alike partners (the pages never change while a count is followed)."""
        if self._lookalike is None:
            self._lookalike = self._memo.get(("lookalike",)) if self._memo is not None else None
        if self._lookalike is None:
            self._lookalike = defaultdict(list)
            for a, b in _lookalike_pairs(self.store.stamps() if self._known is None else self._known, self.seen):
                self._lookalike[a].append(b)
                self._lookalike[b].append(a)
            if self._memo is not None:  # (the count's and the keep's of one answer)
                self._memo[("lookalike",)] = self._lookalike
        return self._lookalike

    def strong(self, page: str, then: bool) -> set[str]:
        return {other for other, signals in self.fired(page, then).items() if signals & CONTENT_SIGNALS}

    def families(self, starts: Iterable[str], then: bool) -> tuple[list[set[str]], set[str]]:
        """The content families (connected pages) holding a page of ``starts``, and their pages."""
        reached: set[str] = set()
        out: list[set[str]] = []
        for start in starts:
            if start in reached:
                continue
            self.file([start])
            if not self.strong(start, then):
                continue
            family = {start}
            frontier = [start]
            while frontier:
                self.file(frontier)
                step = [other for page in frontier for other in self.strong(page, then) if other not in family]
                family.update(step)
                frontier = list(dict.fromkeys(step))
            reached |= family
            out.append(family)
        return out, reached

    def region(self) -> tuple[list[set[str]], list[set[str]], set[str]]:
        """The content families then and now of the pages with a changed pair, and their pages
        (the region): what a count and a patched answer look at instead of every pair. The
        region is made whole both ways: a family then of any page of a family now, and the other
        way round, is in it. (A crowd can split off a piece of a family none of whose pages has a
        changed pair, or join a family that had none to another.) Every other family is the same
        family then and now; a page whose being in a content family changed is in the region."""
        region = set(self.changed)
        while True:
            then, then_pages = self.families(sorted(region), then=True)
            now, now_pages = self.families(sorted(region | then_pages), then=False)
            grown = region | then_pages | now_pages
            if grown == region:
                return then, now, region
            region = grown

    def name_pairs(self, pages: set[str], then: bool) -> dict[tuple[str, str], set[str]]:
        """The name-only families holding a page of ``pages``: pair -> the signals that fire."""
        self.file(pages)
        found: dict[tuple[str, str], set[str]] = {}
        for page in sorted(pages):
            pairs = self.fired(page, then)
            if any(signals & CONTENT_SIGNALS for signals in pairs.values()):
                continue
            self.file(pairs)
            found.update((pair_key(page, other), signals) for other, signals in pairs.items()
                         if not self.strong(other, then))
        return found


def _crowded(signal: str, mates_a: int, mates_b: int) -> bool:
    """Whether a pair's ``signal`` does not fire because one of its pages has more than
    MAX_FANOUT partners on it: a crowd of look-alikes (a template, a category, an anthology), not
    a twin. Identical text always fires."""
    return signal != "body" and (mates_a > MAX_FANOUT or mates_b > MAX_FANOUT)


def _in_order(signals: AbstractSet[str]) -> list[str]:
    """A pair's signals in the order :meth:`FamilyAnswers._fired` lists them."""
    return [s for s in (*SIGNALS, LOOKALIKE) if s in signals]


def answers_for(wiki: Wiki, niceness: int = 0, full: bool = False) -> FamilyAnswers:
    """The answers of the wiki's dedup index (:func:`~curator.engine.dedup.index.index_for`, brought
    up to date with the same arguments), held by the wiki's session beside the index."""
    index = index_for(wiki, niceness, full)
    return wiki.session.service(FamilyAnswers, lambda: FamilyAnswers(index))


def keep_result(wiki: Wiki) -> None:
    """Save the wiki's dedup result for the next process if it is not saved yet
    (:meth:`FamilyAnswers.keep`)."""
    session = wiki.session
    with session.services_lock:
        index = session.peek(DedupIndex)
    if index is not None:
        wiki.session.service(FamilyAnswers, lambda: FamilyAnswers(index)).keep()



def find_duplicates(wiki: Wiki, actor: Actor = OPERATOR, page: str | None = None) -> list[Candidate]:
    """``curator dedup``: candidate pairs, best first, dismissed pairs left out."""
    path = wiki.find(page, actor).path if page else None
    return answers_for(wiki).candidates(actor, dismissed_pairs(wiki), path)


def _lookalike_pairs(paths: Iterable[str], keep: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
    """The pairs of ``paths`` (those ``keep`` keeps, when given) whose file names differ only by
    look-alike or invisible characters (lint's ``lookalike-name``): what reads as one page's
    name is two pages. A group holds a name that is not ASCII (an ASCII name folds to itself),
    so only those are folded, and an ASCII name is looked for only under their folded forms
    (filing every page by its name cost a tenth of a warm answer at 32,000 pages)."""
    paths = paths if isinstance(paths, (list, tuple, set, frozenset)) else list(paths)
    odd = [p for p in paths if not p.isascii() and (keep is None or keep(p))]  # (isascii: a flag, no scan)
    if not odd:
        return []

    def stem(path: str) -> str:
        return posixpath.basename(path).removesuffix(".md")

    stems: dict[str, list[str]] = defaultdict(list)
    for path in odd:
        stems[stem(path)].append(path)
    keys = [key for key in {lookalike_key(name) for name in stems} if key.isascii()]
    if len(keys) > _LOOKALIKE_SCANS:  # (a pass over every path for each key, else one filing every name)
        ascii_stems: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            if path.isascii():
                ascii_stems[stem(path)].append(path)
        named = {key: ascii_stems.get(key, []) for key in keys}
    else:
        named = {}
        for key in keys:
            tail, alone = f"/{key}.md", f"{key}.md"
            named[key] = [p for p in paths if (p.endswith(tail) or p == alone) and p.isascii()]
    for key, found in named.items():
        found = [p for p in found if keep is None or keep(p)]
        if found:  # (a name no page kept has is no name of the group)
            stems[key] += found
    out = []
    for names in lookalike_groups(stems):
        found = sorted(p for name in names for p in stems[name])
        out += [pair_key(a, b) for a, b in itertools.combinations(found, 2)]
    return out


def _under(path: str, folder: str) -> bool:
    folder = folder.strip().strip("/")
    return not folder or path.startswith(folder + "/")


def find_families(wiki: Wiki, actor: Actor = OPERATOR, folder: str | None = None,
                  signal: str | None = None, page: str | None = None, niceness: int = 0) -> list[Family]:
    """``curator dedup --groups``: duplicate families ``actor`` may see, highest impact first,
    dismissed pairs left out; only those with a page under ``folder``, with ``signal`` among
    their signals, or holding ``page``. ``niceness``: as :func:`index_for`'s."""
    if signal is not None and signal not in REPORTED_SIGNALS:
        raise CuratorError(f"unknown signal {signal!r}: use one of {', '.join(REPORTED_SIGNALS)}")
    path = wiki.find(page, actor).path if page else None
    dismissed = dismissed_pairs(wiki)
    out = _saved_families(wiki, dismissed) if actor.is_operator else None
    if out is None:
        out = answers_for(wiki, niceness).families(actor, dismissed)
    return [f for f in out
            if (folder is None or any(_under(p, folder) for p in f.pages))
            and (signal is None or signal in f.signals) and (path is None or path in f.pages)]


def _saved_families(wiki: Wiki, dismissed: set[tuple[str, str]]) -> list[Family] | None:
    """The operator's families answer saved for the pages as they are (with the same dismissed
    pairs: :meth:`FamilyAnswers._save_families`), read without loading any index; None when
    none is. A warm ``curator dedup --groups`` reads what the last answer built."""
    session = wiki.session
    with session.services_lock:
        answers = session.peek(FamilyAnswers)
    store = wiki.store
    if not store.warm():
        return None  # (a cold page cache: nothing saved; the index's first load parses every page)
    if not store.loaded:
        wiki.refresh()
    found = store.derived_since(dedup_cache.FAMILIES_NAME) if store.state is not None else None
    if found is None or found[1]:
        return None
    digest = dedup_cache.dismissed_digest(dismissed)
    own = answers.answered(store.state, digest) if answers is not None else None
    if own is not None:
        return own  # (this process's own, already built)
    decoded = dedup_cache.decode_families(found[0], dedup_cache.key_of(store.attachments_key(), SETTINGS), digest)
    if decoded is None:
        return None
    out = []
    for part in decoded[1]:
        rows = dedup_cache.decode_family_part(part)
        if rows is None:
            return None
        out += [Family(*row) for row in rows]
    return by_impact(out)


def family_count(wiki: Wiki, actor: Actor = OPERATOR, strength: str | None = None, niceness: int = 0) -> int:
    """How many duplicate families ``actor`` has to review (the Health figure; ``strength``
    ``"content"`` or ``"names"`` counts only those): cheap once the wiki's dedup index is warm
    (:func:`index_for`), and no family is built to be counted (:meth:`FamilyAnswers.count`)."""
    dismissed = dismissed_pairs(wiki)
    counted = _kept_count(wiki, dismissed) if actor.is_operator else None
    content, names = counted if counted is not None else answers_for(wiki, niceness).count(actor, dismissed)
    return {"content": content, "names": names}.get(strength or "", content + names)


def kept_family_count(wiki: Wiki) -> int | None:
    """The operator's family count (:func:`family_count`) as the result kept for the pages as they
    are holds it, read without loading any index in this process; None when no such result is
    kept (then only a scan, or an index following the changes, can count)."""
    counted = _kept_count(wiki, dismissed_pairs(wiki))
    return None if counted is None else counted[0] + counted[1]


def saved_family_count(wiki: Wiki) -> tuple[int, bool] | None:
    """The operator's family count held by the result the last full scan kept, whether for the
    pages as they are or for an earlier state of them, and whether the pages changed since (True:
    the count is for older pages, and only a scan or an index following the changes counts them
    as they are). Read without loading any index; None when no result is kept whose changes since
    are known, or it was counted with other dismissed pairs. What the station shows while the
    current count is made (Health's "counting…")."""
    found = _saved_count(wiki, dismissed_pairs(wiki))
    return None if found is None else (found[0][0] + found[0][1], found[1])


def _kept_count(wiki: Wiki, dismissed: set[tuple[str, str]]) -> tuple[int, int] | None:
    """The operator's family count held by the result kept for the pages as they are (counted
    with the same dismissed pairs), while the wiki's index has not loaded anything yet: Health's
    figure without decoding every pair."""
    session = wiki.session
    with session.services_lock:
        index = session.peek(DedupIndex)
    if index is not None and (index.scanned or index.kept is not None):
        return None  # (the index answers, as up to date as it is)
    found = _saved_count(wiki, dismissed)
    return None if found is None or found[1] else found[0]


def _saved_count(wiki: Wiki, dismissed: set[tuple[str, str]]) -> tuple[tuple[int, int], bool] | None:
    """The operator's (content, name-only) family count the last kept result holds (counted with
    the same ``dismissed`` pairs), and whether the pages changed since it was kept; None when
    none is kept whose changes since are known."""
    store = wiki.store
    if not store.loaded:
        wiki.refresh()
    found = store.derived_since(dedup_cache.NAME) if store.state is not None else None
    if found is None:
        return None
    key = dedup_cache.key_of(store.attachments_key(), SETTINGS)
    counted = dedup_cache.kept_count(found[0], key, dedup_cache.dismissed_digest(dismissed))
    return None if counted is None else (counted, bool(found[1]))


