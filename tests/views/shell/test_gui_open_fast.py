"""A big workspace shows its pages before every link is resolved (issue 17, station warm open):
the window is usable with the first page's links and backlinks exact (from an index around the
page), then the browser's inbound counts arrive from a background task, the same counts a small
workspace computes before showing."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.views import workspace as workspace_module
from tests.gui_helpers import loaded_window, make_wiki

PAGES = {
    "wiki/home.md": "---\ntitle: Home\nlayer: identity\ntrust: 0.9\n---\n# Home\n\nSee [[Payments]], [[Refunds]]"
                    " and [[Nowhere Yet]].\n",
    "wiki/payments.md": "---\ntitle: Payments\nlayer: core\n---\n# Payments\n\nBack to [[Home]]; [[refunds]].\n",
    "wiki/refunds.md": "---\ntitle: Refunds\n---\n# Refunds\n\nAsk [[payments]] or go [[home]].\n",
    "notes/scratch.md": "# Scratch\n\nsee [[Home]]\n",
}


def _logged(self: object, original: Callable[[object], None], order: list[str], name: str) -> None:
    order.append(name)
    original(self)


def _inbound(win) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return {row.page.path: win.model.inbound(row) for row in win.model.rows}


def _open_until_kept(qtbot, root: Path, tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    """A window on ``root``, loaded, then closed once the page cache holds ``name`` (kept in the
    background after the window was usable); the window, closed."""
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    store = win.workspace.wiki(0).store
    qtbot.waitUntil(lambda: store.derived_any(name) is not None, timeout=15_000)
    win.close()
    return win


@pytest.mark.parametrize("later", [False, True])
def test_links_resolved_after_the_window_shows_give_the_same_counts(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     later: bool) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0 if later else 10_000)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    wiki = win.workspace.wiki(0)
    assert win.current == (0, "wiki/home.md")
    if later:
        qtbot.waitUntil(lambda: _inbound(win)["wiki/home.md"] == 3, timeout=15_000)
    assert _inbound(win) == {"notes/scratch.md": 0, "wiki/home.md": 3, "wiki/payments.md": 2,
                             "wiki/refunds.md": 2}
    assert wiki.built_links() is not None  # resolved by now, in the background or before showing
    if later:  # and kept, for the next open (current while no page changes)
        qtbot.waitUntil(lambda: wiki.current_inbound() is not None, timeout=15_000)
        assert wiki.current_inbound() == {"wiki/home.md": 3, "wiki/payments.md": 2, "wiki/refunds.md": 2}


def _counted_fresh(root: Path) -> dict[str, int]:
    """Every page's inbound count as a new process's link index counts it."""
    from curator.engine.wiki import Wiki

    wiki = Wiki(root)
    try:
        links = wiki.links
        return {row: len({e.source for e in links.incoming.get(row, ())}) for row in sorted(wiki.store.paths)}
    finally:
        wiki.close()


def _resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The wikis whose links a station resolves from here on (every link, for the inbound counts)."""
    from curator.views.workspace import Workspace

    resolved: list[str] = []
    inbound = Workspace._inbound

    def counting(handle):  # type: ignore[no-untyped-def]
        resolved.append(handle.label)
        return inbound(handle)

    monkeypatch.setattr(Workspace, "_inbound", staticmethod(counting))
    return resolved


