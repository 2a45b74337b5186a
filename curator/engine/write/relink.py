"""Re-pointing links when pages are merged, moved or renamed (docs/design.md §9), display text kept.

One rewriter serves merge, move and the repair of a rename done outside Curator. It edits the link
occurrences the page scanner extracts (:func:`~curator.engine.corpus.markdown_scan.link_spans`, code-aware, with their
spans and kinds), so every link kind the scanner knows is re-pointed and code is never touched:

* a wikilink or embed keeps what it shows: ``[[Merge Title]]`` -> ``[[keep|Merge Title]]``,
  ``[[old#Sec|text]]`` -> ``[[new#Sec|text]]``, ``[[old#Sec]]`` -> ``[[new#Sec|old › Sec]]``
  (inside a table row the added ``|`` is written ``\\|``);
* a markdown link keeps its text and anchor; its href is made relative to the linking page;
* ``related:`` entries and wikilinks in other frontmatter properties are renamed;
* a link that would make a page link to itself (``plain``) becomes its display text;
* text that itself moves to another folder gets its relative markdown links re-based.

:class:`Retarget` says where links go: ``moved`` maps the path a link resolves to now to the path
it must point at; ``resolve`` decides what a link points at now (the wiki's link index by default;
a repair after an outside rename matches the old names instead).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from curator.engine.corpus import frontmatter, markdown_scan
from curator.engine.corpus.links import LinkIndex, folder_of
from curator.engine.corpus.markdown_scan import LinkSpan, RawLink
from curator.engine.corpus.page import Page, link_key

#: (link as written, the page it is on) -> the page it points at now, or None
Resolver = Callable[[RawLink, str], "str | None"]


@dataclass(slots=True)
class LinkRewrite:
    page: str  # the page the link is in
    line: int  # 1-based line in that file (the frontmatter line for related:)
    kind: str  # wikilink | embed | markdown | related | property
    old: str  # the link as written
    new: str  # the link after the change (its display text when it became plain)

    def to_json(self) -> dict[str, Any]:
        return {"page": self.page, "line": self.line, "kind": self.kind, "old": self.old, "new": self.new}

    def render(self) -> str:
        """One preview line; a ``related:`` entry that would point a page at itself is dropped."""
        new = self.new or "(dropped from related:, it would point the page at itself)"
        return f"{self.page}:{self.line}  {self.old}  ->  {new}"


def wikilink_name(links: LinkIndex, dest: str, gone: Iterable[str] = ()) -> str:
    """How a wikilink names ``dest``: its file stem when no other page has that stem (ignoring
    the pages in ``gone``, which are leaving), else its path without ``.md``."""
    stem = posixpath.splitext(posixpath.basename(dest))[0]
    bare = dest[:-3] if dest.lower().endswith(".md") else dest
    skip = {dest, *gone}
    return bare if any(p not in skip for p in links.stem_pages(link_key(stem))) else stem


@dataclass(slots=True)
class Retarget:
    links: LinkIndex
    moved: dict[str, str]  # path a link points at now -> path it must point at
    plain: frozenset[str] = frozenset()  # destinations whose links become plain text
    gone: frozenset[str] = frozenset()  # paths that will not exist afterwards
    resolve: Resolver | None = None
    _names: dict[str, str] = field(default_factory=dict)
    #: (target as written, linking page's folder) -> the page it resolves to: the index resolves
    #: from exactly these two, and a merge's 2,000 pages repeat the same few targets
    _resolved: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def target(self, link: RawLink, source: str) -> str | None:
        if self.resolve is not None:
            return self.resolve(link, source)
        memo = (link.target, folder_of(source))
        try:
            return self._resolved[memo]
        except KeyError:
            hit = self._resolved[memo] = self.links.resolve(link.target, source).path
            return hit

    def dest(self, link: RawLink, source: str) -> str | None:
        now = self.target(link, source)
        return self.moved.get(now) if now is not None else None

    def name(self, dest: str, as_written: str) -> str:
        if "/" in as_written:
            return dest[:-3] if dest.lower().endswith(".md") else dest
        hit = self._names.get(dest)
        if hit is None:
            hit = self._names[dest] = wikilink_name(self.links, dest, self.gone)
        return hit


def plain_text(body: str, span: LinkSpan) -> str:
    """What a link shows, as plain text (wikilink label, markdown link text)."""
    link = span.link
    if link.kind == "markdown":
        text = body[span.start + 1:body.index("](", span.start)]
        return text or posixpath.splitext(posixpath.basename(link.target))[0]
    return markdown_scan.display_label(link.target, link.anchor, link.alias)


def display_form(body: str, page_path: str) -> str:
    """``body`` with every link replaced by the text it shows (code untouched): two versions of a
    text read the same to a person exactly when their display forms are equal."""
    code_free = markdown_scan.strip_code(body)
    if "[[" not in code_free and "](" not in code_free:
        return body
    out: list[str] = []
    last = 0
    for span in sorted(markdown_scan.link_spans(code_free, page_path), key=lambda s: s.start):
        if span.start < last:
            continue
        out.append(body[last:span.start])
        out.append(plain_text(body, span))
        last = span.end
    out.append(body[last:])
    return "".join(out)


def _href(dest: str, home: str, written: str) -> str:
    rel = posixpath.relpath(dest, posixpath.dirname(home) or ".")
    _, hash_, anchor = written.partition("#")
    return quote(rel, safe="/._-~") + (f"#{anchor}" if hash_ else "")


def _in_table(code_free: str, offset: int) -> bool:
    start = code_free.rfind("\n", 0, offset) + 1
    return code_free[start:offset].lstrip().startswith("|")


def _wikilink_inner(inner: str, link: RawLink, name: str, in_table: bool) -> str:
    cut = min((i for i in (inner.find("#"), inner.find("|")) if i >= 0), default=len(inner))
    if inner[:cut].endswith("\\"):  # ``[[old\\|text]]`` inside a table keeps its escape
        cut -= 1
    head, rest = inner[:cut], inner[cut:]
    if link_key(head) == link_key(name):
        return inner
    if "|" in rest:
        return name + rest
    sep = "\\|" if in_table else "|"
    return name + rest + sep + markdown_scan.display_label(link.target, link.anchor, None)


def frontmatter_links(page: Page | None, retarget: Retarget) -> bool:
    """Whether the frontmatter of ``page`` (as cached) may hold a link to re-point: a ``related:``
    entry that moves. A page not in the cache, or with a ``[[`` in its frontmatter, is read anyway."""
    if page is None:
        return True
    return any(link.kind not in _BODY_KINDS and retarget.dest(RawLink(link.target, None, None, link.kind, 0),
                                                              page.path) is not None
               for link in page.links)


_BODY_KINDS = frozenset({"wikilink", "embed", "markdown"})


def rewrite_page(text: str, page_path: str, retarget: Retarget,
                 new_path: str | None = None, *, check_frontmatter: bool = True) -> tuple[str, list[LinkRewrite]]:
    """``text`` (a whole file, frontmatter included) with its links re-pointed.

    ``new_path``: where this text will live when it moves too (its relative markdown links are
    re-based from there). ``check_frontmatter=False`` skips parsing the YAML unless it holds a
    ``[[`` (see :func:`frontmatter_links`).
    """
    parts = frontmatter.split(text)
    offset = len(text) - len(parts.body)
    body = parts.body
    home = new_path or page_path
    rebase = posixpath.dirname(home) != posixpath.dirname(page_path)
    code_free = markdown_scan.strip_code(body)
    edits: list[tuple[int, int, str, LinkSpan]] = []
    if "[[" in code_free or "](" in code_free:
        for span in markdown_scan.link_spans(code_free, page_path, parts.body_line):
            link = span.link
            dest = retarget.dest(link, page_path)
            inner = body[span.inner_start:span.inner_end]
            if dest is None:
                if rebase and link.kind == "markdown":
                    new = _href(link.target, home, inner)
                    if new != inner:
                        edits.append((span.inner_start, span.inner_end, new, span))
                continue
            if dest in retarget.plain:
                edits.append((span.start, span.end, plain_text(body, span), span))
            elif link.kind == "markdown":
                new = _href(dest, home, inner)
                if new != inner:
                    edits.append((span.inner_start, span.inner_end, new, span))
            else:
                new = _wikilink_inner(inner, link, retarget.name(dest, link.target),
                                      _in_table(code_free, span.start))
                if new != inner:
                    edits.append((span.inner_start, span.inner_end, new, span))
    rewrites: list[LinkRewrite] = []
    out: list[str] = []
    last = 0
    for start, end, new, span in sorted(edits, key=lambda e: e[0]):
        if start < last:
            continue
        out.append(body[last:start])
        out.append(new)
        last = end
        line = parts.body_line + body.count("\n", 0, start)
        if start == span.start and end == span.end:
            after = new
        else:
            after = body[span.start:start] + new + body[end:span.end]
        rewrites.append(LinkRewrite(page_path, line, span.link.kind, body[span.start:span.end], after))
    out.append(body[last:])
    new_text = text[:offset] + "".join(out) if edits else text
    if not check_frontmatter and (parts.raw is None or "[[" not in parts.raw):
        return new_text, rewrites
    new_text, more = _rewrite_frontmatter(new_text, page_path, retarget)
    return new_text, rewrites + more


def related_entries(meta: dict[str, Any]) -> list[str] | None:
    value = meta.get("related")
    if value is None:
        return None
    if isinstance(value, str):
        return [s.strip() for s in value.split(",") if s.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    return None


def entry_target(entry: str) -> str:
    target, _a, _b = markdown_scan.split_wikilink(entry.strip().strip("[]"))
    return target


def _entry_name(retarget: Retarget, dest: str, target: str) -> str:
    if target.lower().endswith(".md"):
        return dest
    return retarget.name(dest, target)


def _frontmatter_line(raw: str, needle: str) -> int:
    pos = raw.find(needle)
    return 2 + raw.count("\n", 0, pos) if pos >= 0 else 1


def _rewrite_value(value: str, page_path: str, retarget: Retarget) -> str:
    """Wikilinks inside one frontmatter string (``up: "[[Parent]]"``) re-pointed."""
    spans = markdown_scan.link_spans(value, page_path)
    out: list[str] = []
    last = 0
    for span in spans:
        if span.link.kind == "markdown":
            continue
        dest = retarget.dest(span.link, page_path)
        if dest is None:
            continue
        out.append(value[last:span.start])
        if dest in retarget.plain:
            out.append(plain_text(value, span))
        else:
            inner = value[span.inner_start:span.inner_end]
            out.append(value[span.start:span.inner_start]
                       + _wikilink_inner(inner, span.link, retarget.name(dest, span.link.target), False)
                       + value[span.inner_end:span.end])
        last = span.end
    out.append(value[last:])
    return "".join(out)


def _rewrite_frontmatter(text: str, page_path: str, retarget: Retarget) -> tuple[str, list[LinkRewrite]]:
    parts = frontmatter.split(text)
    if parts.raw is None or parts.problem or ("related" not in parts.raw and "[[" not in parts.raw):
        return text, []
    meta, problem = frontmatter.load(parts.raw)
    if problem:
        return text, []
    changed: list[LinkRewrite] = []
    changes: dict[str, Any] = {}
    entries = related_entries(meta)
    if entries:
        new_entries: list[str] = []
        for entry in entries:
            target = entry_target(entry)
            dest = retarget.dest(RawLink(target, None, None, "related", 0), page_path) if target else None
            if dest is None:
                new_entries.append(entry)
                continue
            new = "" if dest in retarget.plain else entry.replace(target, _entry_name(retarget, dest, target), 1)
            changed.append(LinkRewrite(page_path, _frontmatter_line(parts.raw, entry), "related", entry, new))
            if new:
                new_entries.append(new)
        if changed:
            changes["related"] = list(dict.fromkeys(new_entries))
    if changes:
        text = frontmatter.update(text, changes)
        parts = frontmatter.split(text)
    # property links (``up: "[[Parent]]"``) are edited in place: quoting, comments, layout kept
    raw = parts.raw
    if raw is not None and "[[" in raw:
        out: list[str] = []
        last = 0
        for start, end in markdown_scan.property_link_spans(raw, meta):
            inner = raw[start:end]
            target, anchor, alias = markdown_scan.split_wikilink(inner)
            link = RawLink(target, anchor, alias, "property", 0)
            dest = retarget.dest(link, page_path) if target else None
            if dest is None or dest in retarget.plain:
                continue
            new = _wikilink_inner(inner, link, retarget.name(dest, target), False)
            if new == inner:
                continue
            out.append(raw[last:start])
            out.append(new)
            last = end
            changed.append(LinkRewrite(page_path, 2 + raw.count("\n", 0, start), "property",
                                       f"[[{inner}]]", f"[[{new}]]"))
        if out:
            out.append(raw[last:])
            head = text.find("\n") + 1
            text = text[:head] + "".join(out) + text[head + len(raw):]
            return text, changed
    return (text, changed) if changed else (text, [])

