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
only: kept while no page was added or removed, else made again from the listing.
"""

from __future__ import annotations

import marshal
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from curator.engine.corpus.links import REBUILD_SHARE, Edge, anchor_found, odd_key, outgoing_of
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
        store = wiki.store
        store.count()  # (refreshed once: the state and the attachment files are current; nothing decoded)
        state, key = store.state, store.attachments_key()
        found = store.derived_since(SAVED_NAME) if state is not None else None
        saved = _from_saved(found[0], key) if found is not None else None
        issues: list[LintIssue] | None = None
        if found is not None and saved is not None:
            rows, links_blob = saved
            if not found[1]:  # the same pages: the saved answer (what its links saw is not decoded)
                issues = [LintIssue(*row) for row in rows]
            else:
                seen = _Links.read(links_blob)
                updated = _updated(wiki, rows, seen, found[1]) if seen is not None else None
                if seen is not None and updated is not None:
                    issues = [LintIssue(*row) for row in updated]
                    store.save_derived(SAVED_NAME, _saved(updated, key, seen), state=state)
        if issues is None:
            links = _Links({}, {}, {}, {}, {})
            issues = _page_issues(wiki, actor, links)
            if state is not None:  # (not when another thread's refresh wrote meanwhile)
                store.save_derived(SAVED_NAME, _saved([_row(i) for i in issues], key, links), state=state)
    else:
        issues = _page_issues(wiki, actor)
    moved = _moved_targets(wiki, actor)
    if moved:  # (their code is theirs alone: sorting them in keeps every other issue's order)
        issues = sorted([*issues, *moved], key=_sort_key)
    return issues


def _row(issue: LintIssue) -> Row:
    return (issue.path, issue.code, issue.severity, issue.message, issue.line)


def _row_key(row: Row) -> tuple[str, int, str]:
    """:func:`_sort_key` of a saved row."""
    return (row[0], row[4], row[1])


def _saved(rows: list[Row], key: bytes, links: _Links) -> bytes:
    # The rows and what the links saw are compressed apart: an unchanged wiki's answer reads the rows only.
    return marshal.dumps((_SAVED_FORMAT, key, zlib.compress(marshal.dumps(rows), 1), links.saved()))


def _from_saved(blob: bytes | None, key: bytes) -> tuple[list[Row], bytes] | None:
    """The issue rows :func:`_saved` wrote for the attachment files ``key`` and what their links
    saw (still encoded: see :meth:`_Links.read`); None: none, or not this version's, or for
    other files."""
    if blob is None:
        return None
    try:
        version, saved_key, rows_blob, links_blob = marshal.loads(blob)
        if version != _SAVED_FORMAT or saved_key != key:
            return None
        rows: list[Row] = marshal.loads(zlib.decompress(rows_blob))
        return rows, links_blob
    except (ValueError, TypeError, EOFError, zlib.error):
        return None


@dataclass(slots=True)
class _Links:
    """What lint saw of every page's links, saved beside its answer so a change is followed page
    by page (see :func:`_updated`). Pages without such links are absent from the first three."""

    #: each page's link targets: the other pages its links resolve to (what makes them not orphans)
    to: dict[str, tuple[str, ...]]
    #: the other candidates of its ambiguous links (a candidate renamed or removed changes the verdict)
    also: dict[str, tuple[str, ...]]
    #: the pages its links with an anchor resolve to (an edit there may find or lose the anchor)
    anchored: dict[str, tuple[str, ...]]
    #: how many other pages link to each page (absent: none, an orphan)
    count: dict[str, int]
    #: :func:`~curator.engine.graph.link_graph.names_digest` of every page (its title and aliases:
    #: what links resolve by besides its path): an edit that keeps them resolves every link as before
    names: dict[str, bytes]

    def note(self, path: str, page: Page, edges: list[Edge]) -> None:
        """Record the page's links as just resolved (its count of incoming links apart)."""
        to, also, anchored = self.to, self.also, self.anchored
        targets = {e[2].path for e in edges if e[2].path is not None and e[2].path != path}
        others = {c for e in edges if len(e[2].candidates) > 1 for c in e[2].candidates if c != e[2].path}
        pointed = {e[2].path for e in edges if e[1].anchor and e[2].path is not None}
        for table, found in ((to, targets), (also, others), (anchored, pointed)):
            if found:
                table[path] = tuple(sorted(found))
            else:
                table.pop(path, None)
        self.names[path] = _names_digest(page)

    def saved(self) -> bytes:
        return zlib.compress(marshal.dumps((self.names, self.to, self.also, self.anchored, self.count)), 1)

    @classmethod
    def read(cls, blob: bytes) -> _Links | None:
        try:
            names, to, also, anchored, count = marshal.loads(zlib.decompress(blob))
        except (ValueError, TypeError, EOFError, zlib.error):
            return None
        return cls(to, also, anchored, count, names)


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


