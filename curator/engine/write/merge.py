"""Merging duplicates into the page that stays, losing nothing (docs/design.md §9), and its preview.

``merge_pages(wiki, keep, merge, *more, actor)`` runs as ONE action (``merge: <merge> into <keep>``):

* a merged page's text is cut into units (:func:`units`): a ``- `` bullet with its continuation
  lines and nested sub-bullets is one unit, every other block (paragraph, table, code, quote,
  list) is one unit, headings (ATX or setext, as the renderer reads them) are units of their own;
* the bullets of its fact log (before any section, or in ``## Updates``) are added to ``keep``'s
  ``## Updates`` through append's fact dedup (:func:`~curator.engine.corpus.facts.matching_fact`), one by one (a
  bullet added counts for the next); a bullet declined as a duplicate is listed with the bullet
  it matched;
* everything else goes under ``## From <merged title>`` at the end of ``keep``, in its order,
  headings demoted one level (at least to ``###``): prose, tables, code, and whole headed sections
  with their bullets (a bullet there that ``keep`` already states is dropped and listed, an exact
  block ``keep`` already has is not repeated); noise is not content: a heading with nothing left
  under it is not written, a table ``keep`` has under the same header gets only the rows it
  lacks, a paragraph cut short where ``keep`` has it whole is not written again (a longer one
  replaces ``keep``'s);
* a **conservation check** (:func:`check_conservation`) then proves that every content line of
  every input is in the result (compared as a person reads it: links by the text they show),
  belongs to a deduplicated bullet, or is a copy cut short standing word for word in the result
  (a heading counts for the lines under it); otherwise :class:`~curator.engine.write.actions.Invalid` names the line and
  nothing is written;
* ``tags`` (as declared in frontmatter), ``related`` and ``aliases`` are united; the merged
  pages' slugs and titles become aliases of ``keep``;
* every link to a merged page anywhere is re-pointed at ``keep`` showing the same text as before
  (:mod:`curator.engine.write.relink`: wikilinks, embeds, markdown links, ``related:``, frontmatter property links;
  code untouched); a link that would make ``keep`` link to itself becomes its display text;
* the merged pages move to ``_archive/`` (nothing is deleted); one commit, so ``curator undo``
  restores every file byte for byte.

:func:`plan_merge` computes all of it without writing; :func:`preview_merge` shows that plan and
:func:`merge_pages` applies that same plan inside the action: what the preview shows (the exact
resulting text of ``keep``) is what is committed.
"""

from __future__ import annotations

import datetime as _dt
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from curator.engine.corpus import frontmatter, markdown_scan
from curator.engine.corpus.facts import insert_bullet, matching_fact
from curator.engine.corpus.page import Page
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import (
    ARCHIVE_DIR,
    ActionContext,
    ActionResult,
    Invalid,
    require_write,
    run_action,
)
from curator.engine.write.relink import (
    LinkRewrite,
    Retarget,
    display_form,
    entry_target,
    frontmatter_links,
    related_entries,
    rewrite_page,
)

__all__ = ["LinkRewrite", "MergePlan", "Unit", "check_conservation", "merge_pages", "plan_merge",
           "preview_merge", "units"]

Reader = Callable[[str], tuple[str, bool]]  # path -> (text without BOM, had BOM)

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# (a closing run of ``#`` needs a space before it, as CommonMark reads it: "## C#" is about C#)
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_UPDATES = re.compile(r"^updates$", re.IGNORECASE)
_BULLET_START = re.compile(r"^- ")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


# --- units of a page body -------------------------------------------------------------------------

@dataclass(slots=True)
class Unit:
    kind: str  # heading | bullet | block
    lines: list[str]  # as written (no line endings)
    start: int  # 0-based line index in the body
    level: int = 0  # heading level
    text: str = ""  # heading text

    @property
    def source(self) -> str:
        return "\n".join(self.lines)


