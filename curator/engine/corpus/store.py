"""The persistent page cache in ``.curator/`` (SQLite), refreshed incrementally by (mtime, size).

Opening an unchanged wiki re-parses nothing: the walker's stat results are compared with the
cached (mtime, size) of every row and only new or changed files are read. Rows are decoded into
:class:`Page` objects only when something asks for them (:attr:`PageStore.pages`); a command that
needs just the listing (``curator index``) reads the summary columns (:meth:`PageStore.summaries`)
and never decodes a record. Records are ``marshal`` blobs of :meth:`Page.to_row` with the links
as columns (:func:`encode_record`; decoding is several times faster than JSON, and the cache is
local state that is never taken from a remote), the longer ones zlib-compressed, so the whole
cache stays smaller than the pages.

Many stale pages (a cold index) are parsed in worker processes, one per core
(:data:`PARALLEL_MIN` and up), while this process writes the rows as they come back.

Beside the records, two small tables answer a one-page question (``neighbors``, ``explain``,
``find`` by name) without decoding every record: ``link_names`` holds, for each page, a hash of
the last segment and of the whole key of every link target it writes, and ``page_names`` a hash
of every name a link could reach it by (slug, file name, title, aliases). Both are keyed by the
hash (a page's rows are found again from its old record when it changes), so :meth:`PageStore.pages_linking` and
:meth:`PageStore.pages_named` read only the records around one page. A hash (CRC-32) keeps them
small; a collision only adds a page, which the caller's exact resolution then ignores.

A refresh does not read those rows either: every write also stores one *snapshot* of all the
stamps (rows of the ``snapshot`` table: the paths, in the order the last scan found them, as one
string and their mtimes and sizes as packed arrays; the titles, layers and trusts beside them,
decoded only for a listing), and a warm refresh compares the scan (:func:`~curator.engine.corpus.walker.scan`, or
the walk a one-shot command started ahead, :func:`~curator.engine.corpus.walker.walk_ahead`) with it in one go, both
in that flat form (:func:`~curator.engine.corpus.walker.stamps_key`: three equal strings compared in C; the stamps are
made into a dict by path only when something asks for them). When the scan lists the same paths
with a few re-stamped (an edit, an agent's append), only those are looked at; only when pages
were added or removed does it compare page by page. The snapshot is written whole (its *base*)
only now and then: a write records just the pages it wrote, beside the base, in a small *delta*
(:class:`Snapshot`; up to :data:`DELTA_MAX` pages), which every process applies when it loads.
Triggers on ``pages`` delete the snapshot's token whenever a row changes by any other way (a
repair by hand), so a snapshot with a token is always exactly the table.

The racy-stamp guard (what git calls "racy git"): a page rewritten in place within one tick of
the file system's clock, keeping its size, keeps its (mtime, size), so a process that read it
mid-write would keep the torn text for good. A page whose mtime is not safely older
(:data:`RACY_NS`) than the moment its stamp was taken is therefore recorded in the ``racy`` table
with a digest of the bytes that were parsed, and every refresh that finds its stamp unchanged
reads it again and compares the digest: a different text is a modification. Once the page's
mtime is safely older than a check, any later write would change it, and the entry is dropped.

Each snapshot carries a fresh random token, the store's :attr:`PageStore.state`: data computed
from every page (the operator's resolved link graph, :mod:`curator.engine.graph.link_graph`; the operator's lint answer,
:mod:`curator.engine.review.lint`) is saved under it
(:meth:`PageStore.save_derived`) and answered again (:meth:`PageStore.derived`) only while the
pages are exactly those it was computed from. Each new state also records the one before it
and the paths its write changed (rows of ``changes``, the last :data:`CHANGES_KEPT`), so data saved
under an earlier state can be brought up to date from the few pages changed since
(:meth:`PageStore.derived_since`) instead of computed again from every page.

Extensions (the search index) register a :class:`StoreExtension` and are kept in step inside the
same transaction, so the page cache and everything built on it never disagree. An extension that
is not built yet (``active()`` false) is not fed: it builds itself in bulk when first used.
"""

from __future__ import annotations

import gc
import json
import marshal
import os
import re
import sqlite3
import stat
import threading
import time
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from curator.engine.corpus.page import Page, Problem, link_key, parse_page, path_key, slug_of
from curator.engine.corpus.summaries import PageSummary
from curator.engine.corpus.walker import (
    PageFile,
    Stamps,
    StampsKey,
    is_page_path,
    scan,
    stamps_key,
    stamps_of,
    take_ahead,
    utf8_name,
    walk_order,
    well_formed,
)

#: What :meth:`PageStore._read` answers for a page it may not read (a chmod-000 file).
_UNREADABLE = b"\0unreadable\0"
#: The length of each read after the first (see :func:`read_page_bytes`).
_READ_BLOCK = 1 << 20
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
SCHEMA_VERSION = 16  # bump when Page or the parse rules change: the cache is rebuilt
#: Stale pages from which parsing moves to worker processes (below, starting them costs more).
PARALLEL_MIN = 1500
#: SQLite's page cache while a bulk write fills the tables (a cold index here, the search index's
#: build) (negative: KiB), and after it (SQLite's default). The pages written stay in memory instead
#: of being written out and read back: each chunk's name rows land all over their tables' B-trees,
#: and with the default 2 MB a cold index at 100,000 pages took 12.6 s instead of 10.1.
BULK_CACHE_KIB = -65536
DEFAULT_CACHE_KIB = -2000
#: The same for the pages an action (or a watcher) names: a merge re-indexes its 2,000 rewritten
#: pages in ~0.3 s here, where starting workers from a process holding the whole wiki (forked, or
#: spawned and re-importing in the station) cost as much again and, on a busy machine, several times that.
PARALLEL_MIN_PATHS = 6000
#: Records longer than this are stored zlib-compressed (marked by a leading ``Z``, which no
#: marshal dump of a list starts with): the big rows hold most of the bytes, and the cache must
#: stay smaller than the pages. (4 KB was tried: it saved ~0.34 s of a 32,000-page real-shaped
#: wiki's ~5 s of cold-parse CPU, but with the full-text index built the cache grew to 1.04x the
#: pages' bytes, over issue 17's 1.0x; at 1 KB it is 0.99x.)
COMPRESS_ABOVE = 1024
#: The racy-stamp guard's margin (see the module docstring): a page whose mtime is less than this
#: before the moment its stamp was taken (the stat, before the read) may still be rewritten with
#: the same mtime, so its digest is kept and checked on the next refresh. It covers the kernel's
#: coarse file clock (a few ms) and the coarsest common file systems (FAT: 2 s).
RACY_NS = 2_000_000_000
#: The states whose changed paths are kept (see :meth:`PageStore.derived_since`), and the most
#: paths one state records (a bigger change, a cold index, is recorded as "everything"). As many
#: states as a dedup basis follows changed pages (an agent's append is one state each; a few
#: hundred rows of a few bytes): with 16, a busy wiki's 17th append since the last duplicate scan
#: made the next one scan every page again.
CHANGES_KEPT = 512
CHANGES_MAX_PATHS = 2000
#: Tag of the snapshot's encoding (a snapshot with another tag is ignored and rewritten).
SNAPSHOT_FORMAT = 4
#: The most pages the snapshot's delta records (see :meth:`PageStore._save_snapshot`): the write
#: after saves the snapshot whole again (each process applies the delta when it loads).
DELTA_MAX = 256
#: The most pages another process wrote since this store's state that a write compares with its
#: own before it follows that process's state (:meth:`PageStore._holds_as_stored`): more, and the
#: write's state follows an unknown one (the derived data saved before is then refused).
HOLDS_MAX = 2000


def digest(data: bytes) -> bytes:
    """The digest the racy-stamp guard compares a page's bytes by."""
    from hashlib import blake2b  # (only for pages written a moment ago)

    return blake2b(data, digest_size=16).digest()


#: Where :meth:`Page.to_row` keeps the page's links, and its ``created`` date.
_LINKS = 15
_CREATED = 11
#: ... and what a page list shows besides the fields of the listing (:class:`PageSummary`).
_TAGS, _ALIASES, _UPDATED, _SNIPPET = 6, 7, 12, 14
#: Where a parsed page's head holds those, when its parse was asked for them (``listing``).
LISTED_AT = 7


def encode_record(row: list[Any]) -> bytes:
    """A page's record: its :meth:`Page.to_row` with the links as columns (one list of targets, one
    of keys, ...: a hub page's 30,000 links decode as six lists, not 30,000), marshalled."""
    links = row[_LINKS]
    blob = marshal.dumps([*row[:_LINKS], [list(c) for c in zip(*links, strict=True)] if links else [],
                          *row[_LINKS + 1:]])
    if len(blob) > COMPRESS_ABOVE:
        return b"Z" + zlib.compress(blob, 1)
    return blob


def decode_record(blob: bytes) -> list[Any]:
    """The :meth:`Page.to_row` an :func:`encode_record` holds (its links as tuples, made lazily:
    :meth:`Page.from_row` makes its links from them directly, and a reader takes them once)."""
    if blob[:1] == b"Z":
        blob = zlib.decompress(blob[1:])
    record: list[Any] = marshal.loads(blob)
    columns = record[_LINKS]
    record[_LINKS] = zip(*columns, strict=True) if columns else ()
    return record


def name_hash(name: str) -> int:
    """The key of a name in the ``link_names`` / ``page_names`` tables (CRC-32 of its UTF-8)."""
    return zlib.crc32(name.encode("utf-8", "surrogatepass"))


def _last(key: str) -> str:
    return key.rpartition("/")[2]


def _hashes(names: set[str]) -> set[int]:
    """:func:`name_hash` of each of ``names`` (a page's links repeat names: each is hashed once)."""
    crc32 = zlib.crc32
    return {crc32(n.encode("utf-8", "surrogatepass")) for n in names}


def link_name_hashes(row: list[Any]) -> set[int]:
    """Hashes of the names each link of a page (a :meth:`Page.to_row`) is looked up by: its
    key's last segment and the whole key (what :func:`~curator.engine.corpus.links.local_index` matches)."""
    keys = {link[1] for link in row[_LINKS]}
    keys.update([key.rpartition("/")[2] for key in keys if "/" in key])
    return _hashes(keys)


def page_name_hashes(row: list[Any]) -> set[int]:
    """Hashes of every name a link can reach the page (a :meth:`Page.to_row`) by: slug, the
    last segment of its path key, title and aliases (what :func:`~curator.engine.corpus.links._matters` asks)."""
    path = row[0]
    return _hashes({slug_of(path), _last(path_key(path)),
                    link_key(row[3]), *(link_key(a) for a in row[7] if isinstance(a, str))})


