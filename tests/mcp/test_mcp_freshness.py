"""The MCP door's freshness machinery in process: the page watcher and the shared-cache check.

The stdio tests (test_mcp_server.py) show that changes are seen; these pin down *which* mechanism
sees them, with the search index's periodic stat sweep switched off so it cannot help.
"""

from __future__ import annotations

import time
from pathlib import Path

from curator.engine.corpus.watcher import PageWatcher
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.mcp_server import WATCHED_SWEEP_INTERVAL, AgentDoor, open_door
from tests.mcp.test_mcp_server import make_wiki


def _poll(door: AgentDoor, query: str, path: str, seconds: float = 3.0) -> str:
    deadline = time.monotonic() + seconds
    while True:
        text = door.call(lambda: door.search(query))
        if path in text or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


def test_watcher_reports_in_place_edits_without_a_sweep(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    door = open_door(root, "dudu")
    try:
        door.warm(watch=True)
        assert door.watcher is not None
        assert door.wiki.search.sweep_interval == WATCHED_SWEEP_INTERVAL
        door.wiki.search.sweep_interval = None  # only the watcher may find the edit
        with open(root / "wiki/refunds.md", "a", encoding="utf-8") as f:
            f.write("\nThe bassoon desk handles refunds.\n")
        assert "wiki/refunds.md" in _poll(door, "bassoon", "wiki/refunds.md")
        # ... and its links too: the page was parsed again, not just re-indexed.
        with open(root / "wiki/refunds.md", "a", encoding="utf-8") as f:
            f.write("See [[cello-policy]].\n")
        _poll(door, "cello", "wiki/refunds.md")
        assert "[[cello-policy]] — not yet written" in door.call(lambda: door.neighbors("refunds"))
        # A namespace that appears later is watched from then on.
        (root / "music").mkdir()
        (root / "music/drums.md").write_text("# Drums\n\nDrums are loud.\n", encoding="utf-8")
        assert "music/drums.md" in door.call(lambda: door.search("drums"))  # folder-mtime check
        time.sleep(0.1)  # the new watch is in place once the call above returned; let it settle
        with open(root / "music/drums.md", "a", encoding="utf-8") as f:
            f.write("The timpani need tuning.\n")
        assert "music/drums.md" in _poll(door, "timpani", "music/drums.md")
    finally:
        door.close()
        door.wiki.close()
    assert door.watcher is None


def test_without_a_watcher_the_in_place_edit_waits_for_the_sweep(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    door = open_door(root, "dudu")
    try:
        door.warm()
        door.wiki.search.sweep_interval = None
        with open(root / "wiki/refunds.md", "a", encoding="utf-8") as f:
            f.write("\nThe bassoon desk handles refunds.\n")
        time.sleep(0.2)
        assert door.call(lambda: door.search("bassoon")).startswith("no pages match")
        door.wiki.search.sweep_interval = 0.0  # the sweep's turn: now it is found
        assert "wiki/refunds.md" in door.call(lambda: door.search("bassoon"))
    finally:
        door.wiki.close()


def test_a_change_another_process_recorded_in_the_cache_is_picked_up(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    door = open_door(root, "dudu")
    station = Wiki(root)
    try:
        door.warm()
        door.wiki.search.sweep_interval = None
        _ = station.pages
        assert append(station, "harp-notes", "The harp is tuned weekly", create_new=True,
                      actor=Actor("operator")).status == "appended"
        # The folder listing now matches the shared index, so only the data_version check helps.
        assert "wiki/harp-notes.md — Harp Notes" in door.call(door.index)
    finally:
        station.close()
        door.wiki.close()


def test_watcher_does_not_watch_git_or_the_cache(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    door = open_door(root, "dudu")
    try:
        door.warm(watch=True)
        assert door.watcher is not None
        assert sorted(door.watcher._watched) == ["departments", "hr", "wiki"]
        assert "appended" in door.call(lambda: door.append("payments", "The oboe fee is new"))
        time.sleep(0.2)
        # The append's own page write is the only thing reported (its commit and cache writes are not).
        assert door.watcher.drain() in ([], ["wiki/payments.md"])
    finally:
        door.close()
        door.wiki.close()


def test_watcher_keeps_only_page_files(tmp_path: Path) -> None:
    watcher = PageWatcher(tmp_path)
    for rel in ("wiki/a.md", "B.MD", "wiki/notes.txt", ".curator/cache.sqlite-wal", ".git/x.md",
                "raw/dump.md", "wiki/_archive/old.md", "wiki/.a.md.tmp"):
        watcher.note(str(tmp_path / rel))
    watcher.note(str(tmp_path.parent / "elsewhere.md"))
    assert watcher.drain() == ["B.MD", "wiki/a.md"]
    assert watcher.drain() == []


def test_watcher_notes_attachment_files_coming_or_going_only(tmp_path: Path) -> None:
    watcher = PageWatcher(tmp_path)
    for rel in (".curator/cache.sqlite-wal", ".git/index", "raw/dump.pdf", "wiki/.pic.png.tmp", "wiki/a.md"):
        watcher.note(str(tmp_path / rel))
    watcher.note(str(tmp_path / "wiki/pic.png"), listed=False)  # written and closed: the same file
    assert watcher.drain_attachments() is False
    watcher.note(str(tmp_path / "wiki/pic.png"))
    assert watcher.drain_attachments() is True and watcher.drain_attachments() is False
    assert watcher.drain() == ["wiki/a.md"]


def test_an_attachment_file_that_appears_is_linked_to_without_a_sweep(tmp_path: Path) -> None:
    from curator.engine.graph.link_graph import export

    root = make_wiki(tmp_path / "w")
    with open(root / "wiki/refunds.md", "a", encoding="utf-8") as f:
        f.write("\nThe form: [[refund-form.pdf]].\n")
    door = open_door(root, "dudu")
    try:
        door.warm(watch=True)
        door.wiki.search.sweep_interval = None  # only the watcher may find the file

        def ids() -> set[str]:
            door.call(door.index)
            data = export(door.wiki, "json", attachments=True)
            assert isinstance(data, dict)
            return {n["id"] for n in data["nodes"]}

        assert "attachment:wiki/refund-form.pdf" not in ids()
        (root / "wiki/refund-form.pdf").write_bytes(b"%PDF-1.4\n")
        deadline = time.monotonic() + 3.0
        while "attachment:wiki/refund-form.pdf" not in (seen := ids()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "attachment:wiki/refund-form.pdf" in seen
    finally:
        door.close()
        door.wiki.close()
