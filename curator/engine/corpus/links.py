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

Everything here works from the cached :class:`~curator.engine.corpus.page.Page` records and the list of
attachment paths the walker saw: no file is touched, no regular expression is built from page
names, and each lookup is a few dictionary probes (precomputed by path, by name and by title).

An index is never changed once built: :meth:`LinkIndex.updated` makes the index of the next state
of the pages from the changed ones (resolving again only what the change can alter, see there),
equal on every query to one built from scratch, and leaves the one before intact for any thread
still reading it.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import NamedTuple

from curator.engine.corpus import markdown_scan
from curator.engine.corpus.page import Link, Page, link_key, path_key, slug_of


@dataclass(slots=True, frozen=True)
class Resolution:
    """Where one link key leads."""

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
    (see :func:`~curator.engine.corpus.markdown_scan.anchor_in`)."""
    return markdown_scan.anchor_in(page.headings, page.blocks, anchor)


def _order(path: str) -> tuple[int, str]:
    """Obsidian's preference among same-named files: the shortest path string, then alphabetical."""
    return (len(path), path)


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


#: :func:`~curator.engine.corpus.page.link_key` of a folder, remembered: the folder step of a build asks it of the
#: same few hundred folders for every key first met from one (30,000 times at 32,000 pages).
_folder_key = functools.lru_cache(maxsize=4096)(link_key)


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

    def changed(self, gone: Iterable[tuple[str, str]], new: Iterable[tuple[str, str, str]]) -> _Files:
        """A copy with ``gone`` ((path, name key)) left out and ``new`` (as for :meth:`__init__`)
        added: what building it over the paths that remain gives (lists in :func:`_order`). This
        one is left as it was (another thread may be reading it)."""
        out = _Files(())
        by_path, by_name, key_of = dict(self.by_path), defaultdict(list, self.by_name), dict(self.key_of)
        copied: set[str] = set()

        def names(name: str) -> list[str]:
            if name not in copied:
                copied.add(name)
                by_name[name] = list(by_name.get(name, ()))
            return by_name[name]

        lost: set[str] = set()
        for path, name in gone:
            pkey = key_of.pop(path)
            listed = names(name)
            listed.remove(path)
            if not listed:
                del by_name[name]
            if by_path.get(pkey) == path:
                del by_path[pkey]
                lost.add(pkey)
        for path, pkey, name in new:
            key_of[path] = pkey
            bisect.insort(names(name), path, key=_order)
            held = by_path.get(pkey)
            if held is None or _order(path) < _order(held):
                by_path[pkey] = path
        if lost:  # a path key another path shares (``A.md`` and ``a.md``) goes to the next in order
            for path, pkey in key_of.items():
                if pkey in lost:
                    held = by_path.get(pkey)
                    if held is None or _order(path) < _order(held):
                        by_path[pkey] = path
        out.by_path, out.by_name, out.key_of = by_path, by_name, key_of
        return out

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
        folder = _folder_key(folder)
        if "/" in key or key.startswith("."):
            rel = posixpath.normpath(f"{folder}/{key}")
        else:
            rel = f"{folder}/{key}"
        return self.by_path.get(rel)


