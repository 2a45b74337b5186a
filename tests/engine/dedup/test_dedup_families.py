"""Duplicate families (docs/design.md §12): copies joined into one family with the keep rule's survivor, the
containment signal, no joining by title only or across a numbered series, family and member
dismissals that follow renames and travel with a clone, one-commit family merges that lose
nothing, and the scope rules on every new path."""

from __future__ import annotations

import datetime
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from curator.engine.corpus.page import Page
from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers, Ranked
from curator.engine.dedup.index import DedupIndex
from curator.engine.policy.actor import parse_actor
from curator.engine.wiki import Wiki
from curator.engine.write.merge import content_lines, merge_pages
from curator.engine.write.move import move_page
from tests.engine.corpus.test_corpus_store import move_store_clock
from tests.gui_helpers import make_wiki

_rng = random.Random(19)
_VOCAB = sorted({"".join(_rng.choice(("ka", "lo", "mi", "ren", "tor", "vex", "an", "qui", "sel", "dor", "pa",
                                      "zu", "bri", "mon", "fal", "ter", "ix", "ou", "gra", "nel"))
                         for _ in range(3)) for _ in range(3000)})


def facts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_VOCAB) for _ in range(rng.randint(11, 15))).capitalize() + "."
            for _ in range(n)]


def page(title: str, bullets: list[str], trust: float = 0.5, created: str = "2024-01-01", extra: str = "") -> str:
    return (f"---\ntitle: {title}\ntrust: {trust}\ncreated: '{created}'\n---\n# {title}\n\n## Updates\n\n"
            + "".join(f"- {b}\n" for b in bullets) + extra)


ORIGINAL = "wiki/aizen-bg3-v2-entry-155.md"
COPY = "wiki/aizen-bg3-v2-copy-entry-155.md"
FIXED = "wiki/aizen-bg3-v2-fixed-v2-entry-155.md"
OLD = "notes/aizen-bg3-v2-entry-155-old.md"
FAMILY = {ORIGINAL, COPY, FIXED, OLD}
NEXT = "wiki/aizen-bg3-v2-entry-156.md"  # the next page of the series: other facts
NEXT_COPY = "wiki/aizen-bg3-v2-copy-entry-156.md"
SAME_TITLE = "people/aizen-profile.md"  # titled like the family, its own text
OVERVIEW_A, OVERVIEW_B = "people/overview.md", "projects/overview.md"  # the same title only
LEDGER = "wiki/harbour-ledger.md"
LEDGER_COPY = "wiki/dock-accounts-summary.md"  # 5 of 6 facts copied, a new title
HIDDEN = "departments/finance/aizen-entry-156-finance.md"  # a copy of 156 only finance may read


def wiki_pages() -> dict[str, str]:
    f155, f156, own, ledger = facts(6, 155), facts(6, 156), facts(6, 7), facts(6, 42)
    pages = {
        ORIGINAL: page("Aizen Bg3 V2 Entry 155", f155, created="2024-01-01"),
        COPY: page("Aizen Bg3 V2 Entry 155", [*f155, "Copy note: kept from an earlier session."],
                   created="2024-02-01"),
        FIXED: page("Aizen Bg3 V2 Fixed Entry 155", [*f155, "Fixed the date of the second item."],
                    created="2024-03-01", extra="\n## Context\n\nWritten after the review with the team.\n"),
        OLD: page("Aizen Bg3 V2 Entry 155 (old)", [*f155[:5], "An older wording of the last item here."],
                  created="2023-06-01"),
        NEXT: page("Aizen Bg3 V2 Entry 156", f156),
        NEXT_COPY: page("Aizen Bg3 V2 Entry 156", [*f156, "Copy of entry 156."]),
        SAME_TITLE: page("Aizen Bg3 V2 Entry 155", own),
        OVERVIEW_A: page("Overview", facts(4, 1)),
        OVERVIEW_B: page("Overview", facts(4, 2)),
        LEDGER: page("Harbour Ledger", ledger, trust=0.6),
        LEDGER_COPY: page("Dock Accounts Summary", ledger[:5] + facts(1, 43), trust=0.6),
        "wiki/home.md": page("Home", ["Start at [[Aizen Bg3 V2 Fixed Entry 155]] and [[harbour-ledger]]."]),
    }
    # The fixed copy is the one people link to (by title, by slug, with an anchor): it survives.
    for i in range(3):
        pages[f"wiki/linker-{i}.md"] = page(f"Linker {i}", [f"See [[aizen-bg3-v2-fixed-v2-entry-155|entry {i}]]."])
    pages[HIDDEN] = page("Aizen Finance Copy", [*f156, "Finance kept its own copy."])
    for i in range(12):
        pages[f"filler/page-{i}.md"] = page(f"Filler {i}", facts(5, 1000 + i))
    return pages


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", wiki_pages())


def family_of(families: list[dedup.Family], path: str) -> dedup.Family:
    [fam] = [f for f in families if path in f.pages]
    return fam


def _ranked(page: Page) -> Ranked:
    """The keep rule's view of a decoded page: its ``created`` date, else its file's mtime."""
    age = page.created or datetime.datetime.fromtimestamp(page.mtime_ns / 1e9, datetime.UTC).isoformat()
    return Ranked(page.path, page.title, page.trust, age)


