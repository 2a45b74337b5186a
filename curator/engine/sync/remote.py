"""Many machines, one wiki: sync through a git remote (issue 11).

``sync(wiki, actor, remote=None)`` fetches, integrates and pushes, and answers with an
:class:`~curator.engine.write.actions.ActionResult` whose status is one of

``up_to_date``  nothing to fetch, nothing to push;
``pulled``      the remote was ahead: fast-forwarded to it;
``pushed``      this clone was ahead: its commits are on the remote now;
``merged``      both had moved: a merge commit (``sync: merge origin/main``) joins them, pushed;
``conflict``    both had moved and some pages cannot be merged: nothing changed locally, the
                conflicted pages are listed (``conflicts(wiki)``), ``resolve`` ends it;
``offline``     the remote could not be reached: local actions keep working, a later sync
                catches up (:class:`AutoSync` retries with exponential back-off).

Errors (``locked``, ``invalid``, ``error``) are the usual action errors: no remote configured, a
detached HEAD, uncommitted edits in the way of the update, another sync holding the clone.
``data`` holds ``remote``, ``branch``, ``ahead``, ``behind``, ``pushed``, ``conflicts`` and, when
pages changed, ``changed``; ``commit`` is the new local HEAD when it moved.

Integration: **merge, never rebase**. Nothing is ever rewritten, so published history stays as
it is, every commit (and the shas the journal and ``curator history`` refer to) survives, and a
sync that stops half-way leaves at worst an unreferenced commit object. The merge is computed
with ``git merge-tree --write-tree`` (no working-tree or index change, so it runs *outside* the
wiki's write lock while agents keep appending), using the page merge driver of
:mod:`curator.engine.sync.merge_driver` (``.gitattributes``: ``*.md merge=curator``; a wiki without that line gets it
from a fallback attributes file in ``.curator/``; the driver's command is passed on the command
line, so a fresh clone needs no set-up, and ``sync`` records it in the clone's config for plain
``git merge``). Only the step that moves the branch runs as the action ``sync`` under the write
lock: check that HEAD has not moved meanwhile (else merge again, in the lock), ``git merge
--ff-only`` to the merge commit (it refuses, changing nothing, when uncommitted edits are in the
way), journal the changed pages, refresh the page cache.
A conflict changes nothing locally: both sides stay whole in their commits, the list of conflicted
pages is kept in ``.curator/conflicts.json`` until resolved. Fetching and pushing run outside the
write lock too, under a per-clone sync lock (``.curator/sync.lock``) so two syncs of one clone
take turns. A push rejected because another clone pushed first is retried after a fresh fetch and
merge (up to :data:`PUSH_TRIES` times).

The operator's side (``trust`` changed differently on both sides): the side on which a commit
authored ``operator`` touched the page since the merge base; both or neither: the local side. See
:mod:`curator.engine.sync.merge_driver`.

Conflicts: ``conflicts(wiki)`` lists them (:class:`ConflictInfo`, with the command that resolves
each), ``conflict_sides(wiki, path)`` gives base / ours / theirs / merged-with-markers texts for a
side-by-side view, ``resolve(wiki, actor, paths, "ours"|"theirs"|"file", data=...)`` records a
choice per page as the action ``resolve``; when every conflicted page has one, that same action
makes **one** merge commit (``resolve: <pages>``) with the chosen versions and moves the branch
to it. The next sync pushes it.

Other API: ``sync_status(wiki, remote=None)`` (no network: ahead/behind against the last fetch,
last sync time and result, conflicts; :class:`SyncStatus`), ``setup(wiki, actor)``
(``curator sync --setup``: the ``.gitattributes`` line as an action commit, and the driver in
the repository config), :class:`AutoSync` (when to sync: after actions, on a timer, back-off
when offline; for the station and the MCP server).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from curator.engine.corpus.state import STATE_DIR, state_dir_for
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.repo.git import Git, GitError, last_line
from curator.engine.status import Status
from curator.engine.sync import incoming
from curator.engine.write import bootstrap
from curator.engine.write.actions import (
    ActionContext,
    ActionFailed,
    ActionResult,
    Invalid,
    atomic_write,
    commit_author,
    git_of,
    journal_of,
    now_iso,
    operator_key,
    run_action,
    with_actor_trailer,
)

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

RESULTS = ("up_to_date", "pulled", "pushed", "merged", "conflict", "held", "offline")
SYNC_LOCK_NAME = "sync.lock"
STATE_NAME = "sync.json"
CONFLICTS_NAME = "conflicts.json"
#: How long a sync waits for another sync of the same clone (fetches can be slow).
SYNC_LOCK_PATIENCE = 60.0
#: Fetch-merge-push rounds when another clone keeps pushing first.
PUSH_TRIES = 5
#: Network operations never hang a sync for ever (seconds).
NETWORK_TIMEOUT = 120.0
_REJECTED = re.compile(r"\[rejected\]|non-fast-forward|fetch first|failed to update ref|"
                       r"cannot lock ref|incorrect old value", re.IGNORECASE)
_NO_REF = re.compile(r"couldn't find remote ref", re.IGNORECASE)


# --- small git helpers ------------------------------------------------------------------------

def current_branch(g: Git) -> str | None:
    return g.branch()


def remote_name(g: Git, branch: str | None, remote: str | None = None) -> str:
    """The remote to sync with: the given one, the branch's upstream remote, else ``origin``."""
    if remote:
        return remote
    return (g.config_get(f"branch.{branch}.remote") if branch else None) or "origin"


