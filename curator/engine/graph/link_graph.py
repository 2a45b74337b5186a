"""The link graph (docs/design.md §8): nodes, edges, BFS, Mermaid and node-link exports, path and explain.

The graph is built from the wiki's :class:`~curator.engine.corpus.links.LinkIndex`, which already holds
every resolved link and the reverse (backlink) index, so nothing here reads a file or builds a
regular expression from page names. Nodes are the pages an actor may see plus the targets links
point at that do not resolve (a link to a page the actor may not see is shown exactly like a link
to a page that does not exist, as :meth:`Wiki.find` does). Edges come from wikilinks, embeds,
markdown links and ``related:`` entries; several links between one pair of pages are one edge
with a weight.

:func:`graph_for` caches one graph per (link index, actor). Every change gives the wiki a new link
index (brought up to date from the changed pages, never changed in place) and drops the graphs, so
a cached graph is never older than the index it was built from.

A one-shot process (``curator graph``, ``path``) would resolve every link of the wiki for each
call (~200,000 at 32,000 pages, most of its time), so the operator's graph is also saved in the
page cache as its resolved edge list (:meth:`~curator.engine.corpus.store.PageStore.save_derived`), under the store's
state token: the next process whose refresh finds the same pages (and attachment files) rebuilds
the graph from that list and resolves nothing. Any change to a page gives the store a new state,
so a saved graph is never answered for pages other than those it was built from. After an edit
that added, removed or renamed no page (the store lists the pages changed since the saved state:
:meth:`~curator.engine.corpus.store.PageStore.derived_since`), every other page's links resolve as before, so only the
edited pages' links are resolved again (:func:`~curator.engine.corpus.links.outgoing_of`) and the rest of the list is
reused; any other change resolves every link.
"""

from __future__ import annotations

import copy
import marshal
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from curator.engine.corpus.links import Edge, LinkIndex, outgoing_of
from curator.engine.corpus.page import LAYERS, Page, link_key
from curator.engine.corpus.store import gc_paused
from curator.engine.errors import PageNotFound
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki

if TYPE_CHECKING:
    from hashlib import blake2b as _Blake2b


def blake2b(data: bytes, digest_size: int) -> _Blake2b:
    """``hashlib.blake2b``, imported on first use (a one-shot ``explain`` hashes nothing, and
    the import is ~4 ms of its start)."""
    from hashlib import blake2b as new

    globals()["blake2b"] = new
    return new(data, digest_size=digest_size)


UNRESOLVED_PREFIX = "unresolved:"
ATTACHMENT_PREFIX = "attachment:"
DEFAULT_DEPTH = 2
STRONGEST_LIMIT = 10

# Shapes per layer (docs/design.md §8): identity circle, core rounded, context rectangle, deep stadium.
# Unresolved targets use the asymmetric "flag" shape so they never look like a written page.
MERMAID_SHAPES: dict[str, tuple[str, str]] = {
    "identity": ("((", "))"),
    "core": ("(", ")"),
    "context": ("[", "]"),
    "deep": ("([", "])"),
    "unresolved": (">", "]"),
    "attachment": ("[/", "/]"),
}
MERMAID_CLASSES: dict[str, str] = {
    "identity": "fill:#fde68a,stroke:#b45309,color:#1f2937",
    "core": "fill:#bfdbfe,stroke:#1d4ed8,color:#1f2937",
    "context": "fill:#bbf7d0,stroke:#15803d,color:#1f2937",
    "deep": "fill:#e5e7eb,stroke:#4b5563,color:#1f2937",
    "unresolved": "fill:#ffffff,stroke:#9ca3af,stroke-dasharray:4 3,color:#6b7280",
    "attachment": "fill:#fef3c7,stroke:#92400e,color:#1f2937",
}


@dataclass(slots=True)
class EdgeData:
    """All links from one node to another, folded into one edge."""

    weight: int = 0
    kinds: set[str] = field(default_factory=set)