def _fence_end(lines: list[str], i: int) -> int:
    """Index just past the fenced code block opening at ``lines[i]`` (to the end if unclosed)."""
    m = _FENCE_OPEN.match(lines[i])
    assert m is not None
    run = m.group(1)
    for j in range(i + 1, len(lines)):
        close = _FENCE_OPEN.match(lines[j])
        if close and close.group(1)[0] == run[0] and len(close.group(1)) >= len(run) and not close.group(2).strip():
            return j + 1
    return len(lines)


def _is_fence(line: str) -> bool:
    m = _FENCE_OPEN.match(line)
    return m is not None and not (m.group(1)[0] == "`" and "`" in m.group(2))


def _setext(lines: list[str]) -> dict[int, tuple[int, int, str]]:
    """The setext headings of the body split into ``lines`` (a paragraph underlined by ``===`` or
    ``---``), found as the renderer reads them (:func:`curator.engine.corpus.markdown_scan.heading_spans`: not in code,
    not a list item's or a quote's ``---``): first line -> (the line past its underline, level,
    text as written, its lines joined)."""
    body = "\n".join(lines)
    if "\n" not in body or ("=" not in body and "-" not in body):
        return {}
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    found: dict[int, tuple[int, int, str]] = {}
    for heading in markdown_scan.heading_spans(markdown_scan.strip_code(body)):
        i = bisect_right(starts, heading.start) - 1
        if _HEADING.match(lines[i]):
            continue  # an ATX heading
        j = i + 1
        while j < len(lines) and not _SETEXT_UNDERLINE.match(lines[j]):
            j += 1
        found[i] = (j + 1, heading.level, " ".join(x.strip() for x in lines[i:j]))
    return found


def units(body: str) -> list[Unit]:
    """The body cut into headings (ATX and setext), bullets (with continuation and nested
    lines) and blocks."""
    lines = body.replace("\r\n", "\n").split("\n")
    setext = _setext(lines)
    out: list[Unit] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _is_fence(line):
            end = _fence_end(lines, i)
            out.append(Unit("block", lines[i:end], i))
            i = end
            continue
        if i in setext:
            end, level, text = setext[i]
            out.append(Unit("heading", lines[i:end], i, level, text))
            i = end
            continue
        h = _HEADING.match(line)
        if h:
            out.append(Unit("heading", [line], i, len(h.group(1)), (h.group(2) or "").strip()))
            i += 1
            continue
        if _BULLET_START.match(line):
            j = i + 1
            while j < n:
                nxt = lines[j]
                if not nxt.strip():
                    # a blank line continues the bullet only when an indented line follows
                    k = j
                    while k < n and not lines[k].strip():
                        k += 1
                    if k < n and lines[k][:1] in (" ", "\t"):
                        j = k
                        continue
                    break
                if nxt[:1] in (" ", "\t"):
                    j += 1
                    continue
                if _BULLET_START.match(nxt) or _HEADING.match(nxt) or _is_fence(nxt):
                    break
                j += 1  # a lazy continuation line
            out.append(Unit("bullet", lines[i:j], i))
            i = j
            continue
        j = i + 1
        while j < n and lines[j].strip() and not (_HEADING.match(lines[j]) or _is_fence(lines[j])
                                                  or _BULLET_START.match(lines[j])):
            j += 1
        out.append(Unit("block", lines[i:j], i))
        i = j
    return out


def _bullet_texts(body: str) -> list[str]:
    """What fact dedup compares against on a page: each bullet unit as one text, and every
    nested bullet line on its own."""
    texts: list[str] = []
    for unit in units(body):
        if unit.kind != "bullet":
            continue
        texts.append(" ".join(x.strip() for x in unit.lines)[2:])
        texts += [x.strip()[2:] for x in unit.lines[1:] if x.strip().startswith("- ")]
    return texts


def _demote(unit: Unit) -> str:
    level = min(6, max(3, unit.level + 1))
    return "#" * level + (f" {unit.text}" if unit.text else "")


# --- the conservation check -------------------------------------------------------------------------

def _norm(line: str) -> str:
    h = _HEADING.match(line)
    if h:
        line = h.group(2) or ""
    return " ".join(line.split())


