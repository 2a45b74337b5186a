"""Hardening, availability (issue 14): one hostile input must not take the wiki down. A file name
that is not UTF-8, a fact too large to be one, page text that asks a widget to load resources,
and pages too large to render at once; each tested as a class, through the CLI, a real MCP stdio
client and the station."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from curator.engine.policy.actor import OPERATOR
from curator.engine.sync.remote import sync
from curator.engine.write.bootstrap import init_wiki
from tests.mcp.test_mcp_server import call, run
from tests.sync_helpers import make_net

IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
BAD = os.fsencode("wiki/") + b"caf\xe9 \xff menu.md"  # Latin-1 bytes: not a UTF-8 name
SHOWN = "wiki/caf\ufffd \ufffd menu.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def cli(root: Path, *args: str, timeout: float = 120) -> tuple[int, Any, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, timeout=timeout)
    out: Any = proc.stdout.decode("utf-8")  # strict: every byte printed must be UTF-8
    err = proc.stderr.decode("utf-8")
    if "--json" in args and out.strip():
        out = json.loads(out)
    return proc.returncode, out, err


def put_bad_page(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), BAD), "wb") as f:
        f.write(b"# Menu\n\nThe lunch menu. See [[welcome]].\n\n## Updates\n\n- Soup on Monday\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki/welcome.md").write_text("# Welcome\n\nStart here.\n\n## Updates\n\n- Doors open at 9\n")
    put_bad_page(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


def open_station(qtbot, root: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The station on ``root``, shown and loaded (offscreen)."""
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    win.resize(1100, 800)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=120_000):
        win.start()
    return win


# --- 5. a file name that is not UTF-8 never stops a command ---------------------------------------

def assert_no_internal_error(rc: int, err: str, status: int = 0) -> None:
    assert "internal error" not in err and "Traceback" not in err, err
    assert rc == status, err


def test_a_non_utf8_file_name_stops_no_command(root: Path) -> None:
    rc, out, err = cli(root, "index", "--json")
    assert_no_internal_error(rc, err)
    assert SHOWN in [p["path"] for p in out] and "wiki/welcome.md" in [p["path"] for p in out]
    # (the name is reported as an error, so lint's status is 1: the command itself ran to its end)
    rc, out, err = cli(root, "lint", "--json")
    assert_no_internal_error(rc, err, status=1)
    assert any(i["path"] == SHOWN and i["code"] == "file-name" and i["severity"] == "error" for i in out), out
    rc, out, err = cli(root, "lint")
    assert rc == 1 and f"{SHOWN}: error: [file-name]" in out, out
    # the text answers printed from what they saved are valid UTF-8 too, as computed (cli decodes
    # strictly): each asked twice, the second printed as saved
    for args in (["lint"], ["index"], ["links", "unresolved"]):
        first = cli(root, *args)
        assert cli(root, *args) == first, args
        assert "\ufffd" in first[1] or args == ["links", "unresolved"], (args, first)
    rc, out, err = cli(root, "append", "welcome", "Lunch is at noon", "--json")
    assert_no_internal_error(rc, err)
    assert out["status"] == "appended"
    rc, out, err = cli(root, "--as", "agent:dudu", "append", "cafe-menu", "Fish on Friday", "--json")
    assert_no_internal_error(rc, err)
    for args in (["recover"], ["history", "--json"], ["neighbors", "welcome", "--json"], ["read-all"],
                 ["graph", "--format", "json"], ["graph"], ["search", "lunch", "--json"], ["context"],
                 ["dedup", "--json"], ["undo"]):
        rc, out, err = cli(root, *args)
        assert "internal error" not in err and "Traceback" not in err, (args, err)
        assert rc == 0, (args, err)
    assert git(root, "status", "--porcelain") == ""
    assert "Lunch is at noon" not in (root / "wiki/welcome.md").read_text("utf-8")  # undone


