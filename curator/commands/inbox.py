"""The review inbox (docs/design.md §13): ``inbox list|show ID|approve ID [--content TEXT]|reject ID --reason R``.

Agent writes the scope policy holds wait here for the operator. Approve and reject are engine
actions (one commit each, undone with ``curator undo``) that only the operator may run; listing and
showing honour the actor's visibility.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("inbox",)


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    inbox = sub.add_parser("inbox", parents=[parent],
                           help="agent writes held for review: list, show, approve, reject",
                           description="Agent writes that the [review] rules of .scope.toml hold "
                           "wait here. Approve applies the fact through the append door as the "
                           "agent (commit trailer Reviewed-by: <your git user.name <user.email>>); "
                           "where the policy says review = 2, the first approval is recorded and the "
                           "item waits until a second, different operator approves. Reject records "
                           "the reason, and the same fact from any agent is then answered 'rejected'. "
                           "An item another clone decided shows who decided it and when.")
    isub = inbox.add_subparsers(dest="inbox_command", metavar="<action>", required=True,
                                parser_class=type(inbox))
    p = isub.add_parser("list", parents=[parent], help="pending items, oldest first")
    p.set_defaults(handler="curator.commands.inbox:run_list")

    p = isub.add_parser("show", parents=[parent],
                        help="one item: the page with the fact in place (a diff) and similar facts")
    p.add_argument("id", metavar="ID", help="the item's id (or a unique prefix)")
    p.set_defaults(handler="curator.commands.inbox:run_show")

    p = isub.add_parser("approve", parents=[parent],
                        help="apply the item through the append door (one commit, authored by the agent)")
    p.add_argument("id", metavar="ID", help="the item's id (or a unique prefix)")
    p.add_argument("--content", metavar="TEXT", help="approve this edited text instead of the agent's")
    p.set_defaults(handler="curator.commands.inbox:run_approve")

    p = isub.add_parser("reject", parents=[parent], help="reject the item with a reason (one commit)")
    p.add_argument("id", metavar="ID", help="the item's id (or a unique prefix)")
    p.add_argument("--reason", metavar="R", required=True, help="why; the agent is told it")
    p.set_defaults(handler="curator.commands.inbox:run_reject")


def run_list(inv: Invocation, args: argparse.Namespace) -> int:
    import sys

    from curator.engine.corpus.lookalike import escape_controls
    from curator.engine.review.inbox import list_items, read_items

    damaged: list[str] = []
    if inv.actor.is_operator and (inv.wiki_dir / ".git").exists():
        items = read_items(inv.wiki_dir, damaged)  # the operator sees every item: no page cache needed
    else:
        items = list_items(inv.wiki, inv.actor, damaged)
    if damaged and inv.actor.is_operator:
        sys.stderr.write(f"curator: warning: {len(damaged)} inbox item file(s) do not parse and are not "
                         f"listed: {', '.join(damaged[:5])}; fix them or restore them with git\n")
    shown = escape_controls  # what is decided on reads as stored (no bidi reordering, no hidden lines)
    elsewhere = _decided_elsewhere(inv) if items else {}
    rows, lines = [], []
    for i in items:
        row = i.to_json()
        note = ""
        if i.id in elsewhere:
            d = elsewhere[i.id]
            row["decided"] = d.to_json()
            note = f"\n    already {shown(d.describe())} on {shown(d.where)}: run 'curator sync'"
        elif i.approvals:
            from curator.engine.review.inbox import approval_status, approvals_needed

            needed = approvals_needed(inv.wiki, i)
            row["needed"] = needed
            note = f"\n    waits: {shown(approval_status(i, needed))}"
        rows.append(row)
        lines.append(f"{i.id}  {shown(i.time[:16].replace('T', ' '))}  {shown(i.actor):<18} {shown(i.target):<36} "
                     f"{'(new page) ' if i.create else ''}{shown(i.content[:70])}{note}")
    inv.emit(rows, "\n".join(lines) + f"\n{len(items)} pending" if lines else "the inbox is empty")
    return 0


def _decided_elsewhere(inv: Invocation) -> dict[str, Any]:
    """Pending items the remote decided (as last fetched): only a clone with remote-tracking
    refs can have any, so a wiki without a remote pays no git call."""
    git_dir = inv.wiki_dir / ".git"
    if not ((git_dir / "refs" / "remotes").is_dir() or (git_dir / "packed-refs").is_file()):
        return {}
    from curator.engine.review.inbox import decided_upstream

    return decided_upstream(inv.wiki)


def run_show(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.corpus.lookalike import escape_controls
    from curator.engine.review.inbox import get_item, item_view

    actor = None if inv.actor.is_operator else inv.actor
    item = get_item(inv.wiki, args.id, actor)
    data = item_view(inv.wiki, item, inv.actor)
    shown = escape_controls  # what is decided on reads as stored (no bidi reordering, no forged lines)
    text = [f"inbox item {item.id}: {shown(item.actor)}"
            + (f" ({shown(item.department)})" if item.department else "")
            + f" at {shown(item.time)}", f"target: {shown(item.target)}" + (" (new page)" if item.create else ""),
            f"held: {shown(item.reason)}", f"fact: {shown(item.content)}",
            *([f"waits: {shown(data['approval_status'])}"] if data["approval_status"] else []), "",
            "\n".join(shown(line) for line in data["diff"].rstrip("\n").split("\n")), "",
            "closest facts in meaning:" if data.get("similar_by") == "meaning" else "similar facts (shared words):"]
    text += [f"  {s['score']:.2f}  {shown(s['page'])}: {shown(s['fact'])}" for s in data["similar"]] or ["  (none)"]
    inv.emit(data, "\n".join(text))
    return 0


def _finish(inv: Invocation, result: Any) -> int:
    from curator.engine.write.append import to_cli_json

    data = to_cli_json(result) if result.action == "wiki_append" else result.to_json()
    data.setdefault("id", result.data.get("id"))
    inv.emit(data, f"{result.status}: {result.message}")
    return 1 if result.is_error else 0


def run_approve(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.inbox import approve

    return _finish(inv, approve(inv.wiki, inv.actor, args.id, args.content))


def run_reject(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.inbox import reject

    return _finish(inv, reject(inv.wiki, inv.actor, args.id, args.reason))