def _content(text: str, page_path: str) -> list[tuple[int, str, int]]:
    """:func:`content_lines` with each line's heading level (0: not a heading)."""
    parts = frontmatter.split(text.replace("\r\n", "\n"))
    shown = display_form(parts.body, page_path).split("\n")
    setext = _setext(shown)  # (a setext heading is its text, as an ATX one: its underline is markup)
    out = []
    i = 0
    while i < len(shown):
        if i in setext:
            end, level, heading = setext[i]
            out.append((parts.body_line + i, " ".join(heading.split()), level))
            i = end
            continue
        norm = _norm(shown[i])
        if norm and not ("|" in norm and _TABLE_DELIMITER.match(norm)):  # (a table's delimiter row: markup)
            h = _HEADING.match(shown[i])
            out.append((parts.body_line + i, norm, len(h.group(1)) if h else 0))
        i += 1
    return out


def content_lines(text: str, page_path: str) -> list[tuple[int, str]]:
    """(1-based line in the file, normalised text) of every non-blank body line, links read as
    the text they show, headings without their ``#`` marks (a setext heading: its text on its
    first line, its underline not content)."""
    return [(number, line) for number, line, _level in _content(text, page_path)]


def _words_within(part: str, whole: str) -> bool:
    """True when ``part`` (without its closing punctuation) stands in ``whole`` whole-word."""
    part = part.rstrip(" .,;:…")
    if not part:
        return True
    at = whole.find(part)
    while at >= 0:
        after = at + len(part)
        if (at == 0 or whole[at - 1] == " ") and (after == len(whole) or not whole[after].isalnum()):
            return True
        at = whole.find(part, at + 1)
    return False


def check_conservation(inputs: Sequence[tuple[str, str]], result: str, result_path: str,
                       deduplicated: Sequence[str], exempt: dict[str, set[str]] | None = None,
                       cut: dict[str, set[str]] | None = None) -> None:
    """Raise :class:`Invalid` naming the first content line of an input (path, text) that is
    neither in ``result`` nor in a deduplicated bullet (``exempt``: per input, normalised lines
    that are accounted for otherwise, such as a merged page's title, which becomes an alias;
    ``cut``: per input, lines of a copy cut short, each of which must stand word for word within
    the result's text).

    A heading is checked for what stands under it: one with nothing under it (up to the next
    heading of its level or above), or only lines the result holds, loses nothing when it goes.
    """
    result_lines = _content(result, result_path)
    have = {line for _, line, _ in result_lines}
    for bullet in deduplicated:
        have |= {_norm(x) for x in display_form(bullet, result_path).split("\n")}
    whole = " ".join(line for _, line, _ in result_lines) if cut else ""
    for path, text in inputs:
        skip = (exempt or {}).get(path, set())
        shorter = (cut or {}).get(path, set())
        lines = _content(text, path)
        for at, (number, line, level) in enumerate(lines):
            if line in have or line in skip or (line in shorter and _words_within(line, whole)):
                continue
            if level:
                under = []
                for _, other, other_level in lines[at + 1:]:
                    if other_level and other_level <= level:
                        break
                    if not other_level:
                        under.append(other)
                if all(x in have or x in skip or (x in shorter and _words_within(x, whole)) for x in under):
                    continue
            raise Invalid(message=f"merge refused, nothing written: line {number} of {path} would be "
                          f"lost ({line[:80]!r}); merge it by hand or report this")


# --- the plan -------------------------------------------------------------------------------------

