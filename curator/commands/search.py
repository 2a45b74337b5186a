"""Search and context injection: ``search`` and ``context`` (docs/design.md §7)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("search", "context")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "search", parents=[parent], help="full-text search, trust-weighted",
        description="Words must all match; \"a phrase\", OR, -word, prefix*, and the filters "
        "layer:L, tag:T, path:P, trust:>=0.5 are understood; a filter that could never match "
        "(layer:bogus, trust:>=7) is a usage error, as --layer bogus is. Snippets mark matched words «so». "
        "Every search first checks every page for changes; the first search of a wiki builds the index.",
    )
    p.add_argument("query", nargs="*", metavar="QUERY", help="the query (several words are joined)")
    p.add_argument("--min-trust", type=float, metavar="F", help="only pages with at least this trust")
    p.add_argument("--layer", metavar="L", help="only pages of this layer (identity, core, context, deep)")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10, max 100)")
    p.add_argument("--expand", action="store_true",
                   help="add the pages linked from and linking to each hit (marked expanded)")
    p.add_argument("--rebuild", action="store_true", help="rebuild the search index first")
    p.set_defaults(handler="curator.commands.search:run_search", sweep_ahead=True)

    p = sub.add_parser(
        "context", parents=[parent], help="the wiki text injected into an agent's prompt",
        description="Identity then core pages the agent may see (no do_not_inject, no auto/), "
        "filled greedily into a byte budget. Each context built is recorded in "
        ".curator/injections.jsonl (see 'curator injections') unless --no-record.",
    )
    p.add_argument("--agent", metavar="ID", help="the agent (default: the --as actor)")
    p.add_argument("--budget", type=int, default=8000, metavar="BYTES", help="byte budget (default 8000)")
    p.add_argument("--query", metavar="Q", help="rank pages within each layer by relevance to Q first")
    p.add_argument("--no-record", action="store_true",
                   help="do not record this context in the injections log (a preview)")
    p.set_defaults(handler="curator.commands.search:run_context")


def run_search(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.search.display import format_score, plain_snippet
    from curator.engine.search.index import MAX_LIMIT

    if not 1 <= args.limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}, not {args.limit}")
    if args.min_trust is not None and not 0.0 <= args.min_trust <= 1.0:
        raise UsageError(f"--min-trust must be between 0 and 1, not {args.min_trust}")
    query = " ".join(args.query)
    index = inv.wiki.search
    if args.rebuild:
        count = index.rebuild()
        if not query:
            inv.emit({"status": "ok", "indexed": count}, f"search index rebuilt: {count} pages")
            return 0
    if not query.strip():
        raise UsageError("nothing to search for: give a QUERY (or --rebuild)")
    hits = index.search(query, inv.actor, min_trust=args.min_trust, layer=args.layer,
                        limit=args.limit, expand=args.expand)
    rows = [h.to_json() for h in hits]
    if inv.json:
        inv.emit(rows)
        return 0
    lines = []
    for h in hits:
        mark = "+" if h.expanded else format_score(h.score)
        lines.append(f"{mark:>10}  {h.path} — {h.title}  [{h.layer}, trust {h.trust:.2f}]")
        if h.snippet:
            lines.append(f"            {plain_snippet(h.snippet)}")
    lines.append(f"{sum(not h.expanded for h in hits)} hits"
                 + (f", {sum(h.expanded for h in hits)} expanded" if args.expand else ""))
    inv.emit(rows, "\n".join(lines))
    return 0


def run_context(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.policy.actor import parse_actor
    from curator.engine.read.agent_context import build_context

    if args.budget < 0:
        raise UsageError(f"--budget must be 0 or more bytes, not {args.budget}")
    actor = parse_actor(f"agent:{args.agent}", getattr(args, "department", None)) if args.agent else inv.actor
    result = build_context(inv.wiki, actor, budget=args.budget, query=args.query)
    if not args.no_record:
        from curator.engine.read.injections import record

        record(inv.wiki, actor, result, query=args.query or None, source="cli")
    if inv.json:
        inv.emit(result.to_json())
    else:
        # Exactly the injected text, nothing added: it can be piped into a prompt as is.
        import sys

        sys.stdout.write(result.text)
        if result.notice:  # on stderr: stdout stays exactly the injected text
            sys.stderr.write(result.notice + "\n")
    return 0
