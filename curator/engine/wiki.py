"""The :class:`Wiki`: one wiki root as the engine sees it. GUI, CLI and MCP all start here.

A ``Wiki`` owns the page cache, the link index built from it, the read policy that decides what
an actor may see, the ``changed`` event, and its :class:`~curator.engine.session.WikiSession` (git, journal,
write lock, routing/dedup/graph caches, file watcher: no module keeps a table of its own per wiki). Mutations live in their own modules (append,
actions, merge, ...) and report back through :meth:`Wiki.note_changes`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from curator.engine.corpus.page import Page, link_key, path_key
from curator.engine.corpus.slugs import slug_sim
from curator.engine.corpus.state import state_dir_for
from curator.engine.corpus.store import ChangeSet, PageStore, gc_paused
from curator.engine.corpus.summaries import (
    Summaries,
    current_inbound,
    keep_inbound,
    keep_summaries,
    kept_inbound,
    load_summaries,
)
from curator.engine.errors import NotAWiki, PageNotFound
from curator.engine.events import Signal
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.policy.scope import Decision, ScopePolicy, protected_decision
from curator.engine.search.index import SearchIndex

if TYPE_CHECKING:
    # (imported when first used: git, the journal and the write lock, and the link index, which
    # a one-shot command such as ``search`` never builds: ~2 ms of its start with the Markdown scanner)
    from curator.engine.corpus.links import LinkIndex
    from curator.engine.session import WikiSession

class ReadPolicy(Protocol):
    """Decides which pages an actor may see and write (:class:`~curator.engine.policy.scope.ScopePolicy` implements it)."""

    def can_read(self, actor: Actor, path: str) -> bool: ...

    def check_write(self, actor: Actor, path: str) -> Decision: ...

    def audience(self, path: str) -> object: ...


class OpenPolicy:
    """Everyone sees everything: the policy of a wiki without scope rules."""

    def can_read(self, actor: Actor, path: str) -> bool:
        return True

    def check_write(self, actor: Actor, path: str) -> Decision:
        return Decision(True)

    def audience(self, path: str) -> object:
        return None  # everyone reads every page


#: :meth:`Wiki.built_links` brings the operator's link index up to date itself when at most this
#: many pages' links are resolved again (else it answers None, as for an index not built)
BUILT_UPDATE_MAX = 200


@dataclass(slots=True, frozen=True)
class _Seen:
    """An actor's link index (:meth:`Wiki.links_for`) and what it was made from."""

    at: int  # the pages' generation it is of
    index: LinkIndex
    paths: set[str]  # every page there was (the visible ones are ``index.pages``)
    attachments: tuple[str, ...]  # every attachment file there was
    files: list[str]  # the visible ones


