"""The station's view of the wikis it has open (one wiki, or every wiki of a home).

This is the ``_qt`` adapter around the engine: it opens wikis off the GUI thread, relays the
engine's plain-Python ``changed`` events to the GUI thread as Qt signals, watches the folders for
edits made by agents or editors, and runs every action through the wiki's single writer queue.
Views never touch files or git themselves; they go through here.
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from curator.engine.corpus.store import ChangeSet, gc_paused
from curator.engine.corpus.summaries import Listed, Summaries
from curator.engine.policy.scope import namespace_of
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionResult
from curator.models.pages import PageRow
from curator.text import plural
from curator.views.tasks import WriterQueue, run_task

log = logging.getLogger(__name__)


def _followed_inbound(wiki: Wiki) -> tuple[bytes, dict[str, int]] | None:
    """Every page's inbound link count now, and the state it is of, followed from the duplicate
    scan's basis and the pages changed since (:func:`~curator.engine.dedup.index.followed_inbound`):
    what the link index would count, without building it (None: build it)."""
    from curator.engine.dedup import index as dedup_index

    return dedup_index.followed_inbound(wiki)


def discover_wikis(path: Path) -> list[tuple[str, Path]]:
    """(label, root) of each wiki under ``path``: every wiki of a home (docs/design.md §2), or the one wiki."""
    from curator.engine.corpus.home import Home, is_home

    path = path.expanduser().resolve()
    return Home(path).wikis() if is_home(path) else [(path.name, path)]


@dataclass(slots=True)
class Choices:
    """What one wiki offers the browser's filters (its namespaces and tags, with how many pages
    each), counted at the load and followed change by change: counted again from every page's
    summary, a change waited 2.4 s for them at 300,000 pages before its rows were shown."""

    #: every page's tags (folded by case, distinct; equal tuples shared: most pages repeat a few
    #: tag sets), by path: what a page counted when it changes or goes (15 MB at 300,000 pages)
    tags_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    tag_pages: Counter[str] = field(default_factory=Counter)
    #: each folded tag as first spelled
    spelled: dict[str, str] = field(default_factory=dict)
    namespace_pages: Counter[str] = field(default_factory=Counter)
    _shared: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)

    def add(self, page: Listed) -> None:
        path = page.path
        if path in self.tags_of:
            self.remove(path)
        self.namespace_pages[page.namespace] += 1
        folded = {t.casefold(): t for t in page.tags}
        for fold, tag in folded.items():
            self.spelled.setdefault(fold, tag)
        self.tag_pages.update(folded.keys())
        tags = tuple(folded)
        self.tags_of[path] = self._shared.setdefault(tags, tags)

    def remove(self, path: str) -> None:
        """Take out the page at ``path`` as it was counted (nothing if it was not)."""
        tags = self.tags_of.pop(path, None)
        if tags is None:
            return
        namespace = namespace_of(path)
        self.namespace_pages[namespace] -= 1
        if self.namespace_pages[namespace] <= 0:
            del self.namespace_pages[namespace]
        for fold in tags:
            self.tag_pages[fold] -= 1
            if self.tag_pages[fold] <= 0:
                del self.tag_pages[fold], self.spelled[fold]


@dataclass(slots=True)
class WikiHandle:
    index: int
    label: str
    root: Path
    wiki: Wiki | None = None
    writer: WriterQueue = field(default_factory=WriterQueue)
    dirty: bool = False
    refreshing: bool = False
    #: the files the watcher saw change since the last refresh (relative paths), and whether the
    #: next refresh walks every folder instead of looking at those alone (see _refresh_dirty)
    touched: set[str] = field(default_factory=set)
    walk: bool = True
    #: when the last refresh that walked every folder started (time.monotonic())
    walked_at: float = 0.0
    #: the link index the inbound counts were last counted from, and those counts by path (what
    #: a change's counts are counted against: only the targets whose links moved are counted again);
    #: no index while the counts are the ones kept with the page cache, current at the load
    counted: tuple[Any, dict[str, int]] = (None, {})
    #: the inbound counts are held without the link index: kept with the page cache and current
    #: at the load, or followed from the duplicate scan's basis (see _load_all_pages); a change
    #: counts them again in the background (_recount)
    counted_kept: bool = False
    #: a background task is counting the inbound counts a change moved (_recount), and whether a
    #: change came since it read the pages (it counts once more)
    recounting: bool = False
    recount_due: bool = False
    #: the store's state read before the counts were counted (they are of that state or a later
    #: one), and the state the counts were last kept at (see _keep_counts)
    counted_at: bytes | None = None
    kept_at: bytes | None = None
    #: how many times ``counted`` was counted (what a recount's answer is checked against on the
    #: GUI thread: see _on_recounted)
    counted_times: int = 0
    #: the page list the load showed, until it is kept with the page cache (_keep_page_lists)
    summaries: Summaries | None = None
    #: what the wiki offers the browser's filters, counted at the load, followed by each change
    choices: Choices | None = None


@dataclass(slots=True)
class Snapshot:
    """What the browser needs after a load or a change, computed off the GUI thread."""

    rows: list[PageRow]
    #: every page's inbound link count (pages missing have none); of an incremental snapshot,
    #: only the counts that changed (a page no longer linked to: 0)
    inbound: dict[tuple[int, str], int]
    removed: list[tuple[int, str]] = field(default_factory=list)
    full: bool = True
    #: of ``rows`` (an incremental snapshot): the pages that are new
    added: list[tuple[int, str]] = field(default_factory=list)
    elapsed: float = 0.0
    #: the rows' inbound counts are the ones the last open kept (maybe of older pages), until
    #: ``inbound_ready`` brings them as counted now
    kept_inbound: bool = False
    #: every row's inbound count is as the links count now: resolved in the load, or kept with
    #: the page cache when no page changed since (nothing to resolve after the load)
    linked: bool = False
    namespaces: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    #: pages per tag over every wiki (tags folded by case, shown in their first spelling)
    tag_counts: dict[str, int] = field(default_factory=dict)
    #: what :meth:`Workspace.load`'s ``prepare`` made of the rows, off the GUI thread (the first
    #: page the window shows, ready to display)
    prepared: Any = None


#: Above this many pages the first load shows the pages before their links are resolved (every
#: link of the wiki, ~1.5 s at 32,000 pages): the browser's inbound counts follow from a
#: background task (``inbound_ready``), then the full-text index is built.
LINK_LATER_ABOVE = 3000

#: How much lower the CPU priority of the worker processes of a background build is (the
#: full-text index after a load): on a two-core machine their parsing took the cores the GUI
#: thread needed, and the window stalled for a few hundred milliseconds at a time.
BACKGROUND_NICENESS = 10

#: Progress units per wiki while the workspace loads.
PROGRESS_STEPS = 1000
#: The share of a wiki's steps the walk of its files takes (the stats of every page: 0.4-0.9 s at
#: 32,000 pages), and the pages a first open (nothing cached, so no count to expect) moves
#: against: found / (found + WALK_GUESS), a bar that moves and never fills before the walk ends.
WALK_SHARE = 0.1
WALK_GUESS = 10_000
#: A change the watcher saw is refreshed from the files it named alone (a walk of every folder
#: took 1.2 s at 300,000 pages, after each of an agent's appends); every folder is walked again
#: at most this often while such refreshes run (seconds), for what no event named (a watch the
#: system's limit refused, events lost), as F5 walks them at once.
WALK_EVERY = 60.0
#: The watcher's events that change nothing (a file opened, or closed unwritten): every page the
#: station read (to show it, to index it) refreshed the wiki.
READS = frozenset({"opened", "closed_no_write"})


class Cancelled(Exception):
    pass


class Workspace(QObject):
    loaded = Signal(object)  # Snapshot of every wiki
    pages_changed = Signal(object)  # Snapshot of the changed rows (full=False)
    failed = Signal(str)  # a readable message
    progress = Signal(int, int, str)  # done, total, what
    search_built = Signal(int)  # the wiki whose full-text index was just built in the background
    #: Inbound link counts of every page, when a big workspace resolved its links after showing
    inbound_ready = Signal(object)
    #: (wiki index, ActionResult) after every engine action run through :meth:`run`: views refresh
    #: from its ``changed`` paths and ``commit`` instead of reloading on every change
    action_done = Signal(int, object)
    #: After a load, once the window is usable (:meth:`start_background`): views whose content
    #: is not what the window opens on read it then, not while the page list is being filled
    background_started = Signal()

    def __init__(self, root: Path, watch: bool = True) -> None:
        super().__init__()
        self.root = root.expanduser().resolve()
        self.handles = [WikiHandle(i, label, r) for i, (label, r) in enumerate(discover_wikis(self.root))]
        self.is_home = len(self.handles) > 1 or self.handles[0].root != self.root
        self.ready = False
        self._watch = watch
        self._observer: Any = None
        self._cancel = threading.Event()
        self._presort: Callable[[list[PageRow]], list[PageRow]] | None = None
        self._prepare: Callable[[Snapshot], Any] | None = None
        #: Whether the background work after a load (resolving a big workspace's links, building
        #: the full-text indexes) waits for :meth:`start_background`: the window calls it once
        #: it is usable, so that work never competes with showing the first page.
        self.defer_background = False
        self._background_started = False
        self._linked = False
        self._closed = False
        self._recount_lock = threading.Lock()  # (a change starts one recount of the links at a time)
        self._touch_lock = threading.Lock()  # (the watcher's thread adds what it saw, the GUI thread takes it)
        self._timer = QTimer(self)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self._refresh_dirty)
        #: One thread for the reads of content that is not on screen (a hidden tab's, as the
        #: window opens): on the shared pool, the history's read (2 s at 100,000 pages) and the
        #: links took both its threads while the landing view's figures waited behind them.
        self._off_screen = QThreadPool(self)
        self._off_screen.setMaxThreadCount(1)

    # --- loading ----------------------------------------------------------------------
    def load(self, presort: Callable[[list[PageRow]], list[PageRow]] | None = None,
             prepare: Callable[[Snapshot], Any] | None = None) -> None:
        """Open every wiki and read its pages in the background; emits ``loaded``.

        ``presort`` puts the rows in the browser's order off the GUI thread; ``prepare`` makes
        what the window shows first from the snapshot, still off the GUI thread (its result is the
        snapshot's ``prepared``).
        """
        self._cancel.clear()
        self._presort = presort
        self._prepare = prepare
        self._background_started = False
        run_task(self._load_all, self._on_loaded, self._on_failed)

    def cancel(self) -> None:
        self._cancel.set()

    def _load_all(self) -> Snapshot:
        # Loading creates ~1M small objects. With the cyclic GC on, every 25% of growth triggers
        # a full collection that walks all of them while holding the GIL, which froze the GUI
        # thread for 150-300 ms at a time at 30,000 pages. Pause it while loading, then freeze the
        # survivors into the permanent generation so later collections skip them.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._load_all_pages()
        finally:
            # frozen before the collector resumes: the allocations counted while it was paused
            # would otherwise start a collection over all of them at once
            gc.freeze()
            if gc_was_enabled:
                gc.enable()

    @property
    def _link_later(self) -> bool:
        """Whether the links are resolved after the pages are shown (see :data:`LINK_LATER_ABOVE`)."""
        return sum(h.wiki.store.count() if h.wiki is not None else 0 for h in self.handles) > LINK_LATER_ABOVE

    def _load_all_pages(self) -> Snapshot:
        start = time.perf_counter()
        rows: list[PageRow] = []
        inbound: dict[tuple[int, str], int] = {}
        kept_inbound = False
        total = len(self.handles)
        # A determinate bar: each wiki is STEPS units, mostly parsing (page by page on a cold
        # open), then decoding the cache and resolving links; Cancel is honoured between pages.
        steps = PROGRESS_STEPS
        for n, handle in enumerate(self.handles):
            if self._cancel.is_set():
                raise Cancelled
            base = n * steps
            self.progress.emit(base, total * steps, f"Opening {handle.label}…")
            wiki = handle.wiki or Wiki(handle.root)
            handle.wiki = wiki

            def walking(found: int, expected: int, base: int = base, label: str = handle.label) -> None:
                if self._cancel.is_set():
                    raise Cancelled
                share = min(found / expected, 1.0) if expected else found / (found + WALK_GUESS)
                self.progress.emit(base + int(steps * WALK_SHARE * share), total * steps,
                                   f"Listing {label}: {plural(found, 'page')}…")

            def parsed(done: int, count: int, base: int = base, label: str = handle.label) -> None:
                if self._cancel.is_set():
                    raise Cancelled
                self.progress.emit(base + int(steps * (WALK_SHARE + (0.75 - WALK_SHARE) * done / max(count, 1))),
                                   total * steps, f"Reading {label}: {done:,} of {plural(count, 'page')}…")

            # (a first open keeps the pages it parsed: the page list is made of them, not decoded again)
            wiki.store.refresh(progress=parsed, walking=walking, keep_pages=True)
            if self._cancel.is_set():
                raise Cancelled
            self.progress.emit(base + int(steps * 0.75), total * steps, f"Loading {handle.label}…")
            # the pages as the list shows them: a big wiki's kept summaries, not every page decoded
            # (saved again, when they were not current, once the window is usable: _keep_page_lists)
            summaries = handle.summaries = wiki.summaries()
            listed = [PageRow(handle.index, handle.label, s) for s in summaries.pages]
            if self._link_later:
                # The counts kept with the page cache when no page changed since: the links are not
                # resolved at all (every page decoded and the link index built and held, 216 MB at
                # 32,000 pages, 1.5 GB at 300,000, for the counts the station shows already); it is
                # built when a change or a view asks for it. Else the counts the last open kept,
                # shown until the links are resolved again (seconds after the window is usable:
                # inbound_ready), not an empty column meanwhile.
                current = wiki.current_inbound()
                if current is not None:
                    handle.counted, handle.counted_at = (None, current), wiki.store.state
                    handle.kept_at = handle.counted_at  # (kept already)
                else:
                    # pages changed since the counts were kept (agents wrote while the station was
                    # closed): followed from the duplicate scan's basis when every link resolves as
                    # there, a few milliseconds a changed page (kept at the close: _keep_counts)
                    followed = _followed_inbound(wiki)
                    if followed is not None:
                        handle.counted_at, counts = followed
                        handle.counted = (None, counts)
                        current = counts
                handle.counted_kept = current is not None
                kept = current if current is not None else wiki.kept_inbound()
                if kept:
                    kept_inbound = kept_inbound or current is None
                    for row in listed:
                        row.inbound = kept.get(row.page.path, 0)
            rows.extend(listed)
            if self._cancel.is_set():
                raise Cancelled
        if not self._link_later:
            for n, handle in enumerate(self.handles):
                self.progress.emit(n * steps + int(steps * 0.85), total * steps, f"Linking {handle.label}…")
                inbound.update(self._inbound(handle))
                if self._cancel.is_set():
                    raise Cancelled
        self.progress.emit(total * steps, total * steps, "")
        if inbound:  # (resolved in the load: else the rows keep the counts kept before, or none)
            for row in rows:
                row.inbound = inbound.get(row.key, 0)
        if self._presort is not None:
            rows = self._presort(rows)
        linked = not self._link_later or all(h.counted_kept for h in self.handles)
        snapshot = Snapshot(rows, inbound, kept_inbound=kept_inbound, linked=linked)
        self._add_choices(snapshot, rows)
        if self._prepare is not None:
            snapshot.prepared = self._prepare(snapshot)
        snapshot.elapsed = time.perf_counter() - start
        return snapshot

    def _add_choices(self, snapshot: Snapshot, rows: Iterable[PageRow] | None = None) -> None:
        """The namespaces and tags the browser's filters offer, over every wiki: each wiki's
        counted from ``rows`` (a load's, every page of every wiki), else as each wiki's
        :class:`Choices` holds them (followed by each change: :meth:`_follow_choices`)."""
        if rows is not None:
            counted = {handle.index: Choices() for handle in self.handles}
            for row in rows:
                counted[row.wiki].add(row.page)
            for handle in self.handles:
                handle.choices = counted[handle.index]
        namespaces: set[str] = set()
        spelled: dict[str, str] = {}
        counts: dict[str, int] = {}
        for handle in self.handles:
            choices = handle.choices
            if choices is None:
                continue
            namespaces.update(choices.namespace_pages)
            for fold, n in choices.tag_pages.items():
                spelled.setdefault(fold, choices.spelled[fold])
                counts[fold] = counts.get(fold, 0) + n
        snapshot.namespaces = sorted(namespaces)
        snapshot.tags = sorted(spelled.values(), key=str.casefold)
        snapshot.tag_counts = {spelled[k]: n for k, n in counts.items()}

    @staticmethod
    def _follow_choices(handle: WikiHandle, changes: ChangeSet, pages: Iterable[Listed]) -> None:
        """The wiki's filter choices after ``changes``: the changed pages' as they were taken out,
        ``pages`` (the added and modified pages as they are now) put in."""
        choices = handle.choices
        if choices is None:
            return
        for path in [*changes.modified, *changes.removed]:
            choices.remove(path)
        for page in pages:
            choices.add(page)

    @staticmethod
    def _inbound(handle: WikiHandle) -> dict[tuple[int, str], int]:
        """Every page's inbound link count (pages no page links to are missing)."""
        assert handle.wiki is not None
        state = handle.wiki.store.state
        links = handle.wiki.links
        counts = {path: len({e.source for e in edges}) for path, edges in links.incoming.items()}
        handle.counted, handle.counted_at = (links, counts), state
        handle.counted_times += 1
        return {(handle.index, path): n for path, n in counts.items()}

    @staticmethod
    def _inbound_changes(handle: WikiHandle) -> tuple[dict[tuple[int, str], int], dict[str, int]]:
        """The inbound counts that differ from those last counted (every page's the first time),
        and every page's count. The link index is updated, not rebuilt, after a change, and keeps
        each target's list of incoming links that the change did not touch (the same list): only
        the targets whose list is another one are counted again, not 32,000 of them."""
        assert handle.wiki is not None
        state = handle.wiki.store.state
        links = handle.wiki.links
        before, counts = handle.counted
        incoming = links.incoming
        if before is links:  # (no page changed since: the counts hold for this state too)
            handle.counted_at = state
            return {}, counts
        if before is None:  # (first counted, or counted before the index: the counts kept at the load)
            fresh = {path: len({e.source for e in edges}) for path, edges in incoming.items()}
            changed = {path: n for path, n in fresh.items() if counts.get(path, 0) != n}
            changed.update((path, 0) for path in counts.keys() - fresh.keys() if counts[path])
        else:
            old = before.incoming
            changed = {path: len({e.source for e in edges}) for path, edges in incoming.items()
                       if old.get(path) is not edges}
            changed.update(dict.fromkeys(old.keys() - incoming.keys(), 0))
            changed = {path: n for path, n in changed.items() if counts.get(path, 0) != n}
            fresh = {**counts, **changed}
            for path, n in changed.items():
                if not n:
                    del fresh[path]
        handle.counted, handle.counted_at = (links, fresh), state
        handle.counted_times += 1
        return {(handle.index, path): n for path, n in changed.items()}, fresh

    def _on_loaded(self, snapshot: Snapshot) -> None:
        if self._closed:  # closed while loading: start nothing
            return
        self.ready = True
        for handle in self.handles:
            assert handle.wiki is not None
            handle.wiki.changed.connect(functools.partial(self._on_engine_change, handle))
        if self._watch:
            self._start_watching()
            # An edit made after the load's walk (made ahead at the station's start, see
            # app._walk_ahead) and before the watch began raised no event: one refresh once the
            # watcher runs (the timer's next turn) finds it, as F5 would.
            self.mark_dirty()
        self._timer.start()
        self._linked = snapshot.linked
        self.loaded.emit(snapshot)
        if not self.defer_background:
            self.start_background()

    @property
    def settled(self) -> bool:
        """Whether the views may compute their content: the load is over and the work that
        follows it has started (:meth:`start_background`, once the window is usable)."""
        return self.ready and self._background_started

    def start_background(self) -> None:
        """Start the work that follows a load (once per load): a big workspace's links resolved
        (``inbound_ready``), then every missing full-text index built (``search_built``)."""
        if self._background_started or not self.ready or self._closed:
            return
        self._background_started = True
        self.background_started.emit()
        if self._linked:
            run_task(self._keep_page_lists, None, self._keep_failed)
            self._build_search_indexes()
            return
        # one background task after the other: the GUI thread shares the interpreter with them
        run_task(self._link_all, self._on_linked, self._search_build_failed)

    def _link_all(self) -> dict[tuple[int, str], int]:
        with gc_paused():
            inbound: dict[tuple[int, str], int] = {}
            for handle in self.handles:
                if self._closed:
                    break
                if handle.counted_kept:  # (current at the load: see _load_all_pages)
                    inbound.update(((handle.index, path), n) for path, n in handle.counted[1].items())
                    continue
                inbound.update(self._inbound(handle))
                self._keep_counts(handle)  # (for the next open's page list, see _load_all_pages)
            # as after the load: later collections skip the ~10^6 link objects (a full one over
            # them holds the interpreter lock, and so the GUI thread, for a second)
            gc.freeze()
        # (kept after the links, not beside them: 0.7 s of the interpreter at 100,000 pages that
        # Health's first figures and the links would otherwise share)
        self._keep_page_lists()
        return inbound

    def _keep_counts(self, handle: WikiHandle) -> None:
        """Keep the inbound counts with the page cache, as of the state they were counted at
        (refused when pages changed since): what the next open shows, and takes as the counts
        while no page changed since (_load_all_pages)."""
        wiki, state = handle.wiki, handle.counted_at
        if wiki is None or state is None or state == handle.kept_at:
            return  # (never counted, or kept already)
        try:
            if wiki.keep_inbound(handle.counted[1], state):
                handle.kept_at = state
        except Exception as exc:  # (not the links' failure: the next open counts them again)
            self._keep_failed(exc)

    def _keep_page_lists(self, closing: bool = False) -> None:
        """Keep each wiki's page list as the load showed it, for the next open (see _load_all_pages);
        ``closing``: by :meth:`close`, once no task runs any more."""
        for handle in self.handles:
            if self._closed and not closing:
                return
            summaries, handle.summaries = handle.summaries, None
            if handle.wiki is not None and summaries is not None and not summaries.saved:
                try:
                    handle.wiki.keep_summaries(summaries)
                except Exception as exc:  # (not the links' failure: the next open decodes what it must)
                    self._keep_failed(exc)

    @staticmethod
    def _keep_failed(exc: BaseException) -> None:
        # (the next open decodes what changed since the page list kept before, or every page,
        # and shows no inbound counts until the links are resolved)
        log.warning("the page list or its inbound counts were not kept with the page cache: %s", exc)

    def _on_linked(self, inbound: dict[tuple[int, str], int]) -> None:
        if self._closed:
            return
        self.inbound_ready.emit(inbound)
        self._build_search_indexes()

    def _build_search_indexes(self) -> None:
        """Build the full-text index of every wiki that has none, in the background.

        The index is built by the first search (see curator.engine.search.index); at 32,000 pages that
        takes seconds, so the station does it right after the pages are shown instead of making
        the first page wait for its unlinked mentions.
        """
        for handle in self.handles:
            wiki = handle.wiki
            if wiki is not None and not wiki.search.active():
                run_task(functools.partial(wiki.search.ensure_built, niceness=BACKGROUND_NICENESS),
                         functools.partial(self._search_done, handle.index), self._search_build_failed)

    def _search_done(self, index: int, _count: object) -> None:
        self.search_built.emit(index)

    def _search_build_failed(self, exc: BaseException) -> None:
        from curator.engine.search.index import BuildStopped

        if not isinstance(exc, BuildStopped):  # stopped: the station is closing
            self.failed.emit(f"Search index: {exc}")

    def _on_failed(self, exc: BaseException) -> None:
        if isinstance(exc, Cancelled):
            self.failed.emit("Loading cancelled.")
        else:
            self.failed.emit(str(exc) or type(exc).__name__)

    # --- changes ----------------------------------------------------------------------
    def _on_engine_change(self, handle: WikiHandle, changes: ChangeSet) -> None:
        """Runs on whatever thread changed the wiki: compute the rows there, post to the GUI."""
        wiki = handle.wiki
        assert wiki is not None
        rows = []
        for path in [*changes.added, *changes.modified]:
            page = wiki.page(path)  # (the page alone: every page is not decoded for a change)
            if page is not None:
                rows.append(PageRow(handle.index, handle.label, page))
        inbound: dict[tuple[int, str], int] = {}
        recount = handle.counted_kept
        if recount:
            # counts held without the link index: the rows keep them, and the counts this change
            # moved follow once counted again in the background (_recount; not on this thread:
            # the change's rows would wait for them)
            counts = handle.counted[1]
        else:
            inbound, counts = self._inbound_changes(handle)
        for row in rows:
            row.inbound = counts.get(row.page.path, 0)
        removed = [(handle.index, p) for p in changes.removed]
        snapshot = Snapshot(rows, inbound, removed, full=False,
                            added=[(handle.index, p) for p in changes.added])
        self._follow_choices(handle, changes, [row.page for row in rows])
        self._add_choices(snapshot)
        self.pages_changed.emit(snapshot)
        if recount:  # (after the rows are sent: their counts as held must not come after the new ones)
            self._recount_later(handle)

    def _recount_later(self, handle: WikiHandle) -> None:
        with self._recount_lock:
            handle.recount_due = True
            if handle.recounting or self._closed:
                return  # (the recount running counts once more: recount_due)
            handle.recounting = True
        run_task(functools.partial(self._recount, handle), self._on_recounted, self._recount_failed)

    def _recount(self, handle: WikiHandle) -> tuple[list[int], dict[tuple[int, str], int]]:
        """Count the inbound counts again after a change to counts held without the link index
        (:attr:`WikiHandle.counted_kept`), until no change came meanwhile: followed from the
        duplicate scan's basis while they can be (:meth:`_follow_counts`), and the station stays
        without the link index; else the links resolved again (the index built and held: 216 MB
        at 32,000 pages, 1.5 GB at 300,000) and the counts that moved counted from it
        (:meth:`_inbound_changes`). Every wiki's counts for the list, and how many times each was
        counted when they were read."""
        try:
            while True:
                with self._recount_lock:
                    if not handle.recount_due or self._closed:
                        handle.recounting = False
                        break
                    handle.recount_due = False
                if handle.counted_kept and self._follow_counts(handle):
                    continue
                handle.counted_kept = False  # (a change from here on counts its own, the index built)
                with gc_paused():
                    self._inbound_changes(handle)
                gc.freeze()  # (as after the load: later collections skip the link objects)
        except BaseException:
            with self._recount_lock:
                handle.recounting = False
            raise
        times = [h.counted_times for h in self.handles]
        return times, self._every_count()

    @staticmethod
    def _follow_counts(handle: WikiHandle) -> bool:
        """Every page's inbound count followed from the duplicate scan's basis (:func:`_followed_inbound`);
        whether they could be."""
        assert handle.wiki is not None
        followed = _followed_inbound(handle.wiki)
        if followed is None:
            return False
        handle.counted, handle.counted_at = (None, followed[1]), followed[0]
        handle.counted_times += 1
        return True

    def _every_count(self) -> dict[tuple[int, str], int]:
        return {(h.index, path): n for h in self.handles for path, n in h.counted[1].items()}

    def _on_recounted(self, found: tuple[list[int], dict[tuple[int, str], int]]) -> None:
        """The recount's counts to the list, made on its thread (0.1 s at 300,000 pages); read
        again here only when a later change was counted meanwhile (its counts, sent before these,
        would be replaced by the recount's)."""
        if self._closed:
            return
        times, inbound = found
        if times != [h.counted_times for h in self.handles]:
            inbound = self._every_count()
        self.inbound_ready.emit(inbound)

    @staticmethod
    def _recount_failed(exc: BaseException) -> None:
        # (the rows keep the counts they have; the next change counts them again)
        log.warning("the inbound link counts were not counted again after a change: %s", exc)

    def mark_dirty(self, index: int | None = None) -> None:
        """Refresh (at the timer's next turn) walking every folder (F5, after a load)."""
        for handle in self.handles:
            if index is None or handle.index == index:
                handle.walk = True
                handle.dirty = True

    def refresh_now(self) -> None:
        self.mark_dirty()
        self._refresh_dirty()

    def _touched(self, handle: WikiHandle, path: str, folder: bool = False) -> None:
        """The watcher saw ``path`` (absolute) change: a folder's change walks every folder."""
        with self._touch_lock:
            if folder:
                handle.walk = True
            else:
                try:
                    handle.touched.add(Path(path).relative_to(handle.root).as_posix())
                except ValueError:  # (not under the root: never expected; walked to be sure)
                    handle.walk = True
            handle.dirty = True

    def _refresh_paths(self, handle: WikiHandle) -> list[str] | None:
        """The files the next refresh of ``handle`` looks at: those the watcher saw change, or
        None, every folder walked (asked for, or due: WALK_EVERY; nothing named; or a file that
        is not a page came, which may be a file links point at)."""
        with self._touch_lock:
            touched, handle.touched = handle.touched, set()
            walk, handle.walk = handle.walk, False
        if walk or not touched or time.monotonic() - handle.walked_at > WALK_EVERY:
            return None
        paths = []
        for path in sorted(touched):
            if any(part.startswith(".") for part in path.split("/")):
                continue  # (hidden: a write's temp file, an editor's swap file; never a page)
            if path.endswith(".md"):
                paths.append(path)
            elif (handle.root / path).exists():
                return None  # (another file, there now: maybe one a link names)
        return paths

    def _refresh_dirty(self) -> None:
        if self._closed:
            return
        for handle in self.handles:
            if handle.dirty and not handle.refreshing and handle.wiki is not None:
                handle.dirty = False
                paths = self._refresh_paths(handle)
                if paths == []:
                    continue  # (only files that are no pages, gone again)
                handle.refreshing = True
                if paths is None:
                    handle.walked_at = time.monotonic()
                wiki = handle.wiki

                def done(_: object, h: WikiHandle = handle) -> None:
                    h.refreshing = False

                def failed(exc: BaseException, h: WikiHandle = handle) -> None:
                    h.refreshing = False
                    self.failed.emit(f"Refreshing {h.label} failed: {exc}")

                # through the writer queue: a refresh never interleaves with an action
                handle.writer.submit(functools.partial(wiki.refresh, paths), done, failed)

    def _start_watching(self) -> None:
        """Watch each wiki for edits by agents and editors (inotify through watchdog).

        The root is watched on its own and each top-level folder recursively, except ``.git`` and
        ``.curator``: a recursive watch on the root would also add a watch for every one of git's
        object folders, and every commit would wake the station up.
        """
        try:
            from watchdog.events import DirCreatedEvent, FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency; F5 still works
            return
        observer = Observer()
        skip = {".git", ".curator"}
        touched = self._touched

        watched: set[Path] = set()

        def watch(handler: FileSystemEventHandler, folder: Path, recursive: bool) -> None:
            if folder in watched:  # a folder created, removed and created again
                return
            watched.add(folder)
            try:
                observer.schedule(handler, str(folder), recursive=recursive)
            except OSError as exc:  # e.g. the inotify watch limit: F5 still refreshes
                log.warning("cannot watch %s: %s", folder, exc)

        class Handler(FileSystemEventHandler):
            def __init__(self, handle: WikiHandle) -> None:
                self.handle = handle

            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in READS:
                    return  # (a file read, by this station too: showing a page, building the search index)
                if event.is_directory and event.event_type == "modified":
                    return  # (a folder's entries changed: each file's own event follows)
                path = Path(str(event.src_path))
                if path.name in skip or any(p in skip for p in path.parts):
                    return
                if isinstance(event, DirCreatedEvent) and path.parent == self.handle.root:
                    watch(self, path, True)  # a new top-level folder
                # (picked up by the GUI-thread timer within 300 ms: _refresh_dirty)
                touched(self.handle, str(path), event.is_directory)
                dest = getattr(event, "dest_path", "")
                if dest:  # (a file moved: where it went changed too)
                    touched(self.handle, str(dest), event.is_directory)

        for handle in self.handles:
            handler = Handler(handle)
            watch(handler, handle.root, False)
            try:
                folders = [p for p in handle.root.iterdir() if p.is_dir() and p.name not in skip]
            except OSError:
                folders = []
            for folder in folders:
                watch(handler, folder, True)
        observer.daemon = True
        observer.start()
        self._observer = observer

    # --- actions ----------------------------------------------------------------------
    def wiki(self, index: int) -> Wiki:
        wiki = self.handles[index].wiki
        if wiki is None:
            raise RuntimeError("the wiki is still loading")
        return wiki

    def run(self, index: int, func: Callable[[Wiki], Any], callback: Callable[[Any], None] | None = None,
            on_error: Callable[[BaseException], None] | None = None) -> None:
        """Run an engine action on wiki ``index`` in its writer queue; result on the GUI thread."""
        if self._closed:
            raise RuntimeError("the station is closing")
        wiki = self.wiki(index)

        def finished(result: Any) -> None:
            if callback is not None:
                callback(result)
            if isinstance(result, ActionResult):
                self.action_done.emit(index, result)

        self.handles[index].writer.submit(lambda: func(wiki), finished,
                                          on_error or (lambda exc: self.failed.emit(str(exc))))

    def read(self, index: int, func: Callable[[Wiki], Any], callback: Callable[[Any], None],
             on_error: Callable[[BaseException], None] | None = None, *, off_screen: bool = False) -> None:
        """Run a read-only engine call off the GUI thread (none once the workspace is closed).
        ``off_screen``: for content not on screen, one such read at a time, never holding a
        thread of the pool what is on screen is computed in."""
        if self._closed:
            return
        wiki = self.wiki(index)
        run_task(lambda: func(wiki), callback, on_error or (lambda exc: self.failed.emit(str(exc))),
                 pool=self._off_screen if off_screen else None)

    def close(self) -> None:
        """Stop everything that runs in the background, then close the wikis (idempotent).

        Order matters: no timer or watcher may start new work, every queued or running task (the
        writer queues *and* the reads on the global pool) must have finished before a wiki's
        database is closed under it; closing it while a read still ran, or leaving pool threads
        running Python while the interpreter exits, is what crashed ``--screenshot`` (SIGSEGV).
        """
        if self._closed:
            return
        self._closed = True
        self.ready = False
        self._cancel.set()
        self._timer.stop()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
        from curator.engine.dedup.worker import stop_scans

        for handle in self.handles:
            if handle.wiki is not None:
                handle.wiki.search.stop_building()  # a background build must not hold the exit
                stop_scans(handle.wiki)  # nor a dedup scan (Health builds the index after its counts)
        for handle in self.handles:
            handle.writer.wait(10_000)
        QThreadPool.globalInstance().waitForDone(10_000)
        self._off_screen.waitForDone(10_000)
        # The page lists the load showed that no background task kept yet (a station closed
        # before its links were resolved, seconds after it opened, or a --screenshot): kept now,
        # else every next open decodes every page again (1.8 s at 100,000 pages) until one stays
        # open long enough.
        self._keep_page_lists(closing=True)
        for handle in self.handles:
            # the counts as the station followed the changes since the load: the next open takes
            # them while no page changes meanwhile, and resolves no link (counted for the state now
            # first: a refresh that settled a page moved the state, and no count)
            # (counts held without the link index are followed once more when a change came
            # after they were counted: a few milliseconds a changed page)
            try:
                if handle.wiki is not None and handle.counted[0] is not None:
                    self._inbound_changes(handle)
                elif handle.wiki is not None and handle.counted_kept and handle.counted_at != handle.wiki.store.state:
                    self._follow_counts(handle)
            except Exception as exc:  # (a closing station: the next open counts them again)
                self._keep_failed(exc)
            self._keep_counts(handle)
            if handle.wiki is not None:
                handle.wiki.close()
