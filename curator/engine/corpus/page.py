"""A page of the wiki: its metadata as parsed from frontmatter and body (docs/design.md §3).

:func:`parse_page` never raises on page content: whatever is wrong with a page is recorded in
``Page.problems`` (codes that lint reports) and sensible defaults are used instead.
"""

from __future__ import annotations

import functools
import itertools
import math
import posixpath
import sys
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from curator.engine.corpus import frontmatter
from curator.engine.corpus.slugs import normalize_target

LAYERS: tuple[str, ...] = ("identity", "core", "context", "deep")
LAYER_RANK = {name: i for i, name in enumerate(LAYERS)}
_LAYER_ALIASES = {"l0": "identity", "l1": "core", "l2": "context", "l3": "deep"}
DEFAULT_LAYER = "deep"
#: Links kept per page: bounds memory and the cache row of a pathological page (a 10 MB page
#: repeating one link); real hub pages (an index of every page) stay far below it.
MAX_LINKS_PER_PAGE = 50_000
DEFAULT_TRUST = 0.5

#: Ranking factor per ``source_type`` (docs/design.md §3).
SOURCE_TYPE_FACTORS: dict[str, float] = {
    "verified_fact": 1.2,
    "user_statement": 1.0,
    "tool_output": 0.9,
    "unknown": 0.8,
    "raw_dialogue": 0.6,
}


class Link(NamedTuple):
    """A link from a page; ``key`` is the normalised target used for resolution.

    A named tuple rather than a frozen dataclass: a warm open rebuilds every link of every page
    from the cache, and a tuple is built about twice as fast.
    """

    target: str
    key: str
    anchor: str | None
    alias: str | None
    kind: str  # wikilink | embed | markdown | related | property (a wikilink as a frontmatter value)
    line: int  # 1-based line in the file (0 for frontmatter ``related:``)


@functools.lru_cache(maxsize=1 << 17)
def slug_of(path: str) -> str:
    """:attr:`Page.slug` of the page at ``path`` (remembered: a graph or a lint asks for every
    page's slug several times, and the path alone decides it)."""
    stem = posixpath.splitext(path.rpartition("/")[2])[0]
    return normalize_target(stem if stem.isascii() else unicodedata.normalize("NFC", stem))


#: ``Link._make`` without its Python-level frame: a warm open builds ~200,000 links at 32,000
#: pages (the cache's rows are written by :meth:`Page.to_row` and versioned, so always whole).
_new_link = functools.partial(tuple.__new__, Link)


@dataclass(slots=True, frozen=True)
class Problem:
    """One problem found in a page."""

    code: str  # frontmatter | layer | trust | source-type | encoding | nul-bytes | empty | links |
    #: broken-anchor (a ``[[#heading]]`` into the page itself)
    message: str
    line: int = 0  # 1-based line in the file, when the problem has one


