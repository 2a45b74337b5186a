"""The agents' door: an MCP server on the same engine as the station and the CLI (docs/design.md §11).

``curator mcp --wiki DIR --agent ID [--department D]`` runs one long-lived process per agent on
stdio; ``curator mcp --wiki DIR --http HOST:PORT`` (:func:`serve_http`) serves many agents at once
over the SDK's streamable HTTP, each request acting as the agent its bearer token names
(:class:`AgentTokens`). It opens the wiki once and keeps it warm (page cache, search index, link
index, routing index), and every tool call runs as the actor ``agent:<ID>`` with that department:
reads go through the scope policy's visibility (``departments/<dept>/`` pages only for that
department), writes through the action mechanism (lock, policy check, one commit authored as the
agent, journal).

Tools (argument names as the seed servers had them)::

    wiki_append(slug, content, links?, create_new?)      the only way to write a page
    wiki_search(query, min_trust?, layer?, expand?, limit?)
    wiki_read(page_name, part?)  wiki_index(namespace?, cursor?)  wiki_read_all(max_bytes?)
    files_neighbors(slug, max_bytes?, snippet_chars?)    wiki_graph(center?, depth?)  (Mermaid)
    wiki_dedup()                 wiki_context(budget?, query?)     wiki_conflicts(page?)
    files_wiki_ingest(filename, content? | url?)

Every answer is at most :data:`ANSWER_BUDGET` bytes whatever the
wiki's size: what does not fit is cut with a last line ``[... N more <things>: how to get them]``
(a cursor for ``wiki_index``, a part for ``wiki_read``, the community overview for ``wiki_graph``
without a center). Counts in those lines and summaries count only pages the agent may see.
Answers are plain text for the model. ``duplicate``, ``candidates``, ``pending`` (held for an
operator's review, docs/design.md §13) and ``rejected`` answers of append are
successes whose text says what to do next; only ``locked``, ``denied`` and invalid input (a bad
argument, a page that does not exist or is not visible) are tool errors (``isError``), each one
line, never a traceback.

Freshness: the station, the CLI and other agents change the wiki between calls. Before each call
:meth:`AgentDoor.fresh` runs, cheaply (well under a millisecond on 10,000 pages when nothing changed):

1. ``wiki.search.refresh()``: folders whose mtime moved are listed again (new, deleted, renamed and
   atomically saved pages); see :mod:`curator.engine.search.index`. What it finds is re-parsed into this
   process's page cache, which drops the link index, so reads, neighbours and the graph see it.
2. A :class:`PageWatcher` (watchdog) notes every page file changed on disk, edits written in
   place included; the call refreshes exactly those (an attachment file that came or went, which
   links resolve to, makes it walk every folder instead). With the watcher running, the search
   index's stat sweep of every page (about 35 ms on 10,000 pages) is only a rare safety net
   (:data:`WATCHED_SWEEP_INTERVAL`) instead of running before every search; without a watcher (no
   inotify watches left, say) every search sweeps, like the CLI's, and finds in-place edits.
3. Another process that loaded the cache (the station, a ``curator search``) may already have
   recorded a change in the shared cache database, which step 1 compares against, so this
   process would not notice it. SQLite's ``PRAGMA data_version`` changes exactly when another
   connection committed; only then are the cached (mtime, size) rows compared with this process's
   pages and the differing paths refreshed.
4. ``wiki_read`` and ``files_neighbors`` also stat the page asked for, so an edit of that page is
   seen even before its watcher event arrives.

Appends additionally catch up through the journal inside :func:`~curator.engine.write.actions.run_action`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import json
import logging
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import Field

from curator.engine.corpus.lookalike import escape_controls
from curator.engine.corpus.store import ChangeSet
from curator.engine.corpus.walker import display_path
from curator.engine.corpus.watcher import PageWatcher, namespaces
from curator.engine.errors import CuratorError, UsageError, is_disk_full
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.policy.tokens import TokenStore
from curator.engine.wiki import Wiki
from curator.text import plural

T = TypeVar("T")
log = logging.getLogger(__name__)

SERVER_NAME = "curator"
INSTRUCTIONS = (
    "A markdown knowledge wiki kept in git and curated by people. Look things up with wiki_search "
    "(then wiki_read or files_neighbors); wiki_context gives the identity and core pages to keep "
    "in mind. Record one durable fact at a time with wiki_append: it is the only way to write a "
    "page, it routes the fact to the right page and declines facts the page already states. "
    "Create new pages only when the user asked for one."
)

# Text shown to the model after the engine's own message (it says what happened; this says what next).
_NEXT_PENDING = ("Queued for review (inbox item {id}): an operator approves or rejects it in the "
                 "station. This is not an error and nothing is lost: do NOT retry or rephrase it; "
                 "continue with other work.")
_NEXT_REJECTED = ("Nothing was written or queued: an operator rejected this fact. Do not submit it "
                  "again, reworded or not, unless the user asks you to.")
_NEXT_DUPLICATE = ("Nothing was written: the page already records this fact. Do not append it "
                   "again; append only facts that are new.")
_NEXT_CANDIDATES = ("Nothing was written. If the fact belongs on one of these pages, call "
                    "wiki_append again with that page's slug. Pass create_new=true to create '{slug}' "
                    "only when the user asked for a new page.")


#: The agent an HTTP request's token names, set for the duration of one tool call (the SDK runs
#: synchronous tools on worker threads with a copy of the calling task's context).
_caller: contextvars.ContextVar[Actor | None] = contextvars.ContextVar("curator_mcp_caller", default=None)


class ToolInputError(CuratorError):
    """A tool was called with an argument it cannot use (a tool error, one line)."""


#: With a file watcher running, the (mtime, size) stat sweep of every page is only a safety net
#: (for events a watcher can lose, e.g. an overflowing inotify queue): this rarely, not every search.
WATCHED_SWEEP_INTERVAL = 120.0
#: ``wiki_dedup`` lists at most this many families (highest impact first) and counts the rest.
MAX_FAMILIES = 50
#: The most bytes (UTF-8) one answer carries, whatever the wiki's size: a 32,000-page wiki's
#: index alone is about 3 MB, far past a model's context window. What does not fit is cut and
#: said so in a last line, ``[... N more <things>: how to get them]``.
ANSWER_BUDGET = 100_000
#: bytes kept back from a budget for that last line
NOTICE_ROOM = 400
#: ``wiki_graph`` without a center draws the whole graph up to this many nodes (when it fits the
#: budget); above, it answers with the community overview.
WHOLE_GRAPH_NODES = 300


class AgentDoor:
    """One wiki as one agent sees it: every MCP tool is a method returning the model's text.

    Methods raise :class:`~curator.engine.errors.CuratorError` (one line) for error answers; the
    MCP layer turns those into tool errors. Calls are serialised: the engine's caches are shared
    and the SDK runs synchronous tools on worker threads.
    """

    def __init__(self, wiki: Wiki, actor: Actor | None, budget: int = ANSWER_BUDGET) -> None:
        self.wiki = wiki
        self._actor = actor
        #: the most bytes of one answer (see :data:`ANSWER_BUDGET`)
        self.budget = budget
        #: (graph, answer): the community overview of the graph it was computed for (Leiden
        #: takes seconds on a big wiki; the graph object changes when the pages do)
        self._overview: tuple[Any, str] | None = None
        self._lock = threading.Lock()
        self._data_version: int | None = None
        self._watching = False  # this door started the wiki's watcher (and stops it on close)
        #: Set by :func:`serve` when auto-sync is on: appends bring the next sync forward.
        self.auto_sync: Any = None

    @property
    def actor(self) -> Actor:
        """Who this call acts as: over HTTP the agent of the request's token, else the door's agent."""
        caller = _caller.get()
        if caller is not None:
            return caller
        if self._actor is None:
            raise CuratorError("denied: this call carries no agent identity")
        return self._actor

    # --- keeping warm and fresh -------------------------------------------------------------
    @property
    def watcher(self) -> PageWatcher | None:
        """The wiki's file watcher while this door keeps it running."""
        return self.wiki.session.watcher if self._watching else None

    def warm(self, watch: bool = False) -> None:
        """Load the page cache, bring the search index up to date and build the link index;
        with ``watch``, start a :class:`PageWatcher` first (so nothing between is missed)."""
        with self._lock:
            # Namespaces present on disk now (cheap listing) are watched from the start: watching
            # starts before the page cache is brought up to date, so no edit falls between the two.
            if watch and not self._watching and self.wiki.session.start_watching() is not None:
                self._watching = True
                self.wiki.search.sweep_interval = WATCHED_SWEEP_INTERVAL
                self.wiki.changed.connect(self._on_changed)
            _ = self.wiki.pages
            try:
                self.wiki.search.refresh()
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                # The index is a cache: the server answers without it being current (a search
                # then says the disk is full); it must not refuse to start.
                logging.getLogger(__name__).warning("disk full: the search index is not up to date")
            self._data_version = self._db_version()
            _ = self.wiki.links

    def _on_changed(self, changes: ChangeSet) -> None:
        watcher = self.watcher
        if watcher is not None and changes.added:  # a page in a new namespace: watch it too
            watcher.watch(namespaces(changes.added))

    def close(self) -> None:
        """Stop watching (the wiki stays open: its opener closes it)."""
        if self._watching:
            self.wiki.changed.disconnect(self._on_changed)
            self.wiki.session.stop_watching()
            self._watching = False

    def _db_version(self) -> int | None:
        with self.wiki.store.connection() as conn:  # never interleave with the store's transactions
            try:
                return int(conn.execute("PRAGMA data_version").fetchone()[0])
            except Exception:  # a closed or in-memory database: nothing shared to watch
                return None

    def fresh(self, page_ref: str | None = None) -> None:
        """Pick up changes made outside this process since the last call (see the module doc);
        ``page_ref`` names a page about to be read, whose file is checked too."""
        wiki = self.wiki
        try:
            wiki.search.refresh()
            version = self._db_version()
            if version is not None and version != self._data_version:
                self._sync_from_cache_db()
                self._data_version = version
            watcher = self.watcher
            if watcher is not None:
                dirty = watcher.drain()
                if watcher.drain_attachments():  # links to it resolve otherwise: a full walk
                    wiki.refresh()
                elif dirty:
                    wiki.refresh(dirty)
        except sqlite3.OperationalError as exc:
            # Another process holds the cache database in a long write: answer from what this
            # process has rather than fail the call; the next call looks again.
            log.warning("freshness check skipped: %s", exc)
        if page_ref:
            try:
                path = wiki.find(page_ref, self.actor).path
            except CuratorError:
                return  # not found: the read itself reports it, with the usual hint
            wiki.refresh([path])

    def _sync_from_cache_db(self) -> None:
        """Re-check the pages whose (mtime, size) another process recorded differently."""
        with self.wiki.store.connection() as conn:
            rows = conn.execute("SELECT path, mtime_ns, size FROM pages").fetchall()
        pages = self.wiki.pages
        seen: set[str] = set()
        stale: list[str] = []
        for path, mtime, size in rows:
            seen.add(path)
            page = pages.get(path)
            if page is None or page.mtime_ns != mtime or page.size != size:
                stale.append(path)
        stale += [p for p in pages if p not in seen]
        if stale:
            self.wiki.refresh(sorted(stale))

    def call(self, fn: Callable[[], T], page_ref: str | None = None) -> T:
        """Run one tool body fresh and serialised (``page_ref``: see :meth:`fresh`)."""
        with self._lock:
            self.fresh(page_ref)
            return fn()

    # --- writing ---------------------------------------------------------------------------
    def append(self, slug: str, content: str, links: Sequence[str] | None = None,
               create_new: bool = False) -> str:
        from curator.engine.facts.door import append_with_similar

        result = append_with_similar(self.wiki, slug, content, list(links or ()), bool(create_new), self.actor)
        if result.is_error:
            raise CuratorError(f"{result.status}: {result.message}")
        return _with_similar(self._append_text(result, slug), result.data)

    def _append_text(self, result: Any, slug: str) -> str:
        text = f"{result.status}: {result.message}"
        if result.status == "duplicate":
            return f"{text}\n{_NEXT_DUPLICATE}"
        if result.status == "candidates":
            return f"{text}\n{_NEXT_CANDIDATES.format(slug=result.target or slug)}"
        if result.status == "pending":
            text += f"\n{_NEXT_PENDING.format(id=result.data.get('id'))}"
        if result.status == "rejected":
            return f"{text}\n{_NEXT_REJECTED}"
        if self.auto_sync is not None and result.changed:
            self.auto_sync.after_action()
        if result.commit:
            text += f" (commit {result.commit[:10]})"
        elif result.data.get("commit_error"):
            text += f" (written, not yet committed: {result.data['commit_error']})"
        return text

    def ingest(self, filename: str, content: str | None = None, url: str | None = None) -> str:
        from curator.engine.write.append import ingest

        if (content is None) == (url is None):
            raise ToolInputError("invalid: give exactly one of content or url")
        data = content.encode("utf-8") if content is not None else None
        result = ingest(self.wiki, filename, data=data, url=url, actor=self.actor)
        if result.is_error:
            raise CuratorError(f"{result.status}: {result.message}")
        return f"{result.status}: {result.message}. It is a raw source, not a page: record the facts " \
               "worth keeping with wiki_append."

    # --- reading ---------------------------------------------------------------------------
    def conflicts(self, page: str | None = None) -> str:
        from curator.engine.facts.conflict_queue import fact_conflicts
        from curator.engine.facts.door import BUILDING, ready_index

        if ready_index(self.wiki)[1] == BUILDING:
            # (waiting for it could outlast the client's patience: ~30 s at 32,000 pages)
            return f"{BUILDING}; ask again in a minute"
        found = fact_conflicts(self.wiki, self.actor, page or None)
        if not found:
            return "no conflicts among the facts you may see" + (f" on {page}" if page else "")
        entries = [f"conflict {c.id} ({c.score:.2f}): {c.reason}\n"
                   f"  1. {c.a.path}:{c.a.line}  {c.a.text}\n  2. {c.b.path}:{c.b.line}  {c.b.text}"
                   for c in found]
        summary = (f"{plural(len(found), 'conflict')}: pairs of facts close in meaning that disagree. "
                   "Resolving them is the curators' decision; do not append a fact that takes a side "
                   "until they have.")
        shown = _fitting(entries, self.budget - _size(summary) - NOTICE_ROOM)
        lines = entries[:shown]
        if shown < len(found):
            lines.append(f"[... {len(found) - shown:,} more conflicts: pass page to see one page's]")
        lines.append(summary)
        return "\n".join(lines)

    def search(self, query: str, min_trust: float | None = None, layer: str | None = None,
               expand: bool = False, limit: int = 10) -> str:
        from curator.engine.search.index import MAX_LIMIT

        if not query or not query.strip():
            raise ToolInputError("invalid: the query is empty")
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(f"invalid: limit must be between 1 and {MAX_LIMIT}, not {limit}")
        if min_trust is not None and not 0.0 <= min_trust <= 1.0:
            raise ToolInputError(f"invalid: min_trust must be between 0 and 1, not {min_trust}")
        hits = self.wiki.search.search(query, self.actor, min_trust=min_trust, layer=layer or None,
                                       limit=limit, expand=expand)
        if not hits:
            return f"no pages match {query!r}"
        entries: list[str] = []
        for h in hits:
            mark = "linked from a hit" if h.expanded else f"score {h.score:.3g}"
            entry = f"- {h.path} — {h.title} [{h.layer}, trust {h.trust:.2f}, {mark}]"
            entries.append(f"{entry}\n  {h.snippet}" if h.snippet else entry)
        direct = sum(not h.expanded for h in hits)
        summary = (f"{direct} hit(s)" + (f", {len(hits) - direct} linked page(s)" if expand else "")
                   + ". Read a page with wiki_read(page_name=<path>).")
        shown = _fitting(entries, self.budget - _size(summary) - NOTICE_ROOM)
        lines = entries[:shown]
        if shown < len(entries):
            lines.append(f"[... {plural(len(entries) - shown, 'more hit')} not shown: narrow the query "
                         "or lower limit]")
        lines.append(summary)
        return "\n".join(lines)

    def read(self, page_name: str, part: int = 1) -> str:
        """The page as stored; one bigger than the budget comes in parts (cut at line ends where
        it can be), each but the last ending with how to read the next."""
        from curator.engine.read.reading import read

        if part < 1:
            raise ToolInputError(f"invalid: part must be 1 or more, not {part}")
        result = read(self.wiki, page_name, self.actor)
        cuts = _parts(result.text, self.budget - NOTICE_ROOM)
        if part > len(cuts):
            raise ToolInputError(f"invalid: {result.page.path} has {plural(len(cuts), 'part')}, not {part}")
        if len(cuts) == 1:
            return result.text
        data = result.text.encode("utf-8", "surrogateescape")
        start, end = cuts[part - 1]
        text = data[start:end].decode("utf-8", "surrogateescape")
        where = (f"part {part} of {len(cuts)} of {result.page.path} (bytes {start:,}-{end:,} of "
                 f"{len(data):,})")
        if part < len(cuts):
            return (f"{text}\n[... {plural(len(cuts) - part, 'more part')}: this was {where}; pass "
                    f"part={part + 1} to read on, or use files_neighbors for its links]")
        return f"{text}\n[end of the page: this was {where}]"

    def index(self, namespace: str | None = None, cursor: str | None = None) -> str:
        """Every visible page in path order while the answer fits; past that, a summary by
        namespace and the first pages, with a cursor to page on (see :func:`_cursor`)."""
        after: str | None = None
        if cursor:
            in_namespace, after = _read_cursor(cursor)
            if namespace and namespace.strip("/") != in_namespace.strip("/"):
                raise ToolInputError("invalid: this cursor pages through namespace "
                                     f"{in_namespace or '(all)'!r}, not {namespace!r}")
            namespace = in_namespace or None
        pages = sorted(self.wiki.visible_pages(self.actor), key=lambda p: p.path)
        everything = pages
        if namespace:
            chosen = namespace.strip("/")
            pages = [p for p in pages if p.namespace == chosen]
            if not pages:  # a namespace of hidden pages only looks like one that does not exist
                raise ToolInputError(f"invalid: no namespace {namespace!r}; wiki_index without "
                                     "arguments lists the namespaces")
        rest = [p for p in pages if after is None or p.path > after]
        entries = [f"- {p.path} — {p.title} [{p.layer}, trust {p.trust:.2f}, {p.size} bytes]" for p in rest]
        total = f"{plural(len(pages), 'page')}"
        if not cursor and not namespace and _size("\n".join([*entries, total])) <= self.budget:
            return "\n".join([*entries, total])  # a small wiki: the whole list, as it always was
        head: list[str] = []
        if not cursor:
            head = _namespace_summary(everything if not namespace else pages, self.budget // 4)
            head.append("Pages in path order:" if not namespace else f"Pages of {namespace.strip('/') or '/'}:")
        # at least one entry, or a cursor would never move on
        shown = max(1, _fitting(entries, self.budget - _size("\n".join(head)) - NOTICE_ROOM))
        lines = head + entries[:shown]
        if shown < len(entries):
            # "/" (the pages at the top) is kept apart from "" (every namespace)
            more = _cursor((namespace.strip("/") or "/") if namespace else "", rest[shown - 1].path)
            also = "" if namespace else ", or namespace=<one of the namespaces> for one of them"
            lines.append(f"[... {len(entries) - shown:,} more pages: pass cursor={more!r}{also}]")
        else:
            lines.append(f"[end of the index: {total}{' in ' + repr(namespace) if namespace else ''}]")
        return "\n".join(lines)

    def neighbors(self, slug: str, max_bytes: int = 30_000, snippet_chars: int = 280) -> str:
        from curator.engine.read.reading import neighbors

        _positive(max_bytes, "max_bytes")
        _positive(snippet_chars, "snippet_chars")
        max_bytes = min(max_bytes, self.budget)
        return neighbors(self.wiki, slug, self.actor, max_bytes, snippet_chars).text

    def read_all(self, max_bytes: int = ANSWER_BUDGET - NOTICE_ROOM) -> str:
        from curator.engine.read.reading import read_all

        _positive(max_bytes, "max_bytes")
        # (read_all's own last line comes on top of max_bytes: room is kept for it)
        max_bytes = min(max_bytes, self.budget - NOTICE_ROOM)
        return read_all(self.wiki, self.actor, max_bytes).text or "the wiki has no pages you can see"

    def graph(self, center: str | None = None, depth: int = 2) -> str:
        """Mermaid around ``center`` (the nearest pages first while they fit); without a center,
        the whole graph of a small wiki, else the community overview."""
        from curator.engine.graph.link_graph import graph_for, resolve_node, select_nodes, to_mermaid

        if depth < 0:
            raise ToolInputError(f"invalid: depth must be 0 or more, not {depth}")
        graph = graph_for(self.wiki, self.actor)
        room = self.budget - NOTICE_ROOM
        if not center:
            if len(graph.nodes) <= WHOLE_GRAPH_NODES:
                whole = to_mermaid(graph)
                if _size(whole) <= self.budget:
                    return whole
            if self._overview is None or self._overview[0] is not graph:
                self._overview = (graph, _overview(graph, room))
            return self._overview[1]
        nodes = select_nodes(graph, resolve_node(self.wiki, graph, center, self.actor), depth)
        text = to_mermaid(graph, nodes=nodes)
        if _size(text) <= self.budget:
            return text
        # The most nodes (nearest first) whose diagram fits: the size grows with the node count.
        low, high = 1, len(nodes) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if _size(to_mermaid(graph, nodes=nodes[:mid])) <= room:
                low = mid
            else:
                high = mid - 1
        return (f"{to_mermaid(graph, nodes=nodes[:low])}\n    %% [... {len(nodes) - low:,} more pages within "
                f"{depth} links: pass a smaller depth, or center on one of the pages shown]")

    def dedup(self) -> str:
        from curator.engine.dedup.families import find_families

        # Families of the pages this agent may read only (a hidden page never joins two visible
        # ones, nor shows up as a member): docs/design.md §6, §12.
        found = find_families(self.wiki, self.actor)
        if not found:
            return "no duplicate families"
        entries = [f"- keep {f.keep}  <-  merge {', '.join(f.merges)}: {f.reason}" for f in found[:MAX_FAMILIES]]
        summary = (f"{plural(len(found), 'duplicate family', 'duplicate families')}. Merging is the curators' "
                   "decision, made in the station: do not copy pages yourself. Until then, append new "
                   "facts to the page marked keep.")
        shown = _fitting(entries, self.budget - _size(summary) - NOTICE_ROOM)
        lines = entries[:shown]
        if shown < len(found):
            lines.append(f"[... {len(found) - shown:,} more families: the {shown} with the most inbound links "
                         "and trust are listed; the station's dedup view shows them all]")
        lines.append(summary)
        return "\n".join(lines)

    def context(self, budget: int = 8000, query: str | None = None) -> str:
        from curator.engine.read.agent_context import build_context
        from curator.engine.read.injections import EMPTY_ANSWER, record

        if budget < 0:
            raise ToolInputError(f"invalid: budget must be 0 or more bytes, not {budget}")
        budget = min(budget, self.budget)
        result = build_context(self.wiki, self.actor, budget=budget, query=query or None)
        record(self.wiki, self.actor, result, query=query or None, source="mcp")  # docs/design.md §14
        answer = result.text or EMPTY_ANSWER
        return f"{answer.rstrip()}\n\n{result.notice}" if result.notice else answer


def _with_similar(text: str, data: dict[str, Any]) -> str:
    similar = data.get("similar") or []
    if not similar:
        note = data.get("similar_note")
        return f"{text}\n(no similar facts: {note})" if note else text
    lines = [f"- {s['path']}:{s['line']} ({s['score']:.2f}) {s['text']}" for s in similar]
    return "\n".join([text, "Closest in meaning elsewhere in the wiki:", *lines])


def _positive(value: int, name: str) -> None:
    if value <= 0:
        raise ToolInputError(f"invalid: {name} must be a positive number, not {value}")


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def _fitting(entries: Sequence[str], room: int) -> int:
    """How many of ``entries`` (joined by newlines) fit in ``room`` bytes."""
    used = 0
    for k, entry in enumerate(entries):
        used += _size(entry) + 1
        if used > room:
            return k
    return len(entries)


def cut_to_budget(text: str, budget: int) -> str:
    """``text`` within ``budget`` bytes: cut at a line end where one is near, with a last line
    saying so (the safety net under every answer; the tools cut their own answers finer)."""
    if _size(text) <= budget:
        return text
    data = text.encode("utf-8", "surrogateescape")
    end = _cut_at(data, 0, max(0, budget - NOTICE_ROOM))
    kept = data[:end].removesuffix(b"\n")  # (the notice line brings its own)
    return (f"{kept.decode('utf-8', 'surrogateescape')}\n[... {len(data) - end:,} more bytes "
            f"not shown: the answer is cut at {budget:,} bytes; ask for less]")


def _cut_at(data: bytes, start: int, room: int) -> int:
    """Where a part of ``data`` beginning at ``start`` ends: after the last newline within
    ``room`` bytes when that keeps at least half, else at ``room`` on a character boundary."""
    end = start + room
    if end >= len(data):
        return len(data)
    newline = data.rfind(b"\n", start, end)
    if newline >= start + room // 2:
        return newline + 1
    while end > start + 1 and data[end] & 0xC0 == 0x80:  # not inside a UTF-8 sequence
        end -= 1
    return end


def _parts(text: str, room: int) -> list[tuple[int, int]]:
    """The (start, end) byte ranges ``wiki_read`` gives a page in, each at most ``room`` bytes."""
    data = text.encode("utf-8", "surrogateescape")
    cuts: list[tuple[int, int]] = []
    start = 0
    while True:
        end = _cut_at(data, start, room)
        cuts.append((start, end))
        if end >= len(data):
            return cuts
        start = end


def _cursor(namespace: str, after: str) -> str:
    """An opaque ``wiki_index`` cursor: the namespace paged through and the last path given.
    A path, not a position, so pages added or removed meanwhile neither repeat nor skip others;
    it only says where to go on from, so it cannot open anything the agent may not see."""
    raw = json.dumps([namespace, after], ensure_ascii=False).encode("utf-8", "surrogateescape")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _read_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor.strip() + "=" * (-len(cursor.strip()) % 4))
        namespace, after = json.loads(raw.decode("utf-8", "surrogateescape"))
        if isinstance(namespace, str) and isinstance(after, str):
            return namespace, after
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        pass
    raise ToolInputError("invalid: the cursor is not one wiki_index gave; call wiki_index without it "
                         "to start over")


