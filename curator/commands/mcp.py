"""The agents' door: ``curator mcp`` (one agent on stdio, or every agent over HTTP) and
``curator agents add|list|revoke`` (the HTTP agents' tokens); docs/design.md §11."""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("mcp", "agents")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    # `curator mcp` offers only what applies to it: no --as (the actor is always an agent), no
    # --json (it prints no answer), no --shared.
    mcp_parent = argparse.ArgumentParser(add_help=False)
    mcp_parent.add_argument("--wiki", metavar="DIR", default=argparse.SUPPRESS,
                            help="the wiki root (default: the current folder)")
    p = sub.add_parser(
        "mcp", parents=[mcp_parent], help="serve the wiki to agents over MCP (stdio, or HTTP with tokens)",
        description="On stdio: one long-lived MCP server process per agent, speaking JSON-RPC on "
        "stdin/stdout; every tool call runs as agent:ID with the given --department. With --http: "
        "one server for many agents at once, MCP's streamable HTTP at /mcp; each request's bearer "
        "token (curator agents add) says which agent it is and in which department. Either way "
        "the scope policy applies to reads and writes, and every write is one commit authored as "
        "the agent.",
    )
    p.add_argument("--agent", metavar="ID", help="stdio: the agent's id (calls run as agent:ID)")
    p.add_argument("--department", metavar="D", default=argparse.SUPPRESS,
                   help="stdio: the agent's department")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (e.g. "
                        "127.0.0.1:8765); an address other than loopback needs --tls-cert and "
                        "--tls-key, or --behind-proxy")
    p.add_argument("--tls-cert", metavar="FILE", help="with --http: serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", metavar="FILE", help="with --http: the certificate's private key (PEM)")
    p.add_argument("--behind-proxy", action="store_true",
                   help="with --http: bind another address without TLS, because a reverse proxy in "
                        "front terminates TLS (a warning is printed)")
    p.add_argument("--sync-every", type=float, default=0.0, metavar="SECONDS",
                   help="sync with the git remote on this period and soon after each append "
                        "(default 0: never; see curator sync)")
    p.set_defaults(handler="curator.commands.mcp:run_mcp")

    a = sub.add_parser("agents", parents=[parent], help="the agents allowed to reach curator mcp --http, and their tokens",
                       description="Each agent gets a bearer token, printed once; the wiki's local "
                       "state keeps only its SHA-256 (never git, never the token). Revoking an agent "
                       "takes effect on its next request, without restarting the server.")
    what = a.add_subparsers(dest="what", metavar="<add|list|revoke>", required=True)
    q = what.add_parser("add", parents=[parent], help="register an agent and print its token (once)")
    q.add_argument("id", metavar="ID", help="the agent's id (its calls run as agent:ID)")
    what.add_parser("list", parents=[parent], help="the registered agents (never their tokens)")
    q = what.add_parser("revoke", parents=[parent], help="remove an agent's token")
    q.add_argument("id", metavar="ID")
    a.set_defaults(handler="curator.commands.mcp:run_agents")


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port), or a one-line usage error."""
    from curator.engine.errors import UsageError

    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--http wants HOST:PORT (e.g. 127.0.0.1:8765), not {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to any address


def run_mcp(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError

    if args.sync_every < 0:
        raise UsageError("--sync-every must be 0 (off) or a number of seconds")
    if args.http is None:
        if any((args.tls_cert, args.tls_key, args.behind_proxy)):
            raise UsageError("--tls-cert, --tls-key and --behind-proxy apply to --http only")
        if not args.agent:
            raise UsageError("curator mcp needs --agent ID (stdio) or --http HOST:PORT")
        if getattr(args, "actor", None) not in (None, f"agent:{args.agent}"):
            raise UsageError("curator mcp acts as agent:<--agent>; do not also pass --as")
        from curator.mcp_server import serve

        serve(inv.wiki, args.agent, getattr(args, "department", None), args.sync_every)
        return 0
    if args.agent or getattr(args, "department", None) or getattr(args, "actor", None):
        raise UsageError("with --http each request's token names its agent and department; "
                         "drop --agent, --department and --as")
    host, port = parse_host_port(args.http)
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("give both --tls-cert and --tls-key")
    tls = bool(args.tls_cert)
    if not is_loopback(host):
        if not tls and not args.behind_proxy:
            raise UsageError(f"refusing to serve {host} without TLS: give --tls-cert and --tls-key, or "
                             "--behind-proxy when a reverse proxy terminates TLS")
        if not tls:
            sys.stderr.write(f"warning: serving plain HTTP on {host}:{port}; tokens cross the network "
                             "in clear text unless the proxy in front terminates TLS\n")
    from curator.mcp_server import serve_http

    def ready(url: str) -> None:
        sys.stderr.write(f"serving MCP at {url} (Ctrl-C to stop)\n")
        sys.stderr.flush()

    serve_http(inv.wiki, host, port, tls_cert=args.tls_cert, tls_key=args.tls_key,
               sync_every=args.sync_every, on_ready=ready)
    return 0


def run_agents(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.policy.tokens import TokenStore

    if not inv.actor.is_operator:
        inv.emit({"status": "denied"}, "denied: only the operator manages the agents' tokens")
        return 1
    store = TokenStore(inv.wiki.state_dir)
    if args.what == "add":
        token = store.add(args.id, getattr(args, "department", None))
        inv.emit({"agent": args.id, "token": token},
                 f"{token}\nThe token of agent:{args.id}; it is shown only this once. The agent sends it as "
                 "'Authorization: Bearer <token>'.")
        return 0
    if args.what == "list":
        agents = store.agents()
        inv.emit([{"agent": a.id, "department": a.department, "created": a.created} for a in agents],
                 "\n".join(f"{a.id}  {a.department or '-'}  {a.created}" for a in agents)
                 or "no agent has a token")
        return 0
    store.revoke(args.id)
    inv.emit({"status": "revoked", "agent": args.id}, f"revoked: agent {args.id} has no token any more")
    return 0
