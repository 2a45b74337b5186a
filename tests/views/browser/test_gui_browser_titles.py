"""Titles several pages share: the page list shows, dim beside each, the part of its path that
tells it apart; titles no other page has show nothing more."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from curator.engine.corpus.page import parse_page
from curator.models.pages import COL_TITLE, DistinctRole, PageRow, PageTableModel
from curator.views.browser.browser import PageBrowser, TitleDelegate


def row(path: str, title: str, wiki: int = 0, label: str = "w") -> PageRow:
    page, _ = parse_page(path, f"# {title}\n\ntext\n".encode())
    return PageRow(wiki, label, page)


def part(model: PageTableModel, key: tuple[int, str]) -> str:
    r = model.row_for(key)
    assert r is not None
    return str(model.index(r, COL_TITLE).data(DistinctRole))


SCENES = [row(f"stories/scenes/visenya-v1-dunk-and-egg-scene-{i:02}.md", "Visenya — Scene") for i in (1, 2, 3)]


def test_colliding_titles_show_their_differing_path_part(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = PageTableModel()
    model.set_rows([*SCENES, row("notes/a/index.md", "Index"), row("notes/b/index.md", "Index"),
                    row("notes/index.md", "Solo"), row("x/index.md", "Twin", wiki=0),
                    row("x/index.md", "Twin", wiki=1, label="other")])
    assert [part(model, r.key) for r in SCENES] == ["…01", "…02", "…03"]
    assert part(model, (0, "notes/a/index.md")) == "…/a/…"
    assert part(model, (0, "notes/b/index.md")) == "…/b/…"
    assert part(model, (1, "x/index.md")) == "other"  # (the same path in another wiki: its name)
    assert part(model, (0, "notes/index.md")) == ""


def test_the_part_follows_rows_added_and_removed(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = PageTableModel()
    model.append_sorted([SCENES[0]])
    assert part(model, SCENES[0].key) == ""
    changed = []
    model.dataChanged.connect(lambda top, bottom, roles: changed.append((top.row(), bottom.row())))
    model.append_sorted([SCENES[1]])  # a later load batch: the first row now collides
    assert part(model, SCENES[0].key) == "…01" and changed
    model.update_rows([], [SCENES[1].key])
    assert part(model, SCENES[0].key) == ""
    renamed = row(SCENES[1].page.path, "Something else")
    model.update_rows([SCENES[2], renamed], [])
    assert part(model, SCENES[2].key) == "…03" and part(model, renamed.key) == ""


def test_the_browser_draws_the_part_dim_at_the_right_of_the_title(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = PageTableModel()
    model.set_rows([*SCENES, row("solo.md", "Visenya — Solo")])
    browser = PageBrowser(model)
    qtbot.addWidget(browser)
    browser.resize(700, 400)
    browser.show()
    qtbot.waitExposed(browser)
    table = browser.table
    assert isinstance(table.itemDelegateForColumn(COL_TITLE), TitleDelegate)
    viewport = table.viewport()
    first = table.visualRect(browser.proxy.index(0, COL_TITLE))
    QTest.mouseMove(viewport, first.center())
    qtbot.wait(20)
    image = viewport.grab().toImage()

    def dim_pixels(r: int) -> int:
        rect = table.visualRect(browser.proxy.index(r, COL_TITLE))
        right = rect.right() - 40
        return sum(1 for x in range(right, rect.right()) for y in range(rect.top() + 2, rect.bottom() - 2)
                   if _near(QColor(image.pixel(QPoint(x, y))), TitleDelegate.DIM))

    titles = [browser.proxy.index(r, COL_TITLE).data() for r in range(4)]
    assert titles[3] == "Visenya — Solo"
    assert all(dim_pixels(r) > 5 for r in range(3))  # "…01", "…02", "…03"
    assert dim_pixels(3) == 0
    # selecting a colliding row still opens that page
    opened = []
    browser.open_requested.connect(opened.append)
    second = table.visualRect(browser.proxy.index(1, COL_TITLE)).center()
    QTest.mouseMove(viewport, second)
    QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, second)
    QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, second)
    assert opened and opened[-1].key == SCENES[1].key


def _near(c: QColor, d: QColor) -> bool:
    return abs(c.red() - d.red()) + abs(c.green() - d.green()) + abs(c.blue() - d.blue()) < 60
