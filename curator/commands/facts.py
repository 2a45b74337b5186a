"""Facts by meaning: ``curator facts <action>`` (issue 41). Each action is registered and run by
functions of its own, so the actions of the meaning queues stay apart."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("facts",)


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    facts = sub.add_parser(
        "facts", parents=[parent], help="facts by meaning: similar",
        description="Every list item and prose paragraph of every page is a fact, embedded locally "
        "(no network) and kept in an index under the wiki's local state, brought up to date page by page.")
    fsub = facts.add_subparsers(dest="facts_command", metavar="<action>", required=True,
                                parser_class=type(facts))
    register_similar(fsub, parent)


def register_similar(fsub: Any, parent: argparse.ArgumentParser) -> None:
    p = fsub.add_parser(
        "similar", parents=[parent],
        help="groups of facts that say the same thing, best first: [{id, score, facts: [{path, line, text}]}]",
        description="Facts whose meanings are close (score 0-1 from the embedding model; a group's score is "
        "its best pair's), on one page or across pages. Scores rank, they do not decide: read the group "
        "before merging anything.")
    p.add_argument("--page", metavar="PAGE", help="only the groups holding one of PAGE's facts (PAGE's fact first)")
    p.add_argument("--min-score", type=float, default=None, metavar="S",
                   help="lowest score that makes two facts similar (default: the measured 0.65)")
    p.set_defaults(handler="curator.commands.facts:run_similar", walk_ahead=True)


def run_similar(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.facts.similar import SIMILAR_MIN, find_similar

    threshold = SIMILAR_MIN if args.min_score is None else args.min_score
    if not 0.0 < threshold <= 1.0:
        raise UsageError(f"--min-score must be above 0 and at most 1, not {args.min_score}")
    groups = find_similar(inv.wiki, inv.actor, args.page, threshold)
    lines = []
    for g in groups:
        lines.append(f"group {g.id} ({g.score:.2f}, {len(g.facts)} facts)")
        lines += [f"    {f.path}:{f.line}  {f.text}" for f in g.facts]
    lines.append(f"{len(groups)} group(s) of similar facts")
    inv.emit([g.to_json() for g in groups], "\n".join(lines))
    return 0
