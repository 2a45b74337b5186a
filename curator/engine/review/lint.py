"""Lint: what is wrong with the wiki's pages and links, for operators to fix (docs/design.md §3).

Lint resolves every link of the wiki and checks every page (~2 s at 32,000 pages), so the
operator's answer is also saved in the page cache (:meth:`~curator.engine.corpus.store.PageStore.save_derived`) under
the store's state token and the attachment files it was computed with: the next call (a one-shot
``curator lint``, the station's Health and Lint views) whose refresh finds the same pages and files
answers it again without decoding a page or resolving a link. Any change to a page gives the
store a new state, so a saved answer is never given for other pages. Renames seen in git history
(``moved-target``) are not saved: they are looked up on every call.

After a change (an append, an edit, a page added, moved or removed) the answer saved under an
earlier state is brought up to date (:meth:`~curator.engine.corpus.store.PageStore.derived_since`,
as the link graph does): beside the issues, what lint saw of each page's links is saved (the pages
they resolve to, the other candidates of an ambiguous one, the pages an anchor points into, how many
pages link to each page, a digest of each page's names), so only the changed pages, the pages whose
links may now resolve differently or find another anchor, and the pages whose orphan status may
have flipped are checked again, each from its records alone (no page decoded but those). The
checks over every page's name (duplicate and look-alike names, folder case) depend on the paths
only: kept while no page was added or removed, else made again over every path and its saved slug
(wholly: cheap beside the rest, ~50 ms at 32,000 pages). An edit of a page with thousands of
links (an index hub) resolves all of them again, and decodes the pages they name: what the edit
can change.
"""

from __future__ import annotations

import marshal
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Any, NamedTuple

from curator.engine.corpus.links import (
    REBUILD_SHARE,
    Edge,
    anchor_found,
    outgoing_by_name,
)
from curator.engine.corpus.lookalike import escape_controls, lookalike_groups
from curator.engine.corpus.page import Page, link_key, path_key, slug_of
from curator.engine.corpus.store import gc_paused
from curator.engine.corpus.walker import utf8_name
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki

ERROR = "error"
WARNING = "warning"
SEVERITY = {"frontmatter": ERROR, "layer": ERROR, "trust": ERROR, "encoding": ERROR,
            "nul-bytes": ERROR, "source-type": WARNING, "links": WARNING,
            "empty": WARNING, "folder-case": ERROR, "file-name": ERROR, "broken-anchor": WARNING,
            "moved-target": WARNING, "unreadable": ERROR}
#: The name the operator's answer is saved under in the page cache, and the version of what is
#: saved: bump it whenever what lint reports changes (a saved answer of another version is not used).
SAVED_NAME = "lint"
_SAVED_FORMAT = 4  # (2: look-alike names are reported; 3: an ambiguous link's broken anchor too;
#                     4: what each page's links resolved to is saved beside, see _Links)
#: The codes of the checks over every page's name (the paths alone decide them): the rest are
#: one page's own (its text, its links' resolution, whether another page links to it).
_WIDE = frozenset(("duplicate-basename", "lookalike-name", "folder-case"))
#: A change is followed page by page (see :func:`_updated`) while it checks no more pages than
#: this or :data:`~curator.engine.corpus.links.REBUILD_SHARE` of them, whichever is more.
REDO_MIN = 200


def _link_problems(edge: Edge, visible: dict[str, Any],
                   can_see: Callable[[str], bool]) -> tuple[tuple[str, str], ...]:
    """(code, what it is about) of each problem lint reports for a link (none: empty). A file the
    reader may not see is reported exactly like a missing one (lint is no oracle for hidden files).
    An ambiguous link is also checked for its anchor in the page it resolves to: reporting only
    the ambiguity would hide a broken anchor until the ambiguity is fixed."""
    res, link = edge.resolution, edge.link
    if res.path is None:
        if res.attachment is not None and can_see(res.attachment):
            return ()
        return (("missing-attachment" if res.names_file else "unresolved-link"), res.key),
    found: list[tuple[str, str]] = []
    if res.ambiguous and sum(1 for c in res.candidates if c in visible) > 1:
        found.append(("ambiguous-link", res.key))
    target = visible.get(res.path)
    if link.anchor and target is not None and not anchor_found(target, link.anchor):
        found.append(("broken-anchor", f"{res.key}#{link.anchor}"))
    return tuple(found)


