"""Duplicate families after changes (issue 44: one edit costs what it changes).

Through a scripted sequence of changes (an append, an edit that takes a page out of its family, a
new near-duplicate page, a family merge, a move, a deletion), what ``curator dedup --groups`` and
Health's count answer is exactly what a full scan of the pages as they are answers: in a new
process (a one-shot command, the result kept by the last one at an earlier state) and in a process
that holds the index and follows the changes page by page. And what a change costs: an index
following the pages reads and shingles again only the page that changed."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.engine.write.merge import merge_pages
from curator.engine.write.move import move_page
from tests.engine.dedup.test_dedup_families import (  # noqa: F401 (root: a fixture)
    COPY,
    LEDGER,
    LEDGER_COPY,
    NEXT,
    OLD,
    ORIGINAL,
    facts,
    family_of,
    full_scan,
    page,
    root,
)
from tests.gui_helpers import make_wiki

NEAR_COPY = "wiki/dock-ledger-notes.md"  # a new page: the ledger's text with one fact of its own


def read_pages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths whose bytes the dedup index reads from now on (to shingle them), in order."""
    read: list[str] = []
    real = dedup.read_bytes

    def reading(base: Path | str, path: str) -> bytes:
        read.append(path)
        return real(base, path)

    monkeypatch.setattr(dedup, "read_bytes", reading)
    return read


def changes() -> list[tuple[str, Callable[[Path], object]]]:
    """The scripted changes, each made as its own action (a commit) or outside, as a user does."""
    ledger = facts(6, 42)

    def appended(base: Path, slug: str, fact: str) -> None:
        result = append(Wiki(base), slug, fact)
        assert result.ok, result.message

    def merged(base: Path) -> None:
        wiki = Wiki(base)
        fam = family_of(dedup_families.find_families(wiki), ORIGINAL)
        result = merge_pages(wiki, fam.keep, fam.merges)
        assert result.ok, result.message

    return [
        ("an append to a family's page",
         lambda base: appended(base, ORIGINAL.removesuffix(".md"), "The harbour ledger was reconciled on Friday.")),
        ("an append to a filler page outside every family",
         lambda base: appended(base, "filler/page-3", "A fact of its own about the filler page.")),
        ("an edit that takes a page out of its family",
         lambda base: (base / LEDGER_COPY).write_text(page("Dock Accounts Summary", facts(6, 5), trust=0.6),
                                                      "utf-8")),
        ("a new near-duplicate page",
         lambda base: (base / NEAR_COPY).write_text(page("Dock Ledger Notes", [*ledger[:5], *facts(1, 77)]),
                                                    "utf-8")),
        ("a family merged into its survivor", merged),
        ("a page moved", lambda base: move_page(Wiki(base), NEXT, "archive-notes/aizen-entry-156-moved.md")),
        ("a page deleted", lambda base: (base / NEAR_COPY).unlink()),
        ("a deleted page's copy written back", lambda base: (base / NEAR_COPY).write_text(
            page("Dock Ledger Notes", [*ledger[:5], *facts(1, 77)]), "utf-8")),
    ]


def test_after_every_kind_of_change_a_new_process_answers_what_a_full_scan_does(root: Path) -> None:  # noqa: F811
    dedup_families.find_families(Wiki(root))  # (a full scan's result, kept for the next process)
    assert {OLD, COPY} <= set(family_of(dedup_families.find_families(Wiki(root)), ORIGINAL).pages)
    for step, change in changes():
        change(root)
        fresh = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
        assert fresh == full_scan(root), step
        assert dedup_families.family_count(Wiki(root)) == len(fresh), step  # (Health's figure)
        # and again from what that process kept, nothing changed since
        assert [f.to_json() for f in dedup_families.find_families(Wiki(root))] == fresh, step
    assert any(NEAR_COPY in f["pages"] and LEDGER in f["pages"] for f in fresh)


def test_after_every_kind_of_change_the_followed_index_answers_what_a_full_scan_does(root: Path) -> None:  # noqa: F811
    wiki = Wiki(root)
    dedup.index_for(wiki, full=True)  # every page's features: changes are followed page by page
    for step, change in changes():
        change(root)
        wiki.refresh()
        followed = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert followed == full_scan(root), step
        assert dedup_families.family_count(wiki) == len(followed), step
        assert dedup.index_for(wiki).features.keys() == wiki.pages.keys(), step  # (never a kept result)


def test_a_followed_index_reads_only_the_appended_page(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    wiki = Wiki(root)
    dedup.index_for(wiki, full=True)  # every page's features: changes are followed page by page
    before = dedup_families.find_families(wiki)
    read = read_pages(monkeypatch)
    scans: list[dedup.DedupIndex] = []
    real_scan = dedup.DedupIndex.scan

    def scan(index: dedup.DedupIndex) -> None:
        scans.append(index)
        real_scan(index)

    monkeypatch.setattr(dedup.DedupIndex, "scan", scan)
    assert append(Wiki(root), ORIGINAL.removesuffix(".md"), "The harbour ledger was reconciled on Friday.").ok
    wiki.refresh()
    after = dedup_families.find_families(wiki)
    assert scans == [] and read == [ORIGINAL]  # one page read and shingled, no scan
    assert [f.pages for f in after] == [f.pages for f in before]
    scans.clear()  # (the full scan compared with is not the followed index's)
    assert [f.to_json() for f in after] == full_scan(root)


def test_a_new_process_after_one_append_reads_only_the_appended_page(root: Path,  # noqa: F811
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    dedup_families.find_families(Wiki(root))  # kept
    assert append(Wiki(root), ORIGINAL.removesuffix(".md"), "The harbour ledger was reconciled on Friday.").ok
    read = read_pages(monkeypatch)
    monkeypatch.setattr(dedup, "PARALLEL_SHINGLES", 10**9)  # (a scan would shingle here, where it is seen)
    found = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    assert read == [ORIGINAL]
    assert found == full_scan(root)


def test_titles_compared_at_once_find_what_each_page_finds(tmp_path: Path) -> None:
    """An update of many pages compares their titles with every title in one ``cdist`` (a
    batch at a time): each page is given exactly the titles its own search finds."""
    from rapidfuzz import fuzz, process

    from curator.engine.dedup.index import TITLE_SIMILARITY, DedupIndex

    rng = random.Random(3)
    words = ["harbour", "ledger", "dock", "entry", "summary", "crane", "tide", "notes", "report", "v2"]
    pages = {}
    for i in range(300):
        title = " ".join(rng.choice(words) for _ in range(rng.randint(1, 5))) + rng.choice(["", "s", " 2", "x"])
        pages[f"t/p{i}.md"] = page(title.capitalize(), facts(1, i))
    index = DedupIndex(Wiki(make_wiki(tmp_path / "w", pages)))
    index.scan()
    feats = [index.features[p] for p in sorted(index.features)]
    at_once = index._similar_titles_of(feats, batch=16)
    found = 0
    for f in feats:
        slots, texts = index._title_window([f.title_text])
        each = sorted(int(slots[k]) for _t, _s, k in process.extract(
            f.title_text, texts, scorer=fuzz.ratio, score_cutoff=TITLE_SIMILARITY * 100, limit=None))
        assert sorted(at_once[f.path]) == each, f.path
        found += len(each) > 1
    assert found > 50  # (many titles have similar ones besides their own)
