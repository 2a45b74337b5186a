"""What one process keeps for one wiki besides its pages: the one owner of per-wiki services.

A :class:`~curator.engine.wiki.Wiki` creates its :class:`WikiSession` on first use
(``wiki.session``) and every module reaches the wiki's services through it, never through a
table of its own keyed by the wiki:

* ``git``: the wiki's :class:`~curator.engine.repo.git.Git` (its tree cache lives as long as the
  wiki);
* ``journal`` and ``journal_seen`` (how far this process has read it), ``lock`` (the exclusive
  write lock), ``pending`` (the pending record of an interrupted action) and ``active`` (which
  thread is inside an action): the action machinery's state (:mod:`curator.engine.write.actions`);
* ``watcher``: the file watcher of a long-lived process, when one runs (:meth:`start_watching`);
* every other service, registered by the package that owns it under its own class
  (:meth:`service`, :meth:`peek`): append's routing index, the dedup index and the station's
  dedup worker. The session names none of them, so the session (and the :class:`Wiki` above it)
  sits below every package that keeps a service here;
* caches built from the current link indexes (:meth:`link_cache`: the link graphs per reader) or
  from the pages' names only (:meth:`names_cache`: link repair's suggesters), dropped with them
  whenever pages or the policy change (:meth:`drop_link_caches`).

Services are created lazily and under :attr:`services_lock`, so two threads never build two of
one kind (two write locks for one wiki in one process would not exclude each other).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from curator.engine.corpus.watcher import PageWatcher, top_folders
from curator.engine.repo.git import Git
from curator.engine.repo.journal import Journal
from curator.engine.repo.lock import WikiLock

#: The pending record of an interrupted action, under ``.curator/`` (see :mod:`curator.engine.write.actions`).
PENDING_NAME = "pending.jsonl"

S = TypeVar("S")


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
        self._services: dict[type[Any], Any] = {}
        self._link_caches: dict[str, dict[Any, Any]] = {}
        self._names_caches: dict[str, dict[Any, Any]] = {}
        self.watcher: PageWatcher | None = None

    # --- services registered by the packages that own them --------------------------------
    def service(self, kind: type[S], make: Callable[[], S]) -> S:
        """The wiki's one ``kind`` of service, made by ``make`` on first use (under the lock)."""
        with self.services_lock:
            found = self._services.get(kind)
            if found is None:
                found = self._services[kind] = make()
            return found  # (stored under its own class)

    def peek(self, kind: type[S]) -> S | None:
        """The wiki's ``kind`` of service if one was made, without making it."""
        with self.services_lock:
            return self._services.get(kind)

    def link_cache(self, name: str) -> dict[Any, Any]:
        """A cache of what is built from the current link indexes, dropped with them
        (:meth:`drop_link_caches`); ``name`` says whose it is. Read and write it under
        :attr:`services_lock`."""
        with self.services_lock:
            return self._link_caches.setdefault(name, {})

    def names_cache(self, name: str) -> dict[Any, Any]:
        """Like :meth:`link_cache`, for what depends on the pages' names only: kept when a change
        leaves every page's names as they were (``drop_link_caches(names=False)``)."""
        with self.services_lock:
            return self._names_caches.setdefault(name, {})

    def drop_link_caches(self, names: bool = True) -> None:
        """Forget what was built from the link indexes (gone: pages or the policy changed), and
        unless ``names`` is False what was built from the pages' names."""
        with self.services_lock:
            for cache in self._link_caches.values():
                cache.clear()
            if names:
                for cache in self._names_caches.values():
                    cache.clear()

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
