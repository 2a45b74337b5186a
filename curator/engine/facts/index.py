"""The fact index: every fact of every page (:func:`~curator.engine.corpus.facts.page_facts`) with
its embedding, kept in ``facts.sqlite`` under the wiki's local state and brought up to date page by
page.

A page is re-read only when its (mtime, size) differs from what the index holds, and a fact is
embedded only when no fact of the index already has its exact text (vectors are looked up by a
hash of the text), so an append re-embeds one line. The file is rebuilt when missing, unreadable or
made by another embedder.

Vectors are kept as int8 (each unit-length coordinate times 127): a quarter of float32 on disk and
in memory, and scores within about 0.01 of float32's, which is plenty for ranking. Neighbours are
exact: a chunked matrix product with numpy (see tests/perf/test_perf_facts.py for the figures).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from curator.engine.corpus.facts import Fact, page_facts
from curator.engine.facts.embed import Embedder, embedder_from

if TYPE_CHECKING:
    from curator.engine.corpus.page import Page
    from curator.engine.wiki import Wiki

INDEX_NAME = "facts.sqlite"
#: Optional settings file next to the index choosing the embedder (see :func:`embedder_from`).
SETTINGS_NAME = "facts-embedder.json"
#: Rows compared per matrix product (bounds the temporary float32 copy to ~64 MB at dim 256).
CHUNK = 65536
#: Up to this size the vectors are also held as float32 (no conversion on every query).
DENSE_BYTES = 256 * 2**20
#: A text found on more pages than this is a template line ("Filed under #howto."), not a fact
#: that two pages happen to share: :meth:`FactIndex.pairs` leaves it out (the pairs of one line on
#: 100 pages would be 4,950 pairs saying nothing).
TEMPLATE_PAGES = 5
_SCALE = 127.0


def _text_hash(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).digest()[:12]


def _quantise(rows: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(rows * _SCALE), -127, 127).astype(np.int8)


class _PageEntry:
    __slots__ = ("facts", "stamp", "vectors")

    def __init__(self, stamp: tuple[int, int], facts: list[Fact], vectors: np.ndarray) -> None:
        self.stamp = stamp
        self.facts = facts
        self.vectors = vectors


class FactIndex:
    """Every fact of a wiki and its vector (see the module docstring). Thread-safe."""

    def __init__(self, wiki: Wiki, embedder: Embedder | None = None) -> None:
        self.wiki = wiki
        self.path = wiki.state_dir / INDEX_NAME
        self.embedder = embedder or embedder_from(_settings(wiki.state_dir / SETTINGS_NAME))
        self._lock = threading.RLock()
        self._pages: dict[str, _PageEntry] | None = None
        self._facts: list[Fact] = []
        self._matrix = np.zeros((0, 0), dtype=np.int8)
        self._dirty = True
        self._templates: set[str] = set()
        self._dense: np.ndarray | None = None
        #: every vector held, by a hash of its fact's text: a fact already known (unchanged, moved
        #: to another line, copied from another page) is never embedded again
        self._by_text: dict[bytes, np.ndarray] = {}
        #: facts embedded by this index so far (what the incremental tests count)
        self.embedded = 0

    # --- keeping current ------------------------------------------------------------------
    def update(self) -> list[str]:
        """Bring the index up to the pages as they are; the paths re-read (and removed)."""
        with self._lock:
            conn = self._connect()
            try:
                if self._pages is None:
                    self._pages = self._load(conn)
                pages = self.wiki.pages
                gone = [p for p in self._pages if p not in pages]
                changed = [p for p, page in pages.items()
                           if (e := self._pages.get(p)) is None or e.stamp != (page.mtime_ns, page.size)]
                if not gone and not changed:
                    return []
                if changed:
                    self._embed_pages(conn, changed, pages)
                for path in gone:
                    del self._pages[path]
                conn.executemany("DELETE FROM pages WHERE path=?", [(p,) for p in gone])
                conn.commit()
                self._dirty = True
                return changed + gone
            finally:
                conn.close()

    def _embed_pages(self, conn: sqlite3.Connection, paths: list[str], pages: dict[str, Page]) -> None:
        assert self._pages is not None
        known = self._by_text
        read: list[tuple[str, tuple[int, int], list[Fact]]] = []
        for path in paths:
            page = pages[path]
            try:
                text = self.wiki.read_text(path)
            except OSError:
                continue  # vanished since the listing: the next update drops it
            read.append((path, (page.mtime_ns, page.size), page_facts(path, text)))
        missing = list(dict.fromkeys(f.text for _p, _s, facts in read for f in facts
                                     if _text_hash(f.text) not in known))
        if missing:
            for text, row in zip(missing, _quantise(self.embedder.embed(missing)), strict=True):
                known[_text_hash(text)] = row
            self.embedded += len(missing)
        dim = self.embedder.dim
        rows = []
        for path, stamp, facts in read:
            vectors = (np.stack([known[_text_hash(f.text)] for f in facts]) if facts
                       else np.zeros((0, dim), dtype=np.int8))
            self._pages[path] = _PageEntry(stamp, facts, vectors)
            blob = json.dumps([[f.line, f.text, f.added] for f in facts], ensure_ascii=False)
            rows.append((path, stamp[0], stamp[1], blob, vectors.tobytes()))
        conn.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?)", rows)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in (0, 1):
            conn = sqlite3.connect(self.path, timeout=10)
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                conn.execute("CREATE TABLE IF NOT EXISTS pages (path TEXT PRIMARY KEY, mtime_ns INTEGER,"
                             " size INTEGER, facts TEXT, vectors BLOB)")
                row = conn.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()
                if row is None or row[0] != self.embedder.name:
                    # Vectors of another model do not compare with this one's: start over.
                    conn.execute("DELETE FROM pages")
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (self.embedder.name,))
                    conn.commit()
                    self._pages = None
                return conn
            except sqlite3.DatabaseError:
                conn.close()
                if attempt:
                    raise
                self.path.unlink(missing_ok=True)  # a damaged index is derived data: rebuilt
        raise AssertionError("unreachable")

    def _load(self, conn: sqlite3.Connection) -> dict[str, _PageEntry]:
        out: dict[str, _PageEntry] = {}
        self._by_text.clear()
        for path, mtime_ns, size, blob, vectors in conn.execute("SELECT * FROM pages"):
            facts = [Fact(path, line, text, added) for line, text, added in json.loads(blob)]
            matrix = np.frombuffer(vectors, dtype=np.int8).reshape(len(facts), -1) if facts else \
                np.zeros((0, max(self.embedder.dim, 1)), dtype=np.int8)
            out[path] = _PageEntry((mtime_ns, size), facts, matrix)
            for fact, row in zip(facts, matrix, strict=True):
                self._by_text[_text_hash(fact.text)] = row
        return out

    def _flat(self) -> tuple[list[Fact], np.ndarray]:
        with self._lock:
            if self._dirty:
                assert self._pages is not None
                entries = [self._pages[p] for p in sorted(self._pages)]
                self._facts = [f for e in entries for f in e.facts]
                parts = [e.vectors for e in entries if len(e.facts)]
                self._matrix = np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.int8)
                pages_of: dict[str, set[str]] = {}
                for f in self._facts:
                    pages_of.setdefault(f.text, set()).add(f.path)
                self._templates = {text for text, paths in pages_of.items() if len(paths) > TEMPLATE_PAGES}
                self._dirty = False
                self._dense = None
            return self._facts, self._matrix

    # --- answers -------------------------------------------------------------------------
    def facts(self) -> list[Fact]:
        """Every fact of every page, by path then line."""
        return list(self._flat()[0])

    def template(self, fact: Fact) -> bool:
        """Whether ``fact``'s text is a template line (on more than :data:`TEMPLATE_PAGES` pages)."""
        self._flat()
        return fact.text in self._templates

    def page_facts(self, path: str) -> list[Fact]:
        with self._lock:
            entry = (self._pages or {}).get(path)
            return list(entry.facts) if entry else []

    def _scores(self, query: np.ndarray) -> np.ndarray:
        """Dot products of the float32 rows ``query`` with every fact: (len(query), facts)."""
        _facts, matrix = self._flat()
        with self._lock:
            dense = self._dense
            if dense is None and matrix.size * 4 <= DENSE_BYTES:
                dense = self._dense = matrix.astype(np.float32) / _SCALE
        if dense is not None:
            full: np.ndarray = query @ dense.T
            return full
        out = np.empty((query.shape[0], matrix.shape[0]), dtype=np.float32)
        for start in range(0, matrix.shape[0], CHUNK):
            block = matrix[start:start + CHUNK].astype(np.float32)
            out[:, start:start + CHUNK] = query @ block.T
        return out / _SCALE

    def _vector_of(self, fact: Fact) -> np.ndarray:
        with self._lock:
            entry = (self._pages or {}).get(fact.path)
            if entry is not None:
                for f, row in zip(entry.facts, entry.vectors, strict=True):
                    if f == fact:
                        out: np.ndarray = row.astype(np.float32) / _SCALE
                        return out
        vector: np.ndarray = self.embedder.embed([fact.text])[0]
        return vector

    def _ranked(self, query: np.ndarray, k: int, min_score: float, visible: Callable[[str], bool] | None,
                skip: list[Fact | None]) -> list[list[tuple[Fact, float]]]:
        """For each row of ``query``, the ``k`` best facts from ``min_score`` up, ``skip``'s left out."""
        facts, _matrix = self._flat()
        if not facts:
            return [[] for _ in skip]
        scores = self._scores(query)
        answers: list[list[tuple[Fact, float]]] = []
        for row, left_out in zip(scores, skip, strict=True):
            want = min(len(facts), k + 1 + (0 if visible is None else 4 * k))
            while True:
                # argpartition finds the best few without sorting every fact's score
                top = np.argpartition(-row, want - 1)[:want] if want < len(facts) else np.arange(len(facts))
                top = top[np.argsort(-row[top], kind="stable")]
                out: list[tuple[Fact, float]] = []
                for i in top.tolist():
                    score = float(row[i])
                    if score < min_score or len(out) >= k:
                        break
                    fact = facts[i]
                    if fact == left_out or (visible is not None and not visible(fact.path)):
                        continue
                    out.append((fact, round(score, 4)))
                short = len(out) < k and want < len(facts) and float(row[top[-1]]) >= min_score
                if not short:
                    break
                want = min(len(facts), want * 4)  # hidden facts took places: look further
            answers.append(out)
        return answers

    def neighbours(self, fact: Fact, k: int = 10, min_score: float = 0.0,
                   visible: Callable[[str], bool] | None = None) -> list[tuple[Fact, float]]:
        """The ``k`` facts closest to ``fact`` (itself left out) scoring at least ``min_score``, best first."""
        return self.neighbours_of([fact], k, min_score, visible)[0]

    def neighbours_of(self, facts: list[Fact], k: int = 10, min_score: float = 0.0,
                      visible: Callable[[str], bool] | None = None) -> list[list[tuple[Fact, float]]]:
        """:meth:`neighbours` of each of ``facts``, in one matrix product per batch."""
        out: list[list[tuple[Fact, float]]] = []
        for start in range(0, len(facts), 256):
            batch = facts[start:start + 256]
            query = np.vstack([self._vector_of(f) for f in batch]) if batch else np.zeros((0, 1), np.float32)
            out += self._ranked(query, k, min_score, visible, list(batch))
        return out

    def nearest_text(self, text: str, k: int = 10, visible: Callable[[str], bool] | None = None,
                     ) -> list[tuple[Fact, float]]:
        """The ``k`` facts closest to ``text`` (any text, embedded now), best first."""
        return self._ranked(self.embedder.embed([text])[:1], k, -1.0, visible, [None])[0]

    def pairs(self, min_score: float, page: str | None = None,
              visible: Callable[[str], bool] | None = None, k: int = 25,
              rows: list[int] | None = None) -> Iterator[tuple[Fact, Fact, float]]:
        """Pairs of facts scoring at least ``min_score``, best first (with ``page``, the pairs
        holding one of its facts, that fact first); each pair once. Each fact brings at most its
        ``k`` best (bounds the answer and the memory when many facts are alike); ``rows``: only
        the facts at these positions of :meth:`facts` ask (the benchmark's sample)."""
        facts, _matrix = self._flat()
        if not facts:
            return iter(())
        if page is not None:
            index = {f: i for i, f in enumerate(facts)}
            rows = [index[f] for f in self.page_facts(page) if f in index]
        elif rows is None:
            rows = list(range(len(facts)))
        ok = np.ones(len(facts), dtype=bool) if visible is None else \
            np.array([visible(f.path) for f in facts], dtype=bool)
        ok &= np.array([not self.template(f) for f in facts], dtype=bool)
        rows = [r for r in rows if ok[r]]
        found: dict[tuple[int, int], float] = {}
        step = 256
        want = min(len(facts), k + 1)
        for start in range(0, len(rows), step):
            chunk = rows[start:start + step]
            scores = self._scores(np.vstack([self._vector_of(facts[r]) for r in chunk]))
            scores[:, ~ok] = -2.0
            top = np.argpartition(-scores, want - 1, axis=1)[:, :want] if want < len(facts) else \
                np.tile(np.arange(len(facts)), (len(chunk), 1))
            for r, cols in enumerate(top.tolist()):
                a = chunk[r]
                for c in cols:
                    score = float(scores[r, c])
                    if a == c or score < min_score:
                        continue
                    # (the asking page's fact first; two facts of one page, or no page: once)
                    key = (a, c) if page is not None and facts[c].path != page else (min(a, c), max(a, c))
                    found[key] = score
        ordered = sorted(found.items(), key=lambda t: (-t[1], t[0]))
        return iter([(facts[a], facts[c], round(s, 4)) for (a, c), s in ordered])

    def size_on_disk(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(INDEX_NAME + "*"))


def _settings(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        from curator.engine.errors import UsageError

        raise UsageError(f"{path.name}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else None


def fact_index_for(wiki: Wiki, embedder: Embedder | None = None) -> FactIndex:
    """The wiki's fact index (one per session), brought up to date. ``embedder``: used when the
    index is made (tests, or a caller with its own model)."""
    session = wiki.session
    with session.services_lock:
        index = session.service(FactIndex, lambda: FactIndex(wiki, embedder))
    index.update()
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
    """Unit float32 rows of ``facts`` as ``index`` holds them (a fact it does not hold is embedded
    now): for comparing a page's facts with a new text without embedding the page again."""
    if not facts:
        return np.zeros((0, max(index.embedder.dim, 1)), dtype=np.float32)
    return np.vstack([index._vector_of(f) for f in facts])
