"""Obsidian callouts in the page view: each kind with its icon, title and colour, aliases, nesting,
and folding by a click on the title."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curator.engine.read.reading import embedded
from curator.engine.wiki import Wiki
from curator.views.page import callouts
from curator.views.page.render import chunk_page, page_style, render_page
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings
from tests.obsidian_vault import PAGES, build, write_files

PAGE = "Guides/Callouts.md"


def vault_html(tmp_path: Path) -> str:
    wiki = Wiki(build(tmp_path / "vault"))
    links = wiki.links
    return render_page(wiki.read_text(PAGE), lambda t, s: links.resolve(t, s).path,
                       lambda t, a, s: embedded(wiki, t, a, s), PAGE)


def titles(html: str) -> list[tuple[str, str, str]]:
    """(kind, icon, title) of every callout title cell, in order."""
    cells = re.findall(r'<td class="callout-(\w+) callout-title callout-title-\1">(.*?)</td>', html, re.DOTALL)
    out = []
    for kind, cell in cells:
        icon = re.search(r'<span class="callout-icon">(.*?)</span>', cell)
        assert icon is not None
        text = re.sub(r"<[^>]+>|&nbsp;|[▸▾]", " ", cell[icon.end():]).strip()
        out.append((kind, icon.group(1), text))
    return out


def test_every_kind_has_its_class_icon_and_title_and_aliases_map_to_it(tmp_path: Path) -> None:
    html = callouts.fold(vault_html(tmp_path), set())
    shown = titles(html)
    icon = {name: kind.icon for name, kind in callouts.KINDS.items()}
    assert shown == [
        ("note", icon["note"], "Note"),  # no title: the type, capitalised
        ("abstract", icon["abstract"], "Abstract"), ("abstract", icon["abstract"], "Too long"),
        ("info", icon["info"], "Where to pay"), ("todo", icon["todo"], "Todo"),
        ("tip", icon["tip"], "A folded tip"), ("tip", icon["tip"], "An open hint"),
        ("success", icon["success"], "Done"), ("question", icon["question"], "Question"),
        ("warning", icon["warning"], "Warning"), ("failure", icon["failure"], "Failure"),
        ("danger", icon["danger"], "Danger"), ("bug", icon["bug"], "Bug"),
        ("example", icon["example"], "Example"), ("quote", icon["quote"], "Quote"),
        ("info", icon["info"], "Nested, folded"), ("warning", icon["warning"], "Inner"),
        ("note", icon["note"], "Unknown"),
    ]
    assert len(set(icon.values())) == len(icon)  # one icon per kind
    assert "[!" not in html  # no marker left as text
    # bodies are markdown: links, emphasis, lists, task boxes
    assert "curator:Guides/Payments.md" in html and "<strong>check</strong>" in html
    assert "<li>one</li>" in html and "☐ file the invoice" in html
    assert "<blockquote>" in html and "A plain quote stays a quote." in html  # a quote stays one
    assert "A callout inside a callout." in html


def test_every_alias_names_its_kind() -> None:
    for alias, kind in {"summary": "abstract", "tldr": "abstract", "hint": "tip", "important": "tip",
                        "check": "success", "done": "success", "help": "question", "faq": "question",
                        "caution": "warning", "attention": "warning", "fail": "failure",
                        "missing": "failure", "error": "danger", "cite": "quote", "INFO": "info",
                        "nonsense": "note"}.items():
        html = render_page(f"> [!{alias}]\n> body\n", lambda t, s: None)
        assert f'class="callout callout-{kind}"' in html, alias
    link = render_page("> [!foo](https://example.com) text\n", lambda t, s: None)
    assert "<blockquote>" in link and "callout" not in link  # a link, as Obsidian reads it
    faq = render_page("> [!FAQ]\n> body\n", lambda t, s: None)
    assert titles(faq) == [("question", callouts.KINDS["question"].icon, "Faq")]


def test_each_kind_has_its_colour_light_and_dark_and_the_dark_tint_stays_dark() -> None:
    def lightness(hex_colour: str) -> float:
        return sum(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)) / (3 * 255)

    for dark in (False, True):
        sheet = page_style(100, dark)
        for kind in callouts.KINDS.values():
            accent = kind.dark if dark else kind.light
            rule = re.search(rf"td\.callout-{kind.name} \{{ background-color: (#[0-9a-f]{{6}}); "
                             rf"border: none; border-left: 3px solid {accent}; \}}", sheet)
            assert rule is not None, (kind.name, dark)
            assert f"td.callout-title-{kind.name} a {{ color: {accent}; }}" in sheet
            # the tint is a shade of the page: the palette's text stays readable on it
            assert (lightness(rule.group(1)) < 0.25) if dark else (lightness(rule.group(1)) > 0.85)
    assert callouts.KINDS["danger"].light != callouts.KINDS["info"].light


def test_a_folded_callout_shows_its_title_only_nested_ones_too(tmp_path: Path) -> None:
    html = vault_html(tmp_path)
    first = callouts.folded_at_first(html)
    assert len(first) == 2  # [!tip]- and the nested [!info]-
    shown = callouts.fold(html, first)
    assert "A folded tip" in shown and "Hidden until the title is clicked." not in shown
    assert "Foldable, shown open." in shown  # [!hint]+ is foldable and open
    assert "Nested, folded" in shown and "The outer body." not in shown and "Inner" not in shown
    assert "<!--" not in shown
    tip = next(n for n in first if f"{callouts.CALLOUT_SCHEME}:{n}\"><span class=\"callout-icon\">"
               f"{callouts.KINDS['tip'].icon}" in html)
    opened = callouts.fold(html, first - {tip})
    assert "Hidden until the title is clicked." in opened and "The outer body." not in opened


def test_a_folded_callout_inside_an_open_one_and_inside_a_folded_one() -> None:
    html = render_page("> [!info]+ Outer\n> outer body\n>\n> > [!tip]- Inner\n> > inner body\n>\n"
                       "> after inner\n\nthe end\n", lambda t, s: None)
    assert callouts.folded_at_first(html) == {1}
    first = callouts.fold(html, {1})
    assert "outer body" in first and "Inner" in first and "inner body" not in first
    assert "after inner" in first and "the end" in first
    both = callouts.fold(html, {0, 1})
    assert "Outer" in both and "outer body" not in both and "Inner" not in both and "the end" in both
    assert both.count("<table") == both.count("</table>") == 1
    everything = callouts.fold(html, set())
    assert "inner body" in everything and "<!--" not in everything


def test_a_large_pages_callouts_are_shown_open_without_fold_links() -> None:
    body = "# Big\n\n> [!tip]- Folded\n> The tip's body.\n\n" + "filler words here\n\n" * 800
    chunked = chunk_page(body, lambda t, s: None)
    assert chunked is not None
    first = chunked.render(0)
    assert 'class="callout callout-tip"' in first and "The tip's body." in first
    assert callouts.CALLOUT_SCHEME not in first and "<!--" not in first


def test_a_preview_that_does_not_fold_shows_callouts_open_without_links() -> None:
    html = render_page("> [!tip]- Folded\n> The body.\n", lambda t, s: None, foldable=False)
    assert 'class="callout callout-tip"' in html and "The body." in html
    assert callouts.CALLOUT_SCHEME not in html and "<!--" not in html


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    win = MainWindow(Workspace(write_files(make_wiki(tmp_path / "vault", PAGES)), watch=False),
                     temp_settings(tmp_path))
    qtbot.addWidget(win)
    win.resize(1200, 900)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    yield win
    win.close()


def test_clicking_a_folded_callouts_title_opens_it_and_again_folds_it(window: MainWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    window.open_page((0, PAGE))
    window.show_view("page")
    view = window.page_view
    browser = view.browser
    qtbot.waitUntil(lambda: "A folded tip" in browser.toPlainText(), timeout=10_000)
    hidden = "Hidden until the title is clicked."
    assert hidden not in browser.toPlainText()

    def click_title() -> None:
        cursor = browser.document().find("A folded tip")
        assert not cursor.isNull()
        browser.setTextCursor(cursor)
        browser.ensureCursorVisible()
        rect = browser.cursorRect(cursor)
        at = QPoint(rect.left() - 20, rect.center().y())  # on the title, left of the cursor
        assert browser.anchorAt(at).startswith(f"{callouts.CALLOUT_SCHEME}:")
        viewport = browser.viewport()
        QTest.mouseMove(viewport, at)
        qtbot.wait(20)
        QTest.mousePress(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)

    click_title()
    qtbot.waitUntil(lambda: hidden in browser.toPlainText(), timeout=5_000)
    assert "The outer body." not in browser.toPlainText()  # the other folded one stays folded
    assert window.current == (0, PAGE)  # no navigation: the same page, refolded
    with qtbot.waitSignal(window.ready, timeout=10_000):
        window.rerender_page()  # restyled (zoom, theme) or changed on disk: the folds stay
    assert hidden in browser.toPlainText()
    click_title()
    qtbot.waitUntil(lambda: hidden not in browser.toPlainText(), timeout=5_000)
    click_title()
    qtbot.waitUntil(lambda: hidden in browser.toPlainText(), timeout=5_000)
    with qtbot.waitSignal(window.ready, timeout=10_000):
        window.open_page((0, "Guides/Payments.md"))
    with qtbot.waitSignal(window.ready, timeout=10_000):
        window.open_page((0, PAGE))  # another page in between: opened as written, folded
    assert "A folded tip" in browser.toPlainText() and hidden not in browser.toPlainText()
