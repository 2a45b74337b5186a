"""A new process follows changes from a full scan's basis (curator/engine/dedup/follow.py, issue 44).

After a change, ``curator dedup --groups`` (a new process) loads the basis the last full scan
saved and re-examines only the changed pages and those a crossed threshold moves, instead of
reading and shingling every page again. What it answers must be exactly a full scan's: through a
scripted sequence of changes, each answered by a new process; when text crosses the containment
limit (a passage on one page too many) and crosses back; for an agent that may not read every
page. More changed pages than the basis can answer for, a damaged basis file or one of another
scan: a full scan, never a wrong answer.
"""

from __future__ import annotations

import json
import marshal
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import follow
from curator.engine.dedup import index as dedup
from curator.engine.policy.actor import parse_actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from tests.engine.dedup.test_dedup_build import count_scans as scans_of
from tests.engine.dedup.test_dedup_families import (  # noqa: F401 (root: a fixture)
    HIDDEN,
    LEDGER,
    ORIGINAL,
    facts,
    full_scan,
    page,
    root,
    whole_scan,
)
from tests.engine.dedup.test_dedup_incremental import changes, read_pages
from tests.gui_helpers import GIT_ID, make_wiki


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per full scan made from now on (by any process's index)."""
    scans: list[int] = []
    real = dedup.DedupIndex.scan

    def scan(index: dedup.DedupIndex) -> None:
        scans.append(len(scans))
        real(index)

    monkeypatch.setattr(dedup.DedupIndex, "scan", scan)
    return scans


def answer(base: Path, actor: str | None = None) -> list[dict[str, object]]:
    """``curator dedup --groups --json`` in a new process (a new wiki object, nothing held)."""
    who = parse_actor(actor, "sales") if actor else dedup.OPERATOR
    return [f.to_json() for f in dedup_families.find_families(Wiki(base), who)]


def scanned_index(base: Path) -> dedup.DedupIndex:
    """A full scan of a copy of the pages as they are (its pairs and scores: what a followed
    result must equal)."""
    tmp = tempfile.mkdtemp()
    copy = Path(tmp) / "w"
    shutil.copytree(base, copy, symlinks=True, ignore=shutil.ignore_patterns(".curator"))
    index = dedup.DedupIndex(Wiki(copy))
    whole_scan(index)
    index.unkept = None
    return index


def agent_full_scan(base: Path) -> list[dict[str, object]]:
    """An agent's families from a full scan's answer (what the follow must equal for it)."""
    from curator.engine.dedup.families import FamilyAnswers

    with tempfile.TemporaryDirectory() as tmp:  # (a copy: the scan saves its own basis)
        copy = Path(tmp) / "w"
        shutil.copytree(base, copy, symlinks=True, ignore=shutil.ignore_patterns(".curator"))
        wiki = Wiki(copy)
        index = dedup.DedupIndex(wiki)
        whole_scan(index)
        index.unkept = None
        agent = parse_actor("agent:dudu", "sales")
        found = [f.to_json() for f in FamilyAnswers(index).families(agent, dedup.dismissed_pairs(wiki))]
        wiki.close()
        return found


def test_every_change_is_followed_by_a_new_process_without_a_scan(root: Path,  # noqa: F811
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)  # (every change of the script within one basis)
    answer(root)  # the full scan: its result and its basis kept
    scans = count_scans(monkeypatch)
    for step, change in changes():
        change(root)
        followed = answer(root)
        assert scans == [], step  # (full_scan below scans a copy: counted after this check)
        assert followed == full_scan(root), step
        assert dedup_families.family_count(Wiki(root)) == len(followed), step  # (Health's figure)
        scans.clear()
        # an agent is answered from the same followed pairs, its hidden pages left out
        for_agent = answer(root, "agent:dudu")
        assert HIDDEN not in json.dumps(for_agent) and for_agent == agent_full_scan(root), step
        scans.clear()


def test_pages_followed_before_take_the_kept_results_shingles_and_answer_as_a_scan(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Pages changed since the basis but not since the kept result are settled from the shingles
    the kept result keeps of them, not read and shingled again (agents append seconds apart: no
    page is still within the racy-stamp window, which this test closes); through the scripted
    changes, each answer is a full scan's, and no page is read twice (the text then of a page
    only appended to since is found in its text now, read once)."""
    from curator.engine.corpus import store as store_module

    monkeypatch.setattr(store_module, "RACY_NS", 0)
    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)
    monkeypatch.setattr(dedup._BasisGroups, "LAZY_ABOVE", 2)  # (this wiki's groups are small: kept unmade too)
    answer(root)
    scans = count_scans(monkeypatch)
    settled: set[str] = set()  # (the pages settled by the step's answer)
    real_settle = dedup.DedupIndex._settle

    def settle(index: dedup.DedupIndex, changed: set[str], *args: object) -> bool:
        settled.update(changed)
        before = len(read)
        done = real_settle(index, changed, *args)  # type: ignore[arg-type]
        assert read[before:] == [], read[before:]  # (no page read again to settle it)
        for path in changed & index.features.keys():  # (each as its file says, unread)
            every = dedup.shingles(dedup.body_of((root / path).read_bytes()))
            held = index.features[path].shingles
            assert len(held) == len(every) and (held == every).all(), path
        return done

    settled_from_kept = 0
    read: list[str] = []
    for step, change in changes():
        change(root)
        read = read_pages(monkeypatch)
        settled.clear()
        monkeypatch.setattr(dedup.DedupIndex, "_settle", settle)
        followed = answer(root)
        seen = list(read)
        monkeypatch.setattr(dedup.DedupIndex, "_settle", real_settle)
        settled_from_kept += len(settled)
        assert scans == [], step
        assert followed == full_scan(root), step
        scans.clear()
        assert len(seen) == len(set(seen)), (step, seen)  # (each page read once at the most)
    assert settled_from_kept >= 10  # (the script's earlier pages were settled, step after step)


def test_one_append_reads_only_the_appended_page(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    assert append(Wiki(root), ORIGINAL.removesuffix(".md"), "The harbour ledger was reconciled on Friday.").ok
    read = read_pages(monkeypatch)
    scans = count_scans(monkeypatch)
    found = answer(root)
    assert read == [ORIGINAL] and scans == []
    assert found == full_scan(root)


PASSAGE = ("Every quarter the harbour office compares the dock ledgers with the customs manifests and "
           "files a signed reconciliation note with the port authority before the first of the month, "
           "keeping a copy in the shared archive for auditors who ask for the original entries later.")


def passage_wiki(base: Path) -> Path:
    """A and B share a passage and one fact (B contains A's text: a family), and four other
    pages carry the passage among much text of their own: six pages in all, the most on which a
    passage still counts as evidence of copying (dedup.CONTAINMENT_MAX_PAGES)."""
    own = facts(6, 300)
    pages = {
        "notes/a.md": page("Harbour Routine", [PASSAGE, *own]),
        "notes/b.md": page("Dock Checklist", [PASSAGE, *own[:2], *facts(3, 301)]),
    }
    for i in range(4):
        pages[f"other/o{i}.md"] = page(f"Other {i}", [PASSAGE, *facts(12, 400 + i)])
    for i in range(6):
        pages[f"filler/f{i}.md"] = page(f"Filler {i}", facts(5, 500 + i))
    assert dedup.CONTAINMENT_MAX_PAGES == 6
    return make_wiki(base, pages)


def family_with(found: list[dict[str, object]], path: str) -> set[str]:
    return {p for f in found if path in f["pages"] for p in f["pages"]}  # type: ignore[attr-defined]


def test_text_crossing_the_containment_limit_and_back_is_followed(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    base = passage_wiki(tmp_path / "w")
    first = answer(base)
    assert first == full_scan(base) and family_with(first, "notes/a.md") == {"notes/a.md", "notes/b.md"}
    scans = count_scans(monkeypatch)
    # a seventh page with the passage: it is no evidence any more, A and B are no family
    seventh = base / "filler/f0.md"
    seventh.write_text(page("Filler 0", [*facts(5, 500), PASSAGE]), "utf-8")
    crossed = answer(base)
    assert scans == [] and crossed == full_scan(base)
    assert family_with(crossed, "notes/a.md") == set()
    scans.clear()  # (full_scan's own, on a copy)
    # taken out again (a later process, following the same basis, the last result kept between)
    seventh.write_text(page("Filler 0", facts(5, 500)), "utf-8")
    back = answer(base)
    assert scans == [] and back == full_scan(base) == first


def test_more_changed_pages_than_the_margin_make_a_full_scan(root: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages whose text at the basis was never committed cannot be read back: their big shingles
    stay counted, so only FOLLOW_MARGIN of them are followed."""
    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 2)
    for i in range(5):  # (edited, not committed, before the scan that makes the basis)
        (root / f"filler/page-{i}.md").write_text(page(f"Filler {i}", facts(5, 2000 + i)), "utf-8")
    answer(root)
    scans = count_scans(monkeypatch)
    for i in range(2):
        (root / f"filler/page-{i}.md").write_text(page(f"Filler {i}", facts(5, 2100 + i)), "utf-8")
    assert answer(root) == full_scan(root)
    assert len(scans) == 1  # (full_scan's own: the answer followed two such pages)
    scans.clear()
    (root / "filler/page-2.md").write_text(page("Filler 2", facts(5, 2102)), "utf-8")  # a third one
    found = answer(root)
    assert len(scans) == 1  # (the answer's own; full_scan below is not counted)
    assert found == full_scan(root)


def test_many_committed_changes_are_followed_from_one_basis(root: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent's appends are commits: the pages' text at the basis is read back from git, so
    more of them than FOLLOW_MARGIN are followed exactly, each process reading only them."""
    for i in range(12, 24):  # (24 pages to change, more than twice the margin)
        (root / f"filler/page-{i}.md").write_text(page(f"Filler {i}", facts(5, 1000 + i)), "utf-8")
    subprocess.run(["git", *GIT_ID, "add", "filler"], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "more filler"], cwd=root, check=True)
    answer(root)
    scans = count_scans(monkeypatch)
    changed = [f"filler/page-{i}" for i in range(24)]
    assert len(changed) > 2 * follow.FOLLOW_MARGIN
    for i, slug in enumerate(changed):
        assert append(Wiki(root), slug, f"A fact of its own about filler number {i} and its ledger.").ok
    read = read_pages(monkeypatch)
    found = answer(root)
    assert scans == [] and sorted(read) == sorted(f"{slug}.md" for slug in changed)
    assert found == full_scan(root)


def test_the_text_then_of_a_page_only_appended_to_is_found_in_its_text_now_not_in_git(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A page only appended to since the basis (an agent's facts: its body grows at its end, its
    frontmatter's date changes) holds its text then as the start of its text now: no page's text
    then is asked of git (which reads a big folder's whole tree). A page edited in its middle is
    asked of git, that page alone; each answer is a full scan's."""
    from curator.engine.repo.git import Git

    answer(root)
    scans = count_scans(monkeypatch)
    asked: list[str] = []
    real = Git.show_many

    def show_many(self: Git, pairs: list[tuple[str, str]]) -> object:
        asked.extend(p for _rev, p in pairs)
        return real(self, pairs)

    monkeypatch.setattr(Git, "show_many", show_many)
    for i in range(4):
        assert append(Wiki(root), f"filler/page-{i}", f"A fact of its own about filler number {i}.").ok
        assert append(Wiki(root), "filler/page-0", f"Another fact about the first filler, {i}.").ok
        found = answer(root)
        assert scans == [] and asked == [], i
        assert found == full_scan(root), i
        scans.clear()  # (full_scan's, of a copy)
    middle = root / "filler/page-5.md"
    text = middle.read_text("utf-8")
    at = text.index("\n", len(text) // 2)
    middle.write_text(text[:at] + " A word edited in." + text[at:], "utf-8")
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-am", "an edit in the middle"], cwd=root, check=True)
    found = answer(root)
    assert scans == [] and asked == ["filler/page-5.md"]
    assert found == full_scan(root)


def test_a_template_leaving_pages_until_it_counts_again_makes_a_scan(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A passage on more pages than the basis lists per page (big) is boilerplate; taken out of
    enough pages it counts as text again, and which pages hold it is not kept: a scan."""
    pages = {f"notes/t{i}.md": page(f"Templated {i}", [PASSAGE, *facts(3, 700 + i)]) for i in range(20)}
    pages["notes/a.md"] = page("Harbour Routine", [PASSAGE, *facts(6, 300)])
    base = make_wiki(tmp_path / "w", pages)
    answer(base)
    scans = count_scans(monkeypatch)
    for i in range(3):  # 21 pages -> 18: still boilerplate (followed)
        (base / f"notes/t{i}.md").write_text(page(f"Templated {i}", facts(3, 700 + i)), "utf-8")
    assert answer(base) == full_scan(base) and len(scans) == 1  # (full_scan's)
    scans.clear()
    for i in range(3, 13):  # -> 8 pages: text again
        (base / f"notes/t{i}.md").write_text(page(f"Templated {i}", facts(3, 700 + i)), "utf-8")
    found = answer(base)
    assert len(scans) == 1 and found == full_scan(base)


def test_a_damaged_or_foreign_basis_is_never_trusted(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    wiki = Wiki(root)
    basis = wiki.state_dir / follow.FILE
    assert basis.exists()
    (root / "filler/page-1.md").write_text(page("Filler 1", facts(5, 3001)), "utf-8")
    basis.write_bytes(basis.read_bytes()[: len(basis.read_bytes()) // 2])  # cut short
    scans = count_scans(monkeypatch)
    assert answer(root) == full_scan(root) and len(scans) == 2  # (answer's, then full_scan's copy)
    scans.clear()
    # a basis file another scan wrote (its id not the one the cache holds for the result's state)
    saved = basis.read_bytes()
    (root / "filler/page-2.md").write_text(page("Filler 2", facts(5, 3002)), "utf-8")
    other = dedup.DedupIndex(Wiki(root))
    other.scan()  # writes its own basis, whose id the cache now holds...
    basis.write_bytes(saved)  # ...but the file is the older one's
    scans.clear()
    (root / "filler/page-3.md").write_text(page("Filler 3", facts(5, 3003)), "utf-8")
    assert answer(root) == full_scan(root) and len(scans) == 2


def test_the_basis_as_written_is_not_read_through_again_but_a_touched_one_is(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The cache names the basis file by its id and the stamp of the file as written: a later
    process finding that very file checks only its header and sizes; a file changed since
    (rewritten in place, its stamp another) has every table checked again, and one whose
    tables are out of order is refused: the answer is a scan's."""
    answer(root)
    wiki = Wiki(root)
    wiki.store.stamps()
    saved = wiki.store.derived_since(follow.NAME)
    assert saved is not None and len(saved[0]) == 16 + 32  # (its id and the file's stamp)
    basis = wiki.state_dir / follow.FILE
    assert follow.stamp_of(basis.stat()) == saved[0][16:]
    wiki.close()
    checked: list[bool] = []
    real = follow.decode

    def decode(blob, key, *, as_written=False):  # type: ignore[no-untyped-def]
        checked.append(as_written)
        return real(blob, key, as_written=as_written)

    monkeypatch.setattr(follow, "decode", decode)
    scans = count_scans(monkeypatch)
    (root / "filler/page-1.md").write_text(page("Filler 1", facts(5, 3001)), "utf-8")
    assert answer(root) == full_scan(root)
    assert checked[0] is True and len(scans) == 1  # (followed from the file as written; the copy's scan)
    # the same bytes but for one table out of order, written in place: the stamp moved
    blob = bytearray(basis.read_bytes())
    size = int.from_bytes(blob[len(follow.MAGIC):len(follow.MAGIC) + 8], "little")
    start = len(follow.MAGIC) + 8 + size
    places = {name: (at, nbytes) for name, _dtype, _shape, at, nbytes in
              marshal.loads(bytes(blob[len(follow.MAGIC) + 8:start]))[-1]}
    at, nbytes = places["sample_keys"]
    assert nbytes >= 16
    first = blob[start + at:start + at + 8]
    blob[start + at:start + at + 8] = b"\xff" * 8  # (the first key the biggest: not sorted)
    assert first != b"\xff" * 8
    was = basis.stat()
    with basis.open("r+b") as f:
        f.write(blob)
    os.utime(basis, ns=(was.st_atime_ns, was.st_mtime_ns + 1_000_000_000))  # (whatever the clock's tick)
    checked.clear()
    scans.clear()
    (root / "filler/page-2.md").write_text(page("Filler 2", facts(5, 3002)), "utf-8")
    assert answer(root) == full_scan(root)
    assert checked[0] is False and len(scans) == 2  # (checked whole, refused: scanned; the copy's scan)


def count_link_indexes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per whole link index built from now on (by any wiki)."""
    built: list[int] = []
    real = Wiki.links.fget  # type: ignore[attr-defined]

    def links(wiki: Wiki):  # type: ignore[no-untyped-def]
        built.append(1)
        return real(wiki)

    monkeypatch.setattr(Wiki, "links", property(links))
    return built


def test_inbound_counts_follow_links_added_and_removed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    built = count_link_indexes(monkeypatch)
    scans = count_scans(monkeypatch)
    # a link to the ledger's family added by an append, then the home page's links taken out
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    added = answer(root)
    assert scans == [] and built == []  # (followed: neither a scan nor the whole link index)
    assert added == full_scan(root)
    ledger = next(m for f in added for m in f["members"] if m["path"] == LEDGER)  # type: ignore[attr-defined]
    assert ledger["inbound"] == 2  # home and the filler page
    scans.clear()
    built.clear()
    (root / "wiki/home.md").write_text(page("Home", ["Start at the entry and the ledger."]), "utf-8")
    removed = answer(root)
    assert scans == [] and built == [] and removed == full_scan(root)
    ledger = next(m for f in removed for m in f["members"] if m["path"] == LEDGER)  # type: ignore[attr-defined]
    assert ledger["inbound"] == 1
    scans.clear()
    built.clear()
    # a changed title may change what links resolve to: the link index answers
    (root / "filler/page-5.md").write_text(page("Harbour Ledger Annex", facts(5, 1005)), "utf-8")
    assert answer(root) == full_scan(root) and built


def test_one_process_follows_inbound_counts_change_after_change(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The station's dedup worker holds an index loaded from the basis and answers after each
    change: the inbound counts are followed there too, never the whole link index built (which
    decodes every page: 1.4 s and 230 MB at 32,000 pages, after every change)."""
    answer(root)
    wiki = Wiki(root)
    assert dedup.index_for(wiki, full=True).from_basis
    built = count_link_indexes(monkeypatch)
    scans = count_scans(monkeypatch)

    def followed() -> list[dict[str, object]]:
        """The families after the change, which must equal a full scan's of a copy (which scans,
        so the scans and link indexes made meanwhile are checked, then forgotten, first)."""
        wiki.refresh()
        found = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert scans == [] and built == []
        assert found == full_scan(root)
        scans.clear()
        built.clear()
        return found

    def ledger_inbound(found: list[dict[str, object]]) -> int:
        return int(next(m for f in found for m in f["members"] if m["path"] == LEDGER)["inbound"])  # type: ignore[attr-defined]

    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    assert ledger_inbound(followed()) == 2
    assert append(Wiki(root), "filler/page-4", "The [[harbour-ledger]] has the crane figures too.").ok
    assert ledger_inbound(followed()) == 3
    (root / "wiki/home.md").write_text(page("Home", ["Start at the entry and the ledger."]), "utf-8")
    assert ledger_inbound(followed()) == 2
    # a changed title may change what links resolve to: the link index answers from then on
    (root / "filler/page-5.md").write_text(page("Harbour Ledger Annex", facts(5, 1005)), "utf-8")
    wiki.refresh()
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(root) and built


def test_a_state_moved_without_a_changed_page_keeps_the_followed_inbound_counts(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The store's state moves when a page written within its file clock's tick settles (the same
    bytes, now trusted by their stamp): the counts followed for the state before hold for the new
    one, and the families never build the whole link index for it (in the station's dedup worker
    at 32,000 pages that cost 1.9 s and 200 MB after every settle)."""
    from curator.engine.corpus import store as store_module
    from tests.engine.corpus.test_corpus_store import move_store_clock

    answer(root)
    wiki = Wiki(root)
    assert dedup.index_for(wiki, full=True).from_basis
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    wiki.refresh()
    dedup_families.find_families(wiki)
    assert wiki.store.racy_digest("filler/page-3.md") is not None  # (just written: not trusted by its stamp yet)
    before = wiki.store.state
    move_store_clock(monkeypatch, 2 * store_module.RACY_NS)
    built = count_link_indexes(monkeypatch)
    scans = count_scans(monkeypatch)
    wiki.refresh()
    assert wiki.store.state != before and wiki.store.racy_digest("filler/page-3.md") is None
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert scans == [] and built == []
    assert found == full_scan(root)
    ledger = next(m for f in found for m in f["members"] if m["path"] == LEDGER)  # type: ignore[attr-defined]
    assert ledger["inbound"] == 2  # home and the appended page


def test_counts_of_older_pages_are_never_carried_to_a_later_state(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A scanned index (its scan counted every page's inbound links, which it then follows from
    the basis it saved) counts a change's links; when the state then moves without a changed
    page, the scan's counts (of the pages before the change) do not come back."""
    from curator.engine.corpus import store as store_module
    from tests.engine.corpus.test_corpus_store import move_store_clock

    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    assert index.scanned and index.from_basis and index.known_inbound()
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    wiki.refresh()
    assert dedup.index_for(wiki) is index  # (brought up to date; nothing answered, nothing counted)
    assert wiki.store.racy_digest("filler/page-3.md") is not None
    move_store_clock(monkeypatch, 2 * store_module.RACY_NS)
    wiki.refresh()
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert found == full_scan(root)
    ledger = next(m for f in found for m in f["members"] if m["path"] == LEDGER)  # type: ignore[attr-defined]
    assert ledger["inbound"] == 2


def _resident_kb_of(path: Path) -> int | None:
    """This process's resident kB of its mappings of ``path`` (None: not mapped)."""
    found, mapped = 0, False
    current = False
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as f:
        for line in f:
            head = line.split(maxsplit=1)[0]
            if not head.endswith(":") or "-" in head:  # (a mapping's first line)
                current = line.rstrip("\n").endswith(str(path))
                mapped = mapped or current
            elif current and head == "Rss:":
                found += int(line.split()[1])
    return found if mapped else None


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps (Linux)")
def test_a_long_lived_index_holds_none_of_the_basis_file_resident(root: Path) -> None:  # noqa: F811
    """The station's dedup worker follows change after change from the basis file it maps: what
    the load's checks and each follow read of it is dropped from the process's resident memory
    after the update (it stays in the system's file cache), and the answers stay a full scan's."""
    # (the scan and its answer in another process, as the station's worker finds them: the
    # scanning index follows the basis it saved, and its mapping is not this test's)
    subprocess.run([sys.executable, "-c", "import sys; from curator.cli import main; sys.exit(main(sys.argv[1:]))",
                    "--wiki", str(root), "dedup", "--groups", "--json"], check=True, capture_output=True)
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    assert index.from_basis
    path = (wiki.state_dir / follow.FILE).resolve()
    assert _resident_kb_of(path) == 0
    for i in (3, 4):
        assert append(Wiki(root), f"filler/page-{i}", "The [[harbour-ledger]] has more figures.").ok
        wiki.refresh()
        assert dedup.index_for(wiki) is index
        assert _resident_kb_of(path) == 0, i
        assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(root)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps (Linux)")
def test_decoding_a_mapped_basis_leaves_none_of_it_resident(root: Path) -> None:  # noqa: F811
    """The checks of a basis read most of its tables whole: what they read is let go as they go
    (at 300,000 pages it was 500 MB of a follow's 970 MB peak), and the header is read from the
    mapping itself, not from a copy of it."""
    subprocess.run([sys.executable, "-c", "import sys; from curator.cli import main; sys.exit(main(sys.argv[1:]))",
                    "--wiki", str(root), "dedup", "--groups", "--json"], check=True, capture_output=True)
    path = (Wiki(root).state_dir / follow.FILE).resolve()
    blob = follow.read(path)
    assert isinstance(blob, follow.mmap.mmap)
    basis = follow.decode(blob, follow.key_of(dedup.SETTINGS))
    assert basis is not None and basis.paths and basis.mapping is blob
    assert _resident_kb_of(path) == 0


def test_past_follow_max_changed_pages_the_link_index_counts_inbound(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A long-lived process reads the links of every page changed since the basis at each
    update; past FOLLOW_MAX of them the link index answers the inbound counts instead (built once),
    and the answers stay a full scan's."""
    answer(root)
    wiki = Wiki(root)
    assert dedup.index_for(wiki, full=True).from_basis
    monkeypatch.setattr(follow, "FOLLOW_MAX", 2)  # (after the load: it also bounds a new process's)
    built = count_link_indexes(monkeypatch)
    for i, expect_built in ((3, False), (4, False), (6, True)):
        assert append(Wiki(root), f"filler/page-{i}", "The [[harbour-ledger]] has more figures.").ok
        wiki.refresh()
        found = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert bool(built) == expect_built, i
        assert found == full_scan(root), i
        built.clear()  # (full_scan's own, of a copy, too)


def test_an_index_loaded_from_the_basis_follows_committed_changes_beyond_the_margin(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The station's helper holds an index loaded from the basis and follows each change page by
    page: a page it holds only the listed shingles of is read back from git when it changes."""
    answer(root)
    assert append(Wiki(root), "filler/page-0", "The first change since the basis, about its ledger.").ok
    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    assert index.from_basis
    scans = count_scans(monkeypatch)
    for i in range(1, 12):
        assert append(Wiki(root), f"filler/page-{i}", f"A fact of its own about filler number {i}.").ok
        wiki.refresh()
        followed = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert scans == [], i
    assert followed == full_scan(root)


def test_more_appends_than_the_store_kept_states_for_before_are_followed(root: Path,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every append is a new state of the page cache; the changes since the basis are found from
    the states the cache keeps, as many as the basis follows pages."""
    from curator.engine.corpus import store as page_store

    assert page_store.CHANGES_KEPT >= follow.FOLLOW_MAX
    answer(root)
    scans = count_scans(monkeypatch)
    for i in range(40):  # (the cache kept 16 states before: the 17th append made a scan)
        page_of = f"filler/page-{i % 12}" if i < 12 else f"wiki/linker-{i % 3}" if i < 15 else f"filler/page-{i % 12}"
        assert append(Wiki(root), page_of, f"Fact number {i} about the filler's own ledger.").ok
    assert answer(root) == full_scan(root) and len(scans) == 1  # (full_scan's own)


def test_scores_are_reused_only_for_pages_not_changed_since_the_kept_result(root: Path) -> None:  # noqa: F811
    """A kept result's scores are reused for every pair neither of whose pages changed since it
    was made: the pages it followed from the basis (changed then, or discounted anew) are made
    what they were for it (_settle) before any pair is examined again."""
    from curator.engine.dedup import cache as dedup_cache

    answer(root)
    index = dedup.DedupIndex(Wiki(root))
    scores = {"title": 1.0, "tags": 0.0, "slug": 0.5, "body": 0.9, "containment": 0.9}
    pairs = [("a.md", "b.md"), ("c.md", "d.md"), ("e.md", "f.md")]
    kept = dedup_cache.Kept({"body": {pairs[2]: 0.9}}, {p: dict(scores) for p in pairs}, {},
                            basis=(b"basis", ("c.md",)))
    index._take_kept(kept, {"a.md"})  # a changed since the kept result; c was discounted anew for it
    assert index.pair_scores("c.md", "d.md") == scores and index.pair_scores("f.md", "e.md") == scores
    with pytest.raises(KeyError):  # (computed anew: from features this bare index does not hold)
        index.pair_scores("a.md", "b.md")
    assert index.pairs["body"] == {pairs[2]: 0.9} and index.partners["body"]["f.md"] == {"e.md"}
    index._forget("e.md")  # examined again: the kept scores of its pairs no longer answer
    with pytest.raises(KeyError):
        index.pair_scores("e.md", "f.md")
    assert index.pair_scores("c.md", "d.md") == scores


def test_the_basis_features_behave_as_a_dict_of_every_page_made_as_asked() -> None:
    """The features a followed basis holds (made when first asked for) answer every question a
    dict of them all would, through any sequence of sets and deletions, making only those asked."""
    import numpy as np

    paths = [f"p{i:03d}.md" for i in range(40)]
    made: list[int] = []

    def make(i: int) -> dedup.Features:
        made.append(i)
        return dedup.Features(paths[i], (i, i), "", "", "", (), "", "", (), (), frozenset(), np.zeros(0, dtype=np.uint64))

    lazy = dedup.BasisFeatures(paths, make, lambda i: (i, i))
    # (as a basis holds them: slots found in the sorted paths, every stamp in one array)
    slotted = dedup.BasisFeatures(paths, make, lambda i: (i, i), follow.SortedSlots(paths),
                                  np.array([(i, i) for i in range(len(paths))], dtype=np.int64))
    assert made == [] and len(lazy) == 40 and list(lazy) == paths and "p007.md" in lazy
    plain = {p: make(i) for i, p in enumerate(paths)}
    made.clear()
    rng = random.Random(7)
    for step in range(400):
        path = rng.choice([*paths, "new1.md", "new2.md", "new3.md"])
        kind = rng.random()
        if kind < 0.3:
            f = dedup.Features(path, (1000 + step, 1), "", "", "", (), "", "", (), (), frozenset(), np.zeros(0, dtype=np.uint64))
            lazy[path] = slotted[path] = plain[path] = f
        elif kind < 0.5:
            assert (lazy.pop(path, None) is None) == (plain.pop(path, None) is None) == (slotted.pop(path, None) is None)
        elif kind < 0.8:
            assert (path in lazy) == (path in plain) == (path in slotted)
            assert lazy.stamp(path) == slotted.stamp(path) == (plain[path].stamp if path in plain else None)
        elif kind < 0.9:
            got, want = lazy.get(path), plain.get(path)
            assert (got is None) == (want is None) and (got is None or (got.path, got.stamp) == (want.path, want.stamp))
        else:  # (borrowed to be read: never held by that, nor set by it)
            held = lazy.held()
            mine = dict(lazy.made())
            if path in plain:
                got = lazy.lend(path)
                assert (got.path, got.stamp) == (plain[path].path, plain[path].stamp)
                assert got is mine.get(path, got) and lazy[path] is got  # (asked for after: that one, held)
            else:
                with pytest.raises(KeyError):
                    lazy.lend(path)
            assert lazy.held() == held
        assert len(lazy) == len(plain) == len(slotted) and sorted(lazy) == sorted(plain) == sorted(slotted)
        # which pages differ from a store's stamps: those held of another stamp or gone, those not held
        pages = {p: ((i, i) if rng.random() < 0.8 else (i, -1)) for i, p in enumerate([*paths, "new1.md", "new4.md"])
                 if rng.random() < 0.9}
        want = {p for p in pages if p not in plain or plain[p].stamp != pages[p]} | {p for p in plain if p not in pages}
        assert lazy.differing(pages) == want == slotted.differing(pages) and lazy.held() == set(plain)
        # (told which basis pages differ from these stamps and which pages the basis lacks, as the
        # basis's loading found them in the store's log of changes)
        basis = {p for i, p in enumerate(paths) if pages.get(p) != (i, i)}
        added = {p for p in pages if p not in paths}
        assert lazy.differing(pages, basis) == want == slotted.differing(pages, basis, added)
    assert len(made) < 40  # (only the pages asked for were made)
    assert {p for p, _ in lazy.made()} <= set(plain)


def tagged(title: str, tags: list[str], seed: int) -> str:
    return page(title, facts(5, seed)).replace("---\n#", f"tags: [{', '.join(tags)}]\n---\n#", 1)


def test_a_tag_crossing_the_rare_limit_and_back_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A and B share two tags rare in their folder (a names pair). A ninth page taking one of them
    makes it a category (no pair); a later process, following the same basis with the result kept
    between, sees it leave again: the tag groups it starts from must be the kept result's, not
    the basis's, or the pair stays lost."""
    assert dedup.RARE_TAG_PAGES == 8
    pages = {"notes/a.md": tagged("Harbour Routine", ["alpha", "beta"], 600),
             "notes/b.md": tagged("Dock Checklist", ["alpha", "beta"], 601)}
    for i in range(6):
        pages[f"notes/o{i}.md"] = tagged(f"Other {i}", ["alpha"], 610 + i)
    pages["notes/ninth.md"] = tagged("Ninth", ["gamma"], 620)
    base = make_wiki(tmp_path / "w", pages)
    first = answer(base)
    assert first == full_scan(base) and family_with(first, "notes/a.md") == {"notes/a.md", "notes/b.md"}
    scans = count_scans(monkeypatch)
    (base / "notes/ninth.md").write_text(tagged("Ninth", ["gamma", "alpha"], 620), "utf-8")
    crossed = answer(base)
    assert scans == [] and crossed == full_scan(base) and family_with(crossed, "notes/a.md") == set()
    scans.clear()
    (base / "notes/ninth.md").write_text(tagged("Ninth", ["gamma"], 621), "utf-8")
    back = answer(base)
    assert scans == [] and back == full_scan(base)
    assert family_with(back, "notes/a.md") == {"notes/a.md", "notes/b.md"}


def _random_groups(rng: random.Random, paths: list[str], most: int, tags: str,
                   small: dict[tuple[str, str], set[str]] | None = None) -> tuple[
                       dict[tuple[str, str], set[str]], dedup._BasisGroups, dict[tuple[str, str], set[str]]]:
    """Pages filed at random under (folder, tag) groups (fewer than ``most`` each): the groups,
    a basis's lazy table of them, and a plain defaultdict of them to compare with."""
    from collections import defaultdict

    filed: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p in paths:
        for _ in range(rng.randrange(most)):
            filed[(rng.choice("ab"), rng.choice(tags))].add(p)
    filed.update(small or {})
    slot = {p: i for i, p in enumerate(paths)}
    lazy = dedup._BasisGroups(follow.groups_of(filed, slot), paths)
    return filed, lazy, defaultdict(set, {k: set(v) for k, v in filed.items()})


def test_the_basis_groups_behave_as_a_defaultdict_of_every_group_made_as_asked() -> None:
    """The title and tag groups a followed basis holds (a group made when first asked for) answer
    as a defaultdict of every group filed at once would, through additions, removals (a group
    emptied and deleted is never made again from the basis) and lookups of any key."""
    rng = random.Random(11)
    paths = [f"p{i:03d}.md" for i in range(60)]
    _filed, lazy, plain = _random_groups(rng, paths, 3, "xyzw")
    keys = [(f, t) for f in "abc" for t in "xyzwv"]
    for _ in range(600):
        key, path, kind = rng.choice(keys), rng.choice(paths), rng.random()
        if kind < 0.3:
            lazy[key].add(path)
            plain[key].add(path)
        elif kind < 0.6:
            dedup._drop(lazy, key, path)
            dedup._drop(plain, key, path)
        else:
            assert (key in lazy) == (key in plain)
            assert lazy.get(key, set()) == plain.get(key, set())
            assert len(lazy.get(key, ())) == len(plain.get(key, ()))
    assert {k: v for k, v in lazy.items() if v} == {k: v for k, v in plain.items() if v}


def test_a_big_basis_group_is_not_made_as_pages_join_and_leave_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A big group (a folder's category tag) is not made when a settled page leaves and joins it:
    the change is noted beside the basis's group and its size answered from both, equal to a
    defaultdict's through random joins, leaves and lookups; asked for, it is made with every
    change noted, and one left empty is gone."""
    monkeypatch.setattr(dedup._BasisGroups, "LAZY_ABOVE", 6)
    rng = random.Random(5)
    paths = [f"p{i:03d}.md" for i in range(80)]
    filed, lazy, plain = _random_groups(rng, paths, 4, "xyz", small={("a", "small"): {paths[0], paths[1]}})
    keys = [*filed, ("c", "new")]
    big = [k for k in filed if len(filed[k]) > 6]
    assert len(big) >= 4
    for _ in range(400):  # joins, leaves and sizes: no big group made
        key, path, kind = rng.choice(keys), rng.choice([*paths, "other.md"]), rng.random()
        if kind < 0.35:
            lazy.add(key, path)
            plain[key].add(path)
        elif kind < 0.7:
            lazy.drop(key, path)
            dedup._drop(plain, key, path)
        else:
            assert lazy.size(key) == len(plain.get(key, ())), key
    assert not any(dict.__contains__(lazy, k) for k in big)
    gone = big[-1]  # every page leaves a big group before it is asked for: it is not there
    for path in [*plain[gone], *filed[gone]]:
        lazy.drop(gone, path)
        dedup._drop(plain, gone, path)
    assert lazy.size(gone) == 0 and not dict.__contains__(lazy, gone)
    assert gone not in lazy and lazy.get(gone) is None
    for key in keys:  # asked for: made with what changed
        assert lazy.get(key, set()) == plain.get(key, set()) and lazy.size(key) == len(plain.get(key, ()))
    # a big group every page leaves is gone, as a defaultdict's emptied group is
    key = big[0]
    for path in list(plain[key]):
        lazy.drop(key, path)
        dedup._drop(plain, key, path)
    assert key not in lazy and lazy.size(key) == 0
    assert {k: v for k, v in lazy.items() if v} == {k: v for k, v in plain.items() if v}


def test_a_basis_damaged_inside_a_page_chunk_makes_a_scan_not_an_error(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A page's names and listed shingles are decoded when the follow asks for them: a damaged
    chunk (which the file's checks cannot see without decoding every page) is found then, and
    the answer is a full scan's, with no error."""
    answer(root)
    wiki = Wiki(root)
    path = wiki.state_dir / follow.FILE
    blob = path.read_bytes()
    basis = follow.decode(blob, follow.key_of(dedup.SETTINGS))
    assert basis is not None
    chunk = basis.names.compressed()[0]
    at = blob.index(chunk)
    path.write_bytes(blob[:at + 10] + bytes(b ^ 0x5A for b in blob[at + 10:at + 20]) + blob[at + 20:])
    assert follow.decode(path.read_bytes(), follow.key_of(dedup.SETTINGS)) is not None  # (checked only when read)
    (root / "filler/page-1.md").write_text(page("Filler 1", facts(5, 3001)), "utf-8")
    scans = count_scans(monkeypatch)
    assert answer(root) == full_scan(root) and len(scans) == 2  # (answer's, then full_scan's copy)
    with pytest.raises(follow.DamagedBasis):
        basis.names.__class__(basis.names.at, chunks=[b"not zlib"] * len(basis.names.compressed())).part(0)


def test_a_followed_result_is_kept_as_changes_to_the_scans_and_made_whole_exactly(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """After the scan's result is kept whole (and as the base), each followed result is kept as
    the changes to it alone: its pairs and scores of the pages changed since the basis, the
    scores and inbound counts the base does not hold. Made whole again with the base, it is the
    result the follow computed, through every scripted change; a base replaced since is never
    used to make it whole."""
    from curator.engine.dedup import cache as dedup_cache

    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)
    answer(root)
    wiki = Wiki(root)
    wiki.store.count()
    key = dedup_cache.key_of(wiki.store.attachments_key(), dedup.SETTINGS)
    base_blob = wiki.store.derived_any(dedup_cache.BASE_NAME)
    assert base_blob is not None and wiki.store.derived(dedup_cache.NAME) == base_blob
    kept: list[tuple[dedup_cache.Kept, bytes]] = []
    real = dedup_cache.encode_delta

    def recording(whole: dedup_cache.Kept, key: bytes, base: dedup_cache.KeptBase, changed: object) -> bytes:
        blob = real(whole, key, base, changed)  # type: ignore[arg-type]
        kept.append((whole, blob))
        return blob

    monkeypatch.setattr(dedup_cache, "encode_delta", recording)
    deltas = 0

    def link(base: Path) -> None:
        (base / "filler/page-4.md").write_text(
            page("Filler 4", [*facts(5, 3004), f"See [[{ORIGINAL.removesuffix('.md').rsplit('/', 1)[-1]}]]."]), "utf-8")
        subprocess.run(["git", *GIT_ID, "commit", "-q", "-am", "a link"], cwd=base, check=True)

    linked = ("a link to a family's page (its inbound count changes)", link)
    for step, change in [*changes()[:2], linked, *changes()[2:]]:
        change(root)
        assert answer(root) == full_scan(root), step
        if not kept:  # (a page added since the basis and deleted again: nothing to follow, none kept)
            continue
        deltas += 1
        whole, blob = kept[-1]
        # (only the pairs of the pages changed since the basis are in it)
        _version, _key, _count, _own, _base, changed, _paths, signals, *_ = marshal.loads(zlib.decompress(blob))
        moved = set(changed.split("\0"))
        assert sum(len(a) // 4 for _signal, a, _b, _v in signals) == sum(
            p[0] in moved or p[1] in moved for pairs in whole.pairs.values() for p in pairs) > 0, step
        made = dedup_cache.decode(blob, key, lambda: base_blob)
        assert made is not None, step
        # made whole, it is a full scan's result: every pair, with every signal's score of each
        # (an append that changed no pair is kept as its own pages' changes alone: see below)
        scanned = scanned_index(root)
        assert made.pairs == scanned.pairs and made.count == whole.count and made.basis == whole.basis, step
        assert made.count[1] + made.count[2] == len(full_scan(root)), step
        assert all(made.scores[pair] == scanned.scores(*pair) for pairs in made.pairs.values() for pair in pairs), step
        assert {p: made.scores[p] for p in whole.scores} == whole.scores, step
        assert {p: made.inbound[p] for p in whole.inbound} == whole.inbound, step
        links = scanned.wiki.links  # (every page of a pair: its inbound count as the pages are now)
        assert all(made.inbound[p] == links.inbound(p) for pairs in made.pairs.values() for pair in pairs
                   for p in pair), step
        # decoded as a table (what a follow files page by page), the same pairs, each handed out once
        table = dedup_cache.decode(blob, key, lambda: base_blob, lazy=True)
        assert table is not None and table.table is not None and table.pairs == {}, step
        first = sorted(moved)[:1]
        taken = table.table.take(first) + table.table.take(first)
        rest = table.table.take_all()
        assert len(taken) == len(set(taken)) and all(first[0] in (a, b) for _s, a, b, _v in taken), step
        for signal, a, b, score in taken:
            assert (a, b) not in rest.get(signal, {}), step
            rest.setdefault(signal, {})[(a, b)] = score
        assert {s: v for s, v in rest.items() if v} == {s: v for s, v in made.pairs.items() if v}, step
        kept.clear()
    assert deltas >= len(changes())
    # a later scan's base: the changes kept on the earlier one are not made whole with it
    other = dedup_cache.Kept(whole.pairs, whole.scores, whole.inbound, whole.count, whole.basis, whole.followed)
    assert dedup_cache.decode(blob, key, lambda: dedup_cache.encode(other, key, b"another scan....")) is None


def test_an_append_that_changes_no_pair_carries_the_count_and_keeps_only_what_changed(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Health's duplicate figure after an append that changes no pair (the usual agent write) is
    the kept result's count, carried over without grouping every pair, and the result kept for
    the next process is written as that page's changes alone. An append that makes a pair, a
    page deleted and a page added are counted anew; every figure is a full scan's."""
    from curator.engine.dedup import cache as dedup_cache

    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)
    answer(root)  # the full scan: its result kept whole (the base) with its count
    grouped: list[str] = []
    real_groups = dedup_families.FamilyAnswers._groups

    def groups(self: dedup_families.FamilyAnswers, *args: object) -> object:
        grouped.append("groups")
        return real_groups(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(dedup_families.FamilyAnswers, "_groups", groups)
    written: list[dedup_cache.Kept] = []
    real_delta = dedup_cache.encode_delta

    def recording(whole: dedup_cache.Kept, key: bytes, base: dedup_cache.KeptBase, changed: object) -> bytes:
        written.append(whole)
        return real_delta(whole, key, base, changed)  # type: ignore[arg-type]

    monkeypatch.setattr(dedup_cache, "encode_delta", recording)
    quiet = ("Filler 2 was audited on a quiet Tuesday afternoon.", "Nothing else was noted about filler two.")
    for n, fact in enumerate(quiet):
        assert append(Wiki(root), "page-2", fact).ok
        count = dedup_families.family_count(Wiki(root))  # (a new process: Health)
        assert grouped == [], n  # carried: no pair changed
        assert count == len(full_scan(root)), n
        moved = set(written[-1].basis[1])  # (what is written: the pairs of the pages changed since the basis)
        assert "filler/page-2.md" in moved and all(a in moved or b in moved
                                                   for pairs in written[-1].pairs.values() for a, b in pairs), n
        assert sum(map(len, written[-1].pairs.values())) < sum(map(len, scanned_index(root).pairs.values())), n
        assert answer(root) == full_scan(root), n  # (the next process makes the result whole)
        grouped.clear()
    # text that makes the page a copy of another: a new family, counted anew, and what is kept
    # for the next process answers it without a scan
    before = len(full_scan(root))
    other = (root / "filler/page-1.md").read_text("utf-8").split("## Updates", 1)[1]
    for line in [x for x in other.splitlines() if x.startswith("- ")]:
        assert append(Wiki(root), "page-2", line[2:]).ok
    scans = count_scans(monkeypatch)
    counted = dedup_families.family_count(Wiki(root))
    followed = answer(root)
    assert scans == [] and grouped  # (full_scan below scans a copy: counted after this check)
    assert followed == full_scan(root) and counted == len(followed) == before + 1
    grouped.clear()
    (root / "filler/page-3.md").unlink()  # a page gone since the kept result: never carried
    assert dedup_families.family_count(Wiki(root)) == len(full_scan(root)) and grouped


def test_sorted_slots_answer_as_a_dict_of_the_paths() -> None:
    """A basis's page slots found by bisection in its sorted paths are those of a dict."""
    paths = sorted({f"{d}/{n}.md" for d in ("a", "b", "z", "é") for n in ("x", "y", "ü", "10", "9")})
    slots, plain = follow.SortedSlots(paths), {p: i for i, p in enumerate(paths)}
    for path in [*paths, "a/x", "", "zz.md", "a/x.mdx", "é/ü.md "]:
        assert (path in slots) == (path in plain) and slots.get(path) == plain.get(path), path
    assert list(slots) == paths and len(slots) == len(plain) and 3 not in slots


def test_the_pages_holding_crossed_shingles_are_found_in_the_basis_as_page_by_page(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A follow finds the pages holding a shingle whose count crossed a limit in one pass over the
    basis's listed shingles, a chunk of pages at a time: the same pages as looking at each page's
    own, for any page's first, last or middle listed shingle (the pass maps each hit back to its
    page, and its chunk's first page to the basis's)."""
    import numpy as np

    monkeypatch.setattr(follow, "CHUNK_PAGES", 4)  # (several chunks in a small wiki)
    answer(root)
    assert append(Wiki(root), "page-2", "Filler 2 was audited on a quiet Tuesday afternoon.").ok
    index = dedup.DedupIndex(Wiki(root))
    assert index._load_basis() is not None and index._listed_basis is not None
    basis = index._listed_basis
    listed = [basis.rows_of(i) for i in range(len(basis.paths))]
    partial = {p for p in basis.paths if p in index._partial}
    checked = 0
    for rows in listed:
        for pick in ({0}, {len(rows) - 1}, {0, len(rows) // 2, len(rows) - 1}):
            if not len(rows):
                continue
            places = np.unique(rows[sorted(pick)])
            want = {p for p, own in zip(basis.paths, listed, strict=True)
                    if p in partial and np.isin(places, own).any()}
            assert {p for p in index._holders(basis.keys[places]) if p in partial} == want
            checked += 1
    assert checked > 20 and len(basis.paths) > 3 * follow.CHUNK_PAGES


def _follows_every_change(base: Path, wiki: Wiki, index: dedup.DedupIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each change of the script followed by ``index``, which never scans again: every answer a
    full scan's, one holding every page whole."""
    scans = scans_of(monkeypatch, wiki)
    for step, change in changes():
        change(base)
        wiki.refresh()
        found = [f.to_json() for f in dedup_families.find_families(wiki)]
        assert dedup.index_for(wiki) is index and scans == [], step
        assert found == full_scan(base), step


def test_a_scan_then_follows_the_basis_it_saved_holding_no_page_whole(root: Path,  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a scan knows every shingle's count, each page keeps only its listed shingles (its whole
    text was most of a scan's memory), and after saving its basis the index follows it as a
    later process would: its answer, and its answer after each change of the script, are a full
    scan's that holds every page whole, with no second scan."""
    monkeypatch.setattr(follow, "FOLLOW_MARGIN", 100)  # (every change of the script within one basis)
    lean: list[int] = []
    real = dedup.DedupIndex._listed_only

    def listed_only(index: dedup.DedupIndex, feats: list[dedup.Features]) -> None:
        lean.append(len(feats))
        real(index, feats)

    monkeypatch.setattr(dedup.DedupIndex, "_listed_only", listed_only)
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    assert lean == [len(wiki.pages)] and index.scanned and index.from_basis
    assert index._partial == set(index.page_set())  # (every page as the basis lists it)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(root)
    _follows_every_change(root, wiki, index, monkeypatch)


def test_where_no_basis_can_be_written_a_scan_holds_every_page_whole(root: Path,  # noqa: F811
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A wiki whose state folder cannot be written (no basis to follow from): the scan keeps every
    page's whole shingles, and follows every change from them, with no second scan."""
    monkeypatch.setattr(dedup.DedupIndex, "_writable_state", lambda self: False)
    monkeypatch.setattr(dedup.DedupIndex, "_listed_only", lambda self, feats: pytest.fail("kept listed only"))
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    assert index.scanned and not index.from_basis and not index._partial
    _follows_every_change(root, wiki, index, monkeypatch)


def test_a_scan_whose_basis_was_not_written_scans_again_at_the_next_change(root: Path,  # noqa: F811
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages kept only their listed shingles, and then the basis could not be written (a
    full disk): the scan's answer stands (a score needing a page's whole text reads it), and the
    next change is a full scan, not a follow of counts the index no longer holds whole."""
    monkeypatch.setattr(dedup.DedupIndex, "_write_basis", lambda self, *args: False)
    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    assert not index.scanned and index._partial
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(root)
    scans = count_scans(monkeypatch)
    (root / "wiki/harbour-ledger-again.md").write_text(page("Harbour Ledger Again", facts(6, 42)), "utf-8")
    wiki.refresh()
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert dedup.index_for(wiki) is index and scans == [0]
    assert found == full_scan(root)


def test_a_scan_holds_no_page_whole_where_a_template_is_boilerplate(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A passage on more pages than the basis lists per page is left out of the scan's pages
    (they hold only their listed shingles once it is counted), and the index that scanned follows
    the template leaving pages and a new templated page exactly, as a full scan holding every
    page whole answers, without a second scan."""
    pages = {f"notes/t{i}.md": page(f"Templated {i}", [PASSAGE, *facts(3, 700 + i)]) for i in range(20)}
    pages["notes/a.md"] = page("Harbour Routine", [PASSAGE, *facts(6, 300)])
    base = make_wiki(tmp_path / "w", pages)
    wiki = Wiki(base)
    index = dedup.index_for(wiki, full=True)
    assert index.from_basis
    whole = dedup.shingles(dedup.body_of((base / "notes/t5.md").read_bytes()))
    held = index.features["notes/t5.md"].shingles
    assert 0 < len(held) < len(whole) and set(held.tolist()) < set(whole.tolist())  # (the passage's left out)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(base)
    ours = scans_of(monkeypatch, wiki)
    for i in range(3):  # 21 pages -> 18: still boilerplate
        (base / f"notes/t{i}.md").write_text(page(f"Templated {i}", facts(3, 700 + i)), "utf-8")
    wiki.refresh()
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert dedup.index_for(wiki) is index and not ours and found == full_scan(base)
    (base / "notes/t99.md").write_text(page("Templated 99", [PASSAGE, *facts(3, 799)]), "utf-8")
    wiki.refresh()
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert not ours and found == full_scan(base)


def test_a_one_shot_scan_lets_go_of_the_link_index(root: Path,  # noqa: F811
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan counts every page's linking pages first; a one-shot command then lets go of the
    link index, built for the scan or before it (the families read the counts: held to the end
    of the scan it was the largest part of the basis's save), and of the decoded pages once it
    has their features; a long-lived process keeps both. The answers are a full scan's either
    way."""
    from curator.engine import memory

    monkeypatch.setattr(memory, "runs_for_long", lambda: False)
    wiki = Wiki(root)
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    assert not wiki.links_built() and found == full_scan(root)
    # (and of the decoded pages, once their features are made: read again, they are as they were)
    assert not wiki.store.decoded and wiki.pages == Wiki(root).pages
    ledger = next(m for f in found for m in f["members"] if m["path"] == LEDGER)  # type: ignore[attr-defined]
    assert ledger["inbound"] == len({e.source for e in wiki.links.incoming.get(LEDGER, ()) if e.source != LEDGER})
    before = Wiki(root)
    assert before.links is not None and before.links_built()
    dedup.DedupIndex(before).scan()
    assert not before.links_built()  # (built before the scan: let go all the same)
    assert [f.to_json() for f in dedup_families.find_families(before)] == found
    monkeypatch.setattr(memory, "runs_for_long", lambda: True)
    station = Wiki(root)
    dedup.DedupIndex(station).scan()
    assert station.links_built() and station.store.decoded


def test_followed_counts_read_as_the_whole_array_they_replace() -> None:
    """A follow's shingle counts: the saved ones (saturated at 0xFFFF: BIG) read where asked, its
    changes kept apart. Whatever changes are made, reading any places answers what the copy of
    every count with the same changes made in place (what a follow held before) answers."""
    import numpy as np

    rng = np.random.default_rng(44)
    saved = rng.integers(0, 40, size=5000).astype(np.uint16)
    saved[rng.choice(5000, size=50, replace=False)] = follow.SATURATED
    before = saved.copy()
    counts = follow.FollowedCounts(saved)
    whole = saved.astype(np.int64)
    whole[whole == follow.SATURATED] = follow.BIG
    for step in range(60):
        at = rng.integers(0, 5000, size=int(rng.integers(1, 40)))  # (a place may come twice)
        delta = 1 if step % 3 else -1
        counts.add_at(at, delta)
        np.add.at(whole, at, delta)
        asked = rng.integers(0, 5000, size=300)
        assert (counts[asked] == whole[asked]).all()
    assert (counts[np.arange(5000)] == whole).all() and len(counts) == 5000
    assert counts[np.zeros(0, dtype=np.int64)].shape == (0,)
    assert (saved == before).all()  # (the file's counts are never written)


def test_counts_added_and_read_for_many_pages_at_once_are_those_of_one_page_at_a_time(
        root: Path) -> None:  # noqa: F811
    """A follow settles hundreds of pages: their counts are moved in one search of every shingle
    (sorted) and read back for each page in one search; shingles the basis's keys do not hold are
    counted apart. Each page's counts then are what adding and reading one page at a time gives."""
    import numpy as np

    rng = np.random.default_rng(45)
    keys = np.unique(rng.integers(0, 1 << 40, size=4000).astype(np.uint64))
    saved = rng.integers(0, 30, size=len(keys)).astype(np.uint16)
    pages = [np.unique(np.concatenate([rng.choice(keys, size=int(rng.integers(0, 60))),
                                       rng.integers(1 << 41, (1 << 41) + 300, size=int(rng.integers(0, 20)))
                                       .astype(np.uint64)]))
             for _ in range(40)]
    batched, single = dedup.DedupIndex(Wiki(root)), dedup.DedupIndex(Wiki(root))
    for index in (batched, single):
        index._shingle_keys, index._shingle_counts = keys, follow.FollowedCounts(saved.copy())
    batched._add_counts_of(pages[:25], +1)
    batched._add_counts_of(pages[10:15], -1)
    for sh in pages[:25]:
        single._add_counts(sh, +1)
    for sh in pages[10:15]:
        single._add_counts(sh, -1)
    each = batched._counts_of_each(pages)
    assert len(each) == len(pages)
    for sh, counts in zip(pages, each, strict=True):
        assert counts.tolist() == single._counts_of(sh).tolist()
    outside = rng.integers(1 << 41, (1 << 41) + 300, size=50).astype(np.uint64)
    expected = [sum(int(x) in {int(y) for y in sh} for sh in pages[:25]) - sum(
        int(x) in {int(y) for y in sh} for sh in pages[10:15]) for x in outside]
    assert batched._counts_of(outside).tolist() == expected  # (counted apart, exactly)
    assert batched._counts_of_each([]) == []


def test_a_new_process_follows_the_inbound_counts_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A new process loading the basis after a change counts the changed pages' links as they
    are now while it loads; its update, for the very same pages and state, does not count them
    again (0.07 s at 300,000 pages). The counts are a full scan's."""
    answer(root)
    assert append(Wiki(root), "filler/page-3", "The [[harbour-ledger]] has the dock figures.").ok
    calls: list[frozenset[str]] = []
    real = dedup.DedupIndex._follow_inbound

    def counting(index: dedup.DedupIndex, basis: follow.Basis, slot: object, stale: set[str], pages: object) -> None:
        calls.append(frozenset(stale))
        real(index, basis, slot, stale, pages)  # type: ignore[arg-type]

    monkeypatch.setattr(dedup.DedupIndex, "_follow_inbound", counting)
    found = answer(root)
    assert calls == [frozenset({"filler/page-3.md"})]
    assert found == full_scan(root)
    assert [m["inbound"] for f in found for m in f["members"]  # type: ignore[attr-defined]
            if m["path"] == LEDGER] == [2]


def test_a_one_shot_scan_counts_inbound_links_as_the_link_index_does(tmp_path: Path) -> None:
    """A one-shot scan resolves every page's links a chunk of pages at a time, by the names the
    scan found (no link index of every page and link: 2.7 GB at 300,000 pages). Every page's
    linking pages are then exactly those the operator's link index gives: by title, alias, path,
    a same-named page beside the linking one, ``./`` and ``../`` paths, a page linking to itself,
    an attachment, a missing page."""
    import numpy as np

    base = make_wiki(tmp_path / "w", {
        "wiki/ledger.md": "---\ntitle: Harbour Ledger\naliases: [Dock Book]\n---\n# L\n\nSee [[ledger]] and [[notes]].\n",
        "wiki/notes.md": "# Notes\n\n[[Harbour Ledger]], [[Dock Book]], [[wiki/ledger]], [[./ledger]], ![x](pic.png)\n",
        "team/notes.md": "# Team notes\n\n[[notes]] [[../wiki/notes]] [[nowhere]] [[Dock Book]] [[team/notes]]\n",
        "team/sub/deep.md": "# Deep\n\n[[notes]] [[../notes]] [[Harbour Ledger#L]] [ledger](../../wiki/ledger.md)\n",
        "a.md": "---\naliases: [Notes]\n---\n# A\n\n[[Notes]] [[deep]] [[pic.png]]\n",
        "pic.png": "",
    })
    wiki = Wiki(base)
    paths = wiki.paths
    index = dedup.DedupIndex(wiki)
    names = [dedup._link_names(wiki.page(p)) for p in paths]
    lengths, sources = index._inbound_in_chunks(paths, names)
    want_lengths, want_sources = dedup._inbound_sources(wiki.links, paths)
    assert lengths.tolist() == np.frombuffer(want_lengths, dtype=np.int32).tolist()
    assert sources.tolist() == np.frombuffer(want_sources, dtype=np.int32).tolist()
    assert int(lengths.sum()) >= 6  # (the links above do reach pages)


def test_the_basis_listed_shingles_are_made_a_chunk_at_a_time_as_whole_ones_split() -> None:
    """A scan writes its basis's listed shingles a chunk of pages at a time (made whole, their
    places, steps and bytes were three copies of them at once: the peak of a scan at 100,000
    pages). Each chunk is what the whole made and split into chunks gives, pages with no listed
    shingle included."""
    import numpy as np

    rng = np.random.default_rng(46)
    keys = np.unique(rng.integers(0, 1 << 50, size=20_000).astype(np.uint64))
    listed = [np.sort(rng.choice(keys, size=int(rng.integers(0, 30)), replace=False))
              for _ in range(3 * follow.CHUNK_PAGES + 17)]
    lengths = np.array([len(x) for x in listed], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    rows = np.searchsorted(keys, np.concatenate(listed))
    whole = follow.Chunked(starts * 4, follow.deltas(rows, lengths).tobytes())
    assert dedup._listed_chunks(keys, listed, lengths) == whole.compressed()
    chunked = follow.Chunked(starts * 4, chunks=dedup._listed_chunks(keys, listed, lengths))
    assert all(chunked.part(i) == whole.part(i) for i in range(len(listed)))


def test_an_answer_after_one_change_ranks_from_the_pages_not_the_listing(root: Path,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The families saved with the last answer stand but for the changed page's: ranking that
    family's pages reads their records, not the listing of every page (0.33 s at 300,000)."""
    from curator.engine.corpus.store import PageStore

    answer(root)
    assert append(Wiki(root), ORIGINAL.removesuffix(".md"), "The harbour ledger was reconciled on Friday.").ok
    listed: list[int] = []
    real = PageStore.details

    def details(store: PageStore) -> dict[str, object]:
        listed.append(1)
        return real(store)  # type: ignore[return-value]

    monkeypatch.setattr(PageStore, "details", details)
    found = answer(root)
    assert listed == []
    assert found == full_scan(root)


@pytest.mark.parametrize("most", [0, 10_000])
def test_pages_rank_alike_from_their_records_and_from_the_listing(root: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                                  most: int) -> None:
    monkeypatch.setattr(dedup_families, "RANK_FROM_PAGES", most)
    wiki = Wiki(root)
    answers = dedup_families.FamilyAnswers(dedup.DedupIndex(wiki))
    answers._memo = {}
    paths = sorted(wiki.store.stamps())
    ranked = answers._ranked(paths)
    listing, stamps = wiki.store.details(), wiki.store.stamps()
    assert [r.path for r in ranked] == paths
    for r in ranked:
        title, _, trust, created = listing[r.path]
        assert (r.title, r.trust) == (title, trust)
        assert r.age == (created or dedup_families._dt.datetime.fromtimestamp(
            stamps[r.path][0] / 1e9, dedup_families._dt.UTC).isoformat())


def test_a_bigger_wiki_follows_more_changed_pages_from_one_basis(root: Path,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of agents' appends between two answers is followed, not scanned, up to one page
    in FOLLOW_SHARE of the wiki's (a full scan costs with every page); past that, a scan."""
    monkeypatch.setattr(follow, "FOLLOW_MAX", 4)
    monkeypatch.setattr(follow, "FOLLOW_SHARE", 3)
    pages = len(Wiki(root).store.stamps())
    assert follow.follow_max(pages) == pages // 3 >= 8
    answer(root)
    scans = count_scans(monkeypatch)
    for i in range(8):  # more than FOLLOW_MAX, within the wiki's share
        assert append(Wiki(root), f"filler/page-{i}", f"A fact of its own about filler number {i} and its ledger.").ok
    found = answer(root)
    assert scans == []
    assert found == full_scan(root)
    scans.clear()
    for i, path in enumerate(sorted(Wiki(root).store.stamps())[:pages // 3 + 1]):  # more than its share
        assert append(Wiki(root), path.removesuffix(".md"), f"Fact {i} about the page, the tide and the crane.").ok
    found = answer(root)
    assert len(scans) == 1 and found == full_scan(root)


def test_the_pairs_scored_after_a_scan_borrow_the_basis_features(root: Path,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """After a scan that saved its basis, the families answer scores the pairs of every family
    from the basis's features, borrowed (:meth:`BasisFeatures.lend`): made and held, every
    page's came back, 270 MB at 100,000 pages. None is held after, and the answer is a full
    scan's with two borrowed at a time."""
    monkeypatch.setattr(dedup.BasisFeatures, "LENT_MAX", 2)
    wiki = Wiki(root)
    found = [f.to_json() for f in dedup_families.find_families(wiki)]
    index = wiki.session.peek(dedup.DedupIndex)
    assert index is not None and isinstance(index.features, dedup.BasisFeatures)
    assert index.features._lent and len(index.features._lent) <= 2
    assert list(index.features.made()) == []
    assert found == full_scan(root) and any(len(f["pages"]) > 2 for f in found)


def test_a_basis_converts_its_arrays_a_block_at_a_time_as_it_writes_them(root: Path,  # noqa: F811
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The arrays a basis saves as another type (counts as saturating uint16, owners as int32)
    are converted a block of rows at a time as they are written (each converted whole first,
    every copy was held at once at the scan's peak): the same file, block by block, and it
    reads back as the scan's."""
    import numpy as np

    answer(root)
    wiki = Wiki(root)
    key = follow.key_of(dedup.SETTINGS)
    saved = follow.decode(follow.read(wiki.state_dir / follow.FILE), key)
    assert saved is not None
    counts = np.asarray(saved.counts.saved, dtype=np.int64)  # type: ignore[union-attr]
    counts[0] = 1 << 40  # (saturates)
    basis = follow.Basis(saved.id, saved.boilerplate_pages, saved.paths, saved.stamps, saved.titles, saved.names,
                         saved.keys, counts, saved.big, saved.steps, saved.lengths, saved.band_slots, saved.bands,
                         saved.slug_entries, np.asarray(saved.slug_owners, dtype=np.int64), saved.band_keys,
                         np.asarray(saved.band_owners, dtype=np.int64), saved.sample_keys, saved.sample_owners,
                         saved.title_groups, saved.tag_groups, saved.attachments,
                         np.asarray(saved.source_counts, dtype=np.int64), np.asarray(saved.sources, dtype=np.int64),
                         saved.head, saved.digests)
    whole = follow.encode(basis, key)
    monkeypatch.setattr(follow, "CONVERT_ROWS", 3)
    parts = list(follow.encode_parts(basis, key))
    assert b"".join(parts) == whole
    assert len(parts) > 2 * len(follow._arrays(basis)) + 3  # (blocks of 3 rows, not one part an array)
    again = follow.decode(whole, key)
    assert again is not None and again.counts.saved[0] == follow.SATURATED  # type: ignore[union-attr]
    assert np.array_equal(again.sources, saved.sources) and np.array_equal(again.band_owners, saved.band_owners)
