"""pytest-qt tests of the policy panel and the agent-context preview."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from curator.views.policy.policy_view import PolicyView
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings

SCOPE = """
[namespaces."wiki"]
mode = "agent_writable"

[namespaces."board"]
mode = "operator_only"
visible_to_departments = ["finance"]

[namespaces."policies"]
mode = "read_only"
synced_from = "policy-sync"
"""

PAGES = {
    ".scope.toml": SCOPE,
    "wiki/mission.md": "---\ntitle: Mission\nlayer: identity\ntrust: 0.9\n---\n# Mission\n\nWe pay merchants.\n",
    "wiki/values.md": "---\ntitle: Values\nlayer: identity\ntrust: 0.8\n---\nBe kind. " + "x" * 300 + "\n",
    "policies/refunds.md": "---\ntitle: Refunds\nlayer: core\ntrust: 0.9\n---\nRefund within 30 days.\n",
    "board/minutes.md": "---\ntitle: Minutes\nlayer: core\n---\nSecret board minutes.\n",
    "departments/eng/deploy.md": "---\ntitle: Deploy\nlayer: core\n---\nHow we deploy.\n",
    "wiki/private.md": "---\ntitle: Private\nlayer: core\ndo_not_inject: true\n---\nnot for prompts\n",
}


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", PAGES)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    win.add_view("policy", PolicyView(win), "Policy")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    yield win
    win.close()


def view_of(win: MainWindow) -> PolicyView:
    view = win.view_index["policy"]
    assert isinstance(view, PolicyView)
    return view


def cli_context(root: Path, *args: str) -> bytes:
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "context", *args],
                         capture_output=True, check=True)
    return out.stdout


def run_preview(qtbot, view: PolicyView, agent: str, department: str, budget: int = 8000,  # type: ignore[no-untyped-def]
                query: str = "") -> None:
    # the view's own first load (and the preview it starts) is over first: its content_ready
    # must not be taken for this preview's (the window is usable before the views have loaded)
    qtbot.waitUntil(view.is_content_ready, timeout=10_000)
    view.agent.setCurrentText(agent)
    view.department.setCurrentText(department)
    view.budget.setValue(budget)
    view.query.setText(query)
    with qtbot.waitSignal(view.content_ready, timeout=10_000):
        view.run_preview()


def test_policy_table_shows_each_namespace_rule(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = view_of(window)
    window.show_view("policy")
    qtbot.waitUntil(lambda: view.table.rowCount() >= 4, timeout=5000)
    rows = {view.table.item(r, 0).text(): [view.table.item(r, c).text() for c in range(6)]
            for r in range(view.table.rowCount())}
    assert rows["board"][1] == "operator_only" and rows["board"][4] == "finance"
    assert rows["policies"][1] == "read_only" and rows["policies"][3] == "capability:policy-sync"
    assert rows["departments/eng"][4] == "its own department only"
    assert not view.banner.isVisible()


@pytest.mark.parametrize(("agent", "department", "budget", "query"), [
    ("dudu", "", 8000, ""), ("fin-bot", "finance", 8000, "refund"), ("dudu", "eng", 400, ""),
])
def test_preview_matches_curator_context_byte_for_byte(qtbot, window: MainWindow, agent: str,  # type: ignore[no-untyped-def]
                                                       department: str, budget: int, query: str) -> None:
    view = view_of(window)
    run_preview(qtbot, view, agent, department, budget, query)
    args = ["--agent", agent, "--budget", str(budget)]
    if department:
        args += ["--department", department]
    if query:
        args += ["--query", query]
    root = window.workspace.handles[0].root
    expected = json.loads(cli_context(root, *args, "--json"))
    assert view.result is not None
    assert view.result.text.encode("utf-8") == expected["text"].encode("utf-8")
    assert view.text.toPlainText() == expected["text"]
    assert [p.path for p in view.result.included] == [p["path"] for p in expected["included"]]
    plain = cli_context(root, *args)  # what an agent's prompt gets, as printed
    assert plain.rstrip(b"\n") == view.result.text.encode("utf-8").rstrip(b"\n")
    assert view.result.bytes <= budget
    assert view.budget_bar.value() == min(view.result.bytes, budget)


def test_hidden_pages_are_marked_in_the_browser_while_previewing(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = view_of(window)
    window.show_view("policy")
    run_preview(qtbot, view, "dudu", "")
    hidden = {path for _i, path in window.model.hidden}
    assert hidden == {"board/minutes.md", "departments/eng/deploy.md"}
    run_preview(qtbot, view, "fin-bot", "finance")
    assert {path for _i, path in window.model.hidden} == {"departments/eng/deploy.md"}
    view.mark_hidden.setChecked(False)
    assert window.model.hidden == set()
    view.mark_hidden.setChecked(True)
    window.show_view("page")
    assert window.model.hidden == set()  # leaving the panel turns the marks off


def test_a_malformed_policy_is_shown_prominently(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = view_of(window)
    window.show_view("policy")
    root = window.workspace.handles[0].root
    (root / ".scope.toml").write_text("[namespaces.wiki\nmode = 'x'\n", encoding="utf-8")
    view.reload()
    qtbot.waitUntil(lambda: view.banner.isVisible(), timeout=5000)
    assert "does not parse" in view.banner.text() and "NO policy" in view.banner.text()


def test_no_marks_while_the_panel_is_not_shown(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = view_of(window)
    window.show_view("page")
    run_preview(qtbot, view, "dudu", "")
    assert window.model.hidden == set()
    window.show_view("policy")
    assert {path for _i, path in window.model.hidden} == {"board/minutes.md", "departments/eng/deploy.md"}