@dataclass(slots=True, frozen=True)
class Node:
    id: str  # the page path, ``unresolved:<key>`` or ``attachment:<file path>``
    page: Page | None  # None for an unresolved target or an attachment
    label: str  # the page title, the target as first written, or the file name
    attachment: bool = False

    @property
    def resolved(self) -> bool:
        return self.page is not None

    @property
    def layer(self) -> str:
        if self.page is not None:
            return self.page.layer
        return "attachment" if self.attachment else "unresolved"


def unresolved_id(key: str) -> str:
    return UNRESOLVED_PREFIX + key


class LinkGraph:
    """The directed link graph one actor sees; undirected views for BFS, paths and layout.

    Links to attachment files (``![[diagram.png]]``) are left out unless ``attachments`` is set;
    then every file an actor may see and some page links to is an ``attachment:`` node. A link
    naming a file that is not there is never a node (lint reports it as a missing attachment).
    """

    def __init__(self, links: LinkIndex | None, visible: Iterable[str], attachments: bool = False,
                 can_see: Callable[[str], bool] | None = None) -> None:
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, dict[str, EdgeData]] = {}
        #: the edges by target (see inc), None until first asked for when built from_saved
        self._inc: dict[str, dict[str, EdgeData]] | None = {}
        #: the digests of the pages' names (see saved), when read with the saved edges
        self._names: bytes | None = None
        if links is not None:  # (None: filled by from_saved)
            self._build(links, visible, attachments, can_see)

    @property
    def inc(self) -> dict[str, dict[str, EdgeData]]:
        """The edges by target: ``inc[target][source]`` is ``out[source][target]``, in the order
        the edges were made."""
        inc = self._inc
        if inc is None:
            inc = self._inc = {}
            for source, targets in self.out.items():
                for target, data in targets.items():
                    into = inc.get(target)
                    if into is None:
                        into = inc[target] = {}
                    into[source] = data
        return inc

    def _build(self, links: LinkIndex, visible: Iterable[str], attachments: bool,
               can_see: Callable[[str], bool] | None) -> None:
        pages = links.pages
        for path in sorted(visible):
            page = pages[path]
            self.nodes[path] = Node(path, page, page.title)
        outgoing = links.outgoing
        for source in list(self.nodes):
            edges = outgoing.get(source)
            if edges:
                self._add_edges(source, edges, attachments, can_see)

    @classmethod
    def of_source(cls, source: str, edges: list[Edge], attachments: bool) -> LinkGraph:
        """The operator's edges from ``source`` alone, made from its resolved ``edges`` exactly as
        a build of every page makes them (every page a node, all visible), with the nodes that
        are not pages they name: how a saved document is patched after an edit (:mod:`curator.engine.graph.export`)."""
        graph = cls(None, ())
        graph._inc = None
        graph.nodes = {source: Node(source, None, "")}
        graph.nodes.update((t, Node(t, None, "")) for _, _, res in edges if (t := res.path) is not None)
        graph._add_edges(source, edges, attachments, None)
        return graph

    def _add_edges(self, source: str, edges: list[Edge], attachments: bool,
                   can_see: Callable[[str], bool] | None) -> None:
        """The edges made by ``source``'s links (its resolved ``edges``), and the nodes they name."""
        nodes, out, inc = self.nodes, self.out, self._inc
        mine: dict[str, EdgeData] | None = None
        for _, link, res in edges:  # unpacked: the hot loop of a 200,000-link graph
            target = res.path
            if target == source:
                continue
            if target is None and res.names_file:
                file = res.attachment
                if not attachments or file is None or (can_see is not None and not can_see(file)):
                    continue
                target = ATTACHMENT_PREFIX + file
                if target not in nodes:
                    nodes[target] = Node(target, None, file.rpartition("/")[2], True)
            elif target is None or target not in nodes:
                target = UNRESOLVED_PREFIX + link.key
                if target not in nodes:
                    nodes[target] = Node(target, None, link.target)
            if mine is None:
                mine = out.setdefault(source, {})
            data = mine.get(target)
            if data is None:
                data = mine[target] = EdgeData()
                if inc is not None:
                    inc.setdefault(target, {})[source] = data
            data.weight += 1
            data.kinds.add(link.kind)

    # --- basic queries ---------------------------------------------------------------
    def __contains__(self, node: str) -> bool:
        return node in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def pages(self) -> list[str]:
        return [n for n, node in self.nodes.items() if node.page is not None]

    def edges(self) -> Iterator[tuple[str, str, EdgeData]]:
        for source, targets in self.out.items():
            for target, data in targets.items():
                yield source, target, data

    @property
    def edge_count(self) -> int:
        return sum(len(t) for t in self.out.values())

    def successors(self, node: str) -> dict[str, EdgeData]:
        return self.out.get(node, {})

    def predecessors(self, node: str) -> dict[str, EdgeData]:
        return self.inc.get(node, {})

    def neighbors(self, node: str) -> set[str]:
        """Neighbours over undirected edges."""
        return set(self.out.get(node, ())) | set(self.inc.get(node, ()))

    def bfs(self, center: str, depth: int) -> dict[str, int]:
        """Node -> distance for every node within ``depth`` undirected steps of ``center``."""
        dist = {center: 0}
        queue = deque([center])
        while queue:
            node = queue.popleft()
            d = dist[node]
            if d >= depth:
                continue
            for nxt in sorted(self.neighbors(node)):
                if nxt not in dist:
                    dist[nxt] = d + 1
                    queue.append(nxt)
        return dist

    def shortest_path(self, a: str, b: str, *, pages_only: bool = True) -> list[str] | None:
        """Shortest undirected chain from ``a`` to ``b`` (through pages only by default)."""
        if a not in self.nodes or b not in self.nodes:
            return None
        prev: dict[str, str | None] = {a: None}
        queue = deque([a])
        while queue:
            node = queue.popleft()
            if node == b:
                chain = [b]
                while (p := prev[chain[-1]]) is not None:
                    chain.append(p)
                return chain[::-1]
            for nxt in sorted(self.neighbors(node)):
                if nxt in prev or (pages_only and nxt != b and self.nodes[nxt].page is None):
                    continue
                prev[nxt] = node
                queue.append(nxt)
        return None

    def undirected_edges(self, nodes: set[str] | None = None) -> list[tuple[str, str]]:
        """Each linked pair once (sorted), optionally restricted to ``nodes``."""
        pairs: set[tuple[str, str]] = set()
        for source, target, _ in self.edges():
            if nodes is None or (source in nodes and target in nodes):
                pairs.add((source, target) if source < target else (target, source))
        return sorted(pairs)

    # --- saved as a resolved edge list (see the module docstring) ------------------------
    def saved(self, key: bytes) -> bytes:
        """This graph (of every page, in path order) as :meth:`from_saved` reads it: the nodes
        that are not pages, each source with its number of edges, and packed arrays of the edges'
        targets, weights and kinds, in the order they were made (so the rebuilt graph lists nodes
        and edges exactly as this one); and a digest of each page's names (see :func:`names_digest`)."""
        ids = list(self.nodes)
        index = {n: i for i, n in enumerate(ids)}
        named = [node.page for node in self.nodes.values() if node.page is not None]
        n_pages = len(named)
        extras = [self.nodes[n] for n in ids[n_pages:]]
        kinds: dict[tuple[str, ...], int] = {}  # each set of link kinds (as a sorted tuple) -> its number
        single: dict[str, int] = {}  # (the same for the sets of one kind: most edges)
        src, count, dst, weight, kind = array("i"), array("i"), array("i"), array("i"), array("i")
        add_dst, add_weight, add_kind = dst.append, weight.append, kind.append
        for source, targets in self.out.items():
            src.append(index[source])
            count.append(len(targets))
            for target, data in targets.items():  # (the hot loop: ~200,000 edges at 32,000 pages)
                add_dst(index[target])
                add_weight(data.weight)
                if len(data.kinds) == 1:
                    (only,) = data.kinds
                    number = single.get(only)
                    if number is None:
                        number = single[only] = kinds.setdefault((only,), len(kinds))
                else:
                    number = kinds.setdefault(tuple(sorted(data.kinds)), len(kinds))
                add_kind(number)
        return zlib.compress(marshal.dumps((
            _SAVED_FORMAT, key, n_pages, [n.id for n in extras], [n.label for n in extras],
            bytes(n.attachment for n in extras), src.tobytes(), count.tobytes(), dst.tobytes(),
            weight.tobytes(), kind.tobytes(), list(kinds),
            self._names if self._names is not None else b"".join(names_digest(p) for p in named))), 1)

    @classmethod
    def from_saved(cls, blob: bytes, pages: dict[str, Page], key: bytes, changed: Iterable[str] = (),
                   resolve: Callable[[list[str]], dict[str, list[Edge]]] | None = None,
                   attachments: bool = False) -> LinkGraph | None:
        """The graph :meth:`saved` wrote, over ``pages`` (every page, as they are now); None when
        the data is not what this version writes or was saved for other ``key``.

        ``changed``: the pages that may differ since it was saved (:meth:`~curator.engine.corpus.store.PageStore.derived_since`).
        When none was added or removed and none changed its names (slug, title, aliases: what
        links resolve by), every other page's links resolve as they did, so only the changed
        pages' outgoing links are resolved again (by ``resolve``, exactly as a full
        :class:`LinkIndex` would; ``attachments`` as the saved graph was built) and the rest is
        reused. Else None: the caller resolves every link."""
        try:
            (version, saved_key, n_pages, extra_ids, labels, is_attachment, src_b, count_b, dst_b,
             weight_b, kind_b, kinds, names) = marshal.loads(zlib.decompress(blob))
        except (ValueError, TypeError, EOFError, zlib.error):
            return None
        if version != _SAVED_FORMAT or saved_key != key or n_pages != len(pages):
            return None
        graph = cls(None, ())
        graph._inc = None  # made from ``out`` when first asked for (an export never asks)
        nodes, out = graph.nodes, graph.out
        order = sorted(pages)
        for path in order:
            page = pages[path]
            nodes[path] = Node(path, page, page.title)
        edited = sorted(changed)
        if edited:
            if resolve is None or any(p not in nodes for p in edited):  # (a page gone: the set differs)
                return None
            at = {p: i for i, p in enumerate(order)}  # (the same paths as when saved: none added or removed)
            if any(names[8 * at[p]:8 * at[p] + 8] != names_digest(pages[p]) for p in edited):
                return None
        for node_id, label, attached in zip(extra_ids, labels, is_attachment, strict=True):
            nodes[node_id] = Node(node_id, None, label, bool(attached))
        ids = list(nodes)
        sets = [tuple(k) for k in kinds]
        targets = [ids[t] for t in array("i", dst_b)]
        datas = [EdgeData(w, set(sets[k])) for w, k in zip(array("i", weight_b), array("i", kind_b), strict=True)]
        start = 0
        for s, n in zip(array("i", src_b), array("i", count_b), strict=True):  # each source's run of edges
            end = start + n
            out[ids[s]] = dict(zip(targets[start:end], datas[start:end], strict=True))
            start = end
        if edited and resolve is not None:
            graph._update(order, edited, resolve(edited), attachments)
        graph._names = names  # (the same names: the edited pages' were compared above)
        return graph

    def _update(self, order: list[str], edited: list[str], outgoing: dict[str, list[Edge]],
                attachments: bool) -> None:
        """Replace the edges of the ``edited`` pages by those of their ``outgoing`` links, then list
        the sources and the nodes that are not pages as a build would have made them: sources in
        path order (``order``), the others in the order of the first edge to each, labelled by the
        first link to each (see :meth:`_add_edges`)."""
        nodes, out = self.nodes, self.out
        self.out = {}  # (the edited pages' new edges, made apart)
        for source in edited:
            self._add_edges(source, outgoing[source], attachments, None)
        new, self.out = self.out, out
        old = {s: out[s] for s in edited if s in out}
        if old.keys() == new.keys() and not any(nodes[t].page is None for e in (old, new)
                                                for targets in e.values() for t in targets):
            # (the common edit: links between pages only, before and after; each source keeps its
            # place, and no node that is not a page is added, dropped or first linked elsewhere)
            out.update(new)
            return
        self.out = out = {s: new[s] if s in new else out[s] for s in order if s in new or (s in out and s not in old)}
        extras: dict[str, Node] = {}
        pages = {p: nodes[p] for p in order}
        for source, targets in out.items():
            for target in targets:
                if target not in pages and target not in extras:
                    node = nodes[target]
                    if not node.attachment:  # the target as the first link to it writes it
                        key = target[len(UNRESOLVED_PREFIX):]
                        page = pages[source].page
                        assert page is not None
                        label = next(link.target for link in page.links if link.key == key)
                        node = Node(target, None, label)
                    extras[target] = node
        self.nodes = {**pages, **extras}