def remote_url(g: Git, remote: str) -> str | None:
    return g.config_get(f"remote.{remote}.url")


def _ahead_behind(g: Git, ours: str | None, theirs: str | None) -> tuple[int, int]:
    if ours is None:
        return 0, g.count(theirs) if theirs else 0
    if theirs is None:
        return g.count(ours), 0
    return g.ahead_behind(ours, theirs)


# --- local state ---------------------------------------------------------------------------------

def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"), fsync=False)


def _clear(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _pending_conflict(wiki: Wiki) -> dict[str, Any] | None:
    """The recorded conflict, or None (a record whose other side is merged by now is dropped)."""
    path = wiki.state_dir / CONFLICTS_NAME
    state = _read_json(path)
    if state is None:
        return None
    g = git_of(wiki)
    head, theirs = g.head(), str(state.get("theirs") or "")
    if not theirs or g.resolve(theirs) is None or (head and g.is_ancestor(theirs, head)):
        _clear(path)
        return None
    return state


# --- the merge ----------------------------------------------------------------------------------

@dataclass(slots=True)
class _Plan:
    ours: str | None
    theirs: str
    kind: str  # none | ff | merge | conflict
    target: str | None = None  # the commit to fast-forward to
    tree: str | None = None  # merge-tree's result (with conflict markers when kind == conflict)
    conflicts: list[str] = field(default_factory=list)


def _fallback_attributes(g: Git) -> str:
    """A global-level attributes file naming the page driver, so a wiki whose ``.gitattributes``
    predates the driver (no ``curator sync --setup`` yet) still merges pages with it; a wiki's own
    ``.gitattributes`` takes precedence (``*.md merge=text`` opts out)."""
    # (the state folder decided once for every reader: a foreign .curator/ is not written either)
    path = state_dir_for(g.root) / "merge.attributes"
    text = "".join(line + "\n" for line in bootstrap.ATTRIBUTES_LINES).encode()
    try:
        current = path.read_bytes()
    except OSError:
        current = None
    if current != text:  # (absent, or written by an older Curator)
        atomic_write(path, text, fsync=False)
    return str(path)


def merge_tree(g: Git, ours: str, theirs: str) -> tuple[str, list[str]]:
    """``git merge-tree --write-tree`` with the page driver told which commits it merges."""
    return g.merge_tree(ours, theirs, [
        (f"merge.{bootstrap.DRIVER_NAME}.driver", bootstrap.driver_command(ours, theirs)),
        ("core.attributesFile", _fallback_attributes(g))])


def _plan(g: Git, ours: str | None, theirs: str, actor: Actor, label: str,
          keep_ours: Sequence[str] = ()) -> _Plan:
    """How to integrate ``theirs``; with ``keep_ours`` (held paths the operator dropped) a merge
    commit whose tree keeps those paths as ``ours`` has them, even where a fast-forward would do."""
    if ours == theirs or (ours and g.is_ancestor(theirs, ours)):
        return _Plan(ours, theirs, "none")
    if ours is None or (g.is_ancestor(ours, theirs) and not keep_ours):
        return _Plan(ours, theirs, "ff", theirs)
    if g.is_ancestor(ours, theirs):
        tree, conflicts = g.tree_of(theirs), list[str]()
    else:
        tree, conflicts = merge_tree(g, ours, theirs)
    if conflicts:
        return _Plan(ours, theirs, "conflict", tree=tree, conflicts=conflicts)
    note = ""
    if keep_ours:
        tree = g.tree_with(tree, {path: g.tree_entry(ours, path) for path in keep_ours})
        shown = ", ".join(keep_ours[:5]) + (f" and {len(keep_ours) - 5} more" if len(keep_ours) > 5 else "")
        note = f"\n\nHeld and dropped by the operator (kept as they were here): {shown}."
    commit = g.make_commit(tree, [ours, theirs], with_actor_trailer(
                           f"sync: merge {label}\n\nMerged {theirs[:12]} into {ours[:12]}; pages changed "
                           f"on both sides by Curator's page merge driver.{note}", actor),
                           commit_author(actor, g), sign=operator_key(actor))
    return _Plan(ours, theirs, "merge", commit, tree)


def _fast_forward(wiki: Wiki, ctx: ActionContext, g: Git, old: str | None, target: str) -> list[str]:
    """Move the branch, index and working tree to ``target`` (a descendant of HEAD); changed paths."""
    proc = g.fast_forward(target)
    if proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace")
        paths = [x.strip() for x in text.splitlines() if x.startswith("\t")]
        if paths:
            raise ActionFailed(Status.ERROR, "uncommitted edits are in the way of the update: "
                               f"{', '.join(paths[:5])}{' ...' if len(paths) > 5 else ''}; save them "
                               "through Curator (or commit or remove them), then sync again")
        raise ActionFailed(Status.ERROR, f"could not update the working tree: {last_line(proc.stderr)}")
    changed = g.names_in_tree(target) if old is None else g.diff_names(old, target)
    journal_of(wiki).append({"t": now_iso(), "id": uuid.uuid4().hex, "action": ctx.name, "target": ctx.target,
                             "actor": str(ctx.actor), "committed": True, "commit": target, "changed": changed})
    wiki.refresh_loaded(changed)
    return changed


def _integrate(wiki: Wiki, actor: Actor, g: Git, theirs: str, label: str, remote: str,
               branch: str, keep_ours: Sequence[str] = ()) -> ActionResult:
    plan = _plan(g, g.head(), theirs, actor, label, keep_ours)  # optimistic: outside the write lock

    def apply(ctx: ActionContext) -> None:
        nonlocal plan
        head = g.head()
        if plan.ours != head:  # an action committed meanwhile: merge again, now under the lock
            plan = _plan(g, head, theirs, actor, label, keep_ours)
        conflicts_file = wiki.state_dir / CONFLICTS_NAME
        ctx.data.update(kind=plan.kind, changed=[], conflicts=[])
        if plan.kind == "none":
            _pending_conflict(wiki)  # drops a record the merge made moot
            ctx.status = Status.UP_TO_DATE
            return
        if plan.kind == "conflict":
            old = _read_json(conflicts_file) or {}
            keep = old.get("resolutions") if old.get("theirs") == theirs else None
            _write_json(conflicts_file, {"t": now_iso(), "remote": remote, "branch": branch, "ours": head,
                                         "theirs": theirs, "paths": plan.conflicts,
                                         "resolutions": keep if isinstance(keep, dict) else {}})
            ctx.status = Status.CONFLICT
            ctx.data["conflicts"] = list(plan.conflicts)
            ctx.message = conflict_message(plan.conflicts)
            return
        assert plan.target is not None
        changed = _fast_forward(wiki, ctx, g, head, plan.target)
        _pending_conflict(wiki)
        ctx.data.update(changed=changed, commit=plan.target)
        ctx.status = Status.PULLED if plan.kind == "ff" else Status.MERGED

    result = run_action(wiki, actor, "sync", label, apply)
    if not result.is_error and result.data.get("commit"):
        result.commit = result.data.pop("commit")
        result.changed = list(result.data.get("changed", []))
    return result


# --- sync ---------------------------------------------------------------------------------------

def _tracked_local_state(g: Git, ours: str | None, theirs: str) -> list[str]:
    """Paths under ``.curator/`` that the commits to be merged (``ours..theirs``) track or touch."""
    rng = f"{ours}..{theirs}" if ours else theirs
    touched = g.names_touched(rng, [STATE_DIR])
    tracked = g.names_in_tree(theirs, [STATE_DIR])
    return list(dict.fromkeys([*tracked, *touched]))


def fetch(g: Git, remote: str, branch: str, tracking: str) -> tuple[str, str]:
    """("ok"|"empty"|"offline", message)."""
    proc = g.network("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
                     f"+refs/heads/{branch}:{tracking}", timeout=NETWORK_TIMEOUT)
    if proc.returncode == 0:
        return "ok", ""
    if _NO_REF.search(proc.stderr.decode("utf-8", "replace")):
        return "empty", ""  # the remote has no such branch yet: the first push creates it
    return "offline", last_line(proc.stderr)


def _push(g: Git, remote: str, branch: str, commit: str, tracking: str) -> tuple[str, str]:
    """("ok"|"rejected"|"offline", message)."""
    proc = g.network("push", "--quiet", "--no-verify", remote, f"{commit}:refs/heads/{branch}",
                     timeout=NETWORK_TIMEOUT)
    if proc.returncode == 0:
        g.update_ref(tracking, commit)
        return "ok", ""
    err = proc.stderr.decode("utf-8", "replace")
    if _REJECTED.search(err):
        return "rejected", last_line(proc.stderr)
    return "offline", last_line(proc.stderr)


def conflict_message(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"{len(paths)} page(s) changed on both sides cannot be merged: {shown}. Nothing changed "
            "here; see 'curator conflicts', then 'curator resolve PAGE --ours|--theirs|--file F'")


def sync(wiki: Wiki, actor: Actor = OPERATOR, remote: str | None = None) -> ActionResult:
    """Fetch, integrate (merge), push; see the module docstring for the answers."""
    g = git_of(wiki)
    if not g.is_repo():
        return ActionResult(Status.INVALID, f"{wiki.root} is not a git repository; run 'curator init'",
                            action="sync")
    branch = current_branch(g)
    if branch is None:
        return ActionResult(Status.INVALID, "HEAD is detached; check out a branch to sync", action="sync")
    name = remote_name(g, branch, remote)
    if remote_url(g, name) is None:
        return ActionResult(Status.INVALID, f"this wiki has no git remote '{name}'; add one with "
                            f"'git remote add {name} URL' (any git server or a bare repository)",
                            action="sync", target=name)
    if not bootstrap.config_ok(wiki.root):
        # A fresh clone: the repository config does not travel with it.
        with contextlib.suppress(Exception):
            bootstrap.install_config(wiki.root)
    wiki.state_dir.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(wiki.state_dir / SYNC_LOCK_NAME), timeout=SYNC_LOCK_PATIENCE):
            result = _sync_locked(wiki, actor, g, name, branch)
    except Timeout:
        result = ActionResult(Status.LOCKED, f"another sync of this wiki is still running after "
                              f"{SYNC_LOCK_PATIENCE:.0f} s", action="sync", target=name)
    except GitError as exc:
        result = ActionResult(Status.ERROR, f"sync failed: {exc}", action="sync", target=name)
    _record(wiki, result, name)
    return result


