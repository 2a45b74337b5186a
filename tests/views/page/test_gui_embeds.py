"""Embeds in the page view (docs/design.md §3): local images inline (only from inside the wiki, never
remote), pages and sections transcluded, depth-limited and cycle-safe."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.read.reading import embedded
from curator.engine.wiki import Wiki
from curator.views.page.page_view import PLACEHOLDER_KEY
from curator.views.page.render import MAX_EMBED_DEPTH, render_page
from curator.views.shell.main_window import MainWindow, gather_page
from curator.views.workspace import Workspace
from tests.gui_helpers import make_wiki, temp_settings
from tests.obsidian_vault import PAGES, build, write_files


def station_vault(tmp_path: Path) -> Path:
    """The Obsidian fixture vault as a git repository the station opens."""
    return write_files(make_wiki(tmp_path / "vault", PAGES))


def html_of(wiki: Wiki, path: str) -> str:
    links = wiki.links
    return render_page(wiki.read_text(path), lambda t, s: links.resolve(t, s).path,
                       lambda t, a, s: embedded(wiki, t, a, s), path)


def test_images_inline_and_sections_transcluded(tmp_path: Path) -> None:
    wiki = Wiki(build(tmp_path / "vault"))
    html = html_of(wiki, "Guides/Transclusion demo.md")
    # the image from another folder, relative to the page's folder, at the size asked for
    assert '<img src="../Attachments/web-clipper-kde.png" alt="web-clipper-kde.png" width="320"' in html
    # the French section, and only it: its list, not the Chinese section or the next heading
    assert "<blockquote>" in html and "Étape 2 — Vérifier (FR)</h2>" in html
    assert "the supplier is on the approved list" in html
    assert "发票核对" not in html and "Étape 3" not in html and "a listed step" not in html
    # the block embed shows the paragraph without its ^id marker
    assert "<p>Pay within three days.</p>" in html and "days. ^pay-rule" not in html
    # a missing image is a link to something not there; a PDF link names the file
    start = html_of(wiki, "Getting started/Start here.md")
    assert "curator-missing:missing-shot.png" in start and "<em>Manual.pdf</em>" in start
    assert 'width="240"' in start


def test_a_transcluded_pages_own_images_load_relative_to_the_page_shown(tmp_path: Path) -> None:
    root = tmp_path / "w"
    for rel, text in {"a/host.md": "![[b/guest]]\n", "b/guest.md": "# Guest\n\n![pic](img/p.png) "
                      "![remote](https://example.com/r.png) `![code](img/p.png)`\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    html = html_of(Wiki(root), "a/host.md")
    assert 'src="../b/img/p.png"' in html and 'src="https://example.com/r.png"' in html
    assert "<code>![code](img/p.png)</code>" in html


def test_transclusion_is_cycle_safe_and_depth_limited(tmp_path: Path) -> None:
    root = tmp_path / "w"
    pages = {"a.md": "# A\n\nA says ![[b]]\n", "b.md": "# B\n\nB says ![[a]] and ![[b]]\n",
             **{f"d{i}.md": f"# D{i}\n\nlevel {i} ![[d{i + 1}]]\n" for i in range(MAX_EMBED_DEPTH + 3)},
             "remote.md": "![[https://example.com/x.png]] ![](https://example.com/y.png)\n"}
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    wiki = Wiki(root)
    html = html_of(wiki, "a.md")
    assert html.count("B says") == 1 and "embedded in itself: not repeated" in html
    deep = html_of(wiki, "d0.md")
    assert f"level {MAX_EMBED_DEPTH}" in deep and f"level {MAX_EMBED_DEPTH + 1}" not in deep
    assert "too many nested embeds" in deep
    remote = html_of(wiki, "remote.md")  # an embed never turns a remote address into an image
    assert 'src="https://example.com/x.png"' not in remote and "curator-missing:" in remote


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    from curator.views.graph.graph_view import GraphView

    win = MainWindow(Workspace(station_vault(tmp_path), watch=False), temp_settings(tmp_path))
    win.add_view("graph", GraphView(win), "Graph")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    yield win
    win.close()


def test_the_page_view_loads_wiki_images_from_other_folders_and_nothing_else(window: MainWindow,
                                                                              qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    wiki = window.workspace.wiki(0)
    root = wiki.root
    _page, _text, html, info = gather_page(wiki, "Guides/Transclusion demo.md")
    assert '<img src="../Attachments/web-clipper-kde.png"' in html
    # the image is shown, not listed as an outgoing link to a page not yet written
    assert [target for target, _, _ in info.outgoing] == ["Payments"]
    window.open_page((0, "Guides/Transclusion demo.md"))
    browser = window.page_view.browser
    qtbot.waitUntil(lambda: "Transclusion demo" in browser.toPlainText(), timeout=10_000)
    assert browser.base_dir == root / "Guides" and browser.root == root
    image = int(QTextDocument.ResourceType.ImageResource)
    shown = browser.loadResource(image, QUrl("../Attachments/web-clipper-kde.png"))
    assert shown.text(PLACEHOLDER_KEY) == "" and not shown.isNull()  # the picture itself
    assert browser.loadResource(image, QUrl("https://example.com/tracker.png")).text(PLACEHOLDER_KEY)
    (root.parent / "outside.png").write_bytes((root / "Attachments/diagram.png").read_bytes())
    assert "outside" in browser.loadResource(image, QUrl("../../outside.png")).text(PLACEHOLDER_KEY)
    assert "Check the invoice against the purchase order" in browser.toPlainText()


def test_the_graph_view_shows_attachments_as_a_toggle(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from curator.views.graph.graph_view import GraphView

    graph = window.view_index["graph"]
    assert isinstance(graph, GraphView)
    with qtbot.waitSignal(graph.content_ready, timeout=15_000):
        window.show_view("graph")

    def shown() -> set[str]:
        assert graph.data is not None
        return {graph.data.ids[i] for i in graph._shown_index}

    assert not graph.attachments.isChecked()
    assert "Guides/Payments.md" in shown() and not any(i.startswith("attachment:") for i in shown())
    with qtbot.waitSignal(graph.content_ready, timeout=15_000):
        graph.attachments.setChecked(True)
    qtbot.waitUntil(lambda: "attachment:Attachments/diagram.png" in shown(), timeout=15_000)
    assert {"attachment:Attachments/web-clipper-kde.png", "attachment:Planning.canvas"} <= shown()
    assert graph.data is not None
    i = graph.data.ids.index("attachment:Attachments/diagram.png")
    assert graph.data.layers[i] == "attachment" and graph.data.labels[i] == "diagram.png"
    graph.attachments.setChecked(False)
    qtbot.waitUntil(lambda: not any(i.startswith("attachment:") for i in shown()), timeout=15_000)
