"""Lint: what is wrong with the wiki's pages and links, for operators to fix (docs/design.md §3).

Lint resolves every link of the wiki and checks every page (~2 s at 32,000 pages), so the
operator's answer is also saved in the page cache (:meth:`~curator.engine.corpus.store.PageStore.save_derived`) under
the store's state token and the attachment files it was computed with: the next call (a one-shot
``curator lint``, the station's Health and Lint views) whose refresh finds the same pages and files
answers it again without decoding a page or resolving a link. Any change to a page gives the
store a new state, so a saved answer is never given for other pages. Renames seen in git history
(``moved-target``) are not saved: they are looked up on every call.
"""

from __future__ import annotations

import marshal
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from curator.engine.corpus.links import Edge, anchor_found
from curator.engine.corpus.lookalike import escape_controls, lookalike_groups
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
_SAVED_FORMAT = 3  # (2: look-alike names are reported; 3: an ambiguous link's broken anchor too)


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


def lint(wiki: Wiki, actor: Actor = OPERATOR) -> list[LintIssue]:
    """All problems among the pages ``actor`` can see, sorted by path then line (the operator's
    answer is saved for the next call on the same pages: see the module docstring)."""
    if actor.is_operator:
        store = wiki.store
        store.count()  # (refreshed once: the state and the attachment files are current; nothing decoded)
        state, key = store.state, store.attachments_key()
        issues = _from_saved(store.derived(SAVED_NAME), key)
        if issues is None:
            issues = _page_issues(wiki, actor)
            if state is not None:  # (not when another thread's refresh wrote meanwhile)
                store.save_derived(SAVED_NAME, _saved(issues, key), state=state)
    else:
        issues = _page_issues(wiki, actor)
    moved = _moved_targets(wiki, actor)
    if moved:  # (their code is theirs alone: sorting them in keeps every other issue's order)
        issues = sorted([*issues, *moved], key=_sort_key)
    return issues


def _saved(issues: list[LintIssue], key: bytes) -> bytes:
    rows = [(i.path, i.code, i.severity, i.message, i.line) for i in issues]
    return zlib.compress(marshal.dumps((_SAVED_FORMAT, key, rows)), 1)


def _from_saved(blob: bytes | None, key: bytes) -> list[LintIssue] | None:
    """The issues :func:`_saved` wrote for the attachment files ``key`` (None: none, or not this
    version's, or for other files)."""
    if blob is None:
        return None
    try:
        version, saved_key, rows = marshal.loads(zlib.decompress(blob))
        if version != _SAVED_FORMAT or saved_key != key:
            return None
        return [LintIssue(*row) for row in rows]
    except (ValueError, TypeError, EOFError, zlib.error):
        return None


def _page_issues(wiki: Wiki, actor: Actor) -> list[LintIssue]:
    """Every problem but the renames seen in git history, sorted by path, line and code."""
    issues: list[LintIssue] = []
    visible = {p.path: p for p in wiki.visible_pages(actor)}
    links = wiki.links_for(actor)  # links to hidden pages read as links to missing ones
    outgoing, incoming = links.outgoing, links.incoming
    stems: dict[str, list[str]] = defaultdict(list)

    def can_see(path: str) -> bool:
        return wiki.visible(actor, path)

    # Only a link with an anchor, or whose resolution found nothing or several pages, can be a
    # problem: those are picked out in one pass over a page's links (~200,000 at 32,000 pages),
    # and what one without an anchor reports, which depends on its resolution alone (links naming
    # the same target from the same folder share one), is decided once per resolution. (The
    # index holds every resolution, so their ids stay unique meanwhile.)
    verdicts: dict[int, tuple[tuple[str, str], ...]] = {}
    for path, page in visible.items():
        stems[page.slug].append(path)
        if not utf8_name(path):
            issues.append(LintIssue(path, "file-name", ERROR, "the file name is not valid UTF-8 (shown with "
                                    "replacement characters); rename the file"))
        for problem in page.problems:
            issues.append(LintIssue(path, problem.code, SEVERITY.get(problem.code, ERROR), problem.message,
                                    problem.line))
        # One issue per broken target and page, at its first line: a page repeating a broken
        # link thousands of times is one thing to fix, not thousands.
        reported: dict[tuple[str, str], list[int]] = {}
        for edge in [e for e in outgoing.get(path, ())
                     if e[1].anchor or e[2].path is None or len(e[2].candidates) > 1]:
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
        if not any(e[0] in visible for e in incoming.get(path, ())):
            issues.append(LintIssue(path, "orphan", WARNING, "no other page links here"))
    for stem, paths in stems.items():
        if len(paths) > 1:
            for path in paths:
                issues.append(LintIssue(path, "duplicate-basename", WARNING,
                                        f"{len(paths)} pages are named {stem!r}: {', '.join(paths[:4])}"))
    issues.extend(_lookalike_names(stems))
    issues.extend(_folder_case(visible))
    issues.sort(key=_sort_key)
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