@dataclass(slots=True)
class MergePlan:
    keep: str
    merges: list[str]
    archives: list[str]
    rewrites: list[LinkRewrite] = field(default_factory=list)
    bullets_added: list[str] = field(default_factory=list)
    bullets_skipped: list[dict[str, str]] = field(default_factory=list)  # {page, bullet, matched}
    blocks_skipped: list[dict[str, str]] = field(default_factory=list)  # {page, block}: already on keep
    #: {page, block}: a paragraph of keep that a merged page had longer, replaced by it
    blocks_lengthened: list[dict[str, str]] = field(default_factory=list)
    rows_added: list[dict[str, str]] = field(default_factory=list)  # {page, row}: into keep's table
    sections_added: list[str] = field(default_factory=list)  # "## From <title>" headings
    tags_added: list[str] = field(default_factory=list)
    related_added: list[str] = field(default_factory=list)
    aliases_added: list[str] = field(default_factory=list)
    keep_before: str = ""
    keep_after: str = ""
    #: new text (and BOM flag) for every page that changes, keep included
    writes: dict[str, tuple[str, bool]] = field(default_factory=dict)

    @property
    def merge(self) -> str:
        return self.merges[0]

    @property
    def archive(self) -> str:
        return self.archives[0]

    @property
    def pages_rewritten(self) -> list[str]:
        return sorted({r.page for r in self.rewrites})

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "merge": self.merge, "merges": list(self.merges), "archive": self.archive,
                "archives": list(self.archives),
                "rewrites": [r.to_json() for r in self.rewrites], "pages_rewritten": self.pages_rewritten,
                "bullets_added": self.bullets_added, "bullets_skipped": self.bullets_skipped,
                "blocks_skipped": self.blocks_skipped, "blocks_lengthened": self.blocks_lengthened,
                "rows_added": self.rows_added, "sections_added": self.sections_added,
                "tags_added": self.tags_added, "related_added": self.related_added,
                "aliases_added": self.aliases_added, "keep_before": self.keep_before,
                "keep_after": self.keep_after}

    def diff(self) -> str:
        """The change to ``keep`` as a unified diff."""
        import difflib

        return "".join(difflib.unified_diff(self.keep_before.splitlines(keepends=True),
                                            self.keep_after.splitlines(keepends=True),
                                            f"a/{self.keep}", f"b/{self.keep}"))

    def render(self) -> str:
        merges = ", ".join(self.merges)
        lines = [f"merge {merges} into {self.keep} (then move to {', '.join(self.archives)})",
                 f"  {len(self.bullets_added)} bullet(s) added, {len(self.bullets_skipped)} already there"]
        for s in self.bullets_skipped:
            lines.append(f"    already there: {s['bullet'][:100]}  (matches: {s['matched']})")
        if self.sections_added:
            lines.append(f"  sections added: {', '.join(self.sections_added)}")
        for row in self.rows_added:
            lines.append(f"    table row added from {row['page']}: {row['row']}")
        if self.blocks_skipped:
            lines.append(f"  {len(self.blocks_skipped)} block(s) already on {self.keep} (whole or longer)")
        if self.blocks_lengthened:
            lines.append(f"  {len(self.blocks_lengthened)} paragraph(s) of {self.keep} replaced by a longer copy")
        for label, items in (("tags", self.tags_added), ("related", self.related_added),
                             ("aliases", self.aliases_added)):
            if items:
                lines.append(f"  {label} added: {', '.join(items)}")
        lines.append(f"  {len(self.rewrites)} link(s) rewritten in {len(self.pages_rewritten)} page(s)")
        lines += [f"    {r.render()}" for r in self.rewrites]
        diff = self.diff()
        if diff:
            lines += [f"resulting {self.keep}:", diff.rstrip("\n")]
        return "\n".join(lines)


def _unite(existing: list[str], extra: list[str], exclude: set[str]) -> list[str]:
    """Items of ``extra`` not yet in ``existing`` (case-insensitive), in order."""
    seen = {x.casefold() for x in existing} | exclude
    out: list[str] = []
    for item in extra:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _str_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [t.strip() for t in str(value or "").split(",") if t.strip()]


def _declared_tags(text: str) -> list[str]:
    parts = frontmatter.split(text.replace("\r\n", "\n"))
    if parts.raw is None or parts.problem:
        return []
    return _str_list(frontmatter.load(parts.raw)[0].get("tags"))


def _append_section(text: str, lines: list[str], nl: str) -> str:
    body = text.rstrip("\r\n")
    return body + nl + nl + nl.join(lines) + nl


def _is_table(unit: Unit) -> bool:
    return (unit.kind == "block" and len(unit.lines) >= 2 and _TABLE_DELIMITER.match(unit.lines[1]) is not None
            and all(line.lstrip().startswith("|") for line in unit.lines))


