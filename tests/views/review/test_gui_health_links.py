"""pytest-qt tests of Health (the landing view), the Links repair view and the Lint queue, in the
station as ``curator gui`` builds it (every view installed), on the real engine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from PySide6.QtCore import Qt

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup.index import DedupIndex
from curator.engine.dedup.worker import DedupWorker
from curator.engine.review.health import Figure
from curator.engine.wiki import Wiki
from curator.views.review.health import HealthView
from curator.views.review.links import LinksView
from curator.views.review.lint import LintView
from curator.views.shell.main_window import MainWindow
from curator.views.shell.registry import install_views
from curator.views.workspace import Workspace
from tests.gui_helpers import GIT_ID, make_wiki, temp_settings

PAGES = {
    "wiki/home.md": "---\ntitle: Home\nlayer: identity\ntrust: 0.9\n---\n# Home\n\n"
                    "Start with [[Nocturne Bg3 V4]] and [[Harbour Plan]].\nThen [[Payments]].\n",
    "wiki/nocturne-bg3-v4-campaign.md": "---\ntitle: Nocturne Bg3 V4 Campaign\n---\n# Campaign\n\n"
                                        "Back [[home]].\n",
    "wiki/harbour-plan-2026.md": "---\ntitle: Harbour Plan 2026\n---\n# Harbour Plan 2026\n\nBack [[home]].\n",
    "wiki/payments.md": "---\ntitle: Payments\n---\n# Payments\n\nSee [[Nocturne Bg3 V4]] and [[home]].\n",
    "notes/lonely.md": "# Lonely\n\nline two\nnobody links here, and [[Nowhere Yet]] is not written.\n",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def shown(qtbot, root: Path, tmp_path: Path) -> tuple[MainWindow, HealthView]:  # type: ignore[no-untyped-def]
    """The station on ``root``, shown but not started (a test connects to its signals first), and
    its Health view."""
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    install_views(win)
    qtbot.addWidget(win)
    win.show()
    health = win.view_index["health"]
    assert isinstance(health, HealthView)
    return win, health


def station(qtbot, root: Path, tmp_path: Path) -> MainWindow:  # type: ignore[no-untyped-def]
    win, _health = shown(qtbot, root, tmp_path)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    return win


def _wait_writes(qtbot, win: MainWindow) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: all(h.writer.pool.activeThreadCount() == 0 for h in win.workspace.handles),
                    timeout=15_000)


def test_health_is_the_first_view_and_its_figures_count(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    health = win.view_index["health"]
    assert isinstance(health, HealthView)
    assert win.views.indexOf(health) == 0 and win.views.currentWidget() is health
    qtbot.waitUntil(health.is_content_ready, timeout=15_000)  # duplicates counted too
    fig = {k: b.figure.value for k, b in health.buttons.items()}
    assert fig["pages"] == len(PAGES)
    assert fig["unresolved_targets"] == 3  # Nocturne Bg3 V4, Harbour Plan, Nowhere Yet
    assert fig["unresolved_links"] == 4
    assert fig["orphans"] == 3 and fig["duplicates"] is not None  # nothing links the two targets yet
    assert "3" in health.buttons["unresolved_targets"].text()
    # the line above the figures names what waits, the families counted last included
    summary = health.summary.text()
    assert "3 unresolved link targets" in summary
    assert fig["duplicates"] == 0 and "duplicate" not in summary
    # duplicates are counted after the first figures (a separate step): the line follows them
    health._duplicates_counted(health.wiki_index, health._generation, Figure("duplicates", "Duplicate families", 2, "dedup",
                                                          "curator dedup --groups", "warning"))
    assert "2 duplicate families" in health.summary.text() and "3 unresolved link targets" in health.summary.text()
    assert win.current == (0, "wiki/home.md")  # the start page waits in the Page tab behind it
    win.close()


def test_a_figure_button_opens_its_queue(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    health = win.view_index["health"]
    qtbot.waitUntil(lambda: "lint:orphan" in health.buttons, timeout=15_000)
    qtbot.mouseClick(health.buttons["unresolved_targets"], Qt.MouseButton.LeftButton)
    links = win.view_index["links"]
    assert win.views.currentWidget() is links
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    assert {u.key for u in links.model.records} == {"nocturne-bg3-v4", "harbour-plan", "nowhere-yet"}
    win.show_view("health")
    qtbot.mouseClick(health.buttons["lint:orphan"], Qt.MouseButton.LeftButton)
    lint = win.view_index["lint"]
    assert isinstance(lint, LintView) and win.views.currentWidget() is lint
    qtbot.waitUntil(lint.is_content_ready, timeout=15_000)
    assert lint.kind == "orphan"
    assert [i.path for i in lint.model.records] == [
        "notes/lonely.md", "wiki/harbour-plan-2026.md", "wiki/nocturne-bg3-v4-campaign.md"]
    win.close()


def test_lint_queue_opens_the_page_at_the_line(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    lint = win.view_index["lint"]
    win.show_view("lint")
    qtbot.waitUntil(lint.is_content_ready, timeout=15_000)
    lint.set_kind("unresolved-link")
    issue = next(i for i in lint.model.records if i.path == "notes/lonely.md")
    assert issue.line == 4
    row = lint.model.records.index(issue)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        lint.table.doubleClicked.emit(lint.model.index(row, 0))
    page_view = win.page_view
    qtbot.waitUntil(page_view.source_in_front, timeout=5_000)
    assert win.views.currentWidget() is page_view and win.current == (0, "notes/lonely.md")
    cursor = page_view.source.textCursor()
    assert cursor.blockNumber() == 3 and "[[Nowhere Yet]]" in cursor.selectedText()
    win.close()


def test_links_view_previews_and_fixes_one_target(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    first = links.model.records[0]
    assert first.key == "nocturne-bg3-v4" and first.count == 2
    assert links.chosen_page() == "wiki/nocturne-bg3-v4-campaign.md"
    links.method.setCurrentIndex(links.method.findData("rewrite"))
    qtbot.waitUntil(lambda: "nocturne-bg3-v4-campaign|Nocturne Bg3 V4" in links.preview.toPlainText(),
                    timeout=10_000)
    before = commits(root)
    links.fix_button.click()
    _wait_writes(qtbot, win)
    qtbot.waitUntil(lambda: "nocturne-bg3-v4" not in {u.key for u in links.model.records}, timeout=15_000)
    assert commits(root) == before + 1
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == [
        "wiki/home.md", "wiki/payments.md"]
    assert "[[nocturne-bg3-v4-campaign|Nocturne Bg3 V4]]" in (root / "wiki/home.md").read_text(encoding="utf-8")
    win.close()


def test_links_bulk_accept_is_one_commit(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    rows = [i for i, u in enumerate(links.model.records) if u.key in ("nocturne-bg3-v4", "harbour-plan")]
    links.select_table_rows(links.table, rows, rows[0])
    links._selection_changed()
    assert links.bulk_button.isEnabled() and "(2)" in links.bulk_button.text()
    qtbot.waitUntil(lambda: "2 target(s)" in links.preview.toPlainText(), timeout=10_000)
    before = commits(root)
    links.bulk_button.click()
    _wait_writes(qtbot, win)
    qtbot.waitUntil(lambda: {u.key for u in links.model.records} == {"nowhere-yet"}, timeout=15_000)
    assert commits(root) == before + 1
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == [
        "wiki/harbour-plan-2026.md", "wiki/nocturne-bg3-v4-campaign.md"]  # aliases: one file per target
    assert git(root, "log", "-1", "--format=%s").startswith("link_fix: 2 targets")
    win.close()


def test_links_bulk_accept_leaves_out_the_guesses(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """[[Validation]]'s top suggestion (validation-failure, a name it only begins) is a guess: the
    table says it needs a look and a mouse click on the bulk button repairs only the sure one."""
    from PySide6.QtTest import QTest

    from curator.models.linkrepair import COL_SUGGESTION

    pages = {**PAGES, "wiki/validation-failure.md": "---\ntitle: ValidationFailure\n---\n# V\n\nBack [[home]].\n",
             "wiki/checks.md": "# Checks\n\nSee [[Validation]] and [[Harbour Plan]] and [[home]].\n"}
    root = make_wiki(tmp_path / "w", pages)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    keys = [u.key for u in links.model.records]
    guess, sure = keys.index("validation"), keys.index("harbour-plan")
    shown = links.model.index(guess, COL_SUGGESTION).data()
    assert shown.startswith("needs a look: wiki/validation-failure.md")
    assert not links.model.index(sure, COL_SUGGESTION).data().startswith("needs a look")
    links.select_table_rows(links.table, [guess, sure], guess)
    links._selection_changed()
    assert links.bulk_button.isEnabled() and links.bulk_button.text() == "Accept sure suggestions (1)"
    qtbot.waitUntil(lambda: "1 target(s) need a look" in links.preview.toPlainText()
                    and "harbour-plan-2026" in links.preview.toPlainText(), timeout=10_000)
    before = commits(root)
    button = links.bulk_button
    centre = button.rect().center()
    QTest.mouseMove(button, centre)
    QTest.mousePress(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    QTest.mouseRelease(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, centre)
    _wait_writes(qtbot, win)
    qtbot.waitUntil(lambda: "harbour-plan" not in {u.key for u in links.model.records}, timeout=15_000)
    assert commits(root) == before + 1
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["wiki/harbour-plan-2026.md"]
    assert "validation" in {u.key for u in links.model.records}
    row = [u.key for u in links.model.records].index("validation")
    links.select_table_rows(links.table, [row], row)
    links._selection_changed()
    assert not links.bulk_button.isEnabled()  # a guess alone: nothing to accept in bulk
    win.close()


def test_links_preview_of_an_older_selection_never_replaces_the_newer(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                    monkeypatch) -> None:
    """Preview reads run on the shared pool and may come back out of order: the pane shows the
    newest selection's plan, not whichever read finished last."""
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    held: list[tuple[object, object]] = []
    wiki = win.workspace.wiki(links.wiki_index)
    monkeypatch.setattr(win.workspace, "read", lambda index, func, callback, on_error=None:
                        held.append((func, callback)))
    rows = [i for i, u in enumerate(links.model.records) if u.key in ("nocturne-bg3-v4", "harbour-plan")]
    links.select_table_rows(links.table, rows[:1], rows[0])
    links._update_preview()  # the older request: one target
    links.select_table_rows(links.table, rows, rows[0])
    links._update_preview()  # the newer one: both targets
    assert len(held) >= 2
    for func, callback in reversed(held):  # the older read comes back last
        callback(func(wiki))  # type: ignore[operator]
    assert "2 target(s)" in links.preview.toPlainText()
    win.close()


