"""Review by meaning: ``curator facts similar | stale | verify ID | retire ID --reason R``
(docs/design.md §15; guide: "Facts by meaning", "Facts gone stale"). Each action is registered and
run by functions of its own, so the actions of the meaning queues stay apart."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from curator.commands.write import finish

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("facts",)


#: The judge's DEFAULT_TOP, written here so that building the parser (``curator --help``) imports no
#: engine module; tests/cli/test_facts_conflicts_cli.py checks that the two agree.
_JUDGE_TOP = 10

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "facts", parents=[parent], help="review the wiki's facts by meaning: similar, stale",
        description="Every list item and prose paragraph of every page is a fact, embedded locally "
        "(no network) and kept in an index under the wiki's local state, brought up to date page by page.")
    what = p.add_subparsers(dest="what", metavar="<similar|conflicts|resolve|stale|verify|retire>", required=True)
    register_similar(what, parent)
    register_conflicts(what, parent)
    register_stale(what, parent)


# --- similar facts ----------------------------------------------------------------------------

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
    inv.emit(lambda: [g.to_json() for g in groups], "\n".join(lines))
    return 0


# --- conflicting facts ------------------------------------------------------------------------

def register_conflicts(what: Any, parent: argparse.ArgumentParser) -> None:

    q = what.add_parser(
        "conflicts", parents=[parent],
        help="pairs of facts about the same subject that cannot both be true: [{id, score, reason, facts: [a, b]}]",
        description="Facts close in meaning that differ where it matters: a number, a date, a duration, a "
        "named person or thing in the same role, a negation, an antonym; the reason says which "
        "('30 days vs 14 days'). Pairs kept as both true ('resolve ID --keep both') are not listed again. "
        "With --judge, the chat model configured in facts-judge.json in the wiki's local state is asked "
        "to confirm or dismiss the best candidates; its verdict is shown (--json: judge: {verdict, why, "
        "model}), never applied.")
    q.add_argument("--page", metavar="PAGE", help="only the conflicts holding one of PAGE's facts")
    q.add_argument("--judge", action="store_true",
                   help="ask the configured judge (facts-judge.json: {\"url\", \"model\", \"api_key\"}) about "
                   "the best candidates")
    q.add_argument("--top", type=int, default=None, metavar="N",
                   help=f"with --judge: how many of the best candidates to ask about (default {_JUDGE_TOP})")
    q.set_defaults(handler="curator.commands.facts:run_conflicts", walk_ahead=True)
    q = what.add_parser(
        "resolve", parents=[parent],
        help="decide a conflict: keep fact 1 or 2 (the other is removed from its page) or both (remembered); "
        "one commit, operator only")
    q.add_argument("id", metavar="ID", help="a conflict's id (or its start) from 'curator facts conflicts'")
    q.add_argument("--keep", required=True, choices=("1", "2", "both"), help="which fact stays")
    q.add_argument("--page", metavar="PAGE", help="look for the conflict among PAGE's only (faster on a big wiki)")
    q.set_defaults(handler="curator.commands.facts:run_resolve", walk_ahead=True)


def run_conflicts(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.facts.conflict_queue import fact_conflicts
    from curator.engine.facts.judge import DEFAULT_TOP, judge_conflicts, judge_for, judge_settings

    if args.top is not None and (not args.judge or args.top < 1):
        raise UsageError("--top N goes with --judge and must be 1 or more")
    judge = judge_for(inv.wiki) if args.judge else None
    if args.judge and judge is None:
        raise UsageError(f"--judge needs a judge: create {judge_settings(inv.wiki.state_dir)} with "
                         '{"url": "http://127.0.0.1:8000/v1", "model": "...", "api_key": "..."} (api_key optional)')
    found = fact_conflicts(inv.wiki, inv.actor, args.page)
    if judge is not None:
        found = judge_conflicts(judge, found, DEFAULT_TOP if args.top is None else args.top)
    lines = []
    for c in found:
        lines.append(f"conflict {c.id} ({c.score:.2f}): {c.reason}")
        lines += [f"    {n}. {f.path}:{f.line}  {f.text}" for n, f in ((1, c.a), (2, c.b))]
        if c.verdict is not None:
            lines.append(f"    judge ({c.verdict['model']}): {c.verdict['verdict']} — {c.verdict['why']}")
    lines.append(f"{len(found)} conflict(s)")
    inv.emit(lambda: [c.to_json() for c in found], "\n".join(lines))
    return 0


def run_resolve(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.conflict_queue import fact_conflicts
    from curator.engine.facts.conflicts import conflict_by_id
    from curator.engine.facts.decisions import resolve

    conflict = conflict_by_id(fact_conflicts(inv.wiki, inv.actor, args.page), args.id)
    result = resolve(inv.wiki, inv.actor, conflict, args.keep)
    return finish(inv, result)


# --- the stale queue --------------------------------------------------------------------------

def register_stale(what: Any, parent: argparse.ArgumentParser) -> None:
    q = what.add_parser("stale", parents=[parent],
                        help="facts and pages due for a look: [{id, path, line, text, due, why}], oldest first",
                        description="A page whose valid_until has passed, and every fact older than its "
                        "freshness rule: a namespace's stale_after, else its layer's [freshness] in "
                        ".scope.toml (by default context = 30d; nothing else goes stale unless configured). "
                        "A fact's age counts from its (verified ...) stamp, else its (added ...) stamp, "
                        "else the page's last commit.")
    q.set_defaults(handler="curator.commands.facts:run_stale")
    q = what.add_parser("verify", parents=[parent],
                        help="the fact (or page) ID still holds: stamp it verified today (one commit, operator only)")
    q.add_argument("id", metavar="ID", help="an id from 'curator facts stale'")
    q.set_defaults(handler="curator.commands.facts:run_verify")
    q = what.add_parser("retire", parents=[parent],
                        help="remove the fact ID from its page, or archive the expired page (one commit, "
                        "operator only)")
    q.add_argument("id", metavar="ID", help="an id from 'curator facts stale'")
    q.add_argument("--reason", required=True, help="why it goes (kept in the commit message)")
    q.set_defaults(handler="curator.commands.facts:run_retire")


def run_stale(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.stale import stale_facts

    entries = stale_facts(inv.wiki, inv.actor)
    lines = [f"{e.id}  {e.path}:{e.line}  due {e.due.isoformat()}  {e.why}\n    {e.text}" for e in entries]
    inv.emit(lambda: [e.to_json() for e in entries], "\n".join(lines) or "no fact is stale")
    return 0


def run_verify(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.stale import verify

    result = verify(inv.wiki, inv.actor, args.id)
    return finish(inv, result)


def run_retire(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.stale import retire

    result = retire(inv.wiki, inv.actor, args.id, args.reason)
    return finish(inv, result)
