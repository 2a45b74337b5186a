"""What the operator decided about a conflict (``curator facts resolve ID --keep 1|2|both``).

Keeping one fact removes the other's lines from its page; keeping both records that the two
can both be true in :data:`DECISIONS_FILE`, a tracked decision file at the wiki root (committed
like ``.curator-decisions.json``, so a clone remembers it), keyed by the two facts' normalised
text in either order, so the pair is never reported again wherever the facts move. Each is one
action and one commit whose message ends with the trailer ``Curator-Conflict: <id>``; only an
operator decides which fact is true.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import TYPE_CHECKING, Any

from curator.engine.corpus.facts import FENCE_RE, HEADING_RE, Fact, page_facts, refresh_updated
from curator.engine.facts.conflicts import Conflict, decision_key
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionResult, Denied, Invalid, run_action
from curator.engine.write.decision_files import load_decision_file

if TYPE_CHECKING:
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki

DECISIONS_FILE = ".curator-fact-decisions.json"
_LIST = "both_true"
TRAILER = "Curator-Conflict"
KEEP_CHOICES = ("1", "2", "both")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")


def load_fact_decisions(wiki: Wiki) -> dict[str, Any]:
    """The decision file (``{"version": 1, "both_true": [...]}``); empty when absent."""
    return load_decision_file(wiki, DECISIONS_FILE, _LIST)


def decided_pairs(wiki: Wiki) -> set[tuple[str, str]]:
    """Every pair of fact texts (:func:`~curator.engine.facts.conflicts.decision_key`) recorded
    as both true: what :func:`~curator.engine.facts.conflicts.find_conflicts` leaves out."""
    out: set[tuple[str, str]] = set()
    for entry in load_fact_decisions(wiki)[_LIST]:
        texts = entry.get("facts") if isinstance(entry, dict) else None
        if isinstance(texts, list) and len(texts) == 2 and all(isinstance(t, str) for t in texts):
            out.add(decision_key(texts[0], texts[1]))
    return out


def _render(data: dict[str, Any]) -> str:
    # sorted, one entry per block: small diffs and clean merges between clones
    entries = sorted(data[_LIST], key=lambda e: tuple(e.get("facts", ())))
    return json.dumps({**data, _LIST: entries}, ensure_ascii=False, indent=2) + "\n"


def fact_lines(text: str, fact: Fact) -> tuple[int, int] | None:
    """The 0-based line range ``[start, end)`` of ``text`` that holds ``fact`` (found by its key,
    the one at its recorded line first, as it may have moved), or None when the page no longer
    states it."""
    found = [f for f in page_facts(fact.path, text) if f.key == fact.key]
    if not found:
        return None
    at = next((f for f in found if f.line == fact.line), found[0])
    lines = text.replace("\r\n", "\n").split("\n")
    start = at.line - 1
    first = _QUOTE.sub("", lines[start])
    item = _ITEM.match(first)
    indent = len(item.group(1)) if item else -1
    end = start + 1
    while end < len(lines):
        line = _QUOTE.sub("", lines[end]) if lines[end].lstrip().startswith(">") else lines[end]
        content = line.strip()
        if (not content or HEADING_RE.match(content) or FENCE_RE.match(line) or content.startswith("|")
                or content in ("---", "***") or _ITEM.match(line)):
            break
        if indent >= 0 and len(line) - len(line.lstrip()) <= indent:
            break  # a paragraph after the item, not its continuation
        end += 1
    return start, end


def remove_fact(text: str, fact: Fact) -> str | None:
    """``text`` without ``fact``'s lines (in the text's own line endings), or None when the page
    no longer states it."""
    span = fact_lines(text, fact)
    if span is None:
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    start, end = span
    if start > 0 and not lines[start - 1].strip() and end < len(lines) and not lines[end].strip():
        end += 1  # a paragraph between blank lines: keep one blank line, not two
    del lines[start:end]
    return nl.join(lines)


def resolve(wiki: Wiki, actor: Actor, conflict: Conflict, keep: str | int) -> ActionResult:
    """Decide ``conflict``: ``keep`` 1 or 2 removes the other fact from its page, ``both``
    records that both are true; one commit with the trailer ``Curator-Conflict: <id>``."""
    choice = str(keep).strip().lower()
    name = "fact_resolve"
    if choice not in KEEP_CHOICES:
        return ActionResult(Status.INVALID, f"invalid choice {keep!r}: keep 1, 2 or both", action=name)
    facts = (conflict.a, conflict.b)
    trailer = f"{TRAILER}: {conflict.id}"

    def check(ctx: ActionContext) -> None:
        if not ctx.actor.is_operator:
            raise Denied(message=f"{ctx.actor} may not resolve conflicts: only an operator decides "
                         "which fact is true")
        ctx.data.update(conflict=conflict.id, keep=choice)
        ctx.journal["conflict"] = conflict.id

    def drop(ctx: ActionContext) -> None:
        check(ctx)
        kept, gone = (facts[0], facts[1]) if choice == "1" else (facts[1], facts[0])
        ctx.check_write(gone.path)  # the real page, before it is read
        text, flags = ctx.read_text(gone.path)
        if text is None or flags is None:
            raise Invalid(message=f"{gone.path} no longer exists; list the conflicts again")
        new = remove_fact(text, gone)
        if new is None:
            raise Invalid(message=f"{gone.path} no longer says \"{gone.text}\"; list the conflicts again")
        ctx.write_text(gone.path, refresh_updated(new, _dt.date.today()), bom=flags.bom)
        ctx.data.update(removed=gone.path, kept=kept.path)
        ctx.status = Status.RESOLVED
        ctx.message = f"kept \"{kept.text}\"; removed \"{gone.text}\" from {gone.path}"

    def both(ctx: ActionContext) -> None:
        check(ctx)
        ctx.check_write(DECISIONS_FILE)
        key = decision_key(conflict.a.text, conflict.b.text)
        if key in decided_pairs(wiki):
            ctx.status = Status.UNCHANGED
            ctx.message = "these two facts are already recorded as both true"
            return
        data = load_fact_decisions(wiki)
        data[_LIST].append({"facts": list(key), "texts": [conflict.a.text, conflict.b.text],
                            "pages": [conflict.a.path, conflict.b.path], "conflict": conflict.id,
                            "by": str(ctx.actor), "date": _dt.date.today().isoformat()})
        ctx.write_text(DECISIONS_FILE, _render(data))
        ctx.status = Status.RECORDED
        ctx.message = "both facts kept; this pair is no longer reported as a conflict"

    if choice == "both":
        body = f"Both true: \"{conflict.a.text}\" and \"{conflict.b.text}\"\n\n{trailer}"
        return run_action(wiki, actor, name, f"{conflict.id} keep both", both, body=body)
    kept, gone = (facts[0], facts[1]) if choice == "1" else (facts[1], facts[0])
    body = f"Kept: {kept.text}\nRemoved: {gone.text}\nReason: {conflict.reason}\n\n{trailer}"
    return run_action(wiki, actor, name, f"{conflict.id} keep {choice}", drop, body=body)