@dataclass(slots=True)
class Page:
    """Everything the engine knows about a page without reading its body again."""

    path: str  # posix path relative to the wiki root, e.g. "wiki/ann-smith.md"
    size: int
    mtime_ns: int
    title: str
    layer: str = DEFAULT_LAYER
    trust: float = DEFAULT_TRUST
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    source_type: str = "unknown"
    author: str | None = None
    created: str | None = None
    updated: str | None = None
    do_not_inject: bool = False
    snippet: str = ""
    links: list[Link] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    bom: bool = False
    crlf: bool = False
    invalid_utf8: bool = False
    #: heading texts in order, and block ids (lowercase): what ``[[page#anchor]]`` may point at
    headings: list[str] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)

    @property
    def stem(self) -> str:
        return posixpath.splitext(posixpath.basename(self.path))[0]

    @property
    def slug(self) -> str:
        """The page's name for links: its file stem, normalised like a link target."""
        return slug_of(self.path)

    @property
    def namespace(self) -> str:
        """First path segment (``""`` for a page at the root)."""
        head, sep, _ = self.path.partition("/")
        return head if sep else ""

    @property
    def source_factor(self) -> float:
        return SOURCE_TYPE_FACTORS.get(self.source_type, SOURCE_TYPE_FACTORS["unknown"])

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Page:
        rec = dict(rec)
        rec["links"] = [Link(*x) if isinstance(x, list) else Link(**x) for x in rec["links"]]
        rec["problems"] = [Problem(**x) for x in rec["problems"]]
        return cls(**rec)

    def to_row(self) -> list[Any]:
        """A compact JSON-ready list (fields in declaration order; links and problems as lists).

        The page cache stores this instead of :meth:`to_record`: ``dataclasses.asdict`` deep-copies
        every link and dominated a cold index, and positional lists decode faster on a warm open.
        """
        return [self.path, self.size, self.mtime_ns, self.title, self.layer, self.trust, self.tags,
                self.aliases, self.related, self.source_type, self.author, self.created, self.updated,
                self.do_not_inject, self.snippet,
                [[k.target, k.key, k.anchor, k.alias, k.kind, k.line] for k in self.links],
                [[p.code, p.message, p.line] for p in self.problems],
                self.meta, self.bom, self.crlf, self.invalid_utf8, self.headings, self.blocks]

    @classmethod
    def from_row(cls, row: list[Any]) -> Page:
        """The inverse of :meth:`to_row`."""
        page = cls(*row)
        page.links = list(map(_new_link, page.links))
        page.problems = [Problem(*x) for x in page.problems]  # type: ignore[misc]
        return page


# --- decoding ----------------------------------------------------------------------------

@dataclass(slots=True)
class Decoded:
    """A page's bytes as text, with how they were written."""

    text: str  # without BOM; CRLF kept as is
    bom: bool
    crlf: bool
    invalid_utf8: bool
    nul: bool


def decode(data: bytes) -> Decoded:
    """Decode page bytes as UTF-8; invalid bytes are replaced and flagged, never fatal."""
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text = data.decode("utf-8")
        invalid = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        invalid = True
    # (``find`` with an end, not a slice: no 64 KB copy; no CR at all is one ``memchr``)
    crlf = b"\r" in data and data.find(b"\r\n", 0, 65536) >= 0
    return Decoded(text, bom, crlf, invalid, b"\x00" in data)


# --- field rules -----------------------------------------------------------------------

def _as_list(value: Any) -> list[str]:
    """A frontmatter list field: a YAML list or a comma-separated string.

    Only scalars count: a mapping (``tags: {a: 1}``) or nested list is ignored rather than shown
    as Python's repr of it.
    """
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = [str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        items = [str(value)]
    else:
        items = []
    return [s.strip() for s in items if s.strip()]


def parse_layer(value: Any) -> tuple[str, str | None]:
    """(layer, problem): ``l0..l3`` and any case accepted; unknown -> deep with a problem."""
    if value is None:
        return DEFAULT_LAYER, None
    name = str(value).strip().lower()
    name = _LAYER_ALIASES.get(name, name)
    if name in LAYER_RANK:
        return name, None
    return DEFAULT_LAYER, f"unknown layer {value!r} (expected identity, core, context or deep); treated as deep"


def parse_trust(value: Any) -> tuple[float, str | None]:
    """(trust, problem): non-numeric -> 0.5, out of [0, 1] -> clamped; both are problems."""
    if value is None:
        return DEFAULT_TRUST, None
    if isinstance(value, bool):
        number = math.nan
    elif isinstance(value, (int, float)):
        number = float(value)
    else:
        try:
            number = float(str(value).strip())
        except ValueError:
            number = math.nan
    if not math.isfinite(number):
        return DEFAULT_TRUST, f"trust {value!r} is not a number; treated as {DEFAULT_TRUST}"
    if number < 0 or number > 1:
        clamped = min(1.0, max(0.0, number))
        return clamped, f"trust {value!r} is outside 0..1; clamped to {clamped}"
    return number, None


def _folder_of(path: str) -> str:
    """The page's topical folder: the first segment, looking past a leading ``wiki/``."""
    parts = path.split("/")
    if len(parts) > 2 and parts[0] == "wiki":
        return parts[1]
    return parts[0] if len(parts) > 1 else ""


def derive_source_type(path: str, trust: float) -> str:
    folder = _folder_of(path)
    if folder == "sources":
        return "raw_dialogue"
    if folder in ("concepts", "entities") and trust >= 0.7:
        return "verified_fact"
    return "unknown"


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value)


