"""Many machines, one wiki: ``sync``, ``conflicts``, ``resolve`` (issue 11).

``curator sync`` fetches, merges and pushes as one action (``up_to_date | pulled | pushed | merged |
conflict | held | offline``); ``--setup`` installs the page merge driver, ``--status`` reports without
touching the network; ``--held`` lists incoming commits held for an operator (the trust rules of
:mod:`curator.engine.sync.incoming`), ``--accept`` / ``--drop`` decide them. Error answers (``locked``, ``invalid``, ``error``) exit 1, every other 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("sync", "conflicts", "resolve")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "sync", parents=[parent], help="fetch, merge and push through the wiki's git remote (one action)",
        description="Integration is a merge (published history is never rewritten); pages changed on "
        "both sides are merged by Curator's page merge driver. An unreachable remote answers 'offline' "
        "and changes nothing.",
    )
    p.add_argument("--remote", metavar="NAME", help="the git remote (default: the branch's, else origin)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--setup", action="store_true",
                      help="install the page merge driver (.gitattributes and the repository config)")
    mode.add_argument("--status", action="store_true",
                      help="ahead/behind, last sync and conflicts, without touching the network")
    mode.add_argument("--held", action="store_true",
                      help="the incoming commits the last sync held for an operator, and why")
    mode.add_argument("--accept", action="store_true",
                      help="merge the held incoming commits as they are, then sync (operator)")
    mode.add_argument("--drop", action="store_true",
                      help="merge the held commits with every path they changed kept as it is here, "
                           "then sync (operator)")
    # The frozen (PyInstaller) build runs the merge driver through its own executable.
    mode.add_argument("--merge-driver", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(handler="curator.commands.sync:run_sync")

    p = sub.add_parser("conflicts", parents=[parent],
                       help="the pages the last sync could not merge, and how to resolve them")
    p.add_argument("page", nargs="?", metavar="PAGE",
                   help="print this page's conflicted text (or one side, see --side)")
    p.add_argument("--side", choices=("merged", "ours", "theirs", "base"), default="merged",
                   help="with PAGE: which version to print (default: merged, with conflict markers)")
    p.set_defaults(handler="curator.commands.sync:run_conflicts")

    p = sub.add_parser("resolve", parents=[parent],
                       help="resolve conflicted pages by choosing a side or a file (one action, one commit)")
    p.add_argument("pages", nargs="+", metavar="PAGE")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--ours", action="store_const", const="ours", dest="choice", help="keep this clone's version")
    how.add_argument("--theirs", action="store_const", const="theirs", dest="choice",
                     help="take the remote's version")
    how.add_argument("--file", metavar="F", help="use the content of file F ('-' for stdin), e.g. an edited "
                     "copy of 'curator conflicts PAGE'")
    p.set_defaults(handler="curator.commands.sync:run_resolve")


def _finish(inv: Invocation, result: Any) -> int:
    inv.emit(result.to_json(), f"{result.status}: {result.message}")
    return 1 if result.is_error else 0


def run_sync(inv: Invocation, args: argparse.Namespace) -> int:
    if args.merge_driver is not None:
        from curator.engine.sync.merge_driver import main

        return main(args.merge_driver)
    if args.setup:
        from curator.engine.sync.remote import setup

        return _finish(inv, setup(inv.wiki, inv.actor))
    if args.status:
        return _status(inv, args)
    if args.held:
        return _held(inv)
    if args.accept or args.drop:
        from curator.engine.sync.remote import decide_held

        return _finish(inv, decide_held(inv.wiki, inv.actor, keep=args.accept))
    from curator.engine.sync.remote import sync

    return _finish(inv, sync(inv.wiki, inv.actor, args.remote))


def _held(inv: Invocation) -> int:
    from curator.engine.corpus.lookalike import escape_controls
    from curator.engine.sync.remote import held_changes

    held = held_changes(inv.wiki) or {"held": [], "paths": []}
    lines = [f"{len(held['held'])} incoming commit(s) of {held.get('remote') or 'the remote'} held for an "
             "operator ('curator sync --accept' merges them, '--drop' keeps their changes out):"] \
        if held["held"] else ["nothing is held"]
    for c in held["held"]:
        lines.append(f"  {c['sha'][:12]}  {escape_controls(c['author'])}: {escape_controls(c['subject'])}")
        lines += [f"      {escape_controls(why)}" for why in c["reasons"]]
    inv.emit(held, "\n".join(lines))
    return 0


def _status(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.sync.remote import conflicts, sync_status

    st = sync_status(inv.wiki, args.remote)
    found = conflicts(inv.wiki)
    data = {**st.to_json(), "conflicts": [c.to_json() for c in found]}
    if not st.has_remote:
        text = f"no git remote '{st.remote}': add one with 'git remote add {st.remote} URL'"
    else:
        lines = [f"{st.branch or '(detached)'} -> {st.remote} ({st.url}): {st.ahead} ahead, {st.behind} behind "
                 "(as of the last fetch)",
                 f"last sync: {st.last_sync or 'never'}"
                 + (f"; last attempt {st.last_attempt}: {st.last_status}" if st.last_attempt else "")]
        lines += _conflict_lines(found)
        text = "\n".join(lines)
    inv.emit(data, text)
    return 0


def _conflict_lines(found: list[Any]) -> list[str]:
    if not found:
        return ["no conflicts"]
    lines = [f"{len(found)} conflicted page(s):"]
    for c in found:
        lines.append(f"  {c.path}" + (f"  (chosen: {c.resolution})" if c.resolution else "")
                     + f"\n      resolve: {c.how}")
    lines.append("See a page's versions with 'curator conflicts PAGE [--side ours|theirs|base]'.")
    return lines


def run_conflicts(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import CuratorError
    from curator.engine.sync.remote import conflict_sides, conflicts, match_conflict

    found = conflicts(inv.wiki)
    if args.page is None:
        inv.emit([c.to_json() for c in found], "\n".join(_conflict_lines(found)))
        return 0
    path = match_conflict([c.path for c in found], args.page)
    if path is None:
        raise CuratorError(f"{args.page} is not in conflict"
                           + (f"; conflicted: {', '.join(c.path for c in found)}" if found else ""))
    sides = conflict_sides(inv.wiki, path)
    if inv.json:
        inv.emit({"path": path, **sides})
    else:
        text = sides[args.side]
        sys.stdout.write(text if text is not None else f"({path} does not exist on the {args.side} side)\n")
    return 0


def run_resolve(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import CuratorError, UsageError
    from curator.engine.sync.remote import resolve

    data = None
    choice = args.choice
    if args.file is not None:
        if len(args.pages) != 1:
            raise UsageError("--file resolves one page at a time")
        choice = "file"
        try:
            data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
        except OSError as exc:
            raise CuratorError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    return _finish(inv, resolve(inv.wiki, inv.actor, args.pages, choice, data))
