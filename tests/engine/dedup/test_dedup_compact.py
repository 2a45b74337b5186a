"""A follow that re-examined many pages writes a new basis (curator/engine/dedup/compact.py, issue 44).

Past FOLLOW_MAX changed pages the next answer was a full scan (48 s at 100,000 pages). Once
COMPACT_AT pages were followed, the answering process writes the basis a full scan of the pages
as they are would save, made from the old one and the changed pages alone. It must be that very
basis (every page's names, listed shingles, bands and samples; the keys and counts; the blocking
tables, groups and linking pages), and a later process must follow from it exactly; where it
cannot be exact (a big shingle falling back under the listed limit, a changed title that moves
links), no basis is written and the follow goes on as before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from curator.engine.dedup import compact, detached, follow
from curator.engine.dedup import index as dedup
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from tests.engine.dedup.test_dedup_families import LEDGER, facts, full_scan, page, root  # noqa: F401 (root: a fixture)
from tests.engine.dedup.test_dedup_follow import PASSAGE, answer, count_scans
from tests.engine.dedup.test_dedup_incremental import read_pages
from tests.gui_helpers import GIT_ID

OTHER = ("The night shift hands the crane keys to the morning crew at the gate house, signs the log "
         "with the hour and the number of containers moved, and leaves the radio on the second channel.")


def commit(base: Path, message: str) -> None:
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=base, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", message], cwd=base, check=True)


def basis_of(base: Path) -> follow.Basis:
    """The basis file the wiki's state folder holds now."""
    wiki = Wiki(base)
    found = follow.decode(follow.read(wiki.state_dir / follow.FILE), follow.key_of(dedup.SETTINGS))
    assert found is not None
    return found


