"""The facts of a page: the bullets of its ``## Updates`` section (docs/design.md §4.5, §4.6).

One grammar for every writer and reader of facts: the append door composes and inserts a bullet
here and asks whether the page already states the fact; the merge of duplicates, the operator's
edits, the inbox and the sync's page merge driver use the same functions, so a fact is the same
fact everywhere. Text in, text out: nothing here reads a file or knows who writes.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from curator.engine.corpus import frontmatter
from curator.engine.corpus.lookalike import visible_form
from curator.engine.corpus.page import DEFAULT_LAYER, DEFAULT_TRUST
from curator.engine.corpus.slugs import slugify

#: Fact dedup: a fact restates a bullet whose word-set Jaccard with it is at least this.
DUP_JACCARD = 0.8

_WORDS = re.compile(r"[^\W_]+")
_LINK = re.compile(r"!?\[\[[^\]\n]*\]\]")
# The stamps a fact ends with: when it was added, and when an operator last confirmed it
# (``curator facts verify``, docs/design.md §15); neither is part of what the fact says.
_STAMP = re.compile(r"(?:\s*\((?:added|verified) \d{4}-\d{2}-\d{2}\))+\s*$")
BULLET_RE = re.compile(r"^\s*- (.*)$")
HEADING_RE = re.compile(r"^(#{1,6})\s")
UPDATES_RE = re.compile(r"^##\s+updates\s*#*\s*$", re.IGNORECASE)
FENCE_RE = re.compile(r"^\s*(```|~~~)")


def clean_bullet(text: str) -> str:
    """A bullet as dedup compares it: dash, ``[[links]]`` and the ``(added ...)`` stamp removed."""
    text = text.strip()
    if text.startswith("- "):
        text = text[2:]
    text = _STAMP.sub("", _LINK.sub("", text))
    return " ".join(text.split())


def fact_words(text: str) -> list[str]:
    """The words fact dedup compares: as a reader sees them (invisible characters removed,
    look-alike letters folded: :func:`~curator.engine.corpus.lookalike.visible_form`), lowercase."""
    return _WORDS.findall(visible_form(text).lower())


def find_duplicate(page_text: str, content: str) -> str | None:
    """The cleaned bullet of ``page_text`` that ``content`` restates, or None (docs/design.md §4.5)."""
    return matching_fact((m.group(1) for m in map(BULLET_RE.match, _body_lines(page_text)) if m), content)


def matching_fact(bullets: Iterable[str], content: str) -> str | None:
    """The first of ``bullets`` (texts after their dash) that ``content`` restates, cleaned, or None.

    The fact dedup of docs/design.md §4.5: word-set Jaccard >= 0.8, or one contains the other (normalised,
    compared as a reader sees them: :func:`fact_words`).
    """
    content_words = fact_words(clean_bullet(content))
    if not content_words:
        return None
    fact_set = set(content_words)
    fact_norm = f" {' '.join(content_words)} "
    for text in bullets:
        bullet = clean_bullet(text)
        words = fact_words(bullet)
        if not words:
            continue
        bset = set(words)
        if len(fact_set & bset) / len(fact_set | bset) >= DUP_JACCARD:
            return bullet
        norm = f" {' '.join(words)} "
        if norm in fact_norm or fact_norm in norm:
            return bullet
    return None


def _body_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def compose_bullet(content: str, links: Sequence[str], day: _dt.date) -> str:
    """``- <content> [[link]] ... (added YYYY-MM-DD)``: one line, links slugified, empties dropped."""
    text = " ".join(content.split())
    if text.startswith("- "):
        text = text[2:].lstrip()
    slugs = list(dict.fromkeys(s for s in (slugify(link) for link in links) if s))
    parts = [text, *(f"[[{s}]]" for s in slugs), f"(added {day.isoformat()})"]
    return "- " + " ".join(parts)


def title_of(slug: str) -> str:
    """``ann-smith`` -> ``Ann Smith`` (words capitalised; other scripts unchanged)."""
    return " ".join(w[:1].upper() + w[1:] for w in slug.split("-") if w)


def scaffold(slug: str, bullet: str, day: _dt.date, title: str | None = None) -> str:
    """A new page: frontmatter, ``# Title``, ``## Updates`` and the first bullet (none when
    ``bullet`` is empty: ``curator links create`` makes the page a link names, facts come later).
    ``title`` defaults to the slug in title case."""
    title = title or title_of(slug)
    head = frontmatter.update("", {"title": title, "layer": DEFAULT_LAYER, "trust": DEFAULT_TRUST,
                                   "created": day, "updated": day})
    return f"{head}\n# {title}\n\n## Updates\n" + (f"\n{bullet}\n" if bullet else "")


def insert_bullet(text: str, bullet: str) -> str:
    """``text`` with ``bullet`` at the end of its ``## Updates`` section (added at the end if
    absent), in the text's own line endings; ``updated`` refreshed when the page has frontmatter."""
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(nl) if nl == "\r\n" else text.split("\n")
    trailing = lines and lines[-1] == ""
    if trailing:
        lines.pop()
    split = frontmatter.split(text)
    start = 0
    if split.raw is not None and not split.problem:
        start = split.body_line - 1
    heading = end = None
    in_fence = False
    for i in range(start, len(lines)):
        line = lines[i]
        if FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if heading is None:
            if UPDATES_RE.match(line.strip()):
                heading = i
        else:
            m = HEADING_RE.match(line)
            if m and len(m.group(1)) <= 2:
                end = i
                break
    if heading is None:
        while lines and not lines[-1].strip():
            lines.pop()
        block = ([""] if lines else []) + ["## Updates", "", bullet]
        lines.extend(block)
    else:
        stop = len(lines) if end is None else end
        last = heading
        for i in range(stop - 1, heading, -1):
            if lines[i].strip():
                last = i
                break
        new = [bullet] if last > heading else ["", bullet]
        if end is not None and (last + 1 >= len(lines) or lines[last + 1].strip()):
            new.append("")  # keep a blank line before the next section
        lines[last + 1 : last + 1] = new
    out = nl.join(lines) + nl
    return out