def _updated(wiki: Wiki, rows: list[Row], links: _Links, changed: set[str]) -> list[Row] | None:
    """The operator's issue rows after the ``changed`` pages changed, from the ``rows`` saved
    before (``links``: what their links saw, brought up to date in place); exactly what
    :func:`_page_issues` computes from every page. None when that is not decided here (a page
    no database holds, a ``[[a/..]]`` link, too many pages to check again): the caller computes
    every page's issues.

    Checked again: the changed pages; the pages with a link that may resolve differently (one
    whose target or candidate was removed or changed its title or aliases, found from ``links``;
    one naming a page added or renamed, found in the cache's name tables); the pages with an
    anchor into a changed page. Of the pages whose incoming links came or went, only whether they
    are orphans."""
    store = wiki.store
    if not store.partial_reads:
        return None
    # (a large change is checked from every page: a merge of thousands of pages costs what it changes anyway)
    limit = max(REBUILD_SHARE * store.count(), REDO_MIN)
    if len(changed) > limit:
        return None
    pages: dict[str, Page] = {}
    gone: set[str] = set()
    for path in sorted(changed):
        page = store.page(path)
        if page is not None:
            pages[path] = page
        elif path in links.names:
            gone.add(path)
    added = [p for p in pages if p not in links.names]
    renamed = {p for p, page in pages.items() if links.names.get(p) != _names_digest(page)}  # (added too)
    redo = set(pages)
    # Links that resolved to, or had as a candidate, a page removed or renamed: resolved again.
    moved = gone | (renamed - set(added))
    if moved:
        redo.update(s for table in (links.to, links.also) for s, ts in table.items() if not moved.isdisjoint(ts))
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
        return None
    for path in sorted(redo - pages.keys()):
        page = store.page(path)
        if page is None:
            return None  # (listed, but no record: the full computation sorts it out)
        pages[path] = page
    keys = {link.key for path in redo for link in pages[path].links}
    if any(odd_key(k) for k in keys):
        return None  # ``[[a/..]]``: its page is not named by its last segment
    # The pages that can take part in resolving those links (found by name), and the checked ones.
    with gc_paused():
        around = dict(store.pages_named(keys | {k.rpartition("/")[2] for k in keys}))
        around.update((p, pages[p]) for p in redo)
        outgoing = outgoing_of(around, sorted(redo), store.attachments)
    # Incoming counts: the checked pages' old links taken away, their new ones added.
    count = links.count
    recount: set[str] = set(redo)
    for source in redo | gone:
        for target in links.to.get(source, ()):
            recount.add(target)
            left = count.get(target, 0) - 1
            if left > 0:
                count[target] = left
            else:
                count.pop(target, None)
    for path in gone:
        for table in (links.to, links.also, links.anchored, links.names, count):
            table.pop(path, None)
    for source in redo:
        links.note(source, pages[source], outgoing[source])
        for target in links.to.get(source, ()):
            recount.add(target)
            count[target] = count.get(target, 0) + 1
    recount -= gone
    wide = bool(added or gone)  # (the names checks follow from the paths: the same paths, the same answer)
    kept = [r for r in rows if r[0] not in redo and r[0] not in gone
            and not (r[1] == "orphan" and r[0] in recount) and not (wide and r[1] in _WIDE)]
    new: list[LintIssue] = []
    verdicts: dict[int, tuple[tuple[str, str], ...]] = {}
    for path in sorted(redo):
        new.extend(_issues_of(path, pages[path], outgoing[path], around, _seen, verdicts,
                              path not in count))
    for path in sorted(recount - redo):
        if path not in count:
            new.append(_orphan(path))
    if wide:
        new.extend(_wide_issues(store.paths))
    out = [*kept, *(_row(i) for i in new)]
    out.sort(key=_row_key)
    return out


def _seen(path: str) -> bool:
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


def _page_issues(wiki: Wiki, actor: Actor, links: _Links | None = None) -> list[LintIssue]:
    """Every problem but the renames seen in git history, sorted by path, line and code; with
    ``links``, what every page's links saw is recorded there (see :class:`_Links`)."""
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
        if links is not None:
            links.note(path, page, edges)
            for target in links.to.get(path, ()):
                links.count[target] = links.count.get(target, 0) + 1
    issues.extend(_wide_issues(list(visible)))
    issues.sort(key=_sort_key)
    return issues


def _wide_issues(paths: list[str]) -> list[LintIssue]:
    """The checks over every page's name, of the pages at ``paths`` (sorted): shared file names,
    look-alike names, folders differing in case."""
    stems: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        stems[slug_of(path)].append(path)
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
