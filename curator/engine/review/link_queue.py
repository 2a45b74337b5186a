"""The operator's unresolved-link queue saved per page-cache state (issue 44: one edit costs what it changes).

Computing the queue from scratch resolves every link of the wiki (the link index: ~3 s at 32,000
pages, most of it decoding every page) and suggests pages for every unresolved target (~1 s), so
the operator's queue is saved in the page cache (:meth:`~curator.engine.corpus.store.PageStore.save_derived`) under
the store's state token and the attachment files it was resolved with. For each unresolved key:
its occurrences (linking page, the target as written, line) in the link index's order, the target
as most often written, its slug, its suggestions and their confidence. Ignored targets are kept
too (the ignore file is applied when the queue is answered: un-ignoring one needs nothing
computed). Beside it, apart (read only after a change): every page's title, aliases and the names
(slugs) the suggester knows it by; each key's number of links, apart too (what Health's totals
read: the station's first figures decode no target); and a digest of what each page adds to the
queue (its title, aliases and unresolved links), by which an agent's append that changes none of
it is seen to leave the queue as it is without a target decoded (:func:`unchanged`).

The same state answers the saved queue: nothing decoded, nothing resolved. After a change
(:meth:`~curator.engine.corpus.store.PageStore.derived_since` lists the pages that may differ), what is computed again:

* links resolved again: those of the changed pages, and of the pages with a link naming (by
  slug, file name, title or alias, old or new) a page added, removed or whose title or aliases
  changed (:meth:`~curator.engine.corpus.store.PageStore.pages_linking`): no other link can
  resolve differently. They are resolved in an index over the pages that can take part only
  (:func:`~curator.engine.corpus.links.outgoing_of`, as lint does);
* suggestions made again: for a target new to the queue or now most often written another way,
  and, when a page was added, removed or renamed, for the targets whose candidates can include one
  of its names, old or new (a word in common, the same letters and digits, a plural, a name equal
  to the target's first words: the only ways :class:`~curator.engine.review.link_suggest.Suggester`
  meets a name, posting-length limits included). They come from a suggester over the pages with a
  name meeting those targets in one of those ways only (found in the saved names with one regular
  expression), which answers what the whole wiki's does: every name a target can meet is in it,
  in the same order.

A large change (more pages than lint follows one by one), a page no database holds, a ``[[a/..]]``
link, other attachment files or another version: the queue is computed from scratch and saved.
Only the operator's queue is saved: an agent's is computed over the pages it may read (a link to
a hidden page is unresolved for it, and no hidden page is ever suggested), never from the saved one.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import zlib
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple

from curator.engine.corpus.links import REBUILD_SHARE, Edge, LinkIndex, outgoing_by_name
from curator.engine.corpus.page import Page, link_key, path_key, slug_of
from curator.engine.corpus.slugs import slugify_many
from curator.engine.corpus.store import gc_paused
from curator.engine.wiki import Wiki

if TYPE_CHECKING:
    from curator.engine.review.link_suggest import Suggester

#: The name the operator's queue is saved under, and the version of what is saved.
SAVED_NAME = "links-unresolved"
_SAVED_FORMAT = 4  # (2: each key's number of links beside the targets; 3: each page's digest; 4: of its values alone)
#: A change is followed page by page while it resolves no more pages again than this or
#: :data:`~curator.engine.corpus.links.REBUILD_SHARE` of them, whichever is more (as lint).
REDO_MIN = 200

#: the confidence at or above which a top suggestion is taken without a look (the Links view's
#: bulk accept): on the labelled links of the real-shaped test corpus (first names and acronyms
#: that begin or sit inside long names, one word of a CamelCase name, plurals, punctuation,
#: renamed pages) the top suggestions at or above it are right >= 95 % of the time
#: (tests/engine/review/test_link_precision.py measures it)
ACCEPT_CONFIDENCE = 0.9

Occurrence = tuple[str, str, int]  # (linking page, the target as written, line)
SuggestionRow = tuple[str, float, str]  # (path, score, reason)


class Suggestion(NamedTuple):
    """A page a target may mean (a tuple: the queue of a big wiki holds ~100,000 of them)."""

    path: str
    score: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "score": self.score, "reason": self.reason}


@dataclass(slots=True)
class Target:
    """One unresolved key as saved."""

    written: str  # as most often written (what its suggestions are for)
    slug: str  # slugify(written)
    occurrences: list[Occurrence]
    suggestions: list[SuggestionRow]
    confidence: float


class _Named(NamedTuple):
    """What :class:`~curator.engine.review.link_suggest.Suggester` reads of a page."""

    path: str
    title: str
    aliases: list[str]


@dataclass(slots=True)
class _Pages:
    """Every page's title, aliases and suggester names (slugs), by path in path order."""

    paths: list[str]
    titles: list[str]
    aliases: dict[str, tuple[str, ...]]
    names: list[str]  # each page's names joined by "\x1f"

    def place(self, path: str) -> int | None:
        i = bisect_left(self.paths, path)
        return i if i < len(self.paths) and self.paths[i] == path else None

    def named(self, i: int) -> _Named:
        path = self.paths[i]
        return _Named(path, self.titles[i], list(self.aliases.get(path, ())))

    def put(self, path: str, title: str, aliases: tuple[str, ...], names: str) -> None:
        i = bisect_left(self.paths, path)
        if i < len(self.paths) and self.paths[i] == path:
            self.titles[i], self.names[i] = title, names
        else:
            self.paths.insert(i, path)
            self.titles.insert(i, title)
            self.names.insert(i, names)
        if aliases:
            self.aliases[path] = aliases
        else:
            self.aliases.pop(path, None)

    def drop(self, path: str) -> None:
        i = self.place(path)
        if i is not None:
            del self.paths[i], self.titles[i], self.names[i]
        self.aliases.pop(path, None)


