"""Injection records: exactly what every agent was shown (docs/design.md §14).

Every context built for an agent (MCP ``wiki_context``, ``curator context`` unless ``--no-record``)
appends one JSON line to ``.curator/injections.jsonl``::

    {"t", "agent", "department", "id", "source", "budget", "query", "commit", "bytes", "sha256",
     "pages": [{"path", "title", "layer", "blob", "bytes"}, ...]}

``commit`` is HEAD when the context was built; ``blob`` is the git blob id of the exact bytes each
included page was built from (written into the repository's object store, so a page edited on
disk but not committed is still kept); ``bytes`` its block's UTF-8 size in the text; ``sha256``
that of the whole text. :func:`rebuild` assembles the text again from the blobs alone,
byte-identical to what was returned (checked against ``sha256``); :func:`diff_today` compares it
with the context the same agent, budget and query get now.

API
---
``record(wiki, actor, result, *, query, source) -> dict``: append the record of ``result``.
``read_records(wiki, viewer, *, agent=None, since=None) -> list[InjectionRecord]``: the log,
    oldest first, each with its 1-based number ``n``; an agent viewer sees only its own records.
``get_record(wiki, viewer, n) -> InjectionRecord``: one record (:class:`NoSuchInjection` else; an
    agent asking for a record that is not its own, or that names a page it can no longer see,
    gets the same answer as for a record that does not exist).
``rebuild(wiki, rec) -> Rebuilt``: the text as sent (``exact`` says the digest matched).
``diff_today(wiki, rec) -> str``: unified diff of the text as sent against today's context.

Filtering 100,000 records by agent reads the file once and parses only the lines whose raw
bytes name the agent (the writer puts ``"agent"`` in a fixed form); dates compare as ISO strings.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator.engine.errors import CuratorError, UsageError
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.read.agent_context import ContextResult, assemble, build_context, render_source
from curator.engine.repo.git import Git, write_loose_object
from curator.engine.write.actions import git_of, now_iso

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

LOG_NAME = "injections.jsonl"
#: What an MCP client gets for an empty context (the text recorded is the text built).
EMPTY_ANSWER = "no identity or core pages fit the budget (or none are visible to you)"


class NoSuchInjection(CuratorError):
    """No injection record by that number (or not one the viewer may see)."""


@dataclass(slots=True)
class InjectionRecord:
    n: int  # 1-based position in the log
    data: dict[str, Any]

    @property
    def agent(self) -> str:
        return str(self.data.get("agent", ""))

    @property
    def pages(self) -> list[dict[str, Any]]:
        pages = self.data.get("pages")
        return [p for p in pages if isinstance(p, dict)] if isinstance(pages, list) else []

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, **self.data}


@dataclass(slots=True)
class Rebuilt:
    text: str
    exact: bool  # the rebuilt text's sha256 is the one recorded
    missing: list[str]  # pages whose blob is no longer in the repository


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def log_path(wiki: Wiki) -> os.PathLike[str]:
    return wiki.state_dir / LOG_NAME


def _agent_field(agent: str) -> bytes:
    return json.dumps({"agent": agent}, separators=(", ", ": "))[1:-1].encode("ascii")


def record(wiki: Wiki, actor: Actor, result: ContextResult, *, query: str | None,
           source: str) -> dict[str, Any]:
    """Append the record of ``result`` (built for ``actor``) to the log; return it."""
    git = git_of(wiki)
    keep = git.is_repo()
    pages = []
    for p in result.included:
        data = result.sources.get(p.path)
        blob = _blob(git, data, keep) if data is not None else None
        pages.append({"path": p.path, "title": p.title, "layer": p.layer, "blob": blob, "bytes": p.bytes})
    rec: dict[str, Any] = {
        "t": now_iso(), "agent": str(actor), "department": actor.department, "id": uuid.uuid4().hex[:12],
        "source": source, "budget": result.budget, "query": query, "commit": git.head(),
        "bytes": result.bytes, "sha256": _digest(result.text),
        "pages": pages,
    }
    # ASCII JSON: a title decoded from a non-UTF-8 file name (lone surrogates) round-trips exactly
    line = (json.dumps(rec, separators=(", ", ": ")) + "\n").encode("ascii")
    try:
        wiki.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(log_path(wiki), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)  # one write of one line: concurrent writers never interleave inside it
        finally:
            os.close(fd)
    except OSError as exc:  # recording never costs the agent its context
        log.warning("cannot record the injection in %s: %s", log_path(wiki), exc)
    return rec


def agent_actor(text: str) -> Actor:
    """``dudu`` or ``agent:dudu`` (or ``operator``, ``capability:x``) as an actor."""
    text = text.strip()
    return parse_actor(text if ":" in text or text == "operator" else f"agent:{text}")


def _blob(git: Git, data: bytes, keep: bool) -> str:
    """The git blob id of ``data``, written into the object store when there is one (a folder
    that is not a repository keeps only the id: such a record cannot be rebuilt)."""
    if keep:
        try:
            return write_loose_object(git.git_dir, b"blob", data)
        except OSError as exc:  # a read-only repository: the context is still answered
            log.warning("injection record: cannot keep a page's blob: %s", exc)
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def parse_since(text: str | None) -> str | None:
    """``--since`` as a UTC ISO string prefix-comparable with the records' ``t``."""
    if text is None or not text.strip():
        return None
    raw = text.strip()
    try:
        when = _dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"invalid date {text!r}: use YYYY-MM-DD or an ISO 8601 time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return when.astimezone(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _may_see(wiki: Wiki, viewer: Actor, rec: InjectionRecord) -> bool:
    if viewer.is_operator:
        return True
    if rec.agent != str(viewer):
        return False
    return all(wiki.visible(viewer, str(p.get("path", ""))) for p in rec.pages)


