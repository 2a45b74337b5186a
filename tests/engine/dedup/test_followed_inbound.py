"""Every page's inbound link count followed from the duplicate scan's basis (issue 44): what the
station shows in its page list after a change, without building the link index (every page
decoded and every link resolved, 1.5 GB at 300,000 pages, held from then on).

Through scripted sequences of appends and edits that add, remove and repeat links (a link to the
page itself too), and of pages added, removed and renamed (the pages linking by their names
counted again), the followed counts equal a new process's link index, of the state they name.
More pages changed than a follow takes, or a damaged basis: there are none, and the caller
builds the link index, never shows a wrong count.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import follow
from curator.engine.dedup import index as dedup
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from tests.engine.dedup.test_dedup_families import LEDGER, facts, page, root  # noqa: F401 (root: a fixture)
from tests.engine.dedup.test_dedup_follow import count_link_indexes
from tests.engine.dedup.test_dedup_incremental import changes


def fresh_counts(base: Path) -> dict[str, int]:
    """Every linked page's inbound count as a new process's link index counts it."""
    wiki = Wiki(base)
    try:
        links = wiki.links
        return {p: n for p in wiki.store.paths if (n := links.inbound(p))}
    finally:
        wiki.close()


def followed(base: Path) -> tuple[bytes, dict[str, int]] | None:
    """The followed counts in a new process, checked to be of the state that process's store is at."""
    wiki = Wiki(base)
    try:
        found = dedup.followed_inbound(wiki)
        assert found is None or found[0] == wiki.store.state
        return found
    finally:
        wiki.close()


def appended(slug: str, fact: str) -> Callable[[Path], None]:
    def change(base: Path) -> None:
        result = append(Wiki(base), slug, fact)
        assert result.ok, result.message
    return change


def written(path: str, text: str) -> Callable[[Path], None]:
    def change(base: Path) -> None:
        (base / path).write_text(text, "utf-8")
    return change


