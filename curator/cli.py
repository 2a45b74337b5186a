"""The ``curator`` command line (docs/design.md §11).

This module stays import-light on purpose (``curator --help`` must not pay for Qt or
YAML): it only builds the argument parser. Each command group lives in
``curator/commands/<group>.py`` with a ``register(subparsers, parent)`` function; handlers are
named as ``"module:function"`` strings and imported only when that command runs.

Exit status: 0 for every non-error answer, 1 for an error answer (``locked``, ``denied``,
``invalid``, a missing page, ...), 2 for a usage error. Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

#: Command groups, in the order their commands appear in ``--help``.
COMMAND_GROUPS: tuple[str, ...] = ("read", "write", "inbox", "provenance", "properties", "graph", "facts", "links",
                                  "search", "scope", "sync", "operators", "gui", "mcp")


def _terminal_columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it (``COLUMNS``, else the
    terminal of stdout, else 80), found without importing :mod:`shutil` (and with it bz2 and lzma)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter with its width found by :func:`_terminal_columns`: argparse makes
    one for every option it adds, and its own import of shutil cost every command a few ms."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit 2 (and whose help is laid out by
    :class:`_Formatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Options accepted before and after the command name (``curator --json index`` or
    ``curator index --json``)."""
    d = argparse.SUPPRESS if suppress else None
    parser.add_argument("--wiki", metavar="DIR", default=d,
                        help="the wiki root (default: the current folder)")
    parser.add_argument("--as", dest="actor", metavar="ACTOR", default=d,
                        help="act as 'operator' (default), 'agent:<id>' or 'capability:<name>'")
    parser.add_argument("--department", metavar="D", default=d, help="the agent's department")
    parser.add_argument("--shared", metavar="DIR", default=d,
                        help="the shared wiki (default: shared/wiki of the enclosing home)")
    parser.add_argument("--json", action="store_true", default=d if suppress else False,
                        help="print one JSON document on stdout")


#: Global options that take a value (skipped when looking for the command name).
_VALUE_OPTIONS = frozenset({"--wiki", "--as", "--department", "--shared"})


def _command_at(argv: Sequence[str]) -> int | None:
    """Where the command name is in ``argv`` (the first word that is not a global option or its value)."""
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg in _VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return i
    return None


def _command_of(argv: Sequence[str]) -> str | None:
    """The command name in ``argv`` (see :func:`_command_at`)."""
    at = _command_at(argv)
    return argv[at] if at is not None else None


#: Which group holds each command (every group's ``COMMANDS``, written out: finding the group of
#: ``search`` by importing each group until one declares it cost a one-shot command ~10 ms; a test
#: checks that this map and the groups' ``COMMANDS`` agree).
COMMAND_GROUP: dict[str, str] = {
    **dict.fromkeys(("init", "trust", "index", "read", "neighbors", "read-all", "lint"), "read"),
    **dict.fromkeys(("append", "ingest", "history", "undo", "redo", "recover"), "write"),
    "inbox": "inbox",
    **dict.fromkeys(("blame", "injections", "activity"), "provenance"),
    "set": "properties",
    **dict.fromkeys(("graph", "path", "explain", "dedup", "dismiss", "merge", "move", "archive"), "graph"),
    "facts": "facts",
    **dict.fromkeys(("links", "health"), "links"),
    **dict.fromkeys(("search", "context"), "search"),
    **dict.fromkeys(("scope", "file-doc", "auto"), "scope"),
    **dict.fromkeys(("sync", "conflicts", "resolve"), "sync"),
    "operators": "operators",
    "gui": "gui",
    **dict.fromkeys(("mcp", "agents"), "mcp"),
}


def _groups_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """Only the command group that holds the command being run: building every command's
    parser costs ~12 ms, a tenth of an agent's whole ``curator append``. Help, a missing or an
    unknown command get every group (so the listing and the error are complete)."""
    group = COMMAND_GROUP.get(_command_of(sys.argv[1:] if argv is None else argv) or "")
    return (group,) if group is not None else COMMAND_GROUPS


def build_parser(groups: Sequence[str] = COMMAND_GROUPS) -> argparse.ArgumentParser:
    from curator import __version__

    parser = _Parser(
        prog="curator",
        description="Curator: the curation station for LLM-maintained markdown wikis. "
        "The GUI, this command line and the agents' MCP server drive one engine; every change "
        "is one git commit.",
        epilog="A PAGE may be given as its path relative to the wiki root or as its slug.",
    )
    parser.add_argument("--version", action="version", version=f"curator {__version__}")
    _global_options(parser, suppress=False)
    parent = _Parser(add_help=False)
    _global_options(parent, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_Parser)
    for group in groups:
        module = importlib.import_module(f"curator.commands.{group}")
        module.register(sub, parent)
    return parser


def _replace_undecodable(exc: UnicodeError) -> tuple[bytes, int]:
    """Codec error handler: a file name's bytes that are not UTF-8 (lone surrogates) print as
    U+FFFD, so one such name never stops a command's output. (An encoder's replacement must be
    bytes unless it is ASCII.)"""
    if isinstance(exc, UnicodeEncodeError):
        return "\ufffd".encode() * (exc.end - exc.start), exc.end
    raise exc


def _tolerant_output() -> None:
    import codecs

    codecs.register_error("curator-replace", _replace_undecodable)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:  # also over a C locale's surrogateescape: output stays UTF-8
            reconfigure(errors="curator-replace")


