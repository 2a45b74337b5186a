"""What every command handler gets: the parsed options, the wiki, the actor, and output helpers."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
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
    """One JSON document on stdout. A long list is written one compact item per line, and a
    document with long lists (the graph's node-link form: 250,000 nodes and edges at 32,000
    pages) one key per line: still easy to read and to grep, each piece encoded by orjson (the
    standard library's C encoder took a sixth of a ``graph --format json``; ``indent`` forces its
    pure-Python one, which cost more than everything else in a warm ``index --json``)."""
    long_list = isinstance(data, list) and len(data) > 50
    if long_list or (isinstance(data, dict) and any(isinstance(v, list) and len(v) > 50
                                                    for v in data.values())):
        import orjson  # (only for the long documents)

        try:
            out = _long_document(data, orjson.dumps, b"\n", b", ", b": ")
        except TypeError:  # orjson refuses a lone surrogate (a file name that is not UTF-8)
            encode = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
            sys.stdout.write(_long_document(data, encode, "\n", ", ", ": "))
            return
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a stream without bytes underneath: write the text
            sys.stdout.write(out.decode("utf-8"))
            return
        sys.stdout.flush()
        buffer.write(out)
        buffer.flush()
        return
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def _long_document(data: Any, dumps: Callable[[Any], Any], nl: Any, comma: Any, colon: Any) -> Any:
    """``data`` (a list, or a dict of lists) as ``dumps`` encodes it (text or bytes; ``nl``,
    ``comma`` and ``colon`` of the same type): one list item or one dict key per line."""
    sep = comma.strip() + nl
    if isinstance(data, list):
        return dumps([])[:1] + nl + sep.join(map(dumps, data)) + nl + dumps([])[1:] + nl
    indent = nl[:0] + comma[-1:] * 2  # two spaces
    items = sep.join(indent + dumps(str(k)) + colon + dumps(v) for k, v in data.items())
    return dumps({})[:1] + nl + items + nl + dumps({})[1:] + nl


def open_wiki(path: Path) -> Wiki:
    """Open a wiki for a command; later issues attach the scope policy here."""
    return Wiki(path)