def _first_cell(row: str) -> str:
    return _norm(re.split(r"(?<!\\)\|", row.strip().removeprefix("|"), maxsplit=1)[0])


def _width(delimiter_row: str) -> int:
    return delimiter_row.strip().strip("|").count("|")


@dataclass(slots=True)
class _Span:
    """A block of ``keep``'s body (lines ``start``..``end``) and the lines it is to hold."""

    start: int
    end: int
    lines: list[str]
    changed: bool = False

    @property
    def key(self) -> str:
        return " ".join(" ".join(self.lines).split())


def _unite_rows(span: _Span, table: Unit) -> list[str]:
    """The rows of ``table`` that ``span`` (a table of the same header) lacks, added to it each
    next to a row of the same first cell, so two versions of a row stand together; returns them."""
    seen = {_norm(x) for x in span.lines[2:]}
    added = []
    for row in table.lines[2:]:
        if _norm(row) in seen:
            continue
        seen.add(_norm(row))
        added.append(row)
        key = _first_cell(row)
        same = [i for i in range(2, len(span.lines)) if _first_cell(span.lines[i]) == key]
        span.lines.insert(same[-1] + 1 if same else len(span.lines), row)
        span.changed = True
    return added


def _cut_short(short: str, long: str) -> bool:
    """True when ``short`` is ``long`` cut off at a word (a copy truncated, its last punctuation
    aside)."""
    stem = short.rstrip(" .,;:…")
    return (len(stem) < len(long) and long.startswith(stem)
            and (stem == "" or not long[len(stem)].isalnum()))