def _sync_locked(wiki: Wiki, actor: Actor, g: Git, remote: str, branch: str) -> ActionResult:
    tracking = f"refs/remotes/{remote}/{branch}"
    label = f"{remote}/{branch}"
    base = {"remote": remote, "branch": branch, "pushed": False, "conflicts": [], "changed": []}
    pulled = merged = False
    changed: list[str] = []
    message = ""
    for attempt in range(PUSH_TRIES):
        before = g.resolve(tracking)
        state, why = fetch(g, remote, branch, tracking)
        if state == "offline":
            return _offline(g, base, changed, tracking, f"{remote} is unreachable ({why}); local actions "
                            "keep working and the next sync catches up")
        theirs = g.resolve(tracking) if state == "ok" else None
        if theirs is not None and before is not None and not g.is_ancestor(before, theirs):
            # A force-push: commits this clone had seen there are gone. Never merged silently.
            g.update_ref(tracking, before)
            return ActionResult(
                Status.INVALID, f"refused to merge {label}: its history was rewritten ({before[:12]}, seen "
                "there before, is no longer part of it); nothing merged or pushed. Find out why, then "
                f"'git fetch {remote}' and merge by hand, or reset the remote branch", data={**base,
                "rewritten": before}, action="sync", target=label)
        head_now = g.head()
        if theirs is not None and head_now is not None:
            commits = incoming.check_incoming(wiki, g, head_now, theirs, incoming.accepted(wiki))
            held = [c for c in commits if c.reasons]
            if held:
                incoming.write_held(wiki, remote, theirs, commits)
                first = held[0]
                return ActionResult(
                    Status.HELD, f"held {len(held)} incoming commit(s) of {label} for an operator "
                    f"({first.sha[:12]} by {first.author} {first.reasons[0]}); nothing merged or pushed: "
                    "see 'curator sync --held', then --accept or --drop",
                    data={**base, "held": [c.to_json() for c in held]}, action="sync", target=label)
            incoming.clear_held(wiki)
        if theirs is not None:
            local_state = _tracked_local_state(g, g.head(), theirs)
            if local_state:
                return ActionResult(
                    Status.INVALID, f"refused to merge {label}: its commits track {local_state[0]}"
                    f"{f' (and {len(local_state) - 1} more)' if len(local_state) > 1 else ''} under "
                    f"{STATE_DIR}/, a clone's local state that is never taken from a remote; remove it "
                    f"there ('git rm -r --cached {STATE_DIR}' and commit) and sync again",
                    data={**base, "refused": local_state}, action="sync", target=label)
            res = _integrate(wiki, actor, g, theirs, label, remote, branch, incoming.dropped_paths(wiki))
            if res.status in ("merged", "pulled"):
                incoming.forget_drop(wiki)
            if res.is_error or res.status == "conflict":
                res.data.update({k: v for k, v in base.items() if k not in res.data})
                res.data.pop("kind", None)
                res.data["ahead"], res.data["behind"] = _ahead_behind(g, g.head(), theirs)
                return res
            pulled |= res.status == "pulled"
            merged |= res.status == "merged"
            changed += [p for p in res.data.get("changed", []) if p not in changed]
        head = g.head()
        if head is None or head == theirs:
            break
        state, why = _push(g, remote, branch, head, tracking)
        if state == "ok":
            base["pushed"] = True
            break
        if state == "offline":
            return _offline(g, base, changed, tracking, f"could not push to {remote} ({why}); local "
                            "actions keep working and the next sync catches up")
        message = f"the push was rejected ({why})"
        time.sleep(random.uniform(0.05, 0.3) * (attempt + 1))  # another clone pushed first: go again
    head = g.head()
    ahead, behind = _ahead_behind(g, head, g.resolve(tracking))
    if merged:
        status = Status.MERGED
    elif pulled:
        status = Status.PULLED
    elif base["pushed"]:
        status = Status.PUSHED
    else:
        status = Status.UP_TO_DATE
    if ahead and not base["pushed"] and message:
        text = f"{message} {PUSH_TRIES} times; {ahead} local commit(s) wait for the next sync"
    else:
        text = {"up_to_date": f"up to date with {remote}/{branch}",
                "pulled": f"pulled {len(changed)} changed file(s) from {remote}/{branch}",
                "pushed": f"pushed to {remote}/{branch}",
                "merged": f"merged with {remote}/{branch} ({len(changed)} file(s) changed here)"
                          + ("" if base["pushed"] else "; not pushed yet")}[status]
    data = {**base, "ahead": ahead, "behind": behind, "changed": changed}
    return ActionResult(status, text, head if (pulled or merged) else None, changed, data,
                        action="sync", target=f"{remote}/{branch}")


