"""Meaning at the write door (issue 41): what ``append`` answers besides its own words.

* :func:`append_with_similar`: append, and say which three facts anywhere in the wiki (that the
  writer may see) are closest in meaning to the new one (``data["similar"]``), so a writer sees
  what is already known elsewhere before repeating or contradicting it. A fact of the target page
  saying the new one in other words makes it a ``duplicate``, like the same words do.
* :func:`similar_by_meaning`: the inbox's similar facts beside a held write.
* :func:`warm_in_background`: a long-lived process (the MCP server) builds the fact index on a
  thread of its own, so its later appends get ``similar``.

An append never builds the fact index (from nothing that is ~30 s at 32,000 pages): ``similar``
comes from the index this process holds, or from the one on disk (loaded and brought up to date,
cheap when it exists); without either the answer says so (``similar_note``). The same-page check
needs no index: it embeds the new fact and the page's facts (tens of them) with the configured
model.

The index lives in a layer above the write door, which is why the door is reached through these
functions (the CLI, the MCP server), never imported by append.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from curator.engine.corpus.facts import Fact, page_facts
from curator.engine.errors import CuratorError
from curator.engine.facts.conflicts import another_fact_in_the_same_words
from curator.engine.facts.index import (
    FactIndex,
    configured_embedder,
    fact_index_for,
    fact_index_on_disk,
    fact_rows,
)
from curator.engine.memory import runs_for_long
from curator.engine.policy.actor import OPERATOR
from curator.engine.write.append import append, refused_as_too_large

if TYPE_CHECKING:
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionResult

log = logging.getLogger(__name__)

#: A fact of the page scoring this close to the new one says the same thing. Measured on the
#: planted set (tests/engine/facts/planted.py) with the local model: paraphrase pairs score
#: 0.52-0.96, a distinct fact on the same subject at most 0.784; 0.8 lets no distractor through
#: and catches 14 of the 22 paraphrases (the others are left to a person: a wrong "duplicate"
#: loses a fact, a missed one only repeats it). tests/engine/facts/test_door.py keeps measuring it.
PARAPHRASE_MIN = 0.8
#: Facts elsewhere listed with an append's answer.
SIMILAR_K = 3
#: A long-lived session brings its index up to date after this many pages written through the
#: door, or this long after the last time (see :class:`_Live`).
REFRESH_PAGES = 64
REFRESH_S = 30.0
#: The longest an append waits, before it writes, for the index loading beside it to have read
#: its pages (then it writes anyway: the answer's similar facts may include the new one).
LOAD_WAIT_S = 30.0
#: Fact texts whose vectors a session keeps for the same-page check (a few MB).
KNOWN_TEXTS = 20_000
NOT_BUILT = "no fact index yet: 'curator facts similar' builds it"
BUILDING = "the fact index is being built: appends list similar facts once it is ready"
#: What makes the index or the model unusable for one call (an endpoint down, a damaged settings
#: file, a locked or unreadable index file): the door then answers without meaning, never fails.
_UNAVAILABLE = (CuratorError, OSError, sqlite3.Error)


class _Warming:
    """The background build :func:`warm_in_background` started in this process."""

    def __init__(self) -> None:
        self.done = threading.Event()


def warm_in_background(wiki: Wiki) -> threading.Thread | None:
    """Build (or load and update) ``wiki``'s fact index on a daemon thread, once per session; the
    thread, or None when one was already started. Until it is done appends answer without
    ``similar`` (:data:`BUILDING`) rather than wait for it."""
    session = wiki.session
    with session.services_lock:
        if session.peek(_Warming) is not None:
            return None
        warming = session.service(_Warming, _Warming)

    def build() -> None:
        try:
            fact_index_for(wiki)
        except Exception:  # a background thread has no caller to tell: appends go on without meaning
            log.exception("the fact index could not be built")
        finally:
            warming.done.set()

    thread = threading.Thread(target=build, name="fact-index", daemon=True)
    thread.start()
    return thread


class _Live:
    """What a long-lived session's door knows beyond its fact index: the pages it wrote since it
    last brought the index up to date, with their facts' vectors.

    Bringing the index up to a changed page makes its next query rebuild what every query shares
    (all the facts' rows): ~70 ms at 2,000 pages, more than the append itself, and linear in the
    wiki. So an append does not: its query leaves out the index's rows of the pages written here
    and scores their facts as written instead; the index is brought up to date on a thread of its
    own once :data:`REFRESH_PAGES` pages or :data:`REFRESH_S` seconds have gone by, which also
    picks up the pages changed by anyone else."""

    def __init__(self, index: FactIndex) -> None:
        self.index = index
        self.lock = threading.Lock()
        self.written: dict[str, list[tuple[Fact, np.ndarray]]] = {}
        self.refreshed = time.monotonic()
        self._known: dict[str, np.ndarray] = {}
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="fact-index-refresh")

    def vectors(self, texts: list[str]) -> np.ndarray:
        """Unit rows of ``texts``, each text embedded once per session (a page's facts are asked
        again by every append to it)."""
        with self.lock:
            known = {t: self._known[t] for t in texts if t in self._known}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, self.index.embedder.embed(missing), strict=True))
            with self.lock:
                if len(self._known) > KNOWN_TEXTS:
                    self._known.clear()
                self._known.update((t, known[t]) for t in missing)
        return np.vstack([known[t] for t in texts])

    def rows_of(self, facts: list[Fact]) -> np.ndarray:
        """Rows of one page's ``facts``: as written here or embedded lately, else embedded now
        (:func:`fact_rows`; a page's facts are not embedded again for each append to it)."""
        with self.lock:
            known = dict(self.written.get(facts[0].path, [])) if facts else {}
            # (the new fact's text was embedded by the same-page check a moment ago)
            known.update((f, self._known[f.text]) for f in facts if f not in known and f.text in self._known)
        rest = [f for f in facts if f not in known]
        known.update(zip(rest, fact_rows(self.index, rest), strict=True))
        return np.vstack([known[f] for f in facts])

    def wrote(self, path: str, text: str) -> None:
        facts = page_facts(path, text)
        rows = list(self.rows_of(facts)) if facts else []
        with self.lock:
            self.written[path] = list(zip(facts, rows, strict=True))

    def refresh_if_due(self) -> None:
        with self.lock:
            due = len(self.written) >= REFRESH_PAGES or time.monotonic() - self.refreshed >= REFRESH_S
            if due:
                self.refreshed = time.monotonic()  # (one refresh at a time is queued)
        if due:
            self.pool.submit(self._refresh)

    def _refresh(self) -> None:
        with self.lock:
            before = dict(self.written)
        try:
            self.index.update()
            self.index.nearest_text("", 1)  # rebuilds what queries share, before the next append asks
        except Exception:  # another thread changed the page cache under it: the next refresh retries
            log.debug("fact index refresh skipped", exc_info=True)
            return
        with self.lock:
            for path, entry in before.items():
                if self.written.get(path) is entry:  # (a page written again since stays)
                    del self.written[path]

    def nearest(self, wiki: Wiki, text: str, actor: Actor, k: int) -> list[tuple[Fact, float]]:
        with self.lock:
            written = dict(self.written)
        found = self.index.nearest_text(text, k, visible=lambda p: p not in written and wiki.visible(actor, p))
        shown = {p: rows for p, rows in written.items() if rows and wiki.visible(actor, p)}
        if shown:
            query = self.vectors([text])[0]
            found += [(f, round(float(row @ query), 4)) for rows in shown.values() for f, row in rows]
            found.sort(key=lambda t: -t[1])
        return found[:k]


def ready_index(wiki: Wiki) -> tuple[FactIndex | None, str | None]:
    """The fact index when it is at hand without building it (this process holds it, or its file
    exists), brought up to date; else None and why."""
    warming = wiki.session.peek(_Warming)
    if warming is not None and not warming.done.is_set():
        return None, BUILDING
    if wiki.session.peek(FactIndex) is None and not fact_index_on_disk(wiki):
        return None, NOT_BUILT
    try:
        # A one-shot process (``curator append --json``) answers from the pages as the page
        # cache holds them (every action's writes, and the last walk's): walking 32,000 folders'
        # files for the similar facts of one append took 0.6 s, more than the append. A page
        # edited by hand since is picked up by the next command that walks.
        return fact_index_for(wiki, walk=runs_for_long() or wiki.store.loaded), None
    except _UNAVAILABLE as exc:
        return None, f"the fact index cannot be used: {exc}"


def paraphrase_of(embed: Callable[[list[str]], np.ndarray], path: str, text: str, fact: str,
                  min_score: float = PARAPHRASE_MIN,
                  rows_of: Callable[[list[Fact]], np.ndarray] | None = None) -> str | None:
    """The fact of the page ``path`` (``text``) saying ``fact`` in other words, or None
    (``embed``: unit rows of texts; ``rows_of``: of the page's facts, when known already)."""
    facts = page_facts(path, text)
    if not facts:
        return None
    if rows_of is None:
        rows = embed([fact, *(f.text for f in facts)])
        query, rows = rows[0], rows[1:]
    else:
        query, rows = embed([fact])[0], rows_of(facts)
    scores = rows @ query
    order: list[int] = np.argsort(-scores).tolist()
    for best in order:
        if float(scores[best]) < min_score:
            break
        found: str = facts[best].text
        if not another_fact_in_the_same_words(fact, found):
            return found
    return None


def _same_meaning(wiki: Wiki, index: FactIndex | None, live: _Live | None,
                  before_write: threading.Event | None = None) -> Callable[[str, str, str], str | None]:
    """The append's same-page check (called before it writes, when the words alone found no
    duplicate). ``before_write``: set once the index loading beside the append has read the pages
    it brings itself up to; waited for here, so it never reads the page this append writes."""
    def same(path: str, text: str, fact: str) -> str | None:
        try:
            if live is not None:
                return paraphrase_of(live.vectors, path, text, fact, rows_of=live.rows_of)
            embedder = index.embedder if index is not None else configured_embedder(wiki)
            return paraphrase_of(embedder.embed, path, text, fact)
        except _UNAVAILABLE:
            return None
        finally:
            if before_write is not None:
                before_write.wait(LOAD_WAIT_S)

    return same


def _nearest(wiki: Wiki, index: FactIndex, live: _Live | None, text: str, actor: Actor,
             k: int) -> list[tuple[Fact, float]]:
    text = " ".join(text.split())
    if not text:
        return []
    if live is not None:
        return live.nearest(wiki, text, actor, k)
    return index.nearest_text(text, k, visible=lambda p: wiki.visible(actor, p))


Loader = Callable[[], FactIndex]


def _at_hand(wiki: Wiki) -> tuple[FactIndex | None, _Live | None, Loader | None, str | None]:
    """The index (and, in a session that held it already, what the door wrote since its last
    refresh); or, in a process that does not hold it, a function loading it from its file (run
    beside the append); or None and why."""
    session = wiki.session
    live = session.peek(_Live)
    if live is not None:
        return live.index, live, None, None
    if session.peek(FactIndex) is not None:  # a long-lived session (the MCP server, the station)
        index, note = ready_index(wiki)
        if index is not None:
            live = session.service(_Live, lambda: _Live(index))
        return index, live, None, note
    load, note = _loader(wiki)
    return None, None, load, note


def _loader(wiki: Wiki) -> tuple[Loader | None, str | None]:
    """For a process that does not hold the index (a one-shot ``curator append --json``): a
    function loading it from its file and bringing it up to the pages as they stand now, before
    the append writes; or None and why. It is loaded (0.3 s at 32,000 pages, and the model)
    beside the append's own work rather than before it; both hold the interpreter most of the
    time, so this measured about the same (0.65 s at 32,000 pages, 2x an append without meaning)."""
    warming = wiki.session.peek(_Warming)
    if warming is not None and not warming.done.is_set():
        return None, BUILDING
    if not fact_index_on_disk(wiki):
        return None, NOT_BUILT
    try:
        # As the page cache holds the pages (every action's writes, and the last walk's): walking
        # 32,000 folders' files for one append's similar facts took 0.6 s, more than the append.
        # A page edited by hand since is picked up by the next command that walks.
        stamps = wiki.store.stamps(walk=runs_for_long() or wiki.store.loaded)
    except _UNAVAILABLE as exc:
        return None, f"the fact index cannot be used: {exc}"
    return (lambda: fact_index_for(wiki, stamps=stamps)), None


def _load_then_nearest(load: Loader, loaded: threading.Event, wiki: Wiki, text: str, actor: Actor,
                       k: int) -> list[tuple[Fact, float]]:
    try:
        index = load()
    finally:
        loaded.set()  # (the pages read: the append may write)
    return _nearest(wiki, index, None, text, actor, k)


def append_with_similar(wiki: Wiki, slug: str, content: str, links: Sequence[str] = (),
                        create_new: bool = False, actor: Actor | None = None) -> ActionResult:
    """:func:`~curator.engine.write.append.append` with the meaning checks: a same-page paraphrase
    is a duplicate, and every answer that is not an error carries ``similar`` (``[{path, line,
    text, score}]``, as the wiki stood before the write) and, when no index was at hand,
    ``similar_note`` saying why ``similar`` is empty."""
    who = actor or OPERATOR
    index, live, load, note = _at_hand(wiki)
    if refused_as_too_large(slug, content, links, who):
        # answered ``invalid`` before any page is read, without ``similar``: no query (embedding
        # a 10 MB "fact" took 18 s, waited for only to be thrown away)
        index = load = None
    near = None
    loaded = threading.Event() if load is not None else None
    pool = ThreadPoolExecutor(1) if index is not None or load is not None else None
    try:
        if pool is not None and index is not None:
            # The query (one embedding, a product with every fact) runs while append waits on git.
            near = pool.submit(_nearest, wiki, index, live, content or "", who, SIMILAR_K)
        elif pool is not None and load is not None and loaded is not None:
            # and, in a process that does not hold the index, loading it too (the append waits
            # for the pages to be read before it writes: see _same_meaning)
            near = pool.submit(_load_then_nearest, load, loaded, wiki, content or "", who, SIMILAR_K)
        result = append(wiki, slug, content, list(links), create_new, who,
                        same_meaning=_same_meaning(wiki, index, live, loaded))
        found: list[tuple[Fact, float]] = []
        if near is not None:
            try:
                found = near.result()
            except _UNAVAILABLE as exc:
                note = f"the fact index cannot be used: {exc}"
    finally:
        if pool is not None:
            pool.shutdown(wait=False)
    page = result.data.get("page")
    if live is not None and result.changed and isinstance(page, str):
        with contextlib.suppress(*_UNAVAILABLE):  # (unreadable now: the next refresh reads it)
            live.wrote(page, wiki.read_text(page))
        live.refresh_if_due()
    if not result.is_error:
        result.data["similar"] = [{"path": f.path, "line": f.line, "text": f.text, "score": score}
                                  for f, score in found]
        if note:
            result.data["similar_note"] = note
    return result


def similar_by_meaning(wiki: Wiki, content: str, actor: Actor | None, *,
                       build: bool = False) -> list[dict[str, Any]] | None:
    """The inbox's similar facts (``[{page, line, fact, score}]``) by meaning, pages ``actor``
    may see only; None when no index is at hand (``build``: make it then, for a caller already
    off the interactive path, such as the station's background task)."""
    try:
        index = fact_index_for(wiki) if build else ready_index(wiki)[0]
        if index is None:
            return None
        near = _nearest(wiki, index, None, content, actor or OPERATOR, SIMILAR_K)
    except _UNAVAILABLE:
        return None
    return [{"page": f.path, "line": f.line, "fact": f.text, "score": round(score, 3)} for f, score in near]
