"""The stale queue: facts and pages due for a look (docs/design.md §15, guide: "Facts gone stale").

Two sources, neither needing embeddings:

- a page whose frontmatter ``valid_until:`` has passed (and no ``verified:`` date on or after it)
  is one entry for the whole page, ``why`` = ``page valid_until YYYY-MM-DD``;
- every other fact (:func:`~curator.engine.corpus.facts.page_facts`) of a page with a freshness
  rule (:meth:`~curator.engine.policy.scope.ScopePolicy.fresh_for`: a namespace's ``stale_after``,
  else the layer's ``[freshness]``, by default ``context = 30d``) is due that many days after its
  date: its ``(verified ...)`` stamp, else its ``(added ...)`` stamp, else the page's last commit
  (one ``git log`` for the whole wiki, :meth:`~curator.engine.repo.git.Git.last_changed`), else the
  file's modification time. It is stale once ``today`` is past the due date.

An entry's ``id`` is stable: a hash of the page and the fact's words as a reader sees them
(:attr:`Fact.key <curator.engine.corpus.facts.Fact.key>`, stamps excluded), so verifying a fact
or moving it to another line keeps its id; the same words twice on one page are told apart by
their order (:func:`fact_ids`).

``verify(wiki, actor, id, today)`` stamps the fact ``(verified YYYY-MM-DD)`` at the end of its
last line (replacing an older verified stamp), or sets a page's ``verified:`` frontmatter, in one
commit; ``retire(wiki, actor, id, reason)`` removes the fact's lines (or archives the expired
page) in one commit whose message carries the reason. Both are the operator's only.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.facts import Fact, page_facts
from curator.engine.corpus.freshness import expired_on
from curator.engine.facts.decisions import fact_lines
from curator.engine.policy.actor import Actor
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionResult, Denied, Invalid, git_of, run_action

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

_VERIFIED_AT_END = re.compile(r"\s*\(verified \d{4}-\d{2}-\d{2}\)")
_ADDED_AT_END = re.compile(r"(\s*\(added \d{4}-\d{2}-\d{2}\))\s*$")


@dataclass(frozen=True, slots=True)
class StaleFact:
    """One entry of the stale queue. ``line`` is 1 and ``text`` the title for a whole page."""

    id: str
    path: str
    line: int
    text: str
    due: _dt.date
    why: str
    page: bool = False  # the entry is the whole page (its valid_until passed)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "line": self.line, "text": self.text,
                "due": self.due.isoformat(), "why": self.why}


def page_id(path: str) -> str:
    return hashlib.sha1(f"page\0{path}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def fact_ids(facts: list[Fact]) -> list[str]:
    """The id of each of a page's ``facts``: its :attr:`~Fact.key`, and for the second and later
    facts with the same words on the page that key with its occurrence (ids never collide)."""
    seen: dict[str, int] = {}
    out = []
    for fact in facts:
        n = seen[fact.key] = seen.get(fact.key, 0) + 1
        out.append(fact.key if n == 1 else hashlib.sha1(f"{fact.key}#{n}".encode()).hexdigest()[:16])
    return out


def _date(value: str | None) -> _dt.date | None:
    try:
        return _dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def stale_facts(wiki: Wiki, actor: Actor, today: _dt.date | None = None) -> list[StaleFact]:
    """The stale queue ``actor`` sees (only pages it may read), oldest due date first."""
    today = today or _dt.date.today()
    out: list[StaleFact] = []
    changed: dict[str, int] | None = None
    for page in wiki.visible_pages(actor):
        until = expired_on(page.meta, today)
        if until is not None:
            out.append(StaleFact(page_id(page.path), page.path, 1, page.title, until,
                                 f"page valid_until {until.isoformat()}", page=True))
            continue
        rule = wiki.scope.fresh_for(page.path, page.layer)
        if rule is None:
            continue
        days, source = rule
        try:
            text = wiki.read_text(page.path)
        except OSError:
            continue  # removed since the cache saw it
        facts = page_facts(page.path, text)
        for fact, ident in zip(facts, fact_ids(facts), strict=True):
            stamp = _date(fact.verified) or _date(fact.added)
            if stamp is not None:
                since = f"{'verified' if fact.verified else 'added'} {stamp.isoformat()}"
            else:
                if changed is None:
                    changed = git_of(wiki).last_changed()
                seconds = changed.get(page.path)
                when = seconds if seconds is not None else page.mtime_ns // 1_000_000_000
                stamp = _dt.datetime.fromtimestamp(when, _dt.UTC).date()
                since = f"page last changed {stamp.isoformat()}"
            due = stamp + _dt.timedelta(days=days)
            if today > due:
                out.append(StaleFact(ident, fact.path, fact.line, fact.text, due,
                                     f"{source}: {since}, older than {days} days"))
    out.sort(key=lambda s: (s.due, s.path, s.line))
    return out


def _find(wiki: Wiki, actor: Actor, ident: str, today: _dt.date) -> StaleFact:
    ident = ident.strip()
    for entry in stale_facts(wiki, actor, today):
        if entry.id == ident:
            return entry
    raise Invalid(message=f"no stale fact has the id {ident!r} (run 'curator facts stale' for the queue)")


def _locate(text: str, entry: StaleFact) -> tuple[list[str], int, int]:
    """The page's lines and the range of ``entry``'s fact in them (found by its id: the line
    may have moved since the queue was read)."""
    lines = text.split("\n")
    facts = page_facts(entry.path, text)
    fact: Fact | None = next((f for f, i in zip(facts, fact_ids(facts), strict=True) if i == entry.id), None)
    if fact is None:
        raise Invalid(message=f"the fact {entry.id} is no longer on {entry.path}")
    span = fact_lines(text, fact)  # (the fact's lines as page_facts read them)
    if span is None:
        raise Invalid(message=f"the fact {entry.id} is no longer on {entry.path}")
    return lines, span[0], span[1]


def _operator_only(actor: Actor, what: str) -> None:
    if not actor.is_operator:
        raise Denied(message=f"{actor} may not {what} facts: only the operator reviews the stale queue")


def verify(wiki: Wiki, actor: Actor, ident: str, today: _dt.date | None = None) -> ActionResult:
    """Stamp the stale fact (or expired page) ``ident`` as verified ``today``: one commit."""
    day = today or _dt.date.today()

    def apply(ctx: ActionContext) -> None:
        _operator_only(ctx.actor, "verify")
        entry = _find(wiki, ctx.actor, ident, day)
        ctx.check_write(entry.path)
        text, dec = ctx.read_text(entry.path)
        if text is None or dec is None:
            raise Invalid(message=f"{entry.path} is gone")
        if entry.page:
            new = frontmatter.update(text, {"verified": day})
        else:
            lines, _first, end = _locate(text.replace("\r\n", "\n"), entry)
            last = _VERIFIED_AT_END.sub("", lines[end - 1].rstrip())
            stamp = f" (verified {day.isoformat()})"
            added = _ADDED_AT_END.search(last)
            # The stamp goes before "(added ...)": the added stamp stays last, where appends put it.
            lines[end - 1] = (last[:added.start()] + stamp + added.group(1)) if added else last + stamp
            new = "\n".join(lines)
            if dec.crlf:
                new = new.replace("\n", "\r\n")
        ctx.write_text(entry.path, new, bom=dec.bom)
        ctx.data = {"id": entry.id, "path": entry.path, "verified": day.isoformat()}
        ctx.message = f"verified {entry.path}:{entry.line} on {day.isoformat()}"

    return run_action(wiki, actor, "verify", ident.strip(), apply)


def retire(wiki: Wiki, actor: Actor, ident: str, reason: str, today: _dt.date | None = None) -> ActionResult:
    """Remove the stale fact ``ident`` from its page (an expired page goes to the archive): one
    commit, ``reason`` in its message."""
    day = today or _dt.date.today()
    reason = " ".join(reason.split())
    if not reason:
        return ActionResult(Status.INVALID, "a reason is needed to retire a fact (--reason)")

    def apply(ctx: ActionContext) -> None:
        _operator_only(ctx.actor, "retire")
        entry = _find(wiki, ctx.actor, ident, day)
        ctx.check_write(entry.path)
        ctx.body = f"Reason: {reason}\n\nRetired: {entry.text}"
        if entry.page:
            ctx.delete(entry.path)
        else:
            text, dec = ctx.read_text(entry.path)
            if text is None or dec is None:
                raise Invalid(message=f"{entry.path} is gone")
            lines, first, end = _locate(text.replace("\r\n", "\n"), entry)
            del lines[first:end]
            new = "\n".join(lines)
            ctx.write_text(entry.path, new.replace("\n", "\r\n") if dec.crlf else new, bom=dec.bom)
        ctx.data = {"id": entry.id, "path": entry.path, "reason": reason}
        ctx.message = f"retired {entry.path}:{entry.line} ({reason})"

    return run_action(wiki, actor, "retire", ident.strip(), apply)

