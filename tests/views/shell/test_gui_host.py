"""Views depend on a narrow host (curator.views.host.ViewHost), not on the main window, and the
history and policy views refresh from what changed (an action's result, the pages that came or
went) instead of reloading on every change."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QWidget

from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, run_action
from curator.engine.write.append import append
from curator.views.history.history_view import HistoryView
from curator.views.policy.policy_view import PolicyView
from curator.views.review.auto_filed import AutoView
from curator.views.workspace import Workspace
from tests.gui_helpers import GIT_ID, make_wiki


class FakeHost(QObject):
    """Only what ViewHost names: a view built on it cannot reach anything else of a window."""

    ready = Signal()

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.current: tuple[int, str] | None = None
        self.results: list[Any] = []
        self.titles: dict[int, str] = {}
        self.hidden: set[tuple[int, str]] = set()

    def run_action(self, index: int, func: Callable[[Wiki], Any], what: str,
                   done: Callable[[Any], None] | None = None) -> None:
        def finished(result: Any) -> None:
            self.report_result(result)
            if done is not None:
                done(result)

        self.workspace.run(index, func, finished)

    def report_result(self, result: Any) -> None:
        self.results.append(result)

    def status(self, text: str) -> None:
        pass

    def show_error(self, message: str) -> None:
        raise AssertionError(message)

    def open_page(self, key: tuple[int, str], push: bool = True, anchor: str = "") -> None:
        self.current = key

    def show_view(self, name: str) -> bool:
        return False

    def view(self, name: str) -> QWidget | None:
        return None

    def open_page_at_line(self, key: tuple[int, str], line: int) -> None:
        self.current = key

    def undo_last(self) -> None:
        pass

    def redo_last(self) -> None:
        pass

    def set_view_title(self, view: QWidget, title: str, tip: str) -> None:
        self.titles[id(view)] = title

    def mark_hidden(self, keys: set[tuple[int, str]]) -> None:
        self.hidden = set(keys)


def counting(view: Any) -> list[int]:
    """Count the view's reloads (the signals call ``self.reload`` as they fire)."""
    calls: list[int] = []
    original = view.reload

    def reload(*args: Any, **kwargs: Any) -> None:
        calls.append(1)
        original(*args, **kwargs)

    view.reload = reload
    return calls


def settle(qtbot, ws: Workspace) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        for handle in ws.handles:
            handle.writer.wait(15_000)
        QThreadPool.globalInstance().waitForDone(15_000)
        qtbot.wait(50)


@pytest.fixture
def station(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    ws = Workspace(root, watch=False)
    host = FakeHost(ws)
    history, policy = HistoryView(host), PolicyView(host)
    for view in (history, policy):
        qtbot.addWidget(view)
    with qtbot.waitSignal(ws.loaded, timeout=15_000):
        ws.load()
    qtbot.waitUntil(lambda: history.model.rowCount() > 0, timeout=15_000)
    settle(qtbot, ws)
    yield root, ws, host, history, policy
    settle(qtbot, ws)
    ws.close()


def test_views_run_on_the_narrow_host_and_report_through_it(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    _root, _ws, host, history, _policy = station
    assert [e.subject for e in history.all_entries] == ["initial"]
    host.run_action(0, lambda wiki: append(wiki, "payments", "Payments settle in two days", [], False,
                                           OPERATOR), "Appending")
    qtbot.waitUntil(lambda: len(history.all_entries) == 2, timeout=15_000)
    assert host.results and host.results[0].status == "appended"
    assert history.all_entries[0].subject == "wiki_append: payments"


def test_history_reloads_for_commits_only(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    root, ws, host, history, _policy = station
    calls = counting(history)
    # an edit nobody committed: the pages change, the history does not
    page = root / "wiki" / "refunds.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nAn uncommitted line.\n", encoding="utf-8")
    ws.wiki(0).refresh(["wiki/refunds.md"])
    settle(qtbot, ws)
    assert calls == []
    # a commit made under the station (an agent's CLI, say): HEAD moved, the history reloads
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-am", "outside"], cwd=root, check=True)
    page.write_text(page.read_text(encoding="utf-8") + "\nAnother line.\n", encoding="utf-8")
    ws.wiki(0).refresh(["wiki/refunds.md"])
    qtbot.waitUntil(lambda: any(e.subject == "outside" for e in history.all_entries), timeout=15_000)
    assert len(calls) == 1
    # an action that commits
    host.run_action(0, lambda wiki: append(wiki, "home", "The home page is new", [], False, OPERATOR),
                    "Appending")
    qtbot.waitUntil(lambda: history.all_entries[0].subject == "wiki_append: home", timeout=15_000)
    assert len(calls) >= 2


def test_policy_reloads_when_the_policy_or_the_set_of_pages_changes(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    _root, ws, host, _history, policy = station
    calls = counting(policy)
    host.run_action(0, lambda wiki: append(wiki, "payments", "Refunds take five days", [], False, OPERATOR),
                    "Appending")  # a page edited: no namespace count or folder changes
    settle(qtbot, ws)
    assert calls == []
    host.run_action(0, lambda wiki: append(wiki, "brand-new-page", "A page that did not exist", [], True,
                                           OPERATOR), "Creating")
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=15_000)

    def write_policy(ctx: ActionContext) -> None:
        ctx.write_text(".scope.toml", '[namespaces."notes"]\nmode = "operator_only"\n')

    host.run_action(0, lambda wiki: run_action(wiki, OPERATOR, "scope", ".scope.toml", write_policy), "Policy")
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=15_000)
    qtbot.waitUntil(lambda: "operator_only" in {policy.table.model().index(r, 1).data()
                                                for r in range(policy.table.model().rowCount())},
                    timeout=15_000)


def test_the_auto_filed_view_ignores_edits_outside_its_pages() -> None:
    relevant = AutoView.relevant
    assert relevant(None, "auto/sop/deploy.md", False)  # type: ignore[arg-type]
    assert relevant(None, "_review/spec/draft.md", False)  # type: ignore[arg-type]
    assert not relevant(None, "wiki/payments.md", False)  # type: ignore[arg-type]
    assert relevant(None, "newfolder/page.md", True)  # type: ignore[arg-type]  # a confirm target