def _aliases(page: Page) -> tuple[str, ...]:
    return tuple(a for a in page.aliases if isinstance(a, str))


def _link_names(path: str, title: str, aliases: Iterable[str]) -> set[str]:
    """Every name a link can reach the page by (lint's ``_page_names``: what the cache's name tables hold)."""
    names = {slug_of(path), path_key(path).rpartition("/")[2], link_key(title), *(link_key(a) for a in aliases)}
    names.discard("")
    return names


def _suggester(named: Mapping[str, Any]) -> Suggester:
    from curator.engine.review.link_suggest import Suggester

    return Suggester(named)


def _written(occurrences: list[Occurrence]) -> str:
    """The target as its links most often write it (equal counts: the first written), as
    :func:`~curator.engine.review.linkrepair._written`."""
    written = [o[1] for o in occurrences]
    if written.count(written[0]) == len(written):
        return written[0]
    return Counter(written).most_common(1)[0][0]


# --- saving --------------------------------------------------------------------------------------------

def _encode(obj: Any) -> bytes:
    return zlib.compress(marshal.dumps(obj), 1)


def saved_blob(attachments: bytes, targets: dict[str, Target], pages: _Pages) -> bytes:
    rows = [(k, t.written, t.slug, t.occurrences, t.suggestions, t.confidence) for k, t in targets.items()]
    counts = (list(targets), [len(t.occurrences) for t in targets.values()])
    return marshal.dumps((_SAVED_FORMAT, attachments, _encode(rows),
                          _encode(("\0".join(pages.paths), pages.titles, pages.aliases, "\n".join(pages.names))),
                          _encode(counts), _encode(("\0".join(pages.paths), _digests(targets, pages)))))


#: The marshal version a page's digest is made with (see :func:`_page_digest`).
DIGEST_MARSHAL = 2


def _page_digest(title: str, aliases: tuple[str, ...], occurrences: list[tuple[str, str, int]]) -> bytes:
    """What a page adds to the queue: its names (what other pages' links resolve to) and its
    unresolved links, (key, as written, line) by key, in link order within a key. Marshalled
    in version 2, which writes the values alone: later versions write a string met twice as a
    reference and mark an interned one, so equal pages held as other objects (one parsed, one
    decoded) had other digests."""
    return hashlib.blake2b(marshal.dumps((title, aliases, occurrences), DIGEST_MARSHAL), digest_size=8).digest()


