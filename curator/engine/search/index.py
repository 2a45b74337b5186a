"""Full-text search over a wiki: an SQLite FTS5 index kept in step with the page cache (docs/design.md §7).

The index lives in the page cache's database in ``.curator/`` and is a
:class:`~curator.engine.corpus.store.StoreExtension`: every page the cache (re)parses is upserted in the
same transaction, so the index never disagrees with the cache, whether the change came from an
engine action (``wiki.refresh(paths)``) or from a refresh that found an edit made outside.

Ranking: ``score = -bm25 x (0.5 + trust) x source_type factor`` (bm25 column weights: title 4,
body 1, tags/aliases/file name 2); results are sorted by score, then by path. Snippets are about
240 characters of the body around the first match, with matched words marked ``«word»``
(:data:`HIGHLIGHT`; a GUI may render them, agents read them as they are).

API (the CLI, the station and the MCP server all call the same thing)::

    hits = wiki.search.search("payment -draft layer:core", actor, min_trust=0.5, layer=None,
                              limit=10, expand=False)      # -> list[SearchHit]
    [h.to_json() for h in hits]  # {path, title, score, layer, trust, snippet, expanded}
    wiki.search.relevance("payment")                         # {path: score}, no visibility check
    wiki.search.rebuild()                                    # `curator search --rebuild`

Context injection lives in :mod:`curator.engine.read.agent_context` (``build_context``).

Building (issue 17): the index is not built by ``curator index`` or by opening a wiki, so commands
that do not search never wait for it. The first search builds it in bulk: the pages are read and
their text prepared in worker processes (one per core) while this process inserts the rows in
one transaction. After that every engine action and every refresh that re-parses a page feeds it
(:class:`~curator.engine.corpus.store.StoreExtension`), so it stays in step. The FTS table is
contentless (``content=''``): it holds the index, not a second copy of every page (snippets are
cut from the files), which keeps ``.curator/`` smaller than the pages. A contentless table cannot
delete a row without its old text, so a changed page gets a new document id and the old one
becomes a tombstone that no query sees (results join the live ``search_docs``); when tombstones
pass a quarter of the live pages the next search rebuilds the index in bulk.

Freshness (docs/design.md §7): before answering, :meth:`SearchIndex.search` runs
:meth:`SearchIndex.refresh`. A one-shot process (the CLI) checks every page: it stats the folders
that may hold pages and lists again those whose mtime moved (creations, deletions, renames,
editors' atomic saves), and stats every indexed page and compares (mtime, size) with the index
(edits written in place): 32,000 stats, no directory walk and no page-cache decoding, so it stays
far below the naive scan. The command starts that sweep in a child process at its start
(:func:`~curator.engine.corpus.walker.sweep_ahead`), so it runs while the program is imported; the child reads the
index's stamps packed in one value (``search_stamps``) and the documents changed since it was
packed (``search_moved``, which triggers fill at every change of a document, whichever program
makes it): the packed stamps of the other documents and the changed ones' rows are exactly the
index's stamps, so one change costs a row, not a new packing of every stamp. Past
:data:`~curator.engine.corpus.walker.MOVED_MAX` changed documents the triggers drop the packed
value, and the next sweep's save packs every stamp again. A long-lived process
with a file watcher (the MCP server) sets :attr:`SearchIndex.sweep_interval` so the per-page
sweep runs only every so often, the watcher
reporting edits through ``wiki.refresh(paths)`` in between. A full walk runs only when nothing is
known yet. With a sweep, a folder whose mtime moved is compared with the index as two sets of names
(its listing and the index's), only the names the index does not hold stat'ed; the sweep compares
the others' stamps. A one-shot search answers its query while the sweep runs only while the engine
wrote nothing since the index's last refresh (its action journal as that refresh noted it): after
an append the refresh changes the index, and the query runs once, after it.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import sqlite3
import stat
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import Page, decode, parse_layer
from curator.engine.corpus.store import (
    BULK_CACHE_KIB,
    DEFAULT_CACHE_KIB,
    RACY_NS,
    ChangeSet,
    checkpoint,
    drop_tables,
    read_and_parse,
    reclaim,
)
from curator.engine.corpus.walker import (
    EXCLUDED_DIRS,
    MOVED_MAX,
    PACKED_PART,
    PageFile,
    changed_in_index,
    json_line,
    pack_stamps,
    sweep_pending,
    take_sweep,
    utf8_name,
    walk,
)
from curator.engine.errors import CuratorError, UsageError
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.repo.journal import JOURNAL_NAME
from curator.engine.search.query import Query, fold, fold_char, index_text, parse_query

if TYPE_CHECKING:
    from pathlib import Path

    from curator.engine.corpus.links import LinkIndex
    from curator.engine.corpus.store import PageStore


class IndexedWiki(Protocol):
    """What the index uses of the wiki it serves (the :class:`~curator.engine.wiki.Wiki`, which
    sits above search and holds the index as ``wiki.search``)."""

    @property
    def root(self) -> Path: ...

    @property
    def store(self) -> PageStore: ...

    @property
    def policy(self) -> object:
        """The read policy (its identity and ``generation`` key the hidden-page cache)."""
        ...

    @property
    def pages(self) -> dict[str, Page]: ...

    def refresh(self, paths: Iterable[str] | None = None) -> ChangeSet: ...

    def visible(self, actor: Actor, path: str) -> bool: ...

    def links_for(self, actor: Actor = ...) -> LinkIndex: ...


SEARCH_SCHEMA = "3"  # bump when the indexed columns or text rules change: the index is rebuilt
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
#: bm25 weights of the indexed columns: title, body, extra (tags, aliases, file name).
WEIGHTS = (4.0, 1.0, 2.0)
#: Seconds between two (mtime, size) sweeps of every page triggered by searches: 0, every search
#: checks every page (docs/design.md §7); a process with a file watcher raises it (see the module doc).
SWEEP_INTERVAL = 0.0
#: Seconds a recorded sweep time stays good enough for the next sweeps that change nothing (they
#: write nothing): a sweep interval (the MCP server's is minutes) then counts from up to this early.
SWEEP_RECORD_EVERY = 1.0
#: The key of ``search_meta`` that holds the engine's action journal as the index's last refresh saw it.
_JOURNAL_SEEN = "journal_seen"
#: Tombstones (ids of replaced rows) per live page above which the next search rebuilds.
MAX_DEAD_SHARE = 0.25
#: Markers around matched words in snippets (the GUI renders them; agents read them as is).
HIGHLIGHT = ("«", "»")
SNIPPET_CHARS = 240
MAX_INDEXED_CHARS = 2_000_000  # a page's body beyond this is not indexed (keeps builds bounded)
_SNIPPET_SCAN = 50_000  # snippets look for a match in this much of the body
#: Rows a search first asks SQLite for, best first (see SearchIndex._rows): every hit of the
#: largest limit with room for the rows a filter or a hidden page leaves out.
FIRST_ROWS = 2 * MAX_LIMIT


class BuildStopped(CuratorError):
    """A bulk build was abandoned by :meth:`SearchIndex.stop_building`."""


@dataclass(slots=True)
class SearchHit:
    """One page a search found (or added by ``expand``)."""

    path: str
    title: str
    score: float
    layer: str
    trust: float
    snippet: str
    expanded: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "score": float(f"{self.score:.6g}"),
                "layer": self.layer, "trust": self.trust, "snippet": self.snippet,
                "expanded": self.expanded}


@dataclass(slots=True)
class _Row:
    """A matching page's indexed metadata and its score."""

    path: str
    title: str
    layer: str
    trust: float
    tags: list[str]
    score: float