def _merge_body(plan: MergePlan, keep_text: str, keep: Page, merge: Page, moved_text: str,
                nl: str, original: str) -> tuple[str, set[str], set[str], set[str]]:
    """``keep_text`` with ``moved_text`` (``merge``'s text, links already re-pointed) merged in;
    returns it, the normalised lines accounted for otherwise (the title heading), the lines of
    ``merge`` that are a cut-short copy of a paragraph ``keep`` holds whole, and the lines that a
    longer copy replaced.

    Fact dedup compares each bullet as written on ``merge`` (``original``): re-pointing its links
    changes no line boundary, so its units line up with the moved text's by their first line.
    Noise is not content: a heading with nothing left under it is not written, a block ``keep``
    already has is not repeated, a table ``keep`` has under the same header gets only the rows
    it lacks, and a paragraph cut short where ``keep`` has it whole is not written again (one
    that ``keep`` has cut short replaces ``keep``'s). ``keep`` is read once: its tables and
    paragraphs change in place as spans, written back before the bullets go to its Updates.
    """
    exempt: set[str] = set()
    cut: set[str] = set()
    replaced: set[str] = set()
    body = frontmatter.split(moved_text.replace("\r\n", "\n")).body
    original_parts = frontmatter.split(original.replace("\r\n", "\n"))
    original_lines = original_parts.body.split("\n")
    as_written = {u.start: u for u in units(original_parts.body) if u.kind == "bullet"}
    keep_parts = frontmatter.split(keep_text.replace("\r\n", "\n"))
    keep_units = units(keep_parts.body)
    keep_blocks = {" ".join(u.source.split()) for u in keep_units if u.kind == "block"}
    tables: dict[tuple[str, int], list[_Span]] = {}
    paragraphs: dict[str, list[_Span]] = {}  # by first word
    spans: list[_Span] = []
    for u in keep_units:
        if u.kind != "block" or _is_fence(u.lines[0]):
            continue
        span = _Span(u.start, u.start + len(u.lines), list(u.lines))
        spans.append(span)
        if _is_table(u):
            tables.setdefault((_norm(u.lines[0]), _width(u.lines[1])), []).append(span)
        else:
            paragraphs.setdefault(span.key.split(" ", 1)[0], []).append(span)
    bullets: list[str] = []  # for keep's Updates, once its spans are written back
    # (level, lines): a heading (its level as written) or content (level 0) for "## From <title>"
    entries: list[tuple[int, list[str]]] = []
    facts = _bullet_texts(keep_parts.body)
    fact_zone = True
    title_seen = False
    last: tuple[str, int] = ("", -1)  # kind and end line of the last unit put in ``section``

    def dedup(unit: Unit) -> bool:
        """True when ``keep`` already states the bullet (then it is listed as skipped)."""
        written = as_written.get(unit.start)
        if written is None or len(written.lines) != len(unit.lines):
            written = unit
        content = " ".join(x.strip() for x in written.lines)[2:]
        matched = matching_fact(facts, content)
        if matched is None:
            facts.append(content)
            return False
        plan.bullets_skipped.append({"page": merge.path, "bullet": written.source, "matched": matched[:80]})
        return True

    def shown(lines: list[str], page_path: str) -> set[str]:
        return {_norm(display_form(x, page_path)) for x in lines} - {""}

    for unit in units(body):
        if unit.kind == "heading":
            if unit.level == 1 and not title_seen and not entries and " ".join(unit.text.split()) == merge.title:
                title_seen = True
                exempt.add(_norm(unit.lines[0]))
                continue
            fact_zone = bool(_UPDATES.match(unit.text)) and unit.level == 2
            if fact_zone:
                exempt.add(_norm(unit.lines[0]))
                continue
            entries.append((unit.level, ["", _demote(unit)]))
            continue
        if unit.kind == "bullet":
            if dedup(unit):
                continue
            if fact_zone:
                bullets.append(nl.join(unit.lines))
                plan.bullets_added.append(unit.source)
                continue
            # a list stays one list: no blank line between bullets that had none
            tight = entries and last == ("bullet", unit.start)
            entries.append((0, [*([] if tight else [""]), *unit.lines]))
            last = ("bullet", unit.start + len(unit.lines))
            continue
        key = " ".join(unit.source.split())
        if key in keep_blocks:
            plan.blocks_skipped.append({"page": merge.path, "block": unit.source})
            continue
        keep_blocks.add(key)
        if _is_table(unit):
            rows = {_norm(x) for x in unit.lines[2:]}
            same = tables.get((_norm(unit.lines[0]), _width(unit.lines[1])), [])
            if same:
                best = max(same, key=lambda t: len(rows & {_norm(x) for x in t.lines[2:]}))
                plan.rows_added += [{"page": merge.path, "row": row} for row in _unite_rows(best, unit)]
                continue
        elif not _is_fence(unit.lines[0]):
            near = paragraphs.get(key.split(" ", 1)[0], [])
            if any(_cut_short(key, p.key) for p in near):
                plan.blocks_skipped.append({"page": merge.path, "block": unit.source})
                cut |= shown(original_lines[unit.start:unit.start + len(unit.lines)], merge.path)
                continue
            shorter = next((p for p in near if _cut_short(p.key, key)), None)
            if shorter is not None:
                replaced |= shown(shorter.lines, keep.path)
                shorter.lines, shorter.changed = list(unit.lines), True
                plan.blocks_lengthened.append({"page": merge.path, "block": unit.source})
                continue
        entries.append((0, ["", *unit.lines]))

    changed = [s for s in spans if s.changed]
    if changed:
        lines = keep_text.split("\n")
        for span in reversed(changed):
            at = keep_parts.body_line - 1 + span.start
            cr = "\r" if lines[at].endswith("\r") else ""
            lines[at:keep_parts.body_line - 1 + span.end] = [x + cr for x in span.lines]
        keep_text = "\n".join(lines)
    for bullet in bullets:
        keep_text = insert_bullet(keep_text, bullet)
    # a heading stays only with something under it (up to the next heading of its level or above)
    section: list[str] = []
    for at, (level, lines) in enumerate(entries):
        if level:
            held = False
            for other_level, _lines in entries[at + 1:]:
                if not other_level or other_level <= level:
                    held = not other_level
                    break
            if not held:
                continue
        section += lines
    if section:
        heading = f"## From {merge.title}"
        plan.sections_added.append(heading)
        keep_text = _append_section(keep_text, [heading, *section], nl)
    return keep_text, exempt, cut, replaced