def test_mcp_starts_and_lists_the_page(root: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_index")
        assert not err and SHOWN in text and "wiki/welcome.md" in text, text
        err, text = await call(s, "wiki_append", slug="welcome", content="The lift is on the left")
        assert not err and text.startswith("appended"), text
        err, text = await call(s, "files_neighbors", slug="welcome")
        assert not err, text

    run(root, body)


def test_sync_pulling_such_a_file_breaks_nothing_afterwards(tmp_path: Path) -> None:
    net = make_net(tmp_path)
    try:
        put_bad_page(net.a.root)
        git(net.a.root, "add", "-A")
        git(net.a.root, "commit", "-qm", "collaborator adds a Latin-1 name")
        assert sync(net.a, OPERATOR).status == "pushed"
        result = sync(net.b, OPERATOR)
        assert not result.is_error, result.message
        assert os.path.exists(os.path.join(os.fsencode(net.b.root), BAD))
        for args in (["index", "--json"], ["lint", "--json", "--exit-zero"],
                     ["append", "ann-smith", "Ann moved to Bergen"], ["recover"], ["history"]):
            rc, _out, err = cli(net.b.root, *args)
            assert "internal error" not in err, (args, err)
            assert rc == 0, (args, err)
    finally:
        net.close()


def test_station_loads_a_wiki_with_such_a_file(qtbot, root: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = open_station(qtbot, root, tmp_path)
    proxy = win.browser.proxy
    paths = {proxy.index(r, 0).data() for r in range(proxy.rowCount())}
    titles = {proxy.index(r, c).data() for r in range(proxy.rowCount()) for c in range(proxy.columnCount())}
    assert "Menu" in titles and "Welcome" in titles, (paths, titles)
    win.close()


# --- 6. page text never reaches a rich-text widget that loads resources -----------------------------

class FifoWatch:
    """A FIFO outside the wiki; a background thread notices any reader that opens it (a widget
    loading it as an image) and lets it go (EOF), so the test reports instead of hanging."""

    def __init__(self, path: Path) -> None:
        import threading

        self.path = path
        os.mkfifo(path)
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import time

        while not self._stop.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody has it open for reading
                time.sleep(0.005)
                continue
            self.opened += 1
            os.close(fd)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


def test_tooltips_and_labels_never_load_what_page_text_names(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QEvent, QPoint, Qt
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import (
        QAbstractItemView,
        QApplication,
        QGraphicsScene,
        QGraphicsView,
        QLabel,
        QToolTip,
    )

    fifo = FifoWatch(tmp_path / "outside.fifo")
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    hostile = f'<img src="file://{fifo.path}"><img src="{fifo.path}">'
    (root / "wiki/menu.md").write_text(f'---\ntitle: \'Menu <img src="{fifo.path}">\'\n---\n\n'
                                       f"{hostile} is the lunch menu.\n\n## Updates\n\n- {hostile}\n")
    (root / "wiki/welcome.md").write_text("# Welcome\n\n[[menu]]\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    try:
        win = open_station(qtbot, root, tmp_path)
        with qtbot.waitSignal(win.ready, timeout=20_000):
            win.open_page((0, "wiki/menu.md"))
        views = [v for v in win.findChildren(QAbstractItemView) if v.model() is not None]
        shown = 0
        for view in views:
            model = view.model()
            for row in range(min(model.rowCount(), 20)):
                for col in range(model.columnCount()):
                    index = model.index(row, col)
                    tip = index.data(Qt.ItemDataRole.ToolTipRole)
                    if not tip:
                        continue
                    rect = view.visualRect(index)
                    if rect.isEmpty():
                        continue
                    pos = rect.center()
                    event = QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
                    QApplication.sendEvent(view.viewport(), event)
                    QApplication.processEvents()
                    shown += 1
                    if "<img" in str(tip):
                        assert "&lt;img" in QToolTip.text(), QToolTip.text()
        assert shown, "no tooltip was exercised"
        for label in win.findChildren(QLabel):
            if "<img" in label.text():
                assert label.textFormat() == Qt.TextFormat.PlainText, label.text()
        # A graphics item's tooltip (the graph view's node tips carry page titles).
        scene = QGraphicsScene()
        item = scene.addRect(0, 0, 200, 200)
        item.setToolTip(hostile)
        gview = QGraphicsView(scene)
        qtbot.addWidget(gview)
        gview.resize(300, 300)
        gview.show()
        pos = gview.mapFromScene(item.rect().center())
        QApplication.sendEvent(gview.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos,
                                                             gview.viewport().mapToGlobal(pos)))
        QApplication.processEvents()
        assert "&lt;img" in QToolTip.text(), QToolTip.text()
        QToolTip.showText(QPoint(10, 10), "")
        qtbot.wait(100)
        assert fifo.opened == 0, "a widget opened the FIFO named in page text"
        win.close()
    finally:
        fifo.stop()



def test_tooltip_guard_is_per_widget_and_survives_a_theme_change(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The guard is the application's style (its ``polish``, once per widget), not a filter on
    every event: a theme change keeps it, a new item view gets the escaping delegate, a widget's
    own tip set through ``set_tip`` is shown escaped, plain text stays as it is, and a view's own
    delegate (the combo box's) is left alone."""
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QComboBox, QLabel, QTableWidget, QTableWidgetItem, QToolTip

    from curator.views import plain_tips
    from curator.views.shell import appearance

    app = QApplication.instance()
    plain_tips.install()
    hostile = f'<img src="file://{tmp_path}/x.png"> <b>bold</b>'

    def tip_of(widget, pos: QPoint) -> str:  # type: ignore[no-untyped-def]
        QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos)))
        QApplication.processEvents()
        return QToolTip.text()

    try:
        for theme in ("dark", "system", "light"):
            appearance.apply_theme(theme)
            assert isinstance(app.style(), plain_tips.PlainTipStyle), theme
            table = QTableWidget(2, 1)
            qtbot.addWidget(table)
            for row, text in enumerate((hostile, "a plain tip")):
                item = QTableWidgetItem(f"row {row}")
                item.setToolTip(text)
                table.setItem(row, 0, item)
            table.show()
            assert isinstance(table.itemDelegate(), plain_tips.PlainTipDelegate)
            shown = tip_of(table.viewport(), table.visualItemRect(table.item(0, 0)).center())
            assert "&lt;img" in shown and "<img" not in shown and "&lt;b&gt;bold" in shown, shown
            assert tip_of(table.viewport(), table.visualItemRect(table.item(1, 0)).center()) == "a plain tip"
            label = QLabel("x")
            qtbot.addWidget(label)
            plain_tips.set_tip(label, hostile)
            label.show()
            shown = tip_of(label, QPoint(2, 2))
            assert "&lt;img" in shown and "<img" not in shown, shown
            combo = QComboBox()
            qtbot.addWidget(combo)
            combo.addItems(["a", "b"])
            own = combo.view().itemDelegate().metaObject().className()
            plain_tips.guard(combo.view())
            assert combo.view().itemDelegate().metaObject().className() == own != "PlainTipDelegate"
    finally:
        appearance.apply_theme("system")
        QToolTip.hideText()


# --- 7a. a fact from an agent is a fact, not a payload --------------------------------------------

def test_agent_facts_are_size_limited_in_every_door(root: Path) -> None:
    head = git(root, "rev-parse", "HEAD")
    word = "x" * 10_000_000
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "welcome", "y" * 4001, "--json")
    assert rc == 1 and out["status"] == "invalid" and "4,000" in out["message"], out
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "welcome", ("z" * 1001 + "\n") * 2, "--json")
    assert rc == 1 and out["status"] == "invalid" and "1,000" in out["message"], out
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "welcome", "Doors close at five",
                     "--link", "q" * 5000, "--json")
    assert rc == 1 and out["status"] == "invalid", out
    assert git(root, "rev-parse", "HEAD") == head
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "welcome", ("w " * 495 + "\n") * 4, "--json")
    assert rc == 0 and out["status"] == "appended", out  # 3,964 characters, lines of 991: one fact
    rc, out, _ = cli(root, "append", "welcome", "The operator's long note. " + "v" * 6000, "--json")
    assert rc == 0 and out["status"] == "appended", out  # the operator may write longer
    head = git(root, "rev-parse", "HEAD")

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_append", slug="welcome", content=word)
        assert err and text.startswith("invalid:") and "4,000" in text and "\n" not in text, text[:300]
        err, text = await call(s, "wiki_append", slug="welcome", content="k" * 1500)
        assert err and text.startswith("invalid:") and "1,000" in text, text[:300]

    run(root, body)
    assert git(root, "rev-parse", "HEAD") == head
    assert "x" * 100 not in (root / "wiki/welcome.md").read_text("utf-8")