def _digests(targets: dict[str, Target], pages: _Pages) -> bytes:
    """Every page's :func:`_page_digest` in path order (8 bytes each; 0.08 s at 100,000 pages)."""
    mine: dict[str, list[tuple[str, str, int]]] = {}
    for key in sorted(targets):  # (each page's by key; within a key, as saved: in link order)
        for source, written, line in targets[key].occurrences:
            mine.setdefault(source, []).append((key, written, line))
    aliases, none = pages.aliases, ()
    return b"".join(_page_digest(title, aliases.get(path, none), mine.get(path, []))
                    for path, title in zip(pages.paths, pages.titles, strict=True))


def _unpack(blob: bytes, attachments: bytes) -> tuple[Any, ...] | None:
    """The saved parts (targets, pages, counts, digests), None: not this version's or files'."""
    try:
        parts = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    if type(parts) is not tuple or len(parts) != 6 or parts[0] != _SAVED_FORMAT or parts[1] != attachments:
        return None
    return parts[2:]


def holds(blob: bytes, attachments: bytes) -> bool:
    """Whether ``blob`` is a queue of this version saved with these attachment files (a link to a
    file added since may resolve now: a queue saved before it does not hold)."""
    return _unpack(blob, attachments) is not None


def read_targets(blob: bytes, attachments: bytes) -> tuple[dict[str, Target], bytes] | None:
    """The saved targets (and the pages part, still encoded), None: not this version's or files'."""
    parts = _unpack(blob, attachments)
    if parts is None:
        return None
    rows = _decoded(parts[0])
    try:
        return {k: Target(w, s, o, g, c) for k, w, s, o, g, c in rows}, parts[1]
    except (ValueError, TypeError):  # (None too)
        return None


def read_counts(blob: bytes, attachments: bytes) -> dict[str, int] | None:
    """Each saved key's number of links (no target decoded), None: not this version's or files'."""
    parts = _unpack(blob, attachments)
    found = _decoded(parts[2]) if parts is not None else None
    if type(found) is not tuple or len(found) != 2:
        return None
    keys, counts = found
    if type(keys) is not list or type(counts) is not list or len(keys) != len(counts):
        return None
    return dict(zip(keys, counts, strict=True))


def _decoded(part: Any) -> Any:
    """A saved part (marshalled, compressed) as it was saved; None when it does not decode."""
    try:
        return marshal.loads(zlib.decompress(part))
    except (ValueError, TypeError, EOFError, zlib.error):
        return None


def _read_pages(blob: bytes) -> _Pages | None:
    found = _decoded(blob)
    if type(found) is not tuple or len(found) != 4:
        return None
    joined, titles, aliases, names = found
    paths = joined.split("\0") if joined else []
    listed = names.split("\n") if paths else []
    if not (len(paths) == len(titles) == len(listed)):
        return None
    return _Pages(paths, titles, aliases, listed)


# --- from scratch ----------------------------------------------------------------------------------------

def computed(links: LinkIndex, suggester: Suggester) -> tuple[dict[str, Target], _Pages]:
    """Every unresolved key of the operator's ``links`` with its suggestions, and the pages part."""
    targets: dict[str, Target] = {}
    with gc_paused():
        for key, edges in links.unresolved.items():
            if edges:
                occurrences = [(e.source, e.link.target, e.link.line) for e in edges]
                targets[key] = Target(_written(occurrences), "", occurrences, [], 0.0)
        _suggest(suggester, list(targets.values()))
        paths = sorted(links.pages)
        pages = [links.pages[p] for p in paths]
        listed = _Pages(paths, [p.title for p in pages], {p: a for p, page in zip(paths, pages, strict=True)
                                                           if (a := _aliases(page))},
                        ["\x1f".join(suggester.names_of(p)) for p in paths])
    return targets, listed


def _suggest(suggester: Suggester, targets: list[Target]) -> None:
    written = [t.written for t in targets]
    for t, slug, found in zip(targets, slugify_many(written), suggester.suggest_many(written), strict=True):
        t.slug = slug
        t.suggestions = [tuple(s) for s in found]  # type: ignore[misc]
        t.confidence = suggester.confidence(t.written, found) if found else 0.0


# --- after a change ---------------------------------------------------------------------------------------

def _meets(slug: str) -> tuple[set[str], set[str]]:
    """(the words, the letters-and-digits forms) by which a target of this slug meets a name:
    a name sharing a word, or whose letters and digits are one of the forms (the same, a plural,
    the target's first words)."""
    from curator.engine.review.link_suggest import number_forms

    words = slug.split("-")
    alnum = slug.replace("-", "")
    return set(words), {alnum, *number_forms(alnum), *accumulate(words[:-1])}


