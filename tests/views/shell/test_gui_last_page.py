"""A wiki opens on the page the operator had open when it was closed, or on Health."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.gui_helpers import GIT_ID, loaded_window, make_wiki, temp_settings

REFUNDS = "wiki/refunds.md"


def front(win) -> str:  # type: ignore[no-untyped-def]
    return next(name for name, widget in win.view_index.items() if widget is win.views.currentWidget())


def test_the_page_open_at_close_is_shown_again_and_a_removed_one_gives_health(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_wiki(tmp_path / "wiki")
    win = loaded_window(qtbot, root, tmp_path, station=True)
    assert front(win) == "health"
    win.open_chosen((0, REFUNDS))
    qtbot.waitUntil(lambda: win.current_page is not None and win.current_page.path == REFUNDS, timeout=10_000)
    win.close()
    assert temp_settings(tmp_path).last_page(str(root)) == (str(root), REFUNDS)

    again = loaded_window(qtbot, root, tmp_path, station=True)
    qtbot.waitUntil(lambda: again.current_page is not None, timeout=10_000)
    assert again.current == (0, REFUNDS) and again.current_page.path == REFUNDS
    assert front(again) == "page"
    again.close()

    # the page went away while the wiki was closed: Health, not a page the operator never chose
    subprocess.run(["git", *GIT_ID, "rm", "-q", REFUNDS], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "drop refunds"], cwd=root, check=True)
    third = loaded_window(qtbot, root, tmp_path, station=True)
    assert front(third) == "health"
    assert third.current != (0, REFUNDS)
    third.close()
    # and a session that never left Health opens on Health the next time too
    assert temp_settings(tmp_path).last_page(str(root)) is None
    fourth = loaded_window(qtbot, root, tmp_path, station=True)
    assert front(fourth) == "health"
    fourth.close()


def test_last_pages_are_kept_per_folder(tmp_path: Path) -> None:
    settings = temp_settings(tmp_path)
    settings.set_last_page("/a", ("/a", "wiki/one.md"))
    settings.set_last_page("/b", ("/b/sub", "two.md"))
    assert settings.last_page("/a") == ("/a", "wiki/one.md")
    assert settings.last_page("/b") == ("/b/sub", "two.md")
    assert settings.last_page("/c") is None
    settings.set_last_page("/a", None)
    assert settings.last_page("/a") is None and settings.last_page("/b") == ("/b/sub", "two.md")
    settings.q.setValue("recent/last_pages", "not json")  # a damaged value is no page, not a crash
    assert settings.last_page("/b") is None


def test_a_wiki_without_frontmatter_does_not_start_on_an_empty_file(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # every page alike (no layer, no trust): the first by path was a 0-byte dated note
    pages = {"wiki/2026-04-08.md": "", "wiki/2026-04-09.md": "# Standup\n\nShipped the payouts fix.\n",
             "wiki/zebra.md": "# Zebra\n\nStriped.\n"}
    root = make_wiki(tmp_path / "wiki", pages)
    win = loaded_window(qtbot, root, tmp_path, station=True)
    qtbot.waitUntil(lambda: win.current_page is not None, timeout=10_000)
    assert win.current == (0, "wiki/2026-04-09.md")
    assert front(win) == "health"
    win.close()