def _link_message(code: str, edge: Edge, visible: dict[str, Any]) -> str:
    res, link = edge.resolution, edge.link
    if code == "unresolved-link":
        return f"[[{link.target}]] points to a page not yet written"
    if code == "missing-attachment":
        return f"[[{link.target}]] names an attachment that is not in the wiki"
    if code == "broken-anchor":
        what = "block" if link.anchor and link.anchor.startswith("^") else "heading"
        return f"[[{link.target}#{link.anchor}]]: {res.path} has no {what} {link.anchor!r}"
    others = [c for c in res.candidates if c in visible]
    return (f"[[{link.target}]] matches {len(others)} pages ({', '.join(others[:4])}); "
            f"resolved to {res.path}")


@dataclass(slots=True, frozen=True)
class LintIssue:
    path: str
    code: str
    severity: str
    message: str
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "code": self.code, "severity": self.severity, "message": self.message,
                "line": self.line}

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: [{self.code}] {self.message}"


def _sort_key(issue: LintIssue) -> tuple[str, int, str]:
    return (issue.path, issue.line, issue.code)


Row = tuple[str, str, str, str, int]


def lint(wiki: Wiki, actor: Actor = OPERATOR) -> list[LintIssue]:
    """All problems among the pages ``actor`` can see, sorted by path then line (the operator's
    answer is saved for the next call, and brought up to date after a change: see the module
    docstring)."""
    if actor.is_operator:
        return issues_of(*operators_parts(wiki))
    return _with_moved(_page_issues(wiki, actor), _moved_targets(wiki, actor))


def issues_of(parts: list[tuple[bytes, list[Row]]], moved: list[LintIssue]) -> list[LintIssue]:
    """The operator's issues from :func:`operators_parts`' answer, in :func:`lint`'s order."""
    return _with_moved([LintIssue(*row) for _, rows in parts for row in rows], moved)


def _with_moved(issues: list[LintIssue], moved: list[LintIssue]) -> list[LintIssue]:
    # (the renamed targets' code is theirs alone: sorting them in keeps every other issue's order)
    return sorted([*issues, *moved], key=_sort_key) if moved else issues


def lint_counts(wiki: Wiki, actor: Actor = OPERATOR) -> Counter[str]:
    """How many problems of each code :func:`lint` finds: for the operator, counted from the
    saved rows without making an issue of each (Health's lint figures: 240,000 issues made were
    0.2 s of it at 300,000 pages)."""
    found = _operators_rows(wiki) if actor.is_operator else None
    if found is None:
        return Counter(i.code for i in lint(wiki, actor))
    counts = Counter(row[1] for part in found.parts for row in part)  # (a row's code: see _row)
    counts.update(i.code for i in _moved_targets(wiki, actor))
    return counts


def operators_parts(wiki: Wiki) -> tuple[list[tuple[bytes, list[Row]]], list[LintIssue]]:
    """The operator's answer as the saved answer holds it: its parts of rows (sorted, a page's
    rows never apart), each with a digest of its bytes as saved (the same digest while the part
    is the same: what a rendering of it can be kept under), and the renamed targets looked up
    now (:func:`lint` sorts those in). :func:`lint` of the operator is exactly these."""
    import hashlib

    rows = _operators_rows(wiki)
    parts = []
    for part, blob in zip(rows.parts, rows.blobs, strict=True):
        if part:
            saved = blob if blob is not None else _encode_part(part)
            parts.append((hashlib.blake2b(saved, digest_size=16).digest(), part))
    return parts, _moved_targets(wiki, OPERATOR)


def render_rows(rows: Iterable[Row]) -> list[str]:
    """Each row's line, as :meth:`LintIssue.render` writes it."""
    return [LintIssue(*row).render() for row in rows]


