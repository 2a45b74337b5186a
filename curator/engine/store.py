"""The persistent page cache in ``.curator/`` (SQLite), refreshed incrementally by (mtime, size).

Opening an unchanged wiki re-parses nothing: the walker's stat results are compared with the
cached rows and only new or changed files are read. Extensions (the search index) register a
:class:`StoreExtension` and are kept in step inside the same transaction, so the page cache and
everything built on it never disagree.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .page import Page, parse_page
from .walker import PageFile, is_page_path, walk

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
SCHEMA_VERSION = 5  # bump when Page or the parse rules change: the cache is rebuilt


@dataclass(slots=True)
class ChangeSet:
    """Which pages a refresh (or an action) added, modified or removed."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed)

    @property
    def paths(self) -> list[str]:
        return [*self.added, *self.modified, *self.removed]

    def merge(self, other: ChangeSet) -> None:
        self.added += other.added
        self.modified += other.modified
        self.removed += other.removed


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while pages are built in bulk.

    Building 10,000 pages makes hundreds of thousands of small containers, none of them cyclic;
    the collector kept re-scanning the growing heap and doubled a warm open. Reference counting
    still frees everything; the collector resumes (and catches up) right after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file is damaged or not a database (as opposed to busy, read-only)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code:
        return code in (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


class StoreExtension(Protocol):
    """Something kept in step with the page cache (e.g. the full-text index)."""

    def setup(self, conn: sqlite3.Connection) -> bool:
        """Create its tables; return True when it is empty and needs every page fed to it."""
        ...

    def upsert(self, conn: sqlite3.Connection, page: Page, body: str) -> None: ...

    def delete(self, conn: sqlite3.Connection, path: str) -> None: ...


class PageStore:
    """Cached pages of one wiki root. Thread-safe; one SQLite connection per store."""

    def __init__(self, root: Path, state_dir: Path) -> None:
        self.root = root
        self._real_root = os.path.realpath(root)
        self.state_dir = state_dir
        self._lock = threading.RLock()
        self._pages: dict[str, Page] = {}
        self._loaded = False
        self._extensions: list[StoreExtension] = []
        self._needs_full_feed = False
        self.conn = self._connect()

    # --- connection -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        path = self.state_dir / "cache.sqlite"
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            return self._open(path)
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                return self._open(":memory:")
        except OSError:
            # A read-only wiki (a mounted shared wiki, say) still works, just without persistence.
            return self._open(":memory:")
        # A damaged cache (not a database, truncated) holds nothing that cannot be rebuilt.
        for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
            (self.state_dir / name).unlink(missing_ok=True)
        try:
            return self._open(path)
        except (OSError, sqlite3.Error):
            return self._open(":memory:")

    @staticmethod
    def _open(target: Path | str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, check_same_thread=False, timeout=10, isolation_level=None)
        try:
            if target != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                conn.execute("DROP TABLE IF EXISTS pages")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pages (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,"
                " record TEXT)"
            )
        except BaseException:
            conn.close()
            raise
        return conn

    def add_extension(self, ext: StoreExtension) -> None:
        with self._lock:
            self._extensions.append(ext)
            if ext.setup(self.conn):
                self._needs_full_feed = True

    # --- reading ----------------------------------------------------------------------
    @property
    def pages(self) -> dict[str, Page]:
        """All pages by root-relative path (refreshing once on first use)."""
        if not self._loaded:
            self.refresh()
        return self._pages

    def _load_cached(self) -> dict[str, tuple[int, int, str]]:
        rows = self.conn.execute("SELECT path, mtime_ns, size, record FROM pages")
        return {p: (m, s, r) for p, m, s, r in rows}

    def refresh(self, paths: Iterable[str] | None = None) -> ChangeSet:
        """Bring the cache up to date with the disk; return what changed.

        With ``paths`` only those files are checked (an action knows what it touched); without,
        the whole tree is walked and compared by (mtime, size).
        """
        with self._lock, _gc_paused():
            if paths is not None and self._loaded and not self._needs_full_feed:
                return self._refresh_paths(list(paths))
            return self._refresh_all()

    def _refresh_all(self) -> ChangeSet:
        changes = ChangeSet()
        full_feed = self._needs_full_feed
        if not self._loaded:
            cached = self._load_cached()
            current: dict[str, Page] = {}
            for path, (_m, _s, rec) in cached.items():
                try:
                    current[path] = Page.from_row(json.loads(rec))
                except (ValueError, TypeError, KeyError):
                    continue  # an unreadable row is simply re-parsed below
        else:
            current = self._pages
        on_disk = {f.path: f for f in walk(self.root)}
        stale: list[PageFile] = []
        for path, f in on_disk.items():
            page = current.get(path)
            if page is None:
                stale.append(f)
                changes.added.append(path)
            elif page.mtime_ns != f.mtime_ns or page.size != f.size or full_feed:
                stale.append(f)
                if not full_feed:
                    changes.modified.append(path)
        removed = [p for p in current if p not in on_disk]
        changes.removed.extend(removed)
        if stale or removed:
            self._write(stale, removed, current)
        self._pages = current
        self._loaded = True
        self._needs_full_feed = False
        return changes

    def _refresh_paths(self, paths: list[str]) -> ChangeSet:
        changes = ChangeSet()
        stale: list[PageFile] = []
        removed: list[str] = []
        for path in dict.fromkeys(paths):
            st = self._page_stat(path)
            if st is None:
                if path in self._pages:
                    removed.append(path)
                    changes.removed.append(path)
                continue
            old = self._pages.get(path)
            if old is None:
                changes.added.append(path)
            elif old.mtime_ns == st.st_mtime_ns and old.size == st.st_size:
                continue
            else:
                changes.modified.append(path)
            stale.append(PageFile(path, st.st_mtime_ns, st.st_size))
        if stale or removed:
            self._write(stale, removed, self._pages)
        return changes

    def _page_stat(self, path: str) -> os.stat_result | None:
        """The stat of a page file at ``path``, or None when the walker would not list it there:
        missing, not a regular file, in an excluded folder, a symlink, or reached through a
        symlinked folder (which may lead out of the root)."""
        if not is_page_path(path):
            return None
        full = os.path.join(self._real_root, path)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or os.path.realpath(full) != os.path.normpath(full):
            return None
        return st

    def _read(self, path: str) -> bytes | None:
        """A page's bytes; None when it vanished. The last component is never followed if it
        became a symlink since the walk (O_NOFOLLOW where the platform has it)."""
        try:
            fd = os.open(os.path.join(self._real_root, path), _READ_FLAGS)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            try:
                return fh.read()
            except OSError:
                return None

    def _write(self, stale: list[PageFile], removed: list[str], pages: dict[str, Page]) -> None:
        parsed: list[tuple[Page, str]] = []
        for f in stale:
            data = self._read(f.path)
            if data is None:
                continue
            page, body = parse_page(f.path, data, f.mtime_ns)
            page.size = len(data)
            parsed.append((page, body))
        conn = self.conn
        encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        conn.execute("BEGIN IMMEDIATE")
        try:
            for path in removed:
                conn.execute("DELETE FROM pages WHERE path=?", (path,))
                for ext in self._extensions:
                    ext.delete(conn, path)
                pages.pop(path, None)
            conn.executemany(
                "INSERT OR REPLACE INTO pages VALUES (?,?,?,?)",
                [(page.path, page.mtime_ns, page.size, encode(page.to_row())) for page, _ in parsed],
            )
            for page, body in parsed:
                for ext in self._extensions:
                    ext.upsert(conn, page, body)
                pages[page.path] = page
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self.conn.close()