def names_digest(page: Page) -> bytes:
    """A digest of what links resolve to ``page`` by besides its path (and the slug made from
    the path): its title and aliases."""
    names = "\0".join((page.title, *page.aliases)).encode("utf-8", "surrogateescape")
    return blake2b(names, digest_size=8).digest()


#: The encoding of :meth:`LinkGraph.saved` (a saved graph of another version is built again).
_SAVED_FORMAT = 4


#: The session's cache of link graphs (:meth:`~curator.engine.session.WikiSession.link_cache`).
GRAPHS = "graphs"


def graph_for(wiki: Wiki, actor: Actor = OPERATOR, attachments: bool = False) -> LinkGraph:
    """The current link graph as ``actor`` sees it (cached until the wiki's pages change), with
    the attachment files pages link to as nodes when ``attachments`` is set."""
    one_shot = actor.is_operator and not wiki.store.decoded and wiki.built_links(actor) is None
    if one_shot:  # nothing built in this process yet: the saved edge list, when it is current
        pages = wiki.pages  # (refreshed first: the state and the attachment files are current)
        name, saved_key = _saved_graph_key(wiki, attachments)
        store = wiki.store
        found = store.derived_since(name)
        if found is not None:
            blob, changed = found
            files = store.attachments
            with gc_paused():
                named = store.pages_named if store.partial_reads else None
                saved = LinkGraph.from_saved(blob, pages, saved_key, changed,
                                             lambda paths: outgoing_of(pages, paths, files, named), attachments)
            if saved is not None:
                if changed:  # brought up to date: saved for the next call as it is now
                    store.save_derived(name, saved.saved(saved_key))
                return saved
    with gc_paused():
        links = wiki.links_for(actor)  # hidden pages are absent: links to them are unresolved
    # Keyed by the policy object too: a policy swapped in (tests, the station) is a new view.
    # Held by the wiki's session and dropped with the link index: a graph of an index no longer
    # current is never answered.
    key = (actor, id(wiki.policy), attachments)
    graphs: dict[tuple[Actor, int, bool], tuple[LinkIndex, LinkGraph]] = wiki.session.link_cache(GRAPHS)
    with wiki.session.services_lock:
        cached = graphs.get(key)
    if cached is not None and cached[0] is links:
        return cached[1]
    visible = [p for p in links.pages if wiki.visible(actor, p)]
    with gc_paused():
        graph = LinkGraph(links, visible, attachments, lambda p: wiki.visible(actor, p))
    with wiki.session.services_lock:
        graphs[key] = (links, graph)
    if one_shot:
        name, saved_key = _saved_graph_key(wiki, attachments)
        wiki.store.save_derived(name, graph.saved(saved_key))
    return graph


