"""Markdown to HTML for the page view (markdown-it-py: CommonMark + tables, task lists, strikethrough).

Wikilinks become ``curator:`` links the view navigates itself; links to pages not yet written get
``curator-missing:`` and a distinct style. Raw HTML in pages is not rendered (it is shown as
text), and the view refuses to load remote resources, so a page can never fetch anything.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from urllib.parse import quote

from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin

from curator.engine import frontmatter, markdown_scan

_CHECKED = re.compile(r'<input class="task-list-item-checkbox" checked="checked"[^>]*>')
_UNCHECKED = re.compile(r'<input class="task-list-item-checkbox"[^>]*>')

PAGE_SCHEME = "curator"
MISSING_SCHEME = "curator-missing"

#: Resolves a wikilink target to a page path, or None when it is not yet written.
Resolver = Callable[[str], "str | None"]

_md: MarkdownIt | None = None


def _parser() -> MarkdownIt:
    global _md
    if _md is None:
        md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
        md.enable(["table", "strikethrough"])
        md.use(tasklists_plugin, enabled=False)
        default_link_open = md.renderer.rules.get("link_open")

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
        _md = md
    return _md


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def wikilinks_to_markdown(body: str, resolve: Resolver) -> str:
    """Rewrite ``[[target#anchor|alias]]`` (outside code) into markdown links the view understands."""
    code_free = markdown_scan.strip_code(body)
    if "[[" not in code_free:
        return body
    out: list[str] = []
    last = 0
    for m in markdown_scan.WIKILINK.finditer(code_free):
        target, anchor, alias = markdown_scan.split_wikilink(m.group(2))
        if not target:
            continue
        label = alias or (f"{target} › {anchor}" if anchor else target)
        path = resolve(target)
        if path is None:
            href = f"{MISSING_SCHEME}:{quote(target)}"
        else:
            href = f"{PAGE_SCHEME}:{quote(path)}" + (f"#{quote(anchor)}" if anchor else "")
        prefix = "📎 " if m.group(1) else ""
        out.append(body[last : m.start()])
        out.append(f"[{prefix}{_escape_label(label)}](<{href}>)")
        last = m.end()
    out.append(body[last:])
    return "".join(out)


STYLE = """
body { font-size: 14px; }
h1 { font-size: 22px; } h2 { font-size: 18px; } h3 { font-size: 16px; }
code { font-family: monospace; }
pre { font-family: monospace; padding: 6px; }
table { border-collapse: collapse; }
th, td { border: 1px solid #999999; padding: 3px 6px; }
blockquote { margin-left: 12px; padding-left: 8px; }
"""


def render_page(text: str, resolve: Resolver) -> str:
    """Full HTML of a page's text: frontmatter left out (the side panel shows it), links mapped."""
    parts = frontmatter.split(text)
    body = parts.body if parts.raw is not None else text
    html_body = _parser().render(wikilinks_to_markdown(body, resolve))
    # Qt's rich text has no form controls: show task boxes as characters.
    html_body = _CHECKED.sub("☑", _UNCHECKED.sub("☐", html_body))
    return f"<html><head><style>{STYLE}</style></head><body>{html_body}</body></html>"


def render_message(title: str, message: str) -> str:
    return (f"<html><body><h2>{html.escape(title)}</h2>"
            f"<p>{html.escape(message)}</p></body></html>")
