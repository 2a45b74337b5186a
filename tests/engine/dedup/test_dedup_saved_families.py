"""The operator's families answer saved beside the kept result (curator/engine/dedup/cache.py,
issue 44): a later answer for the same pages reads it without loading any index; one after a
change, from an index that still holds the kept result's pairs, builds again only the families
that change touched (a page changed or re-examined, an inbound count moved) instead of grouping
every pair and ranking every family. Whatever the path, the answer is exactly a full scan's; a
damaged or foreign saved answer, other dismissed pairs or another reader are never answered from
it."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.dedup import cache as dedup_cache
from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from tests.engine.dedup.test_dedup_families import (  # noqa: F401 (root: a fixture)
    COPY,
    FIXED,
    LEDGER,
    LEDGER_COPY,
    ORIGINAL,
    facts,
    full_scan,
    page,
    root,
)
from tests.engine.dedup.test_dedup_follow import PASSAGE, answer
from tests.gui_helpers import make_wiki


class Work:
    """What answers did from now on: indexes loaded, every pair grouped, families built."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loads: list[int] = []
        self.groupings: list[int] = []
        self.built: list[tuple[str, ...]] = []
        real_update, real_groups, real_family = dedup.DedupIndex.update, FamilyAnswers._groups, FamilyAnswers._family

        def update(index: dedup.DedupIndex, *args: object, **kwargs: object) -> list[str]:
            self.loads.append(1)
            return real_update(index, *args, **kwargs)  # type: ignore[arg-type]

        def groups(answers: FamilyAnswers, *args: object) -> object:
            self.groupings.append(1)
            return real_groups(answers, *args)  # type: ignore[arg-type]

        def family(answers: FamilyAnswers, paths: list[str], *args: object) -> dedup.Family:
            self.built.append(tuple(sorted(paths)))
            return real_family(answers, paths, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(dedup.DedupIndex, "update", update)
        monkeypatch.setattr(FamilyAnswers, "_groups", groups)
        monkeypatch.setattr(FamilyAnswers, "_family", family)

    def clear(self) -> None:
        self.loads.clear()
        self.groupings.clear()
        self.built.clear()


def saved(base: Path) -> bytes | None:
    wiki = Wiki(base)
    wiki.refresh()
    found = wiki.store.derived_since(dedup_cache.FAMILIES_NAME)
    return None if found is None else found[0]


def members_of(found: list[dict[str, object]], path: str) -> dict[str, object]:
    [row] = [m for f in found for m in f["members"] if m["path"] == path]  # type: ignore[attr-defined]
    return row  # type: ignore[no-any-return]


def test_a_later_answer_for_the_same_pages_reads_the_saved_families(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    first = answer(root)
    assert first == full_scan(root) and saved(root) is not None
    work = Work(monkeypatch)
    assert answer(root) == first
    assert work.loads == [] and work.groupings == [] and work.built == []  # no index: what was saved
    # filtered answers are the saved families filtered
    wiki = Wiki(root)
    assert [f.to_json() for f in dedup_families.find_families(wiki, page=ORIGINAL)] == \
        [f for f in first if ORIGINAL in f["pages"]]  # type: ignore[operator]
    assert work.loads == []


def test_after_a_change_only_the_families_it_touches_are_built_again(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    first = answer(root)
    work = Work(monkeypatch)
    # a fact appended to a family member: that family alone is built again, from the saved groups
    assert append(Wiki(root), COPY, "Copy note: the figures were checked twice.").ok
    found = answer(root)
    assert work.loads and work.groupings == []
    assert {ORIGINAL, COPY} <= set(work.built[0]) and len(work.built) == 1
    assert found == full_scan(root) and found != first
    work.clear()
    # a link to the ledger from a page in no family: the ledger's family is built again (its
    # inbound count moved, so may its survivor and its rank)
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    found = answer(root)
    assert work.groupings == [] and work.built == [tuple(sorted((LEDGER, LEDGER_COPY)))]
    assert found == full_scan(root)
    assert members_of(found, LEDGER)["inbound"] == 2
    work.clear()
    # a change to a page in no family, adding no link: no family is built again
    assert append(Wiki(root), "filler/page-4", "One more fact about the quay and its cranes.").ok
    found = answer(root)
    assert work.groupings == [] and work.built == []
    assert found == full_scan(root)


def test_a_change_that_makes_a_new_pair_groups_every_pair_again(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    work = Work(monkeypatch)
    (root / "filler/page-5.md").write_text(page("Filler Five", facts(6, 42)), "utf-8")  # the ledger's text
    found = answer(root)
    assert work.groupings  # (the kept result's pairs are not the pairs any more)
    assert found == full_scan(root)
    assert any("filler/page-5.md" in f["pages"] and LEDGER in f["pages"] for f in found)  # type: ignore[operator]


def test_other_dismissed_pairs_or_another_reader_never_read_the_saved_answer(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    agent = answer(root, "agent:dudu")
    assert agent == [f for f in answer(root, "agent:dudu")]
    dedup.dismiss_pages(Wiki(root), [LEDGER, LEDGER_COPY])
    work = Work(monkeypatch)
    found = answer(root)
    assert work.groupings and found == full_scan(root)
    assert not any(LEDGER in f["pages"] for f in found)  # type: ignore[operator]
    work.clear()
    assert answer(root) == found and work.loads == []  # (then saved with these dismissed pairs)


def test_a_damaged_or_foreign_saved_answer_is_never_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    blob = saved(root)
    assert blob is not None
    wiki = Wiki(root)
    wiki.refresh()
    key, dismissed = dedup.DedupIndex(wiki).kept_key(), dedup_cache.dismissed_digest(dedup.dismissed_pairs(wiki))
    for bad in (b"not a families answer", blob[:len(blob) // 2],
                dedup_cache.encode_families(b"another key", dismissed, b"", []),
                dedup_cache.encode_families(key, dismissed, b"", [b"a part that is not one"]),
                dedup_cache.encode_families(key, dismissed, b"", [
                    dedup_cache.encode_family_part([([FIXED], FIXED, "a row of another shape")])])):
        wiki.store.save_derived(dedup_cache.FAMILIES_NAME, bad)
        assert answer(root) == full_scan(root)


def test_one_process_following_changes_builds_only_what_each_touches(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The station's dedup worker: one index loaded from the basis, answering after each change
    (and keeping its result, as the station asks once the answer is shown)."""
    answer(root)
    wiki = Wiki(root)
    assert dedup.index_for(wiki, full=True).from_basis
    work = Work(monkeypatch)
    for i, (path, fact) in enumerate(((ORIGINAL, "A note on the first item of the entry."),
                                      ("filler/page-6", "The [[aizen-bg3-v2-entry-155]] was reviewed."),
                                      (LEDGER_COPY, "The summary now names the quay too."))):
        assert append(Wiki(root), path, fact).ok
        wiki.refresh()
        found = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert work.groupings == [] and len(work.built) == 1, (i, work.built)
        assert found == full_scan(root), i
        dedup_families.keep_result(wiki)  # (which may group every pair to keep a whole result)
        work.clear()


def test_a_family_whose_pages_were_verified_again_is_built_again(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A passage on one page more becomes boilerplate: every page holding it is verified again
    (the passage leaves its pairs' scores) though none of them changed and the pairs stay. The
    families holding them are built again, with the scores a full scan gives."""
    own = facts(6, 700)
    pages = {"notes/a.md": page("Harbour Routine", [PASSAGE, *own]),
             "notes/b.md": page("Harbour Routine Copy", [PASSAGE, *own, "Copied from the routine."])}
    for i in range(dedup.BOILERPLATE_MIN_PAGES - 2):  # (the passage on as many pages as may share it)
        pages[f"other/o{i}.md"] = page(f"Other {i}", [PASSAGE, *facts(12, 710 + i)])
    for i in range(6):
        pages[f"filler/f{i}.md"] = page(f"Filler {i}", facts(5, 730 + i))
    base = make_wiki(tmp_path / "w", pages)
    first = answer(base)
    assert first == full_scan(base)
    work = Work(monkeypatch)
    (base / "filler/f0.md").write_text(page("Filler 0", [*facts(5, 730), PASSAGE]), "utf-8")
    found = answer(base)
    assert work.groupings == []  # (the same pairs: the saved families, patched)
    assert ("notes/a.md", "notes/b.md") in work.built
    assert found == full_scan(base) and found != first


def test_a_result_kept_again_by_healths_count_leaves_the_answer_patchable(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Health's count after an append keeps the followed result again (other bytes, the same
    pairs): the families answer saved before still groups those pairs, so the next answer
    patches it rather than grouping every pair."""
    answer(root)
    assert append(Wiki(root), COPY, "Copy note: the figures were checked twice.").ok
    kept_before = Wiki(root)
    kept_before.refresh()
    before = kept_before.store.derived_any(dedup_cache.NAME)
    dedup_families.family_count(Wiki(root))  # (a new process: Health's figure, which keeps its result)
    after = Wiki(root)
    after.refresh()
    assert after.store.derived_any(dedup_cache.NAME) != before  # (kept again)
    work = Work(monkeypatch)
    found = answer(root)
    assert work.groupings == [] and len(work.built) == 1 and ORIGINAL in work.built[0]
    assert found == full_scan(root)


def test_a_saved_answer_of_no_family_is_read_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = make_wiki(tmp_path / "w", {f"filler/f{i}.md": page(f"Filler {i}", facts(5, 800 + i)) for i in range(6)})
    assert answer(base) == [] == full_scan(base)
    work = Work(monkeypatch)
    assert answer(base) == [] and work.loads == []


def test_counts_moved_since_the_saved_answer_are_told_by_its_frame_not_looked_up(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """An answer saves whose inbound counts its rows hold (the basis they were followed from and
    the counts that differ from it). The next answer after a change, following the same basis,
    tells the moved counts from the two frames: it looks up the counts of the families it builds
    again only, not of every member (0.6 s at 300,000 pages), and a count that moved back to the
    basis's is a move too."""
    answer(root)
    wiki = Wiki(root)
    wiki.refresh()
    blob = saved(root)
    assert blob is not None
    key, dismissed = dedup.DedupIndex(wiki).kept_key(), dedup_cache.dismissed_digest(dedup.dismissed_pairs(wiki))
    decoded = dedup_cache.decode_families(blob, key, dismissed)
    assert decoded is not None and decoded[2] is not None and decoded[2][1] == {}  # (the scan's own basis)
    work = Work(monkeypatch)
    asked: list[str] = []
    real_inbound = FamilyAnswers.inbound

    def inbound(answers: FamilyAnswers, path: str) -> int:
        asked.append(path)
        return real_inbound(answers, path)

    monkeypatch.setattr(FamilyAnswers, "inbound", inbound)
    filler = root / "filler/page-3.md"
    before = filler.read_text("utf-8")
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    found = answer(root)
    assert work.groupings == [] and work.built == [tuple(sorted((LEDGER, LEDGER_COPY)))]
    assert set(asked) <= {LEDGER, LEDGER_COPY}  # (no other member's count looked up)
    assert found == full_scan(root) and members_of(found, LEDGER)["inbound"] == 2
    frame = dedup_cache.decode_families(saved(root) or b"", key, dismissed)
    assert frame is not None and frame[2] is not None and frame[2][1] == {LEDGER: 2}
    work.clear()
    asked.clear()
    filler.write_text(before, "utf-8")  # (the link taken out again: the ledger's count is the basis's)
    found = answer(root)
    assert work.groupings == [] and work.built == [tuple(sorted((LEDGER, LEDGER_COPY)))]
    assert set(asked) <= {LEDGER, LEDGER_COPY}
    assert found == full_scan(root) and members_of(found, LEDGER)["inbound"] == 1


def test_inbound_moved_between_frames() -> None:
    a, b = b"basis-a", b"basis-b"
    assert dedup_cache.inbound_moved_between((a, {"x": 2, "y": 1}), (a, {"x": 2, "z": 4})) == {"y", "z"}
    assert dedup_cache.inbound_moved_between((a, {"x": 2}), (a, {"x": 3})) == {"x"}
    assert dedup_cache.inbound_moved_between((a, {}), (b, {})) is None  # (another basis: unknown)
    assert dedup_cache.inbound_moved_between(None, (a, {})) is None
    assert dedup_cache.inbound_moved_between((a, {}), None) is None
