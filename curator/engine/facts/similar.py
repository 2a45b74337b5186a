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
from typing import TYPE_CHECKING, Any

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


def find_similar(wiki: Wiki, actor: Actor, page: str | None = None, min_score: float = SIMILAR_MIN,
                 embedder: Embedder | None = None) -> list[SimilarGroup]:
    """The groups of similar facts ``actor`` may see, best first; with ``page`` (a path or a name
    :meth:`~curator.engine.wiki.Wiki.find` knows), the groups holding one of its facts, its fact first.
    A group an operator kept as it is (:func:`~curator.engine.facts.decisions.keep_all`) is left out."""
    path = wiki.find(page, actor).path if page is not None else None
    index = fact_index_for(wiki, embedder)

    def visible(p: str) -> bool:
        return wiki.visible(actor, p)

    parent: dict[Fact, Fact] = {}
    best: dict[Fact, float] = {}

    def root(f: Fact) -> Fact:
        while parent.setdefault(f, f) != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    size: dict[Fact, int] = {}

    def join(a: Fact, b: Fact, score: float) -> bool:
        """Join the groups of ``a`` and ``b``; False when that would pass :data:`MAX_GROUP`."""
        ra, rb = root(a), root(b)
        if ra == rb:
            return True
        if size.get(ra, 1) + size.get(rb, 1) > MAX_GROUP:
            return False
        parent[rb] = ra
        size[ra] = size.get(ra, 1) + size.get(rb, 1)
        best[ra] = max(best.get(ra, 0.0), best.pop(rb, 0.0), score)
        return True

    if path is None:
        return _whole_wiki(wiki, index, visible, min_score)
    # Only the groups reaching this page's facts: follow neighbours out from them.
    todo = [f for f in index.page_facts(path) if not index.template(f)]
    seen = set(todo)

    while todo:
        frontier, todo = todo, []
        for fact, near in zip(frontier, index.neighbours_of(frontier, MAX_GROUP, min_score, visible),
                              strict=True):
            for other, score in near:
                if index.template(other):
                    continue
                # Only a fact that joined a group of this page's is followed further: a
                # full group must not send the walk across the whole wiki.
                if join(fact, other, score) and other not in seen:
                    seen.add(other)
                    todo.append(other)
    members: dict[Fact, list[Fact]] = {}
    for fact in list(parent):
        members.setdefault(root(fact), []).append(fact)
    first = (lambda f: f.path == path) if path is not None else None
    groups = [_group(facts, round(best.get(r, 0.0), 4), first) for r, facts in members.items() if len(facts) > 1]
    if path is not None:
        groups = [g for g in groups if any(f.path == path for f in g.facts)]
    kept = kept_groups(wiki)
    if kept:
        groups = [g for g in groups if not any({normalised_fact(f.text) for f in g.facts} <= k for k in kept)]
    groups.sort(key=lambda g: (-g.score, g.facts[0].path, g.facts[0].line))
    return groups


def _whole_wiki(wiki: Wiki, index: FactIndex, visible: Callable[[str], bool], min_score: float) -> list[SimilarGroup]:
    """:func:`find_similar` of the whole wiki: the groups are made of texts (a text on several
    pages is one member of each of its facts), then their facts are made: a big wiki has a few
    hundred thousand close pairs, and only the grouped facts are ever looked at."""
    parent: dict[int, int] = {}
    size: dict[int, int] = {}
    best: dict[int, float] = {}

    def root(r: int) -> int:
        while parent.setdefault(r, r) != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for ra, rb, score in index.row_pairs(min_score, visible):
        a, b = root(ra), root(rb)
        if a == b:
            best[a] = max(best.get(a, 0.0), score)
            continue
        count = size.get(a) or size.setdefault(a, index.row_count(ra, visible))
        count_b = size.get(b) or size.setdefault(b, index.row_count(rb, visible))
        if count + count_b > MAX_GROUP:
            continue
        parent[b] = a
        size[a] = count + count_b
        best[a] = max(best.get(a, 0.0), best.pop(b, 0.0), score)
    members: dict[int, list[int]] = {}
    for row in list(parent):
        members.setdefault(root(row), []).append(row)
    facts_of = index.row_facts([r for rows in members.values() for r in rows], visible)
    groups = []
    for r, rows in members.items():
        facts = [f for row in rows for f in facts_of[row]]
        if len(facts) > 1:
            groups.append(_group(facts, round(best.get(r, 0.0), 4), None))
    kept = kept_groups(wiki)
    if kept:
        groups = [g for g in groups if not any({normalised_fact(f.text) for f in g.facts} <= k for k in kept)]
    groups.sort(key=lambda g: (-g.score, g.facts[0].path, g.facts[0].line))
    return groups