#: The commands that check every page before they answer, by what they start ahead: "walk" (the
#: store's walk, ``walk_ahead=True`` in their parser) or "sweep" (the search index's,
#: ``sweep_ahead=True``). Written out, as :data:`COMMAND_GROUP` is, so the check starts before the
#: parser is built (~15 ms of a warm ``index``); a test checks this map against the parsers.
AHEAD: dict[str, str] = {
    **dict.fromkeys(("index", "read", "neighbors", "read-all", "lint", "graph", "path", "explain", "dedup",
                     "health", "links unresolved", "facts similar", "facts conflicts", "facts resolve"), "walk"),
    "search": "sweep",
}


def _ahead_of(argv: Sequence[str]) -> tuple[str, str] | None:
    """What the console script's ``argv`` starts ahead (see :data:`AHEAD`) and for which root
    (``--wiki``, else the current folder); None for help, a version, or any other command. Only
    a guess made before parsing: :func:`_start_ahead` checks it against the parsed options."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return None
    at = _command_at(argv)
    if at is None:
        return None
    command = argv[at]
    kind = AHEAD.get(command) or AHEAD.get(f"{command} {_command_of(argv[at + 1:]) or ''}")
    if kind is None:
        return None
    root = "."
    for i, arg in enumerate(argv):  # (the last --wiki wins, as argparse has it)
        if arg == "--wiki" and i + 1 < len(argv):
            root = argv[i + 1]
        elif arg.startswith("--wiki="):
            root = arg.removeprefix("--wiki=")
    return kind, root


def _start_ahead(kind: str, root: str) -> bool:
    """Start the walk (or sweep) of ``root`` in a child process, while this one builds the parser
    and imports the program (see walker.walk_ahead)."""
    from curator.engine.corpus import walker

    return walker.walk_ahead(root) if kind == "walk" else walker.sweep_ahead(root)


def _run(argv: Sequence[str] | None) -> int:
    _tolerant_output()
    # A command that reads the whole wiki first checks every page's stamp: that check starts
    # first, from the command line as written, and the parsed options confirm it below.
    guess = _ahead_of(sys.argv[1:]) if argv is None else None
    ahead = guess is not None and _start_ahead(*guess)
    try:
        parser = build_parser(_groups_for(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        kind = "walk" if getattr(args, "walk_ahead", False) else "sweep" if getattr(args, "sweep_ahead", False) else None
        wanted = (kind, getattr(args, "wiki", None) or ".") if argv is None and kind else None
        if wanted != guess:
            # (the guess missed: an option spelled another way, say) the parsed command's check
            # starts now; a check started for another root is never taken (drop_ahead ends it)
            ahead = (wanted is not None and _start_ahead(*wanted)) or ahead
        return _call(args)
    finally:
        if ahead:
            from curator.engine.corpus.walker import drop_ahead

            drop_ahead()  # (a walk no refresh took: an error came first)


def _call(args: argparse.Namespace) -> int:
    """Run the parsed command's handler."""
    module_name, _, func_name = args.handler.partition(":")
    handler = getattr(importlib.import_module(module_name), func_name)
    from curator.commands.invocation import Invocation

    inv = Invocation(args)
    try:
        return int(handler(inv, args) or 0)
    finally:
        inv.close()


#: Commands that run for long (a window, a server, a sync loop): they keep the cyclic collector.
LONG_RUNNING = frozenset({"gui", "mcp", "sync"})


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``curator`` console script (``argv=None``) and of in-process callers."""
    if argv is None:
        args = sys.argv[1:]
        if getattr(sys, "frozen", False):
            import multiprocessing  # a frozen build's worker processes start through here

            multiprocessing.freeze_support()
        if not LONG_RUNNING.intersection(args):
            # A one-shot command on a 32,000-page wiki builds millions of small objects, none of
            # them cyclic, and the cyclic collector re-scanned them all again and again (it
            # doubled `graph` and `lint`). Reference counting still frees everything.
            import gc

            gc.disable()
            # (and a new dedup basis, due after many appends, is made by a process of its own:
            # this command answers without waiting for it)
            from curator.engine.dedup.detached import one_shot_process

            one_shot_process()
    code = _main(argv)
    if argv is None:
        # The console script exits right after this. Freezing the heap spares the interpreter's
        # final garbage collection a scan of every cached page (~0.1 s of a warm 10k-page index).
        import gc

        gc.freeze()
    return code


def _main(argv: Sequence[str] | None) -> int:
    try:
        return _run(argv)
    except SystemExit as exc:
        # argparse exits for --help (0) and usage errors (2); in-process callers get the status
        # back like any other answer, and the console script passes it to sys.exit all the same.
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        sys.stderr.write(f"curator: error: {exc.code}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("curator: interrupted\n")
        return 130
    except BrokenPipeError:
        # `curator index | head`: the reader left; that is not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # every error reaches the user as one line, never a traceback
        from curator.commands.invocation import terminal_safe
        from curator.engine.errors import CuratorError

        if isinstance(exc, CuratorError):
            sys.stderr.write(f"curator: error: {terminal_safe(str(exc))}\n")
            return exc.exit_code
        if os.environ.get("CURATOR_DEBUG"):
            raise
        from curator.engine.errors import is_disk_full

        if is_disk_full(exc):  # (outside an action: nothing of the wiki was written or committed)
            sys.stderr.write("curator: error: disk full: nothing was committed; free some space and try again\n")
            return 1
        first = terminal_safe(str(exc).splitlines()[0]) if str(exc) else ""
        sys.stderr.write(
            f"curator: internal error: {type(exc).__name__}: {first} "
            "(run with CURATOR_DEBUG=1 for a traceback)\n"
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