def _related(targets: dict[str, Target], names: set[str]) -> set[str]:
    """The keys whose suggestions a page name of ``names`` (slugs) added or gone can change."""
    words = {w for n in names for w in n.split("-")}
    alnums = {n.replace("-", "") for n in names}
    out = set()
    for key, t in targets.items():
        if not t.slug:
            continue
        mine, forms = _meets(t.slug)
        if not words.isdisjoint(mine) or not alnums.isdisjoint(forms):
            out.add(key)
    return out


def _restricted(pages: _Pages, slugs: list[str]) -> Suggester:
    """A suggester over the pages with a name that the targets of ``slugs`` can meet (see
    :func:`_meets`), in path order: for those targets it answers what the whole wiki's does."""
    words: set[str] = set()
    forms: set[str] = set()
    for slug in slugs:
        w, f = _meets(slug)
        words |= w
        forms |= f
    words.discard("")
    forms.discard("")
    joined = "\n".join(pages.names)
    starts = [0, *accumulate(len(n) + 1 for n in pages.names)]
    found: set[int] = set()
    parts = []
    if words:  # a whole word of a name: between the start or end of a name and a hyphen
        parts.append("(?<![^\x1f\n-])(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
                     + ")(?![^\x1f\n-])")
    if forms:  # a whole name whose letters and digits are a form (hyphens anywhere)
        parts.append("(?<![^\x1f\n])(?:" + "|".join("-*".join(map(re.escape, f)) for f in
                                                     sorted(forms, key=len, reverse=True)) + ")(?![^\x1f\n])")
    for part in parts:
        for match in re.finditer(part, joined):
            found.add(bisect_right(starts, match.start()) - 1)
    return _suggester({pages.paths[i]: pages.named(i) for i in sorted(found)})


def updated(wiki: Wiki, targets: dict[str, Target], pages_blob: bytes,
            changed: set[str]) -> tuple[_Pages, set[str], bool] | None:
    """Bring the saved ``targets`` up to date with the ``changed`` pages, in place (see the module
    docstring for what is computed again); the pages part brought up to date, the keys whose
    suggestions were made again, and whether the targets and pages are all as saved (an append
    that changed no link nor name: the saved queue holds for the new state as it is). None
    (``targets`` left half done) when that is not decided here: the caller computes the queue
    from scratch."""
    store = wiki.store
    if not store.partial_reads:
        return None
    limit = max(REBUILD_SHARE * store.count(), REDO_MIN)
    if len(changed) > limit:
        return None
    listed = _read_pages(pages_blob)
    if listed is None:
        return None
    pages: dict[str, Page] = {}
    gone: set[str] = set()
    for path in sorted(changed):
        page = store.page(path)
        if page is not None:
            pages[path] = page
        elif listed.place(path) is not None:
            gone.add(path)
    renamed: set[str] = set()  # added, or another title or aliases (what names a page besides its path)
    old_links: set[str] = set()  # the link names of the pages removed or renamed, as they were
    old_slugs: set[str] = set()  # their names as the suggester knew them
    for path in sorted(gone | pages.keys()):
        i = listed.place(path)
        page = pages.get(path)
        if i is not None and page is not None and listed.titles[i] == page.title \
                and tuple(listed.aliases.get(path, ())) == _aliases(page):
            continue
        if page is not None:
            renamed.add(path)
        if i is not None:
            old_links |= _link_names(path, listed.titles[i], listed.aliases.get(path, ()))
            old_slugs.update(n for n in listed.names[i].split("\x1f") if n)
    new_links = {n for p in renamed for n in _link_names(p, pages[p].title, _aliases(pages[p]))}
    redo = set(pages)
    if old_links or new_links:  # links that may resolve differently now
        pages.update(store.pages_linking(old_links | new_links))
        redo.update(pages)
    redo -= gone
    if len(redo) > limit:
        return None
    with gc_paused():
        resolved = outgoing_by_name({p: pages[p] for p in redo}, store.pages_named, store.attachments)
    if resolved is None:
        return None  # ``[[a/..]]``: its page is not named by its last segment
    outgoing, _names = resolved
    # The occurrences of the pages resolved again (and removed) replaced by what they resolve to now.
    fresh: dict[str, list[Occurrence]] = {}
    for path in sorted(redo):
        for key, written, line in _unresolved(outgoing[path]):
            fresh.setdefault(key, []).append((path, written, line))
    dropped = redo | gone
    touched = set(fresh)
    for key, had in targets.items():  # (a plain loop: a generator a target cost 40 ms at 100,000 pages)
        for o in had.occurrences:
            if o[0] in dropped:
                touched.add(key)
                break
    resuggest: set[str] = set()
    same = not gone and not renamed
    for key in touched:
        t = targets.get(key)
        kept = [o for o in t.occurrences if o[0] not in dropped] if t is not None else []
        now = sorted([*kept, *fresh.get(key, ())], key=lambda o: o[0])  # (stable: each page's in link order)
        if not now:
            targets.pop(key, None)
            same = False
            continue
        written = _written(now)
        if t is None or t.written != written:
            targets[key] = Target(written, "", now, [], 0.0)
            resuggest.add(key)
            same = False
        else:
            same = same and [tuple(o) for o in t.occurrences] == [tuple(o) for o in now]
            t.occurrences = now
    # The pages part brought up to date; names added or gone re-suggest the targets they can meet.
    for path in gone:
        listed.drop(path)
    new_slugs: set[str] = set()
    if renamed:
        own = _suggester({p: _Named(p, pages[p].title, list(_aliases(pages[p]))) for p in sorted(renamed)})
        for path in sorted(renamed):
            slugs = own.names_of(path)
            new_slugs.update(slugs)
            listed.put(path, pages[path].title, _aliases(pages[path]), "\x1f".join(slugs))
    if gone or renamed:  # (a page of the same names elsewhere is another suggestion: both sides counted)
        resuggest |= _related(targets, old_slugs | new_slugs)
    todo = [targets[k] for k in sorted(resuggest) if k in targets]
    if todo:
        texts = [t.written for t in todo]
        for t, slug in zip(todo, slugify_many(texts), strict=True):
            t.slug = slug
        _suggest(_restricted(listed, [t.slug for t in todo if t.slug]), todo)
    return listed, resuggest, same and not resuggest