def test_four_copies_are_one_family_with_the_keep_rules_survivor(root: Path) -> None:
    wiki = Wiki(root)
    families = dedup_families.find_families(wiki)
    fam = family_of(families, ORIGINAL)
    assert set(fam.pages) == FAMILY
    assert fam.strength == "content" and "body" in fam.signals
    # the survivor: most inbound links (trust is equal), the same rule and count a pair uses
    assert fam.keep == FIXED and fam.pages[0] == FIXED
    assert "more inbound links" in fam.reason
    index = dedup.index_for(wiki)
    # (ranked from the page cache's listing: the same order the decoded pages give)
    assert fam.pages == sorted(fam.pages, key=lambda p: FamilyAnswers(index).keep_rank(_ranked(wiki.pages[p])))
    for c in dedup_families.find_duplicates(wiki, page=FIXED):
        if {c.keep, c.merge} <= FAMILY:
            assert c.keep == FIXED
    members = {m["path"]: m for m in fam.members}
    assert members[FIXED]["keep"] and members[FIXED]["inbound"] == wiki.links.inbound(FIXED) == 4
    assert set(members[ORIGINAL]["signals"]) & {"body", "containment"}
    edges = {frozenset(e["pages"]): e["signals"] for e in fam.edges}
    assert "body" in edges[frozenset({ORIGINAL, COPY})]
    # ranked by impact: the family people link to most comes first
    assert families[0].keep == FIXED
    assert families == sorted(families, key=lambda f: (f.strength != "content", -f.impact, -len(f.pages), f.keep, f.pages))


def test_two_thirds_copy_is_found_by_containment(root: Path) -> None:
    wiki = Wiki(root)
    fam = family_of(dedup_families.find_families(wiki), LEDGER)
    assert set(fam.pages) == {LEDGER, LEDGER_COPY}
    assert fam.signals == ["containment"]
    score = fam.scores["containment"]
    assert dedup.CONTAINMENT <= score < 1
    member = next(m for m in fam.members if not m["keep"])
    assert member["scores"]["body"] < dedup.BODY_JACCARD  # the old body signal alone misses it
    with_containment = dedup_families.find_families(wiki, signal="containment")
    assert fam in with_containment and all("containment" in f.signals for f in with_containment)
    assert not [f for f in dedup_families.find_families(wiki, signal="body") if LEDGER in f.pages]


def test_title_only_and_series_pages_are_not_joined(root: Path) -> None:
    wiki = Wiki(root)
    families = dedup_families.find_families(wiki)
    fam = family_of(families, ORIGINAL)
    assert SAME_TITLE not in fam.pages and NEXT not in fam.pages and NEXT_COPY not in fam.pages
    # the next entry of the series is a family of its own, never joined to 155
    assert set(family_of(families, NEXT).pages) == {NEXT, NEXT_COPY, HIDDEN}
    # a page sharing a family member's title only is in no family at all
    assert not [f for f in families if SAME_TITLE in f.pages]
    # two pages with the same title only: a names-only pair, ranked after every content family
    names = family_of(families, OVERVIEW_A)
    assert set(names.pages) == {OVERVIEW_A, OVERVIEW_B} and names.strength == "names"
    assert names.signals == ["title", "slug"]  # names only: the title and the file name
    assert families.index(names) > max(families.index(f) for f in families if f.strength == "content")


def test_filters_by_folder_and_signal(root: Path) -> None:
    wiki = Wiki(root)
    assert {f.keep for f in dedup_families.find_families(wiki, folder="notes")} == {FIXED}  # OLD is under notes/
    assert {frozenset(f.pages) for f in dedup_families.find_families(wiki, folder="projects/")} == {
        frozenset({OVERVIEW_A, OVERVIEW_B})}
    assert [f.keep for f in dedup_families.find_families(wiki, page=OLD)] == [FIXED]
    with pytest.raises(dedup.CuratorError, match="unknown signal"):
        dedup_families.find_families(wiki, signal="colour")


def test_family_merge_is_one_commit_and_loses_nothing(root: Path) -> None:
    wiki = Wiki(root)
    fam = family_of(dedup_families.find_families(wiki), ORIGINAL)
    before = {p: (root / p).read_text("utf-8") for p in fam.pages}
    head = git(root, "rev-parse", "HEAD")
    result = merge_pages(wiki, fam.keep, fam.merges)
    assert result.ok, result.message
    assert git(root, "rev-list", "--count", f"{head}..HEAD") == "1"
    after = (root / fam.keep).read_text("utf-8")
    kept = {line for _, line in content_lines(after, fam.keep)}
    skipped = {" ".join(s["bullet"].split()) for s in result.data["bullets_skipped"]}
    for path, text in before.items():  # every bullet of every input: on keep, or listed as a duplicate
        for _, line in content_lines(text, path):
            if line.startswith("- "):
                assert line in kept or line in skipped, (path, line)
    assert "Written after the review with the team." in kept
    for gone in fam.merges:
        assert not (root / gone).exists() and (root / "_archive" / gone).exists()
    assert not [f for f in dedup_families.find_families(wiki) if FIXED in f.pages]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def test_dismissed_family_and_member_stay_hidden_after_rename_and_fresh_clone(root: Path, tmp_path: Path) -> None:
    wiki = Wiki(root)
    assert set(family_of(dedup_families.find_families(wiki), ORIGINAL).pages) == FAMILY
    head = git(root, "rev-parse", "HEAD")
    res = dedup.dismiss_pages(wiki, [OLD, *FAMILY - {OLD}], member=OLD)
    assert res.status == "dismissed" and git(root, "rev-list", "--count", f"{head}..HEAD") == "1"
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [dedup.DECISIONS_FILE]
    assert set(family_of(dedup_families.find_families(wiki), ORIGINAL).pages) == FAMILY - {OLD}
    res = dedup.dismiss_pages(wiki, family_of(dedup_families.find_families(wiki), ORIGINAL).pages)
    assert res.status == "dismissed"
    assert not [f for f in dedup_families.find_families(wiki) if len(set(f.pages) & FAMILY) > 1]
    again = dedup.dismiss_pages(wiki, sorted(FAMILY - {OLD}))
    assert again.status == "unchanged" and again.commit is None
    # a rename of one member (by an agent: no decision file needed) keeps the family dismissed
    agent = parse_actor("agent:dudu")
    moved = move_page(wiki, COPY, "wiki/aizen-entry-155-copy.md", agent)
    assert moved.ok, moved.message
    moved = move_page(wiki, OLD, "archive-notes/aizen-old.md")
    assert moved.ok, moved.message
    dismissed = {FIXED, ORIGINAL, "wiki/aizen-entry-155-copy.md", "archive-notes/aizen-old.md"}
    assert not [f for f in dedup_families.find_families(wiki) if len(set(f.pages) & dismissed) > 1]
    # a fresh clone knows the decisions too
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    fresh = Wiki(clone)
    assert not [f for f in dedup_families.find_families(fresh) if len(set(f.pages) & dismissed) > 1]
    assert family_of(dedup_families.find_families(fresh), LEDGER)  # other families are still there
    # a new copy joins them again: a new page was never dismissed
    (clone / "wiki/aizen-155-third-copy.md").write_text(wiki_pages()[ORIGINAL].replace("2024-01-01", "2025-01-01"))
    fresh.refresh()
    assert "wiki/aizen-155-third-copy.md" in family_of(dedup_families.find_families(fresh), ORIGINAL).pages