def read_records(wiki: Wiki, viewer: Actor, *, agent: str | None = None,
                 since: str | None = None) -> list[InjectionRecord]:
    """The log's records (oldest first) that ``viewer`` may see, by ``agent`` and ``since``."""
    if not viewer.is_operator:
        if agent is not None and agent != str(viewer):
            return []
        agent = str(viewer)
    if agent is not None:
        agent = str(agent_actor(agent))
    cutoff = parse_since(since)
    try:
        with open(log_path(wiki), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    needle = _agent_field(agent) if agent is not None else None
    out: list[InjectionRecord] = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line or (needle is not None and needle not in line):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a torn last line of a crashed writer
        if not isinstance(data, dict):
            continue
        if agent is not None and data.get("agent") != agent:
            continue
        if cutoff is not None and str(data.get("t", "")) < cutoff:
            continue
        rec = InjectionRecord(n, data)
        if _may_see(wiki, viewer, rec):
            out.append(rec)
    return out


def get_record(wiki: Wiki, viewer: Actor, n: int) -> InjectionRecord:
    try:
        with open(log_path(wiki), "rb") as f:
            for i, line in enumerate(f, 1):
                if i == n:
                    data = json.loads(line)
                    rec = InjectionRecord(n, data if isinstance(data, dict) else {})
                    if rec.data and _may_see(wiki, viewer, rec):
                        return rec
                    break
    except (FileNotFoundError, ValueError):
        pass
    raise NoSuchInjection(f"no injection record {n}")


def rebuild(wiki: Wiki, rec: InjectionRecord) -> Rebuilt:
    """The context text of ``rec`` rebuilt from its recorded blobs."""
    blobs = [str(p.get("blob") or "") for p in rec.pages]
    found = _read_blobs(wiki, [b for b in blobs if b])
    blocks: list[tuple[str, str]] = []
    missing: list[str] = []
    for page, blob in zip(rec.pages, blobs, strict=True):
        data = found.get(blob)
        if data is None:
            missing.append(str(page.get("path", "")))
            continue
        blocks.append((str(page.get("layer", "")), render_source(str(page.get("title", "")), data)))
    text = assemble(blocks)
    exact = _digest(text) == rec.data.get("sha256")
    return Rebuilt(text, exact and not missing, missing)


def _read_blobs(wiki: Wiki, shas: list[str]) -> dict[str, bytes]:
    """Blob contents by id in one ``git cat-file --batch``; absent ones are left out."""
    return git_of(wiki).blobs(shas)


def today(wiki: Wiki, rec: InjectionRecord) -> ContextResult:
    """The context the record's agent, budget and query get now."""
    actor = parse_actor(rec.agent or "operator", rec.data.get("department"))
    query = rec.data.get("query")
    return build_context(wiki, actor, budget=int(rec.data.get("budget") or 0),
                         query=str(query) if query else None)


def diff_today(wiki: Wiki, rec: InjectionRecord) -> str:
    """Unified diff from the text as sent to today's context (empty when unchanged)."""
    sent = rebuild(wiki, rec).text
    now = today(wiki, rec).text
    lines = difflib.unified_diff(sent.splitlines(keepends=True), now.splitlines(keepends=True),
                                 f"injection {rec.n} (as sent {rec.data.get('t', '')})", "today")
    return "".join(lines)
