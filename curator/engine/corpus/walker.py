"""The one walker that defines the corpus for every read and write path (docs/design.md §2)."""

from __future__ import annotations

import functools
import itertools
import marshal
import os
import re
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

#: Folders that never hold pages, at any depth (``.obsidian`` and ``.trash`` are an Obsidian
#: vault's settings and deleted files: a vault opens unchanged, docs/design.md §3).
EXCLUDED_DIRS: frozenset[str] = frozenset(
    {".git", "graphify-out", "_proposed", "proposed", "imports", "raw", "_archive", ".curator",
     ".obsidian", ".trash"}
)


def utf8_name(path: str) -> bool:
    """Whether ``path`` is valid UTF-8 on disk. A file name that is not comes from the file system
    with its bad bytes as lone surrogates (Python's ``surrogateescape``): such a page is still a
    page (listed, linted, readable), but it can be stored in no UTF-8 database, file or answer."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_path(path: str) -> str:
    """``path`` as shown to people and agents: bytes that are not UTF-8 become U+FFFD."""
    if utf8_name(path):
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def json_line(data: object) -> str:
    """Compact JSON of ``data`` that always encodes as UTF-8: readable text when it can be, with a
    name that is not valid UTF-8 kept exactly as ``\\udcXX`` escapes (``json.loads`` restores it)."""
    import json  # (not at the top: a one-shot command printing text never needs it)

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_document(data: object) -> str:
    """``data`` as the one JSON document a command prints (the final newline included); a budget
    in bytes (``neighbors --max-bytes``) is measured on exactly this text
    (:func:`json_document_bytes`, decoded)."""
    return json_document_bytes(data).decode("utf-8", "surrogateescape")


def json_document_bytes(data: object) -> bytes:
    """The bytes of :func:`json_document`. A long list is written one compact item per line, and
    a document with long lists (the graph's node-link form: 250,000 nodes and edges at 32,000
    pages) one key per line: still easy to read and to grep, each piece encoded by orjson (the
    standard library's C encoder took a sixth of a ``graph --format json``; ``indent`` forces its
    pure-Python one, which cost more than everything else in a warm ``index --json``)."""
    import json

    long_list = isinstance(data, list) and len(data) > 50
    if long_list or (isinstance(data, dict) and any(isinstance(v, list) and len(v) > 50
                                                    for v in data.values())):
        import orjson  # (only for the long documents)

        if isinstance(data, list) and long_list and all(type(item) is dict and item for item in data):
            # A list of objects (``index --json``): encoded in one call, then split into lines
            # where one object ends and the next begins. ``},{"`` can occur nowhere else: inside
            # a string every quote is escaped (``\"``), so only an object nested in a list inside
            # an item could make one, and then there are more than one per boundary.
            try:
                whole: bytes = orjson.dumps(data)
            except TypeError:  # (see below)
                pass
            else:
                if whole.count(b'},{"') == len(data) - 1:
                    return b"[\n" + whole[1:-1].replace(b'},{"', b'},\n{"') + b"\n]\n"
        try:
            out: bytes = _long_document(data, orjson.dumps, b"\n", b", ", b": ")
            return out
        except TypeError:  # orjson refuses a lone surrogate (a file name that is not UTF-8)
            encode = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
            text: str = _long_document(data, encode, "\n", ", ", ": ")
            return _utf8(text)
    return _utf8(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8, a lone surrogate (a file name's byte that is not UTF-8) as U+FFFD, as
    the command line prints it: the output is always valid UTF-8."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _long_document(data: Any, dumps: Callable[[Any], Any], nl: Any, comma: Any, colon: Any) -> Any:
    """``data`` (a list, or a dict of lists) as ``dumps`` encodes it (text or bytes; ``nl``,
    ``comma`` and ``colon`` of the same type): one list item or one dict key per line."""
    sep = comma.strip() + nl
    if isinstance(data, list):
        return dumps([])[:1] + nl + sep.join(map(dumps, data)) + nl + dumps([])[1:] + nl
    indent = nl[:0] + comma[-1:] * 2  # two spaces
    items = sep.join(indent + dumps(str(k)) + colon + dumps(v) for k, v in data.items())
    return dumps({})[:1] + nl + items + nl + dumps({})[1:] + nl


class PageFile(NamedTuple):
    """A page file as the walk saw it (a tuple: ten thousand of these are made per refresh)."""

    path: str  # posix, relative to the root
    mtime_ns: int
    size: int


def _walked_parts(rel: str) -> list[str] | None:
    """The parts of a root-relative posix path a walk can reach (inside the root, in no excluded
    folder); None for one it never reaches."""
    parts = rel.split("/")
    if ".." in parts or rel.startswith("/") or any(p in EXCLUDED_DIRS for p in parts[:-1]):
        return None
    return parts


def is_page_path(rel: str) -> bool:
    """Whether a root-relative posix path lies where pages live (ignores existence)."""
    return rel.lower().endswith(".md") and _walked_parts(rel) is not None


def is_attachment_path(rel: str) -> bool:
    """Whether a root-relative posix path is where a walk lists an attachment file (ignores
    existence and the file's kind): not a page, not hidden, in no excluded folder."""
    parts = None if rel.lower().endswith(".md") else _walked_parts(rel)
    return parts is not None and not parts[-1].startswith(".")


class Stamps(NamedTuple):
    """Every page a scan found, as three parallel lists in the order found: what a refresh
    compares with its snapshot in one go (list equality runs in C; no tuple or dict per page)."""

    paths: list[str]  # posix, relative to the root
    mtimes: list[int]  # st_mtime_ns
    sizes: list[int]  # st_size


def walk(root: Path, attachments: list[str] | None = None) -> Iterator[PageFile]:
    """Yield every page below ``root``, sorted by path within each folder (the folder's pages
    first, then each sub-folder in name order: see :func:`walk_order`).

    With ``attachments``, the root-relative paths of every other file in the same folders (images,
    PDFs, canvases: what ``[[diagram.png]]`` links to) are appended to it during the same scan;
    they are named, never stat'ed or read.

    Symlinks inside the tree are never followed: one that leaves the root is outside the wiki,
    and one that stays inside points at a page (or folder) the walk reaches at its real path, so
    following it would count pages twice or loop. Every page therefore appears exactly once.
    """
    found = scan(root, attachments, ordered=True)
    new = functools.partial(tuple.__new__, PageFile)  # (a PageFile without its Python-level __new__)
    return map(new, zip(*found, strict=True))


#: How many folder entries the walk stats between two calls of its ``progress`` (a big wiki keeps
#: most pages in one folder: a call per folder would not move).
WALK_PROGRESS_EVERY = 2000


def scan(root: Path, attachments: list[str] | None = None, *, ordered: bool = False,
         progress: Callable[[int], None] | None = None, share: _Shared | None = None) -> Stamps:
    """The pages :func:`walk` yields, as :class:`Stamps`: in the same order when ``ordered``,
    else in the order the folders list them (sorting a 28,000-page folder costs as much as
    everything else a refresh does but the stats, and an unchanged folder lists its files in the
    same order every time). The attachment files are always in walk order. ``progress(found)``
    is called with the number of pages found so far after each folder and every
    :data:`WALK_PROGRESS_EVERY` entries of a big one (an exception it raises stops the walk).
    With ``share`` (the walk ahead's, see :class:`_Shared`), a big folder's stats are shared with
    a second process; the caller then calls ``share.finish(found)`` (before it is complete)."""
    found = Stamps([], [], [])
    first = len(attachments) if attachments is not None else 0
    stack: list[tuple[str, str]] = [(os.path.realpath(root), "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            subdirs = _scan(directory, rel_dir, attachments, found, ordered, progress, share)
        except OSError:
            continue
        stack.extend(reversed(subdirs))
    if attachments is not None and not ordered:
        attachments[first:] = sorted(attachments[first:], key=walk_order)
    return found


#: A scan's stamps as three flat values (:func:`stamps_key`): the paths joined by NULs (no file
#: name holds one) and the mtimes and sizes packed as 64-bit integers. Two scans found the same
#: pages with the same stamps in the same order exactly when their keys are equal; the store's
#: snapshot holds this form, so an unchanged wiki is compared without a list or dict per page.
StampsKey = tuple[str, bytes, bytes]


def stamps_key(found: Stamps) -> StampsKey:
    """``found`` in its flat form (see :data:`StampsKey`)."""
    return "\0".join(found.paths), array("q", found.mtimes).tobytes(), array("q", found.sizes).tobytes()


def stamps_of(key: StampsKey) -> Stamps:
    """The :class:`Stamps` a :func:`stamps_key` holds (ValueError when its parts disagree)."""
    joined, mtimes, sizes = key
    if not well_formed(key):
        raise ValueError("stamps of different lengths")
    return Stamps(joined.split("\0") if joined else [], array("q", mtimes).tolist(), array("q", sizes).tolist())


#: A folder with at least this many entries has its stats shared by two processes in a walk
#: ahead (see :class:`_Shared`): below, a second process costs more than it saves.
SHARE_MIN = 4000
#: A page whose stat failed in a shared folder (it vanished since the folder was listed).
_GONE = -1


def _stat_all(entries: list[os.DirEntry[Any]]) -> tuple[array[int], array[int]]:
    """(mtimes, sizes) of ``entries``, :data:`_GONE` for one that can no longer be stat'ed."""
    try:  # (regular files, as the walk found them: ``stat()`` is their lstat)
        stats = list(map(_stat_of, entries))
    except OSError:  # one vanished: entry by entry
        pass
    else:
        return array("q", map(_mtime_of, stats)), array("q", map(_size_of, stats))
    mtimes, sizes = array("q"), array("q")
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            mtimes.append(_GONE)
            sizes.append(_GONE)
            continue
        mtimes.append(st.st_mtime_ns)
        sizes.append(st.st_size)
    return mtimes, sizes


class _Shared:
    """The walk ahead's stats of its big folders, shared with a second process.

    A warm one-shot command waits for the walk ahead, which is mostly one stat per page (~2.7 us
    of kernel time each on this VM: 32,000 of them are the longest step of a warm ``index``). A
    folder of :data:`SHARE_MIN` entries or more is listed once; a helper process is forked right
    then and stats the second half of its pages (through the same open folder, which it inherits)
    while this one stats the first half and walks on; :meth:`finish` fills in the helper's stamps.
    The answer is exactly :func:`scan`'s: the same pages in the same order, a page that vanished
    before its stat left out (as :func:`_entries` does), every stat taken after the walk's start.
    """

    def __init__(self) -> None:
        self._helpers: list[tuple[int, int, int, int]] = []  # pid, pipe, first slot, count
        self._gone = False  # a stat in this process failed: slots to drop

    def entries(self, entries: list[os.DirEntry[Any]], directory: str, rel_dir: str,
                attachments: list[str] | None, found: Stamps) -> list[tuple[str, str]]:
        """:func:`_entries` of one big folder (its folder descriptor open until this returns)."""
        base = len(found.paths)
        later: list[os.DirEntry[Any]] = []
        subdirs = _entries(entries, directory, rel_dir, attachments, found, later)
        half = len(later) // 2
        helper = self._fork(later[half:], base + half) if half else None
        own = later if helper is None else later[:half]
        mtimes, sizes = _stat_all(own)
        found.mtimes[base:base + len(own)] = mtimes.tolist()
        found.sizes[base:base + len(own)] = sizes.tolist()
        self._gone = self._gone or _GONE in sizes
        return subdirs

    def _fork(self, entries: list[os.DirEntry[Any]], first: int) -> bool | None:
        def answer() -> bytes:
            mtimes, sizes = _stat_all(entries)
            return mtimes.tobytes() + sizes.tobytes()

        child = _forked(answer)
        if child is None:
            return None
        self._helpers.append((*child, first, len(entries)))
        return True

    def finish(self, found: Stamps) -> None:
        """Fill in the helpers' stamps and drop the pages that vanished (OSError when a helper failed)."""
        failed = False
        for pid, fd, first, count in self._helpers:
            with os.fdopen(fd, "rb") as pipe:
                data = pipe.read()
            status = os.waitpid(pid, 0)[1]
            if status != 0 or len(data) != 16 * count:
                failed = True
                continue
            mtimes, sizes = array("q"), array("q")
            mtimes.frombytes(data[:8 * count])
            sizes.frombytes(data[8 * count:])
            found.mtimes[first:first + count] = mtimes.tolist()
            found.sizes[first:first + count] = sizes.tolist()
            self._gone = self._gone or _GONE in sizes
        self._helpers = []
        if failed:
            raise OSError("a helper of the walk ahead failed")
        if self._gone:
            kept = [i for i, size in enumerate(found.sizes) if size != _GONE]
            found.paths[:] = [found.paths[i] for i in kept]
            found.mtimes[:] = [found.mtimes[i] for i in kept]
            found.sizes[:] = [found.sizes[i] for i in kept]


#: Walks started ahead (:func:`walk_ahead`), by the real path of their root: (child pid, pipe).
_AHEAD: dict[str, tuple[int, int]] = {}
#: Whether this platform can start a walk ahead: a child forked while the program is small (no
#: thread yet) is cheap and safe on Linux and the BSDs; macOS's system libraries dislike fork.
CAN_WALK_AHEAD = hasattr(os, "fork") and os.name == "posix" and sys.platform != "darwin"


def walk_ahead(root: Path | str) -> bool:
    """Start :func:`scan` of ``root`` in a child process, for :func:`take_ahead` to collect.

    A one-shot command checks every page's stamp before it answers (32,000 stats at real size,
    mostly system time), and until then it only imports the program and reads its cache, which
    needs no stamp: run at its start, the walk takes the other core meanwhile instead of
    following them on this one (an interpreter lock held by that work would make a thread wait
    after each stat). The walk is the one the store would make, only earlier: its moment (taken
    before its first stat) is what the racy-stamp guard is measured from. Call it before any
    thread starts and only in a process that writes no page before its first full refresh.
    False when no walk was started (the platform cannot, or the fork failed).
    """
    real = os.path.realpath(os.path.expanduser(root))
    if not CAN_WALK_AHEAD or real in _AHEAD:
        return False

    def answer() -> bytes:
        start = time.time_ns()  # before the first stat, as the store takes it
        attachments: list[str] = []
        share = _Shared() if cores() > 1 else None
        found = scan(Path(real), attachments, share=share)
        if share is not None:
            share.finish(found)
        return marshal.dumps((start, *stamps_key(found), attachments))

    child = _forked(answer)
    if child is None:
        return False
    _AHEAD[real] = child
    return True


#: The search index's stamps of every page it holds (``curator.engine.search.index``), as a sweep reads them.
SWEEP_SQL = "SELECT path, mtime_ns, size FROM search_docs"
#: The name of the packed value below: a new form of it gets a new name (a value of another form
#: is never read, and the next packing deletes it). Form 2: the value as packed, which the
#: documents changed since then (:data:`MOVED_SQL`) bring up to date (form 1 was deleted at
#: every change of the documents, and packed again whole).
PACKED_PART = "stamps 2"
#: The same stamps in one value (:func:`pack_stamps`), which the index keeps beside its rows: one
#: blob read in one go instead of 32,000 rows made into tuples.
PACKED_SQL = f"SELECT data FROM search_stamps WHERE part = '{PACKED_PART}'"
#: The paths of the documents inserted, updated or deleted since the stamps were packed (the
#: index's triggers list them, whichever program made the change, while a packed value is kept),
#: with their stamps now: (path, still indexed, mtime_ns, size).
MOVED_SQL = ("SELECT m.path, d.id IS NOT NULL, d.mtime_ns, d.size FROM search_moved m"
             " LEFT JOIN search_docs d ON d.path = m.path")
#: How many changed documents the packed stamps are kept beside: one more and the triggers drop
#: the packed value (the next sweep packs every document's stamp again).
MOVED_MAX = 256
#: The documents changed since the packing, by path: their stamp now, None when no longer indexed.
Moved = dict[str, tuple[int, int] | None]
#: How much of the database a sweep's child maps into memory (address space only: the pages it
#: reads are the ones mapped in).
SWEEP_MMAP = 1 << 30
#: Sweeps started ahead (:func:`sweep_ahead`), by the real path of their root: (child pid, pipe).
_SWEEPS: dict[str, tuple[int, int]] = {}


def sweep_ahead(root: Path | str) -> bool:
    """Start, in a child process, the search index's sweep of ``root`` (every page it holds
    stat'ed and compared by (mtime, size), see ``SearchIndex.refresh``), for :func:`take_sweep`
    to collect: what a one-shot ``search`` checks before it answers, run while it imports the
    program, as :func:`walk_ahead` runs a walk. The child reads the index's stamps from the
    wiki's database (``.curator/cache.sqlite``, read-only, see :func:`index_stamps`: packed in
    one value with the few documents changed since when the index keeps them so, else its rows);
    it fails (the sweep is then made in the process) when there is none. False when no sweep was
    started."""
    real = os.path.realpath(os.path.expanduser(root))
    if not CAN_WALK_AHEAD or real in _SWEEPS:
        return False
    import sqlite3  # (before the fork: the command needs it anyway, and the child then imports nothing)

    from curator.engine.corpus.state import locate_state

    def swept(key: StampsKey, moved: Moved) -> list[str]:
        joined, mtimes_bytes, sizes_bytes = key
        # A big wiki's second half is stat'ed by a helper meanwhile (as a walk ahead shares a big
        # folder's), cut at the path nearest the middle of the joined paths: each process splits
        # only its own half, and the helper touches none of this one's objects (each of which it
        # would otherwise copy, a page of memory at a time, just by counting a reference).
        cut = joined.find("\0", len(joined) // 2) if cores() > 1 and len(mtimes_bytes) >= 8 * SHARE_MIN else -1
        if cut < 0:
            return _changed_in(real, key, moved)
        first = 8 * (joined.count("\0", 0, cut) + 1)  # (bytes of the stamps before the cut)
        helper = _forked(lambda: marshal.dumps(_changed_in(real, (joined[cut + 1:], mtimes_bytes[first:],
                                                                 sizes_bytes[first:]))))
        if helper is None:
            return _changed_in(real, key, moved)
        changed = _changed_in(real, (joined[:cut], mtimes_bytes[:first], sizes_bytes[:first]), moved)
        more = _collect(helper)
        if type(more) is not list:
            raise OSError("the sweep's helper failed")
        return changed + ([p for p in more if p not in moved] if moved else more)

    def answer() -> bytes:
        database = locate_state(Path(real), warn=False) / "cache.sqlite"  # (the parent warns)
        conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            # Read through a memory map: the packed stamps (~1.7 MB at 32,000 pages) then come in
            # without a read call per database page, half the time of this step in a new process.
            conn.execute(f"PRAGMA mmap_size = {SWEEP_MMAP}")
            key, moved = index_stamps(conn)
        finally:
            conn.close()
        return marshal.dumps(swept(key, moved))

    child = _forked(answer)
    if child is None:
        return False
    _SWEEPS[real] = child
    return True


def pack_stamps(conn: Any) -> bytes:
    """The index's stamps (:data:`SWEEP_SQL`, read from the database connection ``conn``) as one
    value: their :func:`stamps_key`, marshalled. TypeError or OverflowError for a stamp that is
    no 64-bit integer."""
    return marshal.dumps(_index_stamps_key(conn))


def _index_stamps_key(conn: Any) -> StampsKey:
    """The :func:`stamps_key` of the index's stamps (:data:`SWEEP_SQL`, read from ``conn``)."""
    paths, mtimes, sizes = Stamps([], [], [])
    for path, mtime, size in conn.execute(SWEEP_SQL):
        paths.append(path)
        mtimes.append(mtime)
        sizes.append(size)
    return stamps_key(Stamps(paths, mtimes, sizes))


def index_stamps(conn: Any) -> tuple[StampsKey, Moved]:
    """The index's stamps as a sweep reads them from the database connection ``conn`` (in one read
    transaction): the packed value and the documents changed since it was packed
    (:data:`MOVED_SQL`), or, when there is no packed value of this form (or it does not decode),
    the :func:`stamps_key` of every row and nothing moved. Either way the packed stamps of the
    paths not moved, with the moved paths' stamps now, are exactly the rows (:data:`SWEEP_SQL`):
    a document that changed in any way since the packing is among the moved."""
    import sqlite3  # (already imported by whoever holds a connection)

    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        try:
            packed = conn.execute(PACKED_SQL).fetchone()
            key = _packed_key(packed[0]) if packed is not None else None
            moved: Moved = {} if key is None else {
                path: (mtime, size) if held else None for path, held, mtime, size in conn.execute(MOVED_SQL)}
        except sqlite3.OperationalError:  # (an index from before these tables)
            key = None
        if key is None:
            return _index_stamps_key(conn), {}
        return key, moved
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")


def changed_in_index(root: str, conn: Any) -> list[str]:
    """:func:`changed_stamps` of the index's stamps (:func:`index_stamps`, read from ``conn``):
    the paths it holds whose stamp below ``root`` differs, or gone."""
    key, moved = index_stamps(conn)
    return _changed_in(root, key, moved)


def _packed_key(data: object) -> StampsKey | None:
    """The :func:`stamps_key` :func:`pack_stamps` packed into ``data``; None when it is not such a value."""
    try:
        key = marshal.loads(data) if isinstance(data, bytes) else None
    except (ValueError, EOFError, TypeError):
        return None
    if type(key) is not tuple or len(key) != 3 or not all(map(isinstance, key, (str, bytes, bytes))):
        return None
    return key if well_formed(key) else None


def _changed_in(root: str, key: StampsKey, moved: Moved | None = None) -> list[str]:
    """:func:`changed_stamps` of the pages a :func:`stamps_key` holds (their stamps read from
    the packed integers one by one, no list of them made). With ``moved`` (see
    :func:`index_stamps`), the paths it names are left out of the key's answer and checked by
    their stamps now instead (those still indexed)."""
    joined, mtimes, sizes = key
    changed = [] if not joined and not mtimes else changed_stamps(
        root, zip(joined.split("\0"), array("q", mtimes), array("q", sizes), strict=True))
    if not moved:
        return changed
    now = [(path, *stamp) for path, stamp in moved.items() if stamp is not None]
    return [p for p in changed if p not in moved] + changed_stamps(root, now)


def unpack_stamps(data: object) -> Stamps | None:
    """The stamps :func:`pack_stamps` packed into ``data``; None when it is not such a value."""
    key = _packed_key(data)
    return stamps_of(key) if key is not None else None


def changed_stamps(root: str, rows: Iterable[tuple[str, int, int]]) -> list[str]:
    """The paths among ``rows`` (path, mtime_ns, size) whose stamp below ``root`` differs, or gone.

    Each page is stat'ed by its root-relative path through the root, opened once
    (``lstat(path, dir_fd=...)``, as the walk stats through its listing's folder): the kernel
    then looks up the few names below the root instead of the whole path again (a quarter of a
    32,000-page sweep's time), and nothing is split or looked up here per page (splitting off
    each folder to stat through its own descriptor cost more than the names it spared the
    kernel). Only the last name is not followed, as for ``lstat`` of the full path, so the
    answer is the same."""
    if not _STAT_AT:
        return _changed_by_full_path(root, rows)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return _changed_by_full_path(root, rows)  # (no root: every page is gone)
    lstat = os.lstat
    changed: list[str] = []
    try:
        for path, mtime, size in rows:
            try:
                st = lstat(path, dir_fd=fd)
            except OSError:
                changed.append(path)
                continue
            if st.st_mtime_ns != mtime or st.st_size != size:
                changed.append(path)
    finally:
        os.close(fd)
    return changed


def _changed_by_full_path(root: str, rows: Iterable[tuple[str, int, int]]) -> list[str]:
    """:func:`changed_stamps` where no stat can be made through a folder's descriptor, or the
    root cannot be opened (each page by its full path)."""
    base, lstat = root + os.sep, os.lstat
    changed: list[str] = []
    for path, mtime, size in rows:
        try:
            st = lstat(base + path)
        except OSError:
            changed.append(path)
            continue
        if st.st_mtime_ns != mtime or st.st_size != size:
            changed.append(path)
    return changed


def sweep_pending(root: Path | str) -> bool:
    """Whether a sweep :func:`sweep_ahead` started for ``root`` waits to be taken."""
    return bool(_SWEEPS) and os.path.realpath(root) in _SWEEPS


def take_sweep(root: Path | str) -> list[str] | None:
    """The paths the sweep :func:`sweep_ahead` started for ``root`` found changed or gone; None
    when none was started or it failed (the caller sweeps itself). A sweep is taken once."""
    sweep = _SWEEPS.pop(os.path.realpath(root), None)
    changed = None if sweep is None else _collect(sweep)
    return changed if type(changed) is list and all(type(p) is str for p in changed) else None


def _forked(answer: Callable[[], bytes]) -> tuple[int, int] | None:
    """(pid, pipe) of a forked child that sends ``answer()`` down the pipe and exits (status 1
    when it raised), leaving without any of the parent's cleanup; None when it cannot start."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:
        code = 1
        try:
            os.close(read)
            view = memoryview(answer())
            while view:
                view = view[os.write(write, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int]) -> Any:
    """The answer a :func:`_forked` child sent, unmarshalled (None when it failed)."""
    pid, fd = child
    try:
        with os.fdopen(fd, "rb") as pipe:
            data = pipe.read()
        if os.waitpid(pid, 0)[1] != 0:
            return None
        return marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):
        return None


def cores() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def take_ahead(root: Path | str) -> tuple[int, StampsKey, list[str]] | None:
    """The walk :func:`walk_ahead` started for ``root``: the moment it started (``time.time_ns``,
    before its first stat), its stamps (:func:`stamps_key`) and the attachment files, as
    :func:`scan` gives them; None when none was started (or it failed: the caller walks itself).
    A walk is taken once."""
    ahead = _AHEAD.pop(os.path.realpath(root), None)
    answer = None if ahead is None else _collect(ahead)
    try:
        start, joined, mtimes, sizes, attachments = answer  # type: ignore[misc]
    except (ValueError, TypeError):
        return None
    key = (joined, mtimes, sizes)
    return (start, key, attachments) if well_formed(key) else None


def well_formed(key: StampsKey) -> bool:
    """Whether ``key`` (a :func:`stamps_key`) holds as many paths as stamps."""
    joined, mtimes, sizes = key
    count = joined.count("\0") + 1 if joined else 0
    return len(mtimes) == len(sizes) == 8 * count


def drop_ahead() -> None:
    """Forget every walk and sweep started ahead and not taken (the child, its answer unread, ends)."""
    while _AHEAD or _SWEEPS:
        _real, (pid, fd) = (_AHEAD or _SWEEPS).popitem()
        with suppress(OSError):
            os.close(fd)  # (the child's write fails: it leaves)
        with suppress(OSError):
            os.waitpid(pid, 0)


def walk_order(path: str) -> str:
    """A sort key that puts root-relative page paths in the order :func:`walk` yields them: in
    each folder its files first, then its sub-folders, each by name.

    One string, compared in C (a cold index sorts 32,000 of them): every folder is written
    ``\x02name\x00`` and the file ``\x01name``. No name holds a NUL, so ``\x00`` ends a folder's
    name before any character of a longer one (``a`` before ``ab``), and ``\x01`` puts the files
    of a folder before its sub-folders."""
    folders, slash, name = path.rpartition("/")
    if not slash:
        return "\x01" + name
    return "\x02" + folders.replace("/", "\x00\x02") + "\x00\x01" + name


#: Whether a folder can be listed through an open descriptor (POSIX): each entry's stat is then
#: an ``fstatat`` relative to the folder, which spares the kernel walking the whole path again
#: for every file (a warm refresh of 32,000 pages is mostly these stats).
_SCANDIR_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
#: Whether a file can be stat'ed relative to an open folder (``lstat(name, dir_fd=...)``, POSIX).
_STAT_AT = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_by_name = attrgetter("name")
#: A page's file name ends so (``.md`` in any case), tested in one call.
_PAGE_SUFFIXES = (".md", ".mD", ".Md", ".MD")


def _scan(directory: str, rel_dir: str, attachments: list[str] | None, found: Stamps,
          ordered: bool, progress: Callable[[int], None] | None = None,
          share: _Shared | None = None) -> list[tuple[str, str]]:
    """Add the pages of one folder to ``found`` (sorted by name when ``ordered``); its sub-folders
    to walk."""
    arrange = functools.partial(sorted, key=_by_name) if ordered else list
    if not _SCANDIR_FD:
        with os.scandir(directory) as it:
            return _stepped(arrange(it), directory, rel_dir, attachments, found, progress)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:  # every stat below goes through ``fd``: it stays open until they are done
        with os.scandir(fd) as it:
            entries = arrange(it)
        if share is not None and len(entries) >= SHARE_MIN:
            return share.entries(entries, directory, rel_dir, attachments, found)
        return _stepped(entries, directory, rel_dir, attachments, found, progress)
    finally:
        os.close(fd)


def _stepped(entries: list[os.DirEntry[Any]], directory: str, rel_dir: str, attachments: list[str] | None,
             found: Stamps, progress: Callable[[int], None] | None) -> list[tuple[str, str]]:
    """:func:`_entries`, calling ``progress`` every :data:`WALK_PROGRESS_EVERY` entries and at the end."""
    if progress is None:
        return _entries(entries, directory, rel_dir, attachments, found)
    subdirs: list[tuple[str, str]] = []
    for start in range(0, len(entries), WALK_PROGRESS_EVERY):
        subdirs += _entries(entries[start:start + WALK_PROGRESS_EVERY], directory, rel_dir, attachments, found)
        progress(len(found.paths))
    return subdirs


def _entries(entries: list[os.DirEntry[Any]], directory: str, rel_dir: str,
             attachments: list[str] | None, found: Stamps,
             later: list[os.DirEntry[Any]] | None = None) -> list[tuple[str, str]]:
    """The pages among ``entries`` added to ``found``, the other files to ``attachments``; the
    sub-folders to walk. With ``later``, the pages are not stat'ed here: each is added with the
    stamp (0, 0) and its entry put in ``later``, to be stat'ed and filled in by the caller."""
    with suppress(OSError):  # (a page that vanished since the listing: the loop below skips it)
        return _entries_at_once(entries, directory, rel_dir, attachments, found, later)
    add_path, add_mtime, add_size = found.paths.append, found.mtimes.append, found.sizes.append
    for entry in entries:  # one stat per page, entry by entry
        try:
            # d_type answers these without a system call (a symlink is no regular file here; a
            # FIFO or a device named .md is no page: reading it could block)
            if not (entry.is_file(follow_symlinks=False) and entry.name.endswith(_PAGE_SUFFIXES)):
                continue
            if later is not None:
                later.append(entry)
                add_path(rel_dir + entry.name)
                add_mtime(0)
                add_size(0)
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        add_path(rel_dir + entry.name)
        add_mtime(st.st_mtime_ns)
        add_size(st.st_size)
    return _others(entries, directory, rel_dir, attachments)


def _others(entries: list[os.DirEntry[Any]], directory: str, rel_dir: str,
            attachments: list[str] | None) -> list[tuple[str, str]]:
    """The entries that are no page: the other files added to ``attachments`` (symlinks and
    dot-files left out); the sub-folders to walk (the excluded ones left out)."""
    excluded, sfx = EXCLUDED_DIRS, _PAGE_SUFFIXES
    subdirs: list[tuple[str, str]] = []
    for entry in entries:
        name = entry.name
        try:
            if entry.is_file(follow_symlinks=False):
                if name.endswith(sfx):
                    continue
            elif entry.is_dir(follow_symlinks=False):
                if name not in excluded:
                    subdirs.append((f"{directory}/{name}", f"{rel_dir}{name}/"))
                continue
            elif entry.is_symlink():
                continue
        except OSError:
            continue
        if attachments is not None and not name.startswith("."):
            attachments.append(f"{rel_dir}{name}")
    return subdirs


_stat_of = os.DirEntry.stat
_name_of = attrgetter("name")
_mtime_of = attrgetter("st_mtime_ns")
_size_of = attrgetter("st_size")


def _entries_at_once(entries: list[os.DirEntry[Any]], directory: str, rel_dir: str,
                     attachments: list[str] | None, found: Stamps,
                     later: list[os.DirEntry[Any]] | None = None) -> list[tuple[str, str]]:
    """:func:`_entries`, its pages stat'ed and added by calls that loop in C (a 28,000-page
    folder's Python overhead is mostly that loop's); the per-entry loop stays the way for a
    folder where a stat fails (OSError: nothing is added to ``found`` or ``later`` then)."""
    sfx = _PAGE_SUFFIXES
    pages = [e for e in entries if e.is_file(follow_symlinks=False) and e.name.endswith(sfx)]
    # (``stat()`` follows symlinks, but these are regular files: it is their lstat)
    stats = list(map(_stat_of, pages)) if later is None else []
    subdirs = _others(entries, directory, rel_dir, attachments) if len(pages) < len(entries) else []
    found.paths.extend(map(rel_dir.__add__, map(_name_of, pages)))
    if later is not None:  # (stat'ed by the caller, see _Shared.entries)
        later += pages
        found.mtimes.extend(itertools.repeat(0, len(pages)))
        found.sizes.extend(itertools.repeat(0, len(pages)))
        return subdirs
    found.mtimes.extend(map(_mtime_of, stats))
    found.sizes.extend(map(_size_of, stats))
    return subdirs
