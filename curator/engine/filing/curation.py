"""Curating auto-filed pages: list, confirm as curated, share to the shared wiki, remove (docs/design.md §10).

Each mutation is an action (:mod:`curator.engine.write.actions`): one commit per repository it touches. Confirm,
share and remove are the operator's decisions; other actors get ``denied``.

Share spans two repositories. The copy is committed in the shared wiki first (an action nested in
the source wiki's action), and only then is the original marked ``shared_to``; a crash between the
two commits leaves the copy and an unmarked original (a duplicate, never a loss), and sharing again
finds the identical copy, makes no second commit there and just marks the original.

``CURATOR_FAULT=<point>`` stops the process hard at a named point (``auto_share``: between the two
repositories' commits; ``auto_confirm`` / ``auto_remove``: after the files are written, before the
commit, so recovery rolls the action back). Tests use it to prove that nothing is lost; it is
never set in normal use.
"""

from __future__ import annotations

import datetime as _dt
import os
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.home import agent_of
from curator.engine.corpus.slugs import slugify
from curator.engine.errors import PageNotFound
from curator.engine.filing.autofile import AUTO_DIR, AUTO_TAG, REVIEW_DIR, revisions_of
from curator.engine.filing.grading import scan
from curator.engine.policy.actor import Actor
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionFailed, ActionResult, Invalid, run_action

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

CURATED_TAG = "curated"
CURATED_TRUST = 0.8
DEFAULT_SHARE_NAMESPACE = "sources"
FAULT_ENV = "CURATOR_FAULT"
FAULT_EXIT = 75


def _fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os._exit(FAULT_EXIT)


def _today() -> str:
    return _dt.datetime.now(_dt.UTC).date().isoformat()


def _meta(text: str) -> dict[str, Any]:
    parts = frontmatter.split(text)
    return frontmatter.load(parts.raw)[0] if parts.raw is not None and not parts.problem else {}


def _tags(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("tags")
    if isinstance(raw, str):
        raw = raw.split(",")
    return [str(t).strip() for t in raw if str(t).strip()] if isinstance(raw, list) else []


def is_auto_path(path: str) -> bool:
    return path.startswith((AUTO_DIR + "/", REVIEW_DIR + "/"))


@dataclass(slots=True)
class AutoEntry:
    path: str
    type: str
    title: str
    author: str | None
    filed_by: str | None
    trust: float
    score: int | None
    revisions: int
    shared: bool
    shared_to: str | None
    review: bool
    updated: str | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "type": self.type, "title": self.title, "author": self.author,
                "filed_by": self.filed_by, "trust": self.trust, "score": self.score,
                "revisions": self.revisions, "shared": self.shared, "shared_to": self.shared_to,
                "review": self.review, "updated": self.updated}


def list_auto(wiki: Wiki, actor: Actor | None = None) -> list[AutoEntry]:
    """Pages under ``auto/`` (then those held in ``_review/``) that ``actor`` may see."""
    from curator.engine.policy.actor import OPERATOR

    who = actor or OPERATOR
    out: list[AutoEntry] = []
    for page in wiki.visible_pages(who):
        if not is_auto_path(page.path):
            continue
        text = wiki.read_text(page.path)
        meta = page.meta
        parts = page.path.split("/")
        kind = str(meta.get("type") or (parts[1] if len(parts) > 2 else ""))
        score = meta.get("score")
        shared_to = meta.get("shared_to")
        out.append(AutoEntry(
            path=page.path, type=kind, title=page.title, author=page.author,
            filed_by=str(meta["filed_by"]) if meta.get("filed_by") else None, trust=page.trust,
            score=score if isinstance(score, int) and not isinstance(score, bool) else None,
            revisions=len(revisions_of(text)), shared=bool(shared_to),
            shared_to=str(shared_to) if shared_to else None, review=page.path.startswith(REVIEW_DIR + "/"),
            updated=page.updated))
    out.sort(key=lambda e: (e.review, e.path))
    return out