def test_counts_followed_through_link_changes_are_the_link_indexs(root: Path,  # noqa: F811
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    dedup_families.find_families(Wiki(root))  # a full scan: its basis saved
    built = count_link_indexes(monkeypatch)
    steps: list[tuple[str, Callable[[Path], object]]] = [
        ("nothing changed", lambda base: None),
        ("an append adding a link", appended("filler/page-3", "The [[harbour-ledger]] has the dock figures.")),
        ("the home page's links taken out",
         written("wiki/home.md", page("Home", ["Start at the entry and the ledger."]))),
        ("a link to the page itself and two to another, by title and by path",
         written(LEDGER, page("Harbour Ledger", [*facts(6, 42), "See [[harbour-ledger]] and [[Home]].",
                                                 "Also [[wiki/home]]."]))),
        ("a second append to the same page, another link", appended("filler/page-3", "The [[Home]] page lists it.")),
        ("a link taken out again",
         written("filler/page-3.md", page("Filler 3", facts(5, 1003)))),
    ]
    for step, change in steps:
        change(root)
        found = followed(root)
        assert built == [], step  # (followed: the link index never built)
        assert found is not None, step
        assert found[1] == fresh_counts(root), step
        built.clear()
    counts = fresh_counts(root)
    assert LEDGER not in counts and counts["wiki/home.md"] == 1  # (the ledger's link to itself not counted)


def test_pages_added_removed_or_renamed_count_their_linking_pages_again(root: Path,  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A page that came, went or took another title may be what other pages' links resolve to
    now, or no longer (an unresolved link resolves, a name two pages share resolves elsewhere):
    the pages linking by its names are counted as they are now too, and the counts are exact."""
    # (a page whose links are the basis's through every step: an unresolved one, one by a title
    # that will move, one by a file name a page in its own folder will take)
    written("filler/page-8.md", page("Filler 8", [*facts(5, 1008), "See [[Nowhere Yet]], [[Filler 5]] and [[home]]."]))(root)
    dedup_families.find_families(Wiki(root))
    built = count_link_indexes(monkeypatch)
    steps: list[tuple[str, Callable[[Path], object]]] = [
        ("a page added that an unresolved link names",
         written("wiki/nowhere-yet.md", page("Nowhere Yet", ["Links to [[harbour-ledger]] and [[Home]]."]))),
        ("a page given another title than the one a link names",
         written("filler/page-5.md", page("Harbour Ledger Annex", facts(5, 1005)))),
        ("a page of a file name a link names, in the linking page's folder",
         written("filler/home.md", page("Filler Home", ["Back to [[Home]]."]))),
        ("the page the unresolved link came to name removed", lambda base: (base / "wiki/nowhere-yet.md").unlink()),
        ("a page given its title back", written("filler/page-5.md", page("Filler 5", facts(5, 1005)))),
    ]
    for step, change in steps:
        change(root)
        found = followed(root)
        assert built == [], step
        assert found is not None, step
        assert found[1] == fresh_counts(root), step
        built.clear()


def test_through_every_kind_of_change_followed_counts_are_exact_or_none(root: Path) -> None:  # noqa: F811
    """The dedup script's changes (appends, an edit, a page added, a merge, a move, a deletion, a
    page written back): each answer is the link index's, or none."""
    dedup_families.find_families(Wiki(root))
    answered = []
    for step, change in changes():
        change(root)
        found = followed(root)
        if found is not None:
            assert found[1] == fresh_counts(root), step
            answered.append(step)
    assert answered == [step for step, _ in changes()]


def test_past_a_follows_changed_pages_or_without_a_basis_there_are_none(root: Path,  # noqa: F811
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert followed(root) is None  # (no scan yet: no basis)
    dedup_families.find_families(Wiki(root))
    monkeypatch.setattr(follow, "FOLLOW_MAX", 1)
    monkeypatch.setattr(follow, "FOLLOW_SHARE", 10**9)
    appended("filler/page-3", "The [[harbour-ledger]] has the dock figures.")(root)
    assert followed(root) is not None
    appended("filler/page-4", "The [[harbour-ledger]] has the harbour figures too.")(root)
    assert followed(root) is None  # (two pages changed since the basis: more than one follow takes)
    (root / ".curator" / follow.FILE).write_bytes(b"damaged")
    monkeypatch.setattr(follow, "FOLLOW_MAX", 256)
    assert followed(root) is None  # (a damaged basis file: none, never a wrong count)
    assert dedup.read_basis(root / ".curator", b"x" * 16) is None


def test_a_refresh_while_the_pages_are_read_reads_them_again(root: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The station's writer refreshes the store on its own thread: a refresh between reading
    the pages and the store's log (another state) reads both again, never gives up for it (the
    station then resolved every link: 230 MB at 32,000 pages)."""
    from curator.engine.corpus.store import PageStore

    dedup_families.find_families(Wiki(root))
    wiki = Wiki(root)
    wiki.store.refresh()
    real = PageStore.count
    moved: list[int] = []

    def count(self: PageStore) -> int:
        found = real(self)
        if self is wiki.store and not moved:  # (an agent's append, then the refresh that sees it)
            moved.append(1)
            appended("filler/page-3", "The [[harbour-ledger]] has the dock figures.")(root)
            self.refresh()
        return found

    monkeypatch.setattr(PageStore, "count", count)
    found = dedup.followed_inbound(wiki)
    assert moved and found is not None
    assert found[0] == wiki.store.state and found[1] == fresh_counts(root)
    assert found[1][LEDGER] == 2  # (home, and the filler page just appended to)


def test_a_basis_file_replaced_since_its_id_was_read_is_read_again(root: Path,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process publishes a new basis (a compaction) between reading the id the cache
    names and reading the file: the file is another's and reads as none. The id and the file are
    read again, and the counts followed from the one now named."""
    dedup_families.find_families(Wiki(root))
    appended("filler/page-3", "The [[harbour-ledger]] has the dock figures.")(root)
    real = dedup.read_basis
    reads: list[bytes] = []

    def replaced_once(state_dir: Path, saved: bytes) -> object:
        reads.append(saved)
        return None if len(reads) == 1 else real(state_dir, saved)

    monkeypatch.setattr(dedup, "read_basis", replaced_once)
    found = followed(root)
    assert len(reads) == 2 and found is not None and found[1] == fresh_counts(root)