def held_changes(wiki: Wiki) -> dict[str, Any] | None:
    """What the last sync held for an operator (``curator sync --held``), or None."""
    return incoming.read_held(wiki)


def decide_held(wiki: Wiki, actor: Actor, keep: bool) -> ActionResult:
    """The operator's decision on the held incoming commits, then a sync: ``keep`` (accept) merges
    them as they are; else (drop) they are merged with every path they changed kept as it is
    here, and the next push carries that to the remote."""
    if not actor.is_operator:
        return ActionResult(Status.DENIED, "only the operator decides held incoming commits", action="sync")
    held = incoming.read_held(wiki)
    if held is None or not held.get("held"):
        return ActionResult(Status.INVALID, "nothing is held: the last sync merged everything it fetched",
                            action="sync")
    shas = [str(c.get("sha")) for c in held["held"]]
    incoming.accept(wiki, shas)
    if not keep:
        incoming.drop(wiki, str(held.get("theirs")), [str(p) for p in held.get("paths", [])])
    result = sync(wiki, actor, str(held.get("remote") or "") or None)
    what = "accepted" if keep else "dropped (their changes kept out)"
    result.message = f"{len(shas)} held commit(s) {what}; {result.message}"
    return result


def _offline(g: Git, base: dict[str, Any], changed: list[str], tracking: str, text: str) -> ActionResult:
    ahead, behind = _ahead_behind(g, g.head(), g.resolve(tracking))
    return ActionResult(Status.OFFLINE, text, None, list(changed),
                        {**base, "ahead": ahead, "behind": behind, "changed": list(changed)},
                        action="sync", target=base["remote"])


