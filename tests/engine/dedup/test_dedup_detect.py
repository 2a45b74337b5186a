"""Duplicate detection: recall of planted pairs of each kind, no flood from numbered series or
templates, keep choice, visibility, incremental updates."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.wiki import Wiki
from tests.engine.dedup.test_dedup_families import whole_scan

SYLLABLES = ("ka", "lo", "mi", "ren", "tor", "vex", "an", "qui", "sel", "dor", "pa", "zu", "bri", "mon",
             "fal", "ter", "ix", "ou", "gra", "nel", "sto", "ump", "wei", "cha")
BOILER_SERIES = ("Attendees: the whole team, facilitator rotates weekly.\n"
                 "Agenda: review the action items from last week, then plan the next steps together.\n")
BOILER_TEMPLATE = ("## Role\nDescribe the role of this person in a sentence or two here.\n\n"
                   "## Contact\nAdd the preferred contact channel and the time zone of this person.\n\n"
                   "## Notes\nAnything else worth knowing, kept short and factual please.\n")


@dataclass
class Planted:
    root: Path
    pairs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    series: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def _sentence(rng: random.Random, vocab: list[str]) -> str:
    return " ".join(rng.choice(vocab) for _ in range(rng.randint(9, 16))).capitalize() + "."


def _page(title: str, tags: list[str], body: str, trust: float = 0.5, created: str = "2024-01-01") -> str:
    return (f"---\ntitle: {title}\ntags: [{', '.join(tags)}]\ntrust: {trust}\ncreated: {created}\n---\n"
            f"# {title}\n\n{body}")


def generate_planted(root: Path, regular: int = 400, per_kind: int = 20, seed: int = 5) -> Planted:
    """A wiki with ``regular`` ordinary pages, ``per_kind`` planted duplicate pairs of each kind
    (title variant, subset slug, copied body), a 40-page numbered series and 30 template pages."""
    rng = random.Random(seed)
    vocab = sorted({_word(rng) for _ in range(4000)})
    tag_pool = sorted({_word(rng) for _ in range(80)})
    folders = ("wiki", "concepts", "entities", "projects")
    used: set[str] = set()
    info = Planted(root)

    def fresh_words(n: int) -> list[str]:
        while True:
            words = [rng.choice(vocab) for _ in range(n)]
            if "-".join(words) not in used and len(set(words)) == n:
                used.add("-".join(words))
                return words

    def body(lines: int) -> str:
        return "## Updates\n" + "".join(f"- {_sentence(rng, vocab)} (added 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)})\n"
                                        for _ in range(lines))

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def tags_for(folder: str) -> list[str]:
        return [folder + "-page", *rng.sample(tag_pool, rng.randint(1, 3))]

    for _ in range(regular):
        words = fresh_words(rng.randint(2, 4))
        folder = rng.choice(folders)
        title = " ".join(w.capitalize() for w in words)
        write(f"{folder}/{'-'.join(words)}.md", _page(title, tags_for(folder), body(rng.randint(3, 8))))

    info.pairs = {"title": [], "slug": [], "body": []}
    for i in range(per_kind):
        # title variants: different names and text, the same title up to case/punctuation/plural
        words = fresh_words(3)
        title = " ".join(w.capitalize() for w in words)
        variant = ("-".join(words).upper() if i % 2 else title + "s")
        a = f"wiki/{'-'.join(words)}.md"
        b = f"concepts/{'-'.join(fresh_words(2))}.md"
        write(a, _page(title, tags_for("wiki"), body(4)))
        write(b, _page(variant, tags_for("concepts"), body(4)))
        info.pairs["title"].append((a, b))
        # subset slugs: project-x / project-x-notes with their own titles and text
        words = fresh_words(2)
        a = f"projects/{'-'.join(words)}.md"
        b = f"projects/{'-'.join(words)}-{rng.choice(('notes', 'plan', 'draft'))}.md"
        write(a, _page(" ".join(fresh_words(2)).title(), tags_for("projects"), body(4)))
        write(b, _page(" ".join(fresh_words(3)).title(), tags_for("projects"), body(4)))
        info.pairs["slug"].append((a, b))
        # copied bodies: a page pasted under another name, lightly edited
        text = body(6)
        lines = text.splitlines(keepends=True)
        lines[2] = lines[2].replace(lines[2].split()[2], "changed", 1)
        copy = "".join(lines) + "- Copied here from the team notes.\n"
        a = f"entities/{'-'.join(fresh_words(2))}.md"
        b = f"wiki/{'-'.join(fresh_words(3))}.md"
        write(a, _page(" ".join(fresh_words(2)).title(), tags_for("entities"), text))
        write(b, _page(" ".join(fresh_words(2)).title(), tags_for("wiki"), copy))
        info.pairs["body"].append((a, b))

    for n in range(1, 41):  # numbered series from one template: weekly-sync-1 ... weekly-sync-40
        rel = f"meetings/weekly-sync-{n}.md"
        write(rel, _page(f"Weekly Sync {n}", ["meeting", "weekly"],
                         BOILER_SERIES + f"- {_sentence(rng, vocab)}\n- {_sentence(rng, vocab)}\n"))
        info.series.append(rel)
    for _ in range(30):  # pages stamped from one template, barely filled in
        words = fresh_words(2)
        rel = f"people/{'-'.join(words)}.md"
        write(rel, _page("Person Profile", ["person"], BOILER_TEMPLATE + f"{_sentence(rng, vocab)}\n"))
        info.templates.append(rel)
    return info


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    return generate_planted(tmp_path_factory.mktemp("planted"))


def test_recall_of_planted_pairs_without_flood(planted: Planted) -> None:
    wiki = Wiki(planted.root)
    found = {dedup.pair_key(c.keep, c.merge): c for c in dedup_families.find_duplicates(wiki)}
    for kind, pairs in planted.pairs.items():
        hits = [p for p in pairs if dedup.pair_key(*p) in found]
        assert len(hits) / len(pairs) >= 0.95, (kind, len(hits), len(pairs))
        for p in hits:  # and found by the signal the pair was planted for
            assert kind in found[dedup.pair_key(*p)].signals
    noisy = set(planted.series) | set(planted.templates)
    assert not [c for c in found.values() if c.keep in noisy or c.merge in noisy]
    planted_total = sum(len(p) for p in planted.pairs.values())
    assert len(found) <= planted_total + 5  # the queue holds the planted pairs, not a flood


def test_candidate_shape_and_keep_rule(tmp_path: Path) -> None:
    text = "## Updates\n" + "".join(f"- fact number {w} about the harbour crane schedule and upkeep\n"
                                    for w in ("one", "two", "three", "four", "five"))
    (tmp_path / "a").mkdir()
    (tmp_path / "a/crane-schedule.md").write_text(_page("Crane Schedule", ["x", "cranes"], text, 0.5, "2023-01-01"))
    (tmp_path / "a/crane-schedules.md").write_text(_page("Crane Schedules", ["x", "cranes"], text, 0.9, "2024-01-01"))
    wiki = Wiki(tmp_path)
    [cand] = dedup_families.find_duplicates(wiki)
    assert (cand.keep, cand.merge) == ("a/crane-schedules.md", "a/crane-schedule.md")  # more trust
    assert set(cand.to_json()) >= {"keep", "merge", "reason", "scores"}
    assert set(cand.scores) == {"title", "tags", "slug", "body", "containment"}
    assert set(cand.signals) == {"title", "tags", "slug", "body"}
    assert "higher trust" in cand.reason
    # equal trust: more inbound links wins, then the older page
    (tmp_path / "a/crane-schedules.md").write_text(_page("Crane Schedules", ["x", "cranes"], text, 0.5, "2024-01-01"))
    (tmp_path / "linker.md").write_text("# L\n[[crane-schedules]]\n")
    wiki.refresh()
    [cand] = dedup_families.find_duplicates(wiki)
    assert cand.keep == "a/crane-schedules.md" and "more inbound links" in cand.reason
    (tmp_path / "linker.md").write_text("# L\n")
    wiki.refresh()
    [cand] = dedup_families.find_duplicates(wiki)
    assert cand.keep == "a/crane-schedule.md" and "older" in cand.reason


def test_series_and_generic_names_are_not_candidates(tmp_path: Path) -> None:
    for n in (1, 2, 12):
        (tmp_path / f"sprint-{n}.md").write_text(f"# Sprint {n}\n")
    (tmp_path / "ai.md").write_text("# AI\n")
    (tmp_path / "maintenance.md").write_text("# Maintenance\n")
    (tmp_path / "q3-budget.md").write_text("# Q3 Budget\n")
    (tmp_path / "q4-budget.md").write_text("# Q4 Budget\n")
    assert dedup_families.find_duplicates(Wiki(tmp_path)) == []


def test_slug_signal_subset_and_plural(tmp_path: Path) -> None:
    (tmp_path / "project-x.md").write_text("# Alpha\n")
    (tmp_path / "project-x-notes.md").write_text("# Beta\n")
    (tmp_path / "refund.md").write_text("# Gamma\n")
    (tmp_path / "refunds.md").write_text("# Delta\n")
    pairs = {dedup.pair_key(c.keep, c.merge): c for c in dedup_families.find_duplicates(Wiki(tmp_path))}
    assert set(pairs) == {("project-x-notes.md", "project-x.md"), ("refund.md", "refunds.md")}
    assert pairs[("project-x-notes.md", "project-x.md")].scores["slug"] >= 0.7


class HidePeople:
    def can_read(self, actor: Actor, path: str) -> bool:
        return not path.startswith("hidden/")

    def check_write(self, actor: Actor, path: str) -> object:
        raise AssertionError("read-only test")


def test_visibility_filters_pairs(tmp_path: Path) -> None:
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden/crane.md").write_text("# Crane Plan\n")
    (tmp_path / "crane.md").write_text("# Crane Plan\n")
    wiki = Wiki(tmp_path)
    wiki.policy = HidePeople()  # type: ignore[assignment]
    assert dedup_families.find_duplicates(wiki, parse_actor("agent:bot")) == []
    assert len(dedup_families.find_duplicates(wiki)) == 1


def test_incremental_update_matches_a_full_scan(planted: Planted, tmp_path: Path) -> None:
    wiki = Wiki(planted.root)
    index = dedup.index_for(wiki, full=True)  # every page's features: changes followed page by page
    before = {dedup.pair_key(c.keep, c.merge) for c in FamilyAnswers(index).candidates()}
    src = planted.pairs["body"][0][0]
    text = (planted.root / src).read_text(encoding="utf-8")
    new = planted.root / "wiki/zz-fresh-copy.md"
    new.write_text(text.replace("title:", "title: Other"), encoding="utf-8")
    try:
        wiki.refresh()
        changed = index.update()
        assert changed == ["wiki/zz-fresh-copy.md"]
        after = {dedup.pair_key(c.keep, c.merge) for c in FamilyAnswers(index).candidates()}
        assert dedup.pair_key(src, "wiki/zz-fresh-copy.md") in after
        full = dedup.DedupIndex(wiki)
        whole_scan(full)
        assert {dedup.pair_key(c.keep, c.merge) for c in FamilyAnswers(full).candidates()} == after
    finally:
        new.unlink()
        wiki.refresh()
        index.update()
    assert {dedup.pair_key(c.keep, c.merge) for c in FamilyAnswers(index).candidates()} == before


def test_shingles_of_many_texts_are_each_texts_own() -> None:
    """The batched shingling (every text's windows hashed in one pass, an ASCII tokeniser for
    ASCII text) answers exactly what hashing each text's own words does."""
    import numpy as np

    rng = random.Random(3)
    words = ["alpha", "Beta", "gamma_x", "付款流程", "ÉCOLE", "\u212a", "x1", "don't", "naïve", "ß", "İstanbul", "--"]
    texts = ["", "one", "two words", *(" ".join(rng.choice(words) for _ in range(rng.randint(0, 14)))
                                       for _ in range(400))]

    def by_words(text: str) -> np.ndarray:
        ids = np.array([dedup.word_id(w) for w in dedup.tokens(text)], dtype=np.uint64)
        if not len(ids):
            return np.zeros(0, dtype=np.uint64)
        k = min(dedup.SHINGLE_WORDS, len(ids))
        with np.errstate(over="ignore"):
            h = sum((ids[j:len(ids) - k + 1 + j] * dedup._SHINGLE_MULT[j] * np.uint64(31) ** np.uint64(k - 1 - j)
                     for j in range(k)), np.zeros(len(ids) - k + 1, dtype=np.uint64))
        return np.unique(h)

    many = dedup.shingles_many(texts)
    for text, got in zip(texts, many, strict=True):
        assert np.array_equal(got, by_words(text)) and np.array_equal(dedup.shingles(text), got), text
