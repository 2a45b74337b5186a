"""Similar facts: planted paraphrases (other words, English and Chinese) found among distinct facts
on the same subjects, measured against a plain word-overlap baseline; groups, --page order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from curator.engine.corpus.facts import Fact, fact_words
from curator.engine.facts.index import fact_index_for
from curator.engine.facts.similar import SIMILAR_MIN, find_similar
from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from tests.engine.facts.planted import DISTRACTORS, PARAPHRASES, UNRELATED


def _planted_wiki(root: Path) -> Wiki:
    """Each paraphrase pair split over two pages (every third on one page), with the distinct facts
    on the same subjects and the unrelated ones spread among them."""
    pages: dict[str, list[str]] = {}
    for i, (a, b) in enumerate(PARAPHRASES):
        pages.setdefault(f"topic-{i}.md", []).append(a)
        pages.setdefault(f"topic-{i}.md" if i % 3 == 0 else f"other-{i}.md", []).append(b)
    for i, text in enumerate(DISTRACTORS + UNRELATED):
        pages.setdefault(f"topic-{i % len(PARAPHRASES)}.md", []).append(text)
    for name, facts in pages.items():
        (root / name).write_text("# " + name + "\n\n" + "".join(f"- {f}\n" for f in facts))
    return Wiki(root)


def _truth() -> set[frozenset[str]]:
    return {frozenset(p) for p in PARAPHRASES}


def _overlap(a: str, b: str) -> float:
    wa, wb = set(fact_words(a)), set(fact_words(b))
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def test_planted_paraphrases_recall_and_precision_beat_word_overlap(tmp_path: Path) -> None:
    index = fact_index_for(_planted_wiki(tmp_path))
    facts = index.facts()
    truth = _truth()
    partner = {t: next(iter(pair - {t})) for pair in truth for t in pair}

    def recall_at_5(rank: dict[Fact, list[Fact]]) -> float:
        hits = [partner[f.text] in {g.text for g in rank[f][:5]} for f in facts if f.text in partner]
        return sum(hits) / len(hits)

    meaning = {f: [g for g, _ in index.neighbours(f, k=5)] for f in facts}
    words = {f: sorted((g for g in facts if g != f), key=lambda g: -_overlap(f.text, g.text)) for f in facts}
    best_pairs = [frozenset((a.text, b.text)) for a, b, _ in index.pairs(-1.0)][:20]
    overlap_pairs = sorted(({frozenset((a.text, b.text)) for a in facts for b in facts if a != b}),
                           key=lambda p: -_overlap(*sorted(p)))[:20]
    figures = {
        "recall@5 meaning": recall_at_5(meaning), "recall@5 words": recall_at_5(words),
        "precision@20 meaning": sum(p in truth for p in best_pairs) / 20,
        "precision@20 words": sum(p in truth for p in overlap_pairs) / 20,
    }
    groups = find_similar(index.wiki, OPERATOR)
    right = [g for g in groups if frozenset(f.text for f in g.facts) in truth]
    inside = sum(any(p <= {f.text for f in g.facts} for g in groups) for p in truth)
    figures["groups found/exact/planted pairs inside"] = (len(groups), len(right), inside)  # type: ignore[assignment]
    print(f"\nplanted similar facts ({len(truth)} pairs, {len(facts)} facts, threshold {SIMILAR_MIN}): {figures}")
    assert figures["recall@5 meaning"] >= 0.9
    assert figures["recall@5 meaning"] > figures["recall@5 words"] + 0.2
    assert figures["precision@20 meaning"] >= 0.7
    assert figures["precision@20 meaning"] > figures["precision@20 words"]
    assert inside >= 0.85 * len(truth)  # the groups' recall at the threshold
    assert len(right) >= 0.7 * len(truth)
    assert len(groups) - len(right) <= 4  # the false-positive bound


def test_page_groups_hold_that_page_first_and_match_the_whole_wiki(tmp_path: Path) -> None:
    wiki = _planted_wiki(tmp_path)
    everything = find_similar(wiki, OPERATOR)
    mine = find_similar(wiki, OPERATOR, page="other-1")
    assert mine and all(g.facts[0].path == "other-1.md" for g in mine)
    assert {g.id for g in mine} == {g.id for g in everything if any(f.path == "other-1.md" for f in g.facts)}
    assert [g.score for g in everything] == sorted((g.score for g in everything), reverse=True)
    assert everything[0].to_json()["facts"][0].keys() == {"path", "line", "text"}


def test_an_appended_paraphrase_joins_a_group(tmp_path: Path) -> None:
    wiki = _planted_wiki(tmp_path)
    (tmp_path / "new.md").write_text("# New\n\n- Unrelated words about rivers and boats here.\n")
    wiki.refresh()
    assert find_similar(wiki, OPERATOR, page="new") == []
    path = tmp_path / "new.md"
    path.write_text(path.read_text() + "- The customer database backups are retained for 30 days.\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    wiki.refresh()
    groups = find_similar(wiki, OPERATOR, page="new")
    assert len(groups) == 1 and groups[0].facts[0].path == "new.md"
    assert "Backups of the customer database are kept for thirty days." in {f.text for f in groups[0].facts}


def test_a_full_group_stops_the_page_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.facts import similar
    from curator.engine.facts.index import FactIndex

    for i in range(8):
        (tmp_path / f"b{i}.md").write_text(f"# B{i}\n\n- Backups of the customer database are kept for {i + 30} days.\n")
    wiki = Wiki(tmp_path)
    monkeypatch.setattr(similar, "MAX_GROUP", 3)
    asked: list[int] = []
    real = FactIndex.neighbours_at  # (what the page's walk asks, by position)

    def counting(self: FactIndex, positions: list[int], *args: object, **kwargs: object) -> object:
        asked.append(len(positions))
        return real(self, positions, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FactIndex, "neighbours_at", counting)
    groups = find_similar(wiki, OPERATOR, page="b0")
    assert len(groups) == 1 and len(groups[0].facts) == 3
    assert 0 < sum(asked) <= 3  # only the group's facts were followed, not every similar fact of the wiki


def test_each_fact_brings_at_most_k_pairs(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"b{i}.md").write_text(f"# B{i}\n\n- Backups of the customer database are kept for {i + 30} days.\n")
    index = fact_index_for(Wiki(tmp_path))
    assert len(list(index.pairs(0.5))) == 15
    bounded = list(index.pairs(0.5, k=1))
    assert 3 <= len(bounded) <= 6
