"""At 1400x900 (the size the station opens at on a laptop) nothing the operator reads is cut:
the status bar's text and progress bar side by side, the Links and Lint choices whole, the
Lint page column whole where it leaves the problem in sight (else elided in its middle), and the
policy preview's Layer column whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QComboBox, QHeaderView, QPushButton, QStyleOptionViewItem

from curator.models.linkrepair import COL_CODE, COL_LINE, COL_MESSAGE, COL_PATH
from tests.gui_helpers import PAGES, loaded_window, make_wiki

LONG_PATH = "departments/engineering/runbooks/2026-04-08-incident-review-payments.md"
# Scratch names a page not yet written (for Links) and links nowhere in (for Lint)
EXTRA = {LONG_PATH: "---\ntitle: Incident review\nlayer: core\ntrust: 0.7\n---\n# Incident review\n\n"
                    "See [[Payments]] and [[Vietnam Market Entry Plan]].\n"}


@pytest.fixture
def station(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki", {**PAGES, **EXTRA})
    win = loaded_window(qtbot, root, tmp_path, station=True)
    assert (win.width(), win.height()) == (1400, 900)
    yield win
    win.close()


def shown(qtbot, win, name: str):  # type: ignore[no-untyped-def]
    view = win.view_index[name]
    win.show_view(name)
    qtbot.waitUntil(view.is_content_ready, timeout=15_000)
    QApplication.processEvents()
    return view


def text_width(widget, text: str) -> int:  # type: ignore[no-untyped-def]
    return int(widget.fontMetrics().horizontalAdvance(text))


def combo_fits(combo: QComboBox) -> None:
    longest = max(text_width(combo, combo.itemText(i)) for i in range(combo.count()))
    # the text's room is the combo less its frame and arrow: at least the longest item
    assert combo.width() >= combo.sizeHint().width(), (combo.width(), combo.sizeHint().width())
    assert combo.sizeHint().width() > longest, (combo.sizeHint().width(), longest)


def buttons_whole(*buttons: QPushButton) -> None:
    for b in buttons:
        assert b.width() >= b.sizeHint().width(), (b.text(), b.width(), b.sizeHint().width())


def test_status_text_and_progress_bar_do_not_overlap(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    from curator.views.shell.sync_status import install

    win = station
    sync = install(win, auto=False)  # (as the station has it: the bar sits between text and sync)
    win._busy(True)
    step = "Reading sync-records-32k-with-a-long-folder-name: 15,000 of 32,000 pages…"
    win._on_progress(48, 100, step)
    QApplication.processEvents()
    bar, label = win.progress, win.status_label
    assert bar.isVisible() and label.isVisible()
    assert not label.geometry().intersects(bar.geometry()), (label.geometry(), bar.geometry())
    assert not bar.geometry().intersects(sync.geometry()), (bar.geometry(), sync.geometry())
    assert sync.width() >= sync.sizeHint().width(), (sync.width(), sync.sizeHint())  # not squeezed
    assert bar.text() == "48 %  Reading"
    assert bar.width() >= text_width(bar, "100 %  Reading")
    assert label.text() == step  # whole, even where it is drawn shortened
    long = "Cannot open " + "very-long-folder/" * 20 + "page.md: it is gone"
    win.status(long)
    QApplication.processEvents()
    assert not label.geometry().intersects(bar.geometry())
    assert label.geometry().right() < bar.geometry().left()
    # nor does a long message widen the window past the screen it fits (it took the window's
    # minimum width with it: on a 1400 px screen the bar was drawn over the text)
    assert win.width() == 1400 and win.minimumSizeHint().width() <= 1400, (win.width(), win.minimumSizeHint())
    assert label.text() == long and long in label.toolTip()
    win._busy(False)


def test_links_choices_and_buttons_are_whole(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    view = shown(qtbot, station, "links")
    assert view.model.rowCount() >= 1
    assert view.method.itemText(0) == "add as an alias of the page"
    combo_fits(view.method)
    buttons_whole(view.fix_button, view.bulk_button, view.create_button, view.ignore_button)


def _drag_header_edge(header, column: int, dx: int) -> None:  # type: ignore[no-untyped-def]
    """The operator drags the right edge of ``column``'s header by ``dx`` (press, moves, release)."""
    viewport = header.viewport()
    y = header.height() // 2
    edge = header.sectionViewportPosition(column) + header.sectionSize(column) - 1
    buttons = Qt.MouseButton.LeftButton

    def send(kind: QEvent.Type, x: int, button: Qt.MouseButton, held: Qt.MouseButton) -> None:
        at = QPointF(x, y)
        QApplication.sendEvent(viewport, QMouseEvent(kind, at, QPointF(viewport.mapToGlobal(at.toPoint())),
                                                     button, held, Qt.KeyboardModifier.NoModifier))

    send(QEvent.Type.MouseMove, edge, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton)
    send(QEvent.Type.MouseButtonPress, edge, buttons, buttons)
    for step in range(1, 5):
        send(QEvent.Type.MouseMove, edge + dx * step // 4, Qt.MouseButton.NoButton, buttons)
    send(QEvent.Type.MouseButtonRelease, edge + dx, buttons, Qt.MouseButton.NoButton)


def test_lint_kind_choice_whole_and_the_page_column_leaves_the_problem_in_sight(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    view = shown(qtbot, station, "lint")
    assert view.kinds.count() >= 2 and view.kinds.itemText(0).startswith("every kind (")
    combo_fits(view.kinds)
    table, model = view.table, view.model
    header = table.horizontalHeader()
    rows = range(model.rowCount())
    paths = [model.index(r, COL_PATH).data() for r in rows]
    assert LONG_PATH in paths

    def widest(col: int) -> int:
        return max(text_width(table, str(model.index(r, col).data() or "")) for r in rows)

    def check() -> None:
        for col in (COL_LINE, COL_CODE):  # the line and the kind always whole
            assert header.sectionSize(col) >= max(widest(col), header.sectionSizeHint(col)), col
        width = table.viewport().width()
        # the problem always in sight, a third of the table at least, and nothing past the edge
        assert header.sectionSize(COL_MESSAGE) >= width // 3 - 1, (header.sectionSize(COL_MESSAGE), width)
        assert header.sectionPosition(COL_MESSAGE) + header.sectionSize(COL_MESSAGE) <= width
        assert header.sectionSize(COL_PATH) >= header.sectionSizeHint(COL_PATH)

    # at 1400x900 the long path does not fit beside the rest: elided in its middle, its file
    # name in sight, whole in its tooltip
    check()
    assert header.sectionSize(COL_PATH) < widest(COL_PATH)
    at = model.index(paths.index(LONG_PATH), COL_PATH)
    assert at.data(Qt.ItemDataRole.ToolTipRole) == LONG_PATH
    option = QStyleOptionViewItem()
    table.itemDelegateForColumn(COL_PATH).initStyleOption(option, at)
    assert option.textElideMode == Qt.TextElideMode.ElideMiddle
    shown_text = table.fontMetrics().elidedText(LONG_PATH, option.textElideMode, header.sectionSize(COL_PATH) - 12)
    assert shown_text.startswith("departments/") and shown_text.endswith("payments.md") and "…" in shown_text

    # a wider window: every path whole, the problem still in sight
    station.resize(2400, 900)
    QApplication.processEvents()
    check()
    assert header.sectionSize(COL_PATH) >= widest(COL_PATH)

    # the operator's own width stands: through another kind, the records again and a resize
    station.resize(1400, 900)
    QApplication.processEvents()
    before = header.sectionSize(COL_PATH)
    _drag_header_edge(header, COL_PATH, -80)
    dragged = header.sectionSize(COL_PATH)
    assert abs(dragged - (before - 80)) <= 2, (before, dragged)
    view.kinds.setCurrentIndex(1)
    view.kinds.setCurrentIndex(0)
    station.resize(1500, 900)
    QApplication.processEvents()
    assert header.sectionSize(COL_PATH) == dragged
    assert header.sectionResizeMode(COL_MESSAGE) == QHeaderView.ResizeMode.Stretch


def test_policy_preview_layer_and_bytes_columns_are_whole(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    view = shown(qtbot, station, "policy")
    view.agent.setCurrentText("dudu")
    with qtbot.waitSignal(view.content_ready, timeout=10_000):
        view.run_preview()
    QApplication.processEvents()
    tree = view.pages
    header = tree.header()
    assert tree.topLevelItemCount() == 3 and tree.topLevelItem(0).childCount() >= 1
    for col in (1, 2):  # Layer, Bytes
        assert header.sectionSize(col) >= tree.sizeHintForColumn(col), col
        assert header.sectionSize(col) >= header.sectionSizeHint(col), col
        assert header.sectionPosition(col) + header.sectionSize(col) <= tree.viewport().width(), col
    # the titles get what is left, never less than their header
    assert header.sectionSize(0) >= header.sectionSizeHint(0)
    # and a narrower pane keeps Layer and Bytes whole too
    view.agent_split.setSizes([300, 560])
    QApplication.processEvents()
    for col in (1, 2):
        assert header.sectionPosition(col) + header.sectionSize(col) <= tree.viewport().width(), col


def test_every_view_tab_is_in_sight(qtbot, station) -> None:  # type: ignore[no-untyped-def]
    """Every view's tab fits the bar: none waits behind the bar's scroll arrows."""
    bar = station.views.tabBar()
    needed = [bar.tabSizeHint(i).width() for i in range(bar.count())]
    assert bar.count() >= 11 and sum(needed) <= bar.width(), (sum(needed), bar.width(), station.splitter.sizes(),
                                                                [w.minimumSizeHint().width() for w in (station.browser, station.side)],
                                                                [bar.tabText(i) for i in range(bar.count())])
    assert bar.tabRect(bar.count() - 1).right() <= bar.width()


@pytest.mark.parametrize("name", ["lint", "links"])
def test_a_review_tables_rows_are_one_line_high(qtbot, station, name: str) -> None:  # type: ignore[no-untyped-def]
    """A one-line record is one line high (Qt's default row, 30 px in Fusion, was two lines of
    text: a third as many records in sight); its text still whole in height."""
    view = shown(qtbot, station, name)
    table = view.table
    assert table.model().rowCount() > 0
    line = table.fontMetrics().height()
    height = table.rowHeight(0)
    assert line + 4 <= height <= line + 10, (height, line)
    assert table.verticalHeader().defaultSectionSize() == height
