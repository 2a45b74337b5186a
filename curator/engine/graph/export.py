"""The operator's whole graph as ``curator graph --format json`` prints it, saved in pieces.

At 32,000 pages the node-link document is ~45 MB: building it from a graph means decoding every
page record (for the nodes' titles, tags, snippets...), making 250,000 dicts and encoding them,
~2.5 s of a one-shot ``graph`` even when the edges come from the saved graph (:mod:`curator.engine.graph.link_graph`).
So the document is saved in the page cache (:meth:`~curator.engine.corpus.store.PageStore.save_derived`) as its
pieces, each already encoded: one node object per page, one run of edge objects per source page,
and the nodes that are not pages (unresolved targets, attachments) with the link each source
makes to them. The same pages print the same pieces joined; after an edit that added, removed or
renamed no page (what :meth:`~curator.engine.corpus.store.PageStore.derived_since` lists), only the edited pages are
decoded and their links resolved (:func:`~curator.engine.corpus.links.outgoing_of`), their pieces made again, and the
other nodes listed as a full build would list them. Anything else (a page added, removed or
renamed, a different set of attachment files, a name orjson cannot encode) builds the document
from the graph as before, and saves its pieces for the next call.

The document is byte for byte what :func:`~curator.engine.corpus.walker.json_document_bytes` makes of
:func:`~curator.engine.graph.link_graph.to_node_link` (pinned by the tests).
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from typing import Any

from curator.engine.corpus.links import outgoing_of
from curator.engine.corpus.page import Page
from curator.engine.graph.link_graph import (
    ATTACHMENT_PREFIX,
    UNRESOLVED_PREFIX,
    LinkGraph,
    Node,
    graph_for,
    mermaid_id,
    names_digest,
    node_attributes,
)
from curator.engine.wiki import Wiki

#: The encoding of the saved pieces (saved pieces of another version are built again).
_FORMAT = 1
#: Pages a compressed chunk of the saved pieces holds: an edit compresses its page's chunk again,
#: not the 45 MB of every page's (0.6 s at 32,000 pages).
CHUNK = 1024


@dataclass(slots=True)
class _Pieces:
    """The document in pieces, each list aligned with ``paths`` (every page, sorted)."""

    key: bytes  # the attachment files' digest the links were resolved with
    paths: list[str]
    names: bytes  # 8 bytes a page: the digest of what links resolve it by (see graph.names_digest)
    page_nodes: list[bytes]  # each page's node object
    edges: list[bytes]  # each page's edge objects, comma-joined (b"": it links nowhere)
    extras: list[tuple[str, ...]]  # each page's targets that are not pages, in its links' order
    labels: list[tuple[str, ...]]  # ... and how its first link to each writes it
    extra_nodes: dict[str, tuple[str, bytes]]  # such a node's id -> (label, its node object)
    #: the compressed parts as loaded (the paths; each chunk of CHUNK pages; the extra nodes),
    #: saved again as they are unless changed since
    packed: tuple[bytes, list[bytes], bytes] | None = None
    dirty: set[int] = field(default_factory=set)  # the chunks changed since loaded
    extras_dirty: bool = False

    def set_page(self, i: int, node: bytes, edges: bytes, extras: tuple[str, ...], labels: tuple[str, ...]) -> None:
        self.page_nodes[i], self.edges[i], self.extras[i], self.labels[i] = node, edges, extras, labels
        self.dirty.add(i // CHUNK)

    def dump(self) -> bytes:
        def pack(data: Any) -> bytes:
            return zlib.compress(marshal.dumps(data), 1)

        packed = self.packed
        n = len(self.paths)
        chunks = [packed[1][c] if packed is not None and c not in self.dirty
                  else pack((self.page_nodes[at:at + CHUNK], self.edges[at:at + CHUNK],
                             self.extras[at:at + CHUNK], self.labels[at:at + CHUNK]))
                  for c, at in enumerate(range(0, n, CHUNK))]
        head = packed[0] if packed is not None else pack((self.key, self.paths, self.names))
        extra = packed[2] if packed is not None and not self.extras_dirty else pack(self.extra_nodes)
        return marshal.dumps((_FORMAT, head, chunks, extra))

    @classmethod
    def load(cls, blob: bytes) -> _Pieces | None:
        try:
            version, head, chunks, extra = marshal.loads(blob)
            if version != _FORMAT:
                return None
            key, paths, names = marshal.loads(zlib.decompress(head))
            page_nodes: list[bytes] = []
            edges: list[bytes] = []
            extras: list[tuple[str, ...]] = []
            labels: list[tuple[str, ...]] = []
            for chunk in chunks:
                nodes_c, edges_c, extras_c, labels_c = marshal.loads(zlib.decompress(chunk))
                page_nodes += nodes_c
                edges += edges_c
                extras += extras_c
                labels += labels_c
            extra_nodes = marshal.loads(zlib.decompress(extra))
        except (ValueError, TypeError, EOFError, zlib.error):
            return None
        if not len(paths) == len(page_nodes) == len(edges) == len(extras) == len(labels):
            return None
        return cls(key, paths, names, page_nodes, edges, extras, labels, extra_nodes, (head, chunks, extra))

    def document(self) -> bytes | None:
        """The node-link document (None when it is short enough to be printed indented: see
        :func:`~curator.engine.corpus.walker.json_document_bytes`)."""
        import orjson

        order: dict[str, str] = {}  # the nodes that are not pages, in the order a build makes them
        for targets, labels in zip(self.extras, self.labels, strict=True):
            for target, label in zip(targets, labels, strict=True):
                if target not in order:
                    order[target] = label
        n_edges = sum(run.count(b'{"source":') for run in self.edges)
        if len(self.paths) + len(order) <= 50 and n_edges <= 50:
            return None
        extra_nodes = []
        for target, label in order.items():
            saved = self.extra_nodes.get(target)
            if saved is None or saved[0] != label:
                saved = self.extra_nodes[target] = (label, _node_bytes(_extra_node(target, label)))
                self.extras_dirty = True
            extra_nodes.append(saved[1])
        for gone in self.extra_nodes.keys() - order.keys():
            del self.extra_nodes[gone]
            self.extras_dirty = True
        head = orjson.dumps({"center": None, "depth": None})
        return b"".join((
            b'{\n  "directed": true,\n  "multigraph": false,\n  "graph": ', head,
            b',\n  "nodes": [', b",".join((*self.page_nodes, *extra_nodes)),
            b'],\n  "edges": [', b",".join(run for run in self.edges if run), b"]\n}\n"))


def node_link_document(wiki: Wiki, attachments: bool = False) -> bytes | None:
    """The operator's whole graph as node-link JSON (see the module's docstring); None when it is
    printed from :func:`~curator.engine.graph.link_graph.to_node_link` instead (a short document, or a name orjson
    refuses)."""
    store = wiki.store
    store.count()  # (refreshed once: the state and the attachment files are current; nothing decoded)
    name = f"graph-json{'+attachments' if attachments else ''}"
    state, key = store.state, store.attachments_key()
    found = store.derived_since(name)
    pieces = _Pieces.load(found[0]) if found is not None else None
    if pieces is not None and found is not None and pieces.key == key:
        changed = found[1]
        if not changed:
            return pieces.document()
        if _patch(wiki, pieces, sorted(changed), attachments):
            out = pieces.document()
            if state is not None:
                store.save_derived(name, pieces.dump(), state=state)
            return out
    graph = graph_for(wiki, attachments=attachments)
    try:
        pieces = _pieces_of(graph, key)
    except TypeError:  # orjson refuses a lone surrogate (a file name that is not UTF-8)
        return None
    out = pieces.document()
    if state is not None and out is not None:
        store.save_derived(name, pieces.dump(), state=state)
    return out


def _patch(wiki: Wiki, pieces: _Pieces, changed: list[str], attachments: bool) -> bool:
    """Bring ``pieces`` up to date with the ``changed`` pages: False (``pieces`` left as they
    were) when a page was added, removed or renamed, or a link cannot be resolved without every
    page (see :func:`~curator.engine.corpus.links.outgoing_of`): then every link is resolved again."""
    store = wiki.store
    if not store.partial_reads or store.paths != pieces.paths:
        return False
    at = {p: i for i, p in enumerate(pieces.paths)}
    edited: dict[str, Page] = {}
    for path in changed:
        page = store.page(path)
        if page is None or path not in at:
            return False
        i = at[path]
        if pieces.names[8 * i:8 * i + 8] != names_digest(page):
            return False
        edited[path] = page
    pool = dict(edited)  # the pages the edited ones' links are resolved among

    def named(names: set[str]) -> Mapping[str, Page]:
        found = store.pages_named(names)
        pool.update(found)
        return found

    outgoing = outgoing_of(pool, edited, store.attachments, named)
    try:
        runs = {path: _source_pieces(LinkGraph.of_source(path, outgoing[path], attachments), path, page, at)
                for path, page in edited.items()}
        nodes = {path: _node_bytes(Node(path, page, page.title)) for path, page in edited.items()}
    except TypeError:  # (orjson: a lone surrogate)
        return False
    for path, (edges, extras, labels) in runs.items():
        pieces.set_page(at[path], nodes[path], edges, extras, labels)
    return True


def _pieces_of(graph: LinkGraph, key: bytes) -> _Pieces:
    """``graph`` (the operator's, of every page) in pieces."""
    paths = graph.pages
    extra_nodes: dict[str, tuple[str, bytes]] = {}
    for node_id, node in graph.nodes.items():
        if node.page is None:
            extra_nodes[node_id] = (node.label, _node_bytes(node))
    page_nodes, edges, extras, labels = [], [], [], []
    at = set(paths)
    for path in paths:
        node = graph.nodes[path]
        assert node.page is not None
        page_nodes.append(_node_bytes(node))
        run, mine, written = _source_pieces(graph, path, node.page, at)
        edges.append(run)
        extras.append(mine)
        labels.append(written)
    names = b"".join(names_digest(graph.nodes[p].page) for p in paths)  # type: ignore[arg-type]
    return _Pieces(key, paths, names, page_nodes, edges, extras, labels, extra_nodes)


def _source_pieces(graph: LinkGraph, source: str, page: Page,
                   pages: Container[str]) -> tuple[bytes, tuple[str, ...], tuple[str, ...]]:
    """``source``'s edge objects (comma-joined), and the targets of its links that are not
    ``pages`` with how it writes each (the label a build gives the node when ``source`` is the
    first page to link to it: its first link to it, as :meth:`LinkGraph._update` reads it)."""
    import orjson

    out = graph.out.get(source, {})
    dumps = orjson.dumps
    # (one call for the run, its brackets cut off: a call per edge cost 220,000 calls at 32,000 pages)
    run: bytes = dumps([{"source": source, "target": t, "weight": d.weight,
                         "kinds": sorted(d.kinds) if len(d.kinds) > 1 else list(d.kinds)}
                        for t in sorted(out) for d in (out[t],)])[1:-1]
    extras = tuple(t for t in out if t not in pages)
    if not extras:
        return run, (), ()
    first: dict[str, str] = {}
    for link in page.links:
        first.setdefault(link.key, link.target)
    labels = tuple(graph.nodes[t].label if t.startswith(ATTACHMENT_PREFIX) and graph.nodes[t].attachment
                   else first[t[len(UNRESOLVED_PREFIX):]] for t in extras)
    return run, extras, labels


def _extra_node(target: str, label: str) -> Node:
    return Node(target, None, label, target.startswith(ATTACHMENT_PREFIX))


def _node_bytes(node: Node) -> bytes:
    import orjson

    data: dict[str, Any] = {"id": node.id, "mermaid_id": mermaid_id(node.id), **node_attributes(node)}
    # Copied to its size: orjson's bytes keep its whole output buffer (~6 KB for a ~600-byte node;
    # 250 MB kept for the 51,000 nodes of 32,000 pages).
    return memoryview(orjson.dumps(data)).tobytes()

