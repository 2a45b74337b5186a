"""``curator gui``: the desktop station."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from curator.views.review import FACT_QUEUES
from curator.views.shell.registry import VIEWS, check_view

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("gui",)

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("gui", parents=[parent], help="open the curation station (a wiki or a home)")
    p.add_argument("dir", nargs="?", help="wiki or home folder (default: the last one, else the demo wiki)")
    p.add_argument("--screenshot", metavar="FILE",
                   help="render the window to a PNG once loaded, then exit (prints 'usable' the moment "
                        "the window is usable: its page list filled, the first page shown)")
    p.add_argument("--view", default="main", type=_view,
                   help="with --screenshot, the view shown: main (as it opens: Health), page (the start page), "
                        f"page:SLUG, {', '.join(name for name, _, _ in VIEWS)}, facts:QUEUE "
                        f"({', '.join(FACT_QUEUES)}); an unknown one is refused before the window opens")
    p.add_argument("--theme", choices=("system", "light", "dark"),
                   help="light or dark, or follow the desktop (remembered, as View > Theme)")
    p.set_defaults(handler="curator.commands.gui:run_gui")


def _view(value: str) -> str:
    """``--view`` checked while the arguments are parsed: an unknown view is a usage error (exit
    2, one line) before any window is made, not an error printed after the window was drawn."""
    try:
        return check_view(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_gui(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.views.shell.app import run

    target = args.dir or getattr(args, "wiki", None)
    return run(target, screenshot=args.screenshot, view=args.view, theme=args.theme)
