"""pytest-qt tests of the Facts view (similar, conflicts, stale) and Health's three fact figures, in
the station as ``curator gui`` builds it, on the real engine (the local embedder)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QPushButton

from curator.engine.corpus.state import state_dir_for
from curator.engine.facts.decisions import DECISIONS_FILE
from curator.models.facts import COL_CONFLICT_JUDGE
from curator.views.review.facts import FactsView, RetireDialog
from curator.views.review.health import HealthView
from curator.views.shell.main_window import MainWindow
from curator.views.shell.registry import install_views
from curator.views.workspace import Workspace
from tests.engine.facts.fake_chat import configure, serving
from tests.gui_helpers import make_wiki, temp_settings

PAGES = {
    "wiki/team.md": "# Team\n\n- The team lunch is paid for by the company on Fridays.\n"
                    "- Our main supplier of steel is based in Rotterdam.\n",
    "wiki/office.md": "# Office\n\nOn Fridays the company pays for the team's lunch.\n\n"
                      "The printer on the second floor is out of toner.\n",
    "wiki/refunds.md": "# Refunds\n\n- Refunds are accepted within 30 days of purchase.\n",
    "wiki/policy.md": "# Policy\n\nRefunds are accepted within 14 days of purchase.\n",
    "wiki/today.md": "---\ntitle: Today\nlayer: context\n---\n# Today\n\n"
                     "- The billing queue is paused for maintenance (added 2020-01-02)\n",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def station(qtbot, root: Path, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    install_views(win)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    return win


def open_facts(qtbot, win: MainWindow, queue: str) -> FactsView:  # type: ignore[no-untyped-def]
    view = win.view_index["facts"]
    assert isinstance(view, FactsView)
    view.set_queue(queue)
    win.show_view("facts")
    qtbot.waitUntil(view.is_content_ready, timeout=60_000)
    return view


def press(qtbot, button: QPushButton) -> None:  # type: ignore[no-untyped-def]
    """A real click: the pointer moves onto the button, hovers, presses and releases."""
    centre = button.rect().center()
    QTest.mouseMove(button, centre)
    qtbot.wait(20)
    QTest.mouseMove(button, centre + QPoint(1, 0))
    QTest.mousePress(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)


def select_lunch(view: FactsView) -> None:
    """Make the group of the two lunch facts the current one."""
    row = next(n for n, g in enumerate(view.group_model.records) if any("lunch" in f.text for f in g.facts))
    view.groups.setCurrentIndex(view.group_model.index(row, 0))


def lunch_listed(view: FactsView) -> bool:
    return any("lunch" in f.text for g in view.group_model.records for f in g.facts)


def reloaded(qtbot, view: FactsView, after) -> None:  # type: ignore[no-untyped-def]
    """Wait for the reload a decision starts, then for its content."""
    qtbot.waitUntil(lambda: view.banner.isVisible(), timeout=30_000)
    qtbot.waitUntil(lambda: not view._loading and not view._stale and after(), timeout=60_000)


def test_each_queue_lists_its_items(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "similar")
    assert view.tabs.currentIndex() == 0
    groups = view.group_model.records
    # the two refund rules say nearly the same words: a similar group as well as a conflict
    assert sorted(sorted(f.path for f in g.facts) for g in groups) == [
        ["wiki/office.md", "wiki/team.md"], ["wiki/policy.md", "wiki/refunds.md"]]
    select_lunch(view)
    assert {f.text for f in view.fact_model.records} == {
        "The team lunch is paid for by the company on Fridays.", "On Fridays the company pays for the team's lunch."}
    assert [(c.reason, {c.a.path, c.b.path}) for c in view.conflict_model.records] == [
        ("14 days vs 30 days", {"wiki/refunds.md", "wiki/policy.md"})]
    # the reason is what the table shows first
    assert view.conflict_model.index(0, 0).data() == "14 days vs 30 days"
    assert [(s.path, s.text) for s in view.stale_model.records] == [
        ("wiki/today.md", "The billing queue is paused for maintenance")]
    assert view.tabs.tabText(1) == "Conflicts (1)"
    win.close()


def test_keep_this_wording_is_one_commit_and_the_group_leaves(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "similar")
    select_lunch(view)
    row = next(n for n, f in enumerate(view.fact_model.records) if f.path == "wiki/team.md")
    view.facts.setCurrentIndex(view.fact_model.index(row, 0))
    before = commits(root)
    press(qtbot, view.keep_wording_button)
    reloaded(qtbot, view, lambda: not lunch_listed(view))
    assert commits(root) == before + 1, view.banner.text()
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["wiki/office.md"]
    office = (root / "wiki/office.md").read_text()
    assert "lunch" not in office and "The printer on the second floor is out of toner." in office
    assert "The team lunch is paid for by the company on Fridays." in (root / "wiki/team.md").read_text()
    win.close()


def test_keep_all_is_sticky_across_reopening(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "similar")
    select_lunch(view)
    press(qtbot, view.keep_all_button)
    reloaded(qtbot, view, lambda: not lunch_listed(view))
    assert "similar_kept" in json.loads((root / DECISIONS_FILE).read_text())
    assert (root / "wiki/office.md").read_text() == PAGES["wiki/office.md"]
    win.close()
    again = station(qtbot, root, tmp_path / "again")
    view = open_facts(qtbot, again, "similar")
    assert not lunch_listed(view) and len(view.group_model.records) == 1  # the other group still listed
    again.close()


def test_keep_1_removes_the_other_fact(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "conflicts")
    conflict = view.conflict_model.records[0]
    gone = conflict.b
    press(qtbot, view.keep1_button)
    reloaded(qtbot, view, lambda: not view.conflict_model.records)
    assert gone.text not in (root / gone.path).read_text()
    assert conflict.a.text in (root / conflict.a.path).read_text()
    win.close()


def test_verify_leaves_the_stale_queue_and_retire_asks_why(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "stale")
    assert view.tabs.currentIndex() == 2
    asked: list[RetireDialog] = []
    view.exec_dialog = lambda dialog: asked.append(dialog) or False  # type: ignore[assignment,func-returns-value]
    press(qtbot, view.retire_button)
    assert len(asked) == 1 and not asked[0].ok_button.isEnabled()  # no reason, no retiring
    assert view.stale_model.records
    press(qtbot, view.verify_button)
    reloaded(qtbot, view, lambda: not view.stale_model.records)
    assert "(verified " in (root / "wiki/today.md").read_text()
    win.close()


def test_health_counts_the_fact_queues_and_opens_them(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    health = win.view_index["health"]
    assert isinstance(health, HealthView)
    qtbot.waitUntil(lambda: health.fact_buttons["facts_stale"].figure.value is not None, timeout=60_000)
    assert {k: b.figure.value for k, b in health.fact_buttons.items()} == {
        "facts_similar": 2, "facts_conflicts": 1, "facts_stale": 1}
    assert "counting" not in health.fact_buttons["facts_conflicts"].text()
    press(qtbot, health.fact_buttons["facts_conflicts"])
    view = win.view_index["facts"]
    assert isinstance(view, FactsView) and win.views.currentWidget() is view
    assert view.queue == "conflicts"
    qtbot.waitUntil(view.is_content_ready, timeout=60_000)
    assert len(view.conflict_model.records) == 1
    win.close()


def test_health_shows_counting_until_the_fact_queues_are_counted(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    install_views(win)
    qtbot.addWidget(win)
    health = win.view_index["health"]
    assert isinstance(health, HealthView)
    assert all(b.figure.value is None and "counting…" in b.text() for b in health.fact_buttons.values())
    win.close()


def test_control_characters_are_shown_escaped(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pages = dict(PAGES)
    pages["wiki/today.md"] = pages["wiki/today.md"].replace("paused for", "paused\u202e for")
    root = make_wiki(tmp_path / "w", pages)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "stale")
    assert view.stale_model.index(0, 2).data() == "The billing queue is paused<U+202E> for maintenance"
    detail = view.stale_detail.text()
    assert "\u202e" not in detail and "paused<U+202E> for" in detail
    assert len(detail.splitlines()) == 2 and detail.splitlines()[1].startswith("Due ")
    win.close()


JUDGED = {**PAGES,
          "wiki/desktop.md": "# Desktop\n\n- Telemetry is enabled in the desktop build.\n",
          "wiki/privacy.md": "# Privacy\n\n- Telemetry is disabled in the desktop build.\n"}


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}


def test_ask_the_judge_shows_its_verdicts_and_applies_none(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", JUDGED)
    before, pages = commits(root), tree(root)
    with serving() as chat:
        configure(state_dir_for(root), chat)
        win = station(qtbot, root, tmp_path)
        view = open_facts(qtbot, win, "conflicts")
        listed = [c.id for c in view.conflict_model.records]
        assert len(listed) == 2 and view.judge_button.isEnabled()
        assert "tiny-model" in view.judge_button.toolTip()
        assert all(view.conflict_model.index(r, COL_CONFLICT_JUDGE).data() == "" for r in range(2))
        telemetry = next(n for n, c in enumerate(view.conflict_model.records) if c.reason == "enabled vs disabled")
        view.conflicts.setCurrentIndex(view.conflict_model.index(telemetry, 0))
        press(qtbot, view.judge_button)
        qtbot.waitUntil(lambda: view.conflict_model.index(telemetry, COL_CONFLICT_JUDGE).data() != "", timeout=30_000)
        assert len(chat.requests) == 2
        # the dismissed conflict is still listed, still selected, its verdict in the column and the detail
        assert [c.id for c in view.conflict_model.records] == listed
        assert view.conflicts.currentIndex().row() == telemetry
        cell = view.conflict_model.index(telemetry, COL_CONFLICT_JUDGE)
        assert cell.data() == "dismiss"
        assert cell.data(Qt.ItemDataRole.ToolTipRole) == "tiny-model: dismiss — different builds"
        assert "Judge (tiny-model, not applied): dismiss — different builds" in view.conflict_detail.text()
        assert view.conflict_model.index(1 - telemetry, COL_CONFLICT_JUDGE).data() == "confirm"
        assert "1 confirm, 1 dismiss" in view.banner.text() and "Nothing was changed" in view.banner.text()
        # a reload (another decision elsewhere) keeps the verdicts shown
        view.schedule_reload(now=True)
        qtbot.waitUntil(lambda: not view._loading and not view._stale, timeout=60_000)
        assert view.conflict_model.index(telemetry, COL_CONFLICT_JUDGE).data() == "dismiss"
        # an endpoint that answers an error is one red line; the button is usable again
        chat.status = 500
        press(qtbot, view.judge_button)
        qtbot.waitUntil(lambda: "answered HTTP 500" in view.banner.text(), timeout=30_000)
        assert view.banner.text().count("\n") == 0 and "#922b21" in view.banner.styleSheet()
        qtbot.waitUntil(view.judge_button.isEnabled, timeout=5_000)
        win.close()
    assert commits(root) == before and tree(root) == pages
    assert git(root, "status", "--porcelain") == ""


def test_without_a_judge_the_button_says_how_to_configure_one(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", JUDGED)
    win = station(qtbot, root, tmp_path)
    view = open_facts(qtbot, win, "conflicts")
    assert view.conflict_model.records and not view.judge_button.isEnabled()
    assert str(state_dir_for(root) / "facts-judge.json") in view.judge_button.toolTip()
    (state_dir_for(root) / "facts-judge.json").write_text("{oops", encoding="utf-8")
    view.set_queue("stale")
    view.set_queue("conflicts")  # (the file is read again when the tab is shown)
    assert not view.judge_button.isEnabled() and "not valid JSON" in view.judge_button.toolTip()
    win.close()


def test_a_first_build_of_the_fact_index_shows_its_progress(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            monkeypatch) -> None:
    """Building the fact index is the long part on a big wiki: the view says how far it got
    (pages read of how many), from the thread that builds it, then shows the queues."""
    import curator.engine.facts.index as index_module

    monkeypatch.setattr(index_module, "PAGE_BATCH", 2)  # several steps on a small wiki
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    view = win.view_index["facts"]
    assert isinstance(view, FactsView)
    shown: list[str] = []
    view.count.setText = lambda text: shown.append(text) or QLabel.setText(view.count, text)  # type: ignore[method-assign]
    open_facts(qtbot, win, "similar")
    steps = [t for t in shown if " pages " in t]
    assert steps and steps[0].startswith("Reading the facts: 0 of 5 pages"), shown
    assert any(t.startswith("Reading the facts: 4 of 5 pages") for t in steps)
    assert shown[-1].startswith("2 groups of similar facts")
    win.close()
