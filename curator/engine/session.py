"""What one process keeps for one wiki besides its pages: the one owner of per-wiki services.

A :class:`~curator.engine.wiki.Wiki` creates its :class:`WikiSession` on first use
(``wiki.session``) and every module reaches the wiki's services through it, never through a
table of its own keyed by the wiki:

* ``git``: the wiki's :class:`~.git.Git` (its tree cache lives as long as the wiki);
* ``journal`` and ``journal_seen`` (how far this process has read it), ``lock`` (the exclusive
  write lock), ``pending`` (the pending record of an interrupted action) and ``active`` (which
  thread is inside an action): the action machinery's state (:mod:`.actions`);
* ``route_cache``: append's routing index of slugs (:mod:`.append`);
* ``dedup``: the duplicate-detection index, built on first use (:func:`.dedup.index_for`);
  ``dedup_worker``: the station's, in a worker process of its own (:func:`.dedup_worker.worker_for`);
* ``graphs`` and ``suggesters``: the link graphs built per actor (:func:`.graph.graph_for`) and
  link repair's name index (:func:`.linkrepair.suggester_for`) for the current link indexes,
  dropped with them whenever pages or the policy change;
* ``watcher``: the file watcher of a long-lived process, when one runs (:meth:`start_watching`).

Services are created lazily and under :attr:`services_lock`, so two threads never build two of
one kind (two write locks for one wiki in one process would not exclude each other).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from curator.engine.corpus.watcher import PageWatcher, top_folders
from curator.engine.repo.git import Git
from curator.engine.repo.journal import Journal
from curator.engine.repo.lock import WikiLock

if TYPE_CHECKING:
    from curator.engine.corpus.links import LinkIndex
    from curator.engine.dedup.index import DedupIndex
    from curator.engine.dedup.worker import DedupWorker
    from curator.engine.graph.link_graph import LinkGraph
    from curator.engine.policy.actor import Actor
    from curator.engine.review.link_suggest import Suggester
    from curator.engine.write.append import RouteCache

#: The pending record of an interrupted action, under ``.curator/`` (see :mod:`.actions`).
PENDING_NAME = "pending.jsonl"


class WikiSession:
    """The per-process services of one wiki root (see the module docstring)."""

    def __init__(self, root: Path, state_dir: Path) -> None:
        self.root = root
        self.git = Git(root)
        self.journal = Journal(state_dir)
        self.lock = WikiLock(state_dir)
        self.pending = state_dir / PENDING_NAME
        #: Journal bytes this process has accounted for (actions catch up past it).
        self.journal_seen = self.journal.size()
        #: ``active.on`` is set while this thread runs an action on the wiki.
        self.active = threading.local()
        self.services_lock = threading.RLock()
        self._route_cache: RouteCache | None = None
        self.dedup: DedupIndex | None = None
        self.dedup_worker: DedupWorker | None = None
        #: (actor, policy id, with attachments) -> (the link index it was built from, the graph)
        self.graphs: dict[tuple[Actor, int, bool], tuple[LinkIndex, LinkGraph]] = {}
        #: id(the page names of a link index, ``LinkIndex.names``) -> (those names, link repair's
        #: suggester over its pages): kept while a change leaves every page's names as they were
        self.suggesters: dict[int, tuple[object, Suggester]] = {}
        self.watcher: PageWatcher | None = None

    @property
    def route_cache(self) -> RouteCache:
        with self.services_lock:
            if self._route_cache is None:
                from curator.engine.write.append import RouteCache

                self._route_cache = RouteCache()
            return self._route_cache

    def drop_graphs(self, suggesters: bool = True) -> None:
        """Forget what was built from the link indexes (gone: pages or the policy changed), and
        unless ``suggesters`` is False the suggesters (built from the pages' names only: a change
        of pages keeps those whose names are current, see :func:`.linkrepair.suggester_for`)."""
        with self.services_lock:
            self.graphs.clear()
            if suggesters:
                self.suggesters.clear()

    # --- the file watcher ---------------------------------------------------------------
    def start_watching(self) -> PageWatcher | None:
        """Start the wiki's file watcher (once); None when it cannot run (then callers fall back
        to the (mtime, size) sweep). The namespaces on disk now are watched from the start."""
        with self.services_lock:
            if self.watcher is None:
                watcher = PageWatcher(self.root)
                if watcher.start(top_folders(self.root)):
                    self.watcher = watcher
            return self.watcher

    def stop_watching(self) -> None:
        with self.services_lock:
            watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()
