"""Link resolution and the reverse (backlink) index (SPEC §3, §8).

Resolution order for a normalised target: exact slug (file stem), exact relative path, page alias
or title, then a path suffix match in either direction (on ``/`` boundaries). A target that
matches nothing is kept as *unresolved* ("not yet written"); one that matches several pages at
the same step is *ambiguous*: it resolves to the first by (depth, path) and lint reports it.

Everything here works from the cached :class:`~curator.engine.page.Page` records: no file is
read and no regular expression is built from page names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from .page import Link, Page, link_key, path_key


@dataclass(slots=True, frozen=True)
class Resolution:
    key: str
    path: str | None  # the page the link points to, or None when unresolved
    candidates: tuple[str, ...] = ()  # all pages that matched at the deciding step

    @property
    def resolved(self) -> bool:
        return self.path is not None

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


class Edge(NamedTuple):
    """A link of a page with its resolution (a tuple: a 32,000-page wiki has ~200,000 of them,
    and a tuple is built several times faster than a frozen dataclass)."""

    source: str
    link: Link
    resolution: Resolution

    @property
    def target(self) -> str | None:
        return self.resolution.path


def _order(path: str) -> tuple[int, str]:
    return (path.count("/"), path)


class LinkIndex:
    """Resolves every link of a set of pages once and answers outgoing/backlink queries."""

    def __init__(self, pages: Mapping[str, Page]) -> None:
        self.pages = pages
        self._by_stem: dict[str, list[str]] = defaultdict(list)
        self._by_path: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(pages, key=_order):
            page = pages[path]
            self._by_stem[page.slug].append(path)
            self._by_path[path_key(path)].append(path)
            names = {link_key(page.title), *(link_key(a) for a in page.aliases)}
            for name in names:
                if name:
                    self._by_name[name].append(path)
        self._cache: dict[str, Resolution] = {}
        self.outgoing: dict[str, list[Edge]] = {}
        self.incoming: dict[str, list[Edge]] = defaultdict(list)
        self.unresolved: dict[str, list[Edge]] = defaultdict(list)
        # the hot loop of every graph and lint (200,000 links at 32,000 pages): locals only
        cache, resolve = self._cache, self.resolve_key
        incoming, unresolved, outgoing = self.incoming, self.unresolved, self.outgoing
        for path in sorted(pages):
            edges: list[Edge] = []
            for link in pages[path].links:
                res = cache.get(link.key) or resolve(link.key)
                edge = Edge(path, link, res)
                edges.append(edge)
                target = res.path
                if target is None:
                    unresolved[link.key].append(edge)
                elif target != path:
                    incoming[target].append(edge)
            outgoing[path] = edges

    def resolve(self, target: str) -> Resolution:
        """Resolve a target as written (``Ann Smith``, ``wiki/ann-smith.md``, ``ann-smith``)."""
        return self.resolve_key(link_key(target))

    def resolve_key(self, key: str) -> Resolution:
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._resolve(key)
        return hit

    def _resolve(self, key: str) -> Resolution:
        if not key:
            return Resolution(key, None)
        for table in (self._by_stem, self._by_path, self._by_name):
            found = table.get(key)
            if found:
                return Resolution(key, found[0], tuple(found))
        last = key.rsplit("/", 1)[-1]
        suffix = [
            p for p in self._by_stem.get(last, ())
            if path_key(p).endswith("/" + key) or key.endswith("/" + path_key(p))
        ]
        if suffix:
            return Resolution(key, suffix[0], tuple(suffix))
        return Resolution(key, None)

    def backlinks(self, path: str) -> list[Edge]:
        return self.incoming.get(path, [])

    def ambiguous_edges(self) -> list[Edge]:
        return [e for edges in self.outgoing.values() for e in edges if e.resolution.ambiguous]