class LinkIndex:
    """Resolves every link of a set of pages once and answers outgoing/backlink queries."""

    def __init__(self, pages: Mapping[str, Page], attachments: Iterable[str] = ()) -> None:
        #: the pages as they were when resolved (a copy: the store's own dict changes in place),
        #: what :meth:`try_update` compares the pages of the next state with
        self.pages: dict[str, Page] = dict(pages)
        #: stands for the pages' names (paths, titles, aliases): shared by every index updated
        #: from this one by changes that left each name as it was (what name tables are kept by)
        self.names = object()
        ordered = sorted(pages, key=_order)
        self._name_tables(ordered, attachments)
        records = [pages[path] for path in ordered]
        for path, page, title in zip(ordered, records, link_keys([page.title for page in records]), strict=True):
            if page.aliases:
                for name in _names(page):
                    self._by_name[name].append(path)
            elif title:  # (what _names gives a page with no aliases)
                self._by_name[title].append(path)
        self._resolutions()
        # the hot loop of every graph and lint (200,000 links at 32,000 pages): locals only
        resolve, anywhere = self.resolve_key, self._anywhere
        incoming, unresolved, outgoing = self.incoming, self.unresolved, self.outgoing
        attached, missing = self.attachment_links, self.missing_attachments
        new = tuple.__new__  # an Edge without the Python-level __new__ (half the cost)
        #: a key no folder changes -> (its resolution, the list its edges go to, the page it names):
        #: most links are by such keys, each key met a few times (one look-up per link)
        filed: dict[str, tuple[Resolution, list[Edge], str | None]] = {}
        for path in sorted(pages):
            folder = folder_of(path)
            edges: list[Edge] = []
            for link in pages[path].links:
                key = link[1]
                hit = filed.get(key)
                if hit is not None:
                    res, into, target = hit
                    edge = new(Edge, (path, link, res))
                    edges.append(edge)
                    if target != path:
                        into.append(edge)
                    continue
                res = anywhere.get(key) or resolve(key, folder)
                edge = new(Edge, (path, link, res))
                edges.append(edge)
                target = res.path
                if target is not None:
                    if target == path:
                        continue  # (a link to itself: in its outgoing edges only)
                    into = incoming[target]
                elif res.attachment is not None:
                    into = attached[res.attachment]
                elif res.names_file:
                    into = missing[key]
                else:
                    into = unresolved[key]
                into.append(edge)
                if anywhere.get(key) is res:
                    filed[key] = (res, into, target)
            outgoing[path] = edges

    @classmethod
    def resolver(cls, names: Mapping[str, Iterable[str]], attachments: Iterable[str] = ()) -> LinkIndex:
        """An index that resolves a key (:meth:`resolve_key`) exactly as one built over pages
        with these ``names`` does (every page's path -> the keys it is found by besides its path,
        its title's and aliases': ``_names``), and holds no page and no link: for a one-shot pass
        that resolves every page's links a chunk of pages at a time (a dedup scan's inbound
        counts: the index of every page and edge at once was 2.7 GB at 300,000 pages)."""
        index = object.__new__(cls)
        index.pages, index.names = {}, object()
        ordered = sorted(names, key=_order)
        index._name_tables(ordered, attachments)
        for path in ordered:
            for name in names[path]:
                if name:
                    index._by_name[name].append(path)
        index._resolutions()
        return index

    def _name_tables(self, ordered: list[str], attachments: Iterable[str]) -> None:
        """The pages' paths (``ordered``: by :func:`_order`) and the attachment files by their keys;
        the table by title and alias, empty."""
        self._pages = _Files(zip(ordered, *_page_keys(ordered), strict=True))
        files = sorted(attachments, key=_order)
        self.attachments: tuple[str, ...] = tuple(files)
        self._files = _Files((f, link_key(f), link_key(f.rpartition("/")[2])) for f in files)
        self._by_name: dict[str, list[str]] = defaultdict(list)

    def _resolutions(self) -> None:
        """No key resolved yet, and no edge."""
        self._base: dict[str, Resolution] = {}
        #: every key ever resolved, by its last segment (at least those of ``_base``; shared by
        #: the indexes updated from this one, each reading it through its own ``_base``)
        self._by_last: dict[str, list[str]] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}
        self._anywhere: dict[str, Resolution] = {}  # resolutions the linking page's folder cannot change
        self.outgoing: dict[str, list[Edge]] = {}
        self.incoming: dict[str, list[Edge]] = defaultdict(list)
        self.unresolved: dict[str, list[Edge]] = defaultdict(list)
        #: links to attachment files, by file path; and links naming files that are not there
        self.attachment_links: dict[str, list[Edge]] = defaultdict(list)
        self.missing_attachments: dict[str, list[Edge]] = defaultdict(list)

    def updated(self, pages: Mapping[str, Page], attachments: Iterable[str] = ()) -> LinkIndex:
        """:meth:`try_update`, or the index built from scratch when the change is too large for it
        (which still shares :attr:`names` when no name changed)."""
        index = self.try_update(pages, attachments, rebuild=True)
        assert index is not None  # (with ``rebuild`` it always answers one)
        return index

    def try_update(self, pages: Mapping[str, Page], attachments: Iterable[str] = (),
                   limit: int | None = None, *, rebuild: bool = False) -> LinkIndex | None:
        """The index of ``pages`` and ``attachments`` (the next state of the same wiki), equal to
        ``LinkIndex(pages, attachments)`` on every query (every resolution from every folder,
        outgoing edges in page order, each backlink, unresolved and attachment list in source
        then link order), made from this one by resolving only what the change can alter. This
        one is left as it was: another thread may still be reading it. Itself when nothing changed.

        The pages that changed are those whose :class:`Page` is not the same object (the store
        makes a new one for every page it parses). Their links are resolved again when they
        differ; when no page was added, removed or given another title or aliases and no
        attachment file came or went, nothing else can resolve differently. Else every memoised
        resolution of a key the change can reach is dropped (a key whose last segment is the
        file name of a page or file that came or went, or that is the title or an alias a page
        gained or lost; with paths added or removed, also each ``[[a/..]]``-style key, which may
        name any path), and the pages with a link by one of those keys are resolved again too.
        None when that is more than ``limit`` pages (by default :data:`REBUILD_SHARE` of them:
        building the index from scratch is then as quick), or with ``rebuild`` the index built
        from scratch (what :meth:`updated` asks for).
        """
        old = self.pages
        files = tuple(sorted(attachments, key=_order))
        changed = [p for p, page in pages.items() if old.get(p) is not page]
        added = [p for p in changed if p not in old]
        removed = [p for p in old if p not in pages] if len(old) + len(added) != len(pages) else []
        files_same = files == self.attachments
        if not changed and not removed and files_same:
            return self
        new = object.__new__(LinkIndex)
        new.pages, new.attachments = dict(pages), files
        new._pages, new._files, new._by_name = self._pages, self._files, self._by_name
        new._base, new._cache, new._anywhere = self._base, self._cache, self._anywhere
        new._by_last = self._by_last
        # what the change can make resolve differently: last segments and whole keys
        lasts: set[str] = set()
        keys: set[str] = set()
        renamed = [p for p in changed if p not in added and _names(old[p]) != _names(pages[p])]
        retitled = renamed or any(old[p].title != pages[p].title or old[p].aliases != pages[p].aliases
                                  for p in changed if p not in added)
        new.names = object() if added or removed or retitled else self.names
        for path in (*added, *removed):
            lasts.update((slug_of(path), _last(path_key(path))))
        for page in (*(old[p] for p in (*removed, *renamed)), *(pages[p] for p in (*added, *renamed))):
            keys.update(_names(page))
        if added or removed:
            new._pages = self._pages.changed(((p, slug_of(p)) for p in removed),
                                             ((p, path_key(p), slug_of(p)) for p in sorted(added, key=_order)))
        if not files_same:
            gone, came = set(self.attachments) - set(files), set(files) - set(self.attachments)
            for file in (*gone, *came):
                lasts.update((link_key(file.rpartition("/")[2]), _last(link_key(file))))
            new._files = self._files.changed(((f, link_key(f.rpartition("/")[2])) for f in gone),
                                             ((f, link_key(f), link_key(f.rpartition("/")[2]))
                                              for f in sorted(came, key=_order)))
        if keys:
            new._by_name = _titles(self._by_name, [(p, _names(old[p])) for p in (*removed, *renamed)],
                                   [(p, _names(pages[p])) for p in sorted((*added, *renamed), key=_order)])
        again: set[str] = set()  # pages whose links are resolved again besides the changed ones
        stale: set[str] = set()  # the keys whose resolutions the change can alter
        if lasts or keys:
            base = self._base
            stale = {k for k in keys if k in base}
            if lasts:  # paths came or went: every key by their names, and every ``[[a/..]]``
                by_last = self._by_last
                stale.update(k for last in lasts | ODD_LASTS for k in by_last.get(last, ()) if k in base)
            new._base, new._anywhere = dict(base), dict(self._anywhere)
            for key in stale:
                del new._base[key]
                new._anywhere.pop(key, None)
            new._cache = {k: v for k, v in self._cache.items() if k[0] not in stale}
            again = self._linking(stale).difference(removed)
        # the pages whose links are resolved again: added ones and changed ones whose links
        # differ (every link), and those with a link by a stale key (those links only); a changed
        # page whose links are the same keeps its edges (what resolving them again would give)
        redo = {p for p in changed if p in added or old[p].links != pages[p].links}
        again -= redo
        if len(redo) + len(again) + len(removed) > (REBUILD_SHARE * len(pages) if limit is None else limit):
            if not rebuild:
                return None
            built = LinkIndex(pages, files)
            built.names = new.names
            return built
        before, outgoing = self.outgoing, dict(self.outgoing)
        for path in removed:
            del outgoing[path]
        resolve, anywhere = new.resolve_key, new._anywhere
        touched: dict[tuple[int, str], set[str]] = {}  # list -> the sources whose entries it replaces

        def touch(edge: Edge) -> None:
            where = _bucket(edge)
            if where is not None:
                touched.setdefault(where, set()).add(edge[0])

        for path in removed:
            for edge in before[path]:
                touch(edge)
        for path in redo:
            folder = folder_of(path)
            edges = outgoing[path] = [Edge(path, link, anywhere.get(link[1]) or resolve(link[1], folder))
                                      for link in pages[path].links]
            for edge in (*before.get(path, ()), *edges):
                touch(edge)
        for path in again:
            folder = folder_of(path)
            mine: list[Edge] | None = None
            for i, edge in enumerate(before[path]):
                key = edge[1][1]
                if key in stale:
                    res = anywhere.get(key) or resolve(key, folder)
                    if res != edge[2]:
                        if mine is None:
                            mine = outgoing[path] = list(before[path])
                        mine[i] = Edge(path, edge[1], res)
                        touch(edge)
                        touch(mine[i])
        if added:  # (page order, as a build makes it: the new ones were put last)
            outgoing = {p: outgoing[p] for p in sorted(outgoing)}
        new.outgoing = outgoing
        # the lists by target: each touched one gets its sources' entries again, in source order
        groups: dict[str, dict[tuple[int, str], list[Edge]]] = {}
        for sources in touched.values():
            for path in sources:
                if path not in groups:
                    grouped = groups[path] = {}
                    for edge in outgoing.get(path, ()):
                        where = _bucket(edge)
                        if where is not None:
                            grouped.setdefault(where, []).append(edge)
        lists = (self.incoming, self.attachment_links, self.missing_attachments, self.unresolved)
        fresh = [defaultdict(list, d) for d in lists]
        source = itemgetter(0)
        for where, sources in touched.items():
            which, key = where
            kept = [e for e in lists[which].get(key, ()) if e[0] not in sources]
            ours = [e for path in sorted(sources) for e in groups[path].get(where, ())]
            merged = list(heapq.merge(kept, ours, key=source)) if kept and ours else kept or ours
            if merged:
                fresh[which][key] = merged
            else:
                fresh[which].pop(key, None)
        new.incoming, new.attachment_links, new.missing_attachments, new.unresolved = fresh
        return new

    def _linking(self, keys: set[str]) -> set[str]:
        """Every page with a link by one of ``keys`` (keys this index resolved), found from the
        lists by target: an edge of a key is filed under what the key resolved to, from the root
        (``_base``) or from a folder (``_cache``), or under the key when it resolved to nothing;
        a page's links to itself are in its outgoing edges only."""
        targets: dict[str, set[str]] = {}  # a page or file some key resolved to -> those keys
        for key, res in [*((k, self._base[k]) for k in keys), *((k, r) for (k, _), r in self._cache.items()
                                                                 if k in keys)]:
            hit = res.path or res.attachment
            if hit is not None:
                targets.setdefault(hit, set()).add(key)
        out: set[str] = set()
        for key in keys:
            for edge in (*self.unresolved.get(key, ()), *self.missing_attachments.get(key, ())):
                out.add(edge[0])
        for hit, named in targets.items():
            for edge in (*self.incoming.get(hit, ()), *self.attachment_links.get(hit, ())):
                if edge[1][1] in named:
                    out.add(edge[0])
            if any(edge[1][1] in named for edge in self.outgoing.get(hit, ())):
                out.add(hit)
        return out

    def resolve(self, target: str, source: str | None = None) -> Resolution:
        """Resolve a target as written (``Ann Smith``, ``wiki/ann-smith.md``, ``a.png``), from the
        page at ``source`` (its folder decides between same-named pages) or from the root."""
        return self.resolve_key(link_key(target), folder_of(source) if source else "")

    def resolve_key(self, key: str, folder: str = "") -> Resolution:
        base = self._base.get(key)
        if base is None:
            base = self._base[key] = self._resolve_bare(key) if key.isalnum() or key.replace("-", "").isalnum() \
                else self._resolve(key)
            self._by_last.setdefault(key.rpartition("/")[2], []).append(key)
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

    def _resolve_bare(self, key: str) -> Resolution:
        """:meth:`_resolve` of a key of letters, digits and ``-`` only (most links: no folder, no
        file extension, nothing relative), in fewer steps: the page at the root by that name (the
        others sharing its name its candidates), else those by that file stem, else by title or alias."""
        pages = self._pages
        named = pages.by_name.get(key)
        exact = pages.by_path.get(key)
        if exact is not None:
            return Resolution(key, exact, tuple(named) if named else (exact,))
        if named:
            return Resolution(key, named[0], tuple(named))
        found = self._by_name.get(key)
        if found:
            return Resolution(key, found[0], tuple(found))
        return Resolution(key, None)

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


