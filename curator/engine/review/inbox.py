"""The review inbox: agent writes held for an operator (docs/design.md §13).

The scope policy's ``[review]`` rules (:meth:`~curator.engine.policy.scope.ScopePolicy.review_reason`)
decide which agent appends are *held*. The append door (:mod:`curator.engine.write.append`) calls
:func:`~curator.engine.write.held.hold` after the scope check and fact dedup, before it writes: a
held write becomes an item file (:mod:`curator.engine.write.held` owns the files and their keys),
a rejected fact an answer, and nothing touches the page. This module lists the items and decides
them.

On disk (tracked and committed, so items travel with the wiki through ``curator sync``; not pages:
the walker only reads ``*.md``, so the auto-filing lists never see them):

``_review/inbox/<id>.json``
    one pending item: ``id``, ``actor``, ``department``, ``time``, ``slug``, ``target`` (the page
    the fact goes to), ``content`` (exactly as submitted), ``links``, ``create`` (the write creates
    the page), ``create_new`` (the flag the agent passed) and ``reason`` (the rule that held it).
    The id is the first 12 hex digits of sha256 of the slug and the fact normalised as fact dedup
    normalises it, so the same fact submitted again while pending gets the same id.
``_review/rejected/<key>.json``
    one rejected fact (``key`` = sha256 of the normalised fact): ``reason``, ``by``, ``time``,
    ``content``, ``item``, ``actor``, ``target``. The same fact from any agent is then answered
    ``rejected`` with that reason and nothing is queued.

Decisions, each one action and one commit, operator only:

* :func:`approve` runs the append door as the agent that wrote the fact (the commit's author),
  with the approved text (optionally edited), fact dedup re-checked against the page as it is
  now; the item is removed in the same commit, whose message carries ``Inbox-item: <id>`` and
  ``Reviewed-by: <Name <email>>`` trailers (the operator's git identity,
  :func:`~curator.engine.write.actions.operator_person`). Where the policy asks for more than one
  approval (``review = 2``), each earlier approval is recorded in the item file (``approvals``,
  action ``inbox_approval: <id>``, the operator's commit) and the item stays pending; the same
  person approving again does not count; the last approval applies the fact with one
  ``Reviewed-by:`` trailer per approver.
* :func:`reject` records the reason and removes the item (action ``inbox_reject: <id>``).

An item already decided (here, or on another clone and synced or fetched) is refused with
"already approved by <who> at <time> in <commit>". Before deciding, a clone with a remote fetches it once
(:func:`fetch_decisions`; offline is fine), so two operators on two clones do not decide one item
twice; should both decide before either syncs, the sync merge joins the identical changes. The
same fact held (or rejected) on two clones before they synced is one record after the sync: the
page merge driver keeps the first (:func:`~curator.engine.sync.merge_driver.merge_record`).

Reading: :func:`list_items`, :func:`get_item`, :func:`item_view` (the page with the fact in place
as a unified diff, and the three facts anywhere in the wiki closest in meaning, from the fact
index when one is at hand; else :func:`similar_facts`, by shared words through the warm full-text
index).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator.engine.errors import CuratorError
from curator.engine.policy.actor import Actor
from curator.engine.status import Status
from curator.engine.write.held import (
    ID_LENGTH,
    INBOX_DIR,
    InboxItem,
    encode_record,
    fact_key,
    item_path,
    load_record,
    now,
    rejection_path,
)

# The action machinery, git and YAML are imported where they are used: `curator inbox list`
# needs none of them, and a fresh process pays ~100 ms to import them.
if TYPE_CHECKING:
    from pathlib import Path

    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionContext, ActionResult

SIMILAR_LIMIT = 3
#: Pages the full-text index proposes per similar-fact lookup (their bullets are then compared).
SIMILAR_PAGES = 12
_ID = re.compile(r"^[0-9a-f]{4,64}$")
_WORDS = re.compile(r"[^\W_]+")
_STOP = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in",
                   "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were",
                   "will", "with"})


def _invalid(message: str) -> CuratorError:
    from curator.engine.write.actions import Invalid

    return Invalid(message=message)


def _result(status: Status, message: str, **kwargs: Any) -> ActionResult:
    from curator.engine.write.actions import ActionResult

    return ActionResult(status, message, **kwargs)


# --- listing and reading ------------------------------------------------------------------------

def list_items(wiki: Wiki, actor: Actor | None = None, damaged: list[str] | None = None) -> list[InboxItem]:
    """Pending items, oldest first; an agent sees only items whose target page it may see."""
    items = read_items(wiki.root, damaged)
    if actor is not None and not actor.is_operator:
        items = [i for i in items if wiki.visible(actor, i.target)]
    return items


def read_items(root: Path, damaged: list[str] | None = None) -> list[InboxItem]:
    """Every pending item of the wiki at ``root``, oldest first (the operator's view; one folder
    listing and one small file per item, nothing else: no page cache, no git). Item files that
    do not parse are skipped and, with ``damaged``, their paths appended to it."""
    folder = root / INBOX_DIR
    try:
        names = [e.name for e in os.scandir(folder) if e.name.endswith(".json") and e.is_file()]
    except OSError:
        return []
    out: list[InboxItem] = []
    for name in names:
        try:
            with open(folder / name, "rb") as f:
                item = InboxItem.from_json(json.loads(f.read()))
        except (OSError, ValueError, KeyError, TypeError):
            if damaged is not None:  # reported by the caller, never breaks the list
                damaged.append(f"{INBOX_DIR}/{name}")
            continue
        out.append(item)
    out.sort(key=lambda i: (i.time, i.id))
    return out


def pending_count(wiki: Wiki) -> int:
    """How many items are pending (a folder listing: cheap enough for a badge every few seconds)."""
    try:
        return sum(1 for e in os.scandir(wiki.root / INBOX_DIR) if e.name.endswith(".json"))
    except OSError:
        return 0


def _item_ref(ref: str) -> str:
    iid = ref.strip().lower().removeprefix(INBOX_DIR + "/").removesuffix(".json")
    if not _ID.match(iid):
        raise _invalid(f"invalid inbox id {ref!r}: ids are hexadecimal (see 'curator inbox list')")
    return iid


def get_item(wiki: Wiki, ref: str, actor: Actor | None = None) -> InboxItem:
    """The pending item ``ref`` (its id, or a unique prefix of it); :class:`Invalid` when
    there is none (with who decided it, when it was decided)."""
    iid = _item_ref(ref)
    rel = item_path(iid)
    if not (wiki.root / rel).exists() and len(iid) < ID_LENGTH:
        matches = [i.id for i in list_items(wiki, actor) if i.id.startswith(iid)]
        if len(matches) == 1:
            iid, rel = matches[0], item_path(matches[0])
        elif matches:
            raise _invalid(f"inbox id {ref!r} is ambiguous: {', '.join(matches[:5])}")
    data = load_record(wiki, rel)
    if data is None:
        raise _invalid(not_pending_message(wiki, iid))
    try:
        item = InboxItem.from_json(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise _invalid(f"{rel} is damaged ({exc}); fix it or restore it with git") from None
    if actor is not None and not wiki.visible(actor, item.target):
        raise _invalid(f"no pending inbox item {iid}")
    return item


@dataclass(slots=True)
class Decided:
    commit: str
    decision: str  # approved | rejected | removed
    by: str
    where: str  # "" (this clone) or the remote-tracking ref it was found on
    time: str = ""  # the deciding commit's author date, ISO 8601

    def describe(self) -> str:
        """``approved by Ann <ann@example.org> at 2026-05-01 10:00 in 1a2b3c4d5e6f``."""
        when = f" at {self.time[:16].replace('T', ' ')}" if self.time else ""
        return f"{self.decision} by {self.by}{when} in {self.commit[:12]}"

    def to_json(self) -> dict[str, str]:
        return {"decision": self.decision, "by": self.by, "time": self.time, "commit": self.commit,
                "where": self.where}


_TRAILER = re.compile(r"^Reviewed-by:\s*(.+)$", re.MULTILINE)


def decided(wiki: Wiki, iid: str, rev: str = "HEAD") -> Decided | None:
    """The commit that decided item ``iid`` (removed its file) on ``rev``, or None."""
    from curator.engine.repo.git import GitError
    from curator.engine.write.actions import git_of

    g = git_of(wiki)
    # A short id (a prefix) matches the item files it begins.
    spec = item_path(iid) if len(iid) >= ID_LENGTH else f":(glob){INBOX_DIR}/{iid}*.json"
    try:
        found = g.deleted_in(rev, spec)
    except GitError:
        return None
    if found is None:
        return None
    sha, author, subject, body, when = found
    return _decision(sha, author, subject, body, when)


def _decision(sha: str, author: str, subject: str, body: str, when: str) -> Decided:
    reviewers = [r.strip() for r in _TRAILER.findall(body)]
    if subject.startswith("inbox_reject:"):
        return Decided(sha, "rejected", author, "", when)
    if reviewers:
        return Decided(sha, "approved", ", ".join(reviewers), "", when)
    return Decided(sha, "removed", author, "", when)


def not_pending_message(wiki: Wiki, iid: str) -> str:
    d = decided(wiki, iid)
    if d is None:
        return f"no pending inbox item {iid} (see 'curator inbox list')"
    return f"inbox item {iid} was already {d.describe()}"


def decided_upstream(wiki: Wiki) -> dict[str, Decided]:
    """Items still pending here that the remote (as last fetched) has decided: id -> how, read
    in one ``git log`` of the commits this clone has not merged yet."""
    from curator.engine.repo.git import GitError
    from curator.engine.write.actions import git_of

    tracking = _upstream(wiki)
    g = git_of(wiki)
    if tracking is None or g.resolve(tracking) is None:
        return {}
    try:
        entries = g.log(1000, rev=f"HEAD..{tracking}", paths=[INBOX_DIR], options=["--diff-filter=D"])
    except GitError:
        return {}
    out: dict[str, Decided] = {}
    for e in reversed(entries):  # oldest first: the first decision of an item stands
        when = _dt.datetime.fromtimestamp(e.time, _dt.UTC).isoformat().replace("+00:00", "Z")
        for path in e.paths:
            iid = path.removeprefix(INBOX_DIR + "/").removesuffix(".json")
            if path.startswith(INBOX_DIR + "/") and iid not in out:
                d = _decision(e.commit, e.author_name, e.subject, e.body, when)
                d.where = tracking.removeprefix("refs/remotes/")
                out[iid] = d
    return out


def _upstream(wiki: Wiki) -> str | None:
    from curator.engine.sync.remote import current_branch, remote_name, remote_url
    from curator.engine.write.actions import git_of

    g = git_of(wiki)
    branch = current_branch(g)
    if branch is None:
        return None
    remote = remote_name(g, branch)
    if remote_url(g, remote) is None:
        return None
    return f"refs/remotes/{remote}/{branch}"


def fetch_decisions(wiki: Wiki) -> str:
    """Fetch the remote (when the wiki has one) so decisions other clones pushed are known
    before deciding here; answers ``fetched``, ``offline`` or ``local`` (no remote). Never
    changes the working tree or the branch."""
    from curator.engine.sync.remote import current_branch, fetch, remote_name
    from curator.engine.write.actions import git_of

    tracking = _upstream(wiki)
    if tracking is None:
        return "local"
    g = git_of(wiki)
    branch = current_branch(g)
    assert branch is not None
    state, _why = fetch(g, remote_name(g, branch), branch, tracking)
    return "fetched" if state == "ok" else "offline" if state == "offline" else "local"


def _decided_upstream(wiki: Wiki, iid: str) -> Decided | None:
    from curator.engine.write.actions import git_of

    tracking = _upstream(wiki)
    if tracking is None or git_of(wiki).resolve(tracking) is None:
        return None
    d = decided(wiki, iid, f"HEAD..{tracking}")
    if d is not None:
        d.where = tracking.removeprefix("refs/remotes/")
    return d


def _refuse_if_decided_elsewhere(wiki: Wiki, iid: str) -> None:
    d = _decided_upstream(wiki, iid)
    if d is not None:
        raise _invalid(f"inbox item {iid} was already {d.describe()} on {d.where}; run 'curator sync' "
                      "to bring it here")


# --- decisions ----------------------------------------------------------------------------------

def _operator_only(actor: Actor, what: str) -> ActionResult | None:
    if actor.is_operator:
        return None
    return _result(Status.DENIED, f"only the operator may {what} inbox items; {actor} may not",
                   action=f"inbox_{what}")


def _to_decide(wiki: Wiki, ref: str, what: str, fetch: bool) -> InboxItem | ActionResult:
    """The pending item ``ref`` an operator is about to decide, or the answer refusing it. With
    ``fetch``, decisions other clones pushed are fetched first (:func:`fetch_decisions`)."""
    if fetch:
        fetch_decisions(wiki)
    try:
        return get_item(wiki, ref)
    except CuratorError as exc:
        return _result(Status.INVALID, str(exc), action=f"inbox_{what}", target=ref)


def _still_pending(ctx: ActionContext, iid: str) -> None:
    """Inside the deciding action (under the lock): the item is still pending, here and on the
    last fetched state of the remote; else :class:`~curator.engine.write.actions.Invalid` (already decided)."""
    if ctx.read_bytes(item_path(iid)) is None:
        raise _invalid(not_pending_message(ctx.wiki, iid))
    _refuse_if_decided_elsewhere(ctx.wiki, iid)


@dataclass(slots=True)
class Approval:
    """What :func:`approve` hands the append door: the item, checked and closed in its action.
    ``reviewers``: every operator who approved it, the one approving now last."""

    item_id: str
    reviewers: list[str]

    def check(self, ctx: ActionContext) -> None:
        _still_pending(ctx, self.item_id)
        ctx.operator_signs = True  # (the operator's decision, committed as the agent)
        ctx.body = f"Inbox-item: {self.item_id}\n" + "".join(f"Reviewed-by: {r}\n" for r in self.reviewers)
        reviewed = ", ".join(self.reviewers)
        ctx.data.update(id=self.item_id, reviewed_by=reviewed)
        ctx.journal.update(inbox=self.item_id, reviewed_by=reviewed)

    def close(self, ctx: ActionContext) -> None:
        ctx.write_record(item_path(self.item_id), None)


def approve(wiki: Wiki, actor: Actor, ref: str, content: str | None = None, *,
            today: _dt.date | None = None, fetch: bool = True) -> ActionResult:
    """Apply the held item ``ref`` through the append door as the agent that wrote it, with
    ``content`` instead of the submitted text when given (the operator's edit); one commit
    authored by the agent with ``Reviewed-by: <actor>``. Operator only."""
    from curator.engine.write.append import append

    refused = _operator_only(actor, "approve")
    if refused is not None:
        return refused
    if content is not None and not _WORDS.search(content):
        return _result(Status.INVALID, "invalid edit: the approved text is empty", action="inbox_approve",
                       target=ref)
    item = _to_decide(wiki, ref, "approve", fetch)
    if not isinstance(item, InboxItem):
        return item
    try:
        agent = item.agent
    except CuratorError as exc:
        return _result(Status.INVALID, f"inbox item {item.id} names a bad actor: {exc}",
                       action="inbox_approve", target=item.id)
    from curator.engine.write.actions import operator_person

    me = operator_person(wiki)
    needed = approvals_needed(wiki, item)
    if me in item.approvers:
        return _result(Status.PENDING, f"inbox item {item.id} waits: you ({me}) approved it already; "
                       f"{approval_status(item, needed)}. Another operator must approve it"
                       + _identity_hint(me), action="inbox_approve", target=item.id,
                       data=_approval_data(item, needed))
    if len(item.approvers) + 1 < needed:
        if content is not None:
            return _result(Status.INVALID, f"inbox item {item.id} needs {needed} approvals: an edited "
                           "text is given with the last one", action="inbox_approve", target=item.id)
        return _record_approval(wiki, actor, item.id, me, needed)
    result = append(wiki, item.slug, item.content if content is None else content, item.links, True,
                    agent, today, approval=Approval(item.id, [*item.approvers, me]))
    if result.status == "duplicate" and result.commit:
        result.message += f"; inbox item {item.id} is closed (the page states it already)"
    result.data.setdefault("id", item.id)
    return result


def approvals_needed(wiki: Wiki, item: InboxItem) -> int:
    """How many different operators must approve ``item`` (the policy's ``review = N`` for its
    page; 1 without such a rule)."""
    needed = getattr(wiki.policy, "approvals_needed", None)
    return max(1, int(needed(item.target))) if needed is not None else 1


def approval_status(item: InboxItem, needed: int) -> str:
    """``1 of 2 approvals: Ann <ann@example.org>`` (empty when one approval decides it and none is
    recorded)."""
    if needed <= 1 and not item.approvals:
        return ""
    who = ", ".join(item.approvers)
    return f"{len(item.approvals)} of {needed} approvals" + (f": {who}" if who else "")


def _identity_hint(me: str) -> str:
    # Unconfigured clones all commit as the neutral "operator": they cannot be told apart.
    return "" if me != "operator" else (" (operators are told apart by their git identity: set "
                                         "'git config user.name' and 'user.email')")


def _approval_data(item: InboxItem, needed: int) -> dict[str, Any]:
    return {"id": item.id, "page": item.target, "approvals": list(item.approvals), "needed": needed}


def _record_approval(wiki: Wiki, actor: Actor, iid: str, me: str, needed: int) -> ActionResult:
    """Record ``me``'s approval in the item file (one operator commit); the item stays pending."""
    from curator.engine.write.actions import run_action

    def apply(ctx: ActionContext) -> None:
        _still_pending(ctx, iid)
        raw = ctx.read_bytes(item_path(iid))
        assert raw is not None  # (checked just above, under the lock)
        item = InboxItem.from_json(json.loads(raw))  # as it is now: another approval may have landed
        if me in item.approvers:
            raise _invalid(f"inbox item {iid} waits: you ({me}) approved it already")
        item.approvals.append({"by": me, "time": now()})
        ctx.write_record(item_path(iid), encode_record(item.to_json()))
        ctx.body = f"Inbox-item: {iid}\nApproved-by: {me}"
        ctx.journal.update(inbox=iid, approved_by=me)
        ctx.status = Status.PENDING
        ctx.data.update(_approval_data(item, needed))
        ctx.message = (f"recorded your approval of inbox item {iid} ({item.target}): "
                       f"{approval_status(item, needed)}; it waits for another operator")

    return run_action(wiki, actor, "inbox_approval", iid, apply)


def reject(wiki: Wiki, actor: Actor, ref: str, reason: str, *, fetch: bool = True) -> ActionResult:
    """Reject the held item ``ref``: the reason is recorded (the same fact from any agent is then
    answered ``rejected``) and the item removed; action ``inbox_reject: <id>``. Operator only."""
    from curator.engine.write.actions import operator_person, run_action

    refused = _operator_only(actor, "reject")
    if refused is not None:
        return refused
    why = " ".join((reason or "").split())
    if not why:
        return _result(Status.INVALID, "a rejection needs a reason (--reason): the agent is told it",
                       action="inbox_reject", target=ref)
    item = _to_decide(wiki, ref, "reject", fetch)
    if not isinstance(item, InboxItem):
        return item

    def apply(ctx: ActionContext) -> None:
        _still_pending(ctx, item.id)
        record = {"reason": why, "by": operator_person(wiki), "time": now(), "content": item.content,
                  "item": item.id, "actor": item.actor, "target": item.target}
        ctx.journal.update(inbox=item.id, reason=why)
        ctx.write_record(rejection_path(item.content), encode_record(record))
        ctx.write_record(item_path(item.id), None)
        ctx.status = Status.REJECTED
        ctx.data.update(id=item.id, reason=why, page=item.target)
        ctx.message = f"rejected inbox item {item.id} ({item.target}): {why}"

    return run_action(wiki, actor, "inbox_reject", item.id, apply)


# --- what the station shows for one item -------------------------------------------------------

def page_diff(wiki: Wiki, item: InboxItem, content: str | None = None,
              today: _dt.date | None = None) -> str:
    """The target page with the fact in place, as a unified diff against the page as it is now."""
    import difflib

    from curator.engine.corpus.facts import compose_bullet, insert_bullet, scaffold

    day = today or _dt.date.today()
    bullet = compose_bullet(content or item.content, item.links, day)
    try:
        before = wiki.read_text(item.target)
    except OSError:
        before = None
    after = scaffold(item.slug, bullet, day) if before is None else insert_bullet(before, bullet)
    lines = difflib.unified_diff((before or "").splitlines(keepends=True), after.splitlines(keepends=True),
                                 "/dev/null" if before is None else f"a/{item.target}",
                                 f"b/{item.target}", n=3)
    return "".join(lines)


def _query_words(content: str) -> list[str]:
    return [w for w in dict.fromkeys(fact_key(content).split()) if len(w) > 1 and w not in _STOP]


def _bullets(text: str) -> list[str]:
    from curator.engine.corpus.facts import clean_bullet

    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("- "):
            cleaned = clean_bullet(stripped)
            if cleaned:
                out.append(cleaned)
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def similar_facts(wiki: Wiki, content: str, *, limit: int = SIMILAR_LIMIT, actor: Actor | None = None,
                  refresh: bool = True) -> list[dict[str, Any]]:
    """The ``limit`` bullets anywhere in the wiki most similar to ``content`` (word Jaccard),
    each ``{page, fact, score}``: the full-text index proposes the pages that hold the fact's
    rarest words (:meth:`~curator.engine.search.index.SearchIndex.pages_sharing`), and only their bullets are
    compared. Pages ``actor`` may not see are left out."""
    words = _query_words(content)
    if not words:
        return []
    target = set(fact_key(content).split())
    paths = wiki.search.pages_sharing(words, limit=SIMILAR_PAGES * (1 if actor is None or actor.is_operator else 4),
                                      refresh=refresh)
    if actor is not None:
        paths = [p for p in paths if wiki.visible(actor, p)][:SIMILAR_PAGES]
    scored: list[tuple[float, str, str]] = []
    for path in paths:
        try:
            text = wiki.read_text(path)
        except OSError:
            continue
        for bullet in _bullets(text):
            score = _jaccard(target, set(fact_key(bullet).split()))
            if score > 0:
                scored.append((score, path, bullet))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for score, path, bullet in scored:
        if (path, bullet) in seen:
            continue
        seen.add((path, bullet))
        out.append({"page": path, "fact": bullet, "score": round(score, 3)})
        if len(out) >= limit:
            break
    return out


def item_view(wiki: Wiki, item: InboxItem, actor: Actor | None = None, *,
              refresh: bool = True, meaning: bool = True) -> dict[str, Any]:
    """One item as ``curator inbox show --json`` and the station show it (``refresh``: see
    :meth:`~curator.engine.search.index.SearchIndex.search`; a station fed by its file watcher passes False).
    ``similar``: by meaning when a fact index is at hand (never built here), else by shared words;
    ``similar_by`` says which. ``meaning=False``: by shared words only (the station asks for the
    meaning on a task of its own, so the diff shows at once)."""
    data = item.to_json()
    needed = approvals_needed(wiki, item)
    data.update(approvals=list(item.approvals), needed=needed, approval_status=approval_status(item, needed))
    elsewhere = _decided_upstream(wiki, item.id)  # (fetched, not merged yet: say so, never offer it again)
    data["decided"] = elsewhere.to_json() if elsewhere is not None else None
    data["diff"] = page_diff(wiki, item)
    from curator.engine.facts.door import similar_by_meaning

    data["similar"] = similar_by_meaning(wiki, item.content, actor) if meaning else None
    data["similar_by"] = "meaning"
    if data["similar"] is None:
        data["similar"], data["similar_by"] = [], "words"
        with contextlib.suppress(CuratorError):
            data["similar"] = similar_facts(wiki, item.content, actor=actor, refresh=refresh)
    return data