def _auto_page(wiki: Wiki, ref: str, actor: Actor, what: str, *, review_ok: bool = True) -> str | ActionResult:
    """The path of the auto-filed page ``ref``, or the error answer to give."""
    if not actor.is_operator:
        return ActionResult(Status.DENIED, f"only the operator may {what} auto-filed pages; {actor} may not",
                            action=f"auto_{what}")
    try:
        page = wiki.find(ref, actor)
    except PageNotFound as exc:
        return ActionResult(Status.INVALID, str(exc), action=f"auto_{what}")
    allowed = is_auto_path(page.path) if review_ok else page.path.startswith(AUTO_DIR + "/")
    if not allowed:
        where = "auto/ or _review/" if review_ok else "auto/"
        return ActionResult(Status.INVALID, f"{page.path} is not an auto-filed page (not under {where})",
                            action=f"auto_{what}")
    return page.path


# --- confirm ---------------------------------------------------------------------------------------

def confirm(wiki: Wiki, ref: str, *, actor: Actor, folder: str | None = None, layer: str | None = None,
            trust: float = CURATED_TRUST) -> ActionResult:
    """Confirm an auto-filed page as curated: move it out of ``auto/`` into ``folder`` (default
    ``wiki/`` when it exists, else the root) with trust 0.8, source_type ``user_statement``, author
    ``operator``, tag ``curated`` and without ``auto-distilled``. The answer's ``page`` is the new path."""
    path = _auto_page(wiki, ref, actor, "confirm")
    if isinstance(path, ActionResult):
        return path
    if not 0.0 <= trust <= 1.0:
        return ActionResult(Status.INVALID, f"trust must be within [0, 1], not {trust}", action="auto_confirm")
    if folder is None:
        folder = "wiki" if (wiki.root / "wiki").is_dir() else ""
    folder = folder.strip().strip("/")
    if folder.split("/")[0] in (AUTO_DIR, REVIEW_DIR):
        return ActionResult(Status.INVALID, f"confirming moves a page out of {AUTO_DIR}/; choose another folder",
                            action="auto_confirm")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    new_path = f"{folder}/{stem}.md" if folder else f"{stem}.md"

    def apply(ctx: ActionContext) -> None:
        text, dec = ctx.read_text(path)
        if text is None:
            raise Invalid(message=f"{path} does not exist")
        if ctx.read_bytes(new_path) is not None:
            raise Invalid(message=f"{new_path} already exists; choose another folder with --to")
        meta = _meta(text)
        tags = [t for t in _tags(meta) if t != AUTO_TAG]
        if CURATED_TAG not in tags:
            tags.append(CURATED_TAG)
        changes: dict[str, Any] = {"trust": trust, "source_type": "user_statement", "author": "operator",
                                   "tags": tags, "confirmed": _today(), "updated": _today()}
        if layer:
            changes["layer"] = layer
        new_text = frontmatter.update(text, changes, remove=("review",))
        ctx.write_text(new_path, new_text, bom=bool(dec and dec.bom))
        ctx.delete(path, archive=False)
        ctx.status = Status.CONFIRMED
        ctx.message = f"confirmed {path} as curated: {new_path}"
        ctx.data.update(page=new_path, source=path)
        _fault("auto_confirm")

    return run_action(wiki, actor, "auto_confirm", path, apply)


# --- remove -------------------------------------------------------------------------------------------

def remove(wiki: Wiki, ref: str, *, actor: Actor) -> ActionResult:
    """Move an auto-filed page to ``_archive/`` (nothing is deleted outright)."""
    path = _auto_page(wiki, ref, actor, "remove")
    if isinstance(path, ActionResult):
        return path

    def apply(ctx: ActionContext) -> None:
        kept = ctx.delete(path, archive=True)
        ctx.status = Status.REMOVED
        ctx.message = f"removed {path} (kept as {kept})"
        ctx.data.update(page=kept, source=path)
        _fault("auto_remove")

    return run_action(wiki, actor, "auto_remove", path, apply)


