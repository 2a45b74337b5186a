"""Code-aware scanning of markdown bodies: links, body ``#tags``, headings, block ids, snippet.

Links and tags inside fenced and indented code blocks, inline code spans and Obsidian
``%%comments%%`` do not count (docs/design.md §3), so the scanner first blanks those out while keeping every
newline, which keeps line numbers true. Wikilinks written as frontmatter property values
(``up: "[[Parent]]"``) are scanned from the raw YAML so that each keeps its line.
Everything here is linear in the size of the text (a 10 MB page must not hang).
"""

from __future__ import annotations

import bisect
import functools
import posixpath
import re
import unicodedata
from collections.abc import Iterator
from typing import Any, NamedTuple
from urllib.parse import unquote

# "``*" rather than "`+": a leading literal lets the regex engine skip ahead (7x faster here).
_BACKTICKS = re.compile(r"``*")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MDLINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?([^()<>\s]+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
BODY_TAG = re.compile(r"(?:(?<=\s)|^)#([^\W\d_][\w/-]*|\d+[^\W\d][\w/-]*)", re.MULTILINE)
# Scanning variants that start with a literal, so the regex engine can jump between candidates
# (an optional "!" or a look-behind in front defeats that and made scans ~6x slower); the callers
# check the character before a match instead.
# Greedy, not lazy: the class excludes "]", so both stop at the same place, and a greedy run of a
# negated class is matched in one step instead of one step per character.
_WIKILINK_SCAN = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_MDLINK_SCAN = re.compile(r"\[([^\]\n]*)\]\(\s*<?([^()<>\s]+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")
_TAG_SCAN = re.compile(r"#([^\W\d_][\w/-]*|\d+[^\W\d][\w/-]*)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# (a closing run of "#" needs a space before it: "# C#" is about C#, "# Title #" is "Title")
_HEADING = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_ANY_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
# Starts with one literal "#" (a leading "^" or "#{1,6}" made the engine try every position:
# 6x slower); the level is 1 + the length of group 1;
# the callers check that only up to three spaces lie between the line start and the match.
_HEADINGS = re.compile(r"#(#{0,5})[ \t]+([^\n]*?)(?:[ \t]+#+)?[ \t\r]*$", re.MULTILINE)
# A setext underline (``===`` or ``---`` alone on a line, after the newline ending the line above).
_SETEXT_UNDERLINE = re.compile(r"\n {0,3}(=+|-+)[ \t]*\r?(?=\n|$)")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})\r?$")
_BLOCK_ID = re.compile(r"(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t\r]*$", re.MULTILINE)
_ANCHOR_JUNK = re.compile(r"[\W_]+")
# An indented line that could open an indented code block: right after a blank line or at the top.
_INDENTED_START = re.compile(r"\n[ \t]*\r?\n(?: {4}|\t)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|\r?$)")
# A top-level frontmatter key (``up: ...``), for telling which property a link is written in.
_TOP_KEY = re.compile(r"^([^\s#:][^:\n]*?)[ \t]*:", re.MULTILINE)

#: Extensions of the files Obsidian opens and embeds (its supported formats, and Excalidraw's): a
#: target ending in one of these names an attachment, never a page to write (docs/design.md §3). A link to
#: a file of another kind that exists (``[[data.csv]]``) still resolves to it.
ATTACHMENT_EXTENSIONS: frozenset[str] = frozenset({
    "png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif",
    "mp3", "wav", "m4a", "ogg", "3gp", "flac", "webm", "mp4", "ogv", "mov", "mkv",
    "pdf", "canvas", "base", "excalidraw",
})
IMAGE_EXTENSIONS: frozenset[str] = frozenset({"png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif"})


def extension(target: str) -> str:
    """The lowercase extension of a link target's last segment (``""`` for none)."""
    name = target.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot + 1:].lower() if dot > 0 else ""


def is_attachment_target(target: str) -> bool:
    """Whether a link target names an attachment file (``diagram.png``, ``notes.pdf``)."""
    return extension(target) in ATTACHMENT_EXTENSIONS


class RawLink(NamedTuple):
    """A link as written in a page, before resolution (a tuple: cheap to make in bulk)."""

    target: str  # wikilink target, or the root-relative path of a markdown link
    anchor: str | None
    alias: str | None
    kind: str  # "wikilink" | "embed" | "markdown" | "related" | "property"
    line: int  # 1-based line in the file


#: ``RawLink._make`` without its Python-level ``__new__`` (one per link of every page parsed).
_new_raw_link = functools.partial(tuple.__new__, RawLink)