def test_agents_cannot_dismiss_and_never_see_hidden_pages_in_families(root: Path) -> None:
    wiki = Wiki(root)
    assert HIDDEN in family_of(dedup_families.find_families(wiki), NEXT).pages  # the operator sees it
    agent = parse_actor("agent:dudu", "sales")
    for fam in dedup_families.find_families(wiki, agent):
        assert all(wiki.visible(agent, p) for p in fam.pages), fam.pages
        assert all(wiki.visible(agent, p) for e in fam.edges for p in e["pages"])
        assert HIDDEN not in json.dumps(fam.to_json())
    assert set(family_of(dedup_families.find_families(wiki, agent), NEXT).pages) == {NEXT, NEXT_COPY}
    assert dedup_families.family_count(wiki, agent) == dedup_families.family_count(wiki)  # the same families, minus the page
    assert dedup_families.family_count(wiki, strength="names") == 1  # the two Overview pages
    assert dedup_families.family_count(wiki, strength="content") == dedup_families.family_count(wiki) - 1
    finance = parse_actor("agent:fin", "finance")
    assert HIDDEN in family_of(dedup_families.find_families(wiki, finance), NEXT).pages
    # decisions are the operator's: an agent's dismissal is denied and writes nothing
    head = git(root, "rev-parse", "HEAD")
    res = dedup.dismiss_pages(wiki, sorted(FAMILY), agent)
    assert res.status == "denied" and git(root, "rev-parse", "HEAD") == head
    with pytest.raises(dedup.CuratorError):  # a page it cannot see is not found for it
        dedup.dismiss_pages(wiki, [NEXT, HIDDEN], agent)
    with pytest.raises(dedup.CuratorError):
        dedup_families.find_families(wiki, agent, page=HIDDEN)


def test_a_hidden_page_never_joins_two_visible_ones(tmp_path: Path) -> None:
    # A and B are each a two-thirds copy of H, not of each other: only H joins them
    shared = facts(9, 77)
    pages = {
        "wiki/a.md": page("Alpha", shared[:6] + facts(2, 1)),
        "departments/finance/h.md": page("Hub", shared),
        "wiki/b.md": page("Beta", shared[3:] + facts(2, 2)),
        **{f"filler/p{i}.md": page(f"P {i}", facts(5, 500 + i)) for i in range(10)},
    }
    wiki = Wiki(make_wiki(tmp_path / "w", pages))
    assert {"wiki/a.md", "wiki/b.md"} <= set(family_of(dedup_families.find_families(wiki), "wiki/a.md").pages)
    agent = parse_actor("agent:dudu", "sales")
    assert not [f for f in dedup_families.find_families(wiki, agent) if {"wiki/a.md", "wiki/b.md"} <= set(f.pages)]


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("curator")), "--wiki", str(root), *args],
                          capture_output=True, text=True)