def _record(wiki: Wiki, result: ActionResult, remote: str) -> None:
    path = wiki.state_dir / STATE_NAME
    state = _read_json(path) or {}
    now = now_iso()
    state.update(last_attempt=now, status=result.status, message=result.message, remote=remote)
    if result.status in RESULTS and result.status != "offline":
        state["last_sync"] = now
    with contextlib.suppress(OSError):
        _write_json(path, state)


# --- status --------------------------------------------------------------------------------------

@dataclass(slots=True)
class SyncStatus:
    branch: str | None
    remote: str
    url: str | None
    ahead: int
    behind: int
    last_sync: str | None  # ISO time of the last sync that reached the remote
    last_attempt: str | None
    last_status: str | None
    last_message: str
    conflicts: list[str]

    @property
    def has_remote(self) -> bool:
        return self.url is not None

    @property
    def offline(self) -> bool:
        return self.last_status == "offline"

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "remote": self.remote, "url": self.url, "has_remote": self.has_remote,
                "ahead": self.ahead, "behind": self.behind, "last_sync": self.last_sync,
                "last_attempt": self.last_attempt, "last_status": self.last_status,
                "last_message": self.last_message, "offline": self.offline, "conflicts": list(self.conflicts)}

    def summary(self) -> str:
        """One short line for a status bar."""
        if not self.has_remote:
            return "no remote"
        if self.conflicts:
            return f"{len(self.conflicts)} conflict{'s' if len(self.conflicts) != 1 else ''}"
        parts = ["held for review"] if self.last_status == "held" else []
        if self.offline:
            parts.append("offline")
        if self.ahead or self.behind:
            parts.append(f"↑{self.ahead} ↓{self.behind}")
        elif not self.offline:
            parts.append("up to date")
        return ", ".join(parts)