#: what ``str.split()`` splits ASCII text at
_ASCII_SPACES = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _page_keys(paths: list[str]) -> tuple[list[str], list[str]]:
    """(:func:`~curator.engine.corpus.page.path_key`, :func:`~curator.engine.corpus.page.slug_of`) of each of ``paths``: at once for ASCII
    ``folder/name.md`` paths with no whitespace and no name starting with a dot (as nearly all
    are: a key is then the path lowered without ``.md``, a slug its last segment)."""
    joined = "\0".join(paths).lower()
    if joined.isascii() and joined.count("\0") == len(paths) - 1 and joined.count(".md\0") == len(paths) - 1 \
            and joined.endswith(".md") and not any(c in joined for c in _ASCII_SPACES) \
            and "/." not in joined and "\0." not in joined and not joined.startswith("."):
        keys = joined[:-3].replace(".md\0", "\0").split("\0")
        return keys, [key.rpartition("/")[2] for key in keys]
    return list(map(path_key, paths)), list(map(slug_of, paths))


def link_keys(texts: list[str]) -> list[str]:
    """:func:`~curator.engine.corpus.page.link_key` of each of ``texts``: at once for ASCII texts (lowered, each run of
    whitespace one ``-``, none at either end, ``.md`` cut off)."""
    joined = "\0".join(texts)
    if not (joined.isascii() and joined.count("\0") == len(texts) - 1 and "\x01" not in joined):
        return list(map(link_key, texts))
    spaced = "\x01".join(joined.lower().split())  # (a NUL is no whitespace: the texts stay apart)
    keys = spaced.replace("\x01\0", "\0").replace("\0\x01", "\0").replace("\x01", "-") + "\0"
    return keys.replace(".md\0", "\0").split("\0")[:-1] if texts else []