# --- share -----------------------------------------------------------------------------------------------

def _origin(wiki: Wiki, meta: dict[str, Any]) -> Actor:
    """The agent whose page this is: ``filed_by``, else the home's agent wiki name."""
    filed_by = str(meta.get("filed_by") or "")
    ident = filed_by.partition(":")[2] if filed_by.startswith("agent:") else ""
    ident = ident or agent_of(wiki.root) or "agent"
    dept = meta.get("department")
    return Actor("agent", ident, str(dept) if isinstance(dept, str) and dept else None)


def share_target(wiki: Wiki, path: str, meta: dict[str, Any], namespace: str | None = None) -> str:
    ns = (namespace or DEFAULT_SHARE_NAMESPACE).strip().strip("/")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    name = f"{slugify(_origin(wiki, meta).id) or 'agent'}--{stem}.md"
    return f"{ns}/{name}" if ns else name


def share(wiki: Wiki, shared: Wiki, ref: str, *, actor: Actor, namespace: str | None = None) -> ActionResult:
    """Copy an ``auto/`` page into the shared wiki (default ``sources/<agent>--<stem>.md``), then mark
    the original ``shared_to``. The shared wiki's scope policy and department rules are applied to
    the agent the page came from (its content may go only where that agent could write and read),
    and the copy must pass the secret scan."""
    path = _auto_page(wiki, ref, actor, "share", review_ok=False)
    if isinstance(path, ActionResult):
        return path
    if shared.root == wiki.root:
        return ActionResult(Status.INVALID, "the shared wiki is this wiki; name another with --shared",
                            action="auto_share")
    text = wiki.read_text(path)
    meta = _meta(text)
    try:
        target = share_target(wiki, path, meta, namespace)
    except ValueError as exc:
        return ActionResult(Status.INVALID, str(exc), action="auto_share")
    origin = _origin(wiki, meta)
    copy = frontmatter.update(text, {"shared_from": f"{origin}:{path}"}, remove=("shared_to", "shared_at"))
    hits = scan(copy)
    if hits:
        return ActionResult(Status.BLOCKED, f"not shared: {path} contains {', '.join(map(str, hits))}",
                            action="auto_share")
    decision = shared.check_write(origin, target)
    if not decision.allowed:
        return ActionResult(Status.DENIED, f"not shared: the shared wiki's policy does not let {origin} put its "
                            f"page at {target}: {decision.reason}", action="auto_share")

    def apply_shared(ctx: ActionContext) -> None:
        existing, _ = ctx.read_text(target)
        ctx.data["page"] = target
        if existing == copy:
            ctx.status, ctx.message = Status.UNCHANGED, f"{target} already holds this copy"
            return
        if existing is not None and _meta(existing).get("shared_from") != f"{origin}:{path}":
            raise Invalid(message=f"{target} already exists in the shared wiki and is another page; "
                          "choose another --namespace")
        ctx.write_text(target, copy)
        ctx.status, ctx.message = Status.SHARED, f"copied to {target}"

    def apply_source(ctx: ActionContext) -> None:
        copied = run_action(shared, actor, "auto_share", target, apply_shared)
        if copied.is_error:
            raise ActionFailed(copied.status, f"not shared: {copied.message}")
        _fault("auto_share")  # between the two repositories' commits
        ctx.data.update(page=target, shared_commit=copied.commit, source=path)
        current, dec = ctx.read_text(path)
        if current is None:
            raise Invalid(message=f"{path} disappeared while sharing; the copy is at {target}")
        if _meta(current).get("shared_to") != target:
            ctx.write_text(path, frontmatter.update(current, {"shared_to": target, "shared_at": _today()}),
                           bom=bool(dec and dec.bom))
        ctx.status = Status.SHARED
        ctx.message = f"shared {path} to the shared wiki as {target}"

    return run_action(wiki, actor, "auto_share", path, apply_source)