def refresh_updated(text: str, day: _dt.date) -> str:
    """``text`` with its frontmatter's ``updated`` set to ``day`` (a page without frontmatter, or
    with frontmatter that does not parse, is returned as it is)."""
    split = frontmatter.split(text)
    if split.raw is None or split.problem:
        return text  # no (or broken) frontmatter: not ours to invent or repair
    _meta, problem = frontmatter.load(split.raw)
    if problem:
        return text
    return frontmatter.update(text, {"updated": day})


# --- every fact of a page (the meaning queues, docs/design.md §4.7) -------------------------------

#: A fact shorter than this many words says too little to compare by meaning ("TODO", "See below").
MIN_FACT_WORDS = 3
#: Scripts written without spaces (Han, kana, Hangul syllables): each character counts as a word
#: toward :data:`MIN_FACT_WORDS`, else a whole Chinese sentence would be one "word" and never a fact.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _word_count(text: str) -> int:
    return len(fact_words(_UNSPACED.sub(" ", text))) + len(_UNSPACED.findall(text))


_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_CALLOUT_HEAD = re.compile(r"^\[!\w[\w-]*\][+-]?\s*")
_ADDED = re.compile(r"\(added (\d{4}-\d{2}-\d{2})\)")
_VERIFIED = re.compile(r"\(verified (\d{4}-\d{2}-\d{2})\)")


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a page: a list item (with its continuation lines) or a prose paragraph outside
    the frontmatter, headings, tables and code. ``text`` is as written, joined onto one line, its
    list marker and ``(added ...)`` / ``(verified ...)`` stamps removed; ``added`` and ``verified``
    are the stamps' dates."""

    path: str
    line: int  # 1-based line of the file where the fact starts
    text: str
    added: str | None = None
    verified: str | None = None
    # (worked out once: a whole-wiki conflict list names a fact in many pairs, and reading a text
    # as a reader sees it is what costs)
    _key: str | None = field(default=None, init=False, compare=False, hash=False, repr=False)

    @property
    def key(self) -> str:
        """The fact's identity as a reader sees it (page and normalised words): stable when the
        fact moves to another line, changed when its words change."""
        if self._key is None:
            import hashlib

            words = " ".join(fact_words(self.text))
            object.__setattr__(self, "_key", hashlib.sha1(
                f"{self.path}\0{words}".encode("utf-8", "surrogateescape")).hexdigest()[:16])
        assert self._key is not None
        return self._key


def page_facts(path: str, text: str) -> list[Fact]:
    """Every fact of the page ``path`` whose file holds ``text`` (see :class:`Fact`)."""
    split = frontmatter.split(text.replace("\r\n", "\n"))
    out: list[Fact] = []
    lines = split.body.split("\n")
    start: int | None = None  # index of the first line of the fact being gathered
    parts: list[str] = []
    indent = -1  # the list item's marker indent (-1: a paragraph)
    fence: str | None = None

    def close() -> None:
        nonlocal start, parts
        if start is not None:
            joined = " ".join(p.strip() for p in parts if p.strip())
            stamp = _ADDED.search(joined)
            checked = _VERIFIED.search(joined)
            fact = " ".join(_STAMP.sub("", joined).split())
            if _word_count(fact) >= MIN_FACT_WORDS:
                out.append(Fact(path, split.body_line + start, fact, stamp.group(1) if stamp else None,
                                checked.group(1) if checked else None))
        start, parts = None, []

    for i, raw in enumerate(lines):
        stripped = raw.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        m = FENCE_RE.match(raw)
        if m:
            close()
            fence = m.group(1)
            continue
        line = _QUOTE.sub("", raw) if raw.lstrip().startswith(">") else raw
        content = line.strip()
        if not content or HEADING_RE.match(content) or content.startswith("|") or content in ("---", "***"):
            close()
            continue
        if raw.startswith(("    ", "\t")) and start is None:
            continue  # an indented code block
        content = _CALLOUT_HEAD.sub("", content)
        item = _LIST_ITEM.match(line)
        if item:
            close()
            start, parts, indent = i, [item.group(2)], len(item.group(1))
        elif start is not None and (indent < 0 or len(line) - len(line.lstrip()) > indent):
            parts.append(content)  # a paragraph's next line, or an item's continuation
        else:
            close()
            if content:
                start, parts, indent = i, [content], -1
    close()
    return out