def test_cli_groups_json_and_family_dismiss(root: Path) -> None:
    out = run_cli(root, "dedup", "--groups", "--json")
    assert out.returncode == 0, out.stderr
    groups = json.loads(out.stdout)
    assert all(set(g) >= {"pages", "keep", "reason", "scores"} for g in groups)
    fam = next(g for g in groups if ORIGINAL in g["pages"])
    assert fam["keep"] == FIXED and set(fam["pages"]) == FAMILY
    filtered = json.loads(run_cli(root, "dedup", "--groups", "--signal", "containment", "--json").stdout)
    assert {LEDGER, LEDGER_COPY} in [set(g["pages"]) for g in filtered]
    assert all("containment" in g["signals"] for g in filtered)
    assert [g["keep"] for g in json.loads(run_cli(root, "dedup", "--groups", "--folder", "notes", "--json").stdout)] == [FIXED]
    agent = json.loads(run_cli(root, "--as", "agent:dudu", "--department", "sales", "dedup", "--groups",
                               "--json").stdout)
    assert HIDDEN not in {p for g in agent for p in g["pages"]}
    bad = run_cli(root, "dedup", "--groups", "--signal", "colour")
    assert bad.returncode != 0 and "unknown signal" in bad.stderr and "Traceback" not in bad.stderr
    denied = run_cli(root, "--as", "agent:dudu", "dismiss", LEDGER, LEDGER_COPY, "--json")
    assert denied.returncode == 1 and json.loads(denied.stdout)["status"] == "denied"
    out = run_cli(root, "dismiss", "--member", OLD, *sorted(FAMILY - {OLD}), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "dismissed", out.stdout + out.stderr
    groups = json.loads(run_cli(root, "dedup", "--groups", "--json").stdout)
    assert set(next(g for g in groups if ORIGINAL in g["pages"])["pages"]) == FAMILY - {OLD}
    text = run_cli(root, "dedup", "--groups")
    assert "keep " + FIXED in text.stdout and "family" in text.stdout


def test_containment_follows_pages_changed_after_the_index_was_built(root: Path) -> None:
    wiki = Wiki(root)
    assert dedup_families.find_families(wiki)  # the index is warm from here on
    ledger = facts(6, 42)
    late = "wiki/late-ledger-digest.md"
    (root / late).write_text(page("Late Ledger Digest", [*ledger[1:], *facts(1, 99)]), "utf-8")
    wiki.refresh()
    fam = family_of(dedup_families.find_families(wiki), late)
    assert {LEDGER, late} <= set(fam.pages) and "containment" in fam.signals
    # and it goes when the copy is rewritten into a page of its own
    (root / late).write_text(page("Late Ledger Digest", facts(6, 5)), "utf-8")
    wiki.refresh()
    assert not [f for f in dedup_families.find_families(wiki) if late in f.pages]


def test_cli_filters_need_groups(root: Path) -> None:
    out = run_cli(root, "dedup", "--signal", "body")
    assert out.returncode == 2 and "--groups" in out.stderr and "Traceback" not in out.stderr
    out = run_cli(root, "dismiss", LEDGER)
    assert out.returncode == 2 and "two pages" in out.stderr


def test_the_same_families_from_every_process(root: Path) -> None:
    import os

    outs = set()
    for seed in ("1", "2", "3"):
        proc = subprocess.run([str(Path(sys.executable).with_name("curator")), "--wiki", str(root), "dedup",
                               "--groups", "--json"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
        outs.add(proc.stdout)
    assert len(outs) == 1  # word ids do not depend on the process's string hashing


def count_shingled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths every later :func:`dedup.shingle_files` call shingles, in order."""
    shingled: list[str] = []
    real = dedup.shingle_files

    def counting(base: str, files: list[dedup.PageFile], *rest: frozenset[str]) -> list[dedup.Shingled]:
        shingled.extend(f.path for f in files)
        return real(base, files, *rest)

    monkeypatch.setattr(dedup, "shingle_files", counting)
    return shingled


def kept_blob(root: Path) -> bytes | None:
    """The dedup result kept for the pages as they are now (a new process's view)."""
    from curator.engine.dedup import cache as dedup_cache

    wiki = Wiki(root)
    wiki.refresh()  # the store's state is current
    return wiki.store.derived(dedup_cache.NAME)


def whole_scan(index: dedup.DedupIndex) -> None:
    """``index.scan()`` holding every page's whole shingles after it, without following the basis
    it saves: what answers are compared with is made as scans made it before a scan kept only
    each page's listed shingles (:meth:`~curator.engine.dedup.index.DedupIndex._listed_only`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dedup.DedupIndex, "_writable_state", lambda self: False)
        index.scan()
    assert not index.from_basis


def full_scan(root: Path) -> list[dict[str, object]]:
    """What a full scan of the pages as they are answers (nothing kept is read), made on a copy
    of the wiki so that nothing it saves (a scan's basis) is seen by the wiki compared with."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "w"
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".curator"))
        wiki = Wiki(copy)
        index = dedup.DedupIndex(wiki)
        whole_scan(index)
        index.unkept = None  # (compared with, not kept)
        found = [f.to_json() for f in FamilyAnswers(index).families(dedup.OPERATOR, dedup.dismissed_pairs(wiki))]
        wiki.close()
        return found


def test_the_kept_result_answers_only_for_the_pages_it_was_scanned_from(root: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.dedup import cache as dedup_cache

    first = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    assert kept_blob(root) is not None and first == full_scan(root)
    shingled = count_shingled(monkeypatch)
    # a new process on an unchanged wiki reads no body and answers the same
    again = Wiki(root)
    assert [f.to_json() for f in dedup_families.find_families(again)] == first and shingled == []
    assert dedup.index_for(again).kept is not None and not dedup.index_for(again).features
    # a page changed outside: the next process follows the change from the scan's basis (no
    # scan: tests/engine/dedup/test_dedup_follow.py), and the new text counts
    (root / LEDGER_COPY).write_text(page("Dock Accounts Summary", facts(6, 5), trust=0.6), "utf-8")
    assert kept_blob(root) is None
    fresh = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    assert shingled == []
    assert not [f for f in fresh if LEDGER_COPY in f["pages"]] and fresh == full_scan(root)
    shingled.clear()
    assert [f.to_json() for f in dedup_families.find_families(Wiki(root))] == fresh and shingled == []
    # a decision is applied to the kept pairs at answer time, like to a scan's
    dedup.dismiss_pages(Wiki(root), family_of(dedup_families.find_families(Wiki(root)), NEXT).pages)
    decided = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    assert not [f for f in decided if NEXT in f["pages"]] and decided == full_scan(root)
    # a new attachment file (links may resolve to it: inbound counts) is another key
    (root / "wiki/diagram.png").write_bytes(b"png")
    wiki = Wiki(root)
    wiki.refresh()
    blob = wiki.store.derived(dedup_cache.NAME)
    assert blob is not None and dedup_cache.decode(blob, dedup.DedupIndex(wiki).kept_key()) is None
    # a damaged blob is ignored (scanned again), never trusted
    wiki = Wiki(root)
    wiki.refresh()
    wiki.store.save_derived(dedup_cache.NAME, b"not a kept result")
    shingled.clear()
    assert [f.to_json() for f in dedup_families.find_families(Wiki(root))] == full_scan(root) and shingled
    assert not (root / ".curator" / dedup.OLD_SIGNATURES).exists()


def test_session_4s_signatures_file_is_removed_by_the_next_scan(root: Path) -> None:
    # (in the state folder Curator made: a .curator/ made by hand is foreign and never read)
    wiki = Wiki(root)
    assert wiki.state_dir == root / ".curator"
    old = wiki.state_dir / dedup.OLD_SIGNATURES
    old.write_bytes(b"\0" * 1000)
    dedup_families.find_families(wiki)
    assert not old.exists()


def test_a_same_size_rewrite_within_one_tick_is_never_answered_from_the_kept_result(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page rewritten in place with the same size and mtime (a write within one tick of a coarse
    file clock) keeps its stamp: the kept result follows the page cache's racy-stamp guard (the
    store's state changes when the bytes it checks change), and a scan that read other bytes
    than the store did is not kept at all."""
    import os

    from curator.engine.corpus import store as store_module

    later = "notes/later-notes.md"
    (root / later).write_text(page("Later Notes", facts(8, 77)), "utf-8")
    assert not [f for f in dedup_families.find_families(Wiki(root)) if later in f.pages]
    assert kept_blob(root) is not None  # just written (racy), and the bytes scanned are the store's

    def rewrite(text: str) -> None:
        st = (root / later).stat()
        text += " " * (st.st_size - len(text.encode()))
        assert len(text.encode()) == st.st_size
        (root / later).write_text(text, "utf-8")
        os.utime(root / later, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert ((root / later).stat().st_mtime_ns, (root / later).stat().st_size) == (st.st_mtime_ns, st.st_size)

    rewrite(page("Later Notes", facts(6, 155)))  # the text of the 155 family
    assert later in family_of(dedup_families.find_families(Wiki(root)), ORIGINAL).pages  # another process
    shingled = count_shingled(monkeypatch)
    assert later in family_of(dedup_families.find_families(Wiki(root)), ORIGINAL).pages and shingled == []
    # rewritten between the store's read and the scan's: the answer is the scan's, never kept
    rewrite(page("Later Notes", facts(8, 77)))
    wiki = Wiki(root)
    wiki.refresh()  # the store reads the page again (a new state: nothing kept for it)
    assert wiki.store.derived("dedup") is None and wiki.store.racy_digest(later) is not None
    rewrite(page("Later Notes", facts(6, 155)))
    assert later in family_of(dedup_families.find_families(wiki), ORIGINAL).pages  # the bytes scanned
    assert wiki.store.derived("dedup") is None  # not kept under a state of other bytes
    assert later in family_of(dedup_families.find_families(Wiki(root)), ORIGINAL).pages  # re-read by the store
    assert kept_blob(root) is not None
    # once the store trusts the stamp, the kept result holds
    move_store_clock(monkeypatch, 2 * store_module.RACY_NS)
    settled = Wiki(root)
    settled.refresh()
    assert settled.store.racy_digest(later) is None
    shingled.clear()
    assert later in family_of(dedup_families.find_families(settled), ORIGINAL).pages and shingled == []
    assert [f.to_json() for f in dedup_families.find_families(Wiki(root))] == full_scan(root)


def test_the_count_is_the_number_of_families_listed(root: Path) -> None:
    wiki = Wiki(root)
    agent = parse_actor("agent:dudu", "sales")
    dedup.dismiss_pages(wiki, [LEDGER, LEDGER_COPY])
    for actor in (dedup.OPERATOR, agent):
        families = dedup_families.find_families(wiki, actor)
        assert dedup_families.family_count(wiki, actor) == len(families) > 0
        for strength in ("content", "names"):
            assert dedup_families.family_count(wiki, actor, strength) == sum(f.strength == strength for f in families)
    assert not [f for f in dedup_families.find_families(wiki) if LEDGER in f.pages]  # dismissed: neither listed nor counted


def test_a_background_scan_shingles_in_niced_workers_with_the_same_answer(root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from curator.engine.corpus import parallel

    alone = [f.to_json() for f in dedup_families.find_families(Wiki(root))]  # shingled in this process
    shutil.rmtree(root / ".curator")  # nothing kept
    seen: list[int] = []
    real = parallel.map_chunks

    def spy(fn, base, files, *args, niceness=0):  # type: ignore[no-untyped-def]
        seen.append(niceness)
        return real(fn, base, files, *args, niceness=niceness)

    monkeypatch.setattr(parallel, "map_chunks", spy)
    monkeypatch.setattr(dedup, "PARALLEL_SHINGLES", 1)
    wiki = Wiki(root)
    assert dedup_families.family_count(wiki, niceness=10) == len(alone)
    assert seen == [10]  # the station's scan: worker processes at a lower CPU priority
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == alone


def _watch_shingling(monkeypatch: pytest.MonkeyPatch, during_titles) -> list[object]:  # type: ignore[no-untyped-def]
    """The scans' shingling (``_start_shingles``'s answers, listed), in worker processes, and
    ``during_titles(index, work)`` called as each scan compares titles."""
    works: list[object] = []
    start, titles = DedupIndex._start_shingles, DedupIndex._scan_titles

    def started(self, order):  # type: ignore[no-untyped-def]
        works.append(start(self, order))
        return works[-1]

    def comparing(self, feats):  # type: ignore[no-untyped-def]
        during_titles(self, works[-1])
        return titles(self, feats)

    monkeypatch.setattr(DedupIndex, "_start_shingles", started)
    monkeypatch.setattr(DedupIndex, "_scan_titles", comparing)
    monkeypatch.setattr(dedup, "PARALLEL_SHINGLES", 1)
    return works


def test_a_one_shot_scan_decodes_the_pages_a_chunk_at_a_time(root: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot scan never decodes every page at once: made from every page decoded, what the
    features kept stayed scattered through the decoded pages' memory (300 MB at 100,000 pages),
    and the link index its inbound counts were read from was most of its peak at scale. The
    pages come from their records a chunk at a time, and the answer is a scan's with every page
    decoded."""
    whole = Wiki(root)
    assert whole.pages  # (every page decoded first: the way a scan used to make its features)
    expected = [f.to_json() for f in dedup_families.find_families(whole)]
    shutil.rmtree(root / ".curator")
    wiki = Wiki(root)
    decoded: list[bool] = []
    real = dedup.features_of

    def making(page: Page, body):  # type: ignore[no-untyped-def]
        decoded.append(wiki.store.decoded)
        return real(page, body)

    counted: list[tuple[bool, bool]] = []
    count = DedupIndex._count_inbound

    def counting(index: DedupIndex, paths: list[str]) -> None:
        count(index, paths)
        counted.append((wiki.store.decoded, wiki.links_built()))

    monkeypatch.setattr(dedup, "features_of", making)
    monkeypatch.setattr(DedupIndex, "_count_inbound", counting)
    monkeypatch.setattr(dedup, "_DECODE_CHUNK", 3)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == expected
    assert len(decoded) >= len(wiki.paths) and not any(decoded[:len(wiki.paths)])
    # (nor do the inbound counts decode every page, or build the link index: resolved a chunk at a time)
    assert counted == [(False, False)]


def test_a_one_shot_scan_after_the_link_index_counts_from_it_and_lets_go_first(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``health`` builds the link index for its link figures before its duplicate figure: the
    scan then reads its inbound counts from that index and lets go of it before it makes any
    page's features (made while it was held, what they kept pinned its memory: 20-40 MB at
    32,000 pages). The answer is the one without the index built first."""
    expected = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    shutil.rmtree(root / ".curator")
    wiki = Wiki(root)
    assert wiki.links is not None and wiki.links_built()
    held: list[bool] = []
    real = dedup.features_of

    def making(page: Page, body):  # type: ignore[no-untyped-def]
        held.append(wiki.links_built())
        return real(page, body)

    def resolving(*args):  # type: ignore[no-untyped-def]
        raise AssertionError("resolved again: the built index answers")

    monkeypatch.setattr(dedup, "features_of", making)
    monkeypatch.setattr(dedup.DedupIndex, "_inbound_in_chunks", resolving)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == expected
    assert held and not any(held)


def test_a_scan_scores_slugs_a_block_of_pairs_at_a_time(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan's slug comparison holds the slug features (a page's trigrams: 3 KB of sets) of one
    block of pairs' pages at a time, not of every page a pair names (870 MB at 300,000 pages):
    with blocks of two pairs, no more than four pages hold theirs while a pair is scored, none
    after, and the answer is the one scored in one block."""
    expected = [f.to_json() for f in dedup_families.find_families(Wiki(root))]
    shutil.rmtree(root / ".curator")
    monkeypatch.setattr(dedup, "_SLUG_PAIRS", 2)
    scanned: list[list[dedup.Features]] = []
    held: list[int] = []
    scan_slugs, real = DedupIndex._scan_slugs, dedup.similarity

    def slugs(index: DedupIndex, feats: list[dedup.Features]) -> None:
        scanned.append(feats)
        scan_slugs(index, feats)

    def scoring(a, b, *args):  # type: ignore[no-untyped-def]
        held.append(sum(f._slug_feats is not None for f in scanned[-1]))
        return real(a, b, *args)

    monkeypatch.setattr(DedupIndex, "_scan_slugs", slugs)
    monkeypatch.setattr(dedup, "similarity", scoring)
    assert [f.to_json() for f in dedup_families.find_families(Wiki(root))] == expected
    assert len(held) > 4 and max(held) <= 4, held
    assert not any(f._slug_feats is not None for f in scanned[-1])


def test_a_scans_bodies_share_the_listed_shingles_they_equal(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scanned page's body (its shingles on few enough pages) and rare text are the array they
    are taken from when that holds nothing else, not copies of it (most pages at scale: 200 MB
    at 300,000 pages); each is what the counts say it is."""
    import numpy as np

    seen: list[tuple[DedupIndex, list[dedup.Features]]] = []
    scan_slugs = DedupIndex._scan_slugs

    def slugs(index: DedupIndex, feats: list[dedup.Features]) -> None:
        seen.append((index, list(feats)))  # (as the scan holds them, before its basis is saved)
        scan_slugs(index, feats)

    monkeypatch.setattr(DedupIndex, "_scan_slugs", slugs)
    DedupIndex(Wiki(root)).scan()
    index, feats = seen[0]
    shared = 0
    for f in feats:
        counts = index._counts_of(f.shingles)
        body = f.shingles[counts <= index.boilerplate_pages]
        assert f.body.tolist() == (body.tolist() if len(body) >= dedup.MIN_SHINGLES else [])
        rare = f.shingles[counts <= dedup.CONTAINMENT_MAX_PAGES]
        assert f.rare.tolist() == (rare.tolist() if len(f.body) and len(rare) >= dedup.MIN_SHINGLES else [])
        shared += len(f.body) > 0 and np.shares_memory(f.body, f.shingles)
    assert shared >= len(feats) // 2


def test_the_workers_shingles_go_to_the_spill_while_the_titles_are_compared(root: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan takes its shingling workers' results as they come (written to its spill file), on
    a thread of its own, while it compares titles: they are not held in memory until it is done
    (every page's shingles, 114 MB at 32,000 pages). The answer is the in-process one."""
    import threading

    alone = [f.to_json() for f in dedup_families.find_families(Wiki(root))]  # shingled in this process
    shutil.rmtree(root / ".curator")
    taken: list[int] = []

    def wait_for_the_spill(index: DedupIndex, work) -> None:  # type: ignore[no-untyped-def]
        assert work.taking is not None and index._spill is not None
        work.taking.join(60)  # (done while the titles wait: not left to the end of the scan)
        assert not work.taking.is_alive() and work.failed is None
        taken.append(len(work.out))
        assert all(isinstance(at, dedup.dedup_spill.Spilled) for at in work.out.values())

    _watch_shingling(monkeypatch, wait_for_the_spill)
    wiki = Wiki(root)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == alone
    assert taken == [len(wiki.pages)]
    assert not [t for t in threading.enumerate() if t.name == "curator-dedup-spill"]


def test_a_scan_stopped_while_its_workers_shingle_raises_and_keeps_nothing(root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    shutil.rmtree(root / ".curator", ignore_errors=True)
    _watch_shingling(monkeypatch, lambda index, work: index.stop())  # (the station closing, mid-scan)
    wiki = Wiki(root)
    index = dedup.DedupIndex(wiki)
    with pytest.raises(dedup.ScanStopped):
        index.scan()
    assert not index.scanned and wiki.store.derived("dedup") is None
    assert not [t for t in threading.enumerate() if t.name == "curator-dedup-spill"]


def test_a_stopped_scan_raises_and_keeps_nothing(root: Path) -> None:
    wiki = Wiki(root)
    index = dedup.DedupIndex(wiki)
    index.stop()  # (the station closing)
    with pytest.raises(dedup.ScanStopped):
        index.scan()
    assert not index.features and not index.scanned and wiki.store.derived("dedup") is None


def test_an_agent_sees_no_hidden_page_through_the_kept_result(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert HIDDEN in family_of(dedup_families.find_families(Wiki(root)), NEXT).pages  # the operator's scan, kept
    shingled = count_shingled(monkeypatch)
    agent = parse_actor("agent:dudu", "sales")
    wiki = Wiki(root)
    for fam in dedup_families.find_families(wiki, agent):
        assert HIDDEN not in json.dumps(fam.to_json())
    assert set(family_of(dedup_families.find_families(wiki, agent), NEXT).pages) == {NEXT, NEXT_COPY}
    assert [c for c in dedup_families.find_duplicates(wiki, agent) if HIDDEN in (c.keep, c.merge)] == []
    assert dedup.index_for(wiki).kept is not None and shingled == []  # answered from the kept result
    out = run_cli(root, "--as", "agent:dudu", "--department", "sales", "dedup", "--groups", "--json")
    assert out.returncode == 0 and HIDDEN not in out.stdout and NEXT_COPY in out.stdout
    out = run_cli(root, "--as", "agent:dudu", "--department", "sales", "dedup", "--json")
    assert out.returncode == 0 and HIDDEN not in out.stdout


def test_an_update_answers_exactly_what_a_full_scan_does(root: Path) -> None:
    """Followed page by page, the index holds exactly a full scan's pairs, also when a change moves
    what other pages' pairs depend on: a text copied onto more pages than containment counts (6)
    and than boilerplate allows (8), then taken off again, and a folder's tag used by more pages
    than a rare tag is (8). Its result is then kept for the next process."""
    wiki = Wiki(root)
    index = dedup.index_for(wiki, full=True)
    ledger = facts(6, 42)

    def check(step: str) -> None:
        wiki.refresh()
        index.update()
        full = dedup.DedupIndex(wiki)
        whole_scan(full)
        full.unkept = None  # (compared with, not kept)
        assert index.pairs == full.pairs, step
        assert FamilyAnswers(index).families() == FamilyAnswers(full).families(), step

    check("nothing changed")
    for i in range(9):  # the ledger's text on 3, 4, ... 11 pages
        (root / f"copies/ledger-copy-{chr(97 + i)}.md").parent.mkdir(exist_ok=True)
        (root / f"copies/ledger-copy-{chr(97 + i)}.md").write_text(
            page(f"Ledger Copy {chr(65 + i)}", [*ledger, *facts(1, 300 + i)]), "utf-8")
        check(f"{i + 1} copies")
    assert not index.pairs["containment"].get((LEDGER_COPY, LEDGER) if LEDGER_COPY < LEDGER else (LEDGER, LEDGER_COPY))
    for i in reversed(range(9)):
        (root / f"copies/ledger-copy-{chr(97 + i)}.md").unlink()
        check(f"{i} copies")
    assert (LEDGER, LEDGER_COPY) in index.pairs["containment"] or (LEDGER_COPY, LEDGER) in index.pairs["containment"]
    (root / "tagged").mkdir()
    for i in range(10):  # the folder's tags on 1 ... 10 pages
        (root / f"tagged/note-{chr(97 + i)}.md").write_text(
            f"---\ntitle: Note {chr(65 + i)} Of Mine\ntags: [harbour, ledger]\n---\n" + "".join(
                f"- {f}\n" for f in facts(5, 700 + 10 * i)), "utf-8")
        check(f"{i + 1} tagged pages")
    (root / "tagged/note-a.md").unlink()
    check("9 tagged pages")
    # what the update answered is kept for the next process (once asked to: the station does after
    # showing it)
    assert [f.to_json() for f in dedup_families.find_families(wiki)] == full_scan(root)
    assert kept_blob(root) is None
    dedup_families.keep_result(wiki)
    assert kept_blob(root) is not None
    again = Wiki(root)
    assert [f.to_json() for f in dedup_families.find_families(again)] == full_scan(root)
    assert dedup.index_for(again).kept is not None


def test_a_kept_result_asked_for_a_pair_it_does_not_hold_scans_first(root: Path) -> None:
    dedup_families.find_families(Wiki(root))  # kept
    wiki = Wiki(root)
    index = dedup.index_for(wiki)
    assert index.kept is not None and (LEDGER, OVERVIEW_A) not in index._scores
    full = dedup.DedupIndex(wiki)
    whole_scan(full)
    assert index.scores(LEDGER, OVERVIEW_A) == full.scores(LEDGER, OVERVIEW_A)
    assert index.kept is None and index.scanned  # (a full scan answered it)


def test_a_scan_stopped_while_the_workers_shingle_cancels_them(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.corpus import parallel

    closed: list[bool] = []
    real = parallel.map_chunks

    def spy(fn, base, files, *args, niceness=0):  # type: ignore[no-untyped-def]
        results = real(fn, base, files, *args, niceness=niceness)
        assert results is not None

        def watched():  # type: ignore[no-untyped-def]
            try:
                yield from results
            finally:
                closed.append(True)
                results.close()

        return watched()

    monkeypatch.setattr(parallel, "map_chunks", spy)
    monkeypatch.setattr(dedup, "PARALLEL_SHINGLES", 1)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    index = dedup.DedupIndex(Wiki(root))
    real_titles = index._scan_titles

    def stop_meanwhile(feats):  # type: ignore[no-untyped-def]
        real_titles(feats)
        index.stop()  # the station closes while the workers shingle

    monkeypatch.setattr(index, "_scan_titles", stop_meanwhile)
    with pytest.raises(dedup.ScanStopped):
        index.scan()
    assert closed == [True] and not index.features


def test_the_operators_count_is_read_from_the_kept_result_with_the_same_decisions(root: Path) -> None:
    dedup_families.find_families(Wiki(root))  # kept
    wiki = Wiki(root)
    assert dedup_families.family_count(wiki) == len(full_scan(root)) and wiki.session.peek(DedupIndex) is None  # (nothing decoded)
    dedup.dismiss_pages(Wiki(root), [OVERVIEW_A, OVERVIEW_B])  # other decisions: counted by the index
    wiki = Wiki(root)
    assert dedup_families.family_count(wiki) == len(full_scan(root)) and wiki.session.peek(DedupIndex) is not None
    agent = parse_actor("agent:dudu", "sales")
    assert dedup_families.family_count(Wiki(root), agent) == len(dedup_families.find_families(Wiki(root), agent))


def test_families_are_ranked_without_decoding_every_page(root: Path) -> None:
    """A new process answers the families from the kept result, and after an append from the
    scan's basis, ranking every family's pages from the page cache's listing: decoding every
    page for its trust and date cost ~1 s of a 1.5 s answer at 32,000 pages."""
    first = dedup_families.find_families(Wiki(root))
    wiki = Wiki(root)
    assert dedup_families.find_families(wiki) == first and not wiki.store.decoded
    wiki.close()
    with (root / ORIGINAL).open("a") as f:
        f.write("\n- one more fact an agent appended.\n")
    wiki = Wiki(root)
    again = dedup_families.find_families(wiki)
    assert not wiki.store.decoded
    assert [f.pages for f in again] == [f.pages for f in first]


@pytest.mark.parametrize("scans", [8, 0], ids=["a pass a folded name", "one pass filing every name"])
def test_lookalike_pairs_equal_filing_every_page_by_its_name(monkeypatch: pytest.MonkeyPatch, scans: int) -> None:
    """The look-alike pairs, found from the names that are not ASCII alone, are those of filing
    every page by its name and grouping the names that differ only by look-alike characters."""
    monkeypatch.setattr(dedup_families, "_LOOKALIKE_SCANS", scans)
    import itertools
    import posixpath
    from collections import defaultdict

    from curator.engine.corpus.lookalike import lookalike_groups

    def reference(paths: list[str]) -> list[tuple[str, str]]:
        stems: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            stems[posixpath.basename(path).removesuffix(".md")].append(path)
        out = []
        for names in lookalike_groups(stems):
            found = sorted(p for name in names for p in stems[name])
            out += [dedup.pair_key(a, b) for a, b in itertools.combinations(found, 2)]
        return sorted(out)

    rng = random.Random(3)
    parts = ["payments", "pаyments", "pay\u200bments", "Payments", "部门", "notes", "café", "cafe\u0301", "cafe"]
    seen = 0
    for _ in range(1500):
        paths = sorted({"/".join(rng.choice(parts) for _ in range(rng.randint(1, 3))) + ".md"
                        for _ in range(rng.randint(1, 8))})
        want = reference(paths)
        assert sorted(dedup_families._lookalike_pairs(paths)) == want, paths
        seen += bool(want)
        # (those of some of the pages, as of the pages an answer holds, from every page's path)
        kept = set(rng.sample(paths, rng.randint(0, len(paths))))
        assert sorted(dedup_families._lookalike_pairs(paths, kept.__contains__)) == reference(sorted(kept)), paths
    assert seen > 300  # (many of the samples hold look-alike names)