# --- 7b. the page view stays responsive on any page on disk ----------------------------------------

def large_pages() -> dict[str, str]:
    row = "| " + " | ".join(f"c{j}" for j in range(40)) + " |\n"
    return {
        "wiki/one-word.md": "x" * 10_000_000 + "\n",
        "wiki/many-links.md": "# Many links\n\n" + "".join(f"- [[page-{i}]]\n" for i in range(100_000)),
        "wiki/big-table.md": "# Table\n\n" + row + "|" + "---|" * 40 + "\n" + row * 3000,
    }


def open_with_probe(qtbot, win, path: str, settle_ms: int = 1500) -> float:  # type: ignore[no-untyped-def]
    """The longest the GUI thread went without running a 5 ms timer while ``path`` opened and
    its first chunks were rendered."""
    import time

    from PySide6.QtCore import QTimer

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    try:
        with qtbot.waitSignal(win.ready, timeout=120_000):
            win.open_page((0, path))
        qtbot.wait(settle_ms)
    finally:
        timer.stop()
    return max(gaps)


def test_large_pages_never_block_the_gui_thread(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki/welcome.md").write_text("# Welcome\n\nSmall.\n")
    for rel, text in large_pages().items():
        (root / rel).write_text(text, encoding="utf-8")
    win = open_station(qtbot, root, tmp_path)
    view = win.page_view
    for rel in large_pages():
        worst = open_with_probe(qtbot, win, rel)
        # ~100 ms on a quiet machine (see tests/perf/test_perf_page_view.py); before, minutes.
        print(f"{rel}: longest GUI-thread block {worst * 1000:.0f} ms")
        assert worst < 1.0, (rel, worst)
        assert view.large_bar.isVisible() or view.loading, rel
        assert view.browser.document().characterCount() > 1000, rel
    # The bar, and "Show all" going on chunk by chunk to the end of a page.
    assert view.large_label.text().startswith("This page is large (680 KB): showing the first ")
    text = "# Medium\n\n" + "".join(f"- fact number {i} about the quokka\n" for i in range(12_000))
    (root / "wiki/medium.md").write_text(text, encoding="utf-8")
    win.workspace.handles[0].wiki.refresh(["wiki/medium.md"])
    open_with_probe(qtbot, win, "wiki/medium.md", settle_ms=100)
    assert view.show_all_button.isVisible()
    view.show_all()
    qtbot.waitUntil(lambda: not view.loading, timeout=120_000)
    assert not view.large_bar.isVisible()
    assert "fact number 11999 about the quokka" in view.browser.toPlainText()
    assert view.source.toPlainText().rstrip("\n") == text.rstrip("\n")
    win.close()