def _saved_graph_key(wiki: Wiki, attachments: bool) -> tuple[str, bytes]:
    """The name the operator's graph is saved under, and the key of what else it depends on: the
    attachment files links resolve to (the walk's, not in the store's state)."""
    return f"graph{'+attachments' if attachments else ''}", wiki.store.attachments_key()


def graph_around(wiki: Wiki, path: str, actor: Actor = OPERATOR) -> LinkGraph:
    """A graph whose edges to and from the page at ``path`` (and their weights) are exactly those
    of :func:`graph_for` ``(wiki, actor)``, without the links between other pages: the cached graph
    when the actor's link index is built, else one from :meth:`Wiki.links_around` (a one-shot
    ``explain`` then resolves only the links that can reach the page)."""
    if wiki.built_links(actor) is not None:
        return graph_for(wiki, actor)
    links = wiki.links_around(path, actor)
    mine = links.outgoing.get(path, [])
    outgoing = {path: mine}
    for edge in links.backlinks(path):
        outgoing.setdefault(edge.source, []).append(edge)
    # Trimmed to the page's edges in a copy: the index may be the actor's shared one after all
    # (built on another thread since the check above), which must keep every page's links.
    trimmed = copy.copy(links)
    trimmed.outgoing = outgoing  # ``pages`` holds every page these edges name
    around = {path, *outgoing, *(e.target for e in mine if e.target is not None)}
    with gc_paused():
        return LinkGraph(trimmed, around, False, lambda p: wiki.visible(actor, p))


