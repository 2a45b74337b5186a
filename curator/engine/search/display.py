"""Search hits as people read them: a snippet without its markdown, a score without e-notation.

Only for text shown to a person (the station's results, ``curator search`` text output): JSON and
the MCP server keep the snippet as the page has it and the score as a number.
"""

from __future__ import annotations

import math
import re

# A highlight marker («, ») may sit anywhere inside these (the engine marks matched words), so
# the patterns let them through as ordinary text.
_WIKILINK = re.compile(r"!?\[\[([^\]\[|]*)(?:\|([^\]\[]*))?\]\]")
_MD_LINK = re.compile(r"!?\[([^\]\[]*)\]\([^()\s]*\)")
#: a table's separator row (``|---|:--:|``), which says nothing once the table is one line
_TABLE_RULE = re.compile(r"\|?(?:\s*:?-{3,}:?\s*\|)+(?:\s*:?-{3,}:?\s*)?")
_PIPES = re.compile(r"\s*(?:\|\s*)+")
_EMPHASIS = re.compile(r"\*\*|__|~~")
_HEADING = re.compile(r"(?:^|(?<=\s))#{1,6}\s+")
_CODE = re.compile(r"`+")
_SPACES = re.compile(r"\s{2,}")


def _link_text(m: re.Match[str]) -> str:
    target, shown = m.group(1), m.group(2)
    if shown is not None and shown.strip():
        return shown
    page, _, anchor = target.partition("#")
    anchor = anchor.lstrip("^")
    # as Obsidian shows [[Page#Section]]; a bare [[#Section]] is a section of this page
    return f"{page} > {anchor}" if page and anchor else page or anchor


def plain_snippet(snippet: str) -> str:
    """``snippet`` as plain text: links show the text a reader sees (``[[a|b]]`` → ``b``,
    ``[[a]]`` → ``a``, ``[t](u)`` → ``t``), emphasis, heading and code marks go, table cells are
    separated by `` · ``. Highlight markers stay where they are."""
    text = _WIKILINK.sub(_link_text, snippet)
    text = _MD_LINK.sub(r"\1", text)
    # a snippet's window can cut a link in two: its leftover brackets are noise too
    text = text.replace("[[", "").replace("]]", "")
    text = _TABLE_RULE.sub(" ", text)
    # (a table that follows a sentence starts after its full stop, not after a separator)
    text = re.sub(r"(?<=[.:;!?])\s*(?:\|\s*)+", " ", text)
    text = _PIPES.sub(" · ", text)
    text = _EMPHASIS.sub("", text)
    text = _HEADING.sub("", text)
    text = _CODE.sub("", text)
    text = _SPACES.sub(" ", text).strip()
    # a table's outer pipes leave a separator at either end (or next to the window's "…")
    text = re.sub(r"^(…?)\s*·\s*", r"\1", text)
    text = re.sub(r"\s*·\s*(…?)$", r"\1", text)
    return text


def format_score(score: float) -> str:
    """``score`` to three significant digits in fixed notation (``1.545e-06`` → ``0.00000155``,
    ``1234.5`` → ``1235``): never e-notation, which reads as noise in a list of hits."""
    if not math.isfinite(score):
        return str(score)
    if score == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(abs(score))))
    text = f"{score:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


__all__ = ["format_score", "plain_snippet"]
