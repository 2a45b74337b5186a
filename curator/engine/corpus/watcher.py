"""A file watcher for one wiki: which pages changed on disk since the last look (watchdog).

Owned by the wiki's :class:`~curator.engine.session.WikiSession` (``wiki.session.watcher``, set
by :meth:`~curator.engine.session.WikiSession.start_watching`); a long-lived process (the MCP
server) drains it before answering, so an edit written in place is seen without stat'ing every
page (docs/design.md §7: never answer from a state older than the last change it was told about).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curator.engine.corpus.walker import EXCLUDED_DIRS, is_attachment_path, is_page_path

log = logging.getLogger(__name__)


class PageWatcher:
    """Collects the pages changed on disk (watchdog: inotify, FSEvents, ...) for the next call.

    The event threads only add paths to a set; the tool call that follows drains it and refreshes
    exactly those pages, so an edit written in place is seen without stat'ing every page. Watched:
    the root's own entries and, recursively, each namespace folder that holds pages -- never the
    whole root, whose ``.git`` and ``.curator`` change on every commit: their events kept the event
    thread busy enough to slow each append by several milliseconds.
    """

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._dirty: set[str] = set()
        self._attachments = False  # an attachment file came or went
        self._lock = threading.Lock()
        self._observer: Any = None
        self._handler: Any = None
        self._filter: list[Any] = []
        self._watched: set[str] = set()

    def start(self, namespaces: Iterable[str]) -> bool:
        """Start watching; False (and the stat sweep stays in charge) when it cannot."""
        try:
            from watchdog.events import (
                FileClosedEvent,
                FileCreatedEvent,
                FileDeletedEvent,
                FileMovedEvent,
                FileSystemEvent,
                FileSystemEventHandler,
            )
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency
            return False
        watcher = self
        # Closed-after-writing, not every write() nor any read: reading pages (which this server
        # does all the time) must not come back as events, and one save is one event.
        self._filter = [FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent]

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                # (a close after writing changes no attachment file: only its coming or going does)
                listed = not isinstance(event, FileClosedEvent)
                watcher.note(event.src_path, listed)
                if event.dest_path:
                    watcher.note(event.dest_path, listed)

        observer = Observer()
        observer.daemon = True
        self._handler = Handler()
        try:
            observer.schedule(self._handler, self.root, recursive=False, event_filter=self._filter)
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit: the periodic sweep still works
            log.warning("not watching %s (%s); in-place edits are found by the stat sweep", self.root, exc)
            return False
        self._observer = observer
        self.watch(namespaces)
        return True

    def watch(self, namespaces: Iterable[str]) -> None:
        """Also watch these namespace folders (recursively), if not yet watched."""
        if self._observer is None:
            return
        for ns in namespaces:
            if not ns or ns in self._watched or ns in EXCLUDED_DIRS:
                continue
            self._watched.add(ns)
            try:
                self._observer.schedule(self._handler, os.path.join(self.root, ns), recursive=True,
                                        event_filter=self._filter)
            except OSError as exc:  # gone again, or no watches left: the sweep covers it
                log.warning("not watching %s: %s", ns, exc)

    def note(self, path: str | bytes, listed: bool = True) -> None:
        """Note the file at ``path`` (absolute) as changed: a page, or (``listed``: it came or
        went) an attachment file, which links resolve to (new folders are found by the
        folder-mtime check)."""
        path = os.fsdecode(path)
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if path.lower().endswith(".md"):
            if is_page_path(rel):
                with self._lock:
                    self._dirty.add(rel)
        elif listed and is_attachment_path(rel):
            with self._lock:
                self._attachments = True

    def drain(self) -> list[str]:
        """The pages changed since the last drain, by path."""
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        return sorted(dirty)

    def drain_attachments(self) -> bool:
        """Whether an attachment file came or went since the last call (the set of attachment
        files is known only from a walk of every folder: see :func:`~curator.engine.corpus.walker.scan`)."""
        with self._lock:
            changed, self._attachments = self._attachments, False
        return changed

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None


def top_folders(root: Path) -> list[str]:
    """The folders directly in ``root`` that may hold pages (excluded folders and symlinks left out)."""
    try:
        with os.scandir(root) as entries:
            return sorted(e.name for e in entries
                          if e.name not in EXCLUDED_DIRS and not e.is_symlink() and e.is_dir())
    except OSError:
        return []


def namespaces(paths: Iterable[str]) -> set[str]:
    return {p.split("/", 1)[0] for p in paths if "/" in p}