def _last(key: str) -> str:
    return key.rpartition("/")[2]


#: :meth:`LinkIndex.updated` builds the index from scratch when it would resolve the links of more
#: than this share of the pages again (a 2,000-page merge stays incremental in a 32,000-page wiki)
REBUILD_SHARE = 0.25


def _names(page: Page) -> set[str]:
    """The keys ``page`` is found by besides its path: its title and aliases, normalised."""
    return {n for n in (link_key(page.title), *(link_key(a) for a in page.aliases)) if n}


def _titles(by_name: dict[str, list[str]], gone: list[tuple[str, set[str]]],
            new: list[tuple[str, set[str]]]) -> dict[str, list[str]]:
    """A copy of a title/alias table (name -> paths in :func:`_order`) without the names of
    ``gone`` ((path, names)) and with those of ``new``; ``by_name`` is left as it was."""
    out: dict[str, list[str]] = defaultdict(list, by_name)
    copied: set[str] = set()
    for path, names in gone:
        for name in names:
            if name not in copied:
                copied.add(name)
                out[name] = list(out[name])
            out[name].remove(path)
            if not out[name]:
                del out[name]
    for path, names in new:
        for name in names:
            if name not in copied:
                copied.add(name)
                out[name] = list(out.get(name, ()))
            bisect.insort(out[name], path, key=_order)
    return out