def resolve_node(wiki: Wiki, graph: LinkGraph, ref: str, actor: Actor = OPERATOR) -> str:
    """A node id for ``ref``: a page (path, slug, title, alias) or an unresolved link target."""
    try:
        return wiki.find(ref, actor).path
    except PageNotFound:
        node = unresolved_id(link_key(ref.removeprefix(UNRESOLVED_PREFIX)))
        if node in graph.nodes:
            return node
        raise


# --- Mermaid -----------------------------------------------------------------------------

def mermaid_id(node: str) -> str:
    """A stable Mermaid id: derived from the node's path, never from its position."""
    prefix = "u" if node.startswith(UNRESOLVED_PREFIX) else "n"
    return prefix + blake2b(node.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()


_SAFE_PUNCT = frozenset(" -_.,:/'!?+")


def mermaid_label(text: str) -> str:
    """``text`` made safe inside a quoted Mermaid label.

    Letters and digits of any script and a few harmless punctuation marks pass; everything else
    (quotes, brackets, pipes, ``#``, ``;``, ``<``, backticks, emoji, controls) becomes a numeric
    entity ``#NNN;`` which Mermaid decodes for display. Line breaks collapse to one space.
    """
    out: list[str] = []
    for ch in " ".join(text.split()):
        if ch.isalnum() or ch in _SAFE_PUNCT:
            out.append(ch)
        else:
            out.append(f"#{ord(ch)};")
    return "".join(out) or "#32;"


def select_nodes(graph: LinkGraph, center: str | None, depth: int) -> list[str]:
    """Nodes of an export: BFS from ``center`` to ``depth``, or every node."""
    if center is None:
        return list(graph.nodes)
    dist = graph.bfs(center, depth)
    return sorted(dist, key=lambda n: (dist[n], n))


def to_mermaid(graph: LinkGraph, center: str | None = None, depth: int = DEFAULT_DEPTH,
               nodes: Sequence[str] | None = None) -> str:
    """The graph (or the BFS ball around ``center``, or only ``nodes`` when given) as a Mermaid
    ``graph LR`` diagram."""
    if nodes is None:
        nodes = select_nodes(graph, center, depth)
    keep = set(nodes)
    lines = ["graph LR"]
    by_class: dict[str, list[str]] = {}
    for node_id in nodes:
        node = graph.nodes[node_id]
        open_, close = MERMAID_SHAPES[node.layer]
        mid = mermaid_id(node_id)
        lines.append(f'    {mid}{open_}"{mermaid_label(node.label)}"{close}')
        by_class.setdefault(node.layer, []).append(mid)
    for source, target in sorted((s, t) for s, t, _ in graph.edges() if s in keep and t in keep):
        lines.append(f"    {mermaid_id(source)} --> {mermaid_id(target)}")
    for name in (*LAYERS, "unresolved", *(["attachment"] if "attachment" in by_class else [])):
        lines.append(f"    classDef {name} {MERMAID_CLASSES[name]};")
    for name in (*LAYERS, "unresolved", "attachment"):
        ids = by_class.get(name)
        if ids:
            lines.append(f"    class {','.join(ids)} {name};")
    return "\n".join(lines) + "\n"


# --- node-link JSON ---------------------------------------------------------------------

def node_attributes(node: Node) -> dict[str, Any]:
    page = node.page
    if page is None:
        if node.attachment:
            return {"kind": "attachment", "title": node.label, "layer": None, "resolved": True,
                    "path": node.id.removeprefix(ATTACHMENT_PREFIX)}
        return {"kind": "unresolved", "title": node.label, "layer": None, "resolved": False}
    return {"kind": "page", "resolved": True, "path": page.path, "slug": page.slug, "title": page.title,
            "layer": page.layer, "trust": page.trust, "tags": list(page.tags),
            "aliases": list(page.aliases), "source_type": page.source_type,
            "namespace": page.namespace, "author": page.author, "created": page.created,
            "updated": page.updated, "snippet": page.snippet, "bytes": page.size}


def to_node_link(graph: LinkGraph, center: str | None = None, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
    """The graph in networkx node-link form (``networkx.node_link_graph(data, edges="edges")``)."""
    nodes = select_nodes(graph, center, depth)
    keep = set(nodes)
    return {
        "directed": True,
        "multigraph": False,
        "graph": {"center": center, "depth": depth if center is not None else None},
        "nodes": [{"id": n, "mermaid_id": mermaid_id(n), **node_attributes(graph.nodes[n])} for n in nodes],
        "edges": [{"source": s, "target": t, "weight": d.weight,
                   "kinds": sorted(d.kinds) if len(d.kinds) > 1 else list(d.kinds)}
                  for s, out in sorted(graph.out.items()) if s in keep
                  for t in sorted(out) if t in keep for d in (out[t],)],
    }


def export(wiki: Wiki, fmt: str = "mermaid", center: str | None = None, depth: int = DEFAULT_DEPTH,
           actor: Actor = OPERATOR, attachments: bool = False) -> str | dict[str, Any]:
    """``curator graph``: Mermaid text or node-link JSON, whole or around ``center`` (with the
    attachment files linked to as nodes when ``attachments`` is set)."""
    graph = graph_for(wiki, actor, attachments)
    node = resolve_node(wiki, graph, center, actor) if center else None
    if fmt == "mermaid":
        return to_mermaid(graph, node, depth)
    if fmt == "json":
        return to_node_link(graph, node, depth)
    raise ValueError(f"unknown graph format {fmt!r}")


# --- path and explain -------------------------------------------------------------------

@dataclass(slots=True)
class PathStep:
    node: str
    title: str
    arrow: str  # how this step links to the previous one: "->", "<-", "<->" ("" for the first)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.node, "title": self.title, "link": self.arrow or None}


@dataclass(slots=True)
class PathResult:
    source: str
    target: str
    steps: list[PathStep]

    @property
    def found(self) -> bool:
        return bool(self.steps)

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "found": self.found,
                "length": max(0, len(self.steps) - 1), "steps": [s.to_json() for s in self.steps]}

    def render(self) -> str:
        if not self.steps:
            return f"no link path between {self.source} and {self.target}"
        lines = [f"{self.steps[0].title} ({self.steps[0].node})"]
        lines += [f"  {s.arrow} {s.title} ({s.node})" for s in self.steps[1:]]
        lines.append(f"{len(self.steps) - 1} link(s)")
        return "\n".join(lines)


def find_path(wiki: Wiki, a: str, b: str, actor: Actor = OPERATOR) -> PathResult:
    """The shortest chain of pages linking ``a`` to ``b`` (links followed in either direction)."""
    graph = graph_for(wiki, actor)
    start = resolve_node(wiki, graph, a, actor)
    goal = resolve_node(wiki, graph, b, actor)
    chain = graph.shortest_path(start, goal) or []
    steps: list[PathStep] = []
    for i, node in enumerate(chain):
        arrow = ""
        if i:
            fwd = node in graph.successors(chain[i - 1])
            back = chain[i - 1] in graph.successors(node)
            arrow = "<->" if fwd and back else "->" if fwd else "<-"
        steps.append(PathStep(node, graph.nodes[node].label, arrow))
    return PathResult(start, goal, steps)


@dataclass(slots=True)
class Connection:
    node: str
    title: str
    resolved: bool
    out_links: int  # links from the explained node to this one
    in_links: int  # links from this one to the explained node
    shared_tags: list[str]
    strength: float

    def to_json(self) -> dict[str, Any]:
        return {"path": self.node, "title": self.title, "resolved": self.resolved,
                "out": self.out_links, "in": self.in_links, "shared_tags": self.shared_tags,
                "strength": self.strength}


@dataclass(slots=True)
class Explanation:
    node: Node
    in_degree: int  # distinct linking nodes
    out_degree: int  # distinct linked nodes
    degree: int  # distinct neighbours, either direction
    unresolved_out: int
    connections: list[Connection]

    def to_json(self) -> dict[str, Any]:
        meta = {"id": self.node.id, **node_attributes(self.node)}
        return {"node": meta, "in_degree": self.in_degree, "out_degree": self.out_degree,
                "degree": self.degree, "unresolved_out": self.unresolved_out,
                "strongest": [c.to_json() for c in self.connections]}

    def render(self) -> str:
        node, page = self.node, self.node.page
        if page is None:
            lines = [f"{node.label} — not yet written (unresolved link target)"]
        else:
            lines = [f"{page.title} ({page.path})",
                     f"  layer {page.layer}, trust {page.trust:g}, source {page.source_type}"]
            if page.tags:
                lines.append(f"  tags: {', '.join(page.tags)}")
            if page.aliases:
                lines.append(f"  aliases: {', '.join(page.aliases)}")
            dates = [f"{k} {v}" for k, v in (("created", page.created), ("updated", page.updated)) if v]
            if dates:
                lines.append("  " + ", ".join(dates))
        lines.append(f"  degree {self.degree} ({self.out_degree} out, {self.in_degree} in"
                     + (f", {self.unresolved_out} unresolved" if self.unresolved_out else "") + ")")
        if self.connections:
            lines.append("strongest connections:")
            for c in self.connections:
                where = c.node if c.resolved else "not yet written"
                extra = f", shared tags {', '.join(c.shared_tags)}" if c.shared_tags else ""
                lines.append(f"  {c.strength:g}  {c.title} ({where}) — {c.out_links} out, {c.in_links} in{extra}")
        return "\n".join(lines)


def explain(wiki: Wiki, ref: str, actor: Actor = OPERATOR, limit: int = STRONGEST_LIMIT) -> Explanation:
    """A node's metadata, degree and strongest connections.

    Strength of a connection = links to it + links from it + 0.5 per shared tag: a neighbour
    linked both ways and sharing topics outranks one mentioned in passing.
    """
    try:
        node_id = wiki.find(ref, actor).path
    except PageNotFound:  # an unresolved target: any page may link to it, so the whole graph
        graph = graph_for(wiki, actor)
        node_id = resolve_node(wiki, graph, ref, actor)
    else:
        graph = graph_around(wiki, node_id, actor)
    node = graph.nodes[node_id]
    succ, pred = graph.successors(node_id), graph.predecessors(node_id)
    tags = {t.lower() for t in node.page.tags} if node.page is not None else set()
    connections = []
    for other in graph.neighbors(node_id):
        other_node = graph.nodes[other]
        out_n = succ[other].weight if other in succ else 0
        in_n = pred[other].weight if other in pred else 0
        shared = sorted(tags & {t.lower() for t in other_node.page.tags}) if other_node.page else []
        connections.append(Connection(other, other_node.label, other_node.resolved, out_n, in_n, shared,
                                      out_n + in_n + 0.5 * len(shared)))
    connections.sort(key=lambda c: (-c.strength, not c.resolved, c.node))
    return Explanation(node, len(pred), len(succ), len(graph.neighbors(node_id)),
                       sum(1 for t in succ if graph.nodes[t].page is None), connections[:limit])
