"""Review by meaning: ``facts stale | verify ID | retire ID --reason R`` (docs/design.md §15,
guide: "Facts gone stale")."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("facts",)


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("facts", parents=[parent], help="review the wiki's facts: the stale queue")
    what = p.add_subparsers(dest="what", metavar="<stale|verify|retire>", required=True)
    register_stale(what, parent)


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
    inv.emit([e.to_json() for e in entries], "\n".join(lines) or "no fact is stale")
    return 0


def run_verify(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.stale import verify

    result = verify(inv.wiki, inv.actor, args.id)
    inv.emit(result.to_json(), f"{result.status}: {result.message}")
    return 1 if result.is_error else 0


def run_retire(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.facts.stale import retire

    result = retire(inv.wiki, inv.actor, args.id, args.reason)
    inv.emit(result.to_json(), f"{result.status}: {result.message}")
    return 1 if result.is_error else 0