def plan_merge(wiki: Wiki, keep: Page, merges: Sequence[Page], read: Reader,
               today: _dt.date | None = None) -> MergePlan:
    """Everything the merge will change, computed from the files as ``read`` returns them."""
    merges = list({m.path: m for m in merges}.values())
    if not merges:
        raise Invalid(message="nothing to merge: name at least one page to merge into the kept one")
    if any(m.path == keep.path for m in merges):
        raise Invalid(message="cannot merge a page into itself")
    today = today or _dt.date.today()
    links = wiki.links
    gone = frozenset(m.path for m in merges)
    plan = MergePlan(keep.path, [m.path for m in merges], [f"{ARCHIVE_DIR}/{m.path}" for m in merges])
    keep_text, keep_bom = read(keep.path)
    plan.keep_before = keep_text
    keep_parts = frontmatter.split(keep_text)
    if keep_parts.problem or (keep_parts.raw is not None and frontmatter.load(keep_parts.raw)[1]):
        raise Invalid(message=f"{keep.path} has malformed frontmatter; fix it before merging into it")
    nl = "\r\n" if "\r\n" in keep_text else "\n"
    originals = {m.path: read(m.path)[0] for m in merges}

    # keep's own links to a merged page would now point at itself: they become their text
    to_keep = {m.path: keep.path for m in merges}
    on_keep = Retarget(links, to_keep, frozenset({keep.path}), gone)
    keep_text, rewrites = rewrite_page(keep_text, keep.path, on_keep)
    plan.rewrites += rewrites

    # each merged page's text, re-pointed as it will read on keep, merged in
    moving = Retarget(links, {**to_keep, keep.path: keep.path}, frozenset({keep.path}), gone)
    exempt: dict[str, set[str]] = {}
    cut: dict[str, set[str]] = {}
    replaced: set[str] = set()  # (a paragraph a longer copy replaced: from keep or an earlier member)
    for m in merges:
        moved_text, _ = rewrite_page(originals[m.path], m.path, moving, new_path=keep.path)
        keep_text, exempt[m.path], cut[m.path], gone_short = _merge_body(plan, keep_text, keep, m, moved_text, nl,
                                                                         originals[m.path])
        replaced |= gone_short
    cut = {path: lines | replaced for path, lines in {keep.path: set(), **cut}.items()}

    # tags, related, aliases united; merged slugs and titles become aliases of keep
    meta = frontmatter.load(keep_parts.raw)[0] if keep_parts.raw is not None else {}
    keep_tags = _str_list(meta.get("tags"))
    # the tags the members declare: a #tag in a body moves with its text (and stays its tag)
    plan.tags_added = _unite(keep_tags, [t.lstrip("#") for m in merges for t in _declared_tags(originals[m.path])],
                             set())
    keep_related_all = related_entries(meta) or []
    own = {keep.path, *gone}
    keep_related = [r for r in keep_related_all if links.resolve(entry_target(r), keep.path).path not in own]
    self_names = {n.casefold() for p in (keep, *merges) for n in (p.path, p.slug, p.stem)}
    plan.related_added = [r for r in _unite(keep_related, [r for m in merges for r in m.related], set())
                          if links.resolve(entry_target(r), keep.path).path not in own
                          and entry_target(r).casefold() not in self_names]
    keep_aliases = _str_list(meta.get("aliases"))
    plan.aliases_added = _unite(keep_aliases, [n for m in merges for n in (m.stem, m.title, *m.aliases)],
                                {keep.title.casefold(), keep.stem.casefold()})
    changes: dict[str, Any] = {}
    if plan.tags_added:
        changes["tags"] = keep_tags + plan.tags_added
    if plan.related_added or keep_related != keep_related_all:
        changes["related"] = keep_related + plan.related_added
    if plan.aliases_added:
        changes["aliases"] = keep_aliases + plan.aliases_added
    if changes or keep_text != plan.keep_before:
        changes["updated"] = today
        keep_text = frontmatter.update(keep_text, changes)

    skipped = [s["bullet"] for s in plan.bullets_skipped]
    inputs = [(keep.path, plan.keep_before)] + [(m.path, originals[m.path]) for m in merges]
    check_conservation(inputs, keep_text, keep.path, skipped, exempt, cut)

    # links to the merged pages everywhere else
    sources = {e.source for m in merges for e in links.backlinks(m.path)} - own
    elsewhere = Retarget(links, to_keep, frozenset(), gone)
    for path in sorted(sources):
        text, bom = read(path)
        new_text, rewrites = rewrite_page(text, path, elsewhere, check_frontmatter=frontmatter_links(
            links.pages.get(path), elsewhere))
        plan.rewrites.extend(rewrites)
        if new_text != text:
            plan.writes[path] = (new_text, bom)
    plan.keep_after = keep_text
    plan.writes[keep.path] = (keep_text, keep_bom)
    return plan