def test_links_view_suggests_for_rows_beyond_the_first_on_selection(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                    monkeypatch) -> None:
    """Without a saved queue to answer from (computed now, the first rows' suggestions only), a
    row further down gets its suggestions when it is selected."""
    import curator.engine.review.linkrepair as linkrepair
    import curator.views.review.links as links_view

    monkeypatch.setattr(links_view, "SUGGEST_ROWS", 1)
    monkeypatch.setattr(linkrepair, "saved_queue", lambda *_a, **_k: None)
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    row = next(i for i, u in enumerate(links.model.records) if u.key == "harbour-plan")
    assert row > 0 and links.model.records[row].suggestions == []  # not computed with the queue
    links.select_table_rows(links.table, [row], row)
    links._selection_changed()
    qtbot.waitUntil(lambda: links.chosen_page() == "wiki/harbour-plan-2026.md", timeout=10_000)
    assert links.model.records[row].suggestions[0].path == "wiki/harbour-plan-2026.md"
    win.close()


def test_links_view_rows_from_the_saved_queue_come_with_their_suggestions(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                          monkeypatch) -> None:
    """The operator's saved queue holds every target's suggestions: a row beyond the first ones
    shows its suggestion at once, nothing asked again on selection."""
    import curator.views.review.links as links_view

    monkeypatch.setattr(links_view, "SUGGEST_ROWS", 1)
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    links: LinksView = win.view_index["links"]  # type: ignore[assignment]
    win.show_view("links")
    qtbot.waitUntil(links.is_content_ready, timeout=15_000)
    row = next(i for i, u in enumerate(links.model.records) if u.key == "harbour-plan")
    assert row > 0 and links.model.records[row].suggestions[0].path == "wiki/harbour-plan-2026.md"
    assert "harbour-plan" in links.suggested
    win.close()


