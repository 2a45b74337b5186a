"""Auto-filing pasted documents into ``auto/<type>/<slug>.md`` (docs/design.md §10).

``file_doc(wiki, text, title=..., actor=...)`` grades the text (:mod:`curator.engine.filing.grading`), then, behind
gates that all fail closed, files it as one action (:mod:`curator.engine.write.actions`: lock, atomic write, one
commit, journal):

1. scope: a ``.scope.toml`` that exists but does not parse stops the write, and
   ``[namespaces.auto]`` in ``operator_only`` or ``read_only`` mode disables auto-filing
   (``denied``); the action mechanism then checks the page path against the policy as usual;
2. the secret / prompt-injection scan over the text and over the rendered page (``blocked``);
3. the burst guard: the 5th distinct rewrite of one page within an hour is refused (``blocked``);
4. the daily quota: 20 distinct pages per agent per UTC day (``over_quota``).

Answers (``status``): ``filed`` (new page or changed content, one more revision line),
``unchanged`` (identical re-filing, no commit), ``review`` (grey band: held in
``_review/<type>/<slug>.md`` for an operator unless an arbiter command decides), ``not_knowledge``,
``denied``, ``over_quota``, ``blocked`` (and ``locked`` / ``invalid`` from the mechanism).

Quota and burst counters live in ``.curator/autofile.json`` (local state, updated under the
wiki's write lock).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import shlex
import subprocess
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.slugs import slugify
from curator.engine.filing.grading import (
    DOC_TYPES,
    FILE,
    NOT_KNOWLEDGE,
    REVIEW,
    REVIEW_THRESHOLD,
    Grade,
    grade,
    scan,
)
from curator.engine.policy.actor import Actor
from curator.engine.policy.scope import OPERATOR_ONLY, READ_ONLY
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionFailed, atomic_write, run_action

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

AUTO_DIR = "auto"
REVIEW_DIR = "_review"
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
DAILY_QUOTA = 20
BURST_WINDOW_S = 3600
#: Rewrites of one page allowed within the window; the next (the 5th) is refused.
BURST_REWRITES = 4
STATE_FILE = "autofile.json"
REVISION_HEADING = "## Revision log"
AUTO_AUTHOR = "auto-distill"
AUTO_TAG = "auto-distilled"
AUTO_TRUST = 0.3
AUTO_LAYER = "context"
AUTO_SOURCE_TYPE = "raw_dialogue"
ARBITER_TIMEOUT_S = 60

STATUSES = ("filed", "unchanged", "review", "not_knowledge", "denied", "over_quota", "blocked")


@dataclass(slots=True)
class FileDocResult:
    status: Status
    page: str | None
    score: int
    type: str
    message: str
    commit: str | None = None
    signals: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # as ActionResult: a plain string names its Status

    @property
    def is_error(self) -> bool:
        return self.status.is_error

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status.value, "page": self.page, "score": self.score, "type": self.type,
                "message": self.message, "commit": self.commit, "signals": dict(self.signals)}


def page_slug(title: str, doc_type: str, slug: str | None = None) -> str:
    """The page slug: ``slug`` or the slugified title when it matches ``^[a-z0-9][a-z0-9-]{0,63}$``,
    else ``<type>-<first 8 hex of sha256(NFKC, lowercased, letters/digits-only title)>``."""
    for candidate in (slug, slugify(title)):
        if candidate and SLUG_RE.match(candidate):
            return candidate
    folded = unicodedata.normalize("NFKC", title).lower()
    key = "".join(c for c in folded if c.isalnum())
    return f"{doc_type}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:8]}"


def content_hash(title: str, text: str) -> str:
    return hashlib.sha256(f"{title.strip()}\n{_clean(text)}".encode()).hexdigest()[:16]


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n")).strip()


def _body(title: str, text: str, revisions: list[str]) -> str:
    text = _clean(text)
    first, _, rest = text.partition("\n")
    if first.lstrip("#").strip() == title.strip():
        text = rest.strip("\n")  # the text's own title line becomes the page heading
    return f"# {title}\n\n{text}\n\n{REVISION_HEADING}\n\n" + "\n".join(revisions) + "\n"


def revisions_of(text: str) -> list[str]:
    """The ``- `` lines of the page's revision log (the last ``## Revision log`` section)."""
    at = text.rfind(f"\n{REVISION_HEADING}\n")
    if at < 0:
        return []
    lines = []
    for line in text[at + len(REVISION_HEADING) + 2:].split("\n"):
        if line.startswith("## "):
            break
        if line.startswith("- "):
            lines.append(line.rstrip())
    return lines