@dataclass(slots=True)
class ChangeSet:
    """Which pages a refresh (or an action) added, modified or removed."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: whether the set of attachment files (non-page files links may point at) changed
    attachments: bool = False

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed or self.attachments)

    @property
    def paths(self) -> list[str]:
        return [*self.added, *self.modified, *self.removed]

    def merge(self, other: ChangeSet) -> None:
        self.added += other.added
        self.modified += other.modified
        self.removed += other.removed
        self.attachments = self.attachments or other.attachments


_gc_pause_lock = threading.Lock()
_gc_pauses = 0  # the gc_paused blocks running now, in every thread
_gc_resume = False  # whether the collector ran before the first of them


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while pages are built in bulk.

    Building 10,000 pages makes hundreds of thousands of small containers, none of them cyclic;
    the collector kept re-scanning the growing heap and doubled a warm open. Reference counting
    still frees everything.

    The collector is one per process: a pause lasts until the last of the blocks running in any
    thread ends (the first to end must not resume it under the others: their bulk then set off
    full collections inside them, 0.8-1.1 s each at 32,000 pages with the interpreter lock held).
    What was built meanwhile and is still alive then is frozen (``gc.freeze``): those are the
    caches just built, and the first collection after the pause would otherwise walk all of them
    (0.4-0.9 s, on whichever thread allocates next: in the station, often the GUI thread).
    """
    global _gc_pauses, _gc_resume
    with _gc_pause_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_pause_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.freeze()
                gc.enable()


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the file is damaged or not a database (as opposed to busy, read-only)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code:
        return code in (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def checkpoint(conn: sqlite3.Connection) -> None:
    """Fold the WAL into the database and truncate it (after a bulk write; best effort)."""
    with suppress(sqlite3.Error):  # another connection is reading: the next checkpoint does it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def drop_tables(conn: sqlite3.Connection, tables: Iterable[str]) -> bool:
    """Drop those of ``tables`` that exist (a schema change); answers whether there were any
    (then :func:`reclaim` gives their pages back)."""
    names = list(tables)
    present = {row[0] for row in conn.execute(
        f"SELECT name FROM sqlite_master WHERE type='table' AND name IN ({','.join('?' * len(names))})", names)}
    for table in names:
        if table in present:
            conn.execute(f"DROP TABLE {table}")
    return bool(present)


def reclaim(conn: sqlite3.Connection) -> bool:
    """Give the pages of tables just dropped back to the file system (a schema change: without
    this, a 32,000-page wiki's cache kept ~90 MB of free pages for good, since nothing else ever
    vacuums). One ``VACUUM`` (it works in WAL mode: the rewrite goes through the WAL, which
    :func:`checkpoint` then folds in and truncates), and only when the file has free pages.
    Best effort: a connection in a transaction, another process holding the database, no room
    for the copy, leave the free pages for the next schema change (answers whether it ran)."""
    try:
        if conn.in_transaction or not conn.execute("PRAGMA freelist_count").fetchone()[0]:
            return False
        conn.execute("VACUUM")
    except sqlite3.Error:
        return False
    checkpoint(conn)
    return True


def read_page_bytes(real_root: str, path: str, size: int = -1) -> bytes | None:
    """A page's bytes; None when it vanished; :data:`_UNREADABLE` when it may not be read. The
    last component is never followed if it became a symlink since the walk (O_NOFOLLOW where the
    platform has it). ``size``: what the walk's stat said (-1: not known), the first read's length.

    Read with ``os.read`` on the descriptor, not through a buffered file object (making one for
    each of 32,000 pages cost a cold parse more than the reads themselves), until end of file,
    so a page that grew since its stat is still read whole."""
    try:
        fd = os.open(os.path.join(real_root, path), _READ_FLAGS)
    except PermissionError:
        return _UNREADABLE
    except OSError:
        return None
    try:
        data = os.read(fd, size + 1 if size >= 0 else _READ_BLOCK)
        if not data:
            return data
        more = os.read(fd, _READ_BLOCK)
        if not more:
            return data
        parts = [data, more]
        while more := os.read(fd, _READ_BLOCK):
            parts.append(more)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


#: What :func:`parse_files` answers per page: the fields of its :meth:`Page.to_row` the listing
#: holds (path, size, mtime_ns, title, layer, trust, created), the encoded record, the hashes of the name tables'
#: rows (:func:`link_name_hashes`, :func:`page_name_hashes`), the body (or None), for a racy page
#: the digest of the bytes parsed (else None), and the row itself when asked for (else None).
Parsed = tuple[tuple[Any, ...], bytes, set[int], set[int], str | None, bytes | None, list[Any] | None]
#: What :func:`parse_chunk` answers: the chunk's :data:`Parsed` (without their name hashes), the
#: rows of the two name tables for all of them (see :func:`_name_rows`), and what the chunk's
#: by-product function made of their bodies (see :attr:`PageStore.byproduct`; None without one).
Chunk = tuple[list[Parsed], str, str, list[Any] | None]
#: A function run in the parse workers on the (paths, bodies) of each chunk they parsed, answering
#: one compact value per page (a module-level function: it is sent to the workers by name).
Byproduct = Callable[[list[str], list[str]], list[Any]]
_NO_HASHES: set[int] = set()


def parse_files(real_root: str, files: list[PageFile], with_body: bool,
                racy_from: int | None = None, rows: bool = True, listing: bool = False) -> list[Parsed]:
    """Read and parse ``files``: a :data:`Parsed` for each one still there, with the digest of
    the pages whose mtime is ``racy_from`` or later (see :data:`RACY_NS`).

    Runs in worker processes for a bulk parse (``rows`` false): what travels back is cheap to
    send, the record already encoded and the name hashes made, not the row (unpickling 32,000
    rows of links cost the writing process more than everything else it did in a cold index);
    Page objects are decoded from the record only if someone asks for them. ``listing``: the head
    also holds what a page list shows of the page besides (tags, aliases, updated, snippet: see
    :data:`LISTED_AT`), so that a first open lists the pages without decoding any record.
    """
    out: list[Parsed] = []
    with gc_paused():
        for page, body, data in _read_parse(real_root, files):
            row = page.to_row()
            racy = racy_from is not None and page.mtime_ns >= racy_from and data is not _UNREADABLE
            head = ((*row[:6], row[_CREATED], row[_TAGS], row[_ALIASES], row[_UPDATED], row[_SNIPPET]) if listing
                    else (*row[:6], row[_CREATED]))
            out.append((head, encode_record(row), link_name_hashes(row), page_name_hashes(row),
                        body if with_body else None, digest(data) if racy else None, row if rows else None))
    return out


def parse_chunk(real_root: str, files: list[PageFile], with_body: bool, racy_from: int | None = None,
                byproduct: Byproduct | None = None, listing: bool = False) -> Chunk:
    """:func:`parse_files` in a worker process (a bulk parse): each page's name hashes are sent as
    the chunk's rows of the name tables instead (:func:`_name_rows`), which the writing process
    inserts in one statement each, in C (building, sorting and binding 200,000 rows of them one
    by one cost it more than a third of its share of a cold index). With ``byproduct``, its
    answer for the pages' bodies too, made here while the text is in hand (the dedup scan's
    shingles: read and decoded once, not again by a second pool of workers)."""
    parsed = parse_files(real_root, files, with_body or byproduct is not None, racy_from, False, listing)
    extra = (byproduct([entry[0][0] for entry in parsed], [entry[4] or "" for entry in parsed])
             if byproduct is not None else None)
    links: list[int] = []
    names: list[int] = []
    for i, entry in enumerate(parsed):
        if utf8_name(entry[0][0]):  # (a name no database holds has no rows: see PageStore._write)
            links += [h << 20 | i for h in entry[2]]
            names += [h << 20 | i for h in entry[3]]
    out = [(head, record, _NO_HASHES, _NO_HASHES, body if with_body else None, page_digest, row)
           for head, record, _, _, body, page_digest, row in parsed]
    return out, _name_rows(links), _name_rows(names), extra


def _snapshot_triggers(conn: sqlite3.Connection, drop: bool = False) -> None:
    """The triggers by which any change to ``pages`` (whichever program makes it) deletes the
    snapshot's token; the store writes it again at the end of its own writes. With ``drop``, their
    removal for a bulk write, which deletes the token once itself: fired for each of 100,000 rows
    they were a sixth of a cold index's writing."""
    for event in ("INSERT", "UPDATE", "DELETE"):
        name = f"pages_{event.lower()}_snapshot"
        conn.execute(f"DROP TRIGGER IF EXISTS {name}" if drop else
                     f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event}"
                     " ON pages BEGIN DELETE FROM snapshot WHERE part='token'; END")


def _derived_states(conn: sqlite3.Connection) -> None:
    """The state each derived answer holds for, in a table of its own (``derived_at``): a carry
    (:meth:`PageStore.carry_derived`, an answer that still holds after a change) stamps it with
    the new state there. Stamped in ``derived``'s own row, SQLite wrote the whole row again, its
    data too: the lint and link answers' 6-7 MB each, 20-28 ms of a ``health`` after every append
    at 100,000 pages, and as many bytes through the write-ahead log. Triggers keep it in step with
    ``derived`` whichever program writes that (an older Curator too), and the rows saved before
    the table existed are copied in once."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='derived_at'").fetchone()
    conn.execute("CREATE TABLE IF NOT EXISTS derived_at (name TEXT PRIMARY KEY, token BLOB) WITHOUT ROWID")
    conn.execute("CREATE TRIGGER IF NOT EXISTS derived_insert_at AFTER INSERT ON derived"
                 " BEGIN INSERT OR REPLACE INTO derived_at VALUES (new.name, new.token); END")
    conn.execute("CREATE TRIGGER IF NOT EXISTS derived_update_at AFTER UPDATE OF token ON derived"
                 " BEGIN INSERT OR REPLACE INTO derived_at VALUES (new.name, new.token); END")
    conn.execute("CREATE TRIGGER IF NOT EXISTS derived_delete_at AFTER DELETE ON derived"
                 " BEGIN DELETE FROM derived_at WHERE name=old.name; END")
    if exists is None:
        conn.execute("INSERT OR REPLACE INTO derived_at SELECT name, token FROM derived")


class Saved(tuple[bytes, set[str]]):
    """What :meth:`PageStore.derived_since` found: (the data, the paths that may differ since),
    and the state it was saved for (:attr:`at`), which :meth:`PageStore.carry_derived` checks is
    still the saved one."""

    at: bytes

    def __new__(cls, data: bytes, changed: set[str], at: bytes) -> Saved:
        found = super().__new__(cls, (data, changed))
        found.at = at
        return found


def _name_rows(keys: list[int]) -> str:
    """Rows of a name table for a chunk, as one JSON array of integers, in key order: each is
    ``hash << 20 | i``, the ``i``-th page of the chunk (``CHUNK_FILES`` is far below 2**20); the
    writer adds the rowid of the chunk's first record to ``i`` (see :data:`_INSERT_NAMES`)."""
    keys.sort()
    return f"[{','.join(map(str, keys))}]"


#: Inserts a chunk's :func:`_name_rows` into a name table: (table, rows, rowid of its first page).
_INSERT_NAMES = ("INSERT OR IGNORE INTO {} SELECT value >> 20, (value & 1048575) + ? FROM json_each(?)")


def read_and_parse(real_root: str, files: Iterable[PageFile]) -> Iterator[tuple[Page, str]]:
    """(page, body) of each of ``files`` still there: read (never through a symlink), parsed."""
    for page, body, _ in _read_parse(real_root, files):
        yield page, body