def _operators_rows(wiki: Wiki) -> _Rows:
    """Every problem the operator sees, as rows (:class:`LintIssue`'s fields), from the answer
    saved under this state or brought up to date from an earlier one, else found again (and
    saved for the next call)."""
    store = wiki.store
    store.count()  # (refreshed once: the state and the attachment files are current; nothing decoded)
    state, key = store.state, store.attachments_key()
    found = store.derived_since(SAVED_NAME) if state is not None else None
    saved = _from_saved(found[0], key) if found is not None else None
    if found is not None and saved is not None:
        rows, links_blob = saved
        if not found[1]:  # the same pages: the saved answer (what its links saw is not decoded)
            return rows
        seen = _Links.read(links_blob)
        if seen is not None and _updated(wiki, rows, seen, found[1]):
            if not seen.changed and all(blob is not None for blob in rows.blobs):
                # (nothing lint saw moved: the answer saved, stamped with this state, not written
                # again whole: 6 MB at 100,000 pages, after every append)
                store.carry_derived(SAVED_NAME, found, state=state)
            else:
                store.save_derived(SAVED_NAME, _saved(rows, key, seen), state=state)
            return rows
    seen_now: dict[str, _Seen] = {}
    every = _Rows.made([_row(i) for i in _page_issues(wiki, OPERATOR, seen_now)])
    if state is not None:  # (not when another thread's refresh wrote meanwhile)
        store.save_derived(SAVED_NAME, _saved(every, key, _Links.made(seen_now)), state=state)
    return every


def _row(issue: LintIssue) -> Row:
    return (issue.path, issue.code, issue.severity, issue.message, issue.line)


def _row_key(row: Row) -> tuple[str, int, str]:
    """:func:`_sort_key` of a saved row."""
    return (row[0], row[4], row[1])


#: The saved rows are cut in parts of about this many (a page's rows never apart), each encoded
#: alone: a change encodes again the parts holding the pages it affects, not 30,000 rows.
PART_ROWS = 2048


def _encode_part(part: list[Row]) -> bytes:
    """One part of the operator's rows as it is saved (and digested: :func:`operators_parts`)."""
    return zlib.compress(marshal.dumps(part), 1)


@dataclass(slots=True)
class _Rows:
    """The operator's issue rows, sorted (by :func:`_row_key`), in parts as saved."""

    parts: list[list[Row]]
    blobs: list[bytes | None]  # each part as saved (None: changed since, encoded again when saved)

    @classmethod
    def made(cls, rows: list[Row]) -> _Rows:
        parts, start = [], 0
        while start < len(rows):
            end = min(start + PART_ROWS, len(rows))
            while end < len(rows) and rows[end][0] == rows[end - 1][0]:
                end += 1
            parts.append(rows[start:end])
            start = end
        return cls(parts, [None] * len(parts))

    def encoded(self) -> list[bytes]:
        out: list[bytes] = []
        for part, blob in zip(self.parts, self.blobs, strict=True):
            if blob is not None:
                out.append(blob)
            elif len(part) > 2 * PART_ROWS:  # (grown by many changes: cut again)
                out.extend(_encode_part(p) for p in _Rows.made(part).parts)
            elif part:
                out.append(_encode_part(part))
        return out

    def replace(self, runs: dict[str, list[Row]], drop: Callable[[str, Row], bool]) -> None:
        """Each page's run of rows in ``runs`` (by path) made its kept rows (those ``drop`` does
        not take) and its new rows, in the place and order sorting every row would give them (the
        kept first among equal keys: a stable sort keeps them before the new ones)."""
        if not self.parts:
            self.parts, self.blobs = [[]], [None]
        firsts = [part[0][0] if part else "" for part in self.parts]
        for path in sorted(runs, reverse=True):
            k = max(bisect_right(firsts, path) - 1, 0)
            part = self.parts[k]
            lo = bisect_left(part, path, key=itemgetter(0))
            hi = bisect_right(part, path, lo=lo, key=itemgetter(0))
            run = [r for r in part[lo:hi] if not drop(path, r)]
            run.extend(runs[path])
            run.sort(key=_row_key)
            if run != part[lo:hi]:  # (the same rows: the part as saved)
                part[lo:hi] = run
                self.blobs[k] = None


def _saved(rows: _Rows, key: bytes, links: _Links) -> bytes:
    # The rows and what the links saw are encoded apart: an unchanged wiki's answer reads the rows only.
    return marshal.dumps((_SAVED_FORMAT, key, rows.encoded(), links.saved()))


def _from_saved(blob: bytes | None, key: bytes) -> tuple[_Rows, bytes] | None:
    """The issue rows :func:`_saved` wrote for the attachment files ``key`` and what their links
    saw (still encoded: see :meth:`_Links.read`); None: none, or not this version's, or for
    other files."""
    if blob is None:
        return None
    try:
        version, saved_key, blobs, links_blob = marshal.loads(blob)
        if version != _SAVED_FORMAT or saved_key != key:
            return None
        parts: list[list[Row]] = [marshal.loads(zlib.decompress(b)) for b in blobs]
        return _Rows(parts, list(blobs)), links_blob
    except (ValueError, TypeError, EOFError, zlib.error):
        return None


