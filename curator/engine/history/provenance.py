"""Provenance: who wrote every line, and what each agent wrote when (docs/design.md §14).

``blame(wiki, ref, viewer) -> list[BlameLine]``
    For each line of the page: the actor who wrote it (the commit's author: ``agent:<id>``,
    ``operator``, ...), the date, the commit, its action, and the reviewer (the commit's
    ``Reviewed-by:`` trailer, set when the line came through the review inbox). It runs
    ``git blame -M -C`` (moves and copies inside a file, and copies from the files the same commit
    changed), so a bullet a merge moved from the merged page, whose file the merge archived into
    ``_archive/``, keeps its original author; the merge (or the move that renamed the page) is the
    line's ``moved_by`` step, found with a second, plain blame that runs at the same time.
    Lines not committed yet have ``commit`` None and ``actor`` None. A page the viewer may not see
    is "no such page"; the page a line was copied from is named only when the viewer may see it.
``activity(wiki, agent, viewer, since=None) -> list[HistoryEntry]``
    The agent's commits (newest first), their paths limited to what ``viewer`` may see.
``undo_agent(wiki, actor, agent, since) -> ActionResult``
    Reverts every action commit of ``agent`` since ``since`` that is not reverted yet, in ONE
    ``revert`` action (body: one ``This reverts commit <sha>.`` line per commit). Each file is
    taken back commit by commit, newest first, with a three-way merge, so later changes by others
    survive; a later change to the same lines refuses the whole undo, naming the page. An agent
    may undo only its own writes; every path written is checked against the policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator.engine.errors import UsageError
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.read.injections import agent_actor, parse_since
from curator.engine.status import Status
from curator.engine.write.actions import (
    ACTOR_TRAILER,
    ActionContext,
    ActionResult,
    HistoryEntry,
    Invalid,
    git_of,
    history,
    run_action,
)

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

#: Minimum alphanumeric characters for git to count a moved or copied chunk (git's default, 20
#: for moves and 40 for copies, misses one short bullet moved on its own by a merge).
COPY_SCORE = 12
_UNCOMMITTED = "0" * 40
_SUBJECT = re.compile(r"^([a-z][a-z0-9_]*): ")
_REVIEWED = re.compile(r"^Reviewed-by:\s*(.+?)\s*$", re.MULTILINE)
#: Actions an agent-range undo leaves alone (undone already, or merges of others' work).
_NOT_UNDONE = frozenset({"revert", "redo", "recover", "sync", "resolve"})


@dataclass(slots=True)
class Step:
    commit: str
    actor: str
    date: str
    action: str | None

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "actor": self.actor, "date": self.date, "action": self.action}


@dataclass(slots=True)
class BlameLine:
    line: int
    text: str
    actor: str | None
    date: str | None
    commit: str | None
    action: str | None
    reviewer: str | None
    origin: str | None  # the file the line was first written in, when not this page (and visible)
    moved_by: Step | None  # the merge or move that brought the line here

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "actor": self.actor, "date": self.date,
                "commit": self.commit, "action": self.action, "reviewer": self.reviewer,
                "origin": self.origin, "moved_by": self.moved_by.to_json() if self.moved_by else None}


@dataclass(slots=True)
class _Raw:
    commit: str
    filename: str
    text: str


def _iso(seconds: str) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(int(seconds or 0), _dt.UTC).isoformat().replace("+00:00", "Z")


def _parse_porcelain(data: bytes, info: dict[str, dict[str, str]]) -> list[_Raw]:
    """Lines of ``git blame --porcelain``; commit headers (author, time, summary) into ``info``."""
    out: list[_Raw] = []
    commit = ""
    filenames: dict[str, str] = {}
    for raw in data.split(b"\n"):
        if raw.startswith(b"\t"):
            text = raw[1:].decode("utf-8", "replace")
            if not out:
                text = text.removeprefix("\ufeff")
            out.append(_Raw(commit, filenames.get(commit, ""), text))
            continue
        line = raw.decode("utf-8", "replace")
        key, _, value = line.partition(" ")
        if len(key) == 40 and all(c in "0123456789abcdef" for c in key):
            commit = key
            info.setdefault(commit, {})
        elif key == "author":
            info[commit]["author"] = value
        elif key == "author-time":
            info[commit]["time"] = value
        elif key == "summary":
            info[commit]["summary"] = value
        elif key == "filename":
            filenames[commit] = value  # porcelain names it once per commit (and file) group
    return out


def _blame_runs(wiki: Wiki, path: str) -> tuple[bytes, bytes]:
    """(copy-following blame, plain blame) of ``path`` at HEAD, run side by side."""
    g = git_of(wiki)
    deep = g.blame_porcelain(path, copy_score=COPY_SCORE)
    plain = g.blame_porcelain(path)
    outs = []
    for proc in (deep, plain):
        out, err = proc.communicate()
        if proc.returncode != 0:
            from curator.engine.repo.git import GitError

            raise GitError(f"git blame failed: {err.decode('utf-8', 'replace').strip()[:200]}")
        outs.append(out)
    return outs[0], outs[1]


def _reviewers(wiki: Wiki, commits: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sha, body in git_of(wiki).messages(commits).items():
        m = _REVIEWED.findall(body)
        if m:
            out[sha] = ", ".join(m)  # (review = 2: every person who approved)
    return out


def blame(wiki: Wiki, ref: str, viewer: Actor = OPERATOR) -> list[BlameLine]:
    """Who wrote each line of the page ``ref`` (see the module docstring)."""
    page = wiki.find(ref, viewer)  # hidden pages are "no such page"
    path = page.path
    g = git_of(wiki)
    current = (wiki.root / path).read_bytes()
    if g.head() is None or g.show("HEAD", path) is None:
        text = current.decode("utf-8", "replace").removeprefix("\ufeff")
        return [BlameLine(i, t, None, None, None, None, None, None, None)
                for i, t in enumerate(text.splitlines(), 1)]
    deep_out, plain_out = _blame_runs(wiki, path)
    info: dict[str, dict[str, str]] = {}
    deep = _parse_porcelain(deep_out, info)
    plain = _parse_porcelain(plain_out, info)
    # The working file may differ from HEAD: blame HEAD, then mark lines not in it as uncommitted.
    head_lines = [r.text for r in deep]
    now_lines = current.decode("utf-8", "replace").removeprefix("\ufeff").splitlines()
    mapping = _map_lines(head_lines, now_lines)
    commits = sorted({r.commit for r in deep} | {r.commit for r in plain} - {_UNCOMMITTED})
    reviewers = _reviewers(wiki, commits)
    created: str | None = None

    def step(sha: str) -> Step:
        meta = info.get(sha, {})
        m = _SUBJECT.match(meta.get("summary", ""))
        return Step(sha, meta.get("author", ""), _iso(meta.get("time", "0")), m.group(1) if m else None)

    out: list[BlameLine] = []
    for i, text in enumerate(now_lines, 1):
        j = mapping.get(i - 1)
        if j is None or j >= len(deep):
            out.append(BlameLine(i, text, None, None, None, None, None, None, None))
            continue
        d, p = deep[j], plain[j] if j < len(plain) else deep[j]
        first = step(d.commit)
        moved: Step | None = None
        origin = d.filename if d.filename and d.filename != path else None
        if p.commit != d.commit:
            moved = step(p.commit)
        elif origin is not None:
            if created is None:
                created = _created_in(wiki, path) or ""
            moved = step(created) if created and created != d.commit else None
        if origin is not None and not wiki.visible(viewer, origin):
            origin = None
        out.append(BlameLine(i, text, first.actor, first.date, d.commit, first.action,
                             reviewers.get(d.commit), origin, moved))
    return out


def _created_in(wiki: Wiki, path: str) -> str | None:
    """The commit that gave ``path`` its current name (its creation or the move to it)."""
    return git_of(wiki).added_in(path)


def _map_lines(head: list[str], now: list[str]) -> dict[int, int]:
    """Index in ``now`` -> index in ``head`` for the lines the working file shares with HEAD."""
    if head == now:
        return {i: i for i in range(len(now))}
    import difflib

    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, head, now, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapping[block.b + k] = block.a + k
    return mapping


# --- a line-wise three-way merge ---------------------------------------------------------------

_CONFLICT = b"\0conflict"


def merge_lines(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes | None:
    """Apply the change ``base -> theirs`` to ``ours`` line by line, or :data:`_CONFLICT`.

    Unlike ``git merge-file``, changes that only *touch* (a bullet appended right after the one
    being removed) do not conflict; changes to the same lines do. A file one side removed or
    created is a conflict unless the other side left it as it was.
    """
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    if base is None or ours is None or theirs is None:
        return _CONFLICT
    import difflib

    b, o, t = (x.splitlines(keepends=True) for x in (base, ours, theirs))

    def changes(new: list[bytes]) -> list[tuple[int, int, list[bytes]]]:
        m = difflib.SequenceMatcher(None, b, new, autojunk=False)
        return [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in m.get_opcodes() if tag != "equal"]

    mine, other = changes(o), changes(t)
    for a1, a2, arep in mine:
        for b1, b2, brep in other:
            if (a1, a2, arep) == (b1, b2, brep):
                continue
            if a1 == a2 and b1 == b2:
                clash = a1 == b1  # two insertions at the same place
            elif a1 == a2:
                clash = b1 < a1 < b2
            elif b1 == b2:
                clash = a1 < b1 < a2
            else:
                clash = a1 < b2 and b1 < a2
            if clash:
                return _CONFLICT
    todo = sorted(_union(mine, other), key=lambda c: (c[0], c[1] != c[0]))
    out: list[bytes] = []
    pos = 0
    for i1, i2, rep in todo:
        out += b[pos:i1]
        out += rep
        pos = max(pos, i2)
    out += b[pos:]
    return b"".join(out)


def _union(mine: list[tuple[int, int, list[bytes]]],
           other: list[tuple[int, int, list[bytes]]]) -> list[tuple[int, int, list[bytes]]]:
    out = list(mine)
    out += [c for c in other if c not in mine]
    return out


# --- agent activity ----------------------------------------------------------------------------

def _since_option(since: str | None) -> list[str]:
    cutoff = parse_since(since)
    return [f"--since={cutoff}"] if cutoff else []


def activity(wiki: Wiki, agent: str, viewer: Actor = OPERATOR, since: str | None = None,
             limit: int = 5000) -> list[HistoryEntry]:
    """``agent``'s commits since ``since`` (newest first); a non-operator viewer sees only the
    commits that touch nothing hidden from it (as in :func:`~curator.engine.write.actions.history`)."""
    who = agent_actor(agent)
    name = who.git_author[0]
    options = ["--fixed-strings", f"--author={name} <", *_since_option(since)]
    mine = [e for e in history(wiki, limit, viewer, options) if e.actor == name]
    if who.is_operator:
        # operators commit under their own git names: their commits are the ones with the trailer
        # (git ANDs --author with --grep, so the two are asked apart and joined)
        seen = {e.commit for e in mine}
        signed = ["--fixed-strings", f"--grep={ACTOR_TRAILER}: operator", *_since_option(since)]
        mine += [e for e in history(wiki, limit, viewer, signed) if e.commit not in seen]
        mine.sort(key=lambda e: e.time, reverse=True)
    return mine[:limit]


def undo_agent(wiki: Wiki, actor: Actor, agent: str, since: str) -> ActionResult:
    """Revert all of ``agent``'s action commits since ``since`` in one commit (module docstring)."""
    who = agent_actor(agent)
    if not since or not since.strip():
        raise UsageError("--since is required with --agent (a date such as 2026-01-31)")
    if not actor.is_operator and str(actor) != str(who):
        return ActionResult(Status.DENIED, f"{actor} may not undo the writes of {who}: an agent may undo "
                            "only its own", action="revert")
    cutoff = parse_since(since)
    mine = activity(wiki, str(who), OPERATOR, since)
    reverted: set[str] = set()
    for e in history(wiki, 100000, OPERATOR, _since_option(since)):
        reverted.update(e.reverts_all)
    todo = [e for e in mine if e.action is not None and e.action not in _NOT_UNDONE
            and e.commit not in reverted]
    if not todo:
        return ActionResult(Status.INVALID, f"nothing to undo: {who} made no change since {cutoff} that "
                            "is not undone yet", action="revert")
    g = git_of(wiki)

    def apply(ctx: ActionContext) -> None:
        state: dict[str, bytes | None] = {}
        for e in todo:  # newest first
            parent = g.parent(e.commit)
            for path in g.changed_paths(e.commit):
                cur = state[path] if path in state else ctx.read_bytes(path)
                before = g.show(parent, path) if parent else None
                after = g.show(e.commit, path)
                if cur == before:
                    continue
                merged = before if cur == after else merge_lines(after, cur, before)
                if merged is _CONFLICT:
                    raise Invalid(message=f"cannot undo {who} since {cutoff}: later changes to {path} "
                                  "touch the same lines; nothing was reverted")
                state[path] = merged
        for path, data in state.items():
            if data is None:
                if ctx.read_bytes(path) is not None:
                    ctx.delete(path, archive=False)
            else:
                ctx.write_bytes(path, data)
        ctx.status = Status.REVERTED
        ctx.message = f"reverted {len(todo)} commit(s) of {who} since {cutoff}"
        ctx.data["reverted"] = [e.commit for e in todo]
        ctx.journal["reverted"] = [e.commit for e in todo]

    body = "\n".join(f"This reverts commit {e.commit}." for e in todo)
    return run_action(wiki, actor, "revert", f"{who} since {cutoff}", apply, body=body)
