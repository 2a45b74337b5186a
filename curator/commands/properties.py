"""``curator set PAGE PROPERTY VALUE``: the properties panel's edits from the command line."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("set",)

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("set", parents=[parent],
                       help="set a page's layer, trust, tags or do_not_inject (one commit)")
    p.add_argument("page", metavar="PAGE")
    p.add_argument("property", choices=("layer", "trust", "tags", "do_not_inject"))
    p.add_argument("value", help="the new value (tags: comma-separated; do_not_inject: true|false)")
    p.set_defaults(handler="curator.commands.properties:run_set")


def run_set(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.write.properties import set_property

    result = set_property(inv.wiki, inv.actor, args.page, args.property, args.value)
    inv.emit(result.to_json(), result.message + (f" [{result.commit[:8]}]" if result.commit else ""))
    return 1 if result.is_error else 0
