"""The browser's filter choices (namespaces, tags and pages per tag) are counted at the load and
followed by each change, not counted again from every page's summary (2.4 s of every change at
300,000 pages, before its rows were shown): after pages added, retagged, emptied of tags and
deleted, they are what every page as it is now gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.wiki import Wiki
from curator.views import workspace as workspace_module
from curator.views.workspace import Snapshot
from tests.gui_helpers import loaded_window, make_wiki
from tests.views.shell.test_gui_open_fast import _open_until_kept

PAGES = {
    "wiki/home.md": "---\ntitle: Home\ntags: [guide, ops]\n---\n# Home\n\nSee [[Payments]].\n",
    "wiki/payments.md": "---\ntitle: Payments\ntags: [ops]\n---\n# Payments\n",
    "wiki/refunds.md": "---\ntitle: Refunds\ntags: [Ops, money]\n---\n# Refunds\n",
    "notes/scratch.md": "# Scratch\n",
}


def as_now(root: Path) -> tuple[list[str], dict[str, int]]:
    """The namespaces, and the pages of each tag (folded by case), of every page as it is now."""
    wiki = Wiki(root)
    try:
        counts: dict[str, int] = {}
        for page in wiki.pages.values():
            for fold in {t.casefold() for t in page.tags}:
                counts[fold] = counts.get(fold, 0) + 1
        return sorted({page.namespace for page in wiki.pages.values()}), counts
    finally:
        wiki.close()


def shown(snapshot: Snapshot) -> tuple[list[str], dict[str, int]]:
    assert sorted(t.casefold() for t in snapshot.tags) == sorted(k.casefold() for k in snapshot.tag_counts)
    return snapshot.namespaces, {t.casefold(): n for t, n in snapshot.tag_counts.items()}


def test_filter_choices_follow_every_change(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    assert as_now(root) == (["notes", "wiki"], {"guide": 1, "ops": 3, "money": 1})
    # (a station on a big wiki, opened again: its pages not all decoded, as at 300,000 pages)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    _open_until_kept(qtbot, root, tmp_path, "inbound")
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    assert not win.workspace.wiki(0).store.decoded
    changed: list[Snapshot] = []
    win.workspace.pages_changed.connect(changed.append)
    summaries: list[int] = []
    real = Wiki.summaries
    monkeypatch.setattr(Wiki, "summaries", lambda wiki: summaries.append(1) or real(wiki))
    steps = [
        ("a page in a new folder, with a new tag",
         lambda: (root / "archive").mkdir() or (root / "archive" / "old.md").write_text(
             "---\ntags: [legacy, OPS]\n---\n# Old\n", encoding="utf-8")),
        ("a page retagged", lambda: (root / "wiki" / "payments.md").write_text(
            "---\ntitle: Payments\ntags: [billing]\n---\n# Payments\n", encoding="utf-8")),
        ("a page's tags all taken out", lambda: (root / "wiki" / "refunds.md").write_text(
            "---\ntitle: Refunds\n---\n# Refunds\n", encoding="utf-8")),
        ("the folder's only page deleted", lambda: (root / "archive" / "old.md").unlink()),
        ("an untagged page tagged", lambda: (root / "notes" / "scratch.md").write_text(
            "---\ntags: [Guide]\n---\n# Scratch\n", encoding="utf-8")),
    ]
    for step, change in steps:
        changed.clear()
        change()
        win.workspace.refresh_now()
        qtbot.waitUntil(lambda: bool(changed), timeout=15_000)
        assert shown(changed[-1]) == as_now(root), step
    assert as_now(root) == (["notes", "wiki"], {"guide": 2, "ops": 1, "billing": 1})
    assert summaries == []  # (no change read every page's summary for them)
    win.close()
