"""Provenance (docs/design.md §14): ``blame``, ``injections``, ``activity``.

``curator undo --agent ID --since DATE`` (in :mod:`curator.commands.write`) reverts an agent's writes since then.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("blame", "injections", "activity")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "blame", parents=[parent], help="who wrote each line of a page, when, by which action",
        description="Per line: the actor (the commit's author), date, commit, action, and the reviewer "
        "when the line came through the review inbox. A line a merge or a move brought here keeps its "
        "original author; the merge or move is its 'moved_by' step.",
    )
    p.add_argument("page", metavar="PAGE", help="the page (path or slug)")
    p.set_defaults(handler="curator.commands.provenance:run_blame")

    p = sub.add_parser(
        "injections", parents=[parent], help="the contexts built for agents (what each was shown)",
        description="Every context built by MCP wiki_context or 'curator context' is recorded in "
        ".curator/injections.jsonl. Without N: the records (number, time, agent, budget, query, pages). "
        "With N: that context exactly as it was sent, rebuilt from the recorded blobs; with --diff, "
        "a unified diff of it against the context the same agent gets today.",
    )
    p.add_argument("n", metavar="N", nargs="?", type=int, help="show record N as it was sent")
    p.add_argument("--agent", metavar="ID", help="only this agent's records ('dudu' or 'agent:dudu')")
    p.add_argument("--since", metavar="DATE", help="only records since DATE (YYYY-MM-DD or ISO 8601)")
    p.add_argument("--diff", action="store_true", help="with N: diff the text as sent against today's")
    p.set_defaults(handler="curator.commands.provenance:run_injections")

    p = sub.add_parser(
        "activity", parents=[parent], help="an agent's writes (its commits), newest first",
        description="Undo them all in one commit with 'curator undo --agent ID --since DATE'.",
    )
    p.add_argument("--agent", metavar="ID", required=True, help="the agent ('dudu' or 'agent:dudu')")
    p.add_argument("--since", metavar="DATE", help="only writes since DATE (YYYY-MM-DD or ISO 8601)")
    p.set_defaults(handler="curator.commands.provenance:run_activity")


def run_blame(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.history.provenance import blame

    lines = blame(inv.wiki, args.page, inv.actor)
    rows = [b.to_json() for b in lines]
    text = []
    for b in lines:
        who = b.actor or "(not committed)"
        when = (b.date or "")[:10]
        sha = (b.commit or "")[:8]
        extra = f" reviewed by {b.reviewer}" if b.reviewer else ""
        if b.moved_by is not None:
            extra += f" ({b.moved_by.action or 'commit'} {b.moved_by.commit[:8]})"
        text.append(f"{sha:<8} {who:<18} {when:<10} {b.action or '':<14}{extra} | {b.text}")
    inv.emit(rows, "\n".join(text) if text else "(empty page)")
    return 0


def run_injections(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.read.injections import diff_today, get_record, read_records, rebuild

    if args.n is not None:
        rec = get_record(inv.wiki, inv.actor, args.n)
        built = rebuild(inv.wiki, rec)
        data: dict[str, Any] = {**rec.to_json(), "text": built.text, "exact": built.exact,
                                "missing": built.missing}
        if args.diff:
            data["diff"] = diff_today(inv.wiki, rec)
            inv.emit(data, data["diff"] or "no difference: today's context is the same text")
        else:
            import sys

            if inv.json:
                inv.emit(data)
            else:
                sys.stdout.write(built.text)  # exactly the text sent, nothing added
        return 0
    records = read_records(inv.wiki, inv.actor, agent=args.agent, since=args.since)
    lines = [f"{r.n:>6}  {str(r.data.get('t', ''))[:19].replace('T', ' ')}  {r.agent:<18} "
             f"{r.data.get('bytes', 0):>6}/{r.data.get('budget', 0)} B  {len(r.pages)} page(s)"
             + (f"  query: {r.data['query']}" if r.data.get("query") else "") for r in records]
    inv.emit(lambda: [r.to_json() for r in records], "\n".join(lines) if lines else "no injections recorded")
    return 0


def run_activity(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.history.provenance import activity

    entries = activity(inv.wiki, args.agent, inv.actor, args.since)
    lines = [f"{e.commit[:10]}  {e.time[:19].replace('T', ' ')}  {e.subject}" for e in entries]
    inv.emit(lambda: [e.to_json() for e in entries], "\n".join(lines) if lines else "no writes")
    return 0
