"""The agents' MCP server: ``curator mcp --wiki DIR --agent ID [--department D]`` (docs/design.md §11)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("mcp",)

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp", parents=[parent], help="serve the wiki to one agent over MCP (stdio)",
        description="One long-lived MCP server process per agent, speaking JSON-RPC on stdin/stdout. "
        "Every tool call runs as agent:ID with the given --department (scope policy for reads and "
        "writes); every write is one commit authored as the agent.",
    )
    p.add_argument("--agent", required=True, metavar="ID", help="the agent's id (calls run as agent:ID)")
    p.add_argument("--sync-every", type=float, default=0.0, metavar="SECONDS",
                   help="sync with the git remote on this period and soon after each append "
                        "(default 0: never; see curator sync)")
    p.set_defaults(handler="curator.commands.mcp:run_mcp")


def run_mcp(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.mcp_server import serve

    if getattr(args, "actor", None) not in (None, f"agent:{args.agent}"):
        raise UsageError("curator mcp acts as agent:<--agent>; do not also pass --as")
    if args.sync_every < 0:
        raise UsageError("--sync-every must be 0 (off) or a number of seconds")
    serve(inv.wiki, args.agent, getattr(args, "department", None), args.sync_every)
    return 0