_NOT_NEWLINE = re.compile(r"[^\n]")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


def _blank(text: str) -> str:
    """Replace every character except newlines with a space (keeps offsets and line numbers)."""
    if "\n" not in text:
        return " " * len(text)
    return _NOT_NEWLINE.sub(" ", text)


def strip_code(body: str, comments: bool = True) -> str:
    """Return ``body`` with code (fenced, indented, inline spans) and ``%%comments%%`` blanked
    (comments left as they are with ``comments=False``).

    Blanked, not removed: the result has the same length and the same newlines as ``body``, so
    an offset in it is the same offset in ``body`` (the snippet takes its words from there).
    Only fence-like lines are visited (one regex pass), not every line of the page.
    """
    # Each multi-character test is guarded by a one-character one (``memchr``, ~8x faster): most
    # pages have no backtick, tilde, tab or percent sign at all.
    text = body
    ticks = "`" in text
    if (ticks and "```" in text) or ("~" in text and "~~~" in text):
        text = _strip_fences(text)
    if "\n    " in text or ("\t" in text and "\n\t" in text) or text.startswith(("    ", "\t")):
        text = _strip_indented(text)
    if ticks and "`" in text:
        text = _strip_spans(text)
    if comments and "%" in text and "%%" in text:
        text = _strip_comments(text)
    return text


def _strip_fences(body: str) -> str:
    out: list[str] = []
    last = 0
    fence: str | None = None
    start = 0
    for m in _FENCE_LINE.finditer(body):
        run, rest = m.group(1), m.group(2)
        if fence is None:
            if run[0] == "`" and "`" in rest:
                continue  # a backtick in the info string: not a fence (CommonMark)
            fence, start = run, m.start()
        elif run[0] == fence[0] and len(run) >= len(fence) and not rest.strip():
            out.append(body[last:start])
            out.append(_blank(body[start : m.end()]))
            last, fence = m.end(), None
    if fence is not None:  # an unclosed fence runs to the end of the page
        out.append(body[last:start])
        out.append(_blank(body[start:]))
        last = len(body)
    out.append(body[last:])
    return "".join(out) if last else body


def _strip_indented(text: str) -> str:
    """Blank indented code blocks (CommonMark): 4+ spaces or a tab, after a blank line, and not
    the continuation of a list item (a nested bullet is list content, not code)."""
    if not text.startswith(("    ", "\t")) and not _INDENTED_START.search(text):
        return text
    lines = text.split("\n")
    prev_blank = True
    in_list = False  # the last block at the margin was a list: indented text continues it
    in_code = False
    changed = False
    for i, line in enumerate(lines):
        if not line.strip():
            prev_blank = True
            continue
        indented = line.startswith(("    ", "\t"))
        if indented and (in_code or (prev_blank and not in_list)):
            lines[i] = " " * len(line)
            in_code = changed = True
        else:
            in_code = False
            if not indented:
                if _LIST_ITEM.match(line):
                    in_list = True
                elif prev_blank or line.lstrip().startswith("#"):
                    in_list = False
        prev_blank = False
    return "\n".join(lines) if changed else text


def _comment_spans(text: str) -> Iterator[tuple[int, int]]:
    """Obsidian ``%%comments%%`` (they may span lines; an unclosed one runs to the end)."""
    last = 0
    while True:
        start = text.find("%%", last)
        if start < 0:
            return
        end = text.find("%%", start + 2)
        last = len(text) if end < 0 else end + 2
        yield start, last
        if end < 0:
            return


def _strip_comments(text: str) -> str:
    out: list[str] = []
    last = 0
    for start, stop in _comment_spans(text):
        out.append(text[last:start])
        out.append(_blank(text[start:stop]))
        last = stop
    out.append(text[last:])
    return "".join(out)


def reading_view(body: str) -> str:
    """``body`` as Obsidian's reading view shows it: ``%%comments%%`` and the ``^block-id``
    markers ending lines removed (outside code, which keeps them as written)."""
    if "%%" not in body and "^" not in body:
        return body
    code_free = strip_code(body, comments=False)
    cuts = list(_comment_spans(code_free)) if "%%" in code_free else []
    if "^" in code_free:
        cuts += [(m.start(), m.end()) for m in _BLOCK_ID.finditer(code_free)]
    if not cuts:
        return body
    out: list[str] = []
    last = 0
    for start, stop in sorted(cuts):
        if start < last:
            continue  # a block id inside a comment
        out.append(body[last:start])
        last = stop
    out.append(body[last:])
    return "".join(out)