def _read_parse(real_root: str, files: Iterable[PageFile]) -> Iterator[tuple[Page, str, bytes]]:
    """:func:`read_and_parse` with the bytes read (:data:`_UNREADABLE` for a page that may not be)."""
    for f in files:
        data = read_page_bytes(real_root, f.path, f.size)
        if data is None:
            continue
        if data is _UNREADABLE:
            # Listed and reported, never silently skipped; size -1 re-reads it on every refresh,
            # so fixing the permissions (which keeps the mtime) is seen at once.
            page, body = parse_page(f.path, b"", f.mtime_ns)
            page.problems.append(Problem("unreadable", "cannot be read (permission denied); fix its "
                                         "permissions, e.g. chmod u+rw"))
            page.size = -1
            yield page, body, data
            continue
        page, body = parse_page(f.path, data, f.mtime_ns)
        page.size = len(data)
        yield page, body, data


def _decode_snapshot(blob: bytes | None) -> StampsKey | None:
    """The stamps a snapshot row holds, in their flat form (None when there is none, or it is
    not one this version wrote: the table is read instead, and the snapshot written again)."""
    if blob is None:
        return None
    try:
        tag, joined, mtimes, sizes = marshal.loads(zlib.decompress(blob))
        if tag != SNAPSHOT_FORMAT or type(joined) is not str or type(mtimes) is not bytes or type(sizes) is not bytes:
            return None
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    key = (joined, mtimes, sizes)
    return key if well_formed(key) else None


Listing = tuple[list[str], list[int], list[str], list[str], list[float], list[str | None]]
#: What the listing holds of a page beside its size: (title, layer, trust, created).
Details = tuple[str, str, float, str | None]
#: A page as the snapshot's delta records it: (mtime_ns, size, title, layer, trust, created);
#: None: removed.
Entry = tuple[int, int, str, str, float, str | None] | None


@dataclass(slots=True)
class Snapshot:
    """The snapshot as the database holds it: the stamps and listing written whole (the *base*,
    named by ``base``) and the pages written since (the *delta*, path -> :data:`Entry`), and
    ``key``, the stamps of every page now (the base's with the delta applied, see :func:`_patched`)."""

    base: bytes
    base_key: StampsKey
    info: bytes
    delta: dict[str, Entry]
    at: dict[str, int]  # each delta page's place in the base's order (-1: added since)
    key: StampsKey


def _read_snapshot(parts: dict[str, bytes]) -> Snapshot | None:
    """The :class:`Snapshot` the rows of the ``snapshot`` table hold; None when there is none to
    trust (no token: the pages were changed by other means since; a part missing or not decoding;
    a delta written on another base)."""
    base, info, token = parts.get("base"), parts.get("info"), parts.get("token")
    key = _decode_snapshot(parts.get("stamps"))
    if key is None or base is None or info is None or token is None:
        return None
    delta: dict[str, Entry] = {}
    at: dict[str, int] = {}
    blob = parts.get("delta")
    if blob is not None:
        try:
            tag, on, entries = marshal.loads(zlib.decompress(blob))
            if tag != SNAPSHOT_FORMAT or on != base:
                return None
            count = len(key[1]) // 8
            for entry in entries:
                path, place = entry[0], entry[1]
                if type(path) is not str or type(place) is not int or not -1 <= place < count:
                    return None
                delta[path] = (entry[2], entry[3], entry[4], entry[5], entry[6], entry[7]) if len(entry) == 8 else None
                at[path] = place
        except (ValueError, TypeError, EOFError, IndexError, zlib.error):
            return None
    try:
        now = _patched(key, delta, at) if delta else key
    except (TypeError, OverflowError):
        return None
    return Snapshot(base, key, info, delta, at, now) if well_formed(now) else None


def _base_place(names: str, path: str) -> int:
    """``path``'s place in the order of the paths ``names`` holds (between NULs, one before the
    first and after the last); -1 when it is not one of them (found in C, with no list of them)."""
    found = names.find(f"\0{path}\0")
    return -1 if found < 0 else names.count("\0", 0, found)


#: From this many paths to place, the base's paths are listed once (:func:`_base_places`).
PLACE_BY_LIST = 8


def _base_places(joined: str, paths: list[str]) -> dict[str, int]:
    """Each of ``paths``'s place in the order of the NUL-joined paths ``joined`` (-1: not one of
    them): a few searched for in the joined paths, more in their list made once (each search
    reads them all: 20 ms at 300,000 pages)."""
    if not paths:
        return {}
    if len(paths) < PLACE_BY_LIST:
        names = f"\0{joined}\0"
        return {p: _base_place(names, p) for p in paths}
    places = {p: i for i, p in enumerate(joined.split("\0"))} if joined else {}
    return {p: places.get(p, -1) for p in paths}


def _patched(key: StampsKey, delta: dict[str, Entry], at: dict[str, int]) -> StampsKey:
    """The stamps ``key`` with ``delta`` applied (``at``: each delta page's place in ``key``, -1
    for a page added since): a page written since takes its new stamp in its place, a page
    removed leaves, a page added goes last (in the delta's order). Its places are recorded with
    the delta, so an append costs two copies of the packed stamps, not a list of every path."""
    joined, mtimes, sizes = key
    m, s = array("q", mtimes), array("q", sizes)
    gone: list[int] = []
    added: list[tuple[str, int, int]] = []
    for path, entry in delta.items():
        i = at[path]
        if entry is None:
            if i >= 0:
                gone.append(i)
        elif i < 0:
            added.append((path, entry[0], entry[1]))
        else:
            m[i], s[i] = entry[0], entry[1]
    if not gone and not added:
        return joined, m.tobytes(), s.tobytes()
    paths = joined.split("\0") if joined else []
    for i in sorted(gone, reverse=True):
        del paths[i], m[i], s[i]
    for path, mtime, size in added:
        paths.append(path)
        m.append(mtime)
        s.append(size)
    return "\0".join(paths), m.tobytes(), s.tobytes()


def _patched_listing(columns: Listing, delta: dict[str, Entry]) -> Listing:
    """The listing ``columns`` (sorted by path) with ``delta`` applied."""
    paths, sizes, titles, layers, trusts, created = columns
    for path, entry in delta.items():
        i = bisect_left(paths, path)
        present = i < len(paths) and paths[i] == path
        if entry is None:
            if present:
                del paths[i], sizes[i], titles[i], layers[i], trusts[i], created[i]
        elif present:
            sizes[i], titles[i], layers[i], trusts[i], created[i] = entry[1:]
        else:
            paths.insert(i, path)
            sizes.insert(i, entry[1])
            titles.insert(i, entry[2])
            layers.insert(i, entry[3])
            trusts.insert(i, entry[4])
            created.insert(i, entry[5])
    return columns