def sync_status(wiki: Wiki, remote: str | None = None) -> SyncStatus:
    """Where this clone stands, without touching the network (ahead/behind the last fetch)."""
    g = git_of(wiki)
    branch = current_branch(g)
    name = remote_name(g, branch, remote)
    url = remote_url(g, name)
    ahead = behind = 0
    if branch is not None:
        theirs = g.resolve(f"refs/remotes/{name}/{branch}")
        head = g.head()
        if url is not None and (head or theirs):
            ahead, behind = _ahead_behind(g, head, theirs)
    state = _read_json(wiki.state_dir / STATE_NAME) or {}
    pending = _pending_conflict(wiki)
    return SyncStatus(branch, name, url, ahead, behind, state.get("last_sync"), state.get("last_attempt"),
                      state.get("status"), str(state.get("message") or ""),
                      list(pending.get("paths", [])) if pending else [])


# --- conflicts --------------------------------------------------------------------------------------

@dataclass(slots=True)
class ConflictInfo:
    path: str
    resolution: str | None  # ours | theirs | file, once chosen
    how: str  # the command that resolves it

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "resolution": self.resolution, "how": self.how}


def conflicts(wiki: Wiki) -> list[ConflictInfo]:
    """The pages the last sync could not merge (empty when there is no pending conflict)."""
    state = _pending_conflict(wiki)
    if state is None:
        return []
    chosen = state.get("resolutions") or {}
    out = []
    for path in state.get("paths", []):
        res = chosen.get(path)
        out.append(ConflictInfo(path, res.get("choice") if isinstance(res, dict) else None,
                                f"curator resolve {_quote(path)} --ours | --theirs | --file EDITED.md"))
    return out


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)


def conflict_sides(wiki: Wiki, path: str) -> dict[str, str | None]:
    """``base``, ``ours``, ``theirs`` and ``merged`` (with conflict markers) texts of a conflicted
    page, for a side-by-side view or for editing a resolution (None: absent on that side)."""
    state = _pending_conflict(wiki)
    if state is None or path not in state.get("paths", []):
        raise Invalid(message=f"{path} is not in conflict")
    g = git_of(wiki)
    head, theirs = g.head(), str(state["theirs"])
    base = (g.merge_base(head, theirs) or "") if head else ""
    tree, _ = merge_tree(g, head, theirs) if head else ("", [])

    def text(rev: str | None) -> str | None:
        data = g.show(rev, path) if rev else None
        return None if data is None else data.decode("utf-8", "replace")

    return {"base": text(base or None), "ours": text(head), "theirs": text(theirs), "merged": text(tree or None)}


def match_conflict(paths: Sequence[str], ref: str) -> str | None:
    """A conflicted path named by ``ref``: its path, the path without ``.md``, or its slug."""
    from curator.engine.corpus.slugs import slugify
    from curator.engine.write.append import page_slug

    ref = ref.replace("\\", "/").strip()
    for p in paths:
        if ref in (p, p[:-3] if p.endswith(".md") else p):
            return p
    s = slugify(ref)
    hits = [p for p in paths if page_slug(p) == s]
    return hits[0] if len(hits) == 1 else None


