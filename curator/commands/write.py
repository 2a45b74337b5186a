"""Writing through the one door: ``append``, ``ingest``, ``history``, ``undo``, ``recover`` (docs/design.md §4, §5).

Every command here runs engine actions; error answers (``locked``, ``denied``, ``invalid``) exit 1,
every other answer 0.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation
    from curator.engine.write.actions import ActionResult


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("append", "ingest", "history", "undo", "redo", "recover")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "append", parents=[parent], help="append one fact to the page SLUG routes to",
        description="Exact slug match, else similar pages are offered as candidates (nothing is "
        "written) unless --create-new; a fact the page already states is declined as duplicate. "
        "An agent's write that the [review] rules of .scope.toml hold is answered 'pending' (queued "
        "in the review inbox, see 'curator inbox'); a fact the operator rejected, 'rejected'. "
        "Routing sees only the pages the writer may see: a slug taken by a hidden page is denied, "
        "one shared by pages read by different people is invalid until given as a path. A fact "
        "from an agent is at most 4,000 characters, and 1,000 per line. A fact saying in other "
        "words what a fact of the page says is a duplicate too. Once the fact index exists ('curator "
        "facts similar' builds it), every answer lists the three facts anywhere in the wiki (that "
        "the writer may see) closest in meaning to it.",
    )
    p.add_argument("slug", metavar="SLUG",
                   help="the page's name, e.g. ann-smith (or its path, e.g. departments/hr/salaries)")
    p.add_argument("content", metavar="CONTENT", help="the fact, one sentence")
    p.add_argument("--link", action="append", default=[], metavar="L",
                   help="a page to link from the bullet (repeatable)")
    p.add_argument("--create-new", action="store_true",
                   help="create the page SLUG even when similar pages exist")
    p.set_defaults(handler="curator.commands.write:run_append")

    p = sub.add_parser("ingest", parents=[parent], help="store a raw source in raw/ (not a page)")
    p.add_argument("name", metavar="NAME", help="file name in raw/ (reduced to A-Z a-z 0-9 . _ -)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", metavar="F", help="read the source from this file ('-' for stdin)")
    src.add_argument("--url", metavar="U", help="fetch the source from an http(s) URL at a public address (no loopback or "
                            "private addresses, no redirect to another scheme)")
    p.set_defaults(handler="curator.commands.write:run_ingest")

    p = sub.add_parser("history", parents=[parent], help="the wiki's actions, newest first")
    p.add_argument("--limit", type=int, default=30, metavar="N", help="at most N entries (default 30)")
    p.set_defaults(handler="curator.commands.write:run_history")

    p = sub.add_parser("undo", parents=[parent],
                       help="revert the newest action not yet reverted (itself an action)",
                       description="With --agent and --since: revert every write of that agent since "
                       "DATE in one commit, or refuse, naming the page, when a later change touches "
                       "the same lines (see 'curator activity').")
    p.add_argument("--commit", metavar="SHA", help="revert this action's commit instead")
    p.add_argument("--agent", metavar="ID", help="revert all of this agent's writes since --since")
    p.add_argument("--since", metavar="DATE", help="with --agent: since DATE (YYYY-MM-DD or ISO 8601)")
    p.set_defaults(handler="curator.commands.write:run_undo")

    p = sub.add_parser("redo", parents=[parent],
                       help="re-apply what the last undo took back (a revert of that undo; none after a new action)")
    p.set_defaults(handler="curator.commands.write:run_redo")

    p = sub.add_parser("recover", parents=[parent],
                       help="finish an interrupted action (rolled wholly forward or back), repair a stale git "
                            "index, and rebuild lost facts from the journal")
    p.set_defaults(handler="curator.commands.write:run_recover")


def finish(inv: Invocation, result: ActionResult, data: dict[str, Any] | None = None) -> int:
    inv.emit(data if data is not None else result.to_json(), f"{result.status}: {result.message}")
    return 1 if result.is_error else 0


def run_append(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.corpus.lookalike import escape_controls
    from curator.engine.facts.door import append_with_similar
    from curator.engine.write.append import to_cli_json

    result = append_with_similar(inv.wiki, args.slug, args.content, args.link, args.create_new, inv.actor)
    lines = [f"{result.status}: {result.message}"]
    similar = result.data.get("similar") or []
    if similar:
        lines.append("closest in meaning elsewhere:")
        # (page text read as stored: no bidi reordering, no forged lines)
        lines += [f"  {escape_controls(s['path'])}:{s['line']} ({s['score']:.2f})  {escape_controls(s['text'])}"
                  for s in similar]
    inv.emit(to_cli_json(result), "\n".join(lines))
    return 1 if result.is_error else 0


def run_ingest(inv: Invocation, args: argparse.Namespace) -> int:
    import sys

    from curator.engine.errors import CuratorError
    from curator.engine.write.append import MAX_INGEST_BYTES, ingest

    if args.file is not None:
        try:
            if args.file == "-":
                data = sys.stdin.buffer.read(MAX_INGEST_BYTES + 1)
            else:
                with open(args.file, "rb") as f:
                    data = f.read(MAX_INGEST_BYTES + 1)
        except OSError as exc:
            raise CuratorError(f"cannot read {args.file}: {exc.strerror or exc}") from None
        result = ingest(inv.wiki, args.name, data=data, actor=inv.actor)
    else:
        result = ingest(inv.wiki, args.name, url=args.url, actor=inv.actor)
    return finish(inv, result)


def run_history(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.write.actions import history

    if args.limit <= 0:
        raise UsageError(f"--limit must be a positive number, not {args.limit}")
    entries = history(inv.wiki, args.limit, inv.actor)
    lines = [f"{e.commit[:10]}  {e.time[:19].replace('T', ' ')}  {e.actor:<18}  {e.subject}"
             for e in entries]
    inv.emit(lambda: [e.to_json() for e in entries], "\n".join(lines) if lines else "no commits yet")
    return 0


def run_undo(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.write.actions import revert, undo

    if args.agent is not None or args.since is not None:
        if args.agent is None or args.since is None or args.commit:
            raise UsageError("use --agent ID and --since DATE together (and not with --commit)")
        from curator.engine.history.provenance import undo_agent

        return finish(inv, undo_agent(inv.wiki, inv.actor, args.agent, args.since))
    result = revert(inv.wiki, inv.actor, args.commit) if args.commit else undo(inv.wiki, inv.actor)
    return finish(inv, result)


def run_redo(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.write.actions import redo

    return finish(inv, redo(inv.wiki, inv.actor))


def run_recover(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.write.actions import recover_pending
    from curator.engine.write.append import rebuild_from_journal

    pending = recover_pending(inv.wiki)
    if pending is not None and pending.is_error:
        return finish(inv, pending)
    result = rebuild_from_journal(inv.wiki, inv.actor)
    data = result.to_json()
    data["interrupted"] = pending.to_json() if pending is not None else None
    text = result.message
    if pending is not None:
        text = f"{pending.message}; {text}"
    inv.emit(data, f"{result.status}: {text}")
    return 1 if result.is_error else 0