def _revision_line(day: str, kind: str, actor: Actor, source: str | None) -> str:
    src = " ".join((source or "unknown").split())
    return f"- {day} {kind} by {actor} (source: {src})"


# --- local state: quota and burst counters ----------------------------------------------------

def _load_state(wiki: Wiki) -> dict[str, Any]:
    try:
        data = json.loads((wiki.state_dir / STATE_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(wiki: Wiki, state: dict[str, Any]) -> None:
    atomic_write(wiki.state_dir / STATE_FILE, json.dumps(state, ensure_ascii=False, sort_keys=True).encode())


def _quota_pages(state: dict[str, Any], day: str, who: str) -> list[str]:
    quota = state.get("quota")
    if not isinstance(quota, dict) or quota.get("day") != day:
        return []
    pages = quota.get("filers", {}).get(who, [])
    return [p for p in pages if isinstance(p, str)] if isinstance(pages, list) else []


def _recent_rewrites(state: dict[str, Any], path: str, now: float) -> list[float]:
    times = state.get("rewrites", {}).get(path, [])
    if not isinstance(times, list):
        return []
    return [t for t in times if isinstance(t, (int, float)) and now - BURST_WINDOW_S < t <= now]


def _record(state: dict[str, Any], *, day: str, who: str, path: str, now: float, rewrite: bool) -> None:
    quota = state.get("quota")
    if not isinstance(quota, dict) or quota.get("day") != day:
        quota = state["quota"] = {"day": day, "filers": {}}
    filers = quota.setdefault("filers", {})
    pages = _quota_pages(state, day, who)
    if path not in pages:
        pages.append(path)
    filers[who] = pages
    rewrites = state.setdefault("rewrites", {})
    # keep only the window: the file stays small however long the wiki lives
    for key in list(rewrites):
        kept = _recent_rewrites(state, key, now)
        if kept:
            rewrites[key] = kept
        else:
            del rewrites[key]
    if rewrite:
        rewrites[path] = [*_recent_rewrites(state, path, now), now]


# --- gates --------------------------------------------------------------------------------

def scope_gate(wiki: Wiki) -> str | None:
    """Why the agent wiki's policy stops auto-filing (fail-closed), or None."""
    policy = wiki.scope
    policy.reload()
    if policy.error:
        return f"auto-filing is stopped: {policy.error} (fix .scope.toml; it fails closed here)"
    mode = policy.rule(AUTO_DIR).mode
    if mode in (OPERATOR_ONLY, READ_ONLY):
        return f"auto-filing is disabled: [namespaces.{AUTO_DIR}] is {mode} in .scope.toml"
    return None


def run_arbiter(command: str, text: str, title: str) -> str:
    """Ask the configured arbiter about a grey-band text: ``file``, ``not_knowledge`` or ``review``.

    The command gets the text on stdin and ``CURATOR_TITLE`` in its environment; exit 0 files it,
    exit 1 declines it; anything else (a crash, a timeout) leaves it for the operator.
    """
    try:
        proc = subprocess.run(shlex.split(command), input=text, text=True, capture_output=True,
                              timeout=ARBITER_TIMEOUT_S, env={**os.environ, "CURATOR_TITLE": title})
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return REVIEW
    return {0: FILE, 1: NOT_KNOWLEDGE}.get(proc.returncode, REVIEW)


# --- filing -------------------------------------------------------------------------------------

def file_doc(wiki: Wiki, text: str, *, title: str, actor: Actor, doc_type: str | None = None,
             source: str | None = None, slug: str | None = None, arbiter: str | None = None,
             now: _dt.datetime | None = None) -> FileDocResult:
    """Grade ``text`` and file it as ``actor`` (see the module docstring)."""
    title = " ".join(title.split())
    if doc_type is not None and doc_type not in DOC_TYPES:
        return FileDocResult(Status.INVALID, None, 0, doc_type, f"unknown type {doc_type!r}; use one of "
                             f"{', '.join(DOC_TYPES)}")
    g: Grade = grade(text, title)
    kind = doc_type or g.doc_type
    if not title:
        return FileDocResult(Status.INVALID, None, g.score, kind, "a title is required (--title)")

    def answer(status: Status, message: str, page: str | None = None, commit: str | None = None) -> FileDocResult:
        return FileDocResult(status, page, g.score, kind, message, commit, dict(g.signals))

    stop = scope_gate(wiki)
    if stop:
        return answer(Status.DENIED, stop)
    if g.decision == "blocked":
        return answer(Status.BLOCKED, f"not filed: the text contains {', '.join(str(h) for h in g.hits)}")
    decision = g.decision
    if decision == REVIEW and arbiter:
        decision = run_arbiter(arbiter, text, title)
    if decision == NOT_KNOWLEDGE:
        if g.decision == REVIEW:
            why = f"the arbiter declined it (score {g.score})"
        else:
            why = g.excluded or f"score {g.score} is below {REVIEW_THRESHOLD}; it does not read as a document"
        return answer(Status.NOT_KNOWLEDGE, f"not filed: {why}")
    folder = AUTO_DIR if decision == FILE else REVIEW_DIR
    key = page_slug(title, kind, slug)
    path = f"{folder}/{kind}/{key}.md"
    when = now or _dt.datetime.now(_dt.UTC)
    day = when.astimezone(_dt.UTC).date().isoformat()
    stamp = when.timestamp()
    digest = content_hash(title, text)
    who = str(actor)
    outcome: dict[str, Any] = {}

    def apply(ctx: ActionContext) -> None:
        existing, dec = ctx.read_text(path)
        if existing is not None and frontmatter.load(frontmatter.split(existing).raw or "")[0].get(
                "content_hash") == digest:
            ctx.status, ctx.message = Status.UNCHANGED, f"{path} already holds this text; nothing to do"
            return
        state = _load_state(wiki)
        if existing is not None and len(_recent_rewrites(state, path, stamp)) >= BURST_REWRITES:
            raise ActionFailed(Status.BLOCKED, f"not filed: {path} was already rewritten {BURST_REWRITES} times "
                               "within the last hour (burst guard); try again later")
        counted = _quota_pages(state, day, who)
        if path not in counted and len(counted) >= DAILY_QUOTA:
            raise ActionFailed(Status.OVER_QUOTA, f"not filed: {who} already filed {DAILY_QUOTA} pages today "
                               f"(UTC {day}); the quota resets at midnight UTC")
        new_text = _render(existing, title=title, kind=kind, text=text, actor=actor, source=source,
                           score=g.score, digest=digest, day=day, review=folder == REVIEW_DIR)
        hits = scan(new_text)
        if hits:
            raise ActionFailed(Status.BLOCKED, f"not filed: the page would contain {', '.join(map(str, hits))}")
        ctx.journal.update({"score": g.score, "type": kind})
        ctx.write_text(path, new_text, bom=bool(dec and dec.bom))
        _record(state, day=day, who=who, path=path, now=stamp, rewrite=existing is not None)
        _save_state(wiki, state)
        outcome["updated"] = existing is not None
        if folder == REVIEW_DIR:
            ctx.status = Status.REVIEW
            ctx.message = (f"held for review in {path} (score {g.score}, grey band 30-64); an operator "
                           "confirms or removes it")
        else:
            ctx.status = Status.FILED
            ctx.message = (f"{'updated' if existing is not None else 'filed'} {path} "
                           f"({kind}, score {g.score})")

    result = run_action(wiki, actor, "auto_file", path, apply)
    return answer(result.status, result.message, path if result.status in ("filed", "unchanged", "review")
                  else None, result.commit)


def _render(existing: str | None, *, title: str, kind: str, text: str, actor: Actor, source: str | None,
            score: int, digest: str, day: str, review: bool) -> str:
    revisions = revisions_of(existing) if existing is not None else []
    revisions.append(_revision_line(day, "update" if existing is not None else "first filing", actor, source))
    body = _body(title, text, revisions)
    changes: dict[str, Any] = {"title": title, "type": kind}
    if existing is None:
        changes.update({"author": AUTO_AUTHOR, "filed_by": str(actor)})
        if actor.department:
            changes["department"] = actor.department
        changes.update({"layer": AUTO_LAYER, "trust": AUTO_TRUST, "source_type": AUTO_SOURCE_TYPE,
                        "tags": [AUTO_TAG, kind]})
    if source:
        changes["source"] = " ".join(source.split())
    changes.update({"score": score, "content_hash": digest})
    if existing is None:
        changes["created"] = day
    changes["updated"] = day
    if review:
        changes["review"] = True
    if existing is None:
        return frontmatter.update(body, changes)
    # keep the frontmatter as it is (unknown keys, an operator's edits) and replace the body
    parts = frontmatter.split(existing)
    head = f"---\n{parts.raw}---\n" if parts.raw is not None and not parts.problem else ""
    nl = "\r\n" if "\r\n" in existing[:4096] else "\n"
    new = frontmatter.update(head + body, changes)
    return new.replace("\r\n", "\n").replace("\n", nl) if nl != "\n" else new