def _strip_spans(text: str) -> str:
    """Blank inline code spans (CommonMark pairing of equal backtick runs within a paragraph).

    The runs are found in one pass over the whole text; a run pairs with the next run of the
    same length unless a paragraph break lies between them (then it is literal backticks).
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    if len(runs) < 2:
        return text
    # next_same[i] = index of the next run with the same length, found right to left.
    next_same: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        n = runs[i][1] - runs[i][0]
        next_same[i] = seen.get(n)
        seen[n] = i
    out: list[str] = []
    last = 0
    i = 0
    while i < len(runs):
        j = next_same[i]
        if j is None or _PARAGRAPH_BREAK.search(text, runs[i][1], runs[j][0]):
            i += 1
            continue
        s, e = runs[i][0], runs[j][1]
        out.append(text[last:s])
        out.append(_blank(text[s:e]))
        last = e
        i = j + 1
    out.append(text[last:])
    return "".join(out)


def _paragraphs(text: str) -> Iterator[tuple[int, int]]:
    pos = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        yield pos, m.start()
        pos = m.end()
    yield pos, len(text)


class _Lines:
    """Maps character offsets to 1-based line numbers.

    Offsets are asked for in increasing order within one scan, so each answer counts only the
    newlines since the previous offset (``str.count`` runs in C); an earlier offset restarts the
    count. Listing every newline of every page up front cost more than the rest of the scan.
    """

    def __init__(self, text: str, first_line: int) -> None:
        self._text = text
        self._first = first_line
        self._offset = 0
        self._line = first_line

    def at(self, offset: int) -> int:
        if offset < self._offset:
            self._offset, self._line = 0, self._first
        self._line += self._text.count("\n", self._offset, offset)
        self._offset = offset
        return self._line


def split_wikilink(inner: str) -> tuple[str, str | None, str | None]:
    """``target#anchor|alias`` -> (target, anchor, alias); ``\\|`` (inside tables) counts as ``|``."""
    alias = None
    if "|" in inner:
        inner, alias = inner.split("|", 1)
        inner = inner.removesuffix("\\")
        alias = alias.strip() or None
    anchor = None
    if "#" in inner:
        inner, anchor = inner.split("#", 1)
        anchor = anchor.strip() or None
    return inner.strip(), anchor, alias


class LinkSpan(NamedTuple):
    """One link occurrence with where it is written: what the rewriters (merge, move) edit.

    ``start``/``end`` span the whole link (``![[...]]`` or ``[text](href)``); ``inner_start``/
    ``inner_end`` span what can be re-pointed: the inside of the brackets of a wikilink, the href
    of a markdown link. Offsets are in the body the scan ran on.
    """

    link: RawLink
    start: int
    end: int
    inner_start: int
    inner_end: int


def link_spans(code_free: str, page_path: str, first_line: int = 1) -> list[LinkSpan]:
    """Every link in a code-free body of the page at root-relative ``page_path``, with its span."""
    lines = _Lines(code_free, first_line)
    spans: list[LinkSpan] = []
    if "[[" in code_free:
        for m in _WIKILINK_SCAN.finditer(code_free):
            target, anchor, alias = split_wikilink(m.group(1))
            if not target:  # [[#heading]] points into the page itself
                continue
            start = m.start()
            embed = start > 0 and code_free[start - 1] == "!"
            spans.append(LinkSpan(RawLink(target, anchor, alias, "embed" if embed else "wikilink",
                                          lines.at(start)),
                                  start - 1 if embed else start, m.end(), m.start(1), m.end(1)))
    if "](" in code_free:
        spans += _markdown_link_spans(code_free, page_path, first_line)
    return spans


def _markdown_link_matches(code_free: str, page_path: str) -> Iterator[tuple[re.Match[str], str, str | None]]:
    """(match, target, anchor) of each markdown link (``[text](page.md)``) of ``code_free``; each
    href is resolved once (a page repeats the same few links)."""
    base = posixpath.dirname(page_path)
    resolved: dict[str, tuple[str, str | None] | None] = {}
    for m in _MDLINK_SCAN.finditer(code_free):
        href = m.group(2)
        if href in resolved:
            hit = resolved[href]
        else:
            hit = None
            if not (_SCHEME.match(href) or href.startswith(("#", "/"))):
                path, _, anchor = href.partition("#")
                path = unquote(path.split("?", 1)[0])
                # a link to a page or an attachment (an image, a PDF), nothing else
                if path.lower().endswith(".md") or is_attachment_target(path):
                    hit = (posixpath.normpath(posixpath.join(base, path)), unquote(anchor) or None)
            resolved[href] = hit
        if hit is not None:
            yield m, hit[0], hit[1]