def _differing(a: bytes, b: bytes) -> list[int]:
    """The indices of the 8-byte items in which two equally long packed arrays differ (compared
    a block at a time in C: an append re-stamps one page of 100,000)."""
    out: list[int] = []
    block = 4096
    for start in range(0, len(a), block):
        if a[start:start + block] != b[start:start + block]:
            out += [i // 8 for i in range(start, min(start + block, len(a)), 8) if a[i:i + 8] != b[i:i + 8]]
    return out


def _listing(blob: bytes | None) -> Listing | None:
    """The snapshot's listing columns: paths (sorted), sizes, titles, layers, trusts, created
    dates (None when there is none or it does not decode: the table is read instead)."""
    if blob is None:
        return None
    try:
        joined, sizes, titles, layers, trusts, created = marshal.loads(zlib.decompress(blob))
        paths = joined.split("\0") if joined else []
        columns: Listing = (paths, array("q", sizes).tolist(), titles, layers, trusts, created)
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    return columns if len({len(c) for c in columns}) == 1 else None


class StoreExtension(Protocol):
    """Something kept in step with the page cache (e.g. the full-text index)."""

    def setup(self, conn: sqlite3.Connection) -> None:
        """Create its tables."""
        ...

    def active(self) -> bool:
        """Whether it wants every page change fed to it now (False: not built yet)."""
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
        #: held while every page is decoded (outside ``_lock``: see _decode_all), so only one
        #: thread decodes them; ``_writes`` counts the refreshes and writes that may move them
        self._decoding = threading.Lock()
        self._writes = 0
        #: (mtime_ns, size) of every cached page (see :attr:`_stamps`); None while they are
        #: exactly the snapshot's (``_snap_key``) and no one has asked for them by page
        self._stamp_map: dict[str, tuple[int, int]] | None = {}
        #: (title, layer, trust, created) of every cached page, for the listing (:meth:`summaries`): None
        #: until first needed, then decoded from ``_info_blob`` (the snapshot's: the listing's
        #: columns, by path) or read from the table
        self._info: dict[str, Details] | None = None
        self._info_blob: bytes | None = None
        #: the stamps as the database's snapshot holds them (None: there is none to trust), in
        #: the flat form a scan is compared with (:data:`~curator.engine.corpus.walker.StampsKey`); as lists when needed
        self._snap_key: StampsKey | None = None
        self._snap_lists: Stamps | None = None
        #: the snapshot's paths between NULs, for a few membership tests (see _known)
        self._snap_names: str | None = None
        #: The database's snapshot as this process last read or wrote it: its base's name and
        #: stamps, and the pages written since (see :class:`Snapshot`). A write records only
        #: its pages in the delta while the database still holds this base; None: the stamps
        #: came from the table, and the next write saves the snapshot whole.
        self._base: bytes | None = None
        self._base_key: StampsKey | None = None
        self._delta: dict[str, Entry] = {}
        self._delta_at: dict[str, int] = {}  # (see Snapshot.at)
        #: path -> digest of the pages the racy-stamp guard checks again (see RACY_NS)
        self._racy: dict[str, bytes] = {}
        self._token: bytes | None = None  # see state
        #: decoded pages, built on first use of :attr:`pages` and kept in step after that
        self._pages: dict[str, Page] | None = None
        self._unstored: dict[str, Page] = {}  # pages whose names no database can hold (not UTF-8)
        #: what a page list shows of every page, as the first walk's workers parsed them, and the
        #: state it is of (:meth:`take_listing`)
        self._first_listing: tuple[bytes | None, dict[str, PageSummary]] | None = None
        self._stamps_loaded = False
        self._first = True  # no refresh yet: a walk started ahead (walker.walk_ahead) may be taken
        self._loaded = False  # the tree was walked once: every page on disk is in _stamps
        #: Every non-page file the last full walk saw (``Attachments/a.png``), for link resolution.
        self.attachments: tuple[str, ...] = ()
        self._extensions: list[StoreExtension] = []
        #: Run on the bodies of every page the next bulk parses in worker processes parse (see
        #: :data:`Byproduct`), its answers kept in :attr:`byproducts` for whoever set it.
        self.byproduct: Byproduct | None = None
        #: path -> ((mtime_ns, size) of the bytes parsed, the byproduct's value for them)
        self.byproducts: dict[str, tuple[tuple[int, int], Any]] = {}
        self._conn = self._connect()

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
                # a bulk build writes ~100 MB through the WAL: give the space back afterwards
                conn.execute("PRAGMA journal_size_limit=4194304")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                dropped = drop_tables(conn, ("pages", "records", "link_names", "page_names", "snapshot",
                                             "racy", "derived", "derived_at", "changes"))
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                if dropped:
                    reclaim(conn)  # (the old cache's pages: without it, free space in the file for good)
            # The small table every refresh reads whole; the records only when pages are decoded.
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pages (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,"
                " title TEXT, layer TEXT, trust REAL, created TEXT) WITHOUT ROWID"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS records (path TEXT PRIMARY KEY, record BLOB)")
            # The stamps of every page in one go (see the module docstring); any change to
            # ``pages`` deletes its token, and the store writes it again at the end of its own writes.
            conn.execute("CREATE TABLE IF NOT EXISTS snapshot (part TEXT PRIMARY KEY, data BLOB)")
            _snapshot_triggers(conn)
            # Pages the racy-stamp guard reads again (see RACY_NS), with the digest of their bytes.
            conn.execute("CREATE TABLE IF NOT EXISTS racy (path TEXT PRIMARY KEY, digest BLOB) WITHOUT ROWID")
            # Data derived from every page (the graph's resolved edges), valid for one state: see derived().
            conn.execute("CREATE TABLE IF NOT EXISTS derived (name TEXT PRIMARY KEY, token BLOB, data BLOB)")
            _derived_states(conn)
            # Each state's predecessor and the paths its write changed (NULL: too many to list).
            conn.execute("CREATE TABLE IF NOT EXISTS changes (token BLOB PRIMARY KEY, prev BLOB, paths BLOB)")
            # name hash -> the record's rowid: see the module docstring
            for table in ("link_names", "page_names"):
                conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (h INTEGER, src INTEGER,"
                             " PRIMARY KEY (h, src)) WITHOUT ROWID")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The store's one connection, held for the block: nothing else (a refresh, an extension,
        another thread) uses it meanwhile, so a read never sees half of a store transaction and
        an extension's own transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``) is not interleaved."""
        with self._lock:
            yield self._conn

    @property
    def loaded(self) -> bool:
        """Whether the tree was walked once (every page on disk is known): a process that never
        loaded the cache (a one-shot CLI call) need not keep it in step after an action."""
        return self._loaded

    def add_extension(self, ext: StoreExtension) -> None:
        with self._lock:
            self._extensions.append(ext)
            ext.setup(self._conn)

    # --- stamps ----------------------------------------------------------------------
    @property
    def _stamps(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every cached page: what a refresh compares (made from the
        snapshot on first use: an unchanged wiki's one-shot command never needs it by page)."""
        stamps = self._stamp_map
        if stamps is None:
            snap = self._snap
            stamps = self._stamp_map = {} if snap is None else dict(
                zip(snap.paths, zip(snap.mtimes, snap.sizes, strict=True), strict=True))
        return stamps

    @property
    def _snap(self) -> Stamps | None:
        """The snapshot's stamps as lists (decoded on first use)."""
        snap = self._snap_lists
        if snap is None and self._snap_key is not None:
            snap = self._snap_lists = stamps_of(self._snap_key)
        return snap

    def _set_snap(self, key: StampsKey | None, lists: Stamps | None = None) -> None:
        self._snap_key, self._snap_lists, self._snap_names = key, lists, None

    def _stamp_of(self, path: str) -> tuple[int, int] | None:
        """The (mtime_ns, size) of the cached page at ``path`` (None: none), read from the
        snapshot's flat stamps while no one has made them a dict (a scan of one string)."""
        stamps = self._stamp_map
        if stamps is not None or self._snap_key is None:
            return self._stamps.get(path)
        names = self._snap_names
        if names is None:
            names = self._snap_names = f"\0{self._snap_key[0]}\0"
        i = _base_place(names, path)
        if i < 0:
            return None
        _, mtimes, sizes = self._snap_key
        return array("q", mtimes[8 * i:8 * i + 8])[0], array("q", sizes[8 * i:8 * i + 8])[0]

    def _known(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` that are cached pages. While the stamps are the snapshot's, a few
        are looked up in its paths as they are (a scan of one string each), many in a set."""
        stamps = self._stamp_map
        if stamps is None and len(paths) > 16:
            stamps = self._stamps
        if stamps is not None:
            return [p for p in paths if p in stamps]
        names = self._snap_names
        if names is None:
            assert self._snap_key is not None  # (no stamp map only while there is a snapshot)
            names = self._snap_names = f"\0{self._snap_key[0]}\0"
        return [p for p in paths if f"\0{p}\0" in names]

    def _count(self) -> int:
        stamps, key = self._stamp_map, self._snap_key
        if stamps is not None or key is None:
            return len(self._stamps)
        return key[0].count("\0") + 1 if key[0] else 0

    # --- reading ----------------------------------------------------------------------
    @property
    def pages(self) -> dict[str, Page]:
        """All pages by root-relative path (refreshing once on first use, decoding on first use)."""
        if not self._loaded:
            self.refresh(keep_pages=True)
        pages = self._pages
        if pages is None:
            if self._lock._is_owned():  # type: ignore[attr-defined]
                return self._decode_all()  # (asked inside the store's lock: nothing can write meanwhile)
            with self._decoding:
                pages = self._decode_all()
        return pages

    def _decode_all(self) -> dict[str, Page]:
        """Decode every page into :attr:`pages`. The records are read under the store's lock and
        decoded outside it (1.7 s at 100,000 pages, during which the station's other reads, a
        page, a saved answer, waited); a write meanwhile (see ``_writes``) has them read and
        decoded again."""
        while True:
            with self._lock:
                if self._pages is not None:
                    return self._pages
                writes, stamps = self._writes, self._stamps
                rows = self._conn.execute("SELECT path, record FROM records ORDER BY path").fetchall()
            out: dict[str, Page] = {}
            stale: list[str] = []
            loads, from_row = decode_record, Page.from_row
            with gc_paused():
                for path, rec in rows:
                    if path not in stamps:
                        continue
                    try:
                        out[path] = from_row(loads(rec))
                    except (ValueError, TypeError, EOFError, KeyError, zlib.error):
                        stale.append(path)  # an unreadable row is parsed again
                del rows
            with self._lock, gc_paused():
                if self._pages is not None:
                    return self._pages
                if self._writes != writes:
                    continue  # (written meanwhile: the rows read may be older than the stamps)
                for path, page in self._unstored.items():  # names no database holds (see _write)
                    if path in stamps:
                        out[path] = page
                if stale:
                    for path in stale:
                        stamps.pop(path, None)
                    self._refresh_paths(stale, out)
                self._pages = out
                return out

    def release_pages(self) -> None:
        """Let go of every decoded page (:attr:`pages` decodes them again when asked for; a page
        is read by itself meanwhile): for a one-shot command that decoded them for one pass and
        has much else to hold after it (a dedup scan's features: 124 MB at 32,000 pages, held
        through the counting and the basis's save)."""
        with self._lock:
            self._pages = None

    def take_listing(self) -> dict[str, PageSummary] | None:
        """What a page list shows of every page (by path), as the first refresh's parse workers
        sent it (``refresh(keep_pages=True)`` on an empty cache), while the store is still at the
        state that refresh wrote; None otherwise. Taken once."""
        with self._lock:
            found, self._first_listing = self._first_listing, None
            return found[1] if found is not None and found[0] is not None and found[0] == self._token else None

    @property
    def decoded(self) -> bool:
        """Whether every page is decoded in memory (:attr:`pages` was asked for)."""
        return self._pages is not None

    @property
    def partial_reads(self) -> bool:
        """Whether :meth:`pages_named` and :meth:`pages_linking` answer exactly from the tables:
        every page is in the database (no page whose name it cannot hold)."""
        if not self._loaded:
            self.refresh()
        return not self._unstored

    def page(self, path: str) -> Page | None:
        """The page at ``path`` (None when there is none), decoding only its record."""
        if not self._loaded:
            self.refresh()
        pages = self._pages
        if pages is not None:
            return pages.get(path)
        if not self._known([path]):
            return None
        if path in self._unstored:
            return self._unstored[path]
        return self._decode_where("path=?", (path,)).get(path)

    def pages_named(self, names: Iterable[str]) -> dict[str, Page]:
        """Every page a link could reach by one of ``names`` (its slug, file name, title or an
        alias is one of them), and maybe a few more (a hash collision): decoded from their
        records only."""
        return self._pages_by("page_names", names)

    def pages_linking(self, names: Iterable[str]) -> dict[str, Page]:
        """Every page with a link whose target's key, or its last segment, is one of ``names``
        (and maybe a few more)."""
        return self._pages_by("link_names", names)

    def _pages_by(self, table: str, names: Iterable[str]) -> dict[str, Page]:
        if not self._loaded:
            self.refresh()
        hashes = sorted({name_hash(n) for n in names})
        if not hashes:
            return {}
        pages = self._pages
        with self._lock:
            rows = self._conn.execute(
                f"SELECT DISTINCT r.path FROM {table} n JOIN records r ON r.rowid = n.src"
                f" WHERE n.h IN ({','.join('?' * len(hashes))})", hashes).fetchall()
        paths = self._known([r[0] for r in rows])
        if pages is not None:
            return {p: pages[p] for p in paths if p in pages}
        return self._decode_paths(paths)

    def pages_at(self, paths: Iterable[str]) -> dict[str, Page]:
        """The pages at ``paths`` that there are (refreshing once on first use), decoding only their records."""
        if not self._loaded:
            self.refresh()
        pages = self._pages
        if pages is not None:
            return {p: pages[p] for p in paths if p in pages}
        known = self._known(list(paths))
        out = {p: self._unstored[p] for p in known if p in self._unstored}
        out.update(self._decode_paths([p for p in known if p not in out]))
        return out

    def _decode_paths(self, paths: list[str]) -> dict[str, Page]:
        out: dict[str, Page] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            out.update(self._decode_where(f"path IN ({','.join('?' * len(chunk))})", chunk))
        return out

    def _decode_where(self, where: str, args: Iterable[Any], retry: bool = True) -> dict[str, Page]:
        out: dict[str, Page] = {}
        with self._lock, gc_paused():
            rows = self._conn.execute(f"SELECT path, record FROM records WHERE {where}", tuple(args)).fetchall()
            for path, rec in rows:
                try:
                    out[path] = Page.from_row(decode_record(rec))
                except (ValueError, TypeError, EOFError, KeyError, zlib.error):
                    if not retry:
                        continue
                    self._stamps.pop(path, None)  # an unreadable row is parsed again
                    self._refresh_paths([path], None)
                    out.update(self._decode_where("path=?", (path,), retry=False))
        return out

    @property
    def paths(self) -> list[str]:
        """Every page path, sorted (refreshing once on first use; decodes nothing)."""
        if not self._loaded:
            self.refresh()
        return sorted(self._stamps)

    def paths_under(self, *folders: str) -> list[str]:
        """The page paths under any of ``folders``, sorted (refreshing once on first use; decodes
        nothing): found in the snapshot's paths as one string while no one has made them a dict
        (listing and sorting all 300,000 paths to find the auto-filed ones cost 0.3 s of health)."""
        if not self._loaded:
            self.refresh()
        prefixes = tuple(folder.strip("/") + "/" for folder in folders)
        with self._lock:
            if self._stamp_map is None and self._snap_key is not None:
                names = self._snap_names
                if names is None:
                    names = self._snap_names = f"\0{self._snap_key[0]}\0"
                pattern = "\0((?:" + "|".join(map(re.escape, prefixes)) + ")[^\0]*)(?=\0)"
                return sorted({m.group(1) for m in re.finditer(pattern, names)})
            return sorted(p for p in self._stamps if p.startswith(prefixes))

    def stamps(self, paths: Iterable[str] | None = None, *, walk: bool = True) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every page by path (of those of ``paths`` that are pages), as of
        the last refresh (refreshing once on first use; decodes nothing): what data kept page by
        page elsewhere (the fact index) compares its own stamps with, where :attr:`pages` would
        decode every record (~1 s at 32,000 pages) to give the same two numbers.

        ``walk=False``: in a process that has not walked the tree, the stamps as the database
        holds them (the last walk's, any process's, and every action's since) rather than a walk
        of every folder now: what a one-shot command that answers from the cache as it stands
        (an append's similar facts) compares with."""
        with self._lock:
            if not self._loaded:
                if not walk and not self._stamps_loaded:
                    self._load_state()
                # (a database that holds no page, one never filled or deleted since, says nothing
                # of the pages: they are walked, never answered as none)
                if walk or not self._stamps:
                    self.refresh()
            stamps = self._stamps
            if paths is None:
                return dict(stamps)
            return {p: stamp for p in paths if (stamp := stamps.get(p)) is not None}

    def warm(self) -> bool:
        """Whether this store was loaded, or its database holds the pages as a walk saved them
        (a first refresh then parses only the pages changed since, never every page in bulk)."""
        if self._loaded:
            return True
        with self._lock:
            return self._conn.execute("SELECT 1 FROM snapshot WHERE part='token'").fetchone() is not None

    def count(self) -> int:
        """How many pages there are (refreshing once on first use; decodes nothing)."""
        if not self._loaded:
            self.refresh()
        return self._count()

    def known(self, paths: Iterable[str]) -> set[str]:
        """Those of ``paths`` that are pages (refreshing once on first use; decodes nothing): a
        few looked up in the snapshot's paths as they are, without making every page's stamp a
        dict the store then holds (50 MB at 300,000 pages) as :meth:`stamps` does."""
        if not self._loaded:
            self.refresh()
        return set(self._known(list(paths)))

    def has(self, path: str) -> bool:
        """Whether there is a page at ``path`` (refreshing once on first use; decodes nothing)."""
        if not self._loaded:
            self.refresh()
        return bool(self._known([path]))

    def attachments_key(self) -> bytes:
        """A digest of the attachment files the last walk saw (:attr:`attachments`): what data
        saved under a :attr:`state` also depends on when links were resolved for it (the files
        are not part of the state)."""
        from hashlib import blake2b

        files = "\0".join(self.attachments).encode("utf-8", "surrogateescape")
        return blake2b(files, digest_size=16).digest()

    def summaries(self) -> list[tuple[str, int, str, str, float]]:
        """(path, bytes, title, layer, trust) of every page, by path, without decoding a record."""
        if not self._loaded:
            self.refresh()
        with self._lock:
            columns = self._listing() if self._info is None else None
            if columns is not None:
                # as the snapshot holds them (nothing written since): the columns, zipped in C
                return list(zip(*columns[:5], strict=True))
            info, stamps = self._infos(), self._stamps
            paths = sorted(stamps)
            return [(p, size, title, layer, trust) for p, (_, size), (title, layer, trust, _)
                    in zip(paths, map(stamps.__getitem__, paths), map(info.__getitem__, paths), strict=True)]

    def details(self) -> dict[str, Details]:
        """(title, layer, trust, created) of every page by path, from the listing (refreshing
        once on first use; decodes no record): what ranks pages by the keep rule (more trust,
        then older) without decoding every page (~1 s at 32,000 pages)."""
        if not self._loaded:
            self.refresh()
        with self._lock:
            return dict(self._infos())

    def _infos(self) -> dict[str, Details]:
        """(title, layer, trust, created) by path (decoded from the snapshot read with the stamps)."""
        info = self._info
        if info is None:
            columns = self._listing()
            if columns is not None:
                paths, _, titles, layers, trusts, created = columns
                info = dict(zip(paths, zip(titles, layers, trusts, created, strict=True), strict=True))
            else:  # (no listing in the snapshot, or one that does not decode: the table has it)
                info = {r[0]: r[1:] for r in self._conn.execute("SELECT path, title, layer, trust, created FROM pages")}
            self._info, self._info_blob = info, None
        return info

    def _listing(self) -> Listing | None:
        """The snapshot's listing columns as of now (its base's, the delta applied)."""
        columns = _listing(self._info_blob)
        return _patched_listing(columns, self._delta) if columns is not None and self._delta else columns

    def _use_snapshot(self, snap: Snapshot | None) -> None:
        """Take ``snap`` as the stamps and listing of the pages (decoded when first asked for)."""
        if snap is None:
            self._set_snap(None)
            self._base, self._base_key, self._delta, self._delta_at = None, None, {}, {}
            return
        self._set_snap(snap.key)
        self._base, self._base_key, self._delta, self._delta_at = snap.base, snap.base_key, snap.delta, snap.at
        self._stamp_map = None  # (made from the snapshot when first asked for)
        self._info, self._info_blob = None, snap.info

    def _load_state(self) -> None:
        """Read the stamps (from the snapshot when there is one, else from the table) and the
        racy-stamp guard's entries, in one read transaction."""
        conn = self._conn
        self._use_snapshot(None)
        self._info = self._info_blob = self._token = None
        conn.execute("BEGIN")
        try:
            parts = dict(conn.execute("SELECT part, data FROM snapshot").fetchall())
            self._racy = dict(conn.execute("SELECT path, digest FROM racy").fetchall())
            snap = _read_snapshot(parts)
            if snap is not None:
                self._use_snapshot(snap)
                self._token = parts["token"]
            else:
                rows = conn.execute("SELECT path, mtime_ns, size, title, layer, trust, created FROM pages").fetchall()
                self._stamp_map = {r[0]: (r[1], r[2]) for r in rows}
                self._info = {r[0]: (r[3], r[4], r[5], r[6]) for r in rows}
        finally:
            conn.execute("COMMIT")
        self._stamps_loaded = True

    def _save_snapshot(self, order: list[str] | None, updates: dict[str, Entry], changed: list[str],
                       prev: bytes | None) -> None:
        """Write the snapshot (inside the caller's transaction, after its changes to ``pages``:
        ``updates``, the new :data:`Entry` of each page it wrote or removed) and the new state's
        entry in ``changes``: the ``changed`` paths since the state ``prev`` (None: the state
        before is not known).

        ``order``: the paths in the order a full scan found them, saved whole; None: the pages
        keep the snapshot's order, added pages last, and while the database holds the base this
        process knows and the delta stays small (:data:`DELTA_MAX`), only the delta is written
        (an append to one page of 100,000 writes one row of a few bytes, not every page's stamp)."""
        conn = self._conn
        token = os.urandom(8)  # names this state of the pages: see derived()
        if order is None and self._base is not None and self._base_key is not None:
            held = conn.execute("SELECT data FROM snapshot WHERE part='base'").fetchone()
            delta, at = dict(self._delta), dict(self._delta_at)
            # (more pages than a delta holds: the snapshot is saved whole below, and none is
            # placed; placed one by one, each a search of every path, re-stamping every page of a
            # copied wiki took hours at 300,000 pages)
            small = len(delta.keys() | updates.keys()) <= DELTA_MAX
            unplaced = [p for p in updates if p not in at] if small else []
            at.update(_base_places(self._base_key[0], unplaced))
            for path, entry in updates.items() if small else ():
                place = at[path]
                if entry is None and place < 0:
                    delta.pop(path, None)  # (added since the base, and gone again)
                    at.pop(path, None)
                else:
                    delta[path] = entry
            if held is not None and held[0] == self._base and small:  # (then len(delta) <= DELTA_MAX too)
                entries = [(p, at[p]) if e is None else (p, at[p], *e) for p, e in delta.items()]
                blob = zlib.compress(marshal.dumps((SNAPSHOT_FORMAT, self._base, entries)), 1)
                conn.executemany("INSERT OR REPLACE INTO snapshot VALUES (?, ?)",
                                 [("delta", blob), ("token", token)])
                self._delta, self._delta_at = delta, at
                self._set_snap(_patched(self._base_key, delta, at))
                self._log_change(token, changed, prev)
                return
        stamps, info, unstored = self._stamps, self._infos(), self._unstored
        snap = self._snap
        for path, entry in updates.items():  # (idempotent: a write with the maps made applied them)
            if entry is None:
                stamps.pop(path, None)
                info.pop(path, None)
            else:
                stamps[path], info[path] = entry[:2], entry[2:]
        if order is None:
            # the snapshot's order, pages added last; none: the order a walk finds them in (which
            # the next scan may not: it then compares page by page once and saves its own)
            order = list(dict.fromkeys([*snap.paths, *updates])) if snap is not None else sorted(stamps, key=walk_order)
        paths = [p for p in order if p in stamps and p not in unstored]
        pairs = [stamps[p] for p in paths]
        lists = Stamps(paths, [m for m, _ in pairs], [s for _, s in pairs])
        listed = sorted(paths)
        details = [info[p] for p in listed]
        # (compressed: the paths share long prefixes, and the cache must stay smaller than the pages)
        key = stamps_key(lists)
        stamps_blob = zlib.compress(marshal.dumps((SNAPSHOT_FORMAT, *key)), 1)
        info_blob = zlib.compress(marshal.dumps(("\0".join(listed), array("q", [stamps[p][1] for p in listed]).tobytes(),
                                                 [d[0] for d in details], [d[1] for d in details],
                                                 [d[2] for d in details], [d[3] for d in details])), 1)
        base = os.urandom(8)
        conn.execute("DELETE FROM snapshot WHERE part='delta'")
        conn.executemany("INSERT OR REPLACE INTO snapshot VALUES (?, ?)",
                         [("stamps", stamps_blob), ("info", info_blob), ("base", base), ("token", token)])
        self._set_snap(key, lists)
        self._base, self._base_key, self._delta, self._delta_at = base, key, {}, {}
        self._log_change(token, changed, prev)

    def _log_change(self, token: bytes, changed: list[str], prev: bytes | None) -> None:
        """Make ``token`` the state, recorded in ``changes`` as following ``prev`` by ``changed``."""
        conn = self._conn
        listed_changes = (zlib.compress("\0".join(changed).encode("utf-8", "surrogateescape"), 1)
                          if len(changed) <= CHANGES_MAX_PATHS else None)
        conn.execute("INSERT OR REPLACE INTO changes VALUES (?, ?, ?)", (token, prev, listed_changes))
        conn.execute("DELETE FROM changes WHERE rowid <= (SELECT max(rowid) FROM changes) - ?", (CHANGES_KEPT,))
        self._token = token

    def current(self) -> bytes | None:
        """:attr:`state` after the pages were refreshed once in this process (on first use, as
        :meth:`stamps` refreshes), without copying every page's stamp as :meth:`stamps` does (70 ms
        at 300,000 pages): what asks only whether the pages are still as something saw them."""
        with self._lock:
            if not self._loaded:
                self.refresh()
            return self._token

    @property
    def state(self) -> bytes | None:
        """A token naming the state of the cached pages as this process last saw it (refreshed):
        a new one after every change the store writes, and none when the table was changed by
        other means since (the snapshot is gone). Data derived from every page can be saved
        under it (:meth:`save_derived`) and is answered again only for the same state."""
        return self._token

    def derived(self, name: str) -> bytes | None:
        """The data saved as ``name`` under the current :attr:`state` (None: none, or another state)."""
        with self._lock:
            token = self._token
            if token is None:
                return None
            # (the data of another state is not read: 7 MB for the link answer)
            row = self._conn.execute("SELECT data FROM derived WHERE name=? AND EXISTS (SELECT 1 FROM"
                                     " derived_at WHERE name=? AND token=?)", (name, name, token)).fetchone()
        if row is None:
            return None
        data: bytes = row[0]
        return data

    def derived_any(self, name: str) -> bytes | None:
        """The data saved as ``name`` under whichever state (None: none): what another saved
        entry names by an id inside it (a dedup result kept as changes to a whole one)."""
        with self._lock:
            row = self._conn.execute("SELECT data FROM derived WHERE name=?", (name,)).fetchone()
        if row is None:
            return None
        data: bytes = row[0]
        return data

    def racy_digest(self, path: str) -> bytes | None:
        """The :func:`digest` of the page's bytes as the last refresh read them, while the
        racy-stamp guard still checks the page (its stamp may hide a same-size rewrite); None for
        a page whose stamp is to be trusted. Data derived from pages read again elsewhere (the dedup
        scan, :mod:`curator.engine.dedup.cache`) is checked by this same rule."""
        with self._lock:
            return self._racy.get(path)

    def derived_since(self, name: str) -> Saved | None:
        """The data saved as ``name`` under the current :attr:`state` or an earlier one, and the
        paths that may differ since (the pages written or removed by every state after it, and
        the pages no database holds, parsed again by each process); None when there is none, or
        what changed since it was saved is not known."""
        with self._lock:
            token, conn = self._token, self._conn
            if token is None:
                return None
            begun = not conn.in_transaction
            if begun:  # (the state and the data read as one: another process may save between)
                conn.execute("BEGIN")
            try:
                row = conn.execute("SELECT token FROM derived_at WHERE name=?", (name,)).fetchone()
                if row is None:
                    return None
                saved = row[0]
                steps = {t: (prev, paths) for t, prev, paths in conn.execute("SELECT * FROM changes")}
                changed: set[str] = set()
                at: bytes | None = token
                while at != saved:
                    step = steps.pop(at, None) if at is not None else None
                    if step is None or step[1] is None:
                        return None  # the chain back to the saved state is broken, or a step is too big
                    at = step[0]
                    changed.update(zlib.decompress(step[1]).decode("utf-8", "surrogateescape").split("\0"))
                found = conn.execute("SELECT data FROM derived WHERE name=?", (name,)).fetchone()
            finally:
                if begun:
                    conn.execute("COMMIT")
            unstored = set(self._unstored)
        if found is None:
            return None
        changed.discard("")
        if changed:
            changed |= unstored  # (only when something changed: an unchanged state is answered as derived())
        return Saved(found[0], changed, saved)

    def carry_derived(self, name: str, found: Saved, state: bytes | None = None) -> None:
        """:meth:`save_derived` of what :meth:`derived_since` ``found`` saved as ``name``, when
        it still holds for this state: the saved row is stamped with the state (in ``derived_at``),
        its bytes not written again, unless another process saved others since."""
        self._save_derived(name, found[0], state, carried=found.at)

    def save_derived(self, name: str, data: bytes, state: bytes | None = None,
                     then: Callable[[], None] | None = None,
                     unless: tuple[str, bytes] | None = None) -> bool:
        """Save ``data`` (computed from every page as of :attr:`state`) as ``name``; not saved when
        the database holds another state by now (another process changed pages meanwhile), nor,
        with ``state`` (the :attr:`state` read before computing it), when this store has moved on
        from that one since (a refresh on another thread wrote meanwhile). Whether it was saved.
        ``then``: called once the row is written, before it is committed, only when it is (the
        file ``data`` names moved into place: both or neither); what it raises rolls it back.
        ``unless`` (another name, a prefix): not saved while what is saved as that name does not
        start with that prefix, read in the same transaction (a result naming a basis that
        another process replaced meanwhile: saved, the next process would scan)."""
        return self._save_derived(name, data, state, then=then, unless=unless)

    def save_derived_together(self, rows: Sequence[tuple[str, bytes]], state: bytes | None = None,
                              then: Callable[[], None] | None = None) -> bool:
        """:meth:`save_derived` of several names in one transaction: every one of ``rows``
        (name, data) saved, and ``then`` done, or none (a dedup basis and the result that names
        it: saved apart, a page changed between the two left the cache naming a new basis and
        a result of the old one, and the next process scanned). Whether they were saved."""
        if not rows:
            return False
        (name, data), *more = rows
        return self._save_derived(name, data, state, then=then, more=more)

    def _save_derived(self, name: str, data: bytes, state: bytes | None, carried: bytes | None = None,
                      then: Callable[[], None] | None = None, unless: tuple[str, bytes] | None = None,
                      more: Sequence[tuple[str, bytes]] = ()) -> bool:
        with self._lock:
            token, conn = self._token, self._conn
            if token is None or (state is not None and state != token):
                return False
            # Another process writing (a cold index) must not hold up the answer: a short wait,
            # then the data is left for a later call to save.
            conn.execute("PRAGMA busy_timeout=100")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return False
            finally:
                conn.execute("PRAGMA busy_timeout=10000")  # (the connection's own, see _open)
            done = False
            try:
                current = conn.execute("SELECT data FROM snapshot WHERE part='token'").fetchone()
                if current is None or current[0] != token:
                    return False
                if unless is not None:
                    other = conn.execute("SELECT data FROM derived WHERE name=?", (unless[0],)).fetchone()
                    if other is None or not bytes(other[0]).startswith(unless[1]):
                        return False
                stamped = carried is not None and conn.execute(
                    "UPDATE derived_at SET token=? WHERE name=? AND token=?", (token, name, carried)).rowcount == 1
                if not stamped:  # (another process saved other bytes meanwhile: these, whole)
                    conn.execute("INSERT OR REPLACE INTO derived VALUES (?, ?, ?)", (name, token, data))
                conn.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?, ?)",
                                 [(other, token, value) for other, value in more])
                if then is not None:
                    then()
                done = True
                return True
            finally:
                conn.execute("COMMIT" if done or (then is None and not more) else "ROLLBACK")

    def refresh(self, paths: Iterable[str] | None = None,
                progress: Callable[[int, int], None] | None = None,
                walking: Callable[[int, int], None] | None = None, *, keep_pages: bool = False) -> ChangeSet:
        """Bring the cache up to date with the disk; return what changed.

        With ``paths`` only those files are checked (an action knows what it touched); without,
        the whole tree is walked and compared by (mtime, size). ``progress(done, total)`` is called
        as stale pages are parsed (the station's progress bar); an exception it raises (a cancel)
        rolls the refresh back. ``walking(found, expected)`` is called as the walk finds pages
        (see :func:`~curator.engine.corpus.walker.scan`), ``expected`` the number of pages cached (0: none, a first
        open); an exception it raises stops the refresh before anything is written.
        ``keep_pages``: when nothing is cached yet (every page is parsed), keep the parsed pages
        as :attr:`pages` (not decoded again from the records just written); those parsed by
        worker processes, what a page list shows of them instead (:meth:`take_listing`).
        """
        with self._lock, gc_paused():
            self._writes += 1
            adopted = None
            if not self._stamps_loaded:
                self._load_state()
            else:
                adopted = self._adopt()
            # A walk started ahead for this root is the first refresh's, or no one's: after
            # anything was written it would be out of date.
            ahead = take_ahead(self._real_root) if self._first else None
            self._first = False
            if paths is not None:
                changes = self._refresh_paths(list(paths), self._pages)
            else:
                changes = self._refresh_all(progress, walking, keep_pages, ahead)
            if adopted:  # (what changed for this store: known before the adoption, and now)
                theirs, before = adopted.paths, {*adopted.modified, *adopted.removed}
                now, mine = set(self._known(theirs)), set(theirs)
                changes.added = [*(p for p in theirs if p in now and p not in before),
                                 *(p for p in changes.added if p not in mine)]
                changes.modified = [*(p for p in theirs if p in now and p in before),
                                    *(p for p in changes.modified if p not in mine)]
                changes.removed = [*(p for p in theirs if p not in now and p in before),
                                   *(p for p in changes.removed if p not in mine)]
            return changes

    # --- another process's writes -------------------------------------------------------
    def _adopt(self) -> ChangeSet | None:
        """Take the state another process wrote since this one's (the station's dedup worker, a
        CLI command) instead of parsing its pages again and writing a state of our own, which
        would leave the chain of states (see :meth:`derived_since`) with a step of unknown
        predecessor, and the other process's derived data refused (:meth:`save_derived`).

        Only when every step from this store's state to the database's is known (its predecessor
        and its listed paths): then the database holds this store's pages but for those paths,
        whose stamps, listing, racy-stamp digests and records are read from it, exactly as a new
        process would read them (the next refresh compares them with the disk, racy pages read
        again). Not with an extension fed (the search index needs each page's text, which the
        records do not hold: such a store parses those pages itself, see :meth:`_write`). Returns
        what changed for this store (None: nothing adopted)."""
        token, conn = self._token, self._conn
        if token is None or any(ext.active() for ext in self._extensions):
            return None
        conn.execute("BEGIN")
        try:
            row = conn.execute("SELECT data FROM snapshot WHERE part='token'").fetchone()
            if row is None or row[0] == token:
                return None
            changed = self._steps_between(row[0], token)
            if changed is None:
                return None
            changed = {p for p in changed if utf8_name(p)}  # (the others: parsed by each process)
            parts = dict(conn.execute("SELECT part, data FROM snapshot").fetchall())
            current = parts.get("token")
            snap = _read_snapshot(parts)
            if current is None or snap is None:
                return None
            rows = conn.execute(
                "SELECT p.path, p.mtime_ns, p.size, p.title, p.layer, p.trust, p.created, r.record, y.digest FROM pages p"
                " JOIN records r ON r.path = p.path LEFT JOIN racy y ON y.path = p.path"
                " WHERE p.path IN (SELECT value FROM json_each(?))", (json.dumps(sorted(changed)),)).fetchall()
        finally:
            conn.execute("COMMIT")
        try:
            pages = {r[0]: Page.from_row(decode_record(r[7])) for r in rows} if self._pages is not None else {}
        except (ValueError, TypeError, EOFError, KeyError, zlib.error):
            return None  # (parsed again by the refresh, as before)
        adopted = ChangeSet()
        before = set(self._known(sorted(changed)))
        now = {r[0] for r in rows}
        for path in sorted(changed):
            if path in now:
                (adopted.modified if path in before else adopted.added).append(path)
            elif path in before:
                adopted.removed.append(path)
        unstored = self._unstored  # (in memory only: kept as they are)
        kept = [(p, self._stamps[p], self._infos()[p]) for p in unstored if p in self._stamps]
        self._use_snapshot(snap)
        self._token = current
        if kept:
            self._stamps.update((p, stamp) for p, stamp, _ in kept)
            self._infos().update((p, info) for p, _, info in kept)
        racy = self._racy
        for path, *_, page_digest in rows:
            if page_digest is not None:
                racy[path] = page_digest
            else:
                racy.pop(path, None)
        for path in adopted.removed:
            racy.pop(path, None)
        if self._pages is not None:
            for path in adopted.removed:
                self._pages.pop(path, None)
            self._pages.update(pages)
        return adopted

    def _holds_as_stored(self, paths: set[str]) -> bool:
        """Whether this store holds each of ``paths`` as the database's records do: the same
        (mtime, size) and, for a racy page (see :data:`RACY_NS`), the digest of the same bytes;
        or both without the page. Call inside a transaction."""
        if len(paths) > HOLDS_MAX:
            return False
        listed = sorted(paths)
        stored: dict[str, tuple[int, int] | None] = dict.fromkeys(listed)
        digests: dict[str, bytes] = {}
        for start in range(0, len(listed), 500):  # (SQLite's bound on a statement's variables)
            chunk = listed[start:start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(f"SELECT path, mtime_ns, size FROM pages WHERE path IN ({marks})", chunk)
            stored.update((path, (mtime, size)) for path, mtime, size in rows)
            digests.update(self._conn.execute(f"SELECT path, digest FROM racy WHERE path IN ({marks})", chunk))
        racy = self._racy
        return all(stored[p] == self._stamp_of(p) and digests.get(p) == racy.get(p) for p in listed)

    def _steps_between(self, current: bytes, token: bytes) -> set[str] | None:
        """The paths written by every state from ``token`` to ``current`` (None: a step is not
        known, or too big to list)."""
        steps = {t: (prev, paths) for t, prev, paths in self._conn.execute("SELECT * FROM changes")}
        changed: set[str] = set()
        at: bytes | None = current
        while at != token:
            step = steps.pop(at, None) if at is not None else None
            if step is None or step[1] is None:
                return None
            at = step[0]
            changed.update(zlib.decompress(step[1]).decode("utf-8", "surrogateescape").split("\0"))
        changed.discard("")
        return changed

    def _refresh_all(self, progress: Callable[[int, int], None] | None = None,
                     walking: Callable[[int, int], None] | None = None, keep_pages: bool = False,
                     ahead: tuple[int, StampsKey, list[str]] | None = None) -> ChangeSet:
        """The whole tree compared with the cache (``ahead``: the walk already made, see
        :func:`~curator.engine.corpus.walker.walk_ahead`)."""
        changes = ChangeSet()
        expected = self._count()
        kept: dict[str, Page] | None = {} if keep_pages and self._pages is None and not expected else None
        listing: dict[str, PageSummary] | None = None if kept is None else {}
        attachments: list[str] = []
        scanned: Stamps | None = None
        if ahead is not None:
            start, key, attachments = ahead
            if walking is not None:
                walking(len(key[1]) // 8, expected)
        else:
            found = None if walking is None else (lambda n: walking(n, expected))
            start = time.time_ns()  # before the first stat: the moment every stamp below is taken
            scanned = scan(self.root, attachments, progress=found)  # (in the order the folders list their files)
            key = stamps_key(scanned)
        if tuple(attachments) != self.attachments:
            changes.attachments = self._loaded  # the first walk is no change
            self.attachments = tuple(attachments)
        racy = self._racy
        if key == self._snap_key:
            # Nothing added, removed or re-stamped (the common case, compared in C, in the flat
            # form the snapshot keeps): only the racy pages are read again.
            if racy:
                again, done = self._recheck(list(racy), start, changes)
                if again or done:
                    self._write(again, [], self._pages, progress, racy_from=start - RACY_NS, settled=done)
            self._loaded = True
            return changes
        if self._snap_key is not None and key[0] == self._snap_key[0]:
            # The same pages in the same order, some re-stamped (an edit, an agent's append):
            # only those are looked at (no dict of every page's stamp is made).
            restamped, done = self._restamped(key, start, changes)
            if restamped or done:
                self._write(restamped, [], self._pages, progress, racy_from=start - RACY_NS, settled=done)
            self._loaded = True
            return changes
        disk = scanned if scanned is not None else stamps_of(key)
        stamps = self._stamps
        on_disk = dict(zip(disk.paths, zip(disk.mtimes, disk.sizes, strict=True), strict=True))
        stale: list[PageFile] = []
        same: list[str] = []
        for path, stamp in on_disk.items():
            known = stamps.get(path)
            if known is None:
                stale.append(PageFile(path, *stamp))
                changes.added.append(path)
            elif known != stamp:
                stale.append(PageFile(path, *stamp))
                changes.modified.append(path)
            elif path in racy:
                same.append(path)
        settled: list[str] = []
        if same:
            more, settled = self._recheck(same, start, changes)
            stale += more
        if len(stale) > 1:  # parsed and reported in walk order (the scan's is the folders' own)
            stale = [f for _, f in sorted(zip(map(walk_order, [f.path for f in stale]), stale, strict=True))]
            added = set(changes.added)
            changes.added = [f.path for f in stale if f.path in added]
            changes.modified = [f.path for f in stale if f.path not in added]
        removed = [p for p in stamps if p not in on_disk]
        changes.removed.extend(removed)
        snap, unstored = self._snap, self._unstored
        if (stale or removed or settled or snap is None
                or snap.paths != [p for p in disk.paths if p not in unstored]):
            # (every write saves the snapshot: here also when the last one is missing or stale;
            # whole, in the scan's order: see _save_snapshot)
            self._write(stale, removed, self._pages if kept is None else kept, progress,
                        racy_from=start - RACY_NS, order=disk.paths, settled=settled, listing=listing)
            if listing:  # (parsed by the workers: what a list shows of every page, not the pages)
                listing.update((path, PageSummary.of(page)) for path, page in (kept or {}).items())  # (the unstored)
                self._first_listing = self._token, listing
            elif kept is not None:  # in the order _decode_all gives (by path, then the unstored ones)
                unstored = self._unstored
                self._pages = {p: kept[p] for p in sorted(kept) if p not in unstored}
                self._pages.update((p, kept[p]) for p in unstored if p in kept)
        self._loaded = True
        return changes

    def _restamped(self, key: StampsKey, start: int, changes: ChangeSet) -> tuple[list[PageFile], list[str]]:
        """For a scan ``key`` listing the snapshot's very paths in its order: the pages whose
        stamps differ (found by comparing the packed stamps a block at a time) and the racy
        pages whose bytes changed, in walk order (added to ``changes.modified``), and the racy
        pages that settled (see :meth:`_recheck`)."""
        assert self._snap_key is not None
        _, known_mtimes, known_sizes = self._snap_key
        found = sorted({*_differing(key[1], known_mtimes), *_differing(key[2], known_sizes)})
        stale: list[PageFile] = []
        if found:
            names = key[0].split("\0")
            mtimes, sizes = array("q", key[1]), array("q", key[2])
            stale = [PageFile(names[i], mtimes[i], sizes[i]) for i in found]
        restamped = {f.path for f in stale}
        same = [p for p in self._racy if p not in restamped]
        again, settled = self._recheck(same, start, ChangeSet()) if same else ([], [])
        stale += again
        stale.sort(key=lambda f: walk_order(f.path))  # (parsed and reported in walk order, as a full compare)
        changes.modified += [f.path for f in stale]
        return stale, settled

    def _recheck(self, paths: list[str], start: int, changes: ChangeSet) -> tuple[list[PageFile], list[str]]:
        """The racy-stamp guard, for racy ``paths`` whose stamp is unchanged: the pages whose bytes
        differ from those parsed (stale: added to ``changes.modified``), and those whose bytes are
        the same and whose mtime is now safely older than ``start`` (settled: any later write
        would change their stamp, so they need no further check)."""
        stale: list[PageFile] = []
        settled: list[str] = []
        for path in paths:
            known = self._stamp_of(path)
            if known is None:  # (an entry left by a page gone from the table by other means)
                settled.append(path)
                continue
            mtime, size = known
            data = read_page_bytes(self._real_root, path)
            if data is None or data is _UNREADABLE or len(data) != size or digest(data) != self._racy[path]:
                stale.append(PageFile(path, mtime, size))
                changes.modified.append(path)
            elif mtime < start - RACY_NS:
                settled.append(path)
        return stale, settled

    def _refresh_paths(self, paths: list[str], pages: dict[str, Page] | None) -> ChangeSet:
        changes = ChangeSet()
        stale: list[PageFile] = []
        removed: list[str] = []
        same: list[str] = []
        folders: dict[str, bool] = {}
        racy = self._racy
        paths = list(dict.fromkeys(paths))
        if len(paths) > 16:
            _ = self._stamps  # (made once for many; a few are looked up in the snapshot: _stamp_of)
        start = time.time_ns()  # before the first stat (see _refresh_all)
        for path in paths:
            st = self._page_stat(path, folders)
            old = self._stamp_of(path)
            if st is None:
                if old is not None:
                    removed.append(path)
                    changes.removed.append(path)
                continue
            if old is None:
                changes.added.append(path)
            elif old[0] == st.st_mtime_ns and old[1] == st.st_size:
                if path in racy:
                    same.append(path)
                continue
            else:
                changes.modified.append(path)
            stale.append(PageFile(path, st.st_mtime_ns, st.st_size))
        settled: list[str] = []
        if same:
            more, settled = self._recheck(same, start, changes)
            stale += more
        if stale or removed or settled:
            # The snapshot keeps the last scan's order (pages gone are left out by _save_snapshot);
            # pages added go last: the next scan, which lists them elsewhere, compares page by
            # page once and saves its own order. Sorting every path into walk order instead cost
            # each merge or move of a 32,000-page wiki ~0.15 s.
            self._write(stale, removed, pages, parallel_min=max(PARALLEL_MIN, PARALLEL_MIN_PATHS),
                        racy_from=start - RACY_NS, settled=settled)
        return changes

    def _page_stat(self, path: str, folders: dict[str, bool] | None = None) -> os.stat_result | None:
        """The stat of a page file at ``path``, or None when the walker would not list it there:
        missing, not a regular file, in an excluded folder, a symlink, or reached through a
        symlinked folder (which may lead out of the root). ``folders`` remembers, for one batch,
        which folders were checked to be reached without a symlink (an action names thousands of
        pages in a few folders)."""
        if not is_page_path(path):
            return None
        full = os.path.join(self._real_root, path)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):  # (lstat: a symlink is not a regular file)
            return None
        folder = os.path.dirname(full)
        plain = None if folders is None else folders.get(folder)
        if plain is None:
            plain = os.path.realpath(folder) == os.path.normpath(folder)
            if folders is not None:
                folders[folder] = plain
        return st if plain else None

    def _parsed(self, stale: list[PageFile], with_body: bool, parallel_min: int | None = None,
                racy_from: int | None = None, names: list[tuple[int, str, str]] | None = None,
                listing: bool = False) -> Iterator[Parsed]:
        """Parse ``stale``: in worker processes when there are many, else here. From workers,
        the name hashes come per chunk: appended to ``names`` as (how many pages were answered
        before the chunk, its link name rows, its page name rows) (see :func:`parse_chunk`);
        with ``listing``, each head holds what a page list shows too (:func:`parse_files`)."""
        if len(stale) >= (PARALLEL_MIN if parallel_min is None else parallel_min) and names is not None:
            from curator.engine.corpus import (
                parallel,  # (multiprocessing: imported only when there is bulk work)
            )

            byproduct = self.byproduct
            chunks = parallel.map_chunks(parse_chunk, self._real_root, stale, with_body, racy_from, byproduct, listing)
            if chunks is not None:
                done = 0
                kept = self.byproducts
                for chunk, link_rows, page_rows, extra in chunks:
                    names.append((done, link_rows, page_rows))
                    done += len(chunk)
                    if extra is not None:
                        for (head, *_), value in zip(chunk, extra, strict=True):
                            kept[head[0]] = ((head[2], head[1]), value)
                    yield from chunk
                return
        yield from parse_files(self._real_root, stale, with_body, racy_from)

    def _write(self, stale: list[PageFile], removed: list[str], pages: dict[str, Page] | None,
               progress: Callable[[int, int], None] | None = None, parallel_min: int | None = None,
               racy_from: int | None = None, order: list[str] | None = None,
               settled: Iterable[str] = (), listing: dict[str, PageSummary] | None = None) -> None:
        """Parse and store ``stale``, drop ``removed``, forget the ``settled`` racy entries and
        save the snapshot (paths in ``order``: see :meth:`_save_snapshot`), in one transaction.
        Pages stamped at ``racy_from`` or later are racy (see :data:`RACY_NS`). ``listing``: what
        a page list shows of each page the parse workers sent goes in it instead of in ``pages``,
        its record not decoded.

        The stamps and listing by path are kept in step when they are made already; a few pages
        written by a process that never asked for them (an append's one page) do not make them."""
        self._writes += 1  # (see _decode_all)
        conn = self._conn
        active = [ext for ext in self._extensions if ext.active()]
        from_row = Page.from_row
        if len(stale) + len(removed) > 16 or not all(utf8_name(f.path) for f in stale):
            self._stamps, self._infos()  # (made now: a page no database holds lives in them only)
        known = set(self._known([f.path for f in stale]))
        stamps, info, racy = self._stamp_map, self._info, self._racy
        updates: dict[str, Entry] = {}
        bulk = len(stale) >= (PARALLEL_MIN if parallel_min is None else parallel_min)
        if bulk:
            conn.execute(f"PRAGMA cache_size = {BULK_CACHE_KIB}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if bulk:  # the token deleted once, as the first row's trigger would (see _snapshot_triggers)
                conn.execute("DELETE FROM snapshot WHERE part='token'")
                _snapshot_triggers(conn, drop=True)
            # the state this write follows: the one this process read, unless another wrote since
            current = conn.execute("SELECT data FROM snapshot WHERE part='token'").fetchone()
            prev = self._token if current is not None and current[0] == self._token else None
            if prev is None and current is not None and self._token is not None:
                # another process wrote since (see _adopt): this write still follows its state
                # when it writes again every page that process wrote since this one's, or holds
                # them as that process wrote them (the station wrote a change, its dedup worker
                # followed it, then the station writes the next: a store feeding the search index
                # cannot adopt the worker's state, see _adopt, but its pages are the same)
                since = self._steps_between(current[0], self._token)
                if since is not None:
                    others = since - {*removed, *(f.path for f in stale)}
                    if not others or self._holds_as_stored(others):
                        prev = current[0]
            unracy = [(p,) for p in settled if racy.pop(p, None) is not None]
            for path in removed:
                if stamps is not None:
                    stamps.pop(path, None)
                if info is not None:
                    info.pop(path, None)
                if racy.pop(path, None) is not None:
                    unracy.append((path,))
                self._unstored.pop(path, None)
                if pages is not None:
                    pages.pop(path, None)
                if not utf8_name(path):
                    continue  # never in the database (see below)
                updates[path] = None
                conn.execute("DELETE FROM pages WHERE path=?", (path,))
                self._drop_names([(path,)])
                conn.execute("DELETE FROM records WHERE path=?", (path,))
                for ext in self._extensions:
                    ext.delete(conn, path)
            batch: list[tuple[Any, ...]] = []
            # Each record gets its rowid here (the name tables point at it): the n-th page parsed
            # the n-th after every rowid there is, whether or not it is stored (a gap is harmless).
            first = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM records").fetchone()[0]
            records: list[tuple[int, str, bytes]] = []
            names: list[tuple[int, set[int], set[int]]] = []
            chunk_names: list[tuple[int, str, str]] = []  # from worker processes, see _parsed
            replaced: list[str] = []  # pages cached before: their old name rows go
            new_racy: list[tuple[str, bytes]] = []
            parsed = self._parsed(stale, bool(active), parallel_min, racy_from, chunk_names, listing is not None)
            for done, (head, record, link_hashes, own_hashes, body, page_digest, row) in enumerate(parsed, 1):
                if chunk_names:  # a chunk's name rows, as it comes in (not all at the end, on one core)
                    self._insert_names(first, chunk_names)
                path = head[0]
                stamp, details = (head[2], head[1]), (head[3], head[4], head[5], head[6])  # mtime, size; title, layer, trust, created
                if stamps is not None:
                    stamps[path] = stamp
                if info is not None:
                    info[path] = details
                # A page whose file name is not valid UTF-8 lives in memory only (parsed again by
                # each process): no UTF-8 database holds its name, and one such file must not stop
                # the rest. It is listed and linted, not searched.
                stored = utf8_name(path)
                if page_digest is not None:  # stamped a moment after its last write: checked again
                    racy[path] = page_digest
                    if stored:
                        new_racy.append((path, page_digest))
                elif racy.pop(path, None) is not None:
                    unracy.append((path,))
                if stored:
                    updates[path] = (*stamp, *details)
                    batch.append((path, *stamp, *details))
                    records.append((first + done - 1, path, record))
                    if link_hashes or own_hashes:
                        names.append((first + done - 1, link_hashes, own_hashes))
                    if path in known:
                        replaced.append(path)
                if listing is not None and row is None and stored and not active and len(head) > LISTED_AT:
                    # (from the workers, with what a list shows: no record decoded, 1.8 s of the
                    # writing process at 100,000 pages, while it shares the cores with them)
                    listing[path] = PageSummary(path, head[1], head[3], head[4], head[5], *head[LISTED_AT:])
                elif pages is not None or active or not stored:
                    page = from_row(row if row is not None else decode_record(record))
                    if not stored:
                        self._unstored[path] = page
                    if pages is not None:
                        pages[path] = page
                    if stored:
                        for ext in active:
                            ext.upsert(conn, page, body or "")
                if progress is not None and done % 250 == 0:
                    progress(done, len(stale))
                if len(batch) >= 2000:
                    self._flush(batch, records, names, replaced)
            self._flush(batch, records, names, replaced)
            self._insert_names(first, chunk_names)
            # (a page whose name is not UTF-8 is racy in memory only: never in the table)
            conn.executemany("DELETE FROM racy WHERE path=?", [u for u in unracy if utf8_name(u[0])])
            conn.executemany("INSERT OR REPLACE INTO racy VALUES (?, ?)", new_racy)
            if bulk:
                _snapshot_triggers(conn)  # (in the same transaction: a rollback keeps them too)
            # last: the rows written above have deleted the old one
            self._save_snapshot(order, updates, [*removed, *(f.path for f in stale)], prev)
            if progress is not None:
                progress(len(stale), len(stale))
            conn.execute("COMMIT")
            if len(stale) >= (PARALLEL_MIN if parallel_min is None else parallel_min):
                checkpoint(conn)
        except BaseException:
            if conn.in_transaction:  # (SQLite rolls back by itself on a full disk)
                conn.execute("ROLLBACK")
            # the in-memory stamps may be ahead of the database: reload them
            self._loaded = self._stamps_loaded = False
            self._pages = self._info = self._info_blob = self._token = None
            self._use_snapshot(None)
            self._racy = {}
            raise
        finally:
            if bulk:
                conn.execute(f"PRAGMA cache_size = {DEFAULT_CACHE_KIB}")

    def _flush(self, batch: list[tuple[Any, ...]], records: list[tuple[int, str, bytes]],
               names: list[tuple[int, set[int], set[int]]], replaced: list[str]) -> None:
        """Write a batch: stamps, records (with their rowids) and the name tables of each page
        (its record's rowid, link name and page name hashes in ``names``); the name rows of the
        ``replaced`` records go first (a page not cached before has none: a cold index looks
        nothing up for them)."""
        conn = self._conn
        self._drop_names([(path,) for path in replaced])  # keyed by the rowid being replaced
        conn.executemany("INSERT OR REPLACE INTO pages VALUES (?,?,?,?,?,?,?)", sorted(batch))
        conn.executemany("INSERT OR REPLACE INTO records (rowid, path, record) VALUES (?,?,?)", records)
        # in key order: each row lands beside the one before in the table's B-tree
        conn.executemany("INSERT OR IGNORE INTO link_names VALUES (?, ?)",
                         sorted([(h, rowid) for rowid, hashes, _ in names for h in hashes]))
        conn.executemany("INSERT OR IGNORE INTO page_names VALUES (?, ?)",
                         sorted([(h, rowid) for rowid, _, hashes in names for h in hashes]))
        batch.clear()
        records.clear()
        names.clear()
        replaced.clear()

    def _insert_names(self, first: int, chunk_names: list[tuple[int, str, str]]) -> None:
        """Insert the name rows that came from worker processes (see :meth:`_parsed`), and forget
        them: each chunk's rows point at the rowids its records get (from ``first``)."""
        for table, column in (("link_names", 1), ("page_names", 2)):
            self._conn.executemany(_INSERT_NAMES.format(table),
                                   [(first + entry[0], entry[column]) for entry in chunk_names])
        chunk_names.clear()

    def _drop_names(self, paths: list[tuple[str]]) -> None:
        """Delete the name rows of the cached records at ``paths`` (found from the old records
        themselves: no second index by page keeps the tables small). A row left behind by a
        record that no longer decodes only ever adds a page to a lookup, which its caller's exact
        resolution ignores."""
        conn = self._conn
        old: list[tuple[int, list[Any]]] = []
        for (path,) in paths:
            hit = conn.execute("SELECT rowid, record FROM records WHERE path=?", (path,)).fetchone()
            if hit is None:
                continue
            try:
                old.append((hit[0], decode_record(hit[1])))
            except (ValueError, TypeError, EOFError, KeyError, zlib.error):
                continue
        for table, hashes in (("link_names", link_name_hashes), ("page_names", page_name_hashes)):
            conn.executemany(f"DELETE FROM {table} WHERE h=? AND src=?",
                             [(h, rowid) for rowid, row in old for h in hashes(row)])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
