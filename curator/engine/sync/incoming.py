"""What arrives by sync is checked before it is merged (docs/design.md §5, issue 45).

Another clone is another machine: a commit made there with plain git can relax ``.scope.toml``,
write into an operator-only or read-only namespace or another department's folder, rewrite a
decision file or ``.gitattributes``, delete pages, add a symbolic link, or claim to be the
operator. Before ``curator sync`` merges the remote's commits, each one is checked against this
clone's policy **as it is before the merge**:

* a commit signed by a key on the wiki's operator allow-list (``.curator-operators``, git's
  allowed-signers format, as this clone has it) may change anything;
* any other commit may change only what its author may write under the policy (an agent's
  appends through the door pass unsigned; the inbox's item files an agent's held write creates
  pass too), and never a protected file, a page's deletion, a symbolic link, nor claim the
  operator's name.

If any incoming commit breaks a rule the branch stays where it was: nothing of the remote is
merged and nothing is pushed. The held commits and why are kept in ``.curator/`` and shown by
``curator sync --held`` and the station's sync status; the operator accepts them (they are merged
as they are) or drops them (they are merged, and every path they changed is put back as it was
here, in one operator commit that the next push carries to the remote).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.engine.policy.actor import Actor
from curator.engine.policy.scope import is_inbox_path, is_protected

if TYPE_CHECKING:
    from curator.engine.repo.git import Git
    from curator.engine.wiki import Wiki

#: The allow-list of operators' signing keys (git's allowed-signers format), at the wiki root.
OPERATORS_FILE = ".curator-operators"
#: The OpenPGP public keys the allow-list's ``openpgp`` lines name (armored).
OPENPGP_KEYS_FILE = ".curator-operators.asc"
#: What is held, and what the operator accepted, under ``.curator/`` (local, never synced).
HELD_NAME = "sync-held.json"
ACCEPTED_NAME = "sync-accepted.json"
SYMLINK_MODE = "120000"
_INBOX_ITEMS = "_review/inbox/"


@dataclass(slots=True)
class IncomingCommit:
    """One commit of the remote that this clone does not have, and why it is held (if it is)."""

    sha: str
    author: str
    subject: str
    signer: str | None = None
    reasons: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def author_actor(name: str, claimed: Iterable[str] = ()) -> Actor | None:
    """Who a commit says wrote it: a ``Curator-Actor: operator`` trailer (``claimed``: the
    trailer's values) or the author name ``operator`` claim the operator (None: to be believed
    only with a signature; operators commit under their own names, so the name alone never
    proves or disproves it); else ``agent:<id>`` / ``capability:<id>`` as written, anyone else as an
    agent of no department (a person committing with plain git is not the operator)."""
    from curator.engine.errors import CuratorError
    from curator.engine.policy.actor import parse_actor

    if name == "operator" or any(value.lower() == "operator" for value in claimed):
        return None
    try:
        actor = parse_actor(name) if ":" in name else None
    except CuratorError:
        actor = None
    return actor if actor is not None and not actor.is_operator else Actor("agent", "unknown")


def check_incoming(wiki: Wiki, g: Git, ours: str, theirs: str, accepted: Iterable[str] = ()) -> list[IncomingCommit]:
    """Every commit in ``ours..theirs`` with the reasons it may not be merged unreviewed (an empty
    list of reasons: it may); ``accepted`` commits (the operator's decision) pass."""
    from curator.engine.write.actions import ACTOR_TRAILER

    commits = g.commits_between(ours, theirs, ACTOR_TRAILER)
    if not commits:
        return []
    signers = _signers(g, ours, f"{ours}..{theirs}")
    done = set(accepted)
    out = []
    for sha, parents, author, subject, claimed in commits:
        commit = IncomingCommit(sha, author, subject, signers.get(sha))
        changes = g.changes_of(sha, parents)
        commit.paths = [path for _status, _mode, path in changes]
        if sha in done or commit.signer is not None:
            out.append(commit)
            continue
        actor = author_actor(author, claimed)
        if actor is None:
            commit.reasons.append("claims to be the operator without an operator's signature")
            actor = Actor("agent", "unknown")
        for status, mode, path in changes:
            why = _why_not(wiki, actor, status, mode, path)
            if why is not None:
                commit.reasons.append(why)
        out.append(commit)
    return out


def _why_not(wiki: Wiki, actor: Actor, status: str, mode: str, path: str) -> str | None:
    if is_protected(path):
        return f"changes {path}, which only a signed operator commit may change"
    if mode == SYMLINK_MODE:
        return f"adds a symbolic link {path}"
    deleted = mode == "000000" or "D" in status
    if deleted and path.endswith(".md"):
        return f"deletes the page {path}"
    if is_inbox_path(path):
        # An agent's held write creates its item file (no agent writes one directly); deciding
        # an item (removing it, recording an approval in it, recording a rejection) is the operator's.
        created = status.startswith("A")
        return None if path.startswith(_INBOX_ITEMS) and created else f"decides the inbox record {path}"
    decision = wiki.check_write(actor, path)
    return None if decision.allowed else f"writes {path}: {decision.reason or 'the policy does not allow it'}"


def _signers(g: Git, ours: str, rng: str) -> dict[str, str]:
    """Commit -> the operator whose allow-listed key signed it, for the commits of ``rng`` with a
    good signature; the allow-list (``.curator-operators`` and its OpenPGP keys) is as ``ours``
    has it, never as the incoming commits would make it."""
    from curator.engine.repo.signing import OPENPGP, OpenPGPKeyring

    allowed = (g.show(ours, OPERATORS_FILE) or b"").decode("utf-8", "replace")
    ssh_lines, openpgp = [], {}
    for line in allowed.splitlines():
        words = line.split()
        if len(words) == 3 and words[1] == OPENPGP:
            openpgp[words[2].upper()] = words[0]
        elif words and not words[0].startswith("#"):
            ssh_lines.append(line)
    if not ssh_lines and not openpgp:
        return {}
    fd, name = tempfile.mkstemp(prefix="curator-operators-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in ssh_lines))
        if not openpgp:
            return g.good_signers(rng, Path(name) if ssh_lines else None)
        with OpenPGPKeyring() as ring:
            ring.add(g.show(ours, OPENPGP_KEYS_FILE) or b"")
            return g.good_signers(rng, Path(name) if ssh_lines else None, ring.home, openpgp)
    finally:
        os.unlink(name)


# --- what is held, what was accepted -------------------------------------------------------------

def read_held(wiki: Wiki) -> dict[str, Any] | None:
    try:
        data = json.loads((wiki.state_dir / HELD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_held(wiki: Wiki, remote: str, theirs: str, commits: list[IncomingCommit]) -> None:
    wiki.state_dir.mkdir(parents=True, exist_ok=True)
    held = [c.to_json() for c in commits if c.reasons]
    data = {"remote": remote, "theirs": theirs, "held": held,
            "paths": sorted({p for c in commits if c.reasons for p in c.paths})}
    (wiki.state_dir / HELD_NAME).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def clear_held(wiki: Wiki) -> None:
    (wiki.state_dir / HELD_NAME).unlink(missing_ok=True)


def accepted(wiki: Wiki) -> set[str]:
    try:
        data = json.loads((wiki.state_dir / ACCEPTED_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(s) for s in data} if isinstance(data, list) else set()


def accept(wiki: Wiki, shas: Iterable[str]) -> None:
    wiki.state_dir.mkdir(parents=True, exist_ok=True)
    known = accepted(wiki) | set(shas)
    (wiki.state_dir / ACCEPTED_NAME).write_text(json.dumps(sorted(known)) + "\n", encoding="utf-8")


DROPPED_NAME = "sync-dropped.json"


def drop(wiki: Wiki, theirs: str, paths: list[str]) -> None:
    """Record the operator's drop: merging ``theirs`` keeps ``paths`` as they are here."""
    wiki.state_dir.mkdir(parents=True, exist_ok=True)
    (wiki.state_dir / DROPPED_NAME).write_text(json.dumps({"theirs": theirs, "paths": paths}) + "\n",
                                               encoding="utf-8")


def dropped_paths(wiki: Wiki) -> list[str]:
    """The paths the operator's drop keeps out of the next merge (forgotten once it is made)."""
    try:
        data = json.loads((wiki.state_dir / DROPPED_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    paths = data.get("paths")
    return [str(p) for p in paths] if isinstance(paths, list) else []


def forget_drop(wiki: Wiki) -> None:
    (wiki.state_dir / DROPPED_NAME).unlink(missing_ok=True)