def _markdown_link_spans(code_free: str, page_path: str, first_line: int) -> list[LinkSpan]:
    """The markdown links (``[text](page.md)``) of :func:`link_spans`."""
    lines = _Lines(code_free, first_line)
    return [LinkSpan(RawLink(target, anchor, m.group(1) or None, "markdown", lines.at(m.start())),
                     m.start(), m.end(), m.start(2), m.end(2))
            for m, target, anchor in _markdown_link_matches(code_free, page_path)]


def _markdown_links(code_free: str, page_path: str, first_line: int) -> list[RawLink]:
    """``[span.link for span in _markdown_link_spans(...)]``, without the spans."""
    lines = _Lines(code_free, first_line)
    return [_new_raw_link((target, anchor, m.group(1) or None, "markdown", lines.at(m.start())))
            for m, target, anchor in _markdown_link_matches(code_free, page_path)]


def scan_links(code_free: str, page_path: str, first_line: int = 1) -> list[RawLink]:
    """Links in a code-free body of the page at root-relative ``page_path``.

    Equal to ``[span.link for span in link_spans(...)]`` (tests/engine/corpus/test_markdown_scan_fast.py pins
    it), without the spans: every page's parse calls this, so the wikilink loop is written out
    (lines counted inline, the common ``[[target]]`` split without a call, no span objects).
    """
    if "[[" not in code_free:
        links: list[RawLink] = []
    else:
        links = []
        append = links.append
        count = code_free.count
        offset, line = 0, first_line
        for m in _WIKILINK_SCAN.finditer(code_free):
            inner = m.group(1)
            if "|" in inner or "#" in inner:
                target, anchor, alias = split_wikilink(inner)
                if not target:  # [[#heading]] points into the page itself
                    continue
            else:
                target, anchor, alias = inner.strip(), None, None
                if not target:
                    continue
            start = m.start()
            line += count("\n", offset, start)
            offset = start
            append(_new_raw_link((target, anchor, alias,
                                  "embed" if start > 0 and code_free[start - 1] == "!" else "wikilink", line)))
    if "(" in code_free and "](" in code_free:  # (a memchr first: many pages have no "(")
        links += _markdown_links(code_free, page_path, first_line)
    return links


def display_label(target: str, anchor: str | None, alias: str | None) -> str:
    """The text a wikilink shows: its alias, else ``target › anchor``, else the target as written."""
    return alias or (f"{target} › {anchor}" if anchor else target)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def property_link_spans(raw: str, meta: dict[str, Any],
                        skip: frozenset[str] = frozenset({"related"})) -> list[tuple[int, int]]:
    """(start, end) in ``raw`` of the inside of each wikilink written as a frontmatter property
    value (``up: "[[Parent]]"``, lists of them): what a rewriter replaces.

    Found in the raw YAML, and counted only when the parsed value holds that exact link: a YAML
    comment or an unquoted ``[[x]]`` (a nested list to YAML, not a link to Obsidian) is not a
    link. Keys in ``skip`` are read elsewhere (``related:``).
    """
    if "[[" not in raw:
        return []
    values = "\n".join(v for k, val in meta.items() if str(k) not in skip for v in _strings(val))
    if "[[" not in values:
        return []
    keys = [(m.start(), m.group(1).strip().strip("'\"")) for m in _TOP_KEY.finditer(raw)]
    starts = [k[0] for k in keys]
    spans: list[tuple[int, int]] = []
    for m in _WIKILINK_SCAN.finditer(raw):
        if m.group(0) not in values:
            continue
        at = bisect.bisect_right(starts, m.start()) - 1
        if at >= 0 and keys[at][1] in skip:
            continue
        before = raw[raw.rfind("\n", 0, m.start()) + 1:m.start()]
        if before.lstrip().startswith("#") or _in_yaml_comment(before):
            continue
        spans.append((m.start(1), m.end(1)))
    return spans


def _in_yaml_comment(before: str) -> bool:
    """Whether a ``#`` after whitespace, outside quotes, starts a YAML comment in ``before``."""
    quote = ""
    for i, ch in enumerate(before):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i and before[i - 1] in " \t":
            return True
    return False


