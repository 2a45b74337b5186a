"""The fact index: every fact of every page (:func:`~curator.engine.corpus.facts.page_facts`) with
its embedding, kept in ``facts.sqlite`` under the wiki's local state and brought up to date page by
page.

A page is re-read only when its (mtime, size) differs from what the index holds, and a fact is
embedded only when no fact of the index already has its exact text, so an append re-embeds one
line. The file is rebuilt when missing, unreadable, of an older layout or made by another embedder.

What is kept, and why (measured on a 32,000-page real-shaped wiki: 470,736 facts, ~151,000 texts):

* **one row per distinct text** (:class:`~curator.engine.facts.table.TextTable`: its vector in
  4 bits a coordinate, the text compressed by block), under an id for good (the nearest and the
  notes below name texts by it). Agent-kept pages repeat lines (copied facts, boilerplate), so a
  third as many rows as facts. Each page keeps its facts' ids, lines and stamps; a
  :class:`~curator.engine.corpus.facts.Fact` is made when asked for (holding every fact as an
  object took hundreds of MB).
* **each text's nearest** (:data:`NEAR_K`, worked out once) and **notes** on pairs of texts (the
  conflict queue's reasons, compressed a batch at a time), so the whole wiki's queues cost their
  first run once, then what changed.

The file is 0.45x the pages' bytes on that wiki (it was 0.95x with int8 vectors, plain texts and
a row per note).

Neighbours: exact (numpy, one matrix product) up to :data:`EXACT_MAX` distinct texts. Above it, a
fact's neighbours are found in two steps: every text scored on the first :data:`COARSE_DIMS`
coordinates (WordLlama is trained so that a prefix still embeds), the best :data:`COARSE_KEEP`
scored again on all coordinates. Many texts' nearest at once (a first whole-wiki run) come from an
HNSW graph (usearch) over the same prefix, then scored on all coordinates. Measured at 148,541
texts: exact pairs by numpy would take about 5 minutes; usearch's graph builds in 7 s and answers
every text's 100 nearest in 7 s; the graph over all 256 coordinates took 80 s + 75 s for less
recall. At 150,776 texts, by inner product of int8 units with :data:`GRAPH_CANDIDATES`: build
3 s, every text's candidates 4-6 s, scored again 2 s.

The notes of a first whole-wiki run (the conflict queue's reasons for 1.5 M close pairs at 32,000
pages) are taken by a child process per core (:func:`_notes_taken`), reading a text costing far
more than a pair (a pass over 300,000 pairs: 19.6 s reading their texts, 1.7 s again once read).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sqlite3
import subprocess
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curator.engine.corpus.facts import Fact, page_facts
from curator.engine.corpus.store import gc_paused
from curator.engine.facts.embed import Embedder, embedder_from, unit_rows
from curator.engine.facts.settings import read_settings
from curator.engine.facts.table import BLOCK, TextTable, text_hashes
from curator.engine.memory import runs_for_long

if TYPE_CHECKING:
    from curator.engine.corpus.store import ChangeSet
    from curator.engine.wiki import Wiki

log = logging.getLogger(__name__)

INDEX_NAME = "facts.sqlite"
#: The layout of the file: another value (an older Curator's) is rebuilt.
LAYOUT = "5"
#: Optional settings file next to the index choosing the embedder (see :func:`embedder_from`).
SETTINGS_NAME = "facts-embedder.json"
#: Rows compared per matrix product (bounds the temporary float32 copy to ~64 MB at dim 256).
CHUNK = 65536
#: Up to this many distinct texts, neighbours are exact (every text scored on every coordinate).
EXACT_MAX = 40000
#: The coordinates of the first, coarse pass above :data:`EXACT_MAX` (embedders that embed with a
#: prefix of their vector only: see ``prefix_dims`` in :mod:`curator.engine.facts.embed`).
COARSE_DIMS = 64
#: Texts kept by the coarse pass for each question (at least; more when many are hidden). The
#: exact top 25 of a text were among the coarse top 200 at 0.93 on the real-shaped wiki.
COARSE_KEEP = 400
#: Questions whose coarse scores are held at once (each a float32 per text).
COARSE_QUESTIONS = 32
#: A text found on more pages than this is a template line ("Filed under #howto."), not a fact
#: that two pages happen to share: :meth:`FactIndex.pairs` leaves it out (the pairs of one line on
#: 100 pages would be 4,950 pairs saying nothing).
TEMPLATE_PAGES = 5
#: Each text's nearest texts kept for the whole wiki's pairs (see :meth:`FactIndex.pairs`), from
#: this score up (the lowest any queue asks for: conflicts, 0.6).
NEAR_K = 16
NEAR_MIN = 0.6
#: From this many texts asking at once, their nearest come from an HNSW graph (on a big wiki).
GRAPH_MIN = 2000
#: Candidates the HNSW graph (over the prefix) gives per neighbour wanted, each scored again on
#: every coordinate. Measured at 150,776 texts against exact neighbours of 2,000 of them: 4 per
#: neighbour found 0.81 of the 16 nearest in 14.5 s, 2 found 0.75 in 11 s (a graph over 128
#: coordinates with 2: 0.80 in 16 s). On an agent-kept wiki most texts have dozens of neighbours
#: above NEAR_MIN within a few hundredths of each other, so which of them make the 16 varies with
#: any setting: the whole-wiki conflicts found with 2 and with 4 were 91 % the same, 342,553 and
#: 336,802 of them.
GRAPH_CANDIDATES = 2
#: Pages whose facts are kept read back (see FactIndex._page_list).
DECODED_PAGES = 256
#: From this many pages asked at once, every text is read back at once (a text is read from its
#: compressed block; a page's facts come from many blocks).
BULK_PAGES = 1000
#: Pages read at a time by a build (each batch a step of its progress), and texts embedded at a time.
PAGE_BATCH = 2000
EMBED_BATCH = 8192
#: ``progress(done, total)``: pages read (and their facts embedded) so far of those an update reads.
Progress = Callable[[int, int], None]

#: A near score is stored in a byte (0..1 in 255 steps: 0.004 apart, finer than any threshold).
_NEAR_STEPS = 255


def _int8_units(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as int8 (what the HNSW graph compares)."""
    return np.clip(np.rint(unit_rows(rows) * 127.0), -127, 127).astype(np.int8)


class _PageEntry:
    """One page as the index holds it: each fact's text (its row of the vector table), line and
    stamps; the facts are made when asked for (holding every fact of a big wiki as objects took
    hundreds of MB)."""

    __slots__ = ("_ids", "_lines", "_stamps", "stamp")

    def __init__(self, stamp: tuple[int, int], ids: bytes, lines: bytes, stamps: str | None) -> None:
        self.stamp = stamp
        # (as stored, read when asked: arrays and dicts per page of a 32,000-page wiki held
        # 30 MB more)
        self._ids = ids  # each fact's row in the text table (its text's), int32
        self._lines = lines
        self._stamps = stamps  # see _stamps_json

    @property
    def stamps(self) -> dict[int, tuple[str | None, str | None]]:
        """(added, verified) of the facts that have one, by place on the page."""
        return _stamps_of(self._stamps)

    @property
    def ids(self) -> np.ndarray:
        return np.frombuffer(self._ids, dtype=np.int32)

    @property
    def lines(self) -> np.ndarray:
        return np.frombuffer(self._lines, dtype=np.int32)


def _stamps_json(stamps: dict[int, tuple[str | None, str | None]] | None) -> str | None:
    return json.dumps({str(k): list(v) for k, v in stamps.items()}) if stamps else None


def _stamps_of(text: str | None) -> dict[int, tuple[str | None, str | None]]:
    return {int(k): (v[0], v[1]) for k, v in json.loads(text).items()} if text else {}