def test_a_warm_open_whose_kept_counts_are_current_resolves_no_link(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The inbound counts kept with the page cache, when no page changed since they were counted,
    are the counts: the next open shows them as counted (not as kept) and neither decodes every
    page nor builds the link index (160 MB at 32,000 pages). Once a page changed they are only
    shown until the links are resolved again."""
    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    _open_until_kept(qtbot, root, tmp_path, "inbound")
    resolved = _resolutions(monkeypatch)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    wiki = win.workspace.wiki(0)
    qtbot.waitUntil(lambda: wiki.store.derived_any("summaries") is not None, timeout=15_000)  # (background done)
    assert _inbound(win) == _counted_fresh(root) == {"notes/scratch.md": 0, "wiki/home.md": 3,
                                                     "wiki/payments.md": 2, "wiki/refunds.md": 2}
    assert not win.model._inbound_kept  # shown as counted, not as the last open's
    assert resolved == [] and wiki.built_links() is None and not wiki.store.decoded
    win.close()

    # a page changed since: the kept counts are shown, then the links are resolved again
    (root / "notes" / "scratch.md").write_text("# Scratch\n\nsee [[Refunds]] and [[Home]]\n", encoding="utf-8")
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    qtbot.waitUntil(lambda: _inbound(win)["wiki/refunds.md"] == 3, timeout=15_000)
    assert resolved == ["w"]
    assert _inbound(win) == _counted_fresh(root)
    win.close()


def test_a_change_to_counts_held_without_the_link_index_counts_again_in_the_background(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from curator.views.workspace import Workspace

    """With the counts held (current at a warm open) and no link index, a change shows its rows at
    once (each page read alone, every page not decoded for it) and the counts it moved follow from
    the links resolved in the background: the same counts a new process counts, the filters' tags
    too. Closed, the station keeps the counts as it followed them, and the next open takes them."""
    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    _open_until_kept(qtbot, root, tmp_path, "inbound")
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    wiki = win.workspace.wiki(0)
    assert wiki.built_links() is None
    # (the change's rows sent late: the recount, done by then, must still come after them, or the
    # rows' counts as held before the change replace the recounted ones)
    choices = Workspace._add_choices

    def late(self: Workspace, snapshot, pages=None):  # type: ignore[no-untyped-def]
        choices(self, snapshot, pages)
        if pages is None:
            time.sleep(1.0)

    monkeypatch.setattr(Workspace, "_add_choices", late)
    changed: list[object] = []
    win.workspace.pages_changed.connect(changed.append)
    (root / "notes" / "scratch.md").write_text("---\ntags: [drafts]\n---\n# Scratch\n\nsee [[Refunds]], [[Payments]]\n",
                                              encoding="utf-8")
    (root / "wiki" / "new.md").write_text("# New\n\n[[refunds]] and [[scratch]]\n", encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: bool(changed), timeout=15_000)
    snapshot = changed[0]
    assert {r.page.path for r in snapshot.rows} == {"notes/scratch.md", "wiki/new.md"}  # type: ignore[attr-defined]
    assert "drafts" in snapshot.tags  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: _inbound(win).get("wiki/refunds.md") == 4, timeout=15_000)
    # (counted here, not by another store: one opened now would settle the pages just written, a
    # state of its own the station's close then could not keep its counts at)
    assert _inbound(win) == {"notes/scratch.md": 1, "wiki/home.md": 2, "wiki/new.md": 0, "wiki/payments.md": 3,
                             "wiki/refunds.md": 4}
    assert wiki.built_links() is not None  # resolved again, and followed from here on
    (root / "wiki" / "new.md").unlink()
    changed.clear()
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: _inbound(win).get("wiki/refunds.md") == 3, timeout=15_000)
    assert _inbound(win) == {"notes/scratch.md": 0, "wiki/home.md": 2, "wiki/payments.md": 3, "wiki/refunds.md": 3}
    win.close()

    # closed: the counts as the station followed the changes are kept, and the next open takes them
    resolved = _resolutions(monkeypatch)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    shown, kept = _inbound(win), win.model._inbound_kept
    assert resolved == [] and win.workspace.wiki(0).built_links() is None
    win.close()
    assert shown == _counted_fresh(root) and not kept


def _slow_follows(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """The follows of inbound counts from here on (one entry each), the first made slow after it
    read the store's log (1 s: a change comes meanwhile), and those made slow."""
    import time

    from curator.engine.dedup import follow

    slow: list[int] = []
    follows: list[int] = []
    real = follow.inbound_followed

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        follows.append(1)
        if len(follows) == 1:
            slow.append(1)
            time.sleep(1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(follow, "inbound_followed", counted)
    return slow, follows


def test_counts_followed_from_the_duplicate_basis_keep_the_station_without_the_link_index(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Pages changed since the counts were kept (agents wrote while the station was closed), or
    a change while it is open: the counts are followed from the duplicate scan's basis, not
    counted from the link index (every page decoded and every link resolved, 1.5 GB held at
    300,000 pages): the same counts a new process counts, shown as counted, and the station
    still without the link index. Closed, it keeps them, and the next open takes them."""
    from curator.engine.dedup import families as dedup_families
    from curator.engine.dedup import index as dedup_index
    from curator.engine.wiki import Wiki

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    _open_until_kept(qtbot, root, tmp_path, "summaries")  # (the page list kept: not every page decoded for it)
    dedup_families.find_families(Wiki(root))  # a scan: its basis saved (what the station's dedup worker does)
    (root / "notes" / "scratch.md").write_text("# Scratch\n\nsee [[Refunds]] and [[Home]]\n", encoding="utf-8")
    resolved = _resolutions(monkeypatch)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    wiki = win.workspace.wiki(0)
    assert _inbound(win) == _counted_fresh(root) == {"notes/scratch.md": 0, "wiki/home.md": 3,
                                                     "wiki/payments.md": 2, "wiki/refunds.md": 3}
    assert not win.model._inbound_kept  # shown as counted, not as the last open's
    # a change while open: its rows at once, its counts followed in the background
    (root / "notes" / "scratch.md").write_text("# Scratch\n\nsee [[Payments]] and [[Payments|again]]\n",
                                              encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: _inbound(win).get("wiki/payments.md") == 3, timeout=15_000)
    assert _inbound(win) == {"notes/scratch.md": 0, "wiki/home.md": 2, "wiki/payments.md": 3, "wiki/refunds.md": 2}
    assert resolved == [] and wiki.built_links() is None and not wiki.store.decoded
    # a change while a follow counts: it counts once more (home's links taken out after its log was read)
    slow, follows = _slow_follows(monkeypatch)
    (root / "notes" / "scratch.md").write_text("# Scratch\n\nsee [[Refunds]]\n", encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: bool(slow), timeout=15_000)
    (root / "wiki" / "home.md").write_text("---\ntitle: Home\n---\n# Home\n\nNo links any more.\n", encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: len(follows) == 2 and not win.workspace.handles[0].recounting, timeout=15_000)
    qtbot.waitUntil(lambda: _inbound(win) == _counted_fresh(root), timeout=5_000)
    assert _inbound(win) == {"notes/scratch.md": 0, "wiki/home.md": 2, "wiki/payments.md": 1, "wiki/refunds.md": 2}
    assert resolved == [] and wiki.built_links() is None
    win.close()
    assert _inbound(win) == _counted_fresh(root)

    # closed: the counts as followed are kept, and the next open takes them as they are
    follows: list[int] = []
    monkeypatch.setattr(dedup_index, "followed_inbound", lambda wiki: follows.append(1))
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    shown, kept = _inbound(win), win.model._inbound_kept
    win.close()
    assert shown == _counted_fresh(root) and not kept
    assert resolved == [] and follows == []


def test_first_page_from_an_index_around_it_matches_the_whole_index(tmp_path: Path) -> None:
    from curator.engine.wiki import Wiki
    from curator.views.shell.main_window import gather_page

    root = make_wiki(tmp_path / "w", PAGES)
    around = Wiki(root)
    _page, _text, html_around, info_around = gather_page(around, "wiki/home.md")
    assert around.built_links() is None  # nothing resolved every link of the wiki
    whole = Wiki(root)
    whole.links  # noqa: B018 - built: gather_page uses the whole index
    _page, _text, html_whole, info_whole = gather_page(whole, "wiki/home.md")
    assert html_around == html_whole
    assert (info_around.backlinks, info_around.outgoing) == (info_whole.backlinks, info_whole.outgoing)
    assert sorted(p for p, *_ in info_around.backlinks) == ["notes/scratch.md", "wiki/payments.md",
                                                            "wiki/refunds.md"]


def test_a_page_embedding_another_is_shown_without_the_whole_index(tmp_path: Path) -> None:
    """An embedded page's links resolve in the index around it, as the page's own do: showing a
    page that embeds another builds no link index of every page (nor decodes every page, 1.5 GB
    at 300,000 pages), and shows what the whole index shows."""
    from curator.engine.wiki import Wiki
    from curator.views.shell.main_window import gather_page

    pages = {**PAGES,
             "wiki/digest.md": "# Digest\n\nThe week:\n\n![[Payments]]\n\n![[refunds#Refunds]]\n\nAnd [[Home]].\n",
             "notes/payments.md": "# Payments\n\nThe notes' own payments page, named like the wiki's.\n"}
    root = make_wiki(tmp_path / "w", pages)
    around = Wiki(root)
    around.store.refresh()
    _page, _text, html_around, info_around = gather_page(around, "wiki/digest.md")
    assert around.built_links() is None and not around.store.decoded
    whole = Wiki(root)
    whole.links  # noqa: B018 - built: gather_page uses the whole index
    _page, _text, html_whole, info_whole = gather_page(whole, "wiki/digest.md")
    assert html_around == html_whole
    assert (info_around.backlinks, info_around.outgoing) == (info_whole.backlinks, info_whole.outgoing)
    # (the embeds shown, their own links resolved: Payments links to Home and to Refunds)
    assert "Back to" in html_around and "Ask" in html_around
    assert html_around.count("wiki/home.md") >= 2 and "wiki/refunds.md" in html_around


def test_the_links_tab_follows_pages_that_start_or_stop_linking_to_the_page_shown(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Another page starts linking to the page shown (an agent's new page): its Links tab says
    so without the page being opened again, as Obsidian's backlinks pane does; and again when
    that page stops linking to it. The page itself is not shown again."""
    root = make_wiki(tmp_path / "w", PAGES)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    key = (0, "wiki/refunds.md")
    win.open_page(key)
    tree = win.side.links.tree

    def backlinks() -> str:
        item = tree.topLevelItem(0)
        return item.text(0) if item is not None else ""

    qtbot.waitUntil(lambda: win.current == key and backlinks() == "Backlinks (2)", timeout=15_000)
    opened: list[object] = []
    win.open_page = lambda *args, **kwargs: opened.append(args)  # type: ignore[method-assign]
    (root / "notes" / "new.md").write_text("# New\n\nAsk about [[Refunds]].\n", encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: backlinks() == "Backlinks (3)", timeout=15_000)
    (root / "notes" / "new.md").write_text("# New\n\nNothing to link.\n", encoding="utf-8")
    win.workspace.refresh_now()
    qtbot.waitUntil(lambda: backlinks() == "Backlinks (2)", timeout=15_000)
    assert opened == []
    win.close()


def test_window_is_usable_before_the_background_loads_start(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The page list is filled and the first page readable when ``ready`` fires, before the
    links of a big workspace are resolved: those (and the search index) start only then."""
    from curator.views.shell import main_window
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    monkeypatch.setattr(main_window, "LOAD_BATCH", 1)  # the rows enter over several event-loop turns
    started: list[str] = []
    link_all = Workspace._link_all

    def recorded(self: Workspace) -> dict[tuple[int, str], int]:
        started.append("links")
        return link_all(self)

    monkeypatch.setattr(Workspace, "_link_all", recorded)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    at_ready: dict[str, object] = {}

    def usable() -> None:
        wiki = win.workspace.wiki(0)
        at_ready.update(rows=win.model.rowCount(), current=win.current, title=win.windowTitle(),
                        links=wiki.built_links(), started=list(started),
                        backlinks=win.side.links.tree.topLevelItem(0).text(0))

    win.ready.connect(usable)
    with qtbot.waitSignals([win.ready, win.workspace.inbound_ready], timeout=15_000, order="strict"):
        win.start()
    assert at_ready["rows"] == 4 and at_ready["current"] == (0, "wiki/home.md")
    assert at_ready["title"].startswith("Home")  # type: ignore[union-attr]
    assert at_ready["backlinks"] == "Backlinks (3)"  # the page's own links are exact already
    assert at_ready["links"] is None  # every link of the workspace was resolved after, not before
    assert at_ready["started"] == [] and started == ["links"]
    assert _inbound(win)["wiki/home.md"] == 3
    win.close()


def test_screenshot_says_when_the_window_is_usable(tmp_path: Path) -> None:
    """``curator gui --screenshot`` prints ``usable`` once, the moment the window shows its pages
    and the first page (what the scale benchmark times as an open), then renders and exits."""
    import os
    import subprocess
    import sys

    from curator.views.shell.app import USABLE_LINE

    root = make_wiki(tmp_path / "w", PAGES)
    shot = tmp_path / "main.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "gui", str(root), "--screenshot", str(shot)],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [USABLE_LINE], proc.stdout
    assert shot.stat().st_size > 0


def test_the_page_table_asks_its_model_from_inside_one_python_call(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A paint of the page table enters Python once (its paintEvent) and asks the model for
    every cell from inside it: asked from Qt's C++ one call at a time, each of ~20 calls per cell
    took the interpreter lock again, and waited for it while a background task ran Python."""
    import sys

    from curator.models.pages import PageTableModel

    root = make_wiki(tmp_path / "w", PAGES)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    win.show()
    qtbot.waitExposed(win)
    callers: list[str] = []

    def profile(frame, event, _arg) -> None:  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code in (PageTableModel.data.__code__, PageTableModel.rowCount.__code__):
            # the outermost Python frame of the call: the paint (a delegate's paint, which the
            # title column has, runs inside it too)
            outer, f = "", frame.f_back
            while f is not None:
                if f.f_code.co_name in ("paintEvent", "paint"):
                    outer = f.f_code.co_name
                f = f.f_back
            callers.append(outer)

    sys.setprofile(profile)
    try:
        win.browser.table.viewport().grab()  # painted now, as on screen
    finally:
        sys.setprofile(None)
    assert callers  # the rows were painted
    assert set(callers) == {"paintEvent"}


def test_views_not_on_screen_read_their_content_after_the_window_is_usable(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy summary and the history are read once the window is usable, after the page
    list is filled (at 32,000 pages their reads held the interpreter lock the list's batches needed)."""
    from curator.views.history.history_view import HistoryView
    from curator.views.policy.policy_view import PolicyView
    from curator.views.shell import main_window
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    order: list[str] = []
    for cls, name in ((PolicyView, "policy"), (HistoryView, "history")):
        monkeypatch.setattr(cls, "reload", functools.partialmethod(_logged, cls.reload, order, name))
    monkeypatch.setattr(main_window, "LOAD_BATCH", 1)
    root = make_wiki(tmp_path / "w", PAGES)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    policy, history = PolicyView(win), HistoryView(win)
    win.add_view("policy", policy, "Policy")
    win.add_view("history", history, "History")
    win.model.rowsInserted.connect(lambda *_a: order.append("rows"))
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    qtbot.waitUntil(lambda: history.model.rowCount() > 0 and policy.is_content_ready(), timeout=15_000)
    last_batch = len(order) - order[::-1].index("rows")
    assert order.count("rows") == len(PAGES)  # one batch per page here
    assert sorted(order[last_batch:]) == ["history", "policy"]


def test_the_background_loads_start_after_the_filled_table_is_painted(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The filled page table is painted before the links, the policy and the history start to
    load (begun beside them, the first paint shared the interpreter lock with 2-3 busy threads:
    150-250 ms of GUI thread at 32,000 pages); a window that is not shown starts them at once."""
    from curator.views.shell import main_window
    from curator.views.shell.main_window import MainWindow
    from curator.views.widgets import TableView
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    order: list[str] = []
    paint = TableView.paintEvent

    def logged_paint(self: TableView, event: object) -> None:
        order.append(f"paint {self.model().rowCount()}")
        paint(self, event)  # type: ignore[arg-type]

    monkeypatch.setattr(TableView, "paintEvent", logged_paint)
    monkeypatch.setattr(main_window, "LOAD_BATCH", 1)
    root = make_wiki(tmp_path / "w", PAGES)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    win.resize(900, 600)
    win.show()
    qtbot.waitExposed(win)
    win.workspace.background_started.connect(lambda: order.append("background"))
    with qtbot.waitSignals([win.ready, win.workspace.background_started], timeout=15_000, order="strict"):
        win.start()
    assert "background" in order
    before = order[:order.index("background")]
    assert f"paint {len(PAGES)}" in before  # the table, filled, was on screen first
    win.close()

    hidden = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path / "hidden"))
    qtbot.addWidget(hidden)
    with qtbot.waitSignals([hidden.ready, hidden.workspace.background_started], timeout=15_000, order="strict"):
        hidden.start()
    hidden.close()


def _station_on_health(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A station window with every view, on screen, on a wiki of PAGES (not started yet), and its
    Health view (the landing view)."""
    from curator.views.review.health import HealthView
    from curator.views.shell.main_window import MainWindow
    from curator.views.shell.registry import install_views
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    root = make_wiki(tmp_path / "w", PAGES)
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    install_views(win)
    qtbot.addWidget(win)
    win.resize(900, 600)
    win.show()
    qtbot.waitExposed(win)
    health = win.view("health")
    assert isinstance(health, HealthView)
    return win, health


def test_the_landing_view_computes_once_the_window_is_usable(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Health, the view a wiki opens on, is shown as the load ends but computes its figures (every
    link resolved) only when the rest of the load starts, once the filled page table is painted:
    begun when it was shown, it shared the interpreter lock with that paint (120-250 ms of GUI
    thread at 32,000 pages). Here the rest of the load is held back until the test starts it."""
    from curator.views.review.health import HealthView
    from curator.views.shell.main_window import MainWindow

    computed: list[str] = []
    compute = HealthView.compute

    def logged_compute(self: HealthView, wiki: object) -> object:
        computed.append("health")
        return compute(self, wiki)  # type: ignore[arg-type]

    monkeypatch.setattr(HealthView, "compute", logged_compute)
    monkeypatch.setattr(HealthView, "count_duplicates", False)
    monkeypatch.setattr(MainWindow, "_start_background_after_paint", lambda self: None)
    win, health = _station_on_health(qtbot, tmp_path)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    qtbot.wait(400)  # (more than a reload's delay)
    assert health.isVisible() and not win.workspace.settled
    assert computed == [] and not health.is_content_ready()
    with qtbot.waitSignal(health.content_ready, timeout=15_000):
        win.workspace.start_background()
    assert computed == ["health"]
    assert health.report is not None and health.report.figure("pages").value == len(PAGES)
    win.close()


def test_the_landing_views_figures_never_wait_behind_the_reads_of_hidden_views(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The history and the policy summary of tabs not on screen are read as the window opens, but
    one at a time on a thread of their own: on the shared pool the history (2 s at 100,000 pages)
    and the links took both its threads, and Health's first figures waited 2 s behind them. Here
    the hidden views' reads go on only once Health shows its figures: on the shared pool of two
    threads, they waited for each other until the test timed out."""
    import threading

    from PySide6.QtCore import QThreadPool

    from curator.engine.policy import scope
    from curator.engine.write import actions
    from curator.views.review.health import HealthView

    shown = threading.Event()
    held: list[str] = []

    def after_health(name: str, real: Callable[..., object]) -> Callable[..., object]:
        def wait(*args: object, **kwargs: object) -> object:
            held.append(name)
            shown.wait(20)
            return real(*args, **kwargs)
        return wait

    monkeypatch.setattr(actions, "head_commit", after_health("history", actions.head_commit))
    monkeypatch.setattr(scope, "policy_summary", after_health("policy", scope.policy_summary))
    monkeypatch.setattr(HealthView, "count_duplicates", False)
    pool = QThreadPool.globalInstance()
    threads = pool.maxThreadCount()
    pool.setMaxThreadCount(2)  # (as on a machine of two cores)
    try:
        win, health = _station_on_health(qtbot, tmp_path)
        health.figures_ready.connect(shown.set)
        with qtbot.waitSignal(win.ready, timeout=15_000):
            win.start()
        qtbot.waitUntil(shown.is_set, timeout=10_000)
        history, policy = win.view("history"), win.view("policy")
        assert history is not None and policy is not None
        qtbot.waitUntil(lambda: history.is_content_ready() and policy.is_content_ready(), timeout=15_000)
        assert sorted(held) == ["history", "policy"]  # (both were read while hidden, after Health's figures)
        win.close()
    finally:
        shown.set()
        pool.setMaxThreadCount(threads)


def test_the_station_reopens_on_its_kept_page_list_without_decoding_every_page(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a window was usable, the page list is kept with the page cache (in the background);
    the next open lists every page from it, with a page changed meanwhile as it is now, and the
    first page shown, before any page but the changed one and the first page is decoded."""
    from curator.engine.corpus.summaries import NAME
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    _open_until_kept(qtbot, root, tmp_path, NAME)
    (root / "wiki/refunds.md").write_text("---\ntitle: Refund Policy\ntags: [money]\n---\n# Refunds\n")

    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    at_ready: dict[str, object] = {}

    def usable() -> None:
        at_ready.update(decoded=win.workspace.wiki(0).store.decoded, current=win.current,
                        rows={row.page.path: (row.page.title, row.page.tags) for row in win.model.rows})

    win.ready.connect(usable)
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    assert at_ready["decoded"] is False and at_ready["current"] == (0, "wiki/home.md")
    assert at_ready["rows"] == {"wiki/home.md": ("Home", []), "wiki/payments.md": ("Payments", []),
                                "wiki/refunds.md": ("Refund Policy", ["money"]),
                                "notes/scratch.md": ("Scratch", [])}
    tag = win.browser.tag  # the filters offer the kept list's namespaces and tags, the new one too
    assert [tag.itemText(i) for i in range(tag.count())][1:] == ["money"]
    namespace = win.browser.namespace
    assert [namespace.itemText(i) for i in range(namespace.count())][1:] == ["notes", "wiki"]
    win.close()


def test_a_first_open_lists_the_pages_it_parsed_without_decoding_them_again(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing cached yet: the page list is made of the pages the first walk parsed (decoding
    them all again from the records just written was 1.6 s of a cold open at 100,000 pages)."""
    import curator.engine.corpus.store as store_module
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    decoded: list[bytes] = []
    original = store_module.decode_record
    monkeypatch.setattr(store_module, "decode_record", lambda blob: decoded.append(blob) or original(blob))
    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    at_ready: dict[str, object] = {}
    win.ready.connect(lambda: at_ready.update(decoded=len(decoded), rows=win.model.rowCount()))
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    assert at_ready == {"decoded": 0, "rows": 4}
    win.close()


def test_a_big_wiki_shows_the_inbound_counts_it_kept_until_they_are_counted_again(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counts the last open resolved are kept; the next open's rows carry them (the column's
    header saying so) until the links are resolved again, then the counts as they are now."""
    from PySide6.QtCore import Qt

    from curator.engine.corpus.summaries import INBOUND_NAME
    from curator.models.pages import COL_INBOUND
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace
    from tests.gui_helpers import temp_settings

    def header(win) -> str:  # type: ignore[no-untyped-def]
        """The column's header, in italics (and with a tooltip saying why) while the counts are kept ones."""
        model, horizontal = win.model, Qt.Orientation.Horizontal
        text = str(model.headerData(COL_INBOUND, horizontal))
        font, tip = (model.headerData(COL_INBOUND, horizontal, role)
                     for role in (Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole))
        return f"_{text}_ ({tip})" if font is not None and font.italic() else text

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    assert header(_open_until_kept(qtbot, root, tmp_path, INBOUND_NAME)) == "Inbound"  # (none kept before)
    (root / "notes/scratch.md").unlink()  # one link to Home gone since the counts were kept

    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    at_ready: dict[str, object] = {}
    win.ready.connect(lambda: at_ready.update(inbound=_inbound(win), header=header(win)))
    with qtbot.waitSignals([win.ready, win.workspace.inbound_ready], timeout=15_000, order="strict"):
        win.start()
    assert at_ready == {"inbound": {"wiki/home.md": 3, "wiki/payments.md": 2, "wiki/refunds.md": 2},
                        "header": "_Inbound_ (As counted when the wiki was last open; being counted again)"}
    assert _inbound(win) == {"wiki/home.md": 2, "wiki/payments.md": 2, "wiki/refunds.md": 2}
    assert header(win) == "Inbound"
    win.close()


def test_a_small_wiki_keeps_its_page_list_too(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Links resolved in the load (a small workspace): the page list is still kept once the window
    is usable, and the next open reads it (with the pages changed since)."""
    from curator.engine.corpus.summaries import NAME

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 10_000)
    _open_until_kept(qtbot, root, tmp_path, NAME)
    (root / "wiki/payments.md").write_text("---\ntitle: Payments And Fees\n---\n# Payments\n")
    again = loaded_window(qtbot, root, tmp_path, watch=False)
    assert {r.page.path: r.page.title for r in again.model.rows}["wiki/payments.md"] == "Payments And Fees"
    again.close()


def test_a_page_list_that_cannot_be_kept_costs_nothing_else(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping the list or the counts fails (a full disk): the counts still arrive, no error is shown."""
    from curator.engine.wiki import Wiki

    def full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    monkeypatch.setattr(Wiki, "keep_inbound", full)
    monkeypatch.setattr(Wiki, "keep_summaries", full)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    failed: list[str] = []
    win.workspace.failed.connect(failed.append)
    qtbot.waitUntil(lambda: _inbound(win)["wiki/home.md"] == 3, timeout=15_000)
    qtbot.wait(200)
    assert failed == []
    win.close()


def test_a_station_closed_before_its_background_work_still_keeps_its_page_list(  # type: ignore[no-untyped-def]
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big wiki's page list is kept after its links are resolved, in the background; a station
    closed before that (seconds after it opened, a --screenshot) keeps it as it closes, so the
    next open does not decode every page again."""
    from curator.engine.corpus.summaries import NAME
    from curator.engine.wiki import Wiki
    from curator.views.workspace import Workspace

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(workspace_module, "LINK_LATER_ABOVE", 0)
    monkeypatch.setattr(Workspace, "start_background", lambda self: None)  # (closed before it starts)
    win = loaded_window(qtbot, root, tmp_path, watch=False)
    store = win.workspace.wiki(0).store
    assert store.derived_any(NAME) is None  # (not kept while the station ran)
    win.close()
    win.workspace.close()
    again = Wiki(root)
    try:
        summaries = again.summaries()
        assert summaries.saved and again.store.decoded is False
        assert sorted(s.path for s in summaries.pages) == sorted(PAGES)
    finally:
        again.close()
