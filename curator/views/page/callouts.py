"""Obsidian callouts (``> [!type]+ Title``) for the page view's markdown-it parser.

A blockquote whose first line is ``[!type]`` becomes a callout: a tinted box with the type's
icon and colour and a title (the rest of that line, else the type capitalised). ``+`` or ``-``
after the type makes it foldable, open or closed. markdown-it-py's own alerts know only GitHub's
five types, without titles or folding, hence this core rule.

Qt's rich text cannot hide a block, so folding is done on the HTML: each foldable callout's body
sits between markers and :func:`fold` cuts the bodies of the callouts folded (the page view keeps
the full HTML and folds it again on a click on a title, a ``curator-callout:N`` link). Raw HTML in
pages is escaped, so a page cannot write the markers itself.
"""

from __future__ import annotations

import html
import re
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

CALLOUT_SCHEME = "curator-callout"


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    icon: str  # a symbol the common UI fonts have (emoji were missing-glyph boxes without an emoji font)
    light: str  # Obsidian's accent colours, for a light and a dark page
    dark: str


_BLUE, _CYAN, _GREEN = ("#086ddd", "#027aff"), ("#00bfbc", "#53dfdd"), ("#08b94e", "#44cf6e")
_ORANGE, _RED, _PURPLE, _GREY = ("#ec7500", "#e9973f"), ("#e93147", "#fb464c"), ("#7852ee", "#a882ff"), \
    ("#9e9e9e", "#9e9e9e")

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("note", "✎", *_BLUE),
    Kind("abstract", "☰", *_CYAN),
    Kind("info", "ℹ", *_BLUE),
    Kind("todo", "☑", *_BLUE),
    Kind("tip", "✦", *_CYAN),
    Kind("success", "✔", *_GREEN),
    Kind("question", "?", *_ORANGE),
    Kind("warning", "⚠", *_ORANGE),
    Kind("failure", "✘", *_RED),
    Kind("danger", "⚡", *_RED),
    Kind("bug", "✱", *_RED),
    Kind("example", "≡", *_PURPLE),
    Kind("quote", "❝", *_GREY),
)}

ALIASES = {"summary": "abstract", "tldr": "abstract", "hint": "tip", "important": "tip",
           "check": "success", "done": "success", "help": "question", "faq": "question",
           "caution": "warning", "attention": "warning", "fail": "failure", "missing": "failure",
           "error": "danger", "cite": "quote"}


def kind_of(type_: str) -> Kind:
    """The kind ``[!type]`` names (case-insensitive; an unknown type looks like a note, as in Obsidian)."""
    key = type_.lower()
    return KINDS.get(ALIASES.get(key, key), KINDS["note"])


_HEAD = re.compile(r"^\[!([^\]\s]+)\]([+-]?)(?:[ \t]+(.*))?$")  # (``[!x](url)`` is a link)
_BODY_MARK = re.compile(r"<!--(/?)callout-body:(\d+)-->")
_CHEVRON = re.compile(r"<!--callout-chevron:(\d+)-->")
_FOLDED = re.compile(r"<!--callout-folded:(\d+)-->")
_MARK = re.compile(r"<!--/?callout-[a-z]+:\d+-->")
OPEN_CHEVRON, CLOSED_CHEVRON = "▾", "▸"


def _blend(accent: str, background: str, alpha: float) -> str:
    a, b = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (accent, background))
    return "#" + "".join(f"{round(x * alpha + y * (1 - alpha)):02x}" for x, y in zip(a, b, strict=True))


def style(dark: bool) -> str:
    """The callouts' part of the page style sheet: cells tinted with the accent colour and a bar
    of it on their left, the title in it. The tint is opaque (Qt paints a translucent cell colour
    again behind each run of text), blended over the page's background."""
    background = "#1e1f22" if dark else "#ffffff"  # the dark palette's base (shell.appearance)
    rules = ["table.callout { margin-top: 4px; margin-bottom: 10px; }", "td.callout-title { font-weight: bold; }", "td.callout-title a { text-decoration: none; }"]
    for kind in KINDS.values():
        accent = kind.dark if dark else kind.light
        tint = _blend(accent, background, 0.16 if dark else 0.1)
        rules.append(f"td.callout-{kind.name} {{ background-color: {tint}; border: none; "
                     f"border-left: 3px solid {accent}; }}")
        rules.append(f"td.callout-title-{kind.name}, td.callout-title-{kind.name} a {{ color: {accent}; }}")
    return "\n".join(rules) + "\n"


def callouts_plugin(md: MarkdownIt) -> None:
    """Turn callout blockquotes into callouts (numbered in document order, nested ones too).
    ``env["callouts_foldable"] = False`` renders foldable callouts open, without a fold link
    (a large page rendered chunk by chunk, whose numbers would restart in each chunk)."""
    md.core.ruler.before("inline", "callouts", _core)
    for name, rule in (("callout_open", _render_open), ("callout_title_open", _render_title_open),
                       ("callout_title_close", _render_title_close), ("callout_close", _render_close)):
        md.add_render_rule(name, rule)