def _unresolved(edges: Iterable[Edge]) -> list[tuple[str, str, int]]:
    """(key, as written, line) of each of a page's ``edges`` that leads to no page and names no
    file (what the link index files as unresolved), in link order."""
    return [(edge.link.key, edge.link.target, edge.link.line) for edge in edges
            if edge.resolution.path is None and not edge.resolution.names_file]


def unchanged(wiki: Wiki, blob: bytes, attachments: bytes, changed: set[str]) -> bool:
    """Whether the queue saved as ``blob`` holds as it is for the pages after the ``changed``
    ones changed, decided from those pages alone: each is still a page, under the title and
    aliases it was saved with (so no other link resolves differently), and its unresolved links
    are those saved (their digests equal, :func:`_page_digest`). An agent's append of a fact that
    adds no unresolved link is such a change: the totals then need no target decoded (0.4 s of
    Health's figure after each append at 100,000 pages). False: :func:`updated` decides."""
    store = wiki.store
    if not changed or not store.partial_reads or len(changed) > REDO_MIN:
        return False
    parts = _unpack(blob, attachments)
    found = _decoded(parts[3]) if parts is not None else None
    if type(found) is not tuple or len(found) != 2 or type(found[0]) is not str or type(found[1]) is not bytes:
        return False
    joined, table = found
    paths = joined.split("\0") if joined else []
    if len(table) != 8 * len(paths):
        return False
    pages: dict[str, Page] = {}
    for path in sorted(changed):
        page = store.page(path)
        if page is None:
            return False  # (removed: the full update)
        pages[path] = page
    with gc_paused():
        resolved = outgoing_by_name(pages, store.pages_named, store.attachments)
    if resolved is None:
        return False
    outgoing = resolved[0]
    for path, page in pages.items():
        i = bisect_left(paths, path)
        if i == len(paths) or paths[i] != path:
            return False  # (added since)
        mine = _unresolved(outgoing[path])
        mine.sort(key=lambda o: o[0])  # (stable: in link order within a key)
        if _page_digest(page.title, _aliases(page), mine) != table[8 * i:8 * i + 8]:
            return False
    return True
