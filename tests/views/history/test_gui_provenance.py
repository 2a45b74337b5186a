"""pytest-qt tests of provenance in the station: the page's Provenance gutter (a colour per agent,
plain-text hovers, a click opens the commit in History), the History actor filter and "undo this
agent since", and the Policy view's injection timeline with "show as sent" and a diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from curator.engine.policy.actor import Actor
from curator.engine.read.agent_context import build_context
from curator.engine.read.injections import record
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.views.history.history_view import HistoryView
from curator.views.page.page_view import COL_GUTTER, COL_WHO, actor_colour
from curator.views.policy.policy_view import PolicyView
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import PAGES, make_wiki, temp_settings

DUDU = Actor("agent", "dudu")
MIMI = Actor("agent", "mimi")
SHOTS = Path(os.environ.get("CURATOR_SHOTS", "/tmp"))


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", PAGES)
    wiki = Wiki(root)
    try:
        for actor, fact in ((DUDU, "Payments settle in two days <img src='http://example.invalid/x.png'>"),
                            (MIMI, "Card refunds go back within five days"),
                            (DUDU, "The payments team meets on Tuesdays")):
            assert append(wiki, "payments", fact, [], False, actor).commit
        for budget in (2000, 8000):
            record(wiki, DUDU, build_context(wiki, DUDU, budget=budget), query=None, source="mcp")
        assert append(wiki, "home", "The home page lists every team", [], False, MIMI).commit
    finally:
        wiki.close()
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    win.add_view("policy", PolicyView(win), "Policy")
    win.add_view("history", HistoryView(win), "History")
    win.resize(1300, 800)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    yield win
    import shiboken6
    from PySide6.QtCore import QThreadPool

    # Let every background read (and what its answer starts: the search index build re-opens
    # the page) land while the window is alive: a late answer would meet deleted widgets.
    pool = QThreadPool.globalInstance()
    for _ in range(5):
        for handle in win.workspace.handles:
            handle.writer.wait(15_000)  # actions, and the refresh after each
        pool.waitForDone(15_000)
        qtbot.wait(100)
    if shiboken6.isValid(win):
        win.close()


def open_provenance(qtbot, win: MainWindow, path: str) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.open_page((0, path))
    win.page_view.show_provenance()
    table = win.page_view.provenance
    qtbot.waitUntil(lambda: table.rowCount() > 0 and any("Tuesdays" in line.text for line in table.lines),
                    timeout=15_000)


def test_page_gutter_colours_each_agent_and_opens_the_commit(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    open_provenance(qtbot, window, "wiki/payments.md")
    table = window.page_view.provenance
    rows = {line.text: r for r, line in enumerate(table.lines)}
    settle = next(r for t, r in rows.items() if "settle in two days" in t)
    refunds = next(r for t, r in rows.items() if "five days" in t)
    tuesday = next(r for t, r in rows.items() if "Tuesdays" in t)
    colour = lambda r: table.item(r, COL_GUTTER).background().color().name()  # noqa: E731
    assert colour(settle) == colour(tuesday) == actor_colour("agent:dudu")
    assert colour(refunds) == actor_colour("agent:mimi") != actor_colour("agent:dudu")
    assert table.item(refunds, COL_WHO).text() == "agent:mimi"
    # the hover is plain text, shown escaped by the station's tooltip filter: the page's <img>
    # tag is displayed, never interpreted
    from curator.views.plain_tips import plain_tip

    tip = table.item(settle, COL_GUTTER).toolTip()
    assert "agent:dudu" in tip and "wiki_append" in tip and "<img src=" in tip
    assert "<img" not in plain_tip(tip) and "&lt;img" in plain_tip(tip)

    window.views.setCurrentWidget(window.page_view)
    window.page_view.show_provenance()
    qtbot.wait(50)
    window.page_view.provenance.grab().save(str(SHOTS / "provenance_gutter.png"))
    window.grab().save(str(SHOTS / "provenance_window.png"))
    # a double-click opens that line's commit in History
    sha = table.lines[refunds].commit
    history = window.view_index["history"]
    assert isinstance(history, HistoryView)
    qtbot.waitUntil(lambda: len(history.all_entries) > 0, timeout=15_000)
    table.cellDoubleClicked.emit(refunds, 1)
    assert window.views.currentWidget() is history
    current = history.current_entry()
    assert current is not None and current.commit == sha


def test_history_filter_per_actor_and_undo_agent_since(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    history = window.view_index["history"]
    assert isinstance(history, HistoryView)
    window.show_view("history")
    qtbot.waitUntil(lambda: len(history.all_entries) >= 4, timeout=15_000)
    assert not history.undo_agent_button.isEnabled()
    history.actor_filter.setCurrentText("agent:mimi")
    assert {e.actor for e in history.model.entries} == {"agent:mimi"}
    assert len(history.model.entries) == 2 and history.undo_agent_button.isEnabled()
    with qtbot.waitSignal(window.workspace.pages_changed, timeout=15_000):
        history.run_undo_agent("agent:mimi", "2000-01-01")
    root = window.workspace.root
    qtbot.waitUntil(lambda: "five days" not in (root / "wiki/payments.md").read_text("utf-8"), timeout=15_000)
    text = (root / "wiki/payments.md").read_text("utf-8")
    assert "Tuesdays" in text and "settle in two days" in text
    assert "lists every team" not in (root / "wiki/home.md").read_text("utf-8")


def test_policy_injection_timeline_shows_as_sent_and_diff(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    policy = window.view_index["policy"]
    assert isinstance(policy, PolicyView)
    window.show_view("policy")
    policy.agent.setCurrentText("dudu")
    policy.run_preview()
    qtbot.waitUntil(lambda: policy.injections.rowCount() == 2, timeout=15_000)
    assert policy.injections.item(0, 3).text() == "8000"  # newest first
    root = window.workspace.root
    wiki = Wiki(root)
    try:
        from curator.engine.policy.actor import OPERATOR
        from curator.engine.read.injections import read_records, rebuild

        expected = rebuild(wiki, read_records(wiki, OPERATOR, agent="dudu")[-1]).text
    finally:
        wiki.close()
    policy.show_injection(diff=False)
    qtbot.waitUntil(lambda: policy.sent_text.toPlainText() == expected, timeout=15_000)
    policy.show_injection(diff=True)
    qtbot.waitUntil(lambda: "lists every team" in policy.sent_text.toPlainText(), timeout=15_000)
    assert "+- The home page lists every team" in policy.sent_text.toPlainText()
    window.resize(1500, 950)
    qtbot.wait(100)
    window.grab().save(str(SHOTS / "injection_timeline.png"))
