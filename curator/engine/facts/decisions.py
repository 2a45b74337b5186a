"""What the operator decided about a conflict (``curator facts resolve ID --keep 1|2|both``) and
about a group of similar facts (the station's Facts view: keep one wording, or keep them all).

Keeping one fact removes the other's lines from its page; keeping both records that the two
can both be true in :data:`DECISIONS_FILE`, a tracked decision file at the wiki root (committed
like ``.curator-decisions.json``, so a clone remembers it), keyed by the two facts' normalised
text in either order, so the pair is never reported again wherever the facts move. Each is one
action and one commit whose message ends with the trailer ``Curator-Conflict: <id>``; only an
operator decides which fact is true.

A group of similar facts is decided the same way: :func:`keep_wording` removes every other fact
of the group from its page in one commit (trailer ``Curator-Similar: <id>``); :func:`keep_all`
records the group's normalised texts under ``similar_kept`` in the same file, so
:func:`~curator.engine.facts.similar.find_similar` never shows that group again.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import TYPE_CHECKING, Any

from curator.engine.corpus.facts import FENCE_RE, HEADING_RE, Fact, page_facts, refresh_updated
from curator.engine.facts.conflicts import Conflict, decision_key, normalised_fact
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionResult, Denied, Invalid, run_action
from curator.engine.write.decision_files import load_decision_file

if TYPE_CHECKING:
    from curator.engine.facts.similar import SimilarGroup
    from curator.engine.policy.actor import Actor
    from curator.engine.wiki import Wiki

DECISIONS_FILE = ".curator-fact-decisions.json"
_LIST = "both_true"
TRAILER = "Curator-Conflict"
SIMILAR_TRAILER = "Curator-Similar"
_SIMILAR = "similar_kept"
KEEP_CHOICES = ("1", "2", "both")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")


def load_fact_decisions(wiki: Wiki) -> dict[str, Any]:
    """The decision file (``{"version": 1, "both_true": [...], "similar_kept": [...]}``); empty
    when absent."""
    data = load_decision_file(wiki, DECISIONS_FILE, _LIST)
    if not isinstance(data.setdefault(_SIMILAR, []), list):
        from curator.engine.errors import CuratorError

        raise CuratorError(f"{DECISIONS_FILE} is damaged (not a mapping with a {_SIMILAR} list); "
                           "fix it or restore it with git")
    return data


def group_key(texts: list[str]) -> frozenset[str]:
    """What a "keep all" decision names: the group's facts' normalised texts, in any order."""
    return frozenset(normalised_fact(t) for t in texts)


def kept_groups(wiki: Wiki) -> list[frozenset[str]]:
    """The groups of similar facts recorded as kept: a group found again is left out when its
    texts are among one of these (a later fact joining it brings it back)."""
    out = []
    for entry in load_fact_decisions(wiki)[_SIMILAR]:
        texts = entry.get("facts") if isinstance(entry, dict) else None
        if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
            out.append(frozenset(texts))
    return out


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
    kept = sorted(data.get(_SIMILAR, []), key=lambda e: tuple(e.get("facts", ())))
    out = {**data, _LIST: entries}
    if kept:
        out[_SIMILAR] = kept
    else:
        out.pop(_SIMILAR, None)
    return json.dumps(out, ensure_ascii=False, indent=2) + "\n"


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


def _operator_decides(ctx: ActionContext, group: SimilarGroup) -> None:
    if not ctx.actor.is_operator:
        raise Denied(message=f"{ctx.actor} may not decide similar facts: only an operator chooses "
                     "which wording stays")
    ctx.data.update(group=group.id)
    ctx.journal["similar"] = group.id


def keep_wording(wiki: Wiki, actor: Actor, group: SimilarGroup, fact_key: str) -> ActionResult:
    """Keep the fact of ``group`` whose :attr:`~Fact.key` is ``fact_key``; every other fact of the
    group leaves its page, all in one commit (trailer ``Curator-Similar: <id>``)."""
    name = "fact_keep_wording"
    kept = next((f for f in group.facts if f.key == fact_key), None)
    if kept is None:
        return ActionResult(Status.INVALID, f"no fact {fact_key!r} in group {group.id}", action=name)
    gone = [f for f in group.facts if f is not kept]
    by_page: dict[str, list[Fact]] = {}
    for fact in gone:
        by_page.setdefault(fact.path, []).append(fact)

    def apply(ctx: ActionContext) -> None:
        _operator_decides(ctx, group)
        for path, facts in sorted(by_page.items()):
            ctx.check_write(path)
            text, flags = ctx.read_text(path)
            if text is None or flags is None:
                raise Invalid(message=f"{path} no longer exists; list the similar facts again")
            # bottom up: removing a fact never moves the lines of those still to remove
            for fact in sorted(facts, key=lambda f: -f.line):
                # (the same words as the kept fact on its page: remove_fact takes the one at
                # this fact's line, not the kept one)
                new = remove_fact(text, fact)
                if new is None:
                    raise Invalid(message=f"{path} no longer says \"{fact.text}\"; list the similar facts again")
                text = new
            ctx.write_text(path, refresh_updated(text, _dt.date.today()), bom=flags.bom)
        ctx.data.update(kept=kept.path, removed=sorted(by_page))
        ctx.status = Status.RESOLVED
        pages = ", ".join(sorted(by_page))
        ctx.message = (f"kept \"{kept.text}\"; removed {len(gone)} other wording"
                       f"{'' if len(gone) == 1 else 's'} from {pages}")

    body = (f"Kept: {kept.text}\n" + "".join(f"Removed: {f.text} ({f.path})\n" for f in gone)
            + f"\n{SIMILAR_TRAILER}: {group.id}")
    return run_action(wiki, actor, name, f"{group.id} keep {kept.path}:{kept.line}", apply, body=body)


def keep_all(wiki: Wiki, actor: Actor, group: SimilarGroup) -> ActionResult:
    """Record that every fact of ``group`` stays as it is: the group is not listed again."""
    name = "fact_keep_all"
    texts = [f.text for f in group.facts]
    key = group_key(texts)

    def apply(ctx: ActionContext) -> None:
        _operator_decides(ctx, group)
        ctx.check_write(DECISIONS_FILE)
        if any(key <= kept for kept in kept_groups(wiki)):
            ctx.status = Status.UNCHANGED
            ctx.message = "these facts are already kept together"
            return
        data = load_fact_decisions(wiki)
        data[_SIMILAR].append({"facts": sorted(key), "texts": texts,
                               "pages": sorted({f.path for f in group.facts}), "group": group.id,
                               "by": str(ctx.actor), "date": _dt.date.today().isoformat()})
        ctx.write_text(DECISIONS_FILE, _render(data))
        ctx.status = Status.RECORDED
        ctx.message = f"kept all {len(texts)} wordings; this group is no longer listed"

    body = "Kept together:\n" + "".join(f"- {t}\n" for t in texts) + f"\n{SIMILAR_TRAILER}: {group.id}"
    return run_action(wiki, actor, name, f"{group.id} keep all", apply, body=body)