def resolve(wiki: Wiki, actor: Actor, refs: Sequence[str], choice: str, data: bytes | None = None) -> ActionResult:
    """Resolve conflicted pages with ``ours``, ``theirs`` or ``file`` (``data``); one action.

    The choice is recorded per page; when every conflicted page has one, this action makes the
    one merge commit ``resolve: <pages>`` and moves the branch to it.
    """
    if choice not in ("ours", "theirs", "file"):
        raise ValueError(f"bad choice {choice!r}")
    if choice == "file" and data is None:
        raise ValueError("choice 'file' needs the data")
    g = git_of(wiki)

    def apply(ctx: ActionContext) -> None:
        state = _pending_conflict(wiki)
        if state is None:
            raise Invalid(message="there is no conflict to resolve; 'curator sync' reports conflicts")
        paths: list[str] = [p for p in state.get("paths", []) if isinstance(p, str)]
        chosen: dict[str, Any] = dict(state.get("resolutions") or {})
        targets = []
        for ref in refs:
            hit = match_conflict(paths, ref)
            if hit is None:
                raise Invalid(message=f"{ref} is not in conflict; conflicted: {', '.join(paths)}")
            targets.append(hit)
        for path in targets:
            ctx.check_write(path)  # choosing a page's content is a write of that page
        for path in targets:
            entry: dict[str, Any] = {"choice": choice}
            if choice == "file":
                assert data is not None
                entry["blob"] = g.store_blob(data)
            chosen[path] = entry
        head, theirs = g.head(), str(state["theirs"])
        left = [p for p in paths if p not in chosen]
        if left or head is None:
            _write_json(wiki.state_dir / CONFLICTS_NAME, {**state, "resolutions": chosen})
            ctx.status = Status.RECORDED
            ctx.message = (f"recorded {choice} for {', '.join(targets)}; still to resolve: {', '.join(left)}")
            ctx.data.update(resolved=targets, left=left)
            return
        tree, now_conflicted = merge_tree(g, head, theirs)
        unresolved = [p for p in now_conflicted if p not in chosen]
        if unresolved:  # a later local action made new conflicts with the same remote commit
            _write_json(wiki.state_dir / CONFLICTS_NAME,
                        {**state, "paths": list(dict.fromkeys([*paths, *unresolved])), "resolutions": chosen})
            ctx.status = Status.RECORDED
            ctx.message = f"recorded; these pages now conflict too: {', '.join(unresolved)}"
            ctx.data.update(resolved=targets, left=unresolved)
            return
        entries: dict[str, tuple[str, str] | None] = {}
        kept: dict[str, list[str]] = {}
        base = g.merge_base(head, theirs)
        for path in paths:
            entry = chosen[path]
            if entry.get("choice") == "file":
                entries[path] = ((g.tree_entry(tree, path) or ("100644", ""))[0], str(entry["blob"]))
                continue
            side, other = (head, theirs) if entry.get("choice") == "ours" else (theirs, head)
            entry_at = entries[path] = g.tree_entry(side, path)
            facts, text = _with_other_sides_facts(g, base, side, other, path)
            if facts and entry_at is not None:
                blob = g.store_blob(text)
                entries[path] = (entry_at[0], blob)
                kept[path] = facts
        new_tree = g.tree_with(tree, entries)
        names = ", ".join(paths)
        commit = g.make_commit(new_tree, [head, theirs], with_actor_trailer(
                               f"resolve: {names}\n\nMerged {theirs[:12]} ({state.get('remote', 'remote')}/"
                               f"{state.get('branch', '')}) with the conflicts resolved: "
                               + "; ".join(f"{p}: {chosen[p].get('choice')}" for p in paths) + ".", ctx.actor),
                               commit_author(ctx.actor, g), sign=operator_key(ctx.actor))
        changed = _fast_forward(wiki, ctx, g, head, commit)
        _clear(wiki.state_dir / CONFLICTS_NAME)
        ctx.status = Status.RESOLVED
        ctx.message = f"resolved {names} in one merge commit; 'curator sync' publishes it"
        if kept:
            n = sum(len(v) for v in kept.values())
            ctx.message += (f"; kept {n} fact(s) only the other side had, so none is lost: "
                            + "; ".join(f[:60] for v in kept.values() for f in v[:3]))
        ctx.data.update(resolved=paths, left=[], commit=commit, changed=changed, kept_facts=kept)

    result = run_action(wiki, actor, "resolve", " ".join(refs), apply)
    if not result.is_error and result.data.get("commit"):
        result.commit = result.data.pop("commit")
        result.changed = list(result.data.get("changed", []))
    return result


def _with_other_sides_facts(g: Git, base: str | None, side: str, other: str, path: str) -> tuple[list[str], bytes]:
    """The page at ``side`` plus every fact (``- `` bullet) that ``other`` added since ``base`` and
    ``side`` does not state (fact dedup as in append): choosing a side of a conflict keeps the
    other side's facts. Returns (the facts added, the new bytes); no facts when nothing was missing."""
    from curator.engine.corpus.facts import find_duplicate, insert_bullet
    from curator.engine.corpus.page import decode

    chosen, theirs = g.show(side, path), g.show(other, path)
    if chosen is None or theirs is None:
        return [], b""
    dec_c, dec_o = decode(chosen), decode(theirs)
    if dec_c.invalid_utf8 or dec_o.invalid_utf8:
        return [], b""
    old = g.show(base, path) if base else None
    before = set(decode(old).text.splitlines()) if old is not None else set()
    text, added = dec_c.text, []
    for line in dec_o.text.splitlines():
        if line.startswith("- ") and line not in before and find_duplicate(text, line) is None:
            text = insert_bullet(text, line)
            added.append(line[2:])
    return added, (b"\xef\xbb\xbf" if dec_c.bom else b"") + text.encode("utf-8")


