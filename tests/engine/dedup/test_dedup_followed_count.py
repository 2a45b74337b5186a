"""Health's duplicate figure and the Duplicates queue follow changed pairs (issue 44): after an
update whose pairs changed, the operator's family count is counted again over the families the
changed pairs' pages are in, then and now (:meth:`~curator.engine.dedup.families.FamilyAnswers._count_followed`),
and the families answer saved before is patched with those families
(:meth:`~curator.engine.dedup.families.FamilyAnswers._regrouped`), not grouped from every pair. Through a scripted sequence of changes that make, join, split and
break families, and turn content families into name-only ones and back, each count equals a
full scan's; a page added or removed is counted anew.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import pytest

from curator.engine.corpus.links import LinkIndex
from curator.engine.dedup import cache as dedup_cache
from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import follow
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.wiki import Wiki
from tests.engine.dedup.test_dedup_families import (  # noqa: F401 (root: a fixture)
    LEDGER,
    LEDGER_COPY,
    facts,
    full_scan,
    page,
    root,
)
from tests.engine.dedup.test_dedup_follow import answer, count_scans, scanned_index
from tests.gui_helpers import make_wiki


def _body(base: Path, path: str) -> list[str]:
    text = (base / path).read_text("utf-8").split("## Updates", 1)[1]
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def _write(base: Path, path: str, title: str, bullets: list[str]) -> None:
    (base / path).write_text(page(title, bullets), "utf-8")


def pair_changes(base: Path) -> list[tuple[str, Callable[[], object]]]:
    """Changes to pages that stay pages, each changing some pair: families made, grown, joined
    through a page holding both texts, split again, broken, and a content pair left with its
    names only (a name-only family) and made a copy again."""
    one, ledger = _body(base, "filler/page-1.md"), _body(base, LEDGER)
    return [
        ("a page made a copy of another: a new family",
         lambda: _write(base, "filler/page-2.md", "Filler 2", [*one, "Its own last line here now."])),
        ("a third copy joins it", lambda: _write(base, "filler/page-3.md", "Filler 3", [*one, *facts(1, 3)])),
        ("a page holding both texts joins two families into one",
         lambda: _write(base, "filler/page-4.md", "Filler 4", [*one, *ledger])),
        ("that page's text of its own again: split", lambda: _write(base, "filler/page-4.md", "Filler 4",
                                                                    facts(5, 1004))),
        ("a copy rewritten: its family loses it", lambda: _write(base, LEDGER_COPY, "Dock Accounts Summary",
                                                                  facts(6, 5))),
        ("a copy titled as a page alone now, with a text of its own: a name-only family",
         lambda: _write(base, "filler/page-3.md", "Harbour Ledger", facts(5, 1003))),
        ("the ledger's copy back: its family again, and the title pair no family of its own",
         lambda: _write(base, LEDGER_COPY, "Dock Accounts Summary", [*ledger[:5], *facts(1, 43)])),
        ("the page titled as the ledger made its copy: it joins that family",
         lambda: _write(base, "filler/page-3.md", "Harbour Ledger", [*ledger, "One more line."])),
        ("a page holding both texts again: one family of pages no pair joins but through it",
         lambda: _write(base, "filler/page-4.md", "Filler 4", [*one, *ledger])),
    ]


#: The steps of :func:`pair_changes` that retitle a page.
RETITLING = {"a copy titled as a page alone now, with a text of its own: a name-only family"}


def count_groupings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per grouping of every pair (:meth:`FamilyAnswers._groups`) from now on."""
    grouped: list[int] = []
    real_groups = FamilyAnswers._groups

    def groups(self: FamilyAnswers, *args: object) -> object:
        grouped.append(1)
        return real_groups(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(FamilyAnswers, "_groups", groups)
    return grouped


def full_count(base: Path, dismissed: set[tuple[str, str]] | None = None) -> tuple[int, int]:
    """(content, name-only) families of a full scan of the pages as they are."""
    index = scanned_index(base)
    return FamilyAnswers(index).count(dedup.OPERATOR, dedup.dismissed_pairs(index.wiki) if dismissed is None
                                      else dismissed)


@pytest.mark.parametrize("dismissed", [set(), {("filler/page-1.md", "filler/page-2.md"),
                                               ("wiki/harbour-ledger.md", "filler/page-4.md")}],
                         ids=["none dismissed", "two of the pairs made dismissed"])
def test_a_count_after_changed_pairs_is_counted_over_their_families_and_equals_a_full_scans(
        root: Path, monkeypatch: pytest.MonkeyPatch, dismissed: set[tuple[str, str]]) -> None:  # noqa: F811
    wiki = Wiki(root)
    for a, b in sorted(dismissed):  # (the operator's decisions: what every answer leaves out)
        assert dedup.dismiss(wiki, a, b).ok
    wiki.refresh()
    dismissed = dedup.dismissed_pairs(wiki)
    index = dedup.index_for(wiki, full=True)  # (a long-lived process: the station's worker)
    answers = dedup_families.answers_for(wiki)
    assert answers.count(dedup.OPERATOR, dismissed) == full_count(root, dismissed)  # (what changes are counted from)
    assert [f.to_json() for f in answers.families(dedup.OPERATOR, dismissed)] == full_scan(root)  # (and patched)
    grouped = count_groupings(monkeypatch)
    seen = set()
    for step, change in pair_changes(root):
        change()
        wiki.refresh()
        index.update()
        followed = index.followed_count
        assert followed is not None and followed.was, step  # (the step changed a pair)
        counted = answers.count(dedup.OPERATOR, dismissed)
        listed = [f.to_json() for f in answers.families(dedup.OPERATOR, dismissed)]  # (the Duplicates queue)
        assert grouped == [], step
        assert counted == full_count(root, dismissed), step
        assert listed == full_scan(root) and len(listed) == sum(counted), step
        grouped.clear()  # (the full scans', on copies)
        seen.add(counted)
    assert len(seen) >= 3 and len({names for _, names in seen}) == 2  # (the changes moved both figures)
    # a page gone: the count is made again from every pair
    (root / "filler/page-5.md").unlink()
    wiki.refresh()
    index.update()
    assert index.followed_count is None
    assert answers.count(dedup.OPERATOR, dismissed) == full_count(root, dismissed) and grouped


def test_a_followed_count_sees_a_name_signal_cross_the_fan_out_limit(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A page whose name pairs pass MAX_FANOUT loses that signal with every partner, so a pair of
    two unchanged pages' count can move with a third page's change: counted too."""
    monkeypatch.setattr(dedup, "MAX_FANOUT", 2)
    monkeypatch.setattr(dedup_families, "MAX_FANOUT", 2)
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    answers = dedup_families.answers_for(wiki)
    answers.count()
    for n in (6, 7, 8, 6):  # titled "Overview": a crowd of three, then four pages; then none again
        title = "Overview" if n < 8 else f"Filler {n}"
        _write(root, f"filler/page-{n}.md", title, facts(5, 1000 + n))
        wiki.refresh()
        index.update()
        assert answers.count() == full_count(root), n


def test_a_followed_count_sees_a_page_leave_every_family_through_anothers_fan_out(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Containment passing MAX_FANOUT on one page drops that page's pair with an unchanged page,
    which then is in no content family: its name pairs become families of their own. Neither page
    of that name pair changed, and the count sees it."""
    monkeypatch.setattr(dedup, "MAX_FANOUT", 2)
    monkeypatch.setattr(dedup_families, "MAX_FANOUT", 2)
    ledger = _body(root, LEDGER)
    # the ledger's whole text inside a longer page titled like two others (containment, not body)
    _write(root, "filler/page-6.md", "Overview", [*ledger, *facts(14, 606)])
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    answers = dedup_families.answers_for(wiki)
    before = answers.count()
    assert before == full_count(root)
    _write(root, "filler/page-7.md", "Filler 7", [*ledger, *facts(14, 707)])  # one container too many
    wiki.refresh()
    index.update()
    assert index.followed_count is not None and index.followed_count.was
    after = answers.count()
    assert after == full_count(root) and after[1] > before[1]


def test_health_in_a_new_process_after_changed_pairs_follows_the_count_and_keeps_a_whole_answer(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Health's figure in a new process after each change (a basis and a kept result followed):
    never a grouping of every pair nor a scan, always a full scan's count; what each keeps is
    changes to the same base, and it answers the families of the next process whole (every score
    a family asks for is in it: no scan)."""

    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)
    answer(root)  # the full scan: its result kept whole (the base) with its count
    grouped = count_groupings(monkeypatch)
    kept_whole: list[int] = []
    real_encode = dedup_cache.encode
    monkeypatch.setattr(dedup_cache, "encode", lambda *a, **k: kept_whole.append(1) or real_encode(*a, **k))
    scans = count_scans(monkeypatch)
    links: list[int] = []
    real_links = LinkIndex.__init__

    def link_index(self: LinkIndex, *args: object, **kwargs: object) -> None:
        links.append(1)
        real_links(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LinkIndex, "__init__", link_index)
    counts = []
    for step, change in pair_changes(root):
        if step in RETITLING:
            break  # (links may resolve elsewhere: the inbound counts kept are counted anew, till a new basis)
        change()
        counted = dedup_families.family_count(Wiki(root))  # (a new process: Health)
        assert grouped == [] and kept_whole == [] and scans == [], step
        want = full_count(root)
        counts.append(want)
        assert counted == sum(want), step
        # the next process answers the families from what that one kept alone: every score a
        # family asks for is in it (else a scan)
        grouped.clear()
        scans.clear()
        links.clear()
        followed = answer(root)
        # (the answer saved before, patched; every count it asks for in the kept result: none
        # from a link index of every page)
        assert scans == [] and grouped == [] and links == [], step
        assert followed == full_scan(root) and len(followed) == counted, step
        grouped.clear()  # (the full scans', on copies)
        scans.clear()
    assert len(set(counts)) >= 2 and len(counts) >= 5


def _shape(strength: str, pages: Iterable[str], edges: Mapping[tuple[str, str], list[str]]) -> tuple[object, ...]:
    return strength, frozenset(pages), frozenset((pair, tuple(signals)) for pair, signals in edges.items())


@pytest.mark.parametrize(("seed", "fan_out"), [(44, 5), (49, 5), (50, 5), (44, 2), (45, 2)])
def test_counts_and_regrouped_families_over_random_pair_changes_equal_grouping_every_pair(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, fan_out: int) -> None:
    """The pairs an index holds set by hand (no shingling): random pairs of every signal on 40
    pages, changed again and again around a few pages at a time, with name signals crossing
    MAX_FANOUT (a crowd loses the signal), families splitting into pieces none of whose pages
    changed, look-alike names, and a dismissed pair. After each change the followed count and
    the families grouped again around the changed pairs (with the earlier families holding none
    of their pages) equal grouping every pair."""
    names = [f"p/page-{n:02d}" for n in range(38)] + ["p/café", "p/cafe"]
    base = make_wiki(tmp_path / "w", {f"{n}.md": page(n, [f"Fact {n}."]) for n in names})
    paths = [f"{n}.md" for n in names]
    wiki = Wiki(base)
    index = dedup.DedupIndex(wiki)
    index.features = dict.fromkeys(paths)  # type: ignore[arg-type]  (only which pages it holds is read)
    monkeypatch.setattr(FamilyAnswers, "_family",
                        lambda self, pages, edges, strength: _shape(strength, pages, edges))
    monkeypatch.setattr(dedup_families, "MAX_FANOUT", fan_out)
    rng = random.Random(seed)
    pairs: set[tuple[str, str, str]] = set()

    def install(filed: list[str]) -> None:
        """The pairs as a kept result loaded holds them: as a table, filed as asked for, but
        for those of ``filed`` (the pages an update re-examined)."""
        index.pairs = {signal: {} for signal in dedup.SIGNALS}
        index.partners = {signal: defaultdict(set) for signal in dedup.SIGNALS}
        slot = {p: i for i, p in enumerate(paths)}
        index._unfiled = dedup_cache.PairTable(paths, {signal: (
            np.array([slot[a] for s, a, _b in sorted(pairs) if s == signal], dtype=np.int32),
            np.array([slot[b] for s, _a, b in sorted(pairs) if s == signal], dtype=np.int32),
            np.ones(sum(s == signal for s, _a, _b in pairs))) for signal in dedup.SIGNALS})
        index.file_pairs(filed)

    hubs = paths[:4]  # (pages many others pair with: their name and containment signals crowd out)

    def random_pair(around: list[str]) -> tuple[str, str, str]:
        a, b = rng.choice(around), rng.choice(hubs if rng.random() < 0.3 else paths)
        while b == a:
            b = rng.choice(paths)
        signal = rng.choice(["containment", "containment", "body", "title", "slug", "tags"])
        return (signal, *dedup.pair_key(a, b))

    def everything(answers: FamilyAnswers, dismissed: set[tuple[str, str]]) -> set[tuple[object, ...]]:
        content, alone = answers._groups(dedup.OPERATOR, dismissed)
        return ({_shape("content", members, edges) for members, edges in content}
                | {_shape("names", pair, {pair: signals}) for pair, signals in alone})

    for _ in range(70):
        pairs.add(random_pair(paths))
    dismissed = {dedup.pair_key(*sorted(rng.sample(paths, 2)))}
    dismissed.add(dedup.pair_key(*next(p for _s, *p in sorted(pairs))))
    install([])
    answers = FamilyAnswers(index)
    with answers._answering():
        families = everything(answers, dismissed)  # (and the count every change is followed from)
    edits: dict[tuple[str, str, str], bool] = {}
    splits = 0
    for step in range(200):
        around = rng.sample(paths, rng.randint(1, 3))  # (the pages an update re-examined)
        before = {p for p in pairs if p[1] in around or p[2] in around}
        for pair in sorted(before):
            if rng.random() < 0.3:
                pairs.discard(pair)
        for _ in range(rng.randint(0, 4)):
            pairs.add(random_pair(around))
        after = {p for p in pairs if p[1] in around or p[2] in around}
        install(around)
        assert index.followed_count is not None
        dedup.note_edits(index.followed_count.was, before, after)
        dedup.note_edits(edits, before, after)
        with answers._answering():
            counted = answers._count_followed(index.followed_count, dismissed)
            region, regrouped = answers._regrouped(edits, dismissed)
        fresh = FamilyAnswers(index)
        with fresh._answering():
            now = everything(fresh, dismissed)
        assert counted == (sum(s == "content" for s, *_ in now), sum(s == "names" for s, *_ in now)), step
        patched = {f for f in families if not region & f[1]} | set(regrouped)
        assert patched == now, step
        # (a content family now none of whose pages has a changed pair, holding a page of a family
        # that had one: a piece split off by a crowd, which walking from the changed pages misses)
        changed = {p for e in edits for p in e[1:]}
        touched = {p for f in families if f[0] == "content" and f[1] & changed for p in f[1]}
        splits += sum(1 for f in now if f[0] == "content" and not f[1] & changed and f[1] & touched
                      and f not in families)
        if step % 10 == 9:  # (an answer saved again: later changes are patched from it)
            families, edits = now, {}
    assert splits  # (families none of whose pages had a changed pair were reached)