def _as_text(value: Any) -> str | None:
    """A scalar text field; a list or mapping (``title: [1, 2]``) counts as absent."""
    if value is None or value == "" or isinstance(value, (list, dict)):
        return None
    return str(value)


#: Strings this short are shared between pages (:func:`_shared`): a tag, a frontmatter key, a
#: date, a layer; a title or a sentence is not.
SHARED_MAX = 40


def _shared(value: Any) -> Any:
    """``value`` as one object for every page that holds it, when it is a short string (interned:
    a record holding it says so, and decoding it gives that one object, see ``encode_record``).
    Every page held its own ``"title"``, ``"tags"``, ``"created"`` keys, tag words and dates:
    26 MB of the 119 MB every page decoded holds at 32,000 pages."""
    if type(value) is str and len(value) <= SHARED_MAX:
        return sys.intern(value)
    if type(value) is list and all(type(v) is str for v in value):
        return [sys.intern(v) if len(v) <= SHARED_MAX else v for v in value]
    return value


def _shared_meta(meta: dict[str, Any], title: str) -> dict[str, Any]:
    """The frontmatter with its keys and short values shared (:func:`_shared`), its title the
    page's own when the same."""
    out = {sys.intern(k) if type(k) is str else k: _shared(v) for k, v in meta.items()}
    if out.get("title") == title:
        out["title"] = title
    return out


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        k = item.lower()
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


# --- parsing ---------------------------------------------------------------------------