def scan_property_links(raw: str, meta: dict[str, Any], first_line: int = 2) -> list[RawLink]:
    """Wikilinks written as frontmatter property values, each with its line in the file (the
    raw YAML starts at ``first_line``) and kind ``property``."""
    lines = _Lines(raw, first_line)
    links: list[RawLink] = []
    for start, end in property_link_spans(raw, meta):
        target, anchor, alias = split_wikilink(raw[start:end])
        if target:
            links.append(RawLink(target, anchor, alias, "property", lines.at(start)))
    return links


class Heading(NamedTuple):
    """A heading of a page: where it starts (its first line), its level (1-6) and its text."""

    start: int
    level: int
    text: str


def _atx_headings(code_free: str) -> Iterator[Heading]:
    """ATX headings: ``#`` to ``######`` after at most three spaces at a line start."""
    if "#" not in code_free:
        return
    for m in _HEADINGS.finditer(code_free):
        start = m.start()
        line = code_free.rfind("\n", 0, start) + 1
        if start - line <= 3 and (start == line or code_free[line:start].isspace()):
            yield Heading(start, len(m.group(1)) + 1, m.group(2).strip())


def _setext_headings(code_free: str) -> Iterator[Heading]:
    """Setext headings: a paragraph underlined by ``===`` (level 1) or ``---`` (level 2).

    As CommonMark reads them (and the station's renderer, markdown-it): the heading is the whole
    paragraph above the underline, up to a blank line, an ATX heading or a thematic break; a
    paragraph that is a list item or a block quote is not one (its ``---`` is a thematic break)."""
    for m in _SETEXT_UNDERLINE.finditer(code_free):
        lines: list[str] = []
        end = m.start()  # the newline that ends the paragraph's last line
        start, first = end, ""
        while True:
            line_start = code_free.rfind("\n", 0, end) + 1
            line = code_free[line_start:end]
            if not line.strip() or _ANY_HEADING.match(line) or _THEMATIC_BREAK.match(line):
                break
            if _LIST_ITEM.match(line) or line.lstrip().startswith(">"):
                lines = []  # a list item's or a quote's paragraph: the underline is a break
                break
            lines.append(line.strip())
            start, first = line_start, line
            if line_start == 0:
                break
            end = line_start - 1
        if lines and len(first) - len(first.lstrip(" ")) <= 3:  # (4 spaces open a code block)
            yield Heading(start, 1 if m.group(1)[0] == "=" else 2, " ".join(reversed(lines)))


def heading_spans(code_free: str) -> list[Heading]:
    """Every heading of a code-free body (ATX and setext), in the order they appear."""
    found = list(_atx_headings(code_free))
    if "\n" in code_free and ("=" in code_free or "-" in code_free):
        setext = list(_setext_headings(code_free))
        if setext:
            found = sorted(found + setext)
    return found


def headings(code_free: str) -> list[str]:
    """Every heading's text, in order (what ``[[page#Heading]]`` may point at).

    Equal to ``[h.text for h in heading_spans(code_free) if h.text]`` (tests pin it); a page
    without a setext underline (most) has only ATX headings, read here without span objects.
    """
    if "\n" in code_free and ("=" in code_free or "-" in code_free) and _SETEXT_UNDERLINE.search(code_free):
        return [h.text for h in heading_spans(code_free) if h.text]
    if "#" not in code_free:
        return []
    texts = []
    rfind = code_free.rfind
    for m in _HEADINGS.finditer(code_free):
        start = m.start()
        line = rfind("\n", 0, start) + 1
        if start - line <= 3 and (start == line or code_free[line:start].isspace()):
            text = m.group(2).strip()
            if text:
                texts.append(text)
    return texts


def block_ids(code_free: str) -> list[str]:
    """Every block id (``^id`` ending a line), lowercase (what ``[[page#^id]]`` points at)."""
    if "^" not in code_free:
        return []
    return [m.group(1).lower() for m in _BLOCK_ID.finditer(code_free)]


def anchor_key(text: str) -> str:
    """A heading or anchor as Obsidian matches it: case-insensitive, punctuation-tolerant.

    Case folded, NFC, every run of characters other than letters and digits (any script) one
    space: ``Step 1: Install (macOS)`` and ``step 1 install macOS`` are the same anchor.
    """
    text = text if text.isascii() else unicodedata.normalize("NFC", text)
    return " ".join(_ANCHOR_JUNK.sub(" ", text.casefold()).split())