def _core(state: StateCore) -> None:
    from markdown_it.token import Token

    tokens = state.tokens
    number = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type != "blockquote_open" or i + 2 >= len(tokens) or tokens[i + 1].type != "paragraph_open":
            i += 1
            continue
        inline = tokens[i + 2]
        first, _, rest = inline.content.partition("\n")
        head = _HEAD.match(first.strip())
        if head is None:
            i += 1
            continue
        close = _matching_close(tokens, i)
        type_, fold, title = head.group(1), head.group(2), (head.group(3) or "").strip()
        kind = kind_of(type_)
        meta = {"kind": kind.name, "number": number, "fold": fold}
        number += 1
        token.type, token.tag, token.meta = "callout_open", "table", meta
        tokens[close].type, tokens[close].tag, tokens[close].meta = "callout_close", "table", meta
        title_inline = Token("inline", "", 0, content=title or type_[:1].upper() + type_[1:].lower(),
                             children=[], map=token.map, level=token.level + 1)
        title_tokens = [Token("callout_title_open", "td", 1, meta=meta, level=token.level + 1),
                        title_inline,
                        Token("callout_title_close", "td", -1, meta=meta, level=token.level + 1)]
        if rest.strip():
            inline.content = rest
            tokens[i + 1:i + 1] = title_tokens
        else:  # the head line was the whole paragraph
            tokens[i + 1:i + 4] = title_tokens
        meta["empty"] = tokens[i + 4].type == "callout_close"  # a title alone: no body row
        i += 1
    state.env["callouts"] = number


def _matching_close(tokens: Sequence[Token], start: int) -> int:
    depth = 0
    for j in range(start, len(tokens)):
        if tokens[j].type == "blockquote_open":
            depth += 1
        elif tokens[j].type == "blockquote_close":
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1  # (markdown-it always closes what it opens)


def _foldable(meta: dict[str, Any], env: MutableMapping[str, Any]) -> bool:
    return bool(meta["fold"]) and env.get("callouts_foldable", True)


def _render_open(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    meta = tokens[idx].meta
    kind = meta["kind"]
    folded = f"<!--callout-folded:{meta['number']}-->" if meta["fold"] == "-" and _foldable(meta, env) else ""
    return (f'{folded}<table class="callout callout-{kind}" data-callout="{kind}" width="100%" '
            f'cellspacing="0" cellpadding="8">\n<tr>')


def _render_title_open(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    meta = tokens[idx].meta
    kind = KINDS[meta["kind"]]
    icon = f'<span class="callout-icon">{html.escape(kind.icon)}</span>&nbsp;&nbsp;'
    cell = f'<td class="callout-{kind.name} callout-title callout-title-{kind.name}">'
    if _foldable(meta, env):
        return f'{cell}<a href="{CALLOUT_SCHEME}:{meta["number"]}">{icon}'
    return cell + icon


def _render_title_close(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    meta = tokens[idx].meta
    if meta["empty"]:
        return "</a></td></tr>\n" if _foldable(meta, env) else "</td></tr>\n"
    if _foldable(meta, env):
        n = meta["number"]
        return f'&nbsp;&nbsp;<!--callout-chevron:{n}--></a></td></tr>\n<!--callout-body:{n}--><tr><td class="callout-{meta["kind"]}">\n'
    return f'</td></tr>\n<tr><td class="callout-{meta["kind"]}">\n'


def _render_close(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
    meta = tokens[idx].meta
    if meta["empty"]:
        return "</table>\n"
    if _foldable(meta, env):
        return f"</td></tr><!--/callout-body:{meta['number']}-->\n</table>\n"
    return "</td></tr>\n</table>\n"


def folded_at_first(page_html: str) -> set[int]:
    """The callouts of rendered HTML written folded (``[!type]-``)."""
    return {int(n) for n in _FOLDED.findall(page_html)}


def fold(page_html: str, folded: set[int]) -> str:
    """``page_html`` with the bodies of the ``folded`` callouts cut (their titles kept) and the
    markers gone."""
    if "<!--callout-" not in page_html:
        return page_html
    # one pass (a pass per folded callout took 160 ms on a page of 400): outside a folded body,
    # text is kept; inside one, everything up to its own end marker is cut (nested ones with it)
    parts: list[str] = []
    last = 0
    cutting: str | None = None
    for m in _BODY_MARK.finditer(page_html):
        closing, number = m.group(1) == "/", m.group(2)
        if cutting is None:
            if not closing and int(number) in folded:
                parts.append(page_html[last:m.start()])
                cutting = number
        elif closing and number == cutting:
            cutting = None
            last = m.end()
    parts.append(page_html[last:] if cutting is None else "")
    out = "".join(parts)
    out = _CHEVRON.sub(lambda m: CLOSED_CHEVRON if int(m.group(1)) in folded else OPEN_CHEVRON, out)
    return _MARK.sub("", out)
