"""``curator gui``: the desktop station."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

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
    p.add_argument("--view", default="main",
                   help="with --screenshot: main (as it opens: Health)|health|page|page:SLUG|graph|dedup|links|"
                        "lint|facts|facts:similar|facts:conflicts|facts:stale|inbox|auto|history|policy")
    p.add_argument("--theme", choices=("system", "light", "dark"),
                   help="light or dark, or follow the desktop (remembered, as View > Theme)")
    p.set_defaults(handler="curator.commands.gui:run_gui")


def run_gui(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.views.shell.app import run

    target = args.dir or getattr(args, "wiki", None)
    return run(target, screenshot=args.screenshot, view=args.view, theme=args.theme)
