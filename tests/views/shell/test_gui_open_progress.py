"""Opening a big wiki in the station (issue 17): a progress bar that moves, and a Cancel that works.

A cold open parses page by page; the bar is determinate and advances while pages are read (it
was stuck at 0 % until the whole wiki had loaded), and Cancel stops the load mid-way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.corpus import generate
from tests.gui_helpers import temp_settings


@pytest.fixture()
def big_wiki(tmp_path: Path) -> Path:
    return generate(tmp_path / "wiki", 1200, seed=6, profile="real-shaped", cjk=False).root


def test_cold_open_progress_is_determinate_and_moves(qtbot, big_wiki: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = MainWindow(Workspace(big_wiki, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    seen: list[tuple[int, int]] = []
    labels: list[str] = []

    def record(done: int, total: int, what: str) -> None:
        seen.append((done, total))
        labels.append(what)
        assert win.progress.maximum() > 0  # determinate, not the busy indicator

    win.workspace.progress.connect(record)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=120_000):
        win.start()
    total = seen[-1][1]
    values = [d for d, _t in seen]
    assert values == sorted(values) and values[-1] == total
    assert len({v for v in values if 0 < v < total}) >= 4  # it moved on the way, not just 0 -> 100
    assert any("of 1,200 pages" in label for label in labels)
    # the walk of the files moves the bar before the first page is parsed
    listing = [i for i, label in enumerate(labels) if label.startswith("Listing")]
    reading = [i for i, label in enumerate(labels) if label.startswith("Reading")]
    assert listing and reading and max(listing) < min(reading)
    assert len({seen[i][0] for i in listing}) >= 2 and labels[max(listing)].endswith("1,200 pages…")
    assert win.model.rowCount() == 1200
    win.close()


def test_cancel_stops_a_cold_open(qtbot, big_wiki: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace(big_wiki, watch=False)
    win = MainWindow(ws, temp_settings(tmp_path))
    qtbot.addWidget(win)
    failures: list[str] = []
    ws.failed.connect(failures.append)

    def cancel_while_reading(done: int, total: int, what: str) -> None:
        if what.startswith("Reading") and win.cancel_button.isVisible():
            win.cancel_button.click()  # the station's Cancel

    ws.progress.connect(cancel_while_reading)
    win.show()
    with qtbot.waitSignal(ws.failed, timeout=120_000):
        win.start()
    assert failures == ["Loading cancelled."]
    assert not ws.ready
    win.close()
    # the wiki is left consistent: the next open reads every page, none lost or doubled
    again = MainWindow(Workspace(big_wiki, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(again)
    again.show()
    with qtbot.waitSignal(again.ready, timeout=120_000):
        again.start()
    assert again.model.rowCount() == 1200
    assert sorted(r.page.path for r in again.model.rows) == sorted(again.workspace.wiki(0).store.paths)
    again.close()


def test_the_search_index_builds_in_the_background_after_the_open(qtbot, big_wiki: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.views.shell import main_window

    monkeypatch.setattr(main_window, "MENTIONS_BUILD_LIMIT", 100)  # 1,200 pages count as big here
    ws = Workspace(big_wiki, watch=False)
    win = MainWindow(ws, temp_settings(tmp_path))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.ready, ws.search_built], timeout=120_000):
        win.start()
    wiki = ws.wiki(0)
    assert wiki.search.active()  # built without anyone searching
    assert wiki.search.search("ledger", refresh=False)
    win.close()


def test_closing_stops_a_background_build(tmp_path: Path) -> None:
    from curator.engine.search.index import BuildStopped
    from curator.engine.wiki import Wiki

    root = generate(tmp_path / "w", 300, seed=2, profile="real-shaped", cjk=False).root
    wiki = Wiki(root)
    wiki.search.stop_building()
    with pytest.raises(BuildStopped):
        wiki.search.ensure_built()
    assert not wiki.search.active()  # rolled back: the next search builds it again
    wiki.close()
    again = Wiki(root)
    assert again.search.search("ledger") is not None and again.search.active()
    again.close()