def _bucket(edge: Edge) -> tuple[int, str] | None:
    """Which list of :class:`LinkIndex` holds ``edge`` besides its page's outgoing ones, as the
    build files it: (0, page) incoming, (1, file) attachment links, (2, key) missing attachments,
    (3, key) unresolved; None for a link of a page to itself."""
    res = edge[2]
    target = res.path
    if target is not None:
        return None if target == edge[0] else (0, target)
    if res.attachment is not None:
        return (1, res.attachment)
    return (2 if res.names_file else 3, edge[1][1])


#: the last segments of a key that does not name what it resolves to (see :func:`odd_key`)
ODD_LASTS = frozenset(("", ".", ".."))


def odd_key(key: str) -> bool:
    """Whether the page a key resolves to may not be named by the key's last segment
    (``[[a/..]]``, ``[[./]]``): no local index decides it."""
    return _last(key) in ODD_LASTS


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
    (:mod:`curator.engine.graph.link_graph`) re-resolves the edited pages' links, not the wiki's. ``named(names)``, when
    given, answers (at least) every page a link could reach by one of ``names``
    (:meth:`~curator.engine.corpus.store.PageStore.pages_named`): only those are looked at, not every page."""
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


def outgoing_by_name(chosen: Mapping[str, Page], named: Callable[[set[str]], Mapping[str, Page]],
                     attachments: Iterable[str] = ()) -> tuple[dict[str, list[Edge]], dict[str, Page]] | None:
    """The outgoing links of the ``chosen`` pages, resolved among the pages ``named`` finds by the
    names those links use (:meth:`~curator.engine.corpus.store.PageStore.pages_named`), and those
    pages (the chosen ones with them, as they are): what an
    answer kept up to date after a change (lint, the unresolved-link queue) resolves again. The
    pages found take part by their names only: their own links are left out of the index, which
    would resolve them all (a hub named by one link holds thousands). None when a link is
    ``[[a/..]]`` (its page is not named by its last segment: the caller computes it all)."""
    keys = {link.key for page in chosen.values() for link in page.links}
    if any(odd_key(k) for k in keys):
        return None
    around = dict(named(keys | {k.rpartition("/")[2] for k in keys}))
    around.update(chosen)
    by_name = {p: page if p in chosen else replace(page, links=[]) for p, page in around.items()}
    return outgoing_of(by_name, sorted(chosen), attachments), around


#: A page with more links than this has them matched by :func:`links_reaching` in one pass over
#: its joined keys (a hub page's 32,000 links, looked at by every one-shot ``neighbors``).
JOINED_MATCH_ABOVE = 256


def links_reaching(links: list[Link], lasts: set[str], names: set[str]) -> list[Link]:
    """The links (in order) whose key's last segment is one of ``lasts`` or whose whole key is one
    of ``names``: those that could resolve to a page with those names (see :func:`local_index`).

    A page with many links has its keys joined once and the few names searched in that string
    (C speed) rather than each key split in Python; any key or name the separator could confuse
    takes the plain test."""
    if len(links) <= JOINED_MATCH_ABOVE or any(not n or "\0" in n for n in (*lasts, *names)) \
            or any("/" in n for n in lasts):
        return [k for k in links if k.key.rpartition("/")[2] in lasts or k.key in names]
    keys = list(map(itemgetter(1), links))
    joined = "\0" + "\0".join(keys) + "\0"
    if joined.count("\0") != len(keys) + 1:  # a key holding the separator
        return [k for k in links if k.key.rpartition("/")[2] in lasts or k.key in names]
    # ``\0key\0``: a whole key; ``/last\0``: a key whose last segment is ``last``. ``starts`` are
    # where each hit's key begins or (for the second form) a position inside it.
    starts: list[int] = []
    for needle, inside in [*((f"\0{n}\0", 1) for n in {*lasts, *names}), *((f"/{n}\0", 0) for n in lasts)]:
        at = joined.find(needle)
        while at >= 0:
            starts.append(at + inside)
            at = joined.find(needle, at + 1)
    hits: set[int] = set()
    counted, before = 0, 0  # separators in joined[:counted]
    for at in sorted(starts):
        before += joined.count("\0", counted, at)
        counted = at
        hits.add(before - 1)  # the key after the ``before``-th separator
    return [links[i] for i in sorted(hits)]


def local_index(pages: Mapping[str, Page], path: str, attachments: Iterable[str] = (),
                reaching: Mapping[str, list[Link]] | None = None) -> LinkIndex:
    """A link index exact for one page only: its outgoing links and its backlinks (``outgoing``
    and ``incoming`` of ``path``) are what :class:`LinkIndex` over all of ``pages`` would hold.

    A one-shot ``neighbors`` needs just those; building the whole index resolves every link of
    the wiki (~200,000 at 32,000 pages). A key's resolution depends only on the pages whose path
    or name ends with the key's last segment and the pages titled or aliased as the key (see
    :meth:`LinkIndex._resolve` and the folder step), so the index is built over those pages and
    the links that could reach ``path`` are resolved in it, each from its own page's folder.
    ``reaching``: those links (:func:`links_reaching`) of some of the pages, already found.
    """
    page = pages[path]
    names = {n for n in (link_key(page.title), *(link_key(a) for a in page.aliases)) if n}
    lasts = {page.slug, _last(path_key(path))}
    # links of other pages that could resolve to ``path`` (a name, a title, an alias of it)
    known = reaching or {}
    candidates = [(source, link) for source, other in pages.items() if source != path
                  for link in (known[source] if source in known else links_reaching(other.links, lasts, names))]
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