class _Seen(NamedTuple):
    """What lint saw of one page's links (see :class:`_Links`)."""

    to: tuple[str, ...]  # the other pages its links resolve to (what makes those not orphans)
    also: tuple[str, ...]  # the other candidates of its ambiguous links
    anchored: tuple[str, ...]  # the pages its links with an anchor resolve to
    names: bytes  # its names' digest
    slug: str


def _seen(path: str, page: Page, edges: list[Edge]) -> _Seen:
    targets = {e[2].path for e in edges if e[2].path is not None and e[2].path != path}
    others = {c for e in edges if len(e[2].candidates) > 1 for c in e[2].candidates if c != e[2].path}
    pointed = {e[2].path for e in edges if e[1].anchor and e[2].path is not None}
    return _Seen(tuple(sorted(targets)), tuple(sorted(others)), tuple(sorted(pointed)), _names_digest(page),
                 slug_of(path))


@dataclass(slots=True)
class _Links:
    """What lint saw of every page's links, saved beside its answer so a change is followed page
    by page (see :func:`_updated`): packed by the pages' places in path order (saving and reading
    it is a few copies of arrays, not 200,000 objects at 32,000 pages).

    - ``to``: each page's link targets (the other pages its links resolve to), as the places
      ``targets[starts[i]:starts[i + 1]]``: a page removed, or renamed, is resolved again by the
      pages linking to it; the targets of a page checked again have their counts recounted;
    - ``count``: how many other pages link to each page (0: an orphan);
    - ``names``: :func:`~curator.engine.graph.link_graph.names_digest` of each page (8 bytes): an
      edit that keeps its title and aliases (what links resolve by besides its path) leaves every
      link's resolution as it was;
    - ``also``: the other candidates of a page's ambiguous links (a candidate renamed or removed
      changes the verdict) and ``anchored``: the pages its links with an anchor point into (an edit
      there may find or lose the anchor); by path, only the pages with any (few)."""

    paths: list[str]
    paths_blob: bytes  # (``paths`` as saved: written again only when the paths change)
    #: each page's slug (what the names checks group by), as saved: read only when a page was
    #: added or removed (slugging 32,000 paths again costs ~150 ms)
    slugs_blob: bytes
    names: bytes
    count: array[int]
    starts: array[int]
    targets: array[int]
    also: dict[str, tuple[str, ...]]
    anchored: dict[str, tuple[str, ...]]
    #: whether :meth:`update` changed anything (else it is the one saved, byte for byte)
    changed: bool = False

    @classmethod
    def made(cls, seen: dict[str, _Seen]) -> _Links:
        """From what every page's links saw (keys: every page)."""
        paths = sorted(seen)
        at = {p: i for i, p in enumerate(paths)}
        count, starts, targets = array("i", bytes(4 * len(paths))), array("i", [0]), array("i")
        for path in paths:
            places = [at[t] for t in seen[path].to]
            targets.extend(places)
            starts.append(len(targets))
            for place in places:
                count[place] += 1
        return cls(paths, _paths_blob(paths), _paths_blob([seen[p].slug for p in paths]),
                   b"".join(seen[p].names for p in paths), count, starts, targets,
                   {p: s.also for p, s in seen.items() if s.also},
                   {p: s.anchored for p, s in seen.items() if s.anchored})

    def saved(self) -> bytes:
        return marshal.dumps((self.paths_blob, self.slugs_blob, self.names, self.count.tobytes(), self.starts.tobytes(),
                              self.targets.tobytes(), self.also, self.anchored))

    @classmethod
    def read(cls, blob: bytes) -> _Links | None:
        try:
            paths_blob, slugs_blob, names, count_b, starts_b, targets_b, also, anchored = marshal.loads(blob)
            joined = _unjoined(paths_blob)
        except (ValueError, TypeError, EOFError, zlib.error, UnicodeDecodeError):
            return None
        paths = joined
        count, starts, targets = array("i"), array("i"), array("i")
        count.frombytes(count_b)
        starts.frombytes(starts_b)
        targets.frombytes(targets_b)
        if not (len(count) == len(paths) == len(starts) - 1 == len(names) // 8) or starts[-1] != len(targets):
            return None
        return cls(paths, paths_blob, slugs_blob, names, count, starts, targets, also, anchored)

    def place(self, path: str) -> int | None:
        """The page's place (None: not a page when saved), found by bisection: a dict of every
        page's place costs more than a change looks up."""
        paths = self.paths
        i = bisect_left(paths, path)
        return i if i < len(paths) and paths[i] == path else None

    def placed(self, path: str) -> int:
        """The place of a page that is one now (after :meth:`update`)."""
        place = self.place(path)
        assert place is not None, path
        return place

    def digest(self, place: int) -> bytes:
        return self.names[8 * place:8 * place + 8]

    def to(self, place: int) -> array[int]:
        return self.targets[self.starts[place]:self.starts[place + 1]]

    def linking(self, places: set[int]) -> set[str]:
        """The pages with a link resolving to one of the pages at ``places`` (a scan of every
        page's targets: only when a page was removed or renamed)."""
        starts, targets, paths = self.starts, self.targets, self.paths
        return {paths[i] for i in range(len(paths)) if not places.isdisjoint(targets[starts[i]:starts[i + 1]])}

    def update(self, gone: set[str], added: set[str], seen: dict[str, _Seen]) -> set[str]:
        """Bring it up to date: the pages ``gone`` removed, the pages ``added`` added, and the
        pages in ``seen`` (the added ones among them) with their links as they resolve now.
        Returns the pages whose count of incoming links may have changed (every page still here)."""
        if not gone and not added and all(self._saw(path, now) for path, now in seen.items()):
            return set(seen)  # (an append of a fact: its links see what they saw, nothing moves)
        self.changed = True
        count, paths = self.count, self.paths
        recount: set[str] = set()
        for path in seen.keys() | gone:  # their old links taken away
            place = self.place(path)
            if place is not None:
                for target in self.to(place):
                    count[target] -= 1
                    recount.add(paths[target])
        for path in gone:
            self.also.pop(path, None)
            self.anchored.pop(path, None)
        for path, now in seen.items():
            for table, found in ((self.also, now.also), (self.anchored, now.anchored)):
                if found:
                    table[path] = found
                else:
                    table.pop(path, None)
        if gone or added:
            self._renumber(gone, added)
            count, paths = self.count, self.paths
        at = {p: self.placed(p) for s in seen.values() for p in s.to} | {p: self.placed(p) for p in seen}
        # The pages checked again get their new targets; the runs of the others are copied whole.
        starts, targets = self.starts, self.targets
        news = {at[p]: array("i", [at[t] for t in s.to]) for p, s in seen.items()}
        rebuilt, done = array("i"), 0
        for place in sorted(news):
            rebuilt.extend(targets[starts[done]:starts[place]])
            rebuilt.extend(news[place])
            done = place + 1
        rebuilt.extend(targets[starts[done]:])
        if news:
            first, shift = min(news), 0
            after = starts[:first + 1]
            for place in range(first, len(paths)):
                run = news.get(place)
                if run is not None:
                    shift += len(run) - (starts[place + 1] - starts[place])
                after.append(starts[place + 1] + shift)
            self.starts = after
        self.targets = rebuilt
        names = bytearray(self.names)
        for place, run in news.items():
            names[8 * place:8 * place + 8] = seen[paths[place]].names
            for target in run:
                count[target] += 1
                recount.add(paths[target])
        self.names = bytes(names)
        return (recount | seen.keys()) - gone

    def _saw(self, path: str, now: _Seen) -> bool:
        """Whether ``path``'s links see now what they saw (targets, names, candidates, anchors)."""
        place = self.place(path)
        if place is None or self.digest(place) != now.names:
            return False
        if self.also.get(path, ()) != now.also or self.anchored.get(path, ()) != now.anchored:
            return False
        return list(self.to(place)) == [self.place(t) for t in now.to]

    def _renumber(self, gone: set[str], added: set[str]) -> None:
        """The places of every page after ``gone`` were removed and ``added`` added (an added page:
        no targets, no incoming link, no names yet). The pages keep their order, so each array is
        copied page by page to its new place; a target gone becomes -1, and only the pages gone
        and the pages linking to them have one (every page linking to one is checked again, its
        targets replaced next)."""
        old, starts = self.paths, self.starts
        paths = sorted((set(old) - gone) | added)
        at = {p: i for i, p in enumerate(paths)}
        place_of = [at.get(p, -1) for p in old]
        count = array("i", bytes(4 * len(paths)))
        names = bytearray(8 * len(paths))
        lengths = [0] * len(paths)
        for i, j in enumerate(place_of):
            if j >= 0:
                count[j] = self.count[i]
                names[8 * j:8 * j + 8] = self.names[8 * i:8 * i + 8]
                lengths[j] = starts[i + 1] - starts[i]
        targets, done = array("i"), 0  # (the runs between the pages gone, copied whole)
        for i in sorted(i for i, j in enumerate(place_of) if j < 0):
            targets.extend(self.targets[starts[done]:starts[i]])
            done = i + 1
        targets.extend(self.targets[starts[done]:])
        self.targets = array("i", [place_of[t] for t in targets])
        self.starts = array("i", [0, *accumulate(lengths)])
        slugs, new_slugs = _unjoined(self.slugs_blob), [""] * len(paths)
        for i, j in enumerate(place_of):
            if j >= 0:
                new_slugs[j] = slugs[i]
        for path in added:
            new_slugs[at[path]] = slug_of(path)
        self.paths, self.paths_blob, self.slugs_blob = paths, _paths_blob(paths), _paths_blob(new_slugs)
        self.count, self.names = count, bytes(names)


    def slugs(self) -> list[str]:
        return _unjoined(self.slugs_blob)


def _paths_blob(paths: list[str]) -> bytes:
    return zlib.compress("\0".join(paths).encode("utf-8", "surrogateescape"), 1)


def _unjoined(blob: bytes) -> list[str]:
    """The strings :func:`_paths_blob` wrote."""
    joined = zlib.decompress(blob).decode("utf-8", "surrogateescape")
    return joined.split("\0") if joined else []


def _names_digest(page: Page) -> bytes:
    from curator.engine.graph.link_graph import names_digest

    return names_digest(page)


def _page_names(path: str, page: Page) -> set[str]:
    """Every name a link can reach the page by (what the cache's name tables hold: slug, the last
    segment of its path key, title and aliases)."""
    names = {slug_of(path), path_key(path).rpartition("/")[2], link_key(page.title),
             *(link_key(a) for a in page.aliases if isinstance(a, str))}
    names.discard("")
    return names


def _updated(wiki: Wiki, rows: _Rows, links: _Links, changed: set[str]) -> bool:
    """Bring the operator's issue ``rows`` saved before up to date with the ``changed`` pages
    (``links``: what their links saw, brought up to date too), in place: exactly what
    :func:`_page_issues` computes from every page. False (both left half done) when that is not
    decided here (a page no database holds, a ``[[a/..]]`` link, too many pages to check again):
    the caller computes every page's issues.

    Checked again: the changed pages; the pages with a link that may resolve differently (one
    whose target or candidate was removed or changed its title or aliases, found from ``links``;
    one naming a page added or renamed, found in the cache's name tables); the pages with an
    anchor into an edited page. Of the pages whose incoming links came or went, only whether they
    are orphans."""
    store = wiki.store
    if not store.partial_reads:
        return False
    # (a large change is checked from every page: a merge of thousands of pages costs what it changes anyway)
    limit = max(REBUILD_SHARE * store.count(), REDO_MIN)
    if len(changed) > limit:
        return False
    pages: dict[str, Page] = {}
    gone: set[str] = set()
    at: dict[str, int] = {}  # (the changed pages' places when saved)
    for path in sorted(changed):
        page, place = store.page(path), links.place(path)
        if place is not None:
            at[path] = place
        if page is not None:
            pages[path] = page
        elif place is not None:
            gone.add(path)
    added = {p for p in pages if p not in at}
    renamed = {p for p, page in pages.items() if p in added or links.digest(at[p]) != _names_digest(page)}
    redo = set(pages)
    # Links that resolved to, or had as a candidate, a page removed or renamed: resolved again.
    moved = gone | (renamed - added)
    if moved:
        redo |= links.linking({at[p] for p in moved})
        redo.update(s for s, ts in links.also.items() if not moved.isdisjoint(ts))
    # Links into an edited page's anchors: checked again (the headings may differ now).
    edited = set(pages) - renamed
    if edited:
        redo.update(s for s, ts in links.anchored.items() if not edited.isdisjoint(ts))
    # Links naming a page added or renamed (unresolved before, or to another page): resolved again.
    names = {n for p in renamed for n in _page_names(p, pages[p])}
    if names:
        pages.update(store.pages_linking(names))
        redo.update(p for p in pages if p not in gone)
    redo -= gone
    if len(redo) > limit:
        return False
    for path in sorted(redo - pages.keys()):
        page = store.page(path)
        if page is None:
            return False  # (listed, but no record: the full computation sorts it out)
        pages[path] = page
    with gc_paused():
        resolved = outgoing_by_name({p: pages[p] for p in redo}, store.pages_named, store.attachments)
    if resolved is None:
        return False  # ``[[a/..]]``: its page is not named by its last segment
    outgoing, around = resolved
    recount = links.update(gone, added, {p: _seen(p, pages[p], outgoing[p]) for p in redo})
    count = links.count
    runs: dict[str, list[Row]] = defaultdict(list)
    verdicts: dict[int, tuple[tuple[str, str], ...]] = {}
    for path in sorted(redo):
        orphan = not count[links.placed(path)]
        runs[path] = [_row(i) for i in _issues_of(path, pages[path], outgoing[path], around, _shown, verdicts, orphan)]
    for path in sorted(recount - redo):  # (its orphan row dropped, and made again if it still is one)
        runs[path] = [] if count[links.placed(path)] else [_row(_orphan(path))]
    if added or gone:  # the names checks (the paths alone decide them) made again, and every row sorted
        kept = [r for part in rows.parts for r in part if r[0] not in redo and r[0] not in gone
                and r[1] not in _WIDE and not (r[1] == "orphan" and r[0] in recount)]
        every = [*kept, *(r for run in runs.values() for r in run), *map(_row, _wide_issues(links.paths, links.slugs()))]
        every.sort(key=_row_key)
        fresh = _Rows.made(every)
        rows.parts, rows.blobs = fresh.parts, fresh.blobs
        return True
    # The same paths: only the affected pages' runs of rows replaced (the names checks' kept).
    rows.replace(runs, lambda path, row: row[1] not in _WIDE if path in redo else row[1] == "orphan")
    return True


def _shown(path: str) -> bool:
    return True  # (the operator sees every page and file)


def _orphan(path: str) -> LintIssue:
    return LintIssue(path, "orphan", WARNING, "no other page links here")


def _issues_of(path: str, page: Page, edges: list[Edge], visible: dict[str, Any], can_see: Callable[[str], bool],
               verdicts: dict[int, tuple[tuple[str, str], ...]], orphan: bool) -> list[LintIssue]:
    """The page's own problems (its file name, its text, its links as resolved in ``edges``, and
    whether it is an ``orphan``), in the order :func:`_page_issues` lists them. ``visible``: at
    least the pages its links resolve to or have as candidates; ``verdicts``: see there."""
    issues: list[LintIssue] = []
    if not utf8_name(path):
        issues.append(LintIssue(path, "file-name", ERROR, "the file name is not valid UTF-8 (shown with "
                                "replacement characters); rename the file"))
    for problem in page.problems:
        issues.append(LintIssue(path, problem.code, SEVERITY.get(problem.code, ERROR), problem.message,
                                problem.line))
    # One issue per broken target and page, at its first line: a page repeating a broken
    # link thousands of times is one thing to fix, not thousands.
    reported: dict[tuple[str, str], list[int]] = {}
    for edge in [e for e in edges if e[1].anchor or e[2].path is None or len(e[2].candidates) > 1]:
        if edge[1].anchor:
            problems = _link_problems(edge, visible, can_see)
        else:
            rid = id(edge[2])
            problems = verdicts[rid] if rid in verdicts else verdicts.setdefault(
                rid, _link_problems(edge, visible, can_see))
        for broken in problems:
            seen = reported.get(broken)
            if seen is not None:
                seen[1] += 1
                continue
            code = broken[0]
            reported[broken] = [len(issues), 1]
            issues.append(LintIssue(path, code, WARNING, _link_message(code, edge, visible), edge.link.line))
    for index, count in reported.values():
        if count > 1:
            first = issues[index]
            issues[index] = LintIssue(first.path, first.code, first.severity,
                                      f"{first.message} ({count} times)", first.line)
    if orphan:
        issues.append(_orphan(path))
    return issues


def _page_issues(wiki: Wiki, actor: Actor, seen: dict[str, _Seen] | None = None) -> list[LintIssue]:
    """Every problem but the renames seen in git history, sorted by path, line and code; with
    ``seen``, what each page's links saw is recorded there (see :class:`_Links`)."""
    issues: list[LintIssue] = []
    visible = {p.path: p for p in wiki.visible_pages(actor)}
    index = wiki.links_for(actor)  # links to hidden pages read as links to missing ones
    outgoing, incoming = index.outgoing, index.incoming

    def can_see(path: str) -> bool:
        return wiki.visible(actor, path)

    # Only a link with an anchor, or whose resolution found nothing or several pages, can be a
    # problem: those are picked out in one pass over a page's links (~200,000 at 32,000 pages),
    # and what one without an anchor reports, which depends on its resolution alone (links naming
    # the same target from the same folder share one), is decided once per resolution. (The
    # index holds every resolution, so their ids stay unique meanwhile.)
    verdicts: dict[int, tuple[tuple[str, str], ...]] = {}
    for path, page in visible.items():
        edges = outgoing.get(path, [])
        orphan = not any(e[0] in visible for e in incoming.get(path, ()))
        issues.extend(_issues_of(path, page, edges, visible, can_see, verdicts, orphan))
        if seen is not None:
            seen[path] = _seen(path, page, edges)
    slugs = [seen[p].slug for p in visible] if seen is not None else [page.slug for page in visible.values()]
    issues.extend(_wide_issues(list(visible), slugs))
    issues.sort(key=_sort_key)
    return issues


def _wide_issues(paths: list[str], slugs: list[str]) -> list[LintIssue]:
    """The checks over every page's name, of the pages at ``paths`` (sorted): shared file names,
    look-alike names, folders differing in case."""
    stems: dict[str, list[str]] = defaultdict(list)
    for path, stem in zip(paths, slugs, strict=True):
        stems[stem].append(path)
    issues: list[LintIssue] = []
    for stem, named in stems.items():
        if len(named) > 1:
            for path in named:
                issues.append(LintIssue(path, "duplicate-basename", WARNING,
                                        f"{len(named)} pages are named {stem!r}: {', '.join(named[:4])}"))
    issues.extend(_lookalike_names(stems))
    issues.extend(_folder_case(paths))
    return issues


def _lookalike_names(stems: dict[str, list[str]]) -> list[LintIssue]:
    """Pages whose names differ only by look-alike or invisible characters (``pаyments`` with a
    Cyrillic ``а`` beside ``payments``): one reads as the other, and routing takes them as one."""
    out = []
    for names in lookalike_groups(stems):
        paths = sorted(p for name in names for p in stems[name])
        for stem in names:
            for path in stems[stem]:
                others = ", ".join(escape_controls(p) for p in paths if p != path)
                out.append(LintIssue(path, "lookalike-name", WARNING,
                                     f"the name {escape_controls(stem)!r} looks like another page's ({others}); "
                                     "rename one (routing takes them as the same name)"))
    return out


def _folder_case(paths: Iterable[str]) -> list[LintIssue]:
    """Folders whose names differ only in case (``HR/`` and ``hr/``): the scope policy and the
    department rule treat them as one, git on a case-insensitive disk cannot hold both."""
    folders: dict[str, set[str]] = defaultdict(set)
    for parent in sorted({path.rpartition("/")[0] for path in paths}):  # (each page's folder once)
        parts = parent.split("/") if parent else []
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            folders[folder.casefold()].add(folder)
    out = []
    for names in folders.values():
        if len(names) > 1:
            listed = ", ".join(f"{n}/" for n in sorted(names))
            for name in sorted(names):
                out.append(LintIssue(f"{name}/", "folder-case", ERROR,
                                     f"folders differ only in case ({listed}); the scope policy treats "
                                     "them as one folder: rename one of them"))
    return out


def _moved_targets(wiki: Wiki, actor: Actor) -> list[LintIssue]:
    """Links broken by a rename done outside Curator (git saw the target move), with the fix."""
    from curator.engine.write.move import broken_by_renames

    out: list[LintIssue] = []
    for broken in broken_by_renames(wiki):
        if not wiki.visible(actor, broken.new):
            continue
        for source in broken.sources:
            if wiki.visible(actor, source):
                out.append(LintIssue(source, "moved-target", WARNING,
                                     f"links to {broken.old} broke when it was renamed to {broken.new} "
                                     f"(commit {broken.commit[:10]}); fix every one: "
                                     f"curator move --repair {broken.old} {broken.new}"))
    return out
