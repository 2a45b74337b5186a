"""The duplicate review queue's model and the side-by-side comparison of two pages.

Rows are the dedup engine's :class:`~curator.engine.dedup.index.Family` records in the engine's
order (families joined by their text before name-only pairs, each highest impact first); families the operator skipped in this session go to the end of the
queue. :func:`gather_pair` runs off the GUI thread and builds everything the comparison of the
survivor with one member shows: both pages' metadata, inbound-link counts and an aligned diff of
their bodies as HTML (difflib, line by line, with the changed words inside a changed line marked).
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from curator.engine.corpus import frontmatter
from curator.engine.corpus.lookalike import escape_controls
from curator.engine.dedup.index import Family
from curator.engine.errors import PageNotFound
from curator.models.records import RecordRole, RecordTableModel
from curator.text import plural

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

COL_KEEP, COL_PAGES, COL_SIGNALS, COL_IMPACT = range(4)
HEADERS = ("Keep (suggested)", "Pages", "Signals", "Impact")
__all__ = ["Comparison", "FamilyModel", "RecordRole", "diff_html", "gather_pair", "meta_html", "order_note"]

#: A comparison longer than this many lines per side is cut (the page view shows the rest).
MAX_DIFF_LINES = 3000

REMOVED_BG, REMOVED_STRONG = "#fdecea", "#f5b7b1"
ADDED_BG, ADDED_STRONG = "#e8f6ec", "#a9dfbf"
EMPTY_BG = "#f2f3f4"
CHANGED_META_BG = "#fff3cd"


class FamilyModel(RecordTableModel[Family]):
    headers = HEADERS

    def __init__(self) -> None:
        super().__init__()
        self.skipped: set[str] = set()  # family ids

    @property
    def families(self) -> list[Family]:
        return self.records

    def set_families(self, families: list[Family], skipped: set[str]) -> None:
        if not skipped:  # (a family's id is a digest of its pages: not computed 8,000 times for nothing)
            self.skipped = set()
            self.set_records(list(families))
            return
        ids = [f.id for f in families]
        self.skipped = {i for i in ids if i in skipped}
        # stable: the engine's order (see order_note), skipped families moved to the end
        order = sorted(range(len(families)), key=lambda n: ids[n] in self.skipped)
        self.set_records([families[n] for n in order])

    def row_of(self, pages: set[str] | None) -> int | None:
        """The row of the family sharing the most pages with ``pages`` (None when none does)."""
        if not pages:
            return None
        best = max(range(len(self.records)), key=lambda i: len(pages & set(self.records[i].pages)), default=None)
        return best if best is not None and pages & set(self.records[best].pages) else None

    def cell(self, f: Family, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            signals = " + ".join(f.signals) + ("" if f.strength == "content" else " (names only)")
            return (f.keep, str(len(f.pages)), signals, f"{f.impact:.1f}")[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            scores = ", ".join(f"{k} {v:.2f}" for k, v in f.scores.items())
            return f"{f.reason}\nmerge: {', '.join(f.merges)}\nscores: {scores}"
        if role == Qt.ItemDataRole.ForegroundRole and self.skipped and f.id in self.skipped:
            return QBrush(QColor("#999999"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_PAGES, COL_IMPACT):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def order_note(families: list[Family]) -> str:
    """What the queue's order is, said after its count: the engine ranks text copies above
    name-only pairs whatever their impact, so "highest impact first" alone would be untrue when
    both kinds are listed (a 5.8 copy above a 15.3 name match)."""
    if len(families) < 2:
        return ""
    if len({f.strength for f in families}) > 1:
        return ", copies of the text first, then name-only pairs; each highest impact first"
    return ", highest impact first"


# --- the comparison ---------------------------------------------------------------------------

@dataclass(slots=True)
class Side:
    path: str
    title: str
    layer: str
    trust: float
    tags: list[str]
    aliases: list[str]
    created: str
    updated: str
    inbound: int
    body: str

    def fields(self) -> list[tuple[str, str]]:
        return [("Title", self.title), ("Path", self.path), ("Layer", self.layer),
                ("Trust", f"{self.trust:.2f}"), ("Tags", ", ".join(self.tags) or "—"),
                ("Aliases", ", ".join(self.aliases) or "—"), ("Created", self.created or "—"),
                ("Updated", self.updated or "—"), ("Inbound links", str(self.inbound))]


@dataclass(slots=True)
class Comparison:
    left: Side
    right: Side
    html: str  # the aligned diff of the two bodies
    identical: float  # share of lines the two bodies have in common (0..1)


def page_side(wiki: Wiki, path: str) -> Side:
    """One side of a comparison: the page read alone, and its inbound count from the link index
    around it (the wiki's, when built): asked for the whole index, the first comparison a station
    showed decoded every page and resolved every link (216 MB at 32,000 pages, 1.5 GB at 300,000)."""
    page = wiki.page(path)
    if page is None:
        raise PageNotFound(f"no page {path} (moved or deleted)")
    text = wiki.read_text(path)
    inbound = wiki.links_around(path).inbound(path)
    return Side(path=path, title=page.title, layer=page.layer, trust=page.trust, tags=list(page.tags),
                aliases=list(page.aliases), created=page.created or "", updated=page.updated or "",
                inbound=inbound, body=frontmatter.split(text).body)


def gather_pair(wiki: Wiki, left: str, right: str) -> Comparison:
    """Both pages and their aligned diff (runs off the GUI thread)."""
    a, b = page_side(wiki, left), page_side(wiki, right)
    table, ratio = diff_html(a.body, b.body)
    return Comparison(a, b, table, ratio)


def meta_html(side: Side, other: Side | None) -> str:
    """A page's metadata as a small table; fields that differ from the other page are marked."""
    theirs = dict(other.fields()) if other is not None else {}
    rows = []
    for name, value in side.fields():
        differs = name in theirs and theirs[name] != value and name != "Path"
        marked = (f'<span style="background-color:{CHANGED_META_BG}; color:#1b1b1b;">{_shown(value)}</span>'
                  if differs else _shown(value))
        rows.append(f'<tr><td style="color:#555555; padding-right:8px;">{name}</td><td>{marked}</td></tr>')
    return f'<table cellspacing="0" cellpadding="1">{"".join(rows)}</table>'


def _shown(text: str) -> str:
    """``text`` for the comparison's HTML: escaped, and a bidirectional or invisible character
    shown as ``<U+XXXX>`` (the operator decides which copy stays on what is really there)."""
    return html.escape(escape_controls(text))


_WORD = re.compile(r"\s+|\w+|[^\w\s]")


#: Two paired lines sharing less than this (word ratio) are different lines: marking every word
#: of them would only add noise, so they keep the plain removed/added colours.
WORD_MARK_MIN_RATIO = 0.4


def _words_marked(a: str, b: str) -> tuple[str, str]:
    """Two versions of a line with the words that differ marked on each side."""
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    if matcher.ratio() < WORD_MARK_MIN_RATIO:
        return _shown(a), _shown(b)
    left: list[str] = []
    right: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        sa, sb = _shown("".join(wa[i1:i2])), _shown("".join(wb[j1:j2]))
        if tag == "equal":
            left.append(sa)
            right.append(sb)
            continue
        if sa:
            left.append(f'<span style="background-color:{REMOVED_STRONG};">{sa}</span>')
        if sb:
            right.append(f'<span style="background-color:{ADDED_STRONG};">{sb}</span>')
    return "".join(left), "".join(right)


def _cell(content: str, bg: str | None, number: int | None) -> str:
    colour = f' bgcolor="{bg}"' if bg else ""
    num = f'<td width="4%" align="right" style="color:#999999;"{colour}>{number}</td>' if number else \
        f'<td width="4%"{colour}></td>'
    ink = " color:#1b1b1b;" if bg else ""  # dark text on the light diff colours, in a dark theme too
    return f'{num}<td width="46%" style="white-space: pre-wrap;{ink}"{colour}>{content}</td>'


def diff_html(a: str, b: str, context: int | None = None) -> tuple[str, float]:
    """The two texts side by side, aligned line by line: removed on the left in red, added on the
    right in green, changed lines paired with the changed words marked. With ``context``, a run of
    unchanged lines longer than that around the changes is folded into one "… unchanged" row.
    Returns (html, ratio)."""
    la, lb = a.splitlines()[:MAX_DIFF_LINES], b.splitlines()[:MAX_DIFF_LINES]
    matcher = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    rows: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            keep = range(i2 - i1)
            if context is not None and i2 - i1 > 2 * context + 1:
                head = context if i1 > 0 else 0
                tail = context if i2 < len(la) else 0
                for k in range(head):
                    text = _shown(la[i1 + k])
                    rows.append(_cell(text, None, i1 + k + 1) + _cell(text, None, j1 + k + 1))
                folded = f'<i style="color:#777777;">… {plural(i2 - i1 - head - tail, "unchanged line")} …</i>'
                rows.append(_cell(folded, EMPTY_BG, None) + _cell(folded, EMPTY_BG, None))
                keep = range(i2 - i1 - tail, i2 - i1)
            for k in keep:
                text = _shown(la[i1 + k])
                rows.append(_cell(text, None, i1 + k + 1) + _cell(text, None, j1 + k + 1))
            continue
        n = max(i2 - i1, j2 - j1)
        for k in range(n):
            i, j = i1 + k, j1 + k
            has_a, has_b = i < i2, j < j2
            if has_a and has_b:
                left, right = _words_marked(la[i], lb[j])
            else:
                left = _shown(la[i]) if has_a else ""
                right = _shown(lb[j]) if has_b else ""
            rows.append(_cell(left, REMOVED_BG if has_a else EMPTY_BG, i + 1 if has_a else None)
                        + _cell(right, ADDED_BG if has_b else EMPTY_BG, j + 1 if has_b else None))
    same = sum(block.size for block in matcher.get_matching_blocks())
    ratio = 2 * same / (len(la) + len(lb)) if la or lb else 1.0
    cut = len(a.splitlines()) > MAX_DIFF_LINES or len(b.splitlines()) > MAX_DIFF_LINES
    note = f"<p><i>Only the first {MAX_DIFF_LINES:,} lines are compared.</i></p>" if cut else ""
    table = ('<table width="100%" cellspacing="0" cellpadding="2" style="border-collapse: collapse;">'
             + "".join(f"<tr>{r}</tr>" for r in rows) + "</table>")
    return f"<html><body>{table}{note}</body></html>", ratio