class Wiki:
    def __init__(self, root: Path | str) -> None:
        root = Path(root).expanduser()
        if not root.exists():
            raise NotAWiki(f"wiki folder {root} does not exist (create one with 'curator init {root}')")
        if not root.is_dir():
            raise NotAWiki(f"{root} is a file, not a wiki folder")
        self.root = root.resolve()
        # (a folder that is not a wiki gets no state in it: see corpus/state.py)
        self.state_dir = state_dir_for(self.root)
        self.store = PageStore(self.root, self.state_dir)
        # The full-text index (docs/design.md §7) shares the cache's database and is kept in step by it.
        self.search = SearchIndex(self)
        self.store.add_extension(self.search)
        # The scope policy (.scope.toml, docs/design.md §6) decides every read and write of non-operators.
        self.scope = ScopePolicy(self.root)
        self.scope.on_change = self._policy_changed
        self.policy: ReadPolicy = self.scope
        #: Emitted with a :class:`ChangeSet` whenever pages change (refresh or action).
        self.changed: Signal[ChangeSet] = Signal()
        self._links: LinkIndex | None = None
        self._links_at = 0  # the pages' generation (see _pages_gen) the operator's index is of
        self._links_seen: dict[tuple[object, ...], _Seen] = {}  # per-actor link indexes
        self._links_gen = 0  # bumped whenever the link indexes are dropped (the policy changed)
        self._pages_gen = 0  # bumped whenever pages change: the link indexes are brought up to date
        self._lock = threading.RLock()
        self._session: WikiSession | None = None

    def __repr__(self) -> str:
        return f"Wiki({str(self.root)!r})"

    @property
    def session(self) -> WikiSession:
        """The wiki's per-process services (git, journal, write lock, caches, watcher), created
        on first use: see :mod:`curator.engine.session`."""
        session = self._session
        if session is None:
            with self._lock:
                session = self._session
                if session is None:
                    from curator.engine.session import WikiSession

                    # Asked again: a folder opened before 'curator init' made it a repository
                    # must take its write lock and journal where every other process does.
                    self.state_dir = state_dir_for(self.root)
                    session = self._session = WikiSession(self.root, self.state_dir)
        return session

    # --- pages ------------------------------------------------------------------------
    @property
    def pages(self) -> dict[str, Page]:
        return self.store.pages

    @property
    def paths(self) -> list[str]:
        """Every page's path, sorted (no page decoded)."""
        return self.store.paths

    def page(self, path: str) -> Page | None:
        """The page at ``path`` (None: there is none), decoding only its record while the pages
        are not all decoded (:attr:`pages`)."""
        return self.store.page(path)

    def summaries(self) -> Summaries:
        """Every page as a page list shows it, without decoding every page once they are kept
        (:mod:`curator.engine.corpus.summaries`; :meth:`keep_summaries` keeps them)."""
        return load_summaries(self.store)

    def kept_inbound(self) -> dict[str, int] | None:
        """The inbound link counts last kept (:meth:`keep_inbound`), maybe of older pages."""
        return kept_inbound(self.store)

    def current_inbound(self) -> dict[str, int] | None:
        """The inbound link counts last kept when no page changed since (:func:`~curator.engine.corpus.summaries.current_inbound`):
        what the link index would count, without building it (None: count them)."""
        return current_inbound(self.store)

    def keep_inbound(self, counts: Mapping[str, int], state: bytes | None = None) -> bool:
        """Keep every page's inbound link count as counted at the store's ``state`` (its state
        now when None), for the next open's page list. Whether they were kept."""
        return keep_inbound(self.store, counts, state)

    def keep_summaries(self, summaries: Summaries) -> None:
        """Save :meth:`summaries` with the page cache, so the next :meth:`summaries` decodes
        only the pages changed since (nothing when the cache holds them already)."""
        keep_summaries(self.store, summaries)

    def refresh(self, paths: Iterable[str] | None = None) -> ChangeSet:
        """Pick up changes on disk (all, or just ``paths``); emits ``changed`` when any."""
        changes = self.store.refresh(paths)
        if changes:
            self.note_changes(changes)
        return changes

    def refresh_loaded(self, paths: Iterable[str]) -> None:
        """:meth:`refresh` ``paths`` (changed by an action) when the page cache is loaded.

        A process that never loaded its page cache (a one-shot CLI call) skips this: the next
        full load reconciles by (mtime, size) anyway, and loading 10,000 pages here would cost
        200 ms.
        """
        paths = list(paths)
        if paths and self.store.loaded:
            self.refresh(paths)

    def note_changes(self, changes: ChangeSet) -> None:
        """Invalidate what depends on the pages and tell listeners. The link indexes are kept:
        the next one to ask for them brings them up to date from the pages that changed
        (:meth:`~curator.engine.corpus.links.LinkIndex.updated`), and rebuilds them only for a large change."""
        with self._lock:
            self._pages_gen += 1
            if self._session is not None:  # built from link indexes no longer current
                self._session.drop_link_caches(names=False)  # (those kept while names are)
        self.changed.emit(changes)

    def _policy_changed(self) -> None:
        # Caches keyed by the link index (per-actor graphs) were built under the old policy.
        with self._lock:
            self._drop_links()

    def links_built(self) -> bool:
        """Whether the operator's link index is built (:attr:`links`), without building it."""
        with self._lock:
            return self._links is not None

    def release_links(self) -> None:
        """Let go of the operator's link index (built again when next asked for): for a one-shot
        command that built it for one answer and has much else to hold (a dedup scan's inbound
        counts: 57 MB at 32,000 pages, 180 MB at 100,000, held through the rest of the scan)."""
        with self._lock:
            self._drop_links()

    def _drop_links(self) -> None:
        self._links = None
        self._links_seen = {}
        self._links_gen += 1
        if self._session is not None:
            self._session.drop_link_caches()  # built from the link indexes just dropped

    @property
    def links(self) -> LinkIndex:
        """The operator's link index of the pages as they are: built once, then brought up to
        date from the pages each change touched (:meth:`~curator.engine.corpus.links.LinkIndex.updated`)."""
        from curator.engine.corpus.links import LinkIndex

        reload = getattr(self.policy, "reload", None)
        if reload is not None:  # an edited .scope.toml drops the caches built under the old one
            reload()
        with self._lock:
            index, gen = self._links, self._pages_gen
            if index is None or self._links_at != gen:
                pages = self.pages
                with gc_paused():  # ~1M edges and resolutions, none cyclic: see gc_paused
                    if index is None:
                        index = LinkIndex(pages, self.store.attachments)
                    else:
                        index = index.updated(pages, self.store.attachments)
                self._links, self._links_at = index, gen
            return index

    def links_for(self, actor: Actor = OPERATOR) -> LinkIndex:
        """The link index as ``actor`` sees the wiki: built over the pages it may see only, so a
        link to a hidden page (by name, path, alias or title) resolves exactly as it would if
        that page did not exist (unresolved, "not yet written", or to a visible page of that
        name). The one visibility filter for links behind neighbours, lint, search expansion,
        the graph and :meth:`find`. Cached per department until the pages or the policy change.
        """
        if actor.is_operator:
            return self.links
        reload = getattr(self.policy, "reload", None)
        if reload is not None:  # an edited .scope.toml drops the indexes built under the old one
            reload()
        key = (actor.kind, actor.department, id(self.policy))
        with self._lock:
            gen, at, seen = self._links_gen, self._pages_gen, self._links_seen.get(key)
        if seen is not None and seen.at == at:
            return seen.index
        pages = self.pages
        attachments = self.store.attachments
        can_read = self.policy.can_read
        if seen is None:
            visible = {p: page for p, page in pages.items() if can_read(actor, p)}
        else:  # a page's visibility follows from its path: only the paths new since are asked
            known, shown = seen.paths, seen.index.pages
            visible = {p: page for p, page in pages.items()
                       if p in shown or (p not in known and can_read(actor, p))}
        if seen is not None and seen.attachments is attachments:
            files = seen.files
        else:
            files = [f for f in attachments if can_read(actor, f)]
        # Everything visible (every page and every attachment file): the wiki's own index. Else
        # one over the visible pages and files only (the full index is never built for it: a
        # one-shot agent command pays for one index), brought up to date from the one before as
        # the operator's is.
        if len(visible) == len(pages) and len(files) == len(attachments):
            index = self.links
        else:
            from curator.engine.corpus.links import LinkIndex

            with gc_paused():  # as for the full index: many small objects, none cyclic
                index = LinkIndex(visible, files) if seen is None else seen.index.updated(visible, files)
        with self._lock:
            if gen == self._links_gen:
                self._links_seen[key] = _Seen(at, index, set(pages), attachments, files)
        return index

    def built_links(self, actor: Actor = OPERATOR) -> LinkIndex | None:
        """The link index :meth:`links_for` ``(actor)`` would return, if it is built already."""
        reload = getattr(self.policy, "reload", None)
        if reload is not None:  # an edited .scope.toml drops the indexes built under the old one
            reload()
        # Never waits for a build in progress on another thread (the station resolves a big
        # wiki's links in the background while the first page is shown from an index around it).
        # A small change is applied here (a few milliseconds); a larger one is left to links_for.
        if not self._lock.acquire(blocking=False):
            return None
        try:
            gen = self._pages_gen
            if not actor.is_operator:
                seen = self._links_seen.get((actor.kind, actor.department, id(self.policy)))
                return seen.index if seen is not None and seen.at == gen else None
            index = self._links
            if index is not None and self._links_at != gen:
                with gc_paused():
                    index = index.try_update(self.pages, self.store.attachments, limit=BUILT_UPDATE_MAX)
                if index is None:
                    return None
                self._links, self._links_at = index, gen
            return index
        finally:
            self._lock.release()

    def links_around(self, path: str, actor: Actor = OPERATOR) -> LinkIndex:
        """A link index whose outgoing links and backlinks of ``path`` are exactly those of
        :meth:`links_for` ``(actor)`` (other pages' entries may be missing), and whose ``pages``
        hold every page those links name: the one already built when there is one, else one over
        the pages that can matter to that page only, so a one-shot ``neighbors`` does not resolve
        every link of the wiki, nor (while the pages are not decoded) decode every cached page.
        Those pages come from the cache's name tables whenever they answer exactly, decoded pages
        or not: looking the names up is ~15 ms at 32,000 pages, scanning every decoded page's
        links for them ~200 ms (the first page of a warm open in the station waits for it).
        Visibility as for :meth:`links_for`: built over the pages ``actor`` may see.
        """
        built = self.built_links(actor)
        if built is not None:
            return built
        store = self.store
        if store.partial_reads:
            around = self._around_from_store(path, actor)
            if around is not None:
                return around
        from curator.engine.corpus.links import local_index

        pages = self.pages
        if actor.is_operator:
            index = local_index(pages, path, store.attachments)
        else:
            pages = {p: page for p, page in pages.items() if self.policy.can_read(actor, p)}
            index = local_index(pages, path, self._visible_files(actor))
        index.pages = pages
        return index

    def links_out(self, path: str) -> set[str]:
        """The pages ``path``'s links resolve to (itself left out), as the operator's link index
        resolves them: from the cache's name tables, over the page and the pages its links could
        name only, not the pages linking to it (what :meth:`_around_from_store` adds for
        backlinks), when they answer exactly; else from :meth:`links_around`. What a changed
        page's outgoing links are (the dedup follow's inbound counts) without the link index."""
        from curator.engine.corpus.links import local_index, odd_key

        store = self.store
        page = store.page(path) if store.partial_reads else None
        keys = {link.key for link in page.links} if page is not None else set()
        if page is not None and not any(odd_key(k) for k in keys):  # (``[[a/..]]``: the pages around it)
            sub = dict(store.pages_named(keys | {k.rpartition("/")[2] for k in keys}))
            sub[path] = page
            index = local_index(sub, path, store.attachments, {p: [] for p in sub})
        elif store.has(path):
            index = self.links_around(path)
        else:
            return set()
        return {e.target for e in index.outgoing.get(path, ()) if e.target and e.target != path}

    def _visible_files(self, actor: Actor) -> list[str]:
        return [f for f in self.store.attachments if self.visible(actor, f)]

    def _around_from_store(self, path: str, actor: Actor) -> LinkIndex | None:
        """:meth:`links_around` from the cache's name tables: the page, the pages with a link that
        could reach it, and the pages that can take part in resolving any of those links (see
        :func:`~curator.engine.corpus.links.local_index`), as ``actor`` sees them; None for a page with a link
        :func:`~curator.engine.corpus.links.local_index` cannot decide locally (``[[a/..]]``)."""
        from curator.engine.corpus.links import links_reaching, local_index, odd_key

        store = self.store
        page = store.page(path)
        if page is None:
            return None
        names = {n for n in (link_key(page.title), *(link_key(a) for a in page.aliases)) if n}
        lasts = {page.slug, path_key(path).rpartition("/")[2]}
        sub = {p: other for p, other in store.pages_linking(lasts | names).items()
               if self.visible(actor, p)}
        keys = {link.key for link in page.links}
        reaching = {source: links_reaching(other.links, lasts, names) for source, other in sub.items() if source != path}
        for found in reaching.values():
            keys.update(k.key for k in found)
        if any(odd_key(k) for k in keys):
            return None
        wanted = keys | {k.rpartition("/")[2] for k in keys}
        sub.update((p, other) for p, other in store.pages_named(wanted).items() if self.visible(actor, p))
        sub[path] = page
        index = local_index(sub, path, self._visible_files(actor), reaching)
        index.pages = sub
        return index

    def visible(self, actor: Actor, path: str) -> bool:
        return actor.is_operator or self.policy.can_read(actor, path)

    def check_write(self, actor: Actor, path: str) -> Decision:
        """May ``actor`` create, change, move or delete ``path`` (re-reads an edited policy)?"""
        if actor.is_operator:
            return Decision(True)
        # The wiki's own configuration is the operator's under any policy (even an open one).
        protected = protected_decision(actor, path)
        if protected is not None:
            return protected
        return self.policy.check_write(actor, path)

    def can_write(self, actor: Actor, path: str) -> bool:
        return self.check_write(actor, path).allowed

    def visible_pages(self, actor: Actor = OPERATOR) -> list[Page]:
        """Pages ``actor`` may see, sorted by path."""
        return [self.pages[p] for p in sorted(self.pages) if self.visible(actor, p)]

    def find(self, ref: str, actor: Actor = OPERATOR) -> Page:
        """A page by relative path (with or without ``.md``), slug, title or alias.

        Pages the actor may not see are reported exactly like pages that do not exist.
        """
        store = self.store
        cleaned = ref.strip().replace(os.sep, "/")
        if os.path.isabs(cleaned):
            try:
                cleaned = Path(cleaned).resolve().relative_to(self.root).as_posix()
            except ValueError:
                cleaned = ""
        cleaned = cleaned.removeprefix("./")
        page = store.page(cleaned) or store.page(cleaned + ".md")
        if page is not None and not self.visible(actor, page.path):
            page = None  # resolved below among the pages the actor sees, as if it did not exist
        if page is None and cleaned:
            index = self._resolver(cleaned, actor)
            hit = index.resolve(cleaned)
            if hit.path is not None:
                page = index.pages[hit.path]
        if page is None or not self.visible(actor, page.path):
            raise PageNotFound(self._not_found_message(ref, actor))
        return page

    def _resolver(self, ref: str, actor: Actor) -> LinkIndex:
        """A link index that resolves ``ref`` from the root as :meth:`links_for` ``(actor)`` does:
        that one when it is built or the pages are decoded, else one over the pages the cache's
        name tables say can take part (a one-shot ``neighbors SLUG`` decodes a few records)."""
        built = self.built_links(actor)
        if built is not None:
            return built
        from curator.engine.corpus.links import LinkIndex, odd_key

        key = link_key(ref)
        store = self.store
        if store.decoded or not store.partial_reads or odd_key(key):
            return self.links_for(actor)
        pages = {p: page for p, page in store.pages_named({key, key.rpartition("/")[2]}).items()
                 if self.visible(actor, p)}
        return LinkIndex(pages, self._visible_files(actor))

    def _not_found_message(self, ref: str, actor: Actor) -> str:
        scored = sorted(
            ((slug_sim(ref, p.slug), p.path) for p in self.pages.values() if self.visible(actor, p.path)),
            reverse=True,
        )[:3]
        close = [path for score, path in scored if score >= 0.4]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"no page {ref!r} in {self.root.name}{hint}"

    def read_text(self, path: str) -> str:
        """The page's full text as stored (BOM removed, invalid bytes replaced)."""
        from curator.engine.corpus.page import decode

        return decode((self.root / path).read_bytes()).text

    def close(self) -> None:
        # A search refresh or a background build may still run on another thread: stop the
        # build and wait for it to let go of the database before closing the connection.
        self.search.stop_building()
        with self.search.lock:
            self.store.close()