def encode_writes(writes: dict[str, tuple[str, bool]]) -> dict[str, bytes]:
    """A plan's new texts as the bytes to write (BOM kept where the file had one)."""
    return {path: (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8") for path, (text, bom) in writes.items()}


def plain_reader(wiki: Wiki) -> Reader:
    """Reads pages for a preview (outside an action)."""
    from curator.engine.corpus.page import decode

    def read(path: str) -> tuple[str, bool]:
        dec = decode((wiki.root / path).read_bytes())
        if dec.invalid_utf8:
            raise Invalid(message=f"{path} is not valid UTF-8; fix its encoding first")
        return dec.text, dec.bom

    return read


def action_reader(ctx: ActionContext) -> Reader:
    """Reads pages inside an action (checked paths; a vanished page is an error)."""

    def read(path: str) -> tuple[str, bool]:
        text, dec = ctx.read_text(path)
        if text is None or dec is None:
            raise Invalid(message=f"{path} disappeared during the action")
        return text, dec.bom

    return read


def _refs(merge: str | Sequence[str]) -> list[str]:
    return [merge] if isinstance(merge, str) else list(merge)


def preview_merge(wiki: Wiki, keep: str, merge: str | Sequence[str], actor: Actor = OPERATOR) -> MergePlan:
    """What :func:`merge_pages` would do, without writing anything."""
    keep_page = wiki.find(keep, actor)
    merged = [wiki.find(ref, actor) for ref in _refs(merge)]
    plan = plan_merge(wiki, keep_page, merged, plain_reader(wiki))
    # The preview answers as the merge would: a merge the actor may not make is refused here
    # too, with the same words (never listing a rewrite in a page the actor cannot see).
    for path in [*plan.writes, *(m.path for m in merged), *plan.archives]:
        require_write(wiki, actor, path)
    return plan


def merge_pages(wiki: Wiki, keep: str, merge: str | Sequence[str], actor: Actor = OPERATOR) -> ActionResult:
    """Merge ``merge`` (one page or several) into ``keep`` as one action (one commit); undo
    reverts it."""
    keep_page = wiki.find(keep, actor)
    refs = [wiki.find(ref, actor) for ref in _refs(merge)]
    target = f"{', '.join(m.path for m in refs)} into {keep_page.path}"

    def apply(ctx: ActionContext) -> None:
        pages = wiki.pages
        k = pages.get(keep_page.path)
        ms = [pages.get(m.path) for m in refs]
        if k is None or any(m is None for m in ms):
            raise Invalid(message="a page of the merge no longer exists")
        found = [m for m in ms if m is not None]
        plan = plan_merge(wiki, k, found, action_reader(ctx))
        ctx.journal.update({"keep": k.path, "merge": found[0].path, "merges": [m.path for m in found]})
        ctx.write_many(encode_writes(plan.writes))
        plan.archives = [ctx.delete(m.path, archive=True) or a for m, a in zip(found, plan.archives, strict=True)]
        ctx.status = Status.MERGED
        ctx.message = (f"merged {', '.join(plan.merges)} into {k.path}: {len(plan.bullets_added)} bullet(s) added, "
                       f"{len(plan.bullets_skipped)} already there, {len(plan.sections_added)} section(s) added, "
                       f"{len(plan.rewrites)} link(s) rewritten in {len(plan.pages_rewritten)} page(s), "
                       f"moved to {', '.join(plan.archives)}")
        ctx.data.update(plan.to_json())

    return run_action(wiki, actor, "merge", target, apply)
