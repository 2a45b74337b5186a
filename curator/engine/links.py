"""Link resolution and the reverse (backlink) index (docs/design.md §3, §8), the way Obsidian resolves.

A normalised target (NFC, case-insensitive, whitespace as ``-``, no ``.md``) is looked up, for the
linking page, in this order:

1. for a path-qualified target, the exact path from the wiki root (``[[a/b]]`` is ``a/b.md``);
2. the path relative to the linking page's folder (for a bare name: the page beside it);
3. every page whose path ends with the target on a ``/`` boundary (for a bare name: every page
   with that file stem), the shortest path string first, ties alphabetical;
4. a page alias or title;
5. a path that ends with the target's tail or the other way round (``[[home/wiki/people/bob]]``).

A target with a file extension (``diagram.png``, ``spec.pdf``, ``board.canvas``) is looked up
among the attachment files the same way (steps 1-3) and, when it names a kind of file Obsidian
attaches, it is a *missing attachment* when none is there, never a page "not yet written". A
target that matches nothing is kept as *unresolved*; one that several pages share (step 3) is
*ambiguous*: it still resolves as above and lint reports it with the page chosen.

Everything here works from the cached :class:`~curator.engine.page.Page` records and the list of
attachment paths the walker saw: no file is touched, no regular expression is built from page
names, and each lookup is a few dictionary probes (precomputed by path, by name and by title).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from . import markdown_scan
from .page import Link, Page, link_key, path_key


@dataclass(slots=True, frozen=True)
class Resolution:
    key: str
    path: str | None  # the page the link points to, or None
    candidates: tuple[str, ...] = ()  # every page (or file) sharing the name at the deciding step
    attachment: str | None = None  # the attachment file the link points to, when it names a file

    @property
    def resolved(self) -> bool:
        return self.path is not None or self.attachment is not None

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1

    @property
    def names_file(self) -> bool:
        """Whether the target names an attachment (found or not) rather than a page."""
        return self.attachment is not None or markdown_scan.is_attachment_target(self.key)


class Edge(NamedTuple):
    """A link of a page with its resolution (a tuple: a 32,000-page wiki has ~200,000 of them,
    and a tuple is built several times faster than a frozen dataclass)."""

    source: str
    link: Link
    resolution: Resolution

    @property
    def target(self) -> str | None:
        """The page linked to (None for an unresolved link and for an attachment)."""
        return self.resolution.path


def anchor_found(page: Page, anchor: str) -> bool:
    """Whether ``[[page#anchor]]`` points at something on ``page``, matched as Obsidian does
    (see :func:`~.markdown_scan.anchor_in`)."""
    return markdown_scan.anchor_in(page.headings, page.blocks, anchor)


def _order(path: str) -> tuple[int, str]:
    """Obsidian's preference among same-named files: the shortest path string, then alphabetical."""
    return (len(path), path)


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


class _Files:
    """Paths of one kind of file by normalised path and by normalised last segment."""

    __slots__ = ("by_name", "by_path", "key_of")

    def __init__(self, items: Iterable[tuple[str, str, str]]) -> None:
        """``items``: (path, path key, name key), already sorted by :func:`_order`."""
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.key_of: dict[str, str] = {}
        for path, pkey, name in items:
            self.by_path.setdefault(pkey, path)
            self.by_name[name].append(path)
            self.key_of[path] = pkey

    def named(self, key: str) -> tuple[str | None, tuple[str, ...]]:
        """(the exact root path, every path ending with ``key``), context-free."""
        last = key.rpartition("/")[2]
        named = self.by_name.get(last, ())
        if "/" in key:
            tail = "/" + key
            named = [p for p in named if self.key_of[p].endswith(tail)]
        return self.by_path.get(key), tuple(named)

    def relative(self, key: str, folder: str) -> str | None:
        """The path at ``key`` relative to ``folder`` (a folder as written: it is normalised)."""
        if not folder:
            return None
        folder = link_key(folder)
        if "/" in key or key.startswith("."):
            rel = posixpath.normpath(f"{folder}/{key}")
        else:
            rel = f"{folder}/{key}"
        return self.by_path.get(rel)


class LinkIndex:
    """Resolves every link of a set of pages once and answers outgoing/backlink queries."""

    def __init__(self, pages: Mapping[str, Page], attachments: Iterable[str] = ()) -> None:
        self.pages = pages
        ordered = sorted(pages, key=_order)
        self._pages = _Files((p, path_key(p), pages[p].slug) for p in ordered)
        files = sorted(attachments, key=_order)
        self.attachments: tuple[str, ...] = tuple(files)
        self._files = _Files((f, link_key(f), link_key(f.rpartition("/")[2])) for f in files)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in ordered:
            page = pages[path]
            names = {link_key(page.title), *(link_key(a) for a in page.aliases)}
            for name in names:
                if name:
                    self._by_name[name].append(path)
        self._base: dict[str, Resolution] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}
        self._anywhere: dict[str, Resolution] = {}  # resolutions the linking page's folder cannot change
        self.outgoing: dict[str, list[Edge]] = {}
        self.incoming: dict[str, list[Edge]] = defaultdict(list)
        self.unresolved: dict[str, list[Edge]] = defaultdict(list)
        #: links to attachment files, by file path; and links naming files that are not there
        self.attachment_links: dict[str, list[Edge]] = defaultdict(list)
        self.missing_attachments: dict[str, list[Edge]] = defaultdict(list)
        # the hot loop of every graph and lint (200,000 links at 32,000 pages): locals only
        resolve, anywhere = self.resolve_key, self._anywhere
        incoming, unresolved, outgoing = self.incoming, self.unresolved, self.outgoing
        attached, missing = self.attachment_links, self.missing_attachments
        new = tuple.__new__  # an Edge without the Python-level __new__ (half the cost)
        for path in sorted(pages):
            folder = folder_of(path)
            edges: list[Edge] = []
            for link in pages[path].links:
                key = link[1]
                res = anywhere.get(key) or resolve(key, folder)
                edge = new(Edge, (path, link, res))
                edges.append(edge)
                target = res.path
                if target is not None:
                    if target != path:
                        incoming[target].append(edge)
                elif res.attachment is not None:
                    attached[res.attachment].append(edge)
                elif res.names_file:
                    missing[key].append(edge)
                else:
                    unresolved[key].append(edge)
            outgoing[path] = edges

    def resolve(self, target: str, source: str | None = None) -> Resolution:
        """Resolve a target as written (``Ann Smith``, ``wiki/ann-smith.md``, ``a.png``), from the
        page at ``source`` (its folder decides between same-named pages) or from the root."""
        return self.resolve_key(link_key(target), folder_of(source) if source else "")

    def resolve_key(self, key: str, folder: str = "") -> Resolution:
        base = self._base.get(key)
        if base is None:
            base = self._base[key] = self._resolve(key)
            if len(base.candidates) <= 1 and not (key.startswith(".") or "/." in key):
                # one page (or none) has the name and no ./ or ../ to follow: no folder changes it
                self._anywhere[key] = base
        if not folder or self._exact(key, base):
            return base
        if not base.candidates and not (key.startswith(".") or "/." in key):
            return base  # nothing shares the name, and no ``./``/``../`` path to follow
        hit = self._cache.get((key, folder))
        if hit is None:
            hit = self._cache[(key, folder)] = self._relative(key, folder, base)
        return hit

    def _exact(self, key: str, base: Resolution) -> bool:
        """Whether ``base`` came from the exact root path of a path-qualified target (step 1 beats
        the linking page's folder; for a bare name the page beside the linking page comes first)."""
        if "/" not in key:
            return False
        if base.attachment is not None:
            return self._files.by_path.get(key) == base.attachment
        return base.path is not None and self._pages.by_path.get(key) == base.path

    def _relative(self, key: str, folder: str, base: Resolution) -> Resolution:
        if base.attachment is not None or (base.path is None and "." in key.rpartition("/")[2]):
            hit = self._files.relative(key, folder)
            if hit is not None:
                return base if hit == base.attachment else Resolution(key, None, base.candidates, hit)
            if base.attachment is not None or markdown_scan.is_attachment_target(key):
                return base
        hit = self._pages.relative(key, folder)
        return base if hit is None or hit == base.path else Resolution(key, hit, base.candidates)

    def _resolve(self, key: str) -> Resolution:
        """The context-free resolution (from the root); :meth:`resolve_key` adds the folder step."""
        if not key:
            return Resolution(key, None)
        if "." in key.rpartition("/")[2]:
            exact, named = self._files.named(key)
            if exact is not None or named:
                return Resolution(key, None, named or (exact,), exact or named[0])  # type: ignore[arg-type]
            if markdown_scan.is_attachment_target(key):
                return Resolution(key, None)
        exact, named = self._pages.named(key)
        if exact is not None:
            qualified = "/" in key
            return Resolution(key, exact, (exact,) if qualified or not named else named)
        if named:
            return Resolution(key, named[0], named)
        found = self._by_name.get(key)
        if found:
            return Resolution(key, found[0], tuple(found))
        if "/" in key:
            last = key.rpartition("/")[2]
            ends = tuple(p for p in self._pages.by_name.get(last, ())
                         if key.endswith("/" + self._pages.key_of[p]))
            if ends:
                return Resolution(key, ends[0], ends)
        return Resolution(key, None)

    def backlinks(self, path: str) -> list[Edge]:
        return self.incoming.get(path, [])

    def inbound(self, path: str) -> int:
        """Distinct pages linking to ``path`` (itself excluded): the count ``explain``, the duplicate
        queue and merge's keep rule all show."""
        return len({e.source for e in self.incoming.get(path, ())} - {path})

    def stem_pages(self, slug: str) -> list[str]:
        """Pages whose file stem normalises to ``slug`` (what a bare ``[[slug]]`` is matched to)."""
        return list(self._pages.by_name.get(slug, ()))

    def ambiguous_edges(self) -> list[Edge]:
        return [e for edges in self.outgoing.values() for e in edges if e.resolution.ambiguous]


def _last(key: str) -> str:
    return key.rpartition("/")[2]


def odd_key(key: str) -> bool:
    """Whether the page a key resolves to may not be named by the key's last segment
    (``[[a/..]]``, ``[[./]]``): no local index decides it."""
    return _last(key) in ("", ".", "..")


def _matters(path: str, page: Page, lasts: set[str], keys: set[str]) -> bool:
    """Whether ``page`` can take part in resolving any of ``keys`` (their last segments: ``lasts``)."""
    if page.slug in lasts or link_key(page.title) in keys:
        return True
    # the path's last segment differs from the slug only by the whitespace the slug trims
    base = path.rpartition("/")[2]
    if base.split() != [base] and _last(path_key(path)) in lasts:
        return True
    return any(link_key(a) in keys for a in page.aliases)


def outgoing_of(pages: Mapping[str, Page], paths: Iterable[str], attachments: Iterable[str] = (),
                named: Callable[[set[str]], Mapping[str, Page]] | None = None) -> dict[str, list[Edge]]:
    """The outgoing links of the pages at ``paths``, exactly as :class:`LinkIndex` over all of
    ``pages`` holds them, resolved in an index over the pages that can take part in resolving
    them only (see :func:`local_index`): a saved graph brought up to date after an edit
    (:mod:`.graph`) re-resolves the edited pages' links, not the wiki's. ``named(names)``, when
    given, answers (at least) every page a link could reach by one of ``names``
    (:meth:`~.store.PageStore.pages_named`): only those are looked at, not every page."""
    chosen = set(paths)
    keys = {link.key for path in chosen for link in pages[path].links}
    if any(odd_key(k) for k in keys):  # ``[[a/..]]``: its page is not named by its last segment
        index = LinkIndex(pages, attachments)
    else:
        wanted = {_last(k) for k in keys}
        around = pages if named is None else named(wanted | keys)
        subset = {p: pages[p] for p in chosen}
        subset.update((p, pages[p]) for p in around if p in pages and _matters(p, pages[p], wanted, keys))
        index = LinkIndex(subset, attachments)
    return {path: index.outgoing[path] for path in chosen}


def local_index(pages: Mapping[str, Page], path: str, attachments: Iterable[str] = ()) -> LinkIndex:
    """A link index exact for one page only: its outgoing links and its backlinks (``outgoing``
    and ``incoming`` of ``path``) are what :class:`LinkIndex` over all of ``pages`` would hold.

    A one-shot ``neighbors`` needs just those; building the whole index resolves every link of
    the wiki (~200,000 at 32,000 pages). A key's resolution depends only on the pages whose path
    or name ends with the key's last segment and the pages titled or aliased as the key (see
    :meth:`LinkIndex._resolve` and the folder step), so the index is built over those pages and
    the links that could reach ``path`` are resolved in it, each from its own page's folder.
    """
    page = pages[path]
    names = {n for n in (link_key(page.title), *(link_key(a) for a in page.aliases)) if n}
    lasts = {page.slug, _last(path_key(path))}
    # links of other pages that could resolve to ``path`` (a name, a title, an alias of it)
    candidates = [(source, link) for source, other in pages.items() for link in other.links
                  if (link.key.rpartition("/")[2] in lasts or link.key in names) and source != path]
    keys = {link.key for _, link in candidates} | {link.key for link in page.links}
    if any(odd_key(k) for k in keys):
        return LinkIndex(pages, attachments)  # ``[[a/..]]``: its page is not named by its last segment
    wanted = {_last(k) for k in keys}
    subset = {p: other for p, other in pages.items() if p == path or _matters(p, other, wanted, keys)}
    index = LinkIndex(subset, attachments)
    inbound = []
    for source, link in sorted(candidates, key=lambda c: c[0]):  # stable: each page's links in order
        res = index.resolve_key(link.key, folder_of(source))
        if res.path == path:
            inbound.append(Edge(source, link, res))
    index.incoming = defaultdict(list, {path: inbound} if inbound else {})
    return index