# --- setup -------------------------------------------------------------------------------------------

def setup(wiki: Wiki, actor: Actor = OPERATOR) -> ActionResult:
    """Install the page merge driver: ``.gitattributes`` (an action commit when it changes) and
    the repository config (this clone only, with this interpreter's absolute path)."""
    configured = bootstrap.install_config(wiki.root)

    def apply(ctx: ActionContext) -> None:
        text, _ = ctx.read_text(".gitattributes")
        new = bootstrap.attributes_with_driver(text or "")
        if new is not None:
            ctx.write_text(".gitattributes", new)
        ctx.status = Status.OK
        done = [x for x, did in (("added the .gitattributes line", new is not None),
                                 ("recorded the driver in the repository config", configured)) if did]
        ctx.message = ("merge driver installed: " + " and ".join(done)) if done else \
            "the merge driver was already installed"
        ctx.data["driver"] = bootstrap.driver_command()

    return run_action(wiki, actor, "sync_setup", "merge driver", apply)


# --- auto-sync ---------------------------------------------------------------------------------------

class AutoSync:
    """When to sync automatically: a plain-Python schedule for the station and the MCP server.

    * ``maybe_sync(now)`` runs the sync when it is due (first call: at once) and returns its
      result, else None. Or drive it yourself: ``due(now)``, ``started()``, ``record(result, now)``
      (the station does, running the sync in its writer queue).
    * ``after_action(now)`` brings the next sync forward to ``after_action_delay`` seconds from
      now (several actions in a row make one sync), except while backing off.
    * After a success the next sync is ``interval`` seconds later. After ``offline`` (or an error
      answer) it backs off exponentially: ``backoff`` s, then doubled each time, at most
      ``max_backoff`` s; the first success resets it.
    * ``start_thread(stop)``: a daemon thread calling ``maybe_sync`` every ``tick`` seconds until
      ``stop`` is set (the MCP server's timer).

    ``now`` is a :func:`time.monotonic` reading; the default is the current one.
    """

    def __init__(self, run: Callable[[], ActionResult] | None = None, *, interval: float = 60.0,
                 after_action_delay: float = 5.0, backoff: float = 15.0, max_backoff: float = 900.0,
                 enabled: bool = True) -> None:
        self.run = run
        self.interval = interval
        self.after_action_delay = after_action_delay
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.enabled = enabled
        self.failures = 0
        self.next_due = 0.0
        self.running = False
        self.last_result: ActionResult | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _now(now: float | None) -> float:
        return time.monotonic() if now is None else now

    def due(self, now: float | None = None) -> bool:
        return self.enabled and not self.running and self._now(now) >= self.next_due

    def after_action(self, now: float | None = None) -> None:
        if self.failures == 0:
            self.next_due = min(self.next_due, self._now(now) + self.after_action_delay)

    def started(self) -> None:
        self.running = True

    def record(self, result: ActionResult | None, now: float | None = None) -> float:
        """Note a sync's result; returns the delay until the next one."""
        self.running = False
        self.last_result = result
        if result is None or result.is_error or result.status == "offline":
            self.failures += 1
            delay: float = min(self.max_backoff, self.backoff * 2.0 ** (self.failures - 1))
        else:
            self.failures = 0
            delay = self.interval
        self.next_due = self._now(now) + delay
        return delay

    def maybe_sync(self, now: float | None = None) -> ActionResult | None:
        if self.run is None:
            raise RuntimeError("AutoSync.maybe_sync needs the run callable")
        with self._lock:
            if not self.due(now):
                return None
            self.started()
        result: ActionResult | None = None
        try:
            result = self.run()
        finally:
            self.record(result, now)  # a given clock stays the clock (tests); else the time now
        return result

    def start_thread(self, stop: threading.Event, tick: float = 1.0) -> threading.Thread:
        def loop() -> None:
            while not stop.wait(tick):
                with contextlib.suppress(Exception):  # a failed sync is retried with back-off
                    self.maybe_sync()

        thread = threading.Thread(target=loop, name="curator-autosync", daemon=True)
        thread.start()
        return thread