class _FactView:
    """Every fact of the index by position (path, then line), made from its page when asked."""

    def __init__(self, index: FactIndex, paths: list[str], page_of: np.ndarray, at: np.ndarray) -> None:
        self._index = index
        self.paths = paths
        self.page_of = page_of  # each fact's page (in paths)
        self.at = at  # each fact's place on its page

    def __len__(self) -> int:
        return len(self.page_of)

    def __getitem__(self, position: int) -> Fact:
        return self._index._fact_at(self.paths[int(self.page_of[position])], int(self.at[position]))

    def __iter__(self) -> Iterator[Fact]:
        with self._index._table.bulk(len(self.paths) > BULK_PAGES):
            for path in self.paths:
                yield from self._index._page_list(path)

    def path(self, position: int) -> str:
        return self.paths[int(self.page_of[position])]


class _NearTable:
    """Each text's (row's) nearest texts and their scores: two arrays, a row of each per text
    (a few MB at 150,000 texts, where lists per text took a hundred). A score is held in a byte
    (:data:`_NEAR_STEPS`), in memory as in the file, so a first run and a later one agree."""

    def __init__(self) -> None:
        self.rows = np.full((0, NEAR_K), -1, dtype=np.int32)
        self.steps = np.zeros((0, NEAR_K), dtype=np.uint8)
        self.known = np.zeros(0, dtype=bool)

    def _room(self, row: int) -> None:
        if row >= len(self.known):
            size = max(row + 1, int(len(self.known) * 1.25) + 1024)
            rows = np.full((size, NEAR_K), -1, dtype=np.int32)
            steps = np.zeros((size, NEAR_K), dtype=np.uint8)
            known = np.zeros(size, dtype=bool)
            rows[:len(self.known)], steps[:len(self.known)], known[:len(self.known)] = self.rows, self.steps, self.known
            self.rows, self.steps, self.known = rows, steps, known

    def has(self, rows: np.ndarray) -> np.ndarray:
        out = np.zeros(len(rows), dtype=bool)
        inside = rows < len(self.known)
        out[inside] = self.known[rows[inside]]
        return out

    def put(self, rows: np.ndarray, near: np.ndarray, scores: np.ndarray) -> None:
        """Each of ``rows``' nearest (a row of ``near`` each, best first, -1 after the last) and
        their scores."""
        near = near[:, :NEAR_K]
        steps = np.clip(np.rint(np.nan_to_num(scores[:, :NEAR_K]) * _NEAR_STEPS), 0, _NEAR_STEPS)
        self.put_steps(rows, near, np.where(near >= 0, steps, 0).astype(np.uint8))

    def put_steps(self, rows: np.ndarray, near: np.ndarray, steps: np.ndarray) -> None:
        """:meth:`put` with the scores in steps of :data:`_NEAR_STEPS` (as the file keeps them)."""
        if not len(rows):
            return
        self._room(int(rows.max()))
        width = near.shape[1]
        self.rows[rows] = -1
        self.rows[rows, :width] = np.where(near >= 0, near, -1)
        self.steps[rows] = 0
        self.steps[rows, :width] = steps
        self.known[rows] = True


