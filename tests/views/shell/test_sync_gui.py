"""The station's sync status widget (issue 11): ahead/behind, Sync now, auto-sync, conflicts."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.sync.remote import sync
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, run_action
from curator.engine.write.append import append
from curator.views.shell.main_window import MainWindow
from curator.views.shell.sync_status import SyncStatusWidget, install
from curator.views.workspace import Workspace
from tests.gui_helpers import GIT_ID, make_wiki, temp_settings
from tests.sync_helpers import operator_allow_list


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def station(qtbot, tmp_path: Path) -> Iterator[tuple[MainWindow, Path, Path]]:  # type: ignore[no-untyped-def]
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    root = make_wiki(tmp_path / "wiki")
    (root / ".curator-operators").write_text(operator_allow_list(), encoding="utf-8")  # (the tests' key)
    git(root, "add", ".curator-operators")
    git(root, "commit", "-qm", "operators")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    git(root, "fetch", "-q", "origin")
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    yield win, root, remote
    win.close()


def wait_text(qtbot, widget: SyncStatusWidget, needle: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: needle in widget.label.text(), timeout=10_000)


def test_shows_ahead_behind_and_up_to_date_after_sync_now(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    win, root, _remote = station
    widget = install(win, auto=False)
    assert widget.parent() is not None and win.sync_status is widget  # type: ignore[attr-defined]
    wait_text(qtbot, widget, "up to date")
    assert widget.sync_action.isEnabled()

    # a local commit (an action in the station's wiki): one ahead
    win.run_action(0, lambda wiki: append(wiki, "home", "The station syncs through git"), "Appending")
    qtbot.waitUntil(lambda: "↑1 ↓0" in widget.label.text(), timeout=10_000)

    # Sync now: through the writer queue, then up to date (and pushed)
    widget.button.defaultAction().trigger()
    qtbot.waitUntil(lambda: widget.last_result is not None, timeout=15_000)
    assert widget.last_result is not None and widget.last_result.status == "pushed"
    wait_text(qtbot, widget, "up to date")
    assert "synced" in widget.label.text() and "never" not in widget.label.text()
    assert git(root, "rev-parse", "HEAD") == git(root, "rev-parse", "origin/main")


def test_auto_sync_pulls_what_another_clone_pushed(qtbot, station, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, root, remote = station
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    wiki = Wiki(other)
    assert append(wiki, "payments", "Payments settle at 16:00 UTC").status == "appended"
    assert sync(wiki).status == "pushed"
    wiki.close()
    widget = install(win, interval=0.2, tick_ms=50)  # the first auto sync is due at once
    qtbot.waitUntil(lambda: widget.last_result is not None, timeout=15_000)
    assert widget.last_result is not None and widget.last_result.status == "pulled"
    assert "settle at 16:00" in (root / "wiki/payments.md").read_text()
    wait_text(qtbot, widget, "up to date")
    # the pulled page reached the station's page cache
    assert "settle at 16:00" in win.workspace.wiki(0).read_text("wiki/payments.md")


def test_offline_is_shown_and_backs_off(qtbot, station, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, root, _remote = station
    git(root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    widget = install(win, interval=0.2, tick_ms=50)
    wait_text(qtbot, widget, "offline")
    auto = widget.autos[0]
    assert auto.failures >= 1 and auto.next_due > auto.interval  # backing off (15 s first)


def test_conflicts_are_counted_and_resolved_from_the_dialog(qtbot, station, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, root, remote = station
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))

    def rewrite(new: str):  # type: ignore[no-untyped-def]
        def apply(ctx: ActionContext) -> None:
            text, _ = ctx.read_text("wiki/refunds.md")
            ctx.write_text("wiki/refunds.md", text.replace("Refunds within 30 days.", new))
        return apply

    wiki = Wiki(other)
    assert run_action(wiki, OPERATOR, "edit", "refunds", rewrite("Refunds within 14 days.")).commit
    assert sync(wiki).status == "pushed"
    wiki.close()
    widget = install(win, auto=False)
    wait_text(qtbot, widget, "up to date")
    win.run_action(0, lambda w: run_action(w, OPERATOR, "edit", "refunds", rewrite("Refunds within 60 days.")),
                   "Editing")
    qtbot.waitUntil(lambda: "↑1" in widget.label.text(), timeout=10_000)
    widget.sync_now()
    wait_text(qtbot, widget, "1 conflict")
    widget._fill_menu()
    assert any("Resolve wiki/refunds.md" in a.text() for a in widget.menu.actions())
    dialog = widget.open_conflict("wiki/refunds.md")
    qtbot.waitUntil(lambda: "14 days" in dialog.theirs.toPlainText(), timeout=10_000)
    assert "60 days" in dialog.ours.toPlainText() and "<<<<<<<" in dialog.merged.toPlainText()
    dialog.use_merged.click()  # markers still there: refused
    assert dialog.isVisible() and "remove the conflict markers first" in dialog.windowTitle()
    dialog.take_theirs.click()
    wait_text(qtbot, widget, "↑2")  # the edit and the resolving merge commit wait to be pushed
    assert "14 days" in (root / "wiki/refunds.md").read_text()
    assert git(root, "log", "-1", "--format=%s").strip() == "resolve: wiki/refunds.md"


@pytest.mark.parametrize("keep", [True, False])
def test_held_incoming_commits_are_shown_and_decided_in_the_station(qtbot, station, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     keep: bool) -> None:
    """Another clone relaxes the policy with plain git: the station's sync holds it, says so,
    and the sync menu accepts or drops it after asking."""
    win, root, remote = station
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / ".scope.toml").write_text('[namespaces.wiki]\nmode = "agent_writable"\n# relaxed\n')
    git(other, "add", ".scope.toml")
    git(other, "commit", "-qm", "relax the policy")
    git(other, "push", "-q", "origin", "main")
    before = (root / ".scope.toml").read_text() if (root / ".scope.toml").exists() else None
    widget = install(win, interval=3600, tick_ms=50)
    widget.sync_now()
    qtbot.waitUntil(lambda: widget.last_result is not None, timeout=15_000)
    assert widget.last_result is not None and widget.last_result.status == "held"
    wait_text(qtbot, widget, "held for review")
    held = widget.held()
    assert len(held) == 1 and "changes .scope.toml" in held[0]["reasons"][0]
    widget._fill_menu()
    labels = [a.text() for a in widget.menu.actions()]
    assert any(t.startswith("Accept 1 held incoming commit") for t in labels), labels
    asked: list[str] = []
    widget.confirm = lambda title, text, details: asked.append(details) or True  # type: ignore[method-assign]
    widget.last_result = None
    widget.decide_held(keep=keep)
    qtbot.waitUntil(lambda: widget.last_result is not None, timeout=15_000)
    assert asked and "changes .scope.toml" in asked[0]
    now = (root / ".scope.toml").read_text() if (root / ".scope.toml").exists() else None
    assert ("# relaxed" in (now or "")) == keep and (keep or now == before)
    assert widget.held() == []