def parse_page(path: str, data: bytes, mtime_ns: int = 0) -> tuple[Page, str]:
    """Parse one page; returns the :class:`Page` and its body text (frontmatter removed)."""
    from curator.engine.corpus import (
        markdown_scan,  # (here: a command that parses no page, such as search, never loads it)
    )

    dec = decode(data)
    problems: list[Problem] = []
    if dec.invalid_utf8:
        problems.append(Problem("encoding", "invalid UTF-8 bytes (replaced for reading; never rewritten blindly)"))
    if dec.nul:
        problems.append(Problem("nul-bytes", "contains NUL bytes"))
    if not dec.text or dec.text.isspace():
        problems.append(Problem("empty", "the page is empty"))
    parts = frontmatter.split(dec.text)
    meta: dict[str, Any] = {}
    if parts.problem:
        problems.append(Problem("frontmatter", parts.problem))
    elif parts.raw is not None:
        meta, problem = frontmatter.load(parts.raw)
        if problem:
            problems.append(Problem("frontmatter", problem))

    layer, problem = parse_layer(meta.get("layer"))
    if problem:
        problems.append(Problem("layer", problem))
    trust, problem = parse_trust(meta.get("trust"))
    if problem:
        problems.append(Problem("trust", problem))

    body = parts.body
    code_free = markdown_scan.strip_code(body)

    explicit_source = meta.get("source_type")
    if explicit_source is None:
        source_type = derive_source_type(path, trust)
    else:
        source_type = str(explicit_source).strip().lower()
        if source_type not in SOURCE_TYPE_FACTORS:
            problems.append(Problem("source-type", f"unknown source_type {explicit_source!r}; ranked as unknown"))
            source_type = "unknown"

    title = _as_text(meta.get("title"))
    if title is not None:
        title = " ".join(title.split())
    # Without a title or heading the file name names the page, as Obsidian shows it: the folder is
    # in the path column already, and "wiki/notes/x" read as a title nobody wrote.
    title = title or markdown_scan.first_heading(code_free) or posixpath.splitext(posixpath.basename(path))[0]

    tags = [t.lstrip("#") for t in _as_list(meta.get("tags"))]
    tags = [sys.intern(t) for t in _unique([t for t in tags if t] + markdown_scan.scan_tags(code_free))]
    related = _as_list(meta.get("related"))
    aliases = _as_list(meta.get("aliases"))

    # Only the first MAX_LINKS_PER_PAGE links are kept (the rest only counted), and each target's
    # key is worked out once: a 10 MB page of 134,000 links mostly to a few pages built 84,000
    # links only to drop them, each key anew.
    scanned = markdown_scan.scan_links(code_free, path, parts.body_line)
    keys: dict[str, str] = {}

    def key_of(target: str) -> str:
        key = keys.get(target)
        if key is None:
            key = link_key(target)
            key = keys[target] = target if key == target else key  # (one string, not two alike)
        return key

    links = [_new_link((target, key_of(target), anchor, alias, kind, line))
             for target, anchor, alias, kind, line in itertools.islice(scanned, MAX_LINKS_PER_PAGE)]
    dropped = len(scanned) - len(links)
    for entry in related:
        target, anchor, alias = markdown_scan.split_wikilink(entry.strip("[]"))
        if target:
            links.append(Link(target, key_of(target), anchor, alias, "related", 0))
    if meta and parts.raw is not None:
        links += [Link(raw.target, key_of(raw.target), raw.anchor, raw.alias, raw.kind, raw.line)
                  for raw in markdown_scan.scan_property_links(parts.raw, meta)]
    heads, blocks = markdown_scan.headings(code_free), markdown_scan.block_ids(code_free)
    if "[[#" in code_free:  # [[#Heading]] and [[#^block]] point into the page itself
        for anchor, line in markdown_scan.scan_self_anchors(code_free, parts.body_line):
            if not markdown_scan.anchor_in(heads, blocks, anchor):
                what = "block" if anchor.startswith("^") else "heading"
                problems.append(Problem("broken-anchor", f"[[#{anchor}]]: this page has no {what} {anchor!r}",
                                        line))
    if len(links) + dropped > MAX_LINKS_PER_PAGE:
        problems.append(Problem("links", f"{len(links) + dropped} links; only the first {MAX_LINKS_PER_PAGE} are "
                                "kept"))
        del links[MAX_LINKS_PER_PAGE:]

    page = Page(
        path=path,
        size=len(data),
        mtime_ns=mtime_ns,
        title=title,
        layer=sys.intern(layer),
        trust=trust,
        tags=tags,
        aliases=aliases,
        related=related,
        source_type=sys.intern(source_type),
        author=_shared(_as_text(meta.get("author"))),
        created=_shared(_as_text(meta.get("created"))),
        updated=_shared(_as_text(meta.get("updated"))),
        do_not_inject=_as_bool(meta.get("do_not_inject", False)),
        snippet=markdown_scan.snippet(code_free, body),
        links=links,
        problems=problems,
        meta=_shared_meta(meta, title) if meta else meta,
        bom=dec.bom,
        crlf=dec.crlf,
        invalid_utf8=dec.invalid_utf8,
        headings=heads,
        blocks=blocks,
    )
    return page, body


def link_key(target: str) -> str:
    """The resolution key of a link target: NFC, normalised, without a ``.md`` suffix."""
    key = normalize_target(target if target.isascii() else unicodedata.normalize("NFC", target))
    return key[:-3] if key.endswith(".md") else key


def path_key(path: str) -> str:
    """The resolution key of a page path (``wiki/Ann Smith.md`` -> ``wiki/ann-smith``)."""
    return link_key(path)