def _scores(steps: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.round(steps.astype(np.float64) / _NEAR_STEPS, 3)
    return out


class FactIndex:
    """Every fact of a wiki and its vector (see the module docstring). Thread-safe."""

    def __init__(self, wiki: Wiki, embedder: Embedder | None = None) -> None:
        self.wiki = wiki
        self.path = wiki.state_dir / INDEX_NAME
        self.embedder = embedder or embedder_from(_settings(wiki.state_dir / SETTINGS_NAME))
        self._lock = threading.RLock()
        self._pages: dict[str, _PageEntry] | None = None
        #: one row per distinct text: its vector and the text (the row is its id in the file)
        self._table = TextTable()
        self._coarse: np.ndarray | None = None  # 1 / the length of each row's prefix (above EXACT_MAX)
        self._dense: np.ndarray | None = None  # float32 of every row (up to EXACT_MAX)
        # flat views, remade after a change (_flat)
        self._dirty = True
        self._facts = _FactView(self, [], np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
        self._page_start: dict[str, int] = {}  # each page's first fact's position
        #: pages whose facts were made lately (see _page_list)
        self._decoded: OrderedDict[str, list[Fact]] = OrderedDict()
        self._fact_rows = np.zeros(0, dtype=np.int32)
        self._row_order = np.zeros(0, dtype=np.int32)  # facts by row: facts of row r are
        self._row_bounds = np.zeros(1, dtype=np.int32)  # _row_order[_row_bounds[r]:_row_bounds[r+1]]
        self._template_rows = np.zeros(0, dtype=bool)
        #: facts embedded by this index so far (what the incremental tests count)
        self.embedded = 0
        #: each text's nearest, worked out once (see _nearest_rows)
        self._near: _NearTable | None = _NearTable()
        #: noted pairs by name: (texts asked about, what was said) (see noted_pairs)
        self._noted: dict[str, tuple[np.ndarray, dict[int, str]]] = {}
        #: pages the store said changed since the last update (None: look at every page's stamp)
        self._pending: set[str] | None = None
        # (its own lock: a writer telling of its change never waits for a long update)
        self._pending_lock = threading.Lock()
        wiki.changed.connect(self._note_changes)

    @property
    def _count(self) -> int:
        return self._table.count

    def _note_changes(self, changes: ChangeSet) -> None:
        with self._pending_lock:
            if self._pending is not None:
                self._pending.update(changes.paths)

    # --- keeping current ------------------------------------------------------------------
    def update(self, full: bool = False, progress: Progress | None = None, *, walk: bool = True,
               stamps: dict[str, tuple[int, int]] | None = None) -> list[str]:
        """Bring the index up to the pages as they are; the paths re-read (and removed).

        After the first update, only the pages the store reported changed are looked at (an
        append costs its page, not a look at every page's stamp); ``full`` looks at all again.
        ``progress(done, total)`` is told the pages read and embedded so far (a first build at
        32,000 pages takes about half a minute). ``walk=False``: up to the pages as the page
        cache holds them, in a process that has not walked the tree (see
        :meth:`~curator.engine.corpus.store.PageStore.stamps`); ``stamps``: up to these pages
        (every page's stamp, taken by the caller: the wiki as it stood then)."""
        with self._lock:
            with self._pending_lock:
                pending, self._pending = self._pending, set()
            if pending is not None and not pending and not full and self._pages is not None \
                    and stamps is None and not self._table.damaged:
                return []
            try:
                return self._update(pending, full, progress, walk, stamps)
            except BaseException:
                self._pending = None  # what was pending is not known done: look at every page next time
                raise

    def _update(self, pending: set[str] | None, full: bool, progress: Progress | None, walk: bool,
                given: dict[str, tuple[int, int]] | None) -> list[str]:
        with self._lock:
            if self._table.damaged:  # a block of texts did not decode when read: built again
                self._discard_file()
                self._pages = None
            conn = self._connect()
            try:
                if self._pages is None:
                    try:
                        self._pages = self._load(conn)
                    except sqlite3.DatabaseError:  # a damaged index is derived data: built again
                        conn.close()
                        self._discard_file()
                        conn = self._connect()
                        self._pages = self._load(conn)
                    pending = None
                # (the store's stamps, not its pages: decoding every page record to compare
                # two numbers took 1.1 s of a one-shot append's 2.4 at 32,000 pages)
                store = self.wiki.store
                if given is not None or pending is None or full:
                    pages = given if given is not None else store.stamps(walk=walk or full)
                    gone = [p for p in self._pages if p not in pages]
                    looked: Iterable[str] = pages
                else:
                    pages = store.stamps(pending)
                    gone = [p for p in pending if p in self._pages and p not in pages]
                    looked = pages
                changed = [p for p in looked if (e := self._pages.get(p)) is None or e.stamp != pages[p]]
                if not gone and not changed:
                    return []
                if changed:
                    self._embed_pages(conn, changed, pages, progress)
                for path in gone:
                    del self._pages[path]
                conn.executemany("DELETE FROM pages WHERE path=?", [(p,) for p in gone])
                conn.commit()
                self._dirty = True
                return changed + gone
            finally:
                conn.close()

    def _embed_pages(self, conn: sqlite3.Connection, paths: list[str], pages: dict[str, tuple[int, int]],
                     progress: Progress | None = None) -> None:
        """Read and embed ``paths``, :data:`PAGE_BATCH` pages at a time: a first build holds one
        batch's facts, not the wiki's, and keeps what it did if it is stopped half way."""
        for start in range(0, len(paths), PAGE_BATCH):
            if progress is not None:
                progress(start, len(paths))
            self._embed_some(conn, paths[start:start + PAGE_BATCH], pages)
            conn.commit()
        if progress is not None and paths:
            progress(len(paths), len(paths))

    def _embed_some(self, conn: sqlite3.Connection, paths: list[str], pages: dict[str, tuple[int, int]]) -> None:
        assert self._pages is not None
        read: list[tuple[str, tuple[int, int], list[Fact]]] = []
        for path in paths:
            try:
                text = self.wiki.read_text(path)
            except OSError:
                continue  # vanished since the listing: the next update drops it
            read.append((path, pages[path], page_facts(path, text)))
        every = [f.text for _p, _s, facts in read for f in facts]
        hashes = text_hashes(every)
        rows_of = self._table.find(hashes)
        new = {int(h): t for h, t, r in zip(hashes.tolist(), every, rows_of.tolist(), strict=True) if r < 0}
        # New texts get rows in page order, so a page's facts are read back from a block or two
        # (rows in order of length, the order of embedding, put a page's 15 facts in 15 blocks;
        # the embedder orders a batch by length itself).
        missing = list(new.items())
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start:start + EMBED_BATCH]
            texts = [t for _h, t in part]
            self._table.add(np.array([h for h, _t in part], dtype=np.uint64), texts, self.embedder.embed(texts))
            self.embedded += len(part)
        if missing:
            self._coarse = self._dense = None
            conn.executemany("INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?)", self._table.take_changed())
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(self._table.dim),))
            rows_of = self._table.find(hashes)
        rows = []
        at = 0
        for path, stamp, facts in read:
            ids = rows_of[at:at + len(facts)].astype(np.int32).tobytes()
            at += len(facts)
            lines = np.array([f.line for f in facts], dtype=np.int32).tobytes()
            stamps = {j: (f.added, f.verified) for j, f in enumerate(facts) if f.added or f.verified}
            stored = _stamps_json(stamps)
            self._pages[path] = _PageEntry(stamp, ids, lines, stored)
            self._decoded.pop(path, None)
            rows.append((path, stamp[0], stamp[1], ids, lines, stored))
        conn.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?)", rows)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        made_by = f"{self.embedder.name} layout {LAYOUT}"
        for attempt in (0, 1, 2):
            conn = sqlite3.connect(self.path, timeout=10)
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                row = conn.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()
                if row is not None and row[0] != made_by and attempt < 2:
                    # Vectors of another model (or another layout) do not compare: start over,
                    # with a new file (dropping the tables would keep the old file's size).
                    conn.close()
                    self._discard_file()
                    self._pages = None
                    continue
                if row is None or row[0] != made_by:
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (made_by,))
                    self._pages = None
                # the text table by block (see curator.engine.facts.table): a text's row is its id
                # for good (the nearest and the notes name texts by it)
                conn.execute("CREATE TABLE IF NOT EXISTS blocks (id INTEGER PRIMARY KEY, hashes BLOB,"
                             " texts BLOB, codes BLOB, scales BLOB)")
                # (without a rowid: the path is the key, not a second index of 1.6 MB at 32k pages)
                conn.execute("CREATE TABLE IF NOT EXISTS pages (path TEXT PRIMARY KEY, mtime_ns INTEGER,"
                             " size INTEGER, ids BLOB, lines BLOB, stamps TEXT) WITHOUT ROWID")
                # each text's nearest (int32 rows) and their scores (a byte each: see _NEAR_STEPS)
                conn.execute("CREATE TABLE IF NOT EXISTS near (id INTEGER PRIMARY KEY, near BLOB, scores BLOB)")
                # the texts a name's notes asked about (a bit per row), and what they said, a
                # compressed batch per run: [[a, b, note], ...]
                conn.execute("CREATE TABLE IF NOT EXISTS noted (name TEXT PRIMARY KEY, bits BLOB)")
                conn.execute("CREATE TABLE IF NOT EXISTS notes (name TEXT, seq INTEGER, data BLOB,"
                             " PRIMARY KEY (name, seq))")
                conn.commit()
                return conn
            except sqlite3.DatabaseError:
                conn.close()
                if attempt:
                    raise
                self.path.unlink(missing_ok=True)  # a damaged index is derived data: rebuilt
        raise AssertionError("unreachable")

    def _discard_file(self) -> None:
        """Remove the index file (and SQLite's side files): a new one is made in its place."""
        for leftover in self.path.parent.glob(INDEX_NAME + "*"):
            leftover.unlink(missing_ok=True)

    def _load(self, conn: sqlite3.Connection) -> dict[str, _PageEntry]:
        row = conn.execute("SELECT value FROM meta WHERE key='dim'").fetchone()
        try:
            self._table = TextTable()
            if row is not None:
                blocks = conn.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]
                self._table.load(conn.execute("SELECT * FROM blocks ORDER BY id"), int(row[0]), blocks * BLOCK)
        except ValueError as exc:
            raise sqlite3.DatabaseError(str(exc)) from exc  # (rebuilt)
        self._coarse = self._dense = None
        self._near = None  # (read from the file when the whole wiki's pairs are first asked for)
        self._noted.clear()
        self._decoded.clear()
        # A damaged row is left out (its page is read again by this update). Checked for the
        # whole table at once: an object and three decodings per row took 0.5 s at 32,000 pages.
        entries: list[_PageEntry] = []
        paths: list[str] = []
        for path, mtime_ns, size, ids, lines, stamps in conn.execute("SELECT * FROM pages"):
            if not (isinstance(path, str) and isinstance(ids, bytes) and isinstance(lines, bytes)
                    and isinstance(mtime_ns, int) and isinstance(size, int)
                    and len(ids) == len(lines) and not len(ids) % 4 and (stamps is None or isinstance(stamps, str))):
                continue
            if stamps is not None:  # (few pages have dated facts)
                try:
                    _stamps_of(stamps)
                except (ValueError, TypeError, AttributeError, IndexError):
                    continue
            paths.append(path)
            entries.append(_PageEntry((mtime_ns, size), ids, lines, stamps))
        sizes = np.fromiter((len(e._ids) // 4 for e in entries), dtype=np.int64, count=len(entries))
        every = np.frombuffer(b"".join(e._ids for e in entries), dtype=np.int32)
        fits = np.ones(len(entries), dtype=bool)
        if len(every) and (every.min() < 0 or every.max() >= self._count):  # ids of texts the table lacks
            bad = np.concatenate([[0], np.cumsum((every < 0) | (every >= self._count))])
            ends = np.cumsum(sizes)
            fits = bad[ends] == bad[ends - sizes]
        return {p: e for p, e, ok in zip(paths, entries, fits.tolist(), strict=True) if ok}

    def _page_list(self, path: str) -> list[Fact]:
        """The facts of ``path`` as the index holds them (made from its entry; the last
        :data:`DECODED_PAGES` pages' kept)."""
        with self._lock:
            facts = self._decoded.get(path)
            if facts is not None:
                self._decoded.move_to_end(path)
                return facts
            entry = (self._pages or {}).get(path)
            if entry is None:
                return []
            stamps = entry.stamps
            ids = entry.ids.tolist()
            facts = [Fact(path, line, text, *stamps.get(j, (None, None)))
                     for j, (text, line) in enumerate(zip(self._table.texts(ids), entry.lines.tolist(), strict=True))]
            self._decoded[path] = facts
            if len(self._decoded) > DECODED_PAGES:
                self._decoded.popitem(last=False)
            return facts

    def _flat(self) -> _FactView:
        with self._lock:
            if self._dirty:
                assert self._pages is not None
                paths = sorted(self._pages)
                entries = [self._pages[p] for p in paths]
                sizes = np.array([len(e._ids) // 4 for e in entries], dtype=np.int64)
                starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else sizes
                self._page_start = dict(zip(paths, starts.tolist(), strict=True))
                page_of = np.repeat(np.arange(len(paths), dtype=np.int32), sizes)
                at = (np.arange(len(page_of), dtype=np.int64) - np.repeat(starts, sizes)).astype(np.int32)
                self._facts = _FactView(self, paths, page_of, at)
                # (held as int32: the int64 copies of half a million facts' rows took 10 MB)
                rows = np.frombuffer(b"".join(e._ids for e in entries), dtype=np.int32)
                self._fact_rows = rows
                self._row_order = order = np.argsort(rows, kind="stable").astype(np.int32)
                by_row = rows[order]
                self._row_bounds = np.searchsorted(by_row, np.arange(self._count + 1)).astype(np.int32)
                # a template: one text on more than TEMPLATE_PAGES pages. The facts by row are in
                # page order within a row (a stable sort of facts in page order), so a row's
                # pages are counted where the page changes (np.unique of row-page pairs took
                # 0.3 s of a one-shot append at 32,000 pages)
                on_page = page_of[order]
                first = np.ones(len(order), dtype=bool)
                first[1:] = (by_row[1:] != by_row[:-1]) | (on_page[1:] != on_page[:-1])
                self._template_rows = np.bincount(by_row[first], minlength=self._count) > TEMPLATE_PAGES
                self._dirty = False
            return self._facts

    def _facts_of_row(self, row: int) -> list[int]:
        """The positions in :meth:`facts` of every fact whose text is row ``row``'s."""
        out: list[int] = self._row_order[self._row_bounds[row]:self._row_bounds[row + 1]].tolist()
        return out

    # --- answers -------------------------------------------------------------------------
    def facts(self) -> list[Fact]:
        """Every fact of every page, by path then line (each made now: for a small wiki or a test)."""
        return list(self._flat())

    def _fact_at(self, path: str, at: int) -> Fact:
        """The ``at``-th fact of ``path`` (from its page's facts when they were made lately, else
        made alone: its page's other facts' texts may sit in other blocks of the table)."""
        with self._lock:
            made = self._decoded.get(path)
            if made is not None:
                return made[at]
            entry = (self._pages or {})[path]
            added, verified = entry.stamps.get(at, (None, None))
            return Fact(path, int(entry.lines[at]), self._table.text(int(entry.ids[at])), added, verified)

    def page_facts(self, path: str) -> list[Fact]:
        return list(self._page_list(path))

    # --- by position (what a walk over neighbours uses: a fact is made only for what it shows)
    def page_positions(self, path: str) -> list[int]:
        """The positions (in :meth:`facts`) of ``path``'s facts."""
        facts = self._flat()
        start = self._page_start.get(path)
        if start is None:
            return []
        entry = (self._pages or {})[path]
        return list(range(start, start + len(entry._ids) // 4)) if facts else []

    def template_at(self, position: int) -> bool:
        """Whether the fact at ``position`` is a template line (its text on more than
        :data:`TEMPLATE_PAGES` pages)."""
        self._flat()
        return bool(self._template_rows[self._fact_rows[position]])

    def neighbours_at(self, positions: list[int], k: int = 10, min_score: float = 0.0,
                      visible: Callable[[str], bool] | None = None) -> list[list[tuple[int, float]]]:
        """:meth:`neighbours_of` by position: each position's ``k`` nearest facts' positions and
        scores from ``min_score`` up, best first (itself left out)."""
        self._flat()
        out: list[list[tuple[int, float]]] = []
        for start in range(0, len(positions), 256):
            part = positions[start:start + 256]
            query = self._table.vectors(self._fact_rows[part].astype(np.int64))
            out += self._ranked(query, k, min_score, visible, list(part))
        return out

    def facts_at(self, positions: Iterable[int]) -> dict[int, Fact]:
        """The facts at ``positions`` of :meth:`facts`."""
        return self._facts_at(set(positions))

    def _position(self, fact: Fact) -> int | None:
        """Where ``fact`` is in :meth:`facts` (None: not in the index as it stands)."""
        self._flat()
        start = self._page_start.get(fact.path)
        if start is None:
            return None
        for j, f in enumerate(self._page_list(fact.path)):
            if f == fact:
                return start + j
        return None

    def _prefix_dims(self) -> int | None:
        dims = getattr(self.embedder, "prefix_dims", None)
        return int(dims) if isinstance(dims, int) and 0 < dims < self._table.dim else None

    def _exact_rows(self) -> np.ndarray:
        """The float32 table (up to :data:`EXACT_MAX` rows, held while nothing changes)."""
        with self._lock:
            if self._dense is None:
                self._dense = self._table.vectors(slice(0, self._count))
            return self._dense

    def _coarse_scores(self, query: np.ndarray, dims: int) -> np.ndarray:
        """Cosines of the unit rows ``query`` (prefixes) with every row's prefix. The prefixes'
        codes are read from the table a chunk at a time (a float32 copy of them took 39 MB at
        150,000 texts, for a pass that takes a few ms either way); a cosine needs no row's scale."""
        with self._lock:
            if self._coarse is None:
                lengths = np.concatenate([
                    np.linalg.norm(self._table.codes(slice(start, min(self._count, start + CHUNK)), dims)
                                   .astype(np.float32), axis=1) for start in range(0, self._count, CHUNK)])
                lengths[lengths == 0] = 1.0
                self._coarse = (1.0 / lengths).astype(np.float32)
            inverse = self._coarse
        out = np.empty((len(query), self._count), dtype=np.float32)
        for start in range(0, self._count, CHUNK):
            block = self._table.codes(slice(start, min(self._count, start + CHUNK)), dims).astype(np.float32)
            out[:, start:start + len(block)] = query @ block.T
        scores: np.ndarray = out * inverse
        return scores

    def _row_scores(self, query: np.ndarray, keep: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each row of ``query`` (float32, unit), table rows and their exact scores, best first:
        every row up to :data:`EXACT_MAX`, else the best ``keep`` of the coarse pass."""
        count = self._count
        dims = self._prefix_dims()
        if count <= EXACT_MAX or dims is None:
            if count <= EXACT_MAX:
                full = query @ self._exact_rows().T
            else:  # no prefix to trust: exact, a chunk at a time
                full = np.empty((len(query), count), dtype=np.float32)
                for start in range(0, count, CHUNK):
                    block = self._table.vectors(slice(start, min(count, start + CHUNK)))
                    full[:, start:start + CHUNK] = query @ block.T
            out = []
            for row in full:
                order = np.argsort(-row, kind="stable")
                out.append((order, row[order]))
            return out
        keep = min(count, keep)
        out = []
        # (a few questions at a time: every row's coarse score for 256 questions took 150 MB)
        for start in range(0, len(query), COARSE_QUESTIONS):
            out += self._coarse_then_exact(query[start:start + COARSE_QUESTIONS], keep, dims)
        return out

    def _coarse_then_exact(self, query: np.ndarray, keep: int, dims: int) -> list[tuple[np.ndarray, np.ndarray]]:
        count = self._count
        coarse = self._coarse_scores(unit_rows(query[:, :dims]), dims)
        coarse *= -1
        picked = np.argpartition(coarse, keep - 1, axis=1)[:, :keep] if keep < count else \
            np.tile(np.arange(count), (len(query), 1))
        del coarse
        out = []
        for q, rows in zip(query, picked, strict=True):
            exact = self._table.vectors(rows) @ q
            order = np.argsort(-exact, kind="stable")
            out.append((rows[order], exact[order]))
        return out

    def _vector_of(self, fact: Fact) -> np.ndarray:
        with self._lock:
            row = int(self._table.find(text_hashes([fact.text]))[0])
            if row >= 0:
                out: np.ndarray = self._table.vectors(np.array([row]))[0]
                return out
        vector: np.ndarray = self.embedder.embed([fact.text])[0]
        return vector

    def _ranked(self, query: np.ndarray, k: int, min_score: float, visible: Callable[[str], bool] | None,
                skip: list[int | None]) -> list[list[tuple[int, float]]]:
        """For each row of ``query``, the ``k`` best facts (positions) from ``min_score`` up, the
        position ``skip`` gives for the row left out."""
        facts = self._flat()
        answers: list[list[tuple[int, float]]] = [[] for _ in skip]
        if not facts:
            return answers
        keep = max(COARSE_KEEP, 8 * k)
        todo = list(range(len(skip)))
        while todo:
            ranked = self._row_scores(query[todo], keep)
            again = []
            for i, (rows, scores) in zip(todo, ranked, strict=True):
                out: list[tuple[int, float]] = []
                for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
                    if score < min_score or len(out) >= k:
                        break
                    for position in self._facts_of_row(row):
                        if position == skip[i] or (visible is not None and not visible(facts.path(position))):
                            continue
                        if len(out) < k:
                            out.append((position, round(score, 4)))
                answers[i] = out
                # hidden facts took the coarse pass's places: look further
                if len(out) < k and len(rows) < self._count and float(scores[-1]) >= min_score:
                    again.append(i)
            if not again or keep >= self._count:
                break
            todo, keep = again, keep * 4
        return answers

    def neighbours(self, fact: Fact, k: int = 10, min_score: float = 0.0,
                   visible: Callable[[str], bool] | None = None) -> list[tuple[Fact, float]]:
        """The ``k`` facts closest to ``fact`` (itself left out) scoring at least ``min_score``, best first."""
        return self.neighbours_of([fact], k, min_score, visible)[0]

    def neighbours_of(self, facts: list[Fact], k: int = 10, min_score: float = 0.0,
                      visible: Callable[[str], bool] | None = None) -> list[list[tuple[Fact, float]]]:
        """:meth:`neighbours` of each of ``facts``, in one matrix product per batch."""
        every = self._flat()
        return [[(every[p], score) for p, score in near]
                for near in self._neighbour_positions([self._position(f) for f in facts], facts, k, min_score,
                                                      visible)]

    def _neighbour_positions(self, positions: list[int | None], facts: list[Fact], k: int, min_score: float,
                             visible: Callable[[str], bool] | None) -> list[list[tuple[int, float]]]:
        out: list[list[tuple[int, float]]] = []
        for start in range(0, len(facts), 256):
            batch = facts[start:start + 256]
            query = np.vstack([self._vector_of(f) for f in batch]) if batch else np.zeros((0, 1), np.float32)
            out += self._ranked(query, k, min_score, visible, positions[start:start + 256])
        return out

    def nearest_text(self, text: str, k: int = 10, visible: Callable[[str], bool] | None = None,
                     ) -> list[tuple[Fact, float]]:
        """The ``k`` facts closest to ``text`` (any text, embedded now), best first."""
        every = self._flat()
        return [(every[p], score) for p, score in
                self._ranked(self.embedder.embed([text])[:1], k, -1.0, visible, [None])[0]]

    def pairs(self, min_score: float, page: str | None = None,
              visible: Callable[[str], bool] | None = None, k: int = 25) -> Iterator[tuple[Fact, Fact, float]]:
        """Pairs of facts scoring at least ``min_score``, best first (with ``page``, the pairs
        holding one of its facts, that fact first); each pair once. Template lines
        (:data:`TEMPLATE_PAGES`) make no pairs. With ``page`` each of its facts brings at most its
        ``k`` best; the whole wiki's pairs are each text's :data:`NEAR_K` nearest (worked out once
        per text and saved: see :meth:`_nearest_rows`), ``min_score`` at least :data:`NEAR_MIN`."""
        facts = self._flat()
        if not facts:
            return iter(())
        ok = self._usable(visible)
        found: dict[tuple[int, int], float] = {}
        if page is not None:
            asking = [a for a in self.page_positions(page) if ok[a]]
            for a, near in zip(asking, self.neighbours_at(asking, k, min_score, visible), strict=True):
                for c, score in near:
                    if self._template_rows[self._fact_rows[c]]:
                        continue
                    # the asking page's fact first; two facts of the page once
                    key = (a, c) if facts.path(c) != page else (min(a, c), max(a, c))
                    found[key] = score
        else:
            for ra, rb, score in self.row_pairs(max(min_score, NEAR_MIN), visible, k):
                for a, c in self._fact_pairs(ra, rb, ok):
                    found[(min(a, c), max(a, c))] = score
        ordered = sorted(found.items(), key=lambda t: (-t[1], t[0]))
        made = self._facts_at({p for pair in found for p in pair})
        return iter([(made[a], made[c], round(s, 4)) for (a, c), s in ordered])

    def _usable(self, visible: Callable[[str], bool] | None) -> np.ndarray:
        """Which facts (positions of :meth:`facts`) may pair: seen by the asker, not a template."""
        facts = self._flat()
        if visible is None:
            ok = np.ones(len(facts), dtype=bool)
        else:
            ok = np.array([bool(visible(p)) for p in facts.paths], dtype=bool)[facts.page_of] if len(facts) else \
                np.zeros(0, dtype=bool)
        ok &= ~self._template_rows[self._fact_rows]
        return ok

    def _fact_pairs(self, ra: int, rb: int, ok: np.ndarray) -> Iterator[tuple[int, int]]:
        """The pairs of usable facts (positions) of the texts ``ra`` and ``rb`` (one text on
        several pages pairs with itself)."""
        left = [a for a in self._facts_of_row(ra) if ok[a]]
        right = left if rb == ra else [c for c in self._facts_of_row(rb) if ok[c]]
        for a in left:
            for c in right:
                if a != c and (rb != ra or a < c):
                    yield a, c
    def row_pairs(self, min_score: float, visible: Callable[[str], bool] | None = None,
                  k: int = NEAR_K) -> list[tuple[int, int, float]]:
        """The whole wiki's pairs of texts (rows) scoring at least ``min_score`` (from
        :data:`NEAR_MIN`), both with a fact the asker may see, each text with its ``k`` nearest
        (at most :data:`NEAR_K`), each pair once, best first; a text on several pages pairs with
        itself (score 1)."""
        a, b, scores = self._row_pair_arrays(min_score, visible, k)
        return list(zip(a.tolist(), b.tolist(), scores.tolist(), strict=True))

    def _row_pair_arrays(self, min_score: float, visible: Callable[[str], bool] | None,
                         k: int = NEAR_K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`row_pairs` as three arrays (lower row, higher row, score): a first whole-wiki
        run has 1.7 M pairs at 32,000 pages, a loop over them in Python took 8 s."""
        facts = self._flat()
        empty = np.zeros(0, dtype=np.int64)
        if not facts:
            return empty, empty, np.zeros(0, dtype=np.float64)
        ok = self._usable(visible)
        live = np.unique(self._fact_rows[ok])
        near = self._nearest_rows(live)
        usable = np.zeros(self._count, dtype=bool)
        usable[live] = True
        k = max(0, min(k, NEAR_K))
        rows = near.rows[live, :k].astype(np.int64)
        steps = near.steps[live, :k]
        keep = (rows >= 0) & (_scores(steps) >= min_score)
        keep[keep] &= usable[rows[keep]]
        source = np.broadcast_to(live[:, None], rows.shape)[keep]
        other, score = rows[keep], _scores(steps[keep])
        lower, higher = np.minimum(source, other), np.maximum(source, other)
        # a text with more than one usable fact pairs with itself
        twice = np.flatnonzero(np.bincount(self._fact_rows[ok], minlength=self._count) > 1)
        lower, higher = np.concatenate([lower, twice]), np.concatenate([higher, twice])
        score = np.concatenate([score, np.ones(len(twice))])
        # each pair once (found from both sides, the same score either way)
        _, first = np.unique(lower * max(self._count, 1) + higher, return_index=True)
        lower, higher, score = lower[first], higher[first], score[first]
        order = np.lexsort((higher, lower, -score))
        return lower[order], higher[order], score[order]

    def row_facts(self, rows: list[int], visible: Callable[[str], bool] | None = None) -> dict[int, list[Fact]]:
        """The usable facts (:meth:`_usable`) of each of ``rows`` (texts), by path and line."""
        ok = self._usable(visible)
        positions = {r: [a for a in self._facts_of_row(r) if ok[a]] for r in rows}
        made = self._facts_at({a for found in positions.values() for a in found})
        return {r: [made[a] for a in found] for r, found in positions.items()}

    def row_count(self, row: int, visible: Callable[[str], bool] | None = None) -> int:
        """How many usable facts have row ``row``'s text."""
        return len(self._facts_of_row(row)) if visible is None else \
            sum(1 for a in self._facts_of_row(row) if visible(self._flat().path(a)))

    # --- each text's nearest, kept --------------------------------------------------------
    def _nearest_rows(self, rows: np.ndarray) -> _NearTable:
        """Each of ``rows``' :data:`NEAR_K` nearest texts from :data:`NEAR_MIN` up, best first.

        Worked out once per text and saved with the index: an append adds a text or two, and
        only those are asked (a pair of an old and a new text is found from the new one's side).
        Many at once (a first time) from an HNSW graph on a big wiki, a few exactly."""
        self._flat()  # (which texts have facts: the pool of neighbours)
        with self._lock:
            table = self._near if self._near is not None else self._load_near()
            self._near = table
            missing = rows[~table.has(rows)]
            if len(missing):
                live = np.flatnonzero(np.diff(self._row_bounds) > 0)
                near, scores = self._knn(missing, live, NEAR_K, NEAR_MIN)
                table.put(missing, near, scores)
                self._save_near(table, missing.tolist())
            return table

    def _load_near(self) -> _NearTable:
        """The saved nearest texts, as arrays at once (a row at a time took 1.8 s at 150,000 texts);
        a row that does not fit (damaged, or naming a text the table lacks) is left out, asked again."""
        table = _NearTable()
        conn = self._connect()
        try:
            saved = conn.execute("SELECT id, near, scores FROM near").fetchall()
        finally:
            conn.close()
        if not saved:
            return table
        ids = np.fromiter((r for r, _n, _s in saved), dtype=np.int64, count=len(saved))
        widths = np.fromiter((len(s) for _r, _n, s in saved), dtype=np.int64, count=len(saved))
        fits = (np.fromiter((len(n) for _r, n, _s in saved), dtype=np.int64, count=len(saved)) == 4 * widths) \
            & (widths <= NEAR_K) & (ids >= 0) & (ids < self._count)
        kept = np.flatnonzero(fits).tolist()
        widths = widths[kept]
        near = np.frombuffer(b"".join(saved[i][1] for i in kept), dtype=np.int32)
        steps = np.frombuffer(b"".join(saved[i][2] for i in kept), dtype=np.uint8)
        owner = np.repeat(np.arange(len(kept)), widths)
        bad = np.zeros(len(kept), dtype=bool)
        bad[owner[(near < 0) | (near >= self._count)]] = True
        good = ~bad[owner]
        column = np.arange(len(near)) - np.repeat(np.cumsum(widths) - widths, widths)
        slot = np.cumsum(~bad) - 1  # (each good row's place among the good ones)
        dense_near = np.full((int((~bad).sum()), NEAR_K), -1, dtype=np.int32)
        dense_steps = np.zeros(dense_near.shape, dtype=np.uint8)
        dense_near[slot[owner[good]], column[good]] = near[good]
        dense_steps[slot[owner[good]], column[good]] = steps[good]
        table.put_steps(ids[kept][~bad], dense_near, dense_steps)
        return table

    def _save_near(self, table: _NearTable, rows: list[int]) -> None:
        conn = self._connect()
        try:
            counts = np.count_nonzero(table.rows[rows] >= 0, axis=1).tolist() if rows else []
            conn.executemany("INSERT OR REPLACE INTO near VALUES (?, ?, ?)", [
                (r, table.rows[r, :n].tobytes(), table.steps[r, :n].tobytes())
                for r, n in zip(rows, counts, strict=True)])
            conn.commit()
        finally:
            conn.close()

    def _knn(self, asking: np.ndarray, pool: np.ndarray, k: int, min_score: float,
             ) -> tuple[np.ndarray, np.ndarray]:
        """For each row of ``asking``, its ``k`` nearest rows of ``pool`` (itself left out) from
        ``min_score`` up, best first, scored on every coordinate: (rows, scores), a row of each per
        text asked, -1 (score 0) after the last found."""
        dims = self._prefix_dims()
        near = np.full((len(asking), k), -1, dtype=np.int64)
        scores = np.zeros((len(asking), k), dtype=np.float64)
        if len(pool) < 2 or not len(asking):
            return near, scores
        if not (len(asking) > GRAPH_MIN and len(pool) > EXACT_MAX and dims is not None):
            in_pool = np.zeros(self._count, dtype=bool)
            in_pool[pool] = True
            for start in range(0, len(asking), 256):
                part = asking[start:start + 256]
                for i, (rows, found) in enumerate(self._row_scores(self._table.vectors(part),
                                                                   max(COARSE_KEEP, 8 * k))):
                    keep = in_pool[rows] & (rows != part[i]) & (found >= min_score)
                    rows, found = rows[keep][:k], found[keep][:k]
                    near[start + i, :len(rows)], scores[start + i, :len(rows)] = rows, found
            return near, scores
        from usearch.index import Index  # only for many texts at once on a big wiki

        # (inner products of the int8 units: the same order as their cosines, and 1.5x as fast to
        # build and search at 150,000 texts)
        graph = Index(ndim=dims, metric="ip", dtype="i8", connectivity=12, expansion_add=48,
                      expansion_search=max(64, 4 * k))
        graph.add(np.arange(len(pool)), _int8_units(self._table.vectors(pool, dims)), threads=0)
        keys = graph.search(_int8_units(self._table.vectors(asking, dims)), min(len(pool), GRAPH_CANDIDATES * k + 1),
                            threads=0).keys.astype(np.int64)
        del graph
        keys[(keys < 0) | (keys >= len(pool))] = -1
        candidates = np.where(keys >= 0, pool[np.maximum(keys, 0)], -1)
        candidates[candidates == asking[:, None]] = -1  # (itself)

        # the graph's candidates scored on every coordinate, a chunk of texts at a time, on every
        # core (numpy lets go of the interpreter while it unpacks and multiplies)
        def rescore(start: int) -> None:
            part = candidates[start:start + 1024]
            query = self._table.vectors(asking[start:start + 1024])
            flat = np.maximum(part, 0).ravel()
            found = np.matmul(self._table.vectors(flat).reshape(*part.shape, -1), query[:, :, None])[:, :, 0]
            found[part < 0] = -np.inf
            order = np.argsort(-found, axis=1, kind="stable")[:, :k]
            best = np.take_along_axis(found, order, axis=1)
            kept = best >= min_score
            near[start:start + 1024] = np.where(kept, np.take_along_axis(part, order, axis=1), -1)
            scores[start:start + 1024] = np.where(kept, best, 0.0)

        with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="fact-knn") as workers:
            list(workers.map(rescore, range(0, len(asking), 1024)))
        return near, scores

    # --- pairs noted by a caller, remembered ----------------------------------------------
    def noted_pairs(self, name: str, min_score: float, note: Callable[[str, str], str | None],
                    visible: Callable[[str], bool] | None = None,
                    ) -> list[tuple[Fact, Fact, float, str]]:
        """The whole wiki's pairs of facts (as :meth:`row_pairs`) for which ``note(text_a,
        text_b)`` says something, with what it says (about the pair in the order given), best first.

        ``note`` is asked once per pair of texts ever: what it said (only when it said something)
        is saved with the index under ``name`` (which names ``note`` and its version), so a later
        call asks only about the texts new since. The conflict queue's reasons are such notes: a
        first whole-wiki run reads every pair, the next ones the new texts'."""
        lower, higher, scores = self._row_pair_arrays(max(min_score, NEAR_MIN), visible)
        with self._lock:
            done, said = self._notes(name)
            if len(done) < self._count:
                done = np.concatenate([done, np.zeros(self._count - len(done), dtype=bool)])
            keys = (lower << 32) | higher  # (row_pairs gives each pair as (lower row, higher row))
            asking = (lower != higher) & ~(done[lower] & done[higher])
            if said and asking.any():
                asking[asking] &= ~np.isin(keys[asking], np.fromiter(said, dtype=np.int64, count=len(said)))
            if asking.any():
                # (as arrays: 1.7 M pairs as tuples took 150 MB)
                pairs = np.stack([lower[asking], higher[asking]], axis=1)
                asked = np.unique(pairs)
                with self._table.bulk():
                    texts = [self._table.text(r) for r in asked.tolist()]
                # (the pairs name the texts by their place in ``texts``)
                local = np.searchsorted(asked, pairs).astype(np.int32)
                said_by_place = _notes_taken(note, texts, local, lambda: self._spread(asked))
                fresh = [(int(asked[a]), int(asked[b]), t) for a, b, t in said_by_place]
                self._save_notes(name, fresh, asked)
                done, said = self._notes(name)
            noted = np.fromiter((key in said for key in keys.tolist()), dtype=bool, count=len(keys))
            ok = self._usable(visible)
            found: list[tuple[int, int, float, str]] = []
            for ra, rb, score in zip(lower[noted].tolist(), higher[noted].tolist(), scores[noted].tolist(),
                                     strict=True):
                for a, c in self._fact_pairs(ra, rb, ok):
                    # by path and line, as pairs, with the note about that order
                    first, second = (a, c) if a < c else (c, a)
                    text_said = said.get((ra << 32) | rb if a < c else (rb << 32) | ra)
                    if text_said:
                        found.append((first, second, score, text_said))
            made = self._facts_at({p for a, c, _s, _t in found for p in (a, c)})
        return [(made[a], made[c], round(score, 4), text) for a, c, score, text in found]

    def _spread(self, rows: np.ndarray) -> np.ndarray:
        """Each of ``rows``' place along the direction its texts' meanings spread most (the first
        principal component of their prefixes): close texts get close places, so cutting the
        line in parts cuts few pairs of close texts apart."""
        dims = self._prefix_dims() or self._table.dim
        sample = self._table.vectors(rows[::max(1, len(rows) // 8192)], dims)
        centre = sample.mean(axis=0)
        direction = np.linalg.svd(sample - centre, full_matrices=False)[2][0]
        places: np.ndarray = np.concatenate([self._table.vectors(rows[start:start + CHUNK], dims) @ direction
                                             for start in range(0, len(rows), CHUNK)])
        return places

    def _facts_at(self, positions: set[int]) -> dict[int, Fact]:
        """The facts at ``positions`` of :meth:`facts`, each page read back once."""
        facts = self._flat()
        by_page: dict[int, list[int]] = {}
        for p in positions:
            by_page.setdefault(int(facts.page_of[p]), []).append(p)
        out: dict[int, Fact] = {}
        with self._table.bulk(len(by_page) > BULK_PAGES):
            for page, wanted in by_page.items():
                listed = self._page_list(facts.paths[page])
                for p in wanted:
                    out[p] = listed[int(facts.at[p])]
        return out

    def _notes(self, name: str) -> tuple[np.ndarray, dict[int, str]]:
        """Which texts (rows) ``name`` was asked about, and what it said, by pair (``a << 32 | b``)."""
        cached = self._noted.get(name)
        if cached is None:
            conn = self._connect()
            try:
                row = conn.execute("SELECT bits FROM noted WHERE name=?", (name,)).fetchone()
                done = np.unpackbits(np.frombuffer(row[0], dtype=np.uint8)).astype(bool)[:self._count] \
                    if row else np.zeros(0, dtype=bool)
                said: dict[int, str] = {}
                for (data,) in conn.execute("SELECT data FROM notes WHERE name=? ORDER BY seq", (name,)):
                    try:
                        said.update(((a << 32) | b, t) for a, b, t in json.loads(zlib.decompress(data)))
                    except (zlib.error, ValueError, TypeError):
                        continue  # a damaged batch: its pairs are read again (their texts are not marked)
            finally:
                conn.close()
            cached = self._noted[name] = (done, said)
        return cached

    def _save_notes(self, name: str, fresh: list[tuple[int, int, str]], asked: np.ndarray) -> None:
        done, said = self._notes(name)
        grown = np.zeros(self._count, dtype=bool)
        grown[:min(len(done), self._count)] = done[:self._count]
        grown[asked] = True
        conn = self._connect()
        try:
            if fresh:
                seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM notes WHERE name=?", (name,)).fetchone()[0]
                conn.execute("INSERT INTO notes VALUES (?, ?, ?)",
                             (name, seq, zlib.compress(json.dumps(fresh).encode(), 6)))
            conn.execute("INSERT OR REPLACE INTO noted VALUES (?, ?)", (name, np.packbits(grown).tobytes()))
            conn.commit()
        finally:
            conn.close()
        said.update(((a << 32) | b, t) for a, b, t in fresh)
        self._noted[name] = (grown, said)

    def size_on_disk(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(INDEX_NAME + "*"))


#: From this many pairs to read at once (a first whole-wiki run), the notes are taken by child
#: processes, one per core (up to :data:`NOTE_WORKERS`), each given the pairs of one stretch of
#: meaning (:meth:`FactIndex._spread`, :func:`_cut`) so most of a text's pairs are read where the
#: text is. On two cores the 1.55 M close pairs of a 32,000-page wiki's conflict queue took 24.5 s
#: in one process and 14 s in two. It also keeps a long-lived process (the station, the MCP server) small: reading those
#: pairs keeps ~1.4 M small objects of the texts read, ~1 GB at its peak, which a station never got
#: back (freed small objects leave their memory arenas pinned by whatever else lives there).
CHILD_PAIRS = 100_000
NOTE_WORKERS = 4
NoteFn = Callable[[str, str], "str | None"]


def _notes_taken(note: NoteFn, texts: list[str], pairs: np.ndarray,
                 spread: Callable[[], np.ndarray] | None = None) -> list[tuple[int, int, str]]:
    """:func:`_notes_of`, in processes of their own for many pairs when ``note`` can be named there
    (a module's function), the pairs cut by ``spread`` (each text's place along a line of meaning);
    in this one otherwise, or for the part whose process failed."""
    importable = "<" not in getattr(note, "__qualname__", "<") and getattr(note, "__module__", None)
    # (a frozen desktop build's executable is the station itself, not a Python to start)
    if len(pairs) < CHILD_PAIRS or not importable or getattr(sys, "frozen", False):
        return _notes_of(note, texts, pairs)
    workers = max(1, min(NOTE_WORKERS, os.cpu_count() or 1))
    if workers == 1 and not runs_for_long():
        return _notes_of(note, texts, pairs)  # (nothing to gain: a one-shot command's memory goes back)
    parts = _cut(pairs, spread() if spread is not None and workers > 1 else None, workers)
    with ThreadPoolExecutor(len(parts), thread_name_prefix="fact-notes") as pool:
        taken = list(pool.map(lambda part: _notes_of_part(note, texts, part), parts))
    return [said for part in taken for said in part]


def _cut(pairs: np.ndarray, places: np.ndarray | None, parts: int) -> list[np.ndarray]:
    """``pairs`` in up to ``parts`` parts of about as many pairs each, few texts read in two.

    The texts are cut into stretches of ``places`` holding as many pairs each; a pair within one
    stretch goes there. A pair across two needs one of its texts read in both: the one with more
    such pairs (read twice anyway, it settles most of the others), the pair going to the other's
    stretch. At 32,000 pages: 12 % of the pairs cross, 29,000 of 140,000 texts are read twice
    (54,000 when each pair went with its first text)."""
    if places is None or parts < 2 or not len(pairs):
        return [pairs]
    degree = np.bincount(pairs.ravel(), minlength=len(places))
    order = np.argsort(places, kind="stable")
    reach = np.cumsum(degree[order])
    stretch = np.empty(len(places), dtype=np.int64)
    stretch[order] = np.minimum(reach * parts // max(int(reach[-1]), 1), parts - 1)
    first, second = stretch[pairs[:, 0]], stretch[pairs[:, 1]]
    across = first != second
    crossing = np.bincount(pairs[across].ravel(), minlength=len(places))
    # (the first text is read in the second's stretch when it has more crossing pairs)
    to_second = across & (crossing[pairs[:, 0]] >= crossing[pairs[:, 1]])
    home = np.where(to_second, second, first)
    return [pairs[home == part] for part in range(parts) if np.any(home == part)]


def _notes_of_part(note: NoteFn, texts: list[str], pairs: np.ndarray) -> list[tuple[int, int, str]]:
    """:func:`_notes_of` of one part in a process of its own (only its texts sent); in this one when
    that process fails."""
    used = np.unique(pairs)
    try:
        local = np.searchsorted(used, pairs).astype(np.int32)
        said = _notes_in_a_child(note, [texts[t] for t in used.tolist()], local)
    except (OSError, pickle.PickleError, EOFError, ValueError) as exc:
        log.warning("reading %d pairs in a process of its own failed (%s): reading them here", len(pairs), exc)
        return _notes_of(note, texts, pairs)
    back = used.tolist()
    return [(back[a], back[b], t) for a, b, t in said]


def _notes_in_a_child(note: NoteFn, texts: list[str], pairs: np.ndarray) -> list[tuple[int, int, str]]:
    """:func:`_notes_of` in a Python process started for it, the work in and the notes out by pipe.

    (A plain process rather than multiprocessing's: a spawned worker imports its parent's main
    module again, and the caller may be any script; a forked one would inherit the station's
    threads and Qt.)"""
    import curator

    root = str(Path(curator.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", "from curator.engine.facts.index import notes_child; notes_child()"],
                          input=pickle.dumps((note, texts, pairs), protocol=pickle.HIGHEST_PROTOCOL),
                          capture_output=True, env=env, check=False)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"it ended with {done.returncode}: {said[-1] if said else 'nothing said'}")
    notes: list[tuple[int, int, str]] = pickle.loads(done.stdout)
    return notes


def notes_child() -> None:
    """The child's side of :func:`_notes_in_a_child`: the work from stdin, the notes to stdout."""
    note, texts, pairs = pickle.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(pickle.dumps(_notes_of(note, texts, pairs), protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()


def _notes_of(note: NoteFn, texts: list[str], pairs: np.ndarray) -> list[tuple[int, int, str]]:
    """What ``note`` says of each pair of ``texts`` (``pairs``: their places), both ways round
    where it says something, as (place, place, what it said)."""
    fresh: list[tuple[int, int, str]] = []
    # (the collector paused: the texts read leave ~1.4 M small objects, none cyclic, and walking
    # them again and again took 9 s of 30)
    with gc_paused():
        for a, b in pairs.tolist():
            said_ab = note(texts[a], texts[b])
            if said_ab:  # and the other way round, for a pair shown in the other order
                fresh.append((a, b, said_ab))
                said_ba = note(texts[b], texts[a])
                if said_ba:
                    fresh.append((b, a, said_ba))
    return fresh


def _settings(path: Path) -> dict[str, object] | None:
    return read_settings(path, '{"embedder": "endpoint", "url": "http://127.0.0.1:8080/v1", "model": "..."}')


def fact_index_for(wiki: Wiki, embedder: Embedder | None = None, progress: Progress | None = None, *,
                   walk: bool = True, stamps: dict[str, tuple[int, int]] | None = None) -> FactIndex:
    """The wiki's fact index (one per session), brought up to date. ``embedder``: used when the
    index is made (tests, or a caller with its own model); ``progress``, ``walk``, ``stamps``:
    see :meth:`FactIndex.update`."""
    session = wiki.session
    with session.services_lock:
        index = session.service(FactIndex, lambda: FactIndex(wiki, embedder))
    index.update(progress=progress, walk=walk, stamps=stamps)
    return index


def configured_embedder(wiki: Wiki) -> Embedder:
    """The embedder the wiki's settings choose (the one its fact index uses), without loading or
    building the index: for a caller comparing a few texts now (the write door's same-page check)."""
    return embedder_from(_settings(wiki.state_dir / SETTINGS_NAME))


def fact_index_on_disk(wiki: Wiki) -> bool:
    """Whether the wiki has a fact index file: :func:`fact_index_for` then loads and updates it
    rather than building it from nothing."""
    return (wiki.state_dir / INDEX_NAME).is_file()


def fact_rows(index: FactIndex, facts: list[Fact]) -> np.ndarray:
    """Unit float32 rows of ``facts``, embedded now by ``index``'s model: the write door decides
    a duplicate by them, and the index's own vectors are coarser (4 bits a coordinate) than a
    decision that may decline a fact should rest on."""
    if not facts:
        return np.zeros((0, max(index.embedder.dim, 1)), dtype=np.float32)
    return index.embedder.embed([f.text for f in facts])


def whole_wiki_kept(wiki: Wiki) -> bool:
    """Whether the wiki's fact index file holds the whole wiki's nearest texts (a whole-wiki
    queue ran before): then another whole-wiki answer costs what changed since, not a first run."""
    path = wiki.state_dir / INDEX_NAME
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT 1 FROM near LIMIT 1").fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False
