"""The conflict queue (``curator facts conflicts``): pairs of facts close in meaning (the fact
index) that disagree where it matters (:func:`~curator.engine.facts.conflicts.conflict_reason`),
less the pairs an operator kept as both true; only facts the asker may see."""

from __future__ import annotations

from typing import TYPE_CHECKING

from curator.engine.facts.conflicts import (
    REASONS_VERSION,
    Conflict,
    conflict_reason,
    find_conflicts,
    forget_texts,
    reasoned_conflicts,
)
from curator.engine.facts.decisions import decided_pairs
from curator.engine.facts.index import fact_index_for

if TYPE_CHECKING:
    from curator.engine.facts.embed import Embedder
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki

#: Two facts this close in meaning are about the same subject: with the local model, distinct facts
#: on one subject score 0.55-0.63 and paraphrases 0.77-0.95; unrelated ones stay below 0.4.
CONFLICT_MIN = 0.6


def fact_conflicts(wiki: Wiki, actor: Actor, page: str | None = None, min_score: float = CONFLICT_MIN,
                   embedder: Embedder | None = None) -> list[Conflict]:
    """The conflicts ``actor`` may see (both facts), best first; with ``page``, those holding one
    of its facts (its fact first)."""
    path = wiki.find(page, actor).path if page is not None else None
    index = fact_index_for(wiki, embedder)

    def visible(p: str) -> bool:
        return wiki.visible(actor, p)

    if path is not None:
        return find_conflicts(index.pairs(min_score, path, visible=visible), decided_pairs(wiki))
    # The whole wiki: each pair of texts is read once ever (the index remembers the reasons), so
    # only a first run reads them all.
    try:
        noted = index.noted_pairs(f"conflict-{REASONS_VERSION}", min_score, conflict_reason, visible)
        return reasoned_conflicts(noted, decided_pairs(wiki))
    finally:
        forget_texts()  # (a first run reads every text: not kept in a long-lived station)
