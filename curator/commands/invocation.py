"""One run of the command line, as every command handler gets it (``inv``): the parsed options,
the wiki, the actor, and output helpers. (Not to be confused with an action's
:class:`~curator.engine.write.actions.ActionContext` or an agent's context, :mod:`curator.engine.read.agent_context`.)"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from curator.engine.corpus.walker import json_document_bytes
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.wiki import Wiki


class Invocation:
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
        """Print ``data`` as JSON with ``--json``, else ``text`` (or the JSON when no text).
        ``data`` may be a function making it: a long list's JSON is made only when printed
        (31,000 duplicate families' took 0.2 s of a text answer)."""
        if self.json or text is None:
            write_json(data() if callable(data) else data)
        else:
            text = terminal_safe(text)
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def close(self) -> None:
        if self._wiki is not None:
            self._wiki.close()


#: Control characters a terminal would act on (ESC sequences, bells, backspaces, a lone CR, C1
#: controls): everything below U+0020 except tab and newline, DEL, U+0080-U+009F.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]|\r(?!\n)")


#: Characters of text a long answer is made terminal-safe by at a time (:func:`terminal_safe`).
SAFE_BLOCK = 1 << 16


def terminal_safe(text: str) -> str:
    """``text`` for a terminal: control characters (a file name with an ANSI escape, say) shown
    as ``\\x1b``-style escapes instead of being acted on, and bidirectional and invisible format
    characters as ``<U+202E>`` (a path or fact read for a decision reads as stored, never
    reordered nor hiding a zero-width character). JSON output keeps the stored text.

    A long answer is looked at a block of whole lines at a time, and a block with nothing to show
    otherwise (all of it printable, but for its line breaks and tabs: nearly every block) is
    taken as it is after one look in C (lint's 240,000 problems at 300,000 pages: 0.55 s ->
    0.2 s)."""
    if len(text) <= SAFE_BLOCK:
        return _terminal_safe(text)
    out, start = [], 0
    while start < len(text):
        end = text.find("\n", start + SAFE_BLOCK)  # (a block ends after a line break: "\r\n" is not cut)
        end = len(text) if end < 0 else end + 1
        out.append(_terminal_safe(text[start:end]))
        start = end
    return "".join(out)


def _terminal_safe(text: str) -> str:
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # (a control or format character, a lone "\r" too, is not printable)
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    if text.isascii():
        return text
    from curator.engine.corpus.lookalike import escape_controls

    return escape_controls(text, keep_lines=True)


def write_json(data: Any) -> None:
    """One JSON document on stdout (see :func:`~curator.engine.corpus.walker.json_document`): the bytes
    as they are, so a long graph document is not decoded and encoded again."""
    write_json_bytes(json_document_bytes(data))


def write_json_bytes(out: bytes) -> None:
    """Print a JSON document's bytes (:func:`write_json`'s, saved): as they are."""
    write_bytes(out)


def packed_answer(tag: bytes, data: bytes) -> bytes:
    """An answer saved in the page cache as it was printed (``data``), under the ``tag`` of its
    format. Compressed at level 1: a listing of 300,000 pages in 0.14 s where level 6 took 0.48 s,
    after every change, for a blob 25 % larger."""
    import zlib

    return zlib.compress(tag + data, 1)


def unpacked_answer(blob: bytes | None, tag: bytes) -> bytes | None:
    """What :func:`packed_answer` saved with ``tag`` (None: nothing saved, a damaged blob, or
    one of another format, which is computed again)."""
    import zlib

    if blob is None:
        return None
    try:
        data = zlib.decompress(blob)
    except zlib.error:
        return None
    return data[len(tag):] if data.startswith(tag) else None


#: A lone surrogate: a byte of a file name that is not UTF-8, as Python decodes it.
_SURROGATE = re.compile("[\ud800-\udfff]")


def output_bytes(text: str) -> bytes:
    """``text`` as the standard output prints it: UTF-8, a file name's byte that is not UTF-8 (a
    lone surrogate) as U+FFFD (as the command line's streams do, see ``cli._tolerant_output``),
    so an answer printed or saved as bytes is valid UTF-8 like any other."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def write_bytes(out: bytes) -> None:
    """Print ``out`` as it is (a JSON document's bytes, or text already terminal-safe)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a stream without bytes underneath: write the text
        sys.stdout.write(out.decode("utf-8", "surrogateescape"))
        return
    sys.stdout.flush()
    buffer.write(out)
    buffer.flush()


def open_wiki(path: Path) -> Wiki:
    """Open a wiki for a command; later issues attach the scope policy here."""
    return Wiki(path)