def test_a_page_chosen_in_the_browser_shows_over_health(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    assert win.views.currentWidget() is win.view_index["health"]
    row = next(r for r in win.model.rows if r.page.path == "wiki/payments.md")
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.browser.open_requested.emit(row)
    assert win.views.currentWidget() is win.page_view and win.current == (0, "wiki/payments.md")
    win.show_view("graph")
    win.browser.open_requested.emit(next(r for r in win.model.rows if r.page.path == "wiki/home.md"))
    assert win.views.currentWidget() is win.view_index["graph"]  # other views stay in front
    win.close()


def test_duplicates_are_counted_in_the_background_without_a_click(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "w", PAGES)
    win = station(qtbot, root, tmp_path)
    health: HealthView = win.view_index["health"]  # type: ignore[assignment]
    qtbot.waitUntil(lambda: "duplicates" in health.buttons and health.buttons["duplicates"].figure.value is not None,
                    timeout=15_000)
    assert win.views.currentWidget() is health  # counted with nobody opening Duplicates
    assert health.buttons["duplicates"].figure.value == dedup_families.family_count(Wiki(root))
    again = Wiki(root)
    again.refresh()
    assert again.store.derived("dedup") is not None  # the next open answers from the kept result
    win.close()
    # the next open counts from the kept result and builds nothing; the Duplicates view lists the
    # kept result's families, then builds the index in the background (every page's features:
    # later changes are followed page by page)
    win = station(qtbot, root, tmp_path)
    health = win.view_index["health"]  # type: ignore[assignment]
    qtbot.waitUntil(lambda: "duplicates" in health.buttons and health.buttons["duplicates"].figure.value is not None,
                    timeout=15_000)
    qtbot.waitUntil(health.is_content_ready, timeout=15_000)
    session = win.workspace.wiki(0).session
    assert health.buttons["duplicates"].figure.value == dedup_families.family_count(Wiki(root))
    qtbot.wait(300)
    worker = session.peek(DedupWorker)
    assert worker is not None and session.peek(DedupIndex) is None  # (counted in the worker process, not here)
    status = worker.status()
    assert status["pid"] != os.getpid() and not status["features"]  # answered from the kept result
    view = win.view_index["dedup"]
    with qtbot.waitSignal(view.content_ready, timeout=15_000):
        win.show_view("dedup")
    assert view.model.rowCount() == health.buttons["duplicates"].figure.value
    qtbot.waitUntil(lambda: (s := worker.status())["scanned"] and not s["kept"], timeout=15_000)
    assert set(worker.status(paths=True)["features"]) == set(Wiki(root).pages)
    assert session.peek(DedupIndex) is None  # nothing of the dedup index in the station's process
    win.close()
    assert worker.pid is None and worker.starts == 1  # closing stopped it


def test_lint_figures_update_the_buttons_shown_and_add_their_own(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 monkeypatch) -> None:
    """Lint's count updates the first figures' buttons in place (no widget made or styled again
    on the GUI thread) and adds one button per kind after them."""
    monkeypatch.setattr(HealthView, "count_duplicates", False)
    root = make_wiki(tmp_path / "w", PAGES)
    win, health = shown(qtbot, root, tmp_path)
    first: dict[str, object] = {}
    health.figures_ready.connect(lambda: first.update(health.buttons))
    with qtbot.waitSignals([win.ready, health.lint_ready], timeout=15_000):
        win.start()
    assert first and "orphans" in first
    assert all(health.buttons[key] is button for key, button in first.items())  # the same widgets
    assert health.buttons["orphans"].number.text() == "3"  # (was "…" before lint counted)
    kinds = [key for key in health.buttons if key.startswith("lint:")]
    assert kinds and list(health.buttons)[:len(first)] == list(first)
    assert "lint:orphan" in kinds
    qtbot.mouseClick(health.buttons["lint:orphan"], Qt.MouseButton.LeftButton)
    assert win.views.currentWidget() is win.view_index["lint"]
    win.close()


def test_links_preview_highlights_carry_their_own_text_colour() -> None:
    """The preview's light added/removed backgrounds keep dark text: in the dark theme the view's
    light text on them was unreadable (seen in a 32,000-page screenshot)."""
    import re

    from curator.engine.review.linkrepair import FixPlan
    from curator.engine.write.relink import LinkRewrite
    from curator.views.review.links import plan_html

    plan = FixPlan("alias", [("Plan Mk2", "plan-mk2", "wiki/plan-mk2-ii.md")], aliases={"wiki/plan-mk2-ii.md": ["Plan Mk2"]},
                   rewrites=[LinkRewrite("wiki/a.md", 3, "wikilink", "[[Plan Mk2]]", "[[plan-mk2-ii|Plan Mk2]]")])
    styles = re.findall(r"style='([^']*background[^']*)'", plan_html(plan))
    assert len(styles) == 3 and all("color:" in s for s in styles)


def test_health_shows_the_saved_duplicate_count_while_a_slow_count_runs(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                       monkeypatch) -> None:
    """After a change made since the last open, Health shows its figures without waiting for the
    duplicate count (slowed here): the count the last scan kept, for the pages as they were, marked
    "counting…", then the count for the pages as they are in its place."""
    import threading

    from curator.engine.review.health import duplicate_figure as real

    body = "# Tariffs\n\nThe harbour tariff schedule for container vessels is revised every spring by the board.\n"
    root = make_wiki(tmp_path / "w", {**PAGES, "wiki/tariffs.md": body, "wiki/tariffs-copy.md": body})
    win = station(qtbot, root, tmp_path)
    health: HealthView = win.view_index["health"]  # type: ignore[assignment]
    qtbot.waitUntil(health.is_content_ready, timeout=15_000)
    saved = health.buttons["duplicates"].figure.value
    assert saved is not None and saved >= 1
    win.close()
    # a change made elsewhere since: one more copy of another page (one more family)
    other = "# Berths\n\nEach berth is booked a week ahead through the port office, never by telephone.\n"
    for name in ("berths", "berths-copy"):
        (root / "wiki" / f"{name}.md").write_text(other, encoding="utf-8")
    git(root, "add", "-A")
    git(root, *GIT_ID, "commit", "-qm", "two copies")

    release = threading.Event()

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr("curator.views.review.health.duplicate_figure", slow)
    win = station(qtbot, root, tmp_path)
    health = win.view_index["health"]  # type: ignore[assignment]
    qtbot.waitUntil(lambda: "lint:orphan" in health.buttons, timeout=15_000)  # (lint has counted)
    button = health.buttons["duplicates"]
    # every other figure is counted, and the duplicate figure is the kept one, said to be counting
    assert all(b.figure.value is not None for b in health.buttons.values())
    assert button.figure.value == saved and button.figure.stale
    assert button.label.text() == "Duplicate families: counting…"
    assert "orphans" in health.buttons and health.buttons["orphans"].label.text() == "Orphan pages"
    assert not health.is_content_ready()
    release.set()
    qtbot.waitUntil(lambda: not health.buttons["duplicates"].figure.stale, timeout=15_000)
    qtbot.waitUntil(health.is_content_ready, timeout=15_000)
    button = health.buttons["duplicates"]
    assert button.figure.value == saved + 1 == dedup_families.family_count(Wiki(root))
    assert button.label.text() == "Duplicate families"
    win.close()


def test_lint_figures_say_counting_until_lint_has_counted(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          monkeypatch) -> None:
    """The first figures come before lint's: its two figures are marked as being counted, not blank."""
    import threading

    from curator.engine.review.health import add_lint as real

    monkeypatch.setattr(HealthView, "count_duplicates", False)
    release = threading.Event()

    def slow(*args, **kwargs):  # type: ignore[no-untyped-def]
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr("curator.views.review.health.add_lint", slow)
    root = make_wiki(tmp_path / "w", PAGES)
    win, health = shown(qtbot, root, tmp_path)
    with qtbot.waitSignals([win.ready, health.figures_ready], timeout=15_000):
        win.start()
    orphans = health.buttons["orphans"]
    assert orphans.figure.value is None and orphans.number.text() == "…"
    assert orphans.label.text() == "Orphan pages: counting…"
    assert health.buttons["lint_problems"].label.text() == "Lint problems: counting…"
    with qtbot.waitSignal(health.lint_ready, timeout=15_000):
        release.set()
    assert orphans.number.text() == "3" and orphans.label.text() == "Orphan pages"
    win.close()
