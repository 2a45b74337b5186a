"""pytest-qt tests of the Inbox view with operators as people (issue 42): the station's decisions
are committed as the wiki's git identity, ``review = 2`` shows the first approval and waits for a
second person, and an item another clone decided says who decided it and when."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.inbox import approve, get_item, item_view
from curator.engine.sync.remote import sync
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.models.inbox import item_html
from curator.views.review.inbox import InboxView
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import PAGES, make_wiki, temp_settings
from tests.sync_helpers import PAGE, make_net

POLICY = '[namespaces.wiki]\nreview = 2\n'
ANN = "Ann Operator <ann@example.org>"
BOB = "Bob Operator <bob@example.org>"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def be(root: Path, name: str, email: str) -> None:
    git(root, "config", "--local", "user.name", name)
    git(root, "config", "--local", "user.email", email)


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def click(qtbot, button: QPushButton) -> None:  # type: ignore[no-untyped-def]
    """A real mouse click: move onto the button, hover, press, release."""
    centre = button.rect().center()
    QTest.mouseMove(button, centre)
    qtbot.wait(50)
    QTest.mousePress(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)


@pytest.fixture
def panel(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", {**PAGES, ".scope.toml": POLICY})
    w = Wiki(root)
    res = append(w, "payments", "The payments team moved to Oslo", actor=Actor("agent", "dudu"))
    assert res.status == "pending", res.message
    w.close()
    be(root, "Ann Operator", "ann@example.org")
    win = MainWindow(Workspace(root, watch=True), temp_settings(root.parent))
    view = InboxView(win)
    win.add_view("inbox", view, "Inbox")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.show_view("inbox")
    qtbot.waitUntil(lambda: len(view.model.rows) == 1 and view.is_content_ready(), timeout=15_000)
    yield root, res.data["id"], win, view
    win.close()


def test_two_people_approve_in_the_station(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    root, iid, _win, view = panel
    view.select_ids([iid])
    n = commits(root)
    click(qtbot, view.approve_button)
    qtbot.waitUntil(lambda: commits(root) == n + 1, timeout=15_000)
    assert git(root, "log", "-1", "--format=%an <%ae>|%s") == f"{ANN}|inbox_approval: {iid}"
    assert git(root, "log", "-1", "--format=%(trailers:key=Curator-Actor,valueonly)") == "operator"
    assert "The payments team moved to Oslo" not in (root / "wiki/payments.md").read_text()
    # the item stays, showing the first approval
    view.select_ids([iid])
    qtbot.waitUntil(lambda: f"1 of 2 approvals: {ANN}" in view.detail.toPlainText(), timeout=10_000)
    assert "waits" in view.banner.text() or "waits" in view.detail.toPlainText()
    assert [r.id for r in view.model.rows] == [iid]
    # the same person again: nothing committed
    click(qtbot, view.approve_button)
    qtbot.waitUntil(lambda: "approved it already" in view.banner.text(), timeout=15_000)
    assert commits(root) == n + 1
    # a second person at this station: the fact is committed, reviewed by both
    be(root, "Bob Operator", "bob@example.org")
    click(qtbot, view.approve_button)
    qtbot.waitUntil(lambda: commits(root) == n + 2, timeout=15_000)
    assert git(root, "log", "-1", "--format=%an") == "agent:dudu"
    assert git(root, "log", "-1", "--format=%(trailers:key=Reviewed-by,valueonly,separator=|)") == f"{ANN}|{BOB}"
    assert "- The payments team moved to Oslo (added " in (root / "wiki/payments.md").read_text()
    qtbot.waitUntil(lambda: view.model.rows == [], timeout=10_000)


def test_the_detail_says_who_decided_on_another_clone(tmp_path: Path) -> None:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": "[review]\nlayers = [\"core\"]\n"})
    try:
        be(net.a.root, "Ann Operator", "ann@example.org")
        res = append(net.a, "ann-smith", "Ann moved to Oslo", actor=Actor("agent", "dudu"))
        assert res.status == "pending", res.message
        assert sync(net.a, OPERATOR).status == "pushed"
        assert sync(net.b, OPERATOR).status == "pulled"
        assert approve(net.a, OPERATOR, res.data["id"]).status == "appended"
        assert sync(net.a, OPERATOR).status == "pushed"
        git(net.b.root, "fetch", "-q", "origin")
        text = item_html(item_view(net.b, get_item(net.b, res.data["id"]), refresh=False))
        assert f"Already approved by {ANN.replace('<', '&lt;').replace('>', '&gt;')} at " in text
        assert "on origin/main: sync to bring the decision here." in text
    finally:
        net.close()
