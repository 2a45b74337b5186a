"""Per-agent bearer tokens for the agents' door over HTTP (docs/design.md §11).

``curator agents add ID`` makes a token, prints it once and keeps only its SHA-256 in
``agents.json`` in the wiki's local state folder (``wiki.state_dir``: never in git, never the token
itself). A request's token alone says which agent it is and in which department: the server looks
the hash up here on every HTTP request, so ``agents revoke ID`` takes effect on the next request
without a restart.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curator.engine.errors import CuratorError, UsageError
from curator.engine.policy.actor import Actor, parse_actor

TOKENS_FILE = "agents.json"


@dataclass(slots=True, frozen=True)
class AgentEntry:
    """One registered agent: its id, department and when its token was made."""

    id: str
    department: str | None
    created: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore:
    """The agents' token hashes in ``<state_dir>/agents.json``.

    :meth:`lookup` re-reads the file only when its (mtime, size, inode) changed, so checking every
    request costs one ``stat``.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / TOKENS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._agents: dict[str, dict[str, Any]] = {}

    # --- reading --------------------------------------------------------------------------
    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._agents = None, {}
            return self._agents
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self._stamp:
            try:
                data = json.loads(self.path.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                # Fail closed: an unreadable store lets nobody in rather than the wrong agent.
                raise CuratorError(f"the agents' token file {self.path.name} cannot be read: {exc}") from None
            agents = data.get("agents") if isinstance(data, dict) else None
            self._agents = {k: v for k, v in (agents or {}).items()
                            if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("sha256"), str)}
            self._stamp = stamp
        return self._agents

    def agents(self) -> list[AgentEntry]:
        with self._lock:
            agents = self._load()
        return [AgentEntry(k, v.get("department") or None, str(v.get("created", "")))
                for k, v in sorted(agents.items())]

    def lookup(self, token: str) -> Actor | None:
        """The agent ``token`` belongs to (with its department), or None for an unknown or revoked one."""
        if not token:
            return None
        digest = _digest(token)
        with self._lock:
            agents = self._load()
        found: Actor | None = None
        # Compare against every entry in constant time: how long a guess takes says nothing about
        # which hash it came close to.
        for ident, entry in agents.items():
            if hmac.compare_digest(digest, str(entry["sha256"])):
                found = parse_actor(f"agent:{ident}", entry.get("department") or None)
        return found

    # --- writing --------------------------------------------------------------------------
    def _save(self, agents: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".agents-", dir=self.path.parent)
        try:
            # Hashes only, but still nobody else's business: readable by the owner alone.
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"agents": agents}, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._stamp = None

    def add(self, agent: str, department: str | None = None) -> str:
        """Register ``agent`` and return its new token (shown once; only its hash is kept)."""
        actor = parse_actor(f"agent:{agent}", department)
        token = secrets.token_urlsafe(32)
        with self._lock:
            agents = dict(self._load())
            if actor.id in agents:
                raise UsageError(f"agent {actor.id!r} already has a token; revoke it first "
                                 f"(curator agents revoke {actor.id})")
            agents[actor.id] = {"sha256": _digest(token), "department": actor.department,
                                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
            self._save(agents)
        return token

    def revoke(self, agent: str) -> None:
        with self._lock:
            agents = dict(self._load())
            if agent not in agents:
                raise UsageError(f"no agent {agent!r} has a token (see curator agents list)")
            del agents[agent]
            self._save(agents)