class SearchIndex:
    """The FTS5 index of one wiki. ``wiki.search`` is the instance every caller uses."""

    def __init__(self, wiki: IndexedWiki) -> None:
        self.wiki = wiki
        self._lock = threading.RLock()
        self._built = False  # read from the database by setup()
        self._db: sqlite3.Connection | None = None  # the store's connection, given to setup()
        self._stop = threading.Event()
        self._generation = 0  # bumped whenever a document is added, retired or the index cleared
        self._hidden_cache: dict[tuple[Any, ...], dict[int, str]] = {}
        self._size_cache: dict[int, int] = {}  # doc id -> tokens (ids are never reused but by a clear)
        self._size_version = -1
        #: Seconds between full sweeps triggered by searches; None: never (a file watcher feeds
        #: ``wiki.refresh(paths)`` instead).
        self.sweep_interval: float | None = SWEEP_INTERVAL

    @property
    def _conn(self) -> sqlite3.Connection:
        """The store's connection, as :meth:`setup` was given it (the store's own tables and
        this index's share one database)."""
        if self._db is None:
            raise RuntimeError("the search index is not attached to a page store")
        return self._db

    # --- StoreExtension ------------------------------------------------------------------
    def setup(self, conn: sqlite3.Connection) -> None:
        self._db = conn
        conn.execute("CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT)")
        row = conn.execute("SELECT value FROM search_meta WHERE key='schema'").fetchone()
        if row is None or row[0] != SEARCH_SCHEMA:
            dropped = drop_tables(conn, ("search_fts", "search_docs", "search_dirs", "search_stamps",
                                         "search_moved"))
            conn.execute("DELETE FROM search_meta")
            conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('schema', ?)", (SEARCH_SCHEMA,))
            if dropped:
                reclaim(conn)  # (the old index's pages: often most of the file)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS search_docs (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT UNIQUE"
            " NOT NULL, dir TEXT, title TEXT, layer TEXT, trust REAL, factor REAL, tags TEXT,"
            " mtime_ns INTEGER, size INTEGER)"
        )
        conn.execute("CREATE INDEX IF NOT EXISTS search_docs_dir ON search_docs (dir)")
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(title, body, extra, content='',"
            " tokenize='unicode61 remove_diacritics 2')"
        )
        conn.execute("CREATE TABLE IF NOT EXISTS search_dirs (dir TEXT PRIMARY KEY, mtime_ns INTEGER)")
        # Every document's stamp in one value (walker.pack_stamps), for the one-shot sweep to read
        # in one go, and the documents changed since it was packed: any change to the documents
        # lists its paths (in the same transaction, whichever program made it); past MOVED_MAX
        # the packed value is deleted, and the next sweep's save packs it again (see _save_dirs).
        conn.execute("CREATE TABLE IF NOT EXISTS search_stamps (part TEXT PRIMARY KEY, data BLOB)")
        conn.execute("CREATE TABLE IF NOT EXISTS search_moved (path TEXT PRIMARY KEY) WITHOUT ROWID")
        _stamp_triggers(conn)
        self._built = self._meta(conn, "built") == "1"

    def _journal_moved(self) -> bool:
        """Whether the engine wrote since this index's last refresh, in any process: its action
        journal is not as that refresh noted it (:meth:`_note_journal`)."""
        with self.wiki.store.connection():
            seen = self._meta(self._conn, _JOURNAL_SEEN)
        return seen is None or seen != self._journal_stamp()

    def _journal_stamp(self) -> str:
        """The engine's action journal as it stands (size, mtime): every write any process makes
        through the engine (an agent's append, the station's edits) adds a line to it."""
        try:
            st = os.stat(self.wiki.store.state_dir / JOURNAL_NAME)
        except OSError:
            return "none"
        return f"{st.st_size}:{st.st_mtime_ns}"

    def _note_journal(self, conn: sqlite3.Connection) -> None:
        """Note the engine's action journal as this refresh leaves the index (in its write
        transaction): a one-shot search answers its query beside the sweep while it stands so."""
        conn.execute("INSERT OR REPLACE INTO search_meta VALUES (?, ?)", (_JOURNAL_SEEN, self._journal_stamp()))

    @staticmethod
    def _meta(conn: sqlite3.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM search_meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def active(self) -> bool:
        """Fed page by page once built; before that the first search builds it in bulk."""
        return self._built

    def upsert(self, conn: sqlite3.Connection, page: Page, body: str) -> None:
        if self._indexed_as_is(conn, page):
            return
        self._insert(conn, _doc_row(page, body), None)

    @staticmethod
    def _indexed_as_is(conn: sqlite3.Connection, page: Page) -> bool:
        """Whether the bulk build already indexed ``page``'s bytes: its document came from that
        build, with the page's (mtime, size), and that mtime was safely older than the build's
        walk (git's racy rule: a later write, even of the same size, changes the stamp).

        A cold first search builds this index from the files without the page cache; the next
        process fills the page cache, and each page it parses is fed here. Without this check every
        page would be indexed a second time (32,000 tombstones, the index twice its size)."""
        row = conn.execute("SELECT d.id, d.mtime_ns, d.size, m.value FROM search_docs d, search_meta m"
                           " WHERE d.path = ? AND m.key = 'bulk'", (page.path,)).fetchone()
        if row is None:
            return False
        doc_id, mtime_ns, size, bulk = (int(row[0]), int(row[1]), int(row[2]), str(row[3]))
        last_id, walked_ns = (int(v) for v in bulk.split())
        return (doc_id <= last_id and mtime_ns == page.mtime_ns and size == page.size
                and mtime_ns < walked_ns - RACY_NS)

    def _insert(self, conn: sqlite3.Connection, row: tuple[Any, ...], doc_id: int | None) -> None:
        path, values, texts = row[0], row[1:9], row[9:]
        self._generation += 1
        if self._tombstone(conn, path):
            doc_id = None
        cur = conn.execute(
            "INSERT INTO search_docs (id, path, dir, title, layer, trust, factor, tags, mtime_ns, size)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)", (doc_id, path, *values))
        conn.execute("INSERT INTO search_fts (rowid, title, body, extra) VALUES (?,?,?,?)",
                     (cur.lastrowid, *texts))

    def _tombstone(self, conn: sqlite3.Connection, path: str) -> bool:
        """Retire ``path``'s document (its FTS row stays, unseen); True when there was one."""
        cur = conn.execute("DELETE FROM search_docs WHERE path=?", (path,))
        self._generation += 1
        if cur.rowcount:
            conn.execute("INSERT INTO search_meta VALUES ('dead', '1') ON CONFLICT(key) DO UPDATE"
                         " SET value = CAST(value AS INTEGER) + 1")
            return True
        return False

    def delete(self, conn: sqlite3.Connection, path: str) -> None:
        self._tombstone(conn, path)

    def _clear(self, conn: sqlite3.Connection) -> None:
        self._generation += 1
        self._size_cache.clear()
        conn.execute("INSERT INTO search_fts (search_fts) VALUES ('delete-all')")
        for table in ("search_docs", "search_dirs"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM search_meta WHERE key IN ('last_sweep', 'dead', 'built', 'bulk')")

    # --- keeping fresh -------------------------------------------------------------------
    def refresh(self, *, full: bool = False) -> ChangeSet:
        """Pick up pages changed outside the engine (see the module doc); build when not built.

        ``full`` runs the (mtime, size) sweep of every page now instead of waiting for its turn.
        """
        with self._lock:
            if not self._built or self._too_many_tombstones():
                self.rebuild()
                return ChangeSet()
            tracked = dict(self._conn.execute("SELECT dir, mtime_ns FROM search_dirs"))
            if not tracked:
                return self._full_scan()
            interval = self.sweep_interval
            if full or (interval is not None and interval <= 0):
                sweep = True
            elif interval is None:
                sweep = False
            else:
                last = self._meta(self._conn, "last_sweep")
                sweep = last is None or time.time() - float(last) >= interval
            # (with a sweep, which compares every indexed page's stamp, a folder whose mtime moved
            # is only listed for the pages in it the index does not hold: stat'ing every entry of
            # it again was 0.4 s of a search after an append to a folder of 262,000 pages)
            candidates, stamps, gone = self._changed_dirs(tracked, stat_pages=not sweep)
            if sweep:
                candidates |= self._changed_pages()
            changes = ChangeSet()
            if candidates:
                changes = self.wiki.refresh(sorted(candidates))
                self._drop_gone(candidates, changes)
            if stamps or gone or (sweep and (candidates or not self._sweep_recorded())):
                self._save_dirs(stamps, gone=gone, swept=sweep)  # (noting the journal too)
            elif self._journal_moved():
                self._save_dirs({})  # (the journal noted, nothing else)
            return changes

    def _sweep_recorded(self) -> bool:
        """Whether the sweep just made that changed nothing needs no write: one was recorded
        (``last_sweep``, which another process with a sweep interval goes by) less than
        :data:`SWEEP_RECORD_EVERY` ago, and the stamps are packed. A write costs a one-shot
        search more than its query: the database's write-ahead log made again, then copied back
        into the database and synced when the process closes it."""
        row = self._conn.execute("SELECT (SELECT value FROM search_meta WHERE key = 'last_sweep'), EXISTS"
                                 " (SELECT 1 FROM search_stamps WHERE part = ?)", (PACKED_PART,)).fetchone()
        try:
            age = time.time() - float(row[0])
        except (TypeError, ValueError):
            return False
        return bool(row[1]) and 0.0 <= age < SWEEP_RECORD_EVERY

    def stop_building(self) -> None:
        """Abandon a bulk build in progress (the station closing): it rolls back, nothing kept."""
        self._stop.set()

    @property
    def lock(self) -> threading.RLock:
        """Held for every refresh and build: :meth:`Wiki.close` waits for it."""
        return self._lock

    def ensure_built(self, niceness: int = 0) -> None:
        """Build the index now if it was never built (every search does this, refresh or not);
        ``niceness``: as :meth:`rebuild`'s."""
        with self._lock:
            if not self._built:
                self.rebuild(niceness)

    def _too_many_tombstones(self) -> bool:
        dead = int(self._meta(self._conn, "dead") or 0)
        if dead < 64:
            return False
        live: int = self._conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
        return dead > MAX_DEAD_SHARE * max(live, 1)

    def _full_scan(self) -> ChangeSet:
        """Walk the whole tree: every folder's mtime, every page's (mtime, size)."""
        stamps = self._scan_tree("")  # folders first: what changes during the walk shows next time
        known = set(self._conn.execute("SELECT path, mtime_ns, size FROM search_docs"))
        files = set(_indexable(walk(self.wiki.root)))  # PageFiles compare equal to the row tuples
        changed = {f.path for f in files - known} | ({p for p, _m, _s in known} - {f.path for f in files})
        changes = self.wiki.refresh(sorted(changed)) if changed else ChangeSet()
        self._save_dirs(stamps, replace=True, swept=True)
        return changes

    def _scan_tree(self, start: str) -> dict[str, int]:
        """mtime of ``start`` and of every folder below it that may hold pages (walker rules)."""
        root = self.wiki.root
        out: dict[str, int] = {}
        stack = [start]
        while stack:
            rel = stack.pop()
            try:
                out[rel] = os.stat(root / rel).st_mtime_ns
                with os.scandir(root / rel) as entries:
                    subdirs = [e.name for e in entries if e.name not in EXCLUDED_DIRS and utf8_name(e.name)
                               and not e.is_symlink() and e.is_dir()]
            except OSError:
                continue
            stack += [f"{rel}/{name}" if rel else name for name in subdirs]
        return out

    def _changed_dirs(self, tracked: dict[str, int], stat_pages: bool = True) -> tuple[set[str], dict[str, int], list[str]]:
        """Pages to re-check in folders whose mtime moved; new folder mtimes; vanished folders.
        ``stat_pages`` false: the pages of such a folder the index holds are not stat'ed (the
        caller sweeps every indexed page's stamp); its new and vanished pages are found
        (:meth:`_new_and_gone`)."""
        root = self.wiki.root
        candidates: set[str] = set()
        stamps: dict[str, int] = {}
        gone: list[str] = []
        for d, mtime in tracked.items():
            try:
                st = os.stat(root / d)
            except OSError:
                gone.append(d)
                candidates.update(self._under(d))
                continue
            now = st.st_mtime_ns
            if now == mtime:
                continue
            stamps[d] = now
            if not stat_pages:
                # Its names and the index's, compared as sets in C (every entry looked at in
                # Python was 0.9 s for a folder of 262,000 pages): only the names the index does
                # not hold are looked at.
                found = self._new_and_gone(d, tracked, stamps)
                if found is not None:
                    candidates |= found
                    continue
                del stamps[d]  # (not listed: look again next time, and re-check what it held)
                candidates.update(self._under(d))
                continue
            # Compare the folder's listing with the index: new, vanished and replaced pages.
            known = {p: (m, sz) for p, m, sz in self._conn.execute(
                "SELECT path, mtime_ns, size FROM search_docs WHERE dir=?", (d,))}
            prefix = f"{d}/" if d else ""
            seen: set[str] = set()
            try:
                with os.scandir(root / d) as it:
                    for entry in it:
                        name = entry.name
                        rel = prefix + name
                        if entry.is_symlink():
                            continue
                        if entry.is_dir():
                            if name not in EXCLUDED_DIRS and rel not in tracked:
                                stamps.update(self._scan_tree(rel))
                                candidates.update(f"{rel}/{f.path}" for f in walk(root / rel))
                        elif name.lower().endswith(".md"):
                            seen.add(rel)
                            try:
                                st = entry.stat(follow_symlinks=False)
                            except OSError:  # vanished while listing: the store will see
                                candidates.add(rel)
                                continue
                            if known.get(rel) != (st.st_mtime_ns, st.st_size):
                                candidates.add(rel)
            except OSError:
                del stamps[d]  # not listed: look again next time, and re-check what it held
                candidates.update(known)
                continue
            candidates.update(p for p in known if p not in seen)
        return candidates, stamps, gone

    def _new_and_gone(self, d: str, tracked: dict[str, int], stamps: dict[str, int]) -> set[str] | None:
        """The pages in folder ``d`` the index does not hold (those in a new sub-folder too, whose
        folders' mtimes go in ``stamps``) and those it holds that are not in it; None: it cannot
        be listed. Only the names the index does not hold are stat'ed (a link, or a file that is
        not a page, is left out as the walk leaves it out)."""
        root, prefix = self.wiki.root, f"{d}/" if d else ""
        try:
            listed = set(os.listdir(root / d))
        except OSError:
            return None
        held = set(map(itemgetter(0), self._conn.execute(
            "SELECT substr(path, ?) FROM search_docs WHERE dir=?", (len(prefix) + 1, d))))
        found = {prefix + name for name in held - listed}
        for name in sorted(listed - held):
            rel = prefix + name
            try:
                mode = os.lstat(root / rel).st_mode
            except OSError:
                continue  # (gone since the listing)
            if stat.S_ISDIR(mode):
                if name not in EXCLUDED_DIRS and rel not in tracked:
                    stamps.update(self._scan_tree(rel))
                    found.update(f"{rel}/{f.path}" for f in walk(root / rel))
            elif stat.S_ISREG(mode) and name.lower().endswith(".md"):
                found.add(rel)
        return found

    def _changed_pages(self) -> set[str]:
        """Indexed pages whose (mtime, size) on disk differs, or that are gone: edits written in
        place (the sweep a one-shot command started ahead, :func:`~curator.engine.corpus.walker.sweep_ahead`, when
        there is one)."""
        ahead = take_sweep(self.wiki.root)
        if ahead is None:
            with self.wiki.store.connection():  # (its reads in one transaction, no store write halfway)
                ahead = changed_in_index(str(self.wiki.root), self._conn)
        return set(ahead)

    def _drop_gone(self, candidates: set[str], changes: ChangeSet) -> None:
        """Retire the indexed ``candidates`` gone from disk that the page cache's refresh did not
        report removed: pages a bulk build indexed from the files before the cache ever saw them
        (without this they were found by every search after their deletion)."""
        removed, root = set(changes.removed), self.wiki.root
        gone = [p for p in sorted(candidates) if p not in removed and not os.path.lexists(root / p)]
        if not gone:
            return
        conn = self._conn
        with self.wiki.store.connection():
            conn.execute("BEGIN IMMEDIATE")
            try:
                for path in gone:
                    self._tombstone(conn, path)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # (SQLite rolls back by itself on a full disk)
                    conn.execute("ROLLBACK")
                raise

    def _save_dirs(self, stamps: dict[str, int], *, gone: Sequence[str] = (), replace: bool = False,
                   swept: bool = False) -> None:
        conn = self._conn
        with self.wiki.store.connection():  # one connection: never interleave with a store transaction
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return  # another process holds the database: the next search looks again
            try:
                if replace:
                    conn.execute("DELETE FROM search_dirs")
                for d in gone:
                    conn.execute("DELETE FROM search_dirs WHERE dir=? OR (dir >= ? AND dir < ?)",
                                 (d, f"{d}/", f"{d}0"))
                conn.executemany("INSERT OR REPLACE INTO search_dirs VALUES (?,?)", stamps.items())
                self._note_journal(conn)
                if swept:
                    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('last_sweep', ?)",
                                 (repr(time.time()),))
                    held = conn.execute("SELECT 1 FROM search_stamps WHERE part = ?", (PACKED_PART,))
                    if held.fetchone() is None:
                        self._pack_stamps(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # (SQLite rolls back by itself on a full disk)
                    conn.execute("ROLLBACK")
                raise

    @staticmethod
    def _pack_stamps(conn: sqlite3.Connection) -> None:
        """Pack every document's stamp again (none was kept, or more than MOVED_MAX documents
        changed since the last packing); none is changed since."""
        try:
            packed = pack_stamps(conn)
        except (TypeError, OverflowError):  # a stamp no 64-bit integer holds: the sweeps read the rows
            return
        conn.execute("DELETE FROM search_stamps")  # (a value of another form, if any)
        conn.execute("DELETE FROM search_moved")
        conn.execute("INSERT INTO search_stamps VALUES (?, ?)", (PACKED_PART, packed))

    def _under(self, d: str) -> list[str]:
        """Indexed pages below folder ``d``."""
        args: tuple[str, ...]
        if not d:
            sql, args = "SELECT path FROM search_docs", ()
        else:
            # '0' is the character after '/': this range is exactly the paths starting with "d/".
            sql, args = "SELECT path FROM search_docs WHERE path >= ? AND path < ?", (f"{d}/", f"{d}0")
        return [p for (p,) in self._conn.execute(sql, args)]

    def rebuild(self, niceness: int = 0) -> int:
        """Build the index from scratch, in bulk (the first search; ``curator search --rebuild``).

        Pages are read and their text prepared in worker processes while this process inserts
        the rows (``niceness`` above 0: at that lower CPU priority, a build in the station's
        background); returns the number of pages indexed.
        """
        with self._lock:
            wiki = self.wiki
            real_root = os.path.realpath(wiki.root)
            walked_ns = time.time_ns()  # before the first stat (see _indexed_as_is)
            stamps = self._scan_tree("")  # folders first: what changes during the walk shows next time
            files = _indexable(walk(wiki.root))
            conn = self._conn
            with wiki.store.connection():
                conn.execute("BEGIN IMMEDIATE")
                try:
                    # The stamps go once, for every document, and their triggers are put back at the
                    # end of the transaction: a trigger firing on each row made FTS5 write that row's
                    # terms out as a segment of its own (at 32,000 pages the inserts took 12.4 s with
                    # them, 6.5 s without); a bigger page cache for the build's pages (5.3 s).
                    _stamp_triggers(conn, drop=True)
                    self._clear(conn)
                    conn.execute("DELETE FROM search_stamps")
                    conn.execute("DELETE FROM search_moved")
                    conn.execute(f"PRAGMA cache_size = {BULK_CACHE_KIB}")
                    from curator.engine.corpus import parallel  # (multiprocessing: only for a bulk build)

                    results = parallel.map_chunks(index_rows, real_root, files, niceness=niceness,
                                                  ahead=2 * parallel.workers())
                    if results is None:
                        results = iter([index_rows(real_root, files)])
                    doc_id = 0
                    for rows in results:
                        if self._stop.is_set():
                            raise BuildStopped("the search index build was stopped")
                        for row in rows:
                            doc_id += 1
                            self._insert(conn, row, doc_id)
                    conn.execute("INSERT INTO search_fts (search_fts) VALUES ('optimize')")
                    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('built', '1')")
                    conn.execute("INSERT OR REPLACE INTO search_meta VALUES ('bulk', ?)", (f"{doc_id} {walked_ns}",))
                    _stamp_triggers(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # (SQLite rolls back by itself on a full disk)
                        conn.execute("ROLLBACK")  # (the triggers with the rest)
                    raise
                finally:
                    conn.execute(f"PRAGMA cache_size = {DEFAULT_CACHE_KIB}")
                self._built = True
            self._save_dirs(stamps, replace=True, swept=True)
            with wiki.store.connection():
                checkpoint(conn)
                count: int = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
                return count

    # --- searching -----------------------------------------------------------------------
    def search(self, query: str | Query, actor: Actor = OPERATOR, *, min_trust: float | None = None,
               layer: str | None = None, limit: int = DEFAULT_LIMIT, expand: bool = False,
               refresh: bool = True) -> list[SearchHit]:
        """Pages matching ``query`` that ``actor`` may see, best first (see the module doc).

        ``limit`` (1..100) bounds the direct hits; ``expand`` adds up to ``limit`` more pages from
        their one-hop neighbourhood (links out, links in, ``related:`` both ways), marked
        ``expanded``, after the hits. Expanded pages are not text matches: their score is 0 and
        they are ordered by the summed score of the hits they neighbour, then by path.
        """
        q = self._prepare(query, layer)
        limit = max(1, min(int(limit), MAX_LIMIT))
        if q.is_empty:
            return []
        rows: list[_Row] | None = None
        if refresh and self._built and sweep_pending(self.wiki.root) and not self._journal_moved():
            # A sweep runs in a child process (a one-shot command's): the query is answered while
            # it stats the pages, and again only when the refresh that takes it changed the index.
            # (Not when the engine wrote since the index's last refresh, an agent's append: the
            # refresh then changes the index, and the query answered first was answered twice,
            # 0.35 s at 300,000 pages.)
            generation = self._generation
            rows = self._matching(q, actor, min_trust, limit)
            if self.refresh() or self._generation != generation:
                rows = None
        elif refresh:
            self.refresh()
        else:
            self.ensure_built()
        if rows is None:
            rows = self._matching(q, actor, min_trust, limit)
        highlight = Highlighter(q)
        hits = [SearchHit(r.path, r.title, r.score, r.layer, r.trust, self._snippet(r.path, highlight))
                for r in rows]
        if expand and hits:
            hits += self._expand(hits, q, actor, min_trust, limit, highlight)
        return hits

    def _matching(self, q: Query, actor: Actor, min_trust: float | None, limit: int) -> list[_Row]:
        """The first ``limit`` rows matching ``q`` that ``actor`` may see, best first."""
        rows: list[_Row] = []
        with self.wiki.store.connection():  # one connection: do not read in the middle of a store write
            hidden = {} if actor.is_operator else self._hidden(actor)
            found = self._rows(q) if not hidden or not q.positive_match() else self._visible_rows(q, hidden)
            for row in found:
                if min_trust is not None and row.trust < min_trust:
                    continue
                if not self.wiki.visible(actor, row.path):
                    continue
                rows.append(row)
                if len(rows) >= limit:
                    break
        return rows

    def relevance(self, query: str | Query, refresh: bool = True, actor: Actor = OPERATOR) -> dict[str, float]:
        """Score of every page matching ``query`` (no visibility check: callers filter), scored
        over the pages ``actor`` may see (as :meth:`search` does)."""
        q = self._prepare(query, None)
        if q.is_empty:
            return {}
        if refresh:
            self.refresh()
        else:
            self.ensure_built()
        with self.wiki.store.connection():
            hidden = {} if actor.is_operator else self._hidden(actor)
            everything = not hidden or not q.positive_match()
            found = self._rows(q, None) if everything else self._visible_rows(q, hidden)
            return {row.path: row.score for row in found}

    def pages_sharing(self, words: Sequence[str], *, limit: int = 12, terms: int = 4,
                      refresh: bool = True) -> list[str]:
        """Pages holding the rarest ``terms`` of ``words``, most relevant first (at most ``limit``).

        The candidates for "which pages say something like this" (the review inbox's similar
        facts): rare terms have short posting lists, so the answer takes milliseconds whatever
        the wiki's size, where an OR of common words would rank half the wiki. Document
        frequencies come from an ``fts5vocab`` view of the index. No visibility check: callers
        filter.
        """
        tokens = list(dict.fromkeys(t for w in words for t in fold(index_text(w)).split() if t))
        if not tokens:
            return []
        if refresh:
            self.refresh()
        with self.wiki.store.connection():
            conn = self._conn
            conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_vocab USING "
                         "fts5vocab(main, 'search_fts', 'row')")
            freq = []
            for token in tokens:
                row = conn.execute("SELECT doc FROM temp.search_vocab WHERE term = ?", (token,)).fetchone()
                if row is not None and row[0] > 0:
                    freq.append((row[0], token))
            if not freq:
                return []
            chosen = [t for _n, t in sorted(freq)[:terms]]
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in chosen)
            rows = conn.execute("SELECT d.path FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid"
                                " WHERE search_fts MATCH ? ORDER BY bm25(search_fts), d.path LIMIT ?",
                                (match, max(1, int(limit)))).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _prepare(query: str | Query, layer: str | None) -> Query:
        q = parse_query(query) if isinstance(query, str) else query
        if q.problem:
            raise UsageError(q.problem)
        if layer:
            name, problem = parse_layer(layer)
            if problem:
                raise UsageError(f"unknown layer {layer!r}: use identity, core, context or deep")
            q.layers = {name} if not q.layers or name in q.layers else {"\x00none"}
        return q

    def _rows(self, q: Query, first: int | None = FIRST_ROWS) -> Iterator[_Row]:
        """Candidate pages passing the metadata filters, by score then path.

        SQLite is asked for the ``first`` best rows only (its top-N sort keeps that many, where
        sorting all 16,000 matches of a common word cost more than the rest of the query), then,
        only if the caller takes more, for all of them again, the rows already given skipped by
        their place in that order. None: all at once."""
        w_title, w_body, w_extra = WEIGHTS
        columns = "d.path, d.title, d.layer, d.trust, d.tags"
        positive, negative = q.positive_match(), q.excluded_match()
        if positive:
            sql = (f"SELECT {columns}, -bm25(search_fts, {w_title}, {w_body}, {w_extra})"
                   " * (0.5 + d.trust) * d.factor AS score"
                   " FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid"
                   " WHERE search_fts MATCH ? ORDER BY score DESC, d.path")
            args: tuple[str, ...] = (q.match() or positive,)
        else:
            # Only filters and exclusions: every page is equally relevant (relevance 1).
            sql = f"SELECT {columns}, (0.5 + d.trust) * d.factor AS score FROM search_docs d"
            args = ()
            if negative:
                sql += " WHERE d.id NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?)"
                args = (negative,)
            sql += " ORDER BY score DESC, d.path"
        try:
            given = 0
            last: tuple[float, str] | None = None
            for path, title, layer, trust, tags, score in self._conn.execute(
                    sql if first is None else f"{sql} LIMIT {int(first)}", args):
                given += 1
                last = (-score, path)
                tag_list = tags.split("\n") if tags else []
                if q.accepts(path, layer, trust, tag_list):
                    yield _Row(path, title, layer, trust, tag_list, score)
            if first is None or given < first or last is None:
                return
            for path, title, layer, trust, tags, score in self._conn.execute(sql, args):
                if (-score, path) <= last:
                    continue  # (given already: the order is by score, then by the unique path)
                tag_list = tags.split("\n") if tags else []
                if q.accepts(path, layer, trust, tag_list):
                    yield _Row(path, title, layer, trust, tag_list, score)
        except sqlite3.OperationalError as exc:
            # The MATCH string is built from quoted terms only; this is a safety net, not a path.
            raise CuratorError(f"search failed for {q.text!r}: {exc}") from None

    # --- scores over the visible pages only ------------------------------------------------
    #
    # FTS5's bm25 takes its statistics (rows, average row length, rows holding each phrase) from
    # the whole table, hidden pages included: an agent's scores would then differ from those on a
    # copy of the wiki without the pages it cannot see, a faint sign that they exist. For an actor
    # with hidden pages the scores are computed again here as FTS5 computes them (same formula,
    # constants and order of operations, so the doubles are the same) on the table as it would be
    # without those rows: each hidden row's length and phrase hits are taken out of the totals.
    # A row's weighted hits of one phrase come from a query for that phrase alone (its bm25 solved
    # for the frequency, which is an integer with integer weights), its length from the table's
    # ``docsize`` record, the totals from its averages record.

    def _hidden(self, actor: Actor) -> dict[int, str]:
        """{doc id: path} of the live documents ``actor`` may not see (cached per index state,
        policy and actor)."""
        policy = self.wiki.policy
        key = (actor, self._generation, self._data_version(), id(policy), getattr(policy, "generation", 0))
        cached = self._hidden_cache.get(key)
        if cached is None:
            cached = self._hidden_now(actor)
            if len(self._hidden_cache) > 16:
                self._hidden_cache.clear()
            self._hidden_cache[key] = cached
        return cached

    def _hidden_now(self, actor: Actor) -> dict[int, str]:
        visible = self.wiki.visible
        rule_keys = getattr(self.wiki.policy, "rule_keys", None)
        conn = self._conn
        if rule_keys is None:
            return {i: p for i, p in conn.execute("SELECT id, path FROM search_docs") if not visible(actor, p)}
        # Visibility is the folder's, except for a page a rule names by its own path: ask once per
        # folder (a probe name no page can have; the folder index lists them without a scan) and
        # page by page only for those.
        hidden_dirs = [d for (d,) in conn.execute("SELECT DISTINCT dir FROM search_docs")
                       if not visible(actor, f"{d}/\0probe.md" if d else "\0probe.md")]
        hidden: dict[int, str] = {}
        for start in range(0, len(hidden_dirs), 500):
            chunk = hidden_dirs[start:start + 500]
            marks = ",".join("?" * len(chunk))
            hidden.update(conn.execute(f"SELECT id, path FROM search_docs WHERE dir IN ({marks})", chunk))
        for key in rule_keys():
            if key.endswith(".md"):  # a rule naming one page: that page decides for itself
                for i, p in conn.execute("SELECT id, path FROM search_docs WHERE path = ? COLLATE NOCASE", (key,)):
                    if visible(actor, p):
                        hidden.pop(i, None)
                    else:
                        hidden[i] = p
        return hidden

    def _data_version(self) -> int:
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _sizes(self, ids: Iterable[int]) -> dict[int, int]:
        """Row lengths in tokens (all columns), as FTS5's ``xColumnSize(-1)`` reads them."""
        version = self._data_version()  # another process may have rebuilt the index (ids reused)
        if version != self._size_version:
            self._size_cache.clear()
            self._size_version = version
        cache = self._size_cache
        missing = [i for i in ids if i not in cache]
        for start in range(0, len(missing), 900):
            chunk = missing[start:start + 900]
            marks = ",".join("?" * len(chunk))
            for i, blob in self._conn.execute(f"SELECT id, sz FROM search_fts_docsize WHERE id IN ({marks})", chunk):
                cache[i] = sum(_varints(blob))
        return {i: cache.get(i, 0) for i in ids}

    def _totals(self) -> tuple[int, int]:
        """(rows, tokens in all columns) of the FTS table: its averages record."""
        row = self._conn.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone()
        values = _varints(row[0]) if row is not None else [0]
        return values[0], sum(values[1:])

    def _visible_rows(self, q: Query, hidden: dict[int, str]) -> Iterator[_Row]:
        """:meth:`_rows` with bm25 computed as if the ``hidden`` documents were not indexed."""
        phrases = [a for group in q.groups for a in (t.fts() for t in group) if a]
        conn = self._conn
        bm25 = "bm25(search_fts, " + ", ".join(repr(w) for w in WEIGHTS) + ")"
        n_row, n_token = self._totals()
        n_row_v = n_row - len(hidden)
        if n_row_v <= 0 or not phrases:
            return
        hidden_ids = json_line(list(hidden))
        avgdl = n_token / n_row
        avgdl_v = (n_token - sum(self._sizes(list(hidden)).values())) / n_row_v
        if len(phrases) == 1:
            yield from self._visible_rows_one(q, phrases[0], hidden, hidden_ids, n_row, n_row_v, avgdl, avgdl_v)
            return
        try:
            candidates = conn.execute(
                f"SELECT d.id, d.path, d.title, d.layer, d.trust, d.factor, d.tags, {bm25} FROM search_fts"
                " JOIN search_docs d ON d.id = search_fts.rowid WHERE search_fts MATCH ?", (q.match(),)).fetchall()
            candidates = [c for c in candidates if c[0] not in hidden]
            if not candidates:
                return
            ids = [c[0] for c in candidates]
            sizes = self._sizes(ids)
            freqs: list[dict[int, float]] = []
            idfs: list[float] = []
            for phrase in phrases:
                n_hit = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (phrase,)).fetchone()[0]
                n_hidden = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ? AND +rowid IN"
                                        " (SELECT value FROM json_each(?))", (phrase, hidden_ids)).fetchone()[0]
                idf = _idf(n_row, n_hit)
                if len(phrases) == 1:  # the query's own bm25 is that of its one phrase (NOT adds 0)
                    values = [(c[0], c[7]) for c in candidates]
                else:
                    values = conn.execute(f"SELECT rowid, {bm25} FROM search_fts WHERE search_fts MATCH ? AND +rowid IN"
                                          " (SELECT value FROM json_each(?))", (phrase, json_line(ids))).fetchall()
                freqs.append({i: _frequency(v, idf, sizes[i], avgdl) for i, v in values})
                idfs.append(_idf(n_row_v, n_hit - n_hidden))
        except sqlite3.OperationalError as exc:
            raise CuratorError(f"search failed for {q.text!r}: {exc}") from None
        # Scored in one tight pass, sorted by (score, path) as SQL orders them; the metadata
        # filters run lazily on the rows taken, in order (search stops at its limit).
        k1, b, k1_1 = _K1, _B, _K1 + 1.0
        scored: list[tuple[float, str, tuple[Any, ...]]] = []
        for c in candidates:
            doc_id = c[0]
            size = float(sizes[doc_id])
            norm = k1 * (1 - b + b * size / avgdl_v)
            score = 0.0
            for idf, freq in zip(idfs, freqs, strict=True):
                f = freq.get(doc_id, 0.0)
                score += idf * ((f * k1_1) / (f + norm))
            # as SQL computes -bm25(...) * (0.5 + d.trust) * d.factor
            scored.append((-(-(-1.0 * score) * (0.5 + c[4]) * c[5]), c[1], c))
        scored.sort()
        for neg, path, c in scored:
            tag_list = c[6].split("\n") if c[6] else []
            if q.accepts(path, c[3], c[4], tag_list):
                yield _Row(path, c[2], c[3], c[4], tag_list, -neg)

    def _visible_rows_one(self, q: Query, phrase: str, hidden: dict[int, str], hidden_ids: str, n_row: int,
                          n_row_v: int, avgdl: float, avgdl_v: float) -> Iterator[_Row]:
        """:meth:`_visible_rows` for a query of one phrase, lazily: the rows come in FTS5's order
        (its score over the whole index), and a row is given out once no row still to come can
        score higher over the visible pages. That bound holds because, for one phrase, the
        visible score is the whole-index score times ``idf_v / idf`` times
        ``(f + K) / (f + K_v)``, which lies between 1 and ``avgdl_v / avgdl`` whatever the row.
        A search stops at its limit, so a common word costs what it costs the operator."""
        conn = self._conn
        w_title, w_body, w_extra = WEIGHTS
        bm25 = f"bm25(search_fts, {w_title}, {w_body}, {w_extra})"
        try:
            n_hit = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (phrase,)).fetchone()[0]
            n_hidden = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ? AND +rowid IN"
                                    " (SELECT value FROM json_each(?))", (phrase, hidden_ids)).fetchone()[0]
            cursor = conn.execute(
                f"SELECT d.id, d.path, d.title, d.layer, d.trust, d.factor, d.tags, {bm25},"
                f" -{bm25} * (0.5 + d.trust) * d.factor AS score FROM search_fts"
                " JOIN search_docs d ON d.id = search_fts.rowid WHERE search_fts MATCH ?"
                " ORDER BY score DESC, d.path", (q.match(),))
        except sqlite3.OperationalError as exc:
            raise CuratorError(f"search failed for {q.text!r}: {exc}") from None
        idf = _idf(n_row, n_hit)
        idf_v = _idf(n_row_v, n_hit - n_hidden)
        stretch = avgdl_v / avgdl
        bound = (idf_v / idf) * max(1.0, stretch) * (1 + 1e-9)  # visible score <= whole-index score x bound
        k1, b, k1_1 = _K1, _B, _K1 + 1.0
        heap: list[tuple[float, str, tuple[Any, ...]]] = []

        def ready(limit: float) -> Iterator[_Row]:
            while heap and -heap[0][0] > limit:
                neg, path, c = heapq.heappop(heap)
                tag_list = c[6].split("\n") if c[6] else []
                if q.accepts(path, c[3], c[4], tag_list):
                    yield _Row(path, c[2], c[3], c[4], tag_list, -neg)

        self._sizes([])  # (drops the cached lengths if another process rebuilt the index)
        cache = self._size_cache
        for c in cursor:
            yield from ready(c[8] * bound)  # nothing still to come can beat what is given out
            doc_id = c[0]
            if doc_id in hidden:
                continue
            known = cache.get(doc_id)
            size = float(known if known is not None else self._sizes([doc_id])[doc_id])
            f = _frequency(c[7], idf, int(size), avgdl)
            score = 0.0
            score += idf_v * ((f * k1_1) / (f + k1 * (1 - b + b * size / avgdl_v)))
            heapq.heappush(heap, (-(-(-1.0 * score) * (0.5 + c[4]) * c[5]), c[1], c))
        yield from ready(-1.0)

    def _expand(self, hits: list[SearchHit], q: Query, actor: Actor, min_trust: float | None,
                limit: int, highlight: Any) -> list[SearchHit]:
        links = self.wiki.links_for(actor)
        pages = self.wiki.pages
        seen = {h.path for h in hits}
        weight: dict[str, float] = defaultdict(float)
        for hit in hits:
            neighbours = [e.target for e in links.outgoing.get(hit.path, []) if e.target]
            neighbours += [e.source for e in links.backlinks(hit.path)]
            for path in neighbours:
                if path not in seen:
                    weight[path] += hit.score
        out: list[SearchHit] = []
        for path in sorted(weight, key=lambda p: (-weight[p], p)):
            page = pages.get(path)
            if page is None or not q.accepts(path, page.layer, page.trust, page.tags):
                continue
            if min_trust is not None and page.trust < min_trust:
                continue
            if not self.wiki.visible(actor, path):
                continue
            out.append(SearchHit(path, page.title, 0.0, page.layer, page.trust,
                                 highlight_text(page.snippet, highlight), expanded=True))
            if len(out) >= limit:
                break
        return out

    def _snippet(self, path: str, highlight: Any) -> str:
        try:
            text = decode((self.wiki.root / path).read_bytes()[: _SNIPPET_SCAN * 4]).text
        except OSError:
            return ""
        return make_snippet(frontmatter.split(text).body, highlight)