def scanned_basis(base: Path) -> follow.Basis:
    """The basis a full scan of a copy of the pages as they are saves (its git history too)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "w"
        shutil.copytree(base, copy, symlinks=True, ignore=shutil.ignore_patterns(".curator"))
        dedup.DedupIndex(Wiki(copy)).scan()
        return basis_of(copy)


def pairs_of(keys: np.ndarray, owners: np.ndarray) -> list[tuple[int, int]]:
    """A blocking table as (key, page) pairs, sorted (pages under one key are in any order)."""
    return sorted(zip(np.asarray(keys).tolist(), np.asarray(owners).tolist(), strict=True))


def assert_same_basis(made: follow.Basis, scanned: follow.Basis) -> None:
    n = len(scanned.paths)
    assert made.paths == scanned.paths and made.boilerplate_pages == scanned.boilerplate_pages
    assert made.titles == scanned.titles and made.head == scanned.head and made.attachments == scanned.attachments
    assert np.array_equal(made.stamps, scanned.stamps)
    assert [made.names_of(i) for i in range(n)] == [scanned.names_of(i) for i in range(n)]
    assert np.array_equal(made.keys, scanned.keys)
    for basis in (made, scanned):
        assert isinstance(basis.counts, follow.FollowedCounts)
    assert np.array_equal(made.counts.saved, scanned.counts.saved)  # type: ignore[union-attr]
    assert np.array_equal(made.big, scanned.big)
    assert np.array_equal(made.lengths, scanned.lengths)
    for i in range(n):
        assert np.array_equal(made.rows_of(i), scanned.rows_of(i)), scanned.paths[i]
    assert np.array_equal(made.band_slots, scanned.band_slots) and np.array_equal(made.bands, scanned.bands)
    for b in range(len(scanned.band_keys)):
        assert pairs_of(made.band_keys[b], made.band_owners[b]) == pairs_of(scanned.band_keys[b], scanned.band_owners[b])
    assert pairs_of(made.slug_entries, made.slug_owners) == pairs_of(scanned.slug_entries, scanned.slug_owners)
    assert pairs_of(made.sample_keys, made.sample_owners) == pairs_of(scanned.sample_keys, scanned.sample_owners)
    for mine, theirs in ((made.title_groups, scanned.title_groups), (made.tag_groups, scanned.tag_groups)):
        assert mine[0] == theirs[0] and np.array_equal(mine[1], theirs[1]) and np.array_equal(mine[2], theirs[2])
    assert np.array_equal(made.source_counts, scanned.source_counts) and np.array_equal(made.sources, scanned.sources)
    assert np.array_equal(made.digests, scanned.digests)


def passage_pages(base: Path) -> None:
    """Ten pages holding one passage (listed: under the limit of 16) and seven another (in every
    holder's body: under the boilerplate limit of 8), committed."""
    for i in range(10):
        (base / f"notes/p{i}.md").write_text(page(f"Passage Holder {i}", [PASSAGE, *facts(4, 600 + i)]), "utf-8")
    for i in range(7):
        (base / f"notes/o{i}.md").write_text(page(f"Other Holder {i}", [OTHER, *facts(4, 800 + i)]), "utf-8")
    commit(base, "passages")


@pytest.mark.parametrize("block", [1 << 20, 7])
def test_a_long_follow_writes_the_basis_a_full_scan_would(root: Path,  # noqa: F811
                                                         monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """(``block``: the keys and counts read and written that many at a time, as at scale)"""
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    monkeypatch.setattr(compact, "_COUNT_BLOCK", block)
    passage_pages(root)
    (root / "notes/empty.md").write_text(page("Empty Page", []), "utf-8")
    commit(root, "an empty page")
    answer(root)  # the full scan: its basis
    before = basis_of(root)
    first = before.id
    scans = count_scans(monkeypatch)
    for i in range(3):  # appends (each a commit): new shingles on changed pages
        assert append(Wiki(root), f"filler/page-{i}", f"A fact of its own about filler number {i} and its ledger.").ok
    for i in range(3, 11):  # the first passage on 8 more pages: 18, above the listed limit (big now)
        (root / f"filler/page-{i}.md").write_text(page(f"Filler {i}", [*facts(5, 1000 + i), PASSAGE]), "utf-8")
    for i in (0, 1):  # the other on 2 more: 9, above the boilerplate limit (every holder's body moves)
        (root / f"wiki/linker-{i}.md").write_text(
            page(f"Linker {i}", [f"See [[aizen-bg3-v2-fixed-v2-entry-155|entry {i}]].", OTHER]), "utf-8")
    (root / "wiki/linker-2.md").write_text(page("Linker 2", ["See [[harbour-ledger]] now."]), "utf-8")  # a link moved
    (root / LEDGER).write_text(page("Harbour Ledger", ["Kept short."], trust=0.6), "utf-8")  # no body now
    (root / "notes/o0.md").write_text(page("Other Holder 0", ["Short."]), "utf-8")  # neither
    (root / "notes/empty.md").write_text(page("Empty Page", []), "utf-8")
    commit(base=root, message="passages spread")
    answer(root)  # (a new basis: the next one is made from it)
    middle = basis_of(root).id
    assert middle != first and scans == []
    monkeypatch.setattr(compact, "COMPACT_AT", 1)
    (root / "notes/empty.md").write_text(page("Empty Page", facts(5, 77)), "utf-8")  # a body now
    commit(base=root, message="a body for the empty page")
    found = answer(root)
    assert scans == [] and found == full_scan(root)
    made = basis_of(root)
    assert made.id not in (first, middle)
    assert_same_basis(made, scanned_basis(root))
    # (pages left and joined those with a body: the band tables' widths moved)
    had, has = set(before.band_slots.tolist()), set(made.band_slots.tolist())
    assert had - has and has - had
    # a later process follows the new basis: one append reads that page alone
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    assert append(Wiki(root), "filler/page-11", "A last fact about the eleventh filler and its crane.").ok
    read = read_pages(monkeypatch)
    scans.clear()  # (the two scans above were of copies)
    found = answer(root)
    assert scans == [] and read == ["filler/page-11.md"]
    assert found == full_scan(root) and basis_of(root).id == made.id


def test_a_short_follow_keeps_its_basis(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    answer(root)
    first = basis_of(root).id
    for i in range(compact.COMPACT_AT - 1):
        assert append(Wiki(root), f"filler/page-{i % 12}", f"Fact number {i} about the filler and the tide.").ok
    assert answer(root) == full_scan(root)
    assert basis_of(root).id == first


def test_a_big_shingle_falling_back_under_the_limit_writes_no_basis(root: Path,  # noqa: F811
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Which pages hold a big shingle is not kept: the follow goes on from the old basis."""
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    for i in range(18):
        (root / f"notes/p{i}.md").write_text(page(f"Passage Holder {i}", [PASSAGE, *facts(4, 600 + i)]), "utf-8")
    commit(root, "a passage on 18 pages")
    answer(root)
    first = basis_of(root).id
    for i in range(4):  # 18 -> 14 pages: under the listed limit again
        (root / f"notes/p{i}.md").write_text(page(f"Passage Holder {i}", facts(4, 600 + i)), "utf-8")
    commit(root, "the passage leaves four pages")
    scans = count_scans(monkeypatch)
    found = answer(root)
    assert scans == [] and basis_of(root).id == first
    assert found == full_scan(root)


def test_a_changed_title_writes_no_basis(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Links may reach a retitled page, or no longer: its linking pages are not followed."""
    monkeypatch.setattr(compact, "COMPACT_AT", 2)
    answer(root)
    first = basis_of(root).id
    (root / "wiki/harbour-ledger.md").write_text(page("Harbour Ledger Book", facts(6, 42), trust=0.6), "utf-8")
    (root / "filler/page-1.md").write_text(page("Filler 1", facts(6, 1001)), "utf-8")
    commit(root, "a retitled page")
    assert answer(root) == full_scan(root)
    assert basis_of(root).id == first


def _a_new_basis_due(base: Path) -> bytes:
    """COMPACT_AT pages scanned, then each appended to once (committed): a new basis is due.
    The id of the basis the scan saved."""
    (base / "many").mkdir()
    for i in range(compact.COMPACT_AT):
        (base / f"many/page-{i}.md").write_text(page(f"Many {i}", facts(5, 3000 + i)), "utf-8")
    commit(base, "many pages")
    answer(base)  # the full scan: its basis
    first = basis_of(base).id
    for i in range(compact.COMPACT_AT):
        path = base / f"many/page-{i}.md"
        path.write_text(path.read_text("utf-8") + f"- A fact appended to page {i} about the tide table.\n", "utf-8")
    commit(base, "an append to each")
    return first


def _child_ended(state_dir: Path) -> bool:
    """Whether no detached compaction holds the wiki's lock now."""
    return not detached.compacting(state_dir)


def test_a_one_shot_command_hands_the_new_basis_to_a_process_of_its_own(root: Path,  # noqa: F811
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A command finding a new basis due (``curator health`` after the 64th page an agent
    appended to) answers from its follow at once; a child started in a session of its own makes
    that basis (the one a full scan would save) and keeps the result naming it, so the next
    process follows from it. One child at a time; none again for a basis a child could not
    compact until RETRY_AFTER more pages changed."""
    first = _a_new_basis_due(root)
    state_dir = Wiki(root).state_dir
    monkeypatch.setattr(detached, "_ONE_SHOT", True)  # (as the console script says of itself)
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    def popen(args: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        if list(args[1:4]) == ["-P", "-m", "curator.engine.dedup.detached"]:  # (git's calls go through)
            started.append(list(args))
            assert kwargs["start_new_session"] and kwargs["stdout"] == subprocess.DEVNULL
        return real_popen(args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(subprocess, "Popen", popen)
    scans = count_scans(monkeypatch)
    found = answer(root)  # answered by the follow, no basis made here
    assert scans == [] and basis_of(root).id == first
    assert found == full_scan(root)
    assert len(started) == 1 and started[0][1:4] == ["-P", "-m", "curator.engine.dedup.detached"]
    # the child made the basis a full scan would save, and kept the result naming it
    deadline = time.monotonic() + 120
    while basis_of(root).id == first or not _child_ended(state_dir):
        assert time.monotonic() < deadline, "the detached compaction did not end"
        time.sleep(0.1)
    made = basis_of(root)
    assert_same_basis(made, scanned_basis(root))
    # the next process follows from it: one append reads that page alone, starts no child
    assert append(Wiki(root), "many/page-0", "A last fact about the first page and its crane.").ok
    read = read_pages(monkeypatch)
    scans.clear()  # (the scans above were of copies)
    found = answer(root)
    assert scans == [] and read == ["many/page-0.md"] and len(started) == 1
    assert found == full_scan(root)
    # one child at a time: while one holds the lock, a due compaction starts none (and leaves
    # the keeping to it)
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kwargs: started.append(list(args)))  # (git: not called here)
    held = detached._lock(state_dir)
    assert held is not None
    try:
        assert detached.start(root, state_dir, made.id, compact.COMPACT_AT) and len(started) == 1
    finally:
        os.close(held)
    # a basis a child could not compact: none again until RETRY_AFTER more pages changed
    (state_dir / detached.LOCK_FILE).write_text(f"{made.id.hex()} {compact.COMPACT_AT}", "ascii")
    assert not detached.start(root, state_dir, made.id, compact.COMPACT_AT + detached.RETRY_AFTER - 1)
    assert len(started) == 1
    assert detached.start(root, state_dir, made.id, compact.COMPACT_AT + detached.RETRY_AFTER)
    assert len(started) == 2


def test_the_command_line_answers_without_waiting_for_the_new_basis(root: Path) -> None:  # noqa: F811
    """``curator dedup --groups`` as typed: its answer is a full scan's, no basis is made in its
    process, and the basis its child makes is the one a full scan would save. The child runs
    in the wiki's folder: a downloaded wiki's own ``curator`` package there runs nothing."""
    (root / "curator" / "engine").mkdir(parents=True)
    (root / "curator" / "__init__.py").write_text(
        "import pathlib\npathlib.Path(__file__).parent.parent.joinpath('ran.txt').write_text('ran')\n", "utf-8")
    (root / "curator" / "engine" / "__init__.py").write_text("", "utf-8")
    first = _a_new_basis_due(root)
    done = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "dedup", "--groups", "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == full_scan(root)
    state_dir = Wiki(root).state_dir
    assert (state_dir / detached.LOCK_FILE).exists()  # (handed off: only a child's lock makes it)
    deadline = time.monotonic() + 120
    while basis_of(root).id == first or not _child_ended(state_dir):
        assert time.monotonic() < deadline, "the detached compaction did not end"
        time.sleep(0.1)
    assert_same_basis(basis_of(root), scanned_basis(root))
    assert not (root / "ran.txt").exists()


def _appends_to_fillers(base: Path, numbers: range) -> None:
    """An agent's append to each of those filler pages, one process each."""
    for i in numbers:
        assert append(Wiki(base), f"filler/page-{i}", f"Fact number {i} about the filler and the tide.").ok


def _staged_files(base: Path) -> list[Path]:
    """The basis files written and never moved into place, left in the state folder."""
    return [p for p in Wiki(base).state_dir.iterdir() if p.name.startswith(f".{follow.FILE}")]


def _answer_without_a_scan(base: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """The next process's answer, asserting it scanned nothing (and makes no basis of its own)."""
    monkeypatch.setattr(compact, "COMPACT_AT", 1000)
    scans = count_scans(monkeypatch)
    found = answer(base)
    assert scans == []
    return found


def _another_process_changes_a_page(base: Path) -> None:
    """A page appended to by hand, and seen by another process's store: the database moves on."""
    path = base / "filler/page-9.md"
    path.write_text(path.read_text("utf-8") + "- A fact appended while the basis was made.\n", "utf-8")
    other = Wiki(base)
    other.store.refresh()
    other.close()


def test_a_new_basis_the_pages_moved_past_is_not_written(root: Path,  # noqa: F811
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process changes a page while a new basis is made (an agent appends during the
    5-7 s it takes at 100,000 pages): the cache refuses to name a basis of the pages as they no
    longer are, so its file is not written either; the old one stays, and the next process
    follows from it (written anyway, the old file was gone while the cache still named it: the
    next process scanned, 45 s at 100,000 pages)."""
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    answer(root)
    first = basis_of(root)
    stamp = (Wiki(root).state_dir / follow.FILE).stat()
    real = compact.compacted

    def meanwhile(*args: object, **kwargs: object) -> follow.Basis | None:
        made = real(*args, **kwargs)  # type: ignore[arg-type]
        assert made is not None
        _another_process_changes_a_page(root)  # (the database's state moves on)
        return made

    monkeypatch.setattr(compact, "compacted", meanwhile)
    _appends_to_fillers(root, range(4))
    found = answer(root)  # (a basis due: made, then refused)
    after = (Wiki(root).state_dir / follow.FILE).stat()
    assert basis_of(root).id == first.id and (after.st_ino, after.st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)
    assert not _staged_files(root)  # no leftover
    monkeypatch.setattr(compact, "compacted", real)
    again = _answer_without_a_scan(root, monkeypatch)  # followed from the old basis, not scanned
    assert again == full_scan(root) and found == again


def test_a_detached_compaction_the_pages_moved_past_makes_it_again(root: Path,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's first basis is refused (another process changed a page meanwhile): it makes
    it again from the pages as they are, and that one is written and named."""
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    answer(root)
    first = basis_of(root).id
    _appends_to_fillers(root, range(4))
    real, made_for = compact.compacted, []

    def meanwhile(*args: object, **kwargs: object) -> follow.Basis | None:
        made = real(*args, **kwargs)  # type: ignore[arg-type]
        made_for.append(made)
        if len(made_for) == 1:  # while the first is made
            _another_process_changes_a_page(root)
        return made

    monkeypatch.setattr(compact, "compacted", meanwhile)
    assert detached.compact(root) == 0  # (the child's own function, in this process)
    assert len(made_for) == 2 and basis_of(root).id not in (first, made_for[0].id)  # type: ignore[union-attr]
    assert basis_of(root).id == made_for[1].id  # type: ignore[union-attr]
    monkeypatch.setattr(compact, "compacted", real)
    assert _answer_without_a_scan(root, monkeypatch) == full_scan(root)


def test_a_result_of_a_basis_another_process_replaced_is_not_kept(root: Path,  # noqa: F811
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that followed the old basis keeps its result after another made a new basis and
    kept the result naming it: its save is refused (kept, the cache would name a basis and a
    result of another, and the next process scanned: 52 s at 100,000 pages)."""
    from curator.engine.dedup import families

    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    answer(root)
    first = basis_of(root).id
    _appends_to_fillers(root, range(4))
    late_wiki = Wiki(root)
    families.answers_for(late_wiki)  # (it follows from the old basis)
    answer(root)  # another process: a new basis, and the result naming it
    made = basis_of(root).id
    assert made != first
    assert append(Wiki(root), "filler/page-5", "One more fact about the fifth filler and the tide.").ok
    monkeypatch.setattr(compact, "COMPACT_AT", 1000)  # (the late one makes no basis of its own)
    late = families.answers_for(late_wiki)  # (it follows that change too, from the old basis)
    late.keep()
    scans = count_scans(monkeypatch)
    found = answer(root)
    assert scans == [] and basis_of(root).id == made
    assert found == full_scan(root)


def test_a_detached_compaction_keeps_its_result_again_when_the_pages_moved_on(root: Path,  # noqa: F811
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process changes a page after the child made its basis, before the result naming
    it is kept: neither is saved (they are saved as one), and the child makes both again from
    the pages as they are, so the cache never names a basis and a result of another."""
    from curator.engine.dedup import cache

    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    answer(root)
    first = basis_of(root).id
    _appends_to_fillers(root, range(4))
    real, named = cache.encode, []

    def encode(kept: cache.Kept, *args: object) -> bytes:
        named.append(kept.basis[0])
        if len(named) == 1:  # (the result naming the new basis is made: a change before it is kept)
            _another_process_changes_a_page(root)
        return real(kept, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "encode", encode)
    assert detached.compact(root) == 0  # (the child's own function, in this process)
    made = basis_of(root).id
    assert len(named) == 2 and first not in named and named[0] != named[1] and named[1] == made
    assert not _staged_files(root)  # no leftover
    monkeypatch.setattr(cache, "encode", real)
    assert _answer_without_a_scan(root, monkeypatch) == full_scan(root)


def test_a_new_basis_is_kept_with_the_result_naming_it_or_not_at_all(root: Path,  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-running process (the station's duplicate finder, the MCP server) makes a new basis,
    and another process changes a page before the result naming it is kept: the result is
    refused, and so is the basis (saved apart, the cache named the new basis and the old result,
    and every process starting before the next keep scanned: 52 s at 100,000 pages). The old
    basis stays, its file untouched, and the next process follows from it without a scan."""
    from curator.engine.dedup import cache

    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    answer(root)
    first = basis_of(root).id
    stamp = (Wiki(root).state_dir / follow.FILE).stat()
    _appends_to_fillers(root, range(4))
    real, named = cache.encode, []

    def encode(kept: cache.Kept, *args: object) -> bytes:
        named.append(kept.basis[0])
        _another_process_changes_a_page(root)  # (while the result naming the new basis is made)
        return real(kept, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "encode", encode)
    found = answer(root)  # (in this process: a basis due, made here)
    assert len(named) == 1 and named[0] != first  # (a result naming a new basis was made)
    after = (Wiki(root).state_dir / follow.FILE).stat()
    assert basis_of(root).id == first and (after.st_ino, after.st_mtime_ns) == (stamp.st_ino, stamp.st_mtime_ns)
    assert not _staged_files(root)  # no leftover
    monkeypatch.setattr(cache, "encode", real)
    again = _answer_without_a_scan(root, monkeypatch)  # followed from the old basis, with the old result
    assert again == full_scan(root) and found == again


def test_a_scan_writes_its_basis_a_block_at_a_time(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A scan's band rows and tables are written a block (a band) at a time as the file is, not
    stacked first: the basis written with blocks of two rows is the one written whole."""
    whole = scanned_basis(root)
    monkeypatch.setattr(follow, "CONVERT_ROWS", 2)
    blocks = scanned_basis(root)
    assert len(blocks.band_slots) > 4 and blocks.bands.shape == (len(blocks.band_slots), dedup.BANDS)
    assert_same_basis(blocks, whole)


def test_a_long_running_maker_refused_makes_the_basis_again_only_once_more_pages_changed(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A process that runs for long (the station's worker, the MCP server) whose new basis was
    refused (a page changed before the result naming it was kept) does not make it again at its
    next keep, which a wiki written every few seconds would refuse again (5-6 s of a core each
    time at 100,000 pages), but once RETRY_AFTER more pages changed; then it is kept, and the
    next process follows from it without a scan."""
    from curator.engine import memory
    from curator.engine.dedup import cache, families

    monkeypatch.setattr(memory, "_LONG_LIVED", True)
    monkeypatch.setattr(compact, "COMPACT_AT", 4)
    monkeypatch.setattr(detached, "RETRY_AFTER", 3)
    answer(root)
    first = basis_of(root).id
    wiki = Wiki(root)  # (the long-running process: its index held from answer to answer)
    _appends_to_fillers(root, range(4))
    real_encode, real_compacted, made = cache.encode, compact.compacted, []

    def encode(kept: cache.Kept, *args: object) -> bytes:
        if kept.basis[0] != first:  # (the result naming a new basis: a change before it is kept)
            _another_process_changes_a_page(root)
        return real_encode(kept, *args)  # type: ignore[arg-type]

    def compacted(*args: object, **kwargs: object) -> follow.Basis | None:
        made.append(1)
        return real_compacted(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache, "encode", encode)
    monkeypatch.setattr(compact, "compacted", compacted)
    families.find_families(wiki)
    assert len(made) == 1 and basis_of(root).id == first  # (made, refused)
    monkeypatch.setattr(cache, "encode", real_encode)
    for i in range(4, 5):  # (fewer than RETRY_AFTER more, with the page changed meanwhile: not made again)
        assert append(Wiki(root), f"filler/page-{i}", f"Fact number {i} about the filler and the tide.").ok
        wiki.refresh()
        families.find_families(wiki)
        families.keep_result(wiki)  # (as the station's worker keeps after its answer)
    assert len(made) == 1 and basis_of(root).id == first
    assert append(Wiki(root), "filler/page-5", "Fact number 5 about the filler and the tide.").ok
    wiki.refresh()
    families.find_families(wiki)
    families.keep_result(wiki)
    assert len(made) == 2 and basis_of(root).id != first  # (made again, and kept)
    assert _answer_without_a_scan(root, monkeypatch) == full_scan(root)
