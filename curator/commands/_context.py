"""What every command handler gets: the parsed options, the wiki, the actor, and output helpers."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from curator.engine.actor import Actor, parse_actor
from curator.engine.wiki import Wiki


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json: bool = bool(getattr(args, "json", False))
        self.actor: Actor = parse_actor(getattr(args, "actor", None), getattr(args, "department", None))
        self._wiki: Wiki | None = None

    @property
    def wiki_dir(self) -> Path:
        return Path(getattr(self.args, "wiki", None) or ".")

    @property
    def wiki(self) -> Wiki:
        """The wiki named by ``--wiki`` (opened on first use)."""
        if self._wiki is None:
            self._wiki = open_wiki(self.wiki_dir)
        return self._wiki

    def emit(self, data: Any, text: str | None = None) -> None:
        """Print ``data`` as JSON with ``--json``, else ``text`` (or the JSON when no text)."""
        if self.json or text is None:
            write_json(data)
        else:
            text = terminal_safe(text)
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def close(self) -> None:
        if self._wiki is not None:
            self._wiki.close()


#: Control characters a terminal would act on (ESC sequences, bells, backspaces, a lone CR, C1
#: controls): everything below U+0020 except tab and newline, DEL, U+0080-U+009F.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]|\r(?!\n)")


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: control characters (a file name with an ANSI escape, say) shown
    as ``\\x1b``-style escapes instead of being acted on. JSON output escapes them by itself."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def write_json(data: Any) -> None:
    """One JSON document on stdout. A long list is written one compact item per line: still easy
    to read and to grep, and it uses the C encoder (``indent`` forces the slow pure-Python one,
    which cost more than everything else in a warm ``index --json`` of 10,000 pages)."""
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
    if isinstance(data, list) and len(data) > 50:
        sys.stdout.write(_long_list(data, dumps) + "\n")
        return
    if isinstance(data, dict) and any(isinstance(v, list) and len(v) > 50 for v in data.values()):
        # e.g. the graph's node-link document (250,000 nodes and edges at 32,000 pages): one key
        # per line, each value in one call of the C encoder (per-item calls cost 4x more)
        items = [f"  {dumps(str(k))}: {dumps(v)}" for k, v in data.items()]
        sys.stdout.write("{\n" + ",\n".join(items) + "\n}\n")
        return
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def _long_list(data: list[Any], dumps: Any) -> str:
    return "[\n" + ",\n".join(dumps(item) for item in data) + "\n]" if data else "[]"


def open_wiki(path: Path) -> Wiki:
    """Open a wiki for a command; later issues attach the scope policy here."""
    return Wiki(path)
