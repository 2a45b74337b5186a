"""Writes the review policy holds: the inbox's item files, rejected facts, and the append door's
hold (docs/design.md §13).

The append door calls :func:`hold` inside its action, after the scope check and fact dedup: a
held write becomes an item file ``_review/inbox/<id>.json``, a fact rejected before is answered
``rejected``, and nothing touches the page. The files and their keys are defined here, below the
door; listing and deciding the items (approve, reject) is the review queue's
(:mod:`curator.engine.review.inbox`), which hands the door an :class:`Approval` to check and close.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from curator.engine.corpus.facts import clean_bullet, fact_words
from curator.engine.errors import CuratorError
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.policy.scope import INBOX_FOLDERS
from curator.engine.status import Status

# The action machinery is imported where it is used: `curator inbox list` needs none of it, and a
# fresh process pays ~100 ms to import it.
if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionContext

INBOX_DIR, REJECTED_DIR = INBOX_FOLDERS
ID_LENGTH = 12


def now() -> str:
    """The time an item or a rejection is recorded with (the actions' clock)."""
    from curator.engine.write.actions import now_iso

    return now_iso()


class Approval(Protocol):
    """An operator's approval of a held item, carried by the append it releases: checked inside
    the append's action (still pending, not decided elsewhere) and closed in the same commit."""

    item_id: str
    reviewers: list[str]

    def check(self, ctx: ActionContext) -> None: ...

    def close(self, ctx: ActionContext) -> None: ...


# --- keys -----------------------------------------------------------------------------------

def fact_key(content: str) -> str:
    """The fact as fact dedup compares it: links and stamp removed, its words as a reader sees them
    (look-alike letters folded, invisible characters gone), lowercase, one space."""
    return " ".join(fact_words(clean_bullet(content)))


def item_id(slug: str, content: str) -> str:
    return hashlib.sha256(f"{slug}\0{fact_key(content)}".encode()).hexdigest()[:ID_LENGTH]


def rejection_key(content: str) -> str:
    return hashlib.sha256(fact_key(content).encode()).hexdigest()[:32]


def item_path(iid: str) -> str:
    return f"{INBOX_DIR}/{iid}.json"


def rejection_path(content: str) -> str:
    return f"{REJECTED_DIR}/{rejection_key(content)}.json"


# --- items ------------------------------------------------------------------------------------

@dataclass(slots=True)
class InboxItem:
    id: str
    actor: str
    department: str | None
    time: str
    slug: str
    target: str
    content: str
    links: list[str] = field(default_factory=list)
    create: bool = False
    create_new: bool = False
    reason: str = ""
    #: The approvals recorded so far when the policy asks for more than one (``review = 2``):
    #: ``{"by": "<Name <email>>", "time": ...}``, one per different operator, oldest first.
    approvals: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.approvals:
            del data["approvals"]  # (an item no one approved yet is stored as before)
        return data

    @property
    def approvers(self) -> list[str]:
        return [a["by"] for a in self.approvals]

    @property
    def agent(self) -> Actor:
        return parse_actor(self.actor, self.department)

    @classmethod
    def from_json(cls, data: Any) -> InboxItem:
        if not isinstance(data, dict):
            raise ValueError("not an object")
        links = data.get("links") or []
        return cls(id=str(data["id"]), actor=str(data["actor"]),
                   department=str(data["department"]) if data.get("department") else None,
                   time=str(data.get("time") or ""), slug=str(data["slug"]), target=str(data["target"]),
                   content=str(data["content"]), links=[str(x) for x in links if isinstance(x, str)],
                   create=bool(data.get("create")), create_new=bool(data.get("create_new")),
                   reason=str(data.get("reason") or ""),
                   approvals=[{"by": str(a["by"]), "time": str(a.get("time") or "")}
                              for a in data.get("approvals") or [] if isinstance(a, dict) and a.get("by")])


def encode_record(data: dict[str, Any]) -> bytes:
    """An item or rejection record as it is stored (sorted, indented UTF-8 JSON)."""
    return (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def load_record(wiki: Wiki, rel: str) -> dict[str, Any] | None:
    """The record at ``rel`` (None when absent); a damaged one is a :class:`CuratorError`."""
    try:
        data = json.loads((wiki.root / rel).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CuratorError(f"{rel} is damaged ({exc}); fix it or restore it with git") from None
    return data if isinstance(data, dict) else None


def rejection_of(wiki: Wiki, content: str) -> dict[str, Any] | None:
    """The rejection record of this fact (any agent, any page), or None."""
    try:
        return load_record(wiki, rejection_path(content))
    except CuratorError:
        return None


# --- the hold (called by the append door) ---------------------------------------------------

def _layer_of(text: str) -> str:
    """The layer a page's text declares (as the page cache would parse it)."""
    from curator.engine.corpus import frontmatter
    from curator.engine.corpus.page import parse_layer

    split = frontmatter.split(text)
    meta, _problem = frontmatter.load(split.raw) if split.raw is not None and not split.problem else ({}, None)
    return parse_layer(meta.get("layer") if isinstance(meta, dict) else None)[0]


def hold(ctx: ActionContext, *, slug: str, fact: str, links: Sequence[str], create_new: bool,
         page: str, text: str | None) -> bool:
    """The append door's review step: True when it answered (``rejected`` or ``pending``) and
    the page must not be written. Runs inside the append action, after the scope check."""
    actor = ctx.actor
    if not actor.is_agent:
        return False  # only agents are held: the operator (who may restate a rejected fact) and
        # capabilities (jobs mirroring a source) are not
    wiki = ctx.wiki
    rejected = rejection_of(wiki, fact)
    if rejected is not None:
        reason = str(rejected.get("reason") or "")
        by = str(rejected.get("by") or "the operator")
        ctx.status = Status.REJECTED
        ctx.data.update(reason=reason, page=page)
        ctx.message = (f"not queued: {by} rejected this fact before (\"{reason}\"); do not submit it "
                       "again")
        return True
    policy = wiki.policy
    review_reason = getattr(policy, "review_reason", None)
    if review_reason is None:
        return False
    policy.reload()  # type: ignore[attr-defined]  # a ScopePolicy: hot reload before deciding
    # The page's layer matters only when a [review] layers rule exists (else: no YAML parse).
    layer = _layer_of(text) if text is not None and policy.review.layers else None  # type: ignore[attr-defined]
    creates = text is None
    why = review_reason(actor, page, creates=creates, layer=layer)
    if why is None:
        return False
    iid = item_id(slug, fact)
    ctx.data.update(id=iid, page=page, created=False, reason=why)
    ctx.status = Status.PENDING
    existing = ctx.read_bytes(item_path(iid))
    if existing is not None:
        ctx.message = (f"already queued for review as inbox item {iid} ({page}); an operator decides "
                       "it: do not submit it again")
        return True
    item = InboxItem(iid, str(actor), actor.department, now(), slug, page, fact, list(links),
                     creates, bool(create_new), why)
    ctx.name = "inbox_hold"  # the commit says what happened: held, not appended
    ctx.journal.update(inbox=iid, page=page)
    ctx.write_record(item_path(iid), encode_record(item.to_json()))
    ctx.message = (f"queued for review as inbox item {iid} ({page}): {why}. An operator approves or "
                   "rejects it; do not submit it again")
    return True