def anchor_in(heading_texts: list[str], blocks: list[str], anchor: str) -> bool:
    """Whether ``anchor`` names one of a page's headings or block ids, as Obsidian matches them.

    ``^id`` is a block id (``blocks`` lowercase); anything else a heading (case-insensitive,
    punctuation-tolerant, see :func:`anchor_key`), and a chain ``A#B`` needs each in that order.
    """
    anchor = anchor.strip()
    if anchor.startswith("^"):
        return anchor[1:].strip().lower() in blocks
    chain = [anchor_key(part) for part in anchor.split("#") if part.strip()]
    i = 0
    for heading in heading_texts:
        if i < len(chain) and anchor_key(heading) == chain[i]:
            i += 1
    return i == len(chain)


def find_section(body: str, anchor: str | None) -> str | None:
    """The part of ``body`` that ``[[page#anchor]]`` points at, or None when there is none.

    A heading anchor (``A`` or a chain ``A#B``) is the heading line through the line before the
    next heading of the same or a higher level; a block anchor (``^id``) is the paragraph or list
    item ending in that id, without the id. No anchor is the whole body.
    """
    if not anchor:
        return body
    code_free = strip_code(body)
    anchor = anchor.strip()
    if anchor.startswith("^"):
        want = anchor[1:].lower()
        for m in _BLOCK_ID.finditer(code_free):
            if m.group(1).lower() != want:
                continue
            line_start = body.rfind("\n", 0, m.start()) + 1
            if _LIST_ITEM.match(body, line_start) and body[line_start:m.start()].strip():
                return body[line_start:m.start()].strip()  # a list item's id names that item
            start = body.rfind("\n\n", 0, m.start())
            start = 0 if start < 0 else start + 2
            if not body[start:m.start()].strip():  # the id on its own line: the block before it
                start = body.rfind("\n\n", 0, max(0, start - 2))
                start = 0 if start < 0 else start + 2
            return body[start:m.start()].strip()
        return None
    chain = [anchor_key(part) for part in anchor.split("#") if part.strip()]
    if not chain:
        return body
    found = heading_spans(code_free)
    i = 0
    for n, heading in enumerate(found):
        if anchor_key(heading.text) != chain[i]:
            continue
        if i < len(chain) - 1:
            i += 1
            continue
        end = next((h.start for h in found[n + 1:] if h.level <= heading.level), len(body))
        return body[heading.start:end].rstrip()
    return None


def scan_self_anchors(code_free: str, first_line: int = 1) -> list[tuple[str, int]]:
    """(anchor, line) of every ``[[#Heading]]`` / ``[[#^block]]`` pointing into the page itself."""
    lines = _Lines(code_free, first_line)
    found: list[tuple[str, int]] = []
    for m in _WIKILINK_SCAN.finditer(code_free):
        if m.group(1).lstrip().startswith("#"):
            target, anchor, _alias = split_wikilink(m.group(1))
            if not target and anchor:
                found.append((anchor, lines.at(m.start())))
    return found


def scan_tags(code_free: str) -> list[str]:
    """Body ``#tags`` (a tag has at least one non-digit; headings and anchors are not tags)."""
    if "#" not in code_free:
        return []
    return [m.group(1).rstrip("/-") for m in _TAG_SCAN.finditer(code_free)
            if m.start() == 0 or code_free[m.start() - 1].isspace()]


def first_heading(code_free: str, within: int = 800) -> str | None:
    """The text of the first ``# `` heading that starts within the first ``within`` characters."""
    m = _HEADING.search(code_free, 0, min(len(code_free), within + 400))
    if m and m.start() < within:
        return m.group(1).strip()
    return None


def snippet(code_free: str, original: str | None = None, limit: int = 280) -> str:
    """The first paragraph that is not a heading, collapsed to one line, at most ``limit`` chars.

    Paragraphs are found in the code-free text (a code block is never a snippet); the words come
    from ``original`` at the same offsets, so inline code keeps its text.
    """
    source = code_free if original is None else original
    for start, end in _paragraphs(code_free):
        if not code_free[start:end].strip():
            continue
        if source is code_free:  # nothing was blanked (most pages): one split
            kept = [line for line in code_free[start:end].split("\n")
                    if line.strip() and not _ANY_HEADING.match(line)]
        else:
            kept = [
                src for free, src in zip(code_free[start:end].split("\n"), source[start:end].split("\n"),
                                         strict=True)
                if free.strip() and not _ANY_HEADING.match(free)
            ]
        text = " ".join(" ".join(kept).split())
        if not text:
            continue
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        return text
    return ""
