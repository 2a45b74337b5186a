"""Markdown to HTML for the page view (markdown-it-py: CommonMark + tables, task lists, strikethrough).

Wikilinks become ``curator:`` links the view navigates itself; links to pages not yet written get
``curator-missing:`` and a distinct style. Embeds are shown as Obsidian shows them: an image file
inline (``![[shot.png|240]]`` at 240 px, loaded by the view from inside the wiki only), a page or
its section (``![[Page#Heading]]``, ``![[Page#^block]]``) transcluded as a quoted block, nested at
most :data:`MAX_EMBED_DEPTH` deep and never into itself. Callouts (``> [!tip]-``) are boxes
with an icon, a title and a colour, foldable (see :mod:`curator.views.page.callouts`). Raw HTML in pages is not rendered (it is
shown as text), and the view refuses to load remote resources, so a page can never fetch anything.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin

from curator.engine.corpus import frontmatter, markdown_scan
from curator.views.page import callouts

if TYPE_CHECKING:
    from curator.engine.read.reading import Embedded

_CHECKED = re.compile(r'<input class="task-list-item-checkbox" checked="checked"[^>]*>')
_UNCHECKED = re.compile(r'<input class="task-list-item-checkbox"[^>]*>')

PAGE_SCHEME = "curator"
MISSING_SCHEME = "curator-missing"

#: Resolves a wikilink target written on a page (target, that page's path) to a page path, or
#: None when it is not yet written (or names a file).
Resolver = Callable[[str, str], "str | None"]
#: What ``![[target#anchor]]`` on a page shows (target, anchor, that page's path), or None.
Embedder = Callable[[str, "str | None", str], "Embedded | None"]
#: Marks an embed shown as a link and a link to a file: a character every common UI font has
#: (the paperclip emoji was a missing-glyph box without an emoji font).
EMBED_GLYPH = "↳"
MAX_EMBED_DEPTH = 3  # page embeds inside embedded pages, at most this deep
MAX_EMBEDS = 40  # page embeds expanded per rendered page; the rest stay links
_SIZE = re.compile(r"^(\d{1,4})(?:x(\d{1,4}))?$")
_SIZE_TITLE = "curator-size:"

_md: MarkdownIt | None = None


def _parser() -> MarkdownIt:
    global _md
    if _md is None:
        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])
        md.use(tasklists_plugin, enabled=False)
        md.use(callouts.callouts_plugin)
        default_link_open = md.renderer.rules.get("link_open")  # type: ignore[attr-defined]  # RendererHTML has rules; the protocol does not say so

        def link_open(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
            token = tokens[idx]
            href = str(token.attrGet("href") or "")
            if href.startswith(f"{MISSING_SCHEME}:"):
                token.attrSet("style", "color:#c0392b; text-decoration: underline dotted;")
                token.attrSet("title", "not yet written")
            elif href.startswith(f"{PAGE_SCHEME}:"):
                token.attrSet("style", "text-decoration: none;")
            if default_link_open is not None:
                return default_link_open(tokens, idx, options, env)
            return renderer.renderToken(tokens, idx, options, env)

        md.add_render_rule("link_open", link_open)

        def image(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
            token = tokens[idx]
            title = str(token.attrGet("title") or "")
            if title.startswith(_SIZE_TITLE):  # ![[shot.png|240x120]]: the size, not a title
                width, _, height = title[len(_SIZE_TITLE):].partition("x")
                token.attrs.pop("title", None)
                token.attrSet("width", width)
                if height:
                    token.attrSet("height", height)
            return renderer.image(tokens, idx, options, env)

        md.add_render_rule("image", image)
        _md = md
    return _md


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


class _Embeds:
    """The state of one rendering: how many page embeds were expanded so far."""

    def __init__(self, embed: Embedder | None, host: str) -> None:
        self.embed = embed
        self.host = host  # the page shown: image paths are relative to its folder
        self.expanded = 0


def wikilinks_to_markdown(body: str, resolve: Resolver, embed: Embedder | None = None, path: str = "",
                          *, _state: _Embeds | None = None, _stack: tuple[str, ...] = ()) -> str:
    """Rewrite ``[[target#anchor|alias]]`` (outside code) on the page at ``path`` into markdown the
    view understands; with ``embed``, ``![[...]]`` shows the image or transcludes the page."""
    body = markdown_scan.reading_view(body)
    code_free = markdown_scan.strip_code(body)
    if "[[" not in code_free:
        return body
    state = _state or _Embeds(embed, path)
    out: list[str] = []
    last = 0
    for m in markdown_scan.WIKILINK.finditer(code_free):
        target, anchor, alias = markdown_scan.split_wikilink(m.group(2))
        if not target:
            continue
        out.append(body[last : m.start()])
        last = m.end()
        shown = None
        if state.embed is not None and (m.group(1) or markdown_scan.is_attachment_target(target)):
            shown = _embed(state, target, anchor, alias, path, resolve, bool(m.group(1)), _stack)
        out.append(shown if shown is not None else _link(target, anchor, alias, resolve(target, path),
                                                         bool(m.group(1))))
    out.append(body[last:])
    return "".join(out)


def _link(target: str, anchor: str | None, alias: str | None, page: str | None, embed: bool,
          note: str = "") -> str:
    label = markdown_scan.display_label(target, anchor, alias)
    if page is None:
        href = f"{MISSING_SCHEME}:{quote(target)}"
    else:
        href = f"{PAGE_SCHEME}:{quote(page)}" + (f"#{quote(anchor)}" if anchor else "")
    prefix = f"{EMBED_GLYPH} " if embed else ""
    return f"[{prefix}{_escape_label(label)}{note}](<{href}>)"


def _rebase_images(text: str, page: str, host: str) -> str:
    """``text`` of ``page`` with its relative markdown images (``![](shot.png)``) made relative to
    the folder of ``host``, the page shown (the view resolves images from there)."""
    if "![" not in text or posixpath.dirname(page) == posixpath.dirname(host):
        return text
    code_free = markdown_scan.strip_code(text)
    out: list[str] = []
    last = 0
    for m in markdown_scan.MDLINK.finditer(code_free):
        href = m.group(3)
        if not m.group(1) or markdown_scan._SCHEME.match(href) or href.startswith(("#", "/")):
            continue
        full = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(href)))
        out.append(text[last:m.start(3)])
        out.append(quote(posixpath.relpath(full, posixpath.dirname(host) or ".")))
        last = m.end(3)
    out.append(text[last:])
    return "".join(out)


def _embed(state: _Embeds, target: str, anchor: str | None, alias: str | None, path: str,
           resolve: Resolver, is_embed: bool, stack: tuple[str, ...]) -> str | None:
    """The markdown an embed (or a link to a file) shows, or None for a plain link."""
    assert state.embed is not None
    hit = state.embed(target, anchor, path)
    if hit is None:
        return None
    if hit.file:  # an attachment
        name = _escape_label(alias if alias and not _SIZE.match(alias) else hit.title)
        if not (is_embed and hit.image):
            return f"{EMBED_GLYPH} *{name}*"
        rel = posixpath.relpath(hit.path, posixpath.dirname(state.host) or ".")
        size = _SIZE.match(alias or "")
        title = f' "{_SIZE_TITLE}{size.group(1)}' + (f"x{size.group(2)}" if size.group(2) else "") + '"' \
            if size else ""
        return f"![{name}](<{quote(rel)}>{title})"
    if not is_embed:
        return None
    if hit.path in stack or hit.path == state.host:
        return _link(target, anchor, alias, hit.path, True, " (embedded in itself: not repeated)")
    if len(stack) >= MAX_EMBED_DEPTH or state.expanded >= MAX_EMBEDS:
        return _link(target, anchor, alias, hit.path, True, " (not expanded: too many nested embeds)")
    if hit.text is None:
        return _link(target, anchor, alias, hit.path, True, " (no such section)")
    state.expanded += 1
    inner = wikilinks_to_markdown(_rebase_images(hit.text, hit.path, state.host), resolve, state.embed,
                                  hit.path, _state=state, _stack=(*stack, hit.path))
    href = f"{PAGE_SCHEME}:{quote(hit.path)}" + (f"#{quote(anchor)}" if anchor else "")
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in inner.split("\n"))
    return f"\n\n> [**▸ {_escape_label(alias or hit.title)}**](<{href}>)\n>\n{quoted}\n\n"


def page_style(zoom: int = 100, dark: bool = False) -> str:
    """The rendered page's style sheet at ``zoom`` percent, for a light or a dark palette (the
    view's text and background colours come from the palette; these are the page's own)."""
    z = zoom / 100

    def px(n: int) -> str:
        return f"{max(6, round(n * z))}px"

    quote_bg, rule, code_bg = ("#2b3036", "#5c6670", "#2a2d31") if dark else ("#f4f6f8", "#999999", "#f2f2f2")
    link = "#6cb6ff" if dark else "#1f5fa8"
    return f"""
body {{ font-size: {px(14)}; }}
h1 {{ font-size: {px(22)}; }} h2 {{ font-size: {px(18)}; }} h3 {{ font-size: {px(16)}; }}
a {{ color: {link}; }}
code {{ font-family: monospace; background-color: {code_bg}; }}
pre {{ font-family: monospace; padding: 6px; background-color: {code_bg}; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid {rule}; padding: 3px 6px; }}
blockquote {{ margin-left: 12px; padding-left: 8px; background-color: {quote_bg}; }}
{callouts.style(dark)}"""


#: The light style at the normal size (views that do not follow the zoom or the theme).
STYLE = page_style()


def render_page(text: str, resolve: Resolver, embed: Embedder | None = None, path: str = "", *,
                foldable: bool = True) -> str:
    """Full HTML of the text of the page at ``path``: frontmatter left out (the side panel shows
    it), links mapped, embeds shown when ``embed`` is given. Foldable callouts carry markers:
    :func:`~curator.views.page.callouts.fold` makes the HTML shown (all open unless folded);
    without ``foldable`` (a preview that does not fold) they are shown open, titles not links."""
    parts = frontmatter.split(text)
    body = parts.body if parts.raw is not None else text
    html_body = _parser().render(wikilinks_to_markdown(body, resolve, embed, path), {"callouts_foldable": foldable})
    # Qt's rich text has no form controls: show task boxes as characters.
    html_body = _CHECKED.sub("☑", _UNCHECKED.sub("☐", html_body))
    # no <style> here: the view's default style sheet (zoom, theme) applies (see page_style)
    return f"<html><body>{html_body}</body></html>"


def render_message(title: str, message: str) -> str:
    return (f"<html><body><h2>{html.escape(title)}</h2>"
            f"<p>{html.escape(message)}</p></body></html>")


# --- large pages: rendered in bounded chunks --------------------------------------------------------
#
# Qt's rich text costs about 6 µs per character to lay out and far more per table cell (a 3,000 x
# 40 table took a minute; one 10 MB word blocked for minutes). A page whose cost is above
# LARGE_PAGE_COST is cut into chunks of at most CHUNK_COST (blocks kept whole where they fit, a
# long table repeated with its header, lines over MAX_DISPLAY_LINE shown broken), and the
# page view renders and inserts one chunk per event-loop turn: the GUI thread is never held for
# more than one chunk.

CELL_COST = 60  # one table cell costs about as much as 60 characters of text
CHUNK_COST = 3000
LARGE_PAGE_COST = 8000
MAX_DISPLAY_LINE = 1000
#: What a large page shows before "Show all": its first PREVIEW_BYTES of text.
PREVIEW_BYTES = 256 * 1024

_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_THEAD = re.compile(r"<thead>.*?</thead>", re.DOTALL)


def cost(text: str) -> int:
    """Estimated layout cost of markdown text (characters, plus table cells weighted)."""
    return len(text) + CELL_COST * text.count("|")


@dataclass(slots=True)
class ChunkedPage:
    """A large page, to be rendered chunk by chunk on the GUI thread (see :func:`chunk_page`)."""

    chunks: list[str]  # markdown pieces, each of bounded cost
    sizes: list[int]  # bytes of the page each chunk covers
    total_bytes: int
    links: dict[str, str | None] = field(default_factory=dict)  # resolved wikilink targets
    continued: set[int] = field(default_factory=set)  # chunks that go on with the table before

    def resolve(self, target: str, _source: str = "") -> str | None:
        from curator.engine.corpus.page import link_key

        return self.links.get(link_key(target))

    def render(self, index: int) -> str:
        """The HTML fragment of chunk ``index`` (a table's continuation without its repeated header)."""
        out = render_fragment(self.chunks[index], self.resolve)
        if index in self.continued:
            out = _THEAD.sub("", out, count=1)
        return out


def render_fragment(markdown: str, resolve: Resolver) -> str:
    # (callouts numbered per chunk would clash: a large page's callouts are shown open, unfoldable)
    out = _parser().render(wikilinks_to_markdown(markdown, resolve), {"callouts_foldable": False})
    return _CHECKED.sub("☑", _UNCHECKED.sub("☐", out))


#: A line longer than MAX_DISPLAY_LINE is shown as lines of this many characters (laying out
#: words wider than the view costs far more, and grows with the page).
BROKEN_LINE = 100


def _display_lines(body: str) -> Iterator[str]:
    for line in body.split("\n"):
        if len(line) <= MAX_DISPLAY_LINE:
            yield line
            continue
        for i in range(0, len(line), BROKEN_LINE):
            yield line[i:i + BROKEN_LINE]


def _blocks(body: str) -> Iterator[list[str]]:
    """Markdown blocks (runs of lines between blank lines; a fenced block kept whole)."""
    block: list[str] = []
    fenced = False
    for line in _display_lines(body):
        if _FENCE_LINE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if block:
                yield block
                block = []
            continue
        block.append(line)
    if block:
        yield block


def _pieces(block: list[str]) -> Iterator[tuple[str, bool]]:
    """A block cut into pieces of at most CHUNK_COST (with whether a piece continues a table):
    a table repeats its header in each piece (dropped again when rendered), a fenced block its
    fence."""
    text = "\n".join(block)
    if cost(text) <= CHUNK_COST:
        yield text, False
        return
    head: list[str] = []
    rows = block
    if len(block) >= 2 and "|" in block[0] and _TABLE_RULE.match(block[1]):
        head, rows = block[:2], block[2:]
    elif _FENCE_LINE.match(block[0]):
        head, rows = block[:1], block[1:]
        if rows and _FENCE_LINE.match(rows[-1]):
            rows = rows[:-1]
    fence = head if head and _FENCE_LINE.match(head[0]) else []
    table = bool(head) and not fence
    budget = max(CHUNK_COST - cost("\n".join(head)), CHUNK_COST // 4)
    piece: list[str] = []
    used = 0
    first = True
    for row in rows:
        c = cost(row) + 1
        if piece and used + c > budget:
            yield "\n".join([*head, *piece, *fence]), table and not first
            piece, used, first = [], 0, False
        piece.append(row)
        used += c
    if piece:
        yield "\n".join([*head, *piece, *fence]), table and not first


def chunk_page(text: str, resolve: Resolver, path: str = "") -> ChunkedPage | None:
    """The page at ``path`` cut into bounded chunks when it is large (None when it renders at
    once), with every wikilink target resolved from it (so the GUI thread renders chunks without
    touching the wiki). Embeds in a large page are shown as links."""
    parts = frontmatter.split(text)
    body = parts.body if parts.raw is not None else text
    if cost(body) <= LARGE_PAGE_COST:
        return None
    chunks: list[str] = []
    sizes: list[int] = []
    continued: set[int] = set()
    current: list[str] = []
    used = 0

    def close() -> None:
        joined = "\n\n".join(current)
        chunks.append(joined)
        sizes.append(len(joined.encode("utf-8", "replace")))

    for block in _blocks(body):
        for piece, continues in _pieces(block):
            c = cost(piece)
            if current and (continues or used + c > CHUNK_COST):
                close()
                current, used = [], 0
            if continues:
                continued.add(len(chunks))
            current.append(piece)
            used += c
    if current:
        close()
    links: dict[str, str | None] = {}
    from curator.engine.corpus.page import link_key

    code_free = markdown_scan.strip_code(body) if "[[" in body else ""
    # (no scan at all without a "[[": one regex call over 10 MB holds the GIL, and so the GUI)
    for m in markdown_scan.WIKILINK.finditer(code_free):
        target = markdown_scan.split_wikilink(m.group(2))[0]
        if target:
            key = link_key(target)
            if key not in links:
                links[key] = resolve(target, path)
    return ChunkedPage(chunks, sizes, len(text.encode("utf-8", "replace")), links, continued)