# --- bm25 as FTS5 computes it (fts5_aux.c, fts5Bm25Function) ---------------------------------

_K1 = 1.2
_B = 0.75
assert all(float(w).is_integer() for w in WEIGHTS), "phrase frequencies are recovered as integers"


def _idf(n_row: int, n_hit: int) -> float:
    idf = math.log((n_row - n_hit + 0.5) / (n_hit + 0.5))
    return idf if idf > 0.0 else 1e-6


def _frequency(value: float, idf: float, size: int, avgdl: float) -> float:
    """The weighted hit count of a one-phrase query's row, from its bm25 ``value``."""
    s = -value / idf
    k = _K1 * (1 - _B + _B * float(size) / avgdl)
    return float(round(s * k / ((_K1 + 1.0) - s)))


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (as in FTS5's records), in order."""
    if max(blob, default=0) < 0x80:  # every value below 128: one byte each
        return list(blob)
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for k in range(9):
            c = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | c
                break
            value = (value << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(value)
    return out


# --- bulk rows -----------------------------------------------------------------------------

def _doc_row(page: Page, body: str) -> tuple[Any, ...]:
    """What the index stores of a page: search_docs columns, then the three indexed texts."""
    extra = " ".join([*page.tags, *page.aliases, page.stem.replace("-", " ").replace("_", " ")])
    return (page.path, page.path.rpartition("/")[0], page.title, page.layer, page.trust,
            page.source_factor, "\n".join(t.lower() for t in page.tags), page.mtime_ns, page.size,
            index_text(page.title), index_text(body[:MAX_INDEXED_CHARS]), index_text(extra))


#: The paths a change of a document lists as changed (``search_moved``), by kind of change: an
#: update may rename.
_MOVED_PATHS = {"INSERT": "(NEW.path)", "UPDATE": "(OLD.path), (NEW.path)", "DELETE": "(OLD.path)"}


def _stamp_triggers(conn: sqlite3.Connection, drop: bool = False) -> None:
    """The triggers that keep the packed stamps (``search_stamps``) true whenever a document
    changes (or, with ``drop``, their removal for a bulk build that deletes the stamps itself):
    while a packed value is kept, the document's paths are listed in ``search_moved``; one more
    than :data:`~curator.engine.corpus.walker.MOVED_MAX` and the packed value and the list are
    deleted (nothing is listed then until the next packing, which starts a new list)."""
    for event in ("INSERT", "UPDATE", "DELETE"):
        # (the first form's triggers, which deleted the packed stamps at every change)
        conn.execute(f"DROP TRIGGER IF EXISTS search_docs_{event.lower()}_stamps")
        name = f"search_docs_{event.lower()}_moved"
        conn.execute(f"DROP TRIGGER IF EXISTS {name}" if drop else
                     f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON search_docs"
                     " WHEN EXISTS (SELECT 1 FROM search_stamps) BEGIN"
                     f" INSERT OR IGNORE INTO search_moved VALUES {_MOVED_PATHS[event]};"
                     f" DELETE FROM search_stamps WHERE (SELECT count(*) FROM search_moved) > {MOVED_MAX};"
                     " DELETE FROM search_moved WHERE NOT EXISTS (SELECT 1 FROM search_stamps); END")


def index_rows(real_root: str, files: list[PageFile]) -> list[tuple[Any, ...]]:
    """Index rows of ``files`` (runs in worker processes during a bulk build)."""
    return [_doc_row(page, body) for page, body in read_and_parse(real_root, files)]


# --- snippets ------------------------------------------------------------------------------

def _folded_with_map(text: str) -> tuple[str, list[int] | None]:
    """``fold(text)`` and, when folding changed lengths, the original index of each folded char."""
    if text.isascii():
        return text.lower(), None
    out: list[str] = []
    index: list[int] = []
    same_length = True
    for i, ch in enumerate(text):
        f = fold_char(ch)
        out.append(f)
        index.extend([i] * len(f))
        same_length = same_length and len(f) == 1
    return "".join(out), (None if same_length else index)


class Highlighter:
    """A query's snippet pattern (:meth:`~curator.engine.search.query.Query.highlighter`), compiled on first use in
    the form the text needs: ASCII text (nearly every page) gets the pattern that finds the same
    there and compiles in a fraction of the time (the full one, for other text, costs ~4 ms of a
    one-shot search)."""

    __slots__ = ("_patterns", "_query")

    def __init__(self, query: Query) -> None:
        self._query = query
        self._patterns: dict[bool, re.Pattern[str] | None] = {}

    def for_text(self, folded: str) -> re.Pattern[str] | None:
        """The pattern to look for the query's words in ``folded`` (folded text) with."""
        ascii_text = folded.isascii()
        if ascii_text not in self._patterns:
            self._patterns[ascii_text] = self._query.highlighter(ascii_text)
        return self._patterns[ascii_text]


def _pattern_for(pattern: Any, folded: str) -> Any:
    """``pattern`` (a compiled pattern, a :class:`Highlighter` or None) for searching ``folded``."""
    return pattern.for_text(folded) if isinstance(pattern, Highlighter) else pattern


def highlight_text(text: str, pattern: Any) -> str:
    """``text`` with every match of ``pattern`` (over folded text) wrapped in :data:`HIGHLIGHT`;
    ``pattern``: a compiled pattern, a :class:`Highlighter` or None."""
    if pattern is None or not text:
        return text
    folded, index = _folded_with_map(text)
    pattern = _pattern_for(pattern, folded)
    if pattern is None:
        return text
    spans: list[tuple[int, int]] = []
    for m in pattern.finditer(folded):
        if m.end() == m.start():
            continue
        start = index[m.start()] if index else m.start()
        end = (index[m.end() - 1] + 1) if index else m.end()
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end))
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for start, end in spans:
        parts += [text[pos:start], HIGHLIGHT[0], text[start:end], HIGHLIGHT[1]]
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def make_snippet(body: str, pattern: Any, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``body`` around the first match, matches highlighted
    (``pattern`` as :func:`highlight_text` takes it)."""
    flat = " ".join(body[:_SNIPPET_SCAN].split())
    if not flat:
        return ""
    start = 0
    if pattern is not None:
        folded, index = _folded_with_map(flat)
        found = _pattern_for(pattern, folded)
        m = None if found is None else found.search(folded)
        if m is not None:
            first = index[m.start()] if index else m.start()
            start = max(0, first - width // 3)
            if start:
                space = flat.find(" ", start, first)
                start = space + 1 if space >= 0 else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start + width // 2, end)
        end = space if space > 0 else end
    window = highlight_text(flat[start:end], pattern)
    return ("…" if start else "") + window + ("…" if end < len(flat) else "")


__all__ = ["DEFAULT_LIMIT", "HIGHLIGHT", "MAX_LIMIT", "Highlighter", "SearchHit", "SearchIndex", "fold",
           "highlight_text", "make_snippet"]


def _indexable(files: Iterable[PageFile]) -> list[PageFile]:
    """The pages the index can hold: a file name that is not UTF-8 fits in no UTF-8 database
    (such a page is listed and linted, never searched; see :func:`~curator.engine.corpus.walker.utf8_name`)."""
    return [f for f in files if utf8_name(f.path)]
