"""An edit made between the station's walk of the pages and the start of its file watcher is
seen: the watcher raised no event for it, so the workspace refreshes once when the watch begins.

(The station walks a named wiki ahead, at its very start, while it imports and builds the
window: that gap is ~1 s on a big wiki, and an edit an agent made in it stayed unseen.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QThreadPool

from curator.views.workspace import Snapshot, Workspace
from tests.gui_helpers import make_wiki


def _settle(qtbot: Any, ws: Workspace) -> None:
    for _ in range(3):
        for handle in ws.handles:
            handle.writer.wait(15_000)
        QThreadPool.globalInstance().waitForDone(15_000)
        qtbot.wait(50)


def test_an_edit_before_the_watch_starts_is_refreshed(qtbot: Any, tmp_path: Path,
                                                      monkeypatch: Any) -> None:
    root = make_wiki(tmp_path / "wiki")
    # a warm wiki (its full-text index built: no index build after the load sweeps the pages)
    first = Workspace(root, watch=False)
    with qtbot.waitSignal(first.search_built, timeout=15_000):
        first.load()
    _settle(qtbot, first)
    first.close()
    page = root / "wiki" / "refunds.md"
    start_watching = Workspace._start_watching

    def edit_then_watch(self: Workspace) -> None:
        # after the load has read every page, before any watch is set: no event will come
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("title: Refunds", "title: Refunds and returns"), encoding="utf-8")
        start_watching(self)

    monkeypatch.setattr(Workspace, "_start_watching", edit_then_watch)
    ws = Workspace(root, watch=True)
    seen: list[str] = []

    def changed(snapshot: Snapshot) -> None:
        seen.extend(row.page.title for row in snapshot.rows if row.page.path == "wiki/refunds.md")

    ws.pages_changed.connect(changed)
    try:
        with qtbot.waitSignal(ws.loaded, timeout=15_000) as loaded:
            ws.load()
        titles = [row.page.title for row in loaded.args[0].rows if row.page.path == "wiki/refunds.md"]
        assert titles == ["Refunds"]  # the load read the page before the edit
        qtbot.waitUntil(lambda: "Refunds and returns" in seen, timeout=10_000)
        assert ws.wiki(0).pages["wiki/refunds.md"].title == "Refunds and returns"
    finally:
        _settle(qtbot, ws)
        ws.close()


def test_no_refresh_is_asked_for_without_a_watcher(qtbot: Any, tmp_path: Path) -> None:
    """Without a watcher (tests, the in-process benchmarks) nothing is refreshed after the load:
    F5 does it."""
    root = make_wiki(tmp_path / "wiki")
    ws = Workspace(root, watch=False)
    try:
        with qtbot.waitSignal(ws.loaded, timeout=15_000):
            ws.load()
        assert not any(handle.dirty for handle in ws.handles)
    finally:
        _settle(qtbot, ws)
        ws.close()


def test_a_change_the_watcher_sees_is_refreshed_from_its_files_alone(qtbot: Any, tmp_path: Path,
                                                                      monkeypatch: Any) -> None:
    """An agent's append (another process's write: a temp file moved over the page) is refreshed
    from the files the watcher named, not by a walk of every folder (1.2 s at 300,000 pages after
    each append); a file that is not a page (one links may point at), or F5, walks them all."""
    import time

    from curator.engine.wiki import Wiki
    from curator.engine.write.append import append

    root = make_wiki(tmp_path / "wiki")
    refreshes: list[list[str] | None] = []
    real = Wiki.refresh

    def refresh(wiki: Wiki, paths: Any = None) -> Any:
        refreshes.append(None if paths is None else sorted(paths))
        return real(wiki, paths)

    monkeypatch.setattr(Wiki, "refresh", refresh)
    ws = Workspace(root, watch=True)
    seen: list[Snapshot] = []
    ws.pages_changed.connect(seen.append)
    try:
        with qtbot.waitSignal(ws.loaded, timeout=15_000):
            ws.load()
        qtbot.waitUntil(lambda: None in refreshes, timeout=10_000)  # (the walk once the watch begins)
        _settle(qtbot, ws)
        refreshes.clear()
        assert append(Wiki(root), "refunds", "Refunds are paid within 14 days of the request.").ok
        qtbot.waitUntil(lambda: any(r.page.path == "wiki/refunds.md" for s in seen for r in s.rows), timeout=10_000)
        _settle(qtbot, ws)
        assert refreshes and None not in refreshes
        assert all("wiki/refunds.md" in paths or paths == ["log.md"] for paths in refreshes if paths)
        assert "14 days" in ws.wiki(0).read_text("wiki/refunds.md")
        # a file that is not a page, there now: every folder walked
        refreshes.clear()
        (root / "wiki" / "chart.png").write_bytes(b"\x89PNG\r\n")
        qtbot.waitUntil(lambda: None in refreshes, timeout=10_000)
        assert "wiki/chart.png" in ws.wiki(0).store.attachments
        # a new page in a new folder, seen too
        _settle(qtbot, ws)
        seen.clear()
        (root / "later").mkdir()
        time.sleep(0.2)  # (the new folder watched first)
        (root / "later" / "note.md").write_text("# Later\n\nA note.\n", encoding="utf-8")
        qtbot.waitUntil(lambda: any(r.page.path == "later/note.md" for s in seen for r in s.rows), timeout=10_000)
    finally:
        _settle(qtbot, ws)
        ws.close()