def _namespace_summary(pages: Sequence[Any], room: int) -> list[str]:
    """Pages, bytes and layers per namespace (first path segment) of ``pages``, biggest first,
    in about ``room`` bytes."""
    from collections import Counter

    count: Counter[str] = Counter()
    size: Counter[str] = Counter()
    layers: dict[str, Counter[str]] = {}
    for p in pages:
        count[p.namespace] += 1
        size[p.namespace] += p.size
        layers.setdefault(p.namespace, Counter())[p.layer] += 1
    entries = [f"- {ns or '/'}: {plural(n, 'page')}, {size[ns]:,} bytes; layers "
               + ", ".join(f"{layer} {k:,}" for layer, k in layers[ns].most_common())
               for ns, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]
    head = f"{plural(len(pages), 'page')} you may see, in {plural(len(count), 'namespace')} (pass namespace=<name> to list one):"
    shown = _fitting(entries, room)
    tail = [f"[... {len(entries) - shown:,} more namespaces, the smallest]"] if shown < len(entries) else []
    return [head, *entries[:shown], *tail]


def _overview(graph: Any, room: int) -> str:
    """The community overview of ``graph`` as Mermaid (see
    :mod:`curator.engine.graph.communities`): one node per community, named by its best-linked
    page, biggest first, while it fits in ``room`` bytes."""
    import numpy as np

    from curator.engine.graph.communities import find_communities
    from curator.engine.graph.link_graph import mermaid_id, mermaid_label

    pages = [n for n, node in graph.nodes.items() if node.layer != "unresolved"]
    index = {n: i for i, n in enumerate(pages)}
    pairs = [(index[a], index[b]) for a, b in graph.undirected_edges() if a in index and b in index]
    found = find_communities(pages, np.array(pairs, dtype=np.int64).reshape(-1, 2))
    groups = found.communities
    head = [
        "graph LR",
        f"    %% Community overview: the {len(pages):,} pages you may see fall into "
        f"{plural(len(groups), 'community', 'communities')} (pages linked more among themselves than to "
        f"the rest), biggest first; {plural(found.alone, 'page links', 'pages link')} to no other page.",
        "    %% Pass center=<a page's path> (each community is named by its best-linked page) for the "
        "pages around it.",
    ]
    nodes = [f'    {mermaid_id(f"c{k}")}["{mermaid_label(graph.nodes[c.hub].label)} ({c.hub}): '
             f'{len(c.members):,} pages"]' for k, c in enumerate(groups)]
    used = _size("\n".join(head))
    shown = _fitting(nodes, (room - used) * 2 // 3)
    edges = [f"    {mermaid_id(f'c{a}')} ---|{n}| {mermaid_id(f'c{b}')}"
             for a, b, n in sorted(found.edges, key=lambda e: (-e[2], e[0], e[1])) if a < shown and b < shown]
    used += _size("\n".join(nodes[:shown])) + 1
    linked = _fitting(edges, room - used)
    lines = head + nodes[:shown] + edges[:linked]
    if shown < len(groups):
        rest = sum(len(c.members) for c in groups[shown:])
        lines.append(f"    %% [... {len(groups) - shown:,} more communities ({rest:,} pages): pass "
                     "center=<a page's path> to see the pages around it]")
    elif linked < len(edges):
        lines.append(f"    %% [... {len(edges) - linked:,} more links between communities not drawn]")
    return "\n".join(lines)


# --- the MCP layer ------------------------------------------------------------------------------

def _one_line(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__


def _server_class() -> type:
    """MCPServer whose tool errors are the one line the tool raised (no SDK prefix, no pydantic
    report spread over several lines with a documentation link)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    class OneLineErrors(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            # Over HTTP the caller is the agent of this request's token (checked by the SDK's
            # bearer middleware on every request); nothing else in the request names an identity.
            caller = _caller.set(_token_actor(context))
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError:
                raise
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, ValidationError):
                    problems = "; ".join(
                        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                        for err in cause.errors())
                    raise ToolError(f"invalid arguments for {name}: {problems}") from None
                if isinstance(cause, ToolError):
                    raise ToolError(str(cause)) from None
                raise
            finally:
                _caller.reset(caller)

    return OneLineErrors


def _token_actor(context: Any) -> Actor | None:
    """The agent the bearer token of the HTTP request behind ``context`` belongs to (None on stdio)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    try:
        request = context.request_context.request
    except (AttributeError, ValueError):  # no request context: an in-process call
        return None
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser):
        return None
    claims = user.access_token.claims or {}
    return parse_actor(f"agent:{user.access_token.client_id}", claims.get("department"))


class AgentTokens:
    """The SDK's token verifier over :class:`~curator.engine.policy.tokens.TokenStore`: a token
    is valid while its agent is registered (``curator agents add``), and says who that agent is."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        try:
            actor = self.store.lookup(token)
        except CuratorError as exc:
            log.error("%s", exc)
            return None
        if actor is None:
            return None
        return AccessToken(token=token, client_id=actor.id, scopes=[],
                           claims={"department": actor.department})


def build_server(door: AgentDoor, tokens: AgentTokens | None = None, url: str = "") -> Any:
    """The MCP server (:class:`mcp.server.mcpserver.MCPServer`) serving ``door``'s tools; with
    ``tokens`` (over HTTP at ``url``) every request must carry a registered agent's bearer token."""
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import AnyHttpUrl

    from curator import __version__

    # Curator issues its own tokens: the issuer is this server, and no OAuth routes are served.
    auth = (AuthSettings(issuer_url=AnyHttpUrl(url or "http://127.0.0.1"), resource_server_url=None)
            if tokens is not None else None)
    server = _server_class()(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING",
                             version=__version__, token_verifier=tokens, auth=auth)

    def run(fn: Callable[[], str], page_ref: str | None = None, as_stored: bool = False) -> str:
        # Every answer and error leaves as valid UTF-8: a file name that is not (its bytes held as
        # lone surrogates) is shown with U+FFFD instead of breaking the stdio stream. Answers an
        # agent decides on (which page to append to, what is a duplicate) show bidirectional and
        # invisible characters as <U+XXXX>, as the CLI and the station do; what reads a page
        # (``as_stored``) gives its text as stored.
        try:
            answer = display_path(door.call(fn, page_ref))
            return cut_to_budget(answer if as_stored else escape_controls(answer, keep_lines=True), door.budget)
        except CuratorError as exc:
            raise ToolError(escape_controls(display_path(_one_line(exc)))) from None
        except Exception as exc:  # an engine bug still reaches the model as one line
            if is_disk_full(exc):
                raise ToolError("disk full: nothing was committed; try again later") from None
            raise ToolError(display_path(f"internal error: {type(exc).__name__}: {_one_line(exc)}")) from None

    def tool(description: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
        decorator: Callable[[Callable[..., str]], Callable[..., str]] = server.tool(
            description=description, structured_output=False)
        return decorator

    @tool("Record ONE durable fact in the wiki. This is the only way to write a page. The fact goes "
          "to the page named by slug (an exact page name, else similar pages are offered as "
          "candidates and nothing is written). Answers: 'appended'; 'duplicate' (the page already "
          "states it: do not retry); 'candidates' (re-call with one candidate's slug, or with "
          "create_new=true ONLY when the user asked for a new page); 'pending' (queued for an "
          "operator's review: do not retry); 'rejected' (an operator rejected this fact: do not "
          "submit it again). A fact is at most 4,000 characters and 1,000 per line; longer is "
          "'invalid'.")
    def wiki_append(
        slug: Annotated[str, Field(description="the page's name, e.g. 'ann-smith' or 'payment-flow'")],
        content: Annotated[str, Field(description="the fact, one clear sentence (at most 4,000 characters)")],
        links: Annotated[list[str] | None, Field(description="pages this fact relates to (slugs)")] = None,
        create_new: Annotated[bool, Field(description="create the page even though similar pages "
                                          "exist; only when the user asked for a new page")] = False,
    ) -> str:
        return run(lambda: door.append(slug, content, links, create_new))

    @tool("Full-text search of the pages you may see, ranked by relevance and trust. Use it before "
          "answering from the wiki and before appending (to find the right page). Query: words (all "
          "must match), \"a phrase\", OR, -word, prefix*, filters layer:core tag:x path:wiki/ "
          "trust:>=0.5 (trust from 0 to 1; an unknown layer or a bad trust is an error). "
          "expand=true adds the pages linked to and from each hit.")
    def wiki_search(
        query: Annotated[str, Field(description="what to look for")],
        min_trust: Annotated[float | None, Field(description="only pages with at least this trust (0-1)")] = None,
        layer: Annotated[str | None, Field(description="only this layer: identity, core, context or deep")] = None,
        expand: Annotated[bool, Field(description="also list the pages linked to and from each hit")] = False,
        limit: Annotated[int, Field(description="at most this many hits (1-100)")] = 10,
    ) -> str:
        return run(lambda: door.search(query, min_trust, layer, expand, limit))

    @tool("Read one page in full (frontmatter and body). page_name is its path (e.g. wiki/ann.md) or "
          "its slug or title, as wiki_search and wiki_index list them. A page over about 100 KB comes "
          "in parts cut at line ends: the last line says which part this is and to pass part=N+1 for "
          "the next.")
    def wiki_read(
        page_name: Annotated[str, Field(description="the page's path, slug or title")],
        part: Annotated[int, Field(description="which part of a big page (1 is the start)")] = 1,
    ) -> str:
        return run(lambda: door.read(page_name, part), page_name, as_stored=True)

    @tool("List the pages you may see with their title, layer, trust and size, in path order. On a "
          "big wiki the answer starts with a summary by namespace (first folder: pages, bytes, "
          "layers), lists the first pages and ends with '[... N more pages: pass cursor=...]': call "
          "again with that cursor to go on, or with namespace to list one folder. Use wiki_search to "
          "find something.")
    def wiki_index(
        namespace: Annotated[str | None, Field(description="only pages under this first folder, e.g. "
                                               "'wiki' ('/' for pages at the top)")] = None,
        cursor: Annotated[str | None, Field(description="go on after the previous answer (its "
                                            "cursor=..., as given)")] = None,
    ) -> str:
        return run(lambda: door.index(namespace, cursor))

    @tool("A page in full, then the pages it links to (unwritten ones flagged) and the pages linking "
          "to it, as snippets, within max_bytes. Use it to explore around a page.")
    def files_neighbors(
        slug: Annotated[str, Field(description="the page's path, slug or title")],
        max_bytes: Annotated[int, Field(description="output budget in bytes")] = 30_000,
        snippet_chars: Annotated[int, Field(description="length of each neighbour's snippet")] = 280,
    ) -> str:
        return run(lambda: door.neighbors(slug, max_bytes, snippet_chars), slug, as_stored=True)

    @tool("Every page you may see, identity layer first, then core, context and deep, until "
          "max_bytes (at most about 100 KB). For small wikis; prefer wiki_search or wiki_context on "
          "large ones.")
    def wiki_read_all(
        max_bytes: Annotated[int, Field(description="output budget in bytes")] = ANSWER_BUDGET - NOTICE_ROOM,
    ) -> str:
        return run(lambda: door.read_all(max_bytes), as_stored=True)

    @tool("The link graph as a Mermaid diagram (graph LR): around center up to depth links away "
          "(nearest pages first, cut with a '%% [... N more pages ...]' line past about 100 KB). "
          "Without center: every page of a small wiki; on a bigger one the community overview, one "
          "node per group of closely linked pages named by its best-linked page (pass that page as "
          "center to see around it).")
    def wiki_graph(
        center: Annotated[str | None, Field(description="start at this page (path, slug or title)")] = None,
        depth: Annotated[int, Field(description="links away from center")] = 2,
    ) -> str:
        return run(lambda: door.graph(center, depth))

    @tool("Pairs of facts close in meaning that disagree (a number, a date, a name, a negation), "
          "among the facts you may see: check before appending a fact on a subject the wiki already "
          "covers. Read-only; the curators resolve them. With page, only pairs holding one of that "
          "page's facts.")
    def wiki_conflicts(
        page: Annotated[str | None, Field(description="only conflicts with a fact of this page "
                                          "(path, slug or title)")] = None,
    ) -> str:
        return run(lambda: door.conflicts(page), page)

    @tool("Families of pages that look like copies of one another (which to keep, which to merge, and "
          "why), highest impact first, at most 50 and about 100 KB ('[... N more families ...]'). Merging is done by the curators in the station; append to the "
          "page marked keep.")
    def wiki_dedup() -> str:
        return run(door.dedup)

    @tool("The wiki text to keep in mind: your identity and core pages, filled into a byte budget. "
          "With query, pages relevant to it come first within each layer.")
    def wiki_context(
        budget: Annotated[int, Field(description="byte budget")] = 8000,
        query: Annotated[str | None, Field(description="rank pages by relevance to this first")] = None,
    ) -> str:
        return run(lambda: door.context(budget, query), as_stored=True)

    @tool("Store a raw source (a transcript, a document, a web page) under raw/ in the wiki, not as a "
          "page. Give content or an http(s) url. Then record the facts worth keeping with wiki_append.")
    def files_wiki_ingest(
        filename: Annotated[str, Field(description="file name in raw/ (reduced to A-Z a-z 0-9 . _ -)")],
        content: Annotated[str | None, Field(description="the source text")] = None,
        url: Annotated[str | None, Field(description="fetch the source from this http(s) URL")] = None,
    ) -> str:
        return run(lambda: door.ingest(filename, content, url))

    return server


def serve(wiki: Wiki, agent: str, department: str | None = None, sync_every: float = 0.0) -> None:
    """Serve ``wiki`` over stdio as ``agent:<agent>`` until the client closes the connection.

    With ``sync_every`` > 0 the wiki is synced with its git remote on that period and a few seconds
    after each append (``curator sync``; offline remotes are retried with back-off).
    """
    actor = parse_actor(f"agent:{agent}", department)
    door = AgentDoor(wiki, actor)
    with _running(door, actor, sync_every):
        import anyio

        anyio.run(serve_stdio, build_server(door))


@contextlib.contextmanager
def _running(door: AgentDoor, sync_actor: Actor, sync_every: float) -> Iterator[None]:
    """Keep ``door`` warm and watching (and auto-syncing as ``sync_actor``) while serving."""
    from curator.engine.facts.door import warm_in_background
    from curator.engine.memory import return_freed_memory

    return_freed_memory()  # (a server runs for days: the memory a call freed goes back)
    door.warm(watch=True)
    warm_in_background(door.wiki)  # so appends answer similar facts once it is ready
    stop = threading.Event()
    if sync_every > 0:
        from curator.engine.sync.remote import AutoSync, sync

        wiki = door.wiki
        door.auto_sync = AutoSync(lambda: sync(wiki, sync_actor), interval=sync_every,
                                  after_action_delay=min(5.0, sync_every))
        door.auto_sync.start_thread(stop, tick=min(1.0, sync_every))
    try:
        yield
    finally:
        stop.set()
        door.close()


#: How long Ctrl-C / SIGTERM waits for open connections (an agent's idle event stream) before
#: closing them; a tool call already running always finishes first (its worker thread is awaited).
SHUTDOWN_GRACE_S = 5


def http_url(host: str, port: int, tls: bool = False) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a one-line error (bound here, not by uvicorn, whose
    failure to bind is a log line and an exit)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"cannot serve on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve_http(wiki: Wiki, host: str, port: int, *, tls_cert: str | None = None, tls_key: str | None = None,
               sync_every: float = 0.0, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``wiki`` over MCP's streamable HTTP at ``/mcp`` to every agent holding a token.

    One engine and one write queue for all: each tool call runs as the agent its request's bearer
    token names (``curator agents add``), with that agent's department. Ctrl-C and SIGTERM stop
    taking requests, let the calls under way finish (their commits included), then exit.
    """
    import uvicorn

    from curator.engine.policy.actor import OPERATOR

    url = http_url(host, port, bool(tls_cert))
    door = AgentDoor(wiki, None)
    with _running(door, OPERATOR, sync_every):
        server = build_server(door, AgentTokens(TokenStore(wiki.state_dir)), url)
        # Plain JSON answers rather than a server-sent-event stream per call: the tools send
        # nothing before their answer, and a stream costs each call several milliseconds.
        app = server.streamable_http_app(host=host, json_response=True)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                ssl_certfile=tls_cert,
                                ssl_keyfile=tls_key, timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
                                lifespan="on")
        sock = _bind(host, port)
        _graceful_server_class()(config, lambda: on_ready(f"{url}/mcp") if on_ready else None).run(sockets=[sock])


def _graceful_server_class() -> type:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, except that after its graceful stop on Ctrl-C or SIGTERM it returns
        instead of raising the signal again, so the door closes (watcher, auto-sync) and the
        command exits 0."""

        def __init__(self, config: Any, on_ready: Callable[[], None]) -> None:
            super().__init__(config)
            self.on_ready = on_ready

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:  # serving, with the signal handlers in place
                self.on_ready()

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            self._captured_signals.clear()

    return GracefulServer


async def serve_stdio(server: Any) -> None:
    """Serve ``server`` (an ``MCPServer``) over stdin/stdout as its own stdio transport does, and
    answer every line that is not a JSON-RPC message: ``-32700`` (parse error) when it is not
    JSON, ``-32600`` (invalid request) when it is JSON of another shape, each with ``id: null``
    (the SDK's transport only logged them, and the client waited for an answer that never came)."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    # (MCPServer.run_stdio_async runs its low-level server on stdio_server's streams the same way)
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def sort_out() -> None:
            async with send:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await send.send(item)
                        continue
                    errors: list[dict[str, Any]] = getattr(item, "errors", list)()
                    not_json = any(e.get("type") == "json_invalid" for e in errors)
                    error = ErrorData(code=PARSE_ERROR if not_json else INVALID_REQUEST,
                                      message="Parse error: the line is not JSON" if not_json
                                      else "Invalid request: not a JSON-RPC 2.0 message")
                    await write_stream.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(sort_out)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


def open_door(root: Path | str, agent: str, department: str | None = None) -> AgentDoor:
    """An :class:`AgentDoor` on the wiki at ``root`` (for in-process use and tests)."""
    return AgentDoor(Wiki(root), parse_actor(f"agent:{agent}", department))
