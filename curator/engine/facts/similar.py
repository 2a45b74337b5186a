"""Facts that say the same thing (issue 41): groups of facts, on one page or across pages, whose
meanings are close, best first.

A group is a connected set of facts each scoring at least :data:`SIMILAR_MIN` with another of the
group; its score is its best pair's. Scores come from the fact index's embedder: good for ranking,
not for deciding, so the groups are a queue for a reader, never an automatic merge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from curator.engine.corpus.facts import Fact
from curator.engine.facts.conflicts import normalised_fact
from curator.engine.facts.decisions import kept_groups
from curator.engine.facts.embed import Embedder
from curator.engine.facts.index import FactIndex, fact_index_for

if TYPE_CHECKING:
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki

#: Two facts say the same thing from this score up: measured on the planted set of
#: tests/engine/facts/test_similar.py (22 paraphrase pairs in other words, English and Chinese,
#: among distinct facts on the same subjects). Groups found (planted pairs in them / wrong groups):
#: 0.6: 20/10, 0.65: 20/4, 0.7: 17/3, 0.75: 15/2, 0.8: 14/0. WordLlama scores distinct facts on one
#: subject up to ~0.75, so no threshold separates them fully: 0.65 finds most, a reader decides.
SIMILAR_MIN = 0.65
#: A group stops growing here: a chain of near facts must not swallow a whole subject.
MAX_GROUP = 25

T = TypeVar("T")


@dataclass(frozen=True)
class SimilarGroup:
    id: str
    score: float
    facts: list[Fact]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score,
                "facts": [{"path": f.path, "line": f.line, "text": f.text} for f in self.facts]}


def _group(facts: list[Fact], score: float, first: Callable[[Fact], bool] | None) -> SimilarGroup:
    ordered = sorted(facts, key=lambda f: (not first(f) if first else False, f.path, f.line))
    ident = hashlib.sha1("\0".join(sorted(f.key for f in facts)).encode()).hexdigest()[:12]
    return SimilarGroup(ident, score, ordered)


class _Groups(Generic[T]):
    """Union-find of things joined by a score: each group's members, size (a member may weigh
    more than one: a text on several pages) and best score; a group stops at :data:`MAX_GROUP`."""

    def __init__(self, weight: Callable[[T], int] = lambda _t: 1) -> None:
        self.parent: dict[T, T] = {}
        self.size: dict[T, int] = {}
        self.best: dict[T, float] = {}
        self.weight = weight

    def root(self, t: T) -> T:
        parent = self.parent
        while parent.setdefault(t, t) != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    def join(self, a: T, b: T, score: float) -> bool:
        """Join the groups of ``a`` and ``b``; False when that would pass :data:`MAX_GROUP`."""
        ra, rb = self.root(a), self.root(b)
        if ra == rb:
            self.best[ra] = max(self.best.get(ra, 0.0), score)
            return True
        size_a = self.size.get(ra) or self.size.setdefault(ra, self.weight(ra))
        size_b = self.size.get(rb) or self.size.setdefault(rb, self.weight(rb))
        if size_a + size_b > MAX_GROUP:
            return False
        self.parent[rb] = ra
        self.size[ra] = size_a + size_b
        self.best[ra] = max(self.best.get(ra, 0.0), self.best.pop(rb, 0.0), score)
        return True

    def members(self) -> list[tuple[list[T], float]]:
        """Each group (of two or more) and its best score."""
        out: dict[T, list[T]] = {}
        for t in list(self.parent):
            out.setdefault(self.root(t), []).append(t)
        return [(members, round(self.best.get(r, 0.0), 4)) for r, members in out.items() if len(members) > 1]


def _kept_out(wiki: Wiki, groups: list[SimilarGroup]) -> list[SimilarGroup]:
    """``groups`` less those an operator kept as they are, best first."""
    kept = kept_groups(wiki)
    if kept:
        groups = [g for g in groups if not any({normalised_fact(f.text) for f in g.facts} <= k for k in kept)]
    groups.sort(key=lambda g: (-g.score, g.facts[0].path, g.facts[0].line))
    return groups


def find_similar(wiki: Wiki, actor: Actor, page: str | None = None, min_score: float = SIMILAR_MIN,
                 embedder: Embedder | None = None) -> list[SimilarGroup]:
    """The groups of similar facts ``actor`` may see, best first; with ``page`` (a path or a name
    :meth:`~curator.engine.wiki.Wiki.find` knows), the groups holding one of its facts, its fact first.
    A group an operator kept as it is (:func:`~curator.engine.facts.decisions.keep_all`) is left out."""
    path = wiki.find(page, actor).path if page is not None else None
    index = fact_index_for(wiki, embedder)

    def visible(p: str) -> bool:
        return wiki.visible(actor, p)

    if path is None:
        return _whole_wiki(wiki, index, visible, min_score)
    # Only the groups reaching this page's facts: follow neighbours out from them, by position in
    # the index (a fact is made only for the groups shown: making every neighbour met took 1 s).
    groups = _Groups[int]()
    todo = [p for p in index.page_positions(path) if not index.template_at(p)]
    seen = set(todo)
    while todo:
        frontier, todo = todo, []
        for position, near in zip(frontier, index.neighbours_at(frontier, MAX_GROUP, min_score, visible),
                                  strict=True):
            for other, score in near:
                if index.template_at(other):
                    continue
                # Only a fact that joined a group of this page's is followed further: a
                # full group must not send the walk across the whole wiki.
                if groups.join(position, other, score) and other not in seen:
                    seen.add(other)
                    todo.append(other)
    members = groups.members()
    made = index.facts_at(p for positions, _s in members for p in positions)
    found = [_group([made[p] for p in positions], score, lambda f: f.path == path) for positions, score in members]
    return _kept_out(wiki, [g for g in found if any(f.path == path for f in g.facts)])


def _whole_wiki(wiki: Wiki, index: FactIndex, visible: Callable[[str], bool], min_score: float) -> list[SimilarGroup]:
    """:func:`find_similar` of the whole wiki: the groups are made of texts (a text on several
    pages weighs its facts), then their facts are made: a big wiki has a few hundred thousand
    close pairs, and only the grouped facts are ever looked at."""
    groups = _Groups[int](lambda row: index.row_count(row, visible))
    for ra, rb, score in index.row_pairs(min_score, visible):
        if ra == rb:  # one text on several pages: a group of its own
            groups.root(ra)
            groups.best[ra] = max(groups.best.get(ra, 0.0), score)
            continue
        groups.join(ra, rb, score)
    members = groups.members()
    grouped = {row for rows, _s in members for row in rows}
    single = [r for r in groups.parent if groups.parent[r] == r and r not in grouped and index.row_count(r, visible) > 1]
    everything = [(rows, score) for rows, score in members] + [([r], round(groups.best.get(r, 0.0), 4)) for r in single]
    facts_of = index.row_facts([r for rows, _s in everything for r in rows], visible)
    found = []
    for rows, score in everything:
        facts = [f for row in rows for f in facts_of[row]]
        if len(facts) > 1:
            found.append(_group(facts, score, None))
    return _kept_out(wiki, found)
