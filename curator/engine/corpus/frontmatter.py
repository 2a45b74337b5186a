"""YAML frontmatter: tolerant splitting and loading, and minimal in-place rewriting (docs/design.md §3).

Reading never fails: malformed, unclosed or non-mapping frontmatter yields empty metadata and a
problem string that lint reports. Alias bombs are bounded twice: a cap on alias events before the
YAML is constructed, and a node budget while it is converted to plain JSON-safe values.

Rewriting edits only the top-level keys it is asked to change, line by line, so unknown keys,
comments, key order and quoting of everything else survive untouched.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import re
from dataclasses import dataclass
from typing import Any

# PyYAML is imported on first use (most pages never need it: see the fast path below), which
# keeps it out of the start-up of commands like ``curator index``.


@functools.cache
def _yaml() -> tuple[Any, Any]:
    """The ``yaml`` module and its safe loader (the C one, ~10x faster, where libyaml exists)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return yaml, loader

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_ALIASES = 64
MAX_NODES = 20_000
#: Integers are kept as numbers within 64 bits; a longer one is kept as its text (a 30-digit id is
#: not arithmetic, and a 4,301-digit one made Python's int() refuse, which stopped every command).
MAX_INT = 2**63 - 1

_FENCE = re.compile(r"^---[ \t]*\r?$")


@dataclass(slots=True)
class Split:
    """A page's text cut into its frontmatter block and body."""

    raw: str | None  # the YAML between the fences, or None when the page has no frontmatter
    body: str  # everything after the closing fence (the whole text without frontmatter)
    body_line: int  # 1-based line number in the file where ``body`` starts
    problem: str | None = None  # e.g. "unclosed frontmatter"


def split(text: str) -> Split:
    """Cut ``text`` (BOM already removed) at a leading ``---`` line and the next ``---`` line."""
    if not text.startswith("---"):
        return Split(None, text, 1)
    first_nl = text.find("\n")
    first_line = text if first_nl < 0 else text[:first_nl]
    if not _FENCE.match(first_line):
        return Split(None, text, 1)
    limit = min(len(text), MAX_FRONTMATTER_CHARS + 4096)
    # Only a line starting with ``---`` can close the block: found by ``str.find`` (in C), not
    # by matching every line of it; the closing line's number counted once.
    at = first_nl  # (the newline before the next line to look at)
    while at >= 0:
        at = text.find("\n---", at)
        pos = at + 1  # where the candidate line starts
        if at < 0 or pos >= limit:
            break
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        if _FENCE.match(text[pos:end]):
            raw = text[first_nl + 1 : pos]
            body = text[end + 1 :] if nl >= 0 else ""
            return Split(raw, body, text.count("\n", 0, pos) + 2)
        at = nl
    return Split(None, text, 1, "unclosed frontmatter: no closing '---' line")


def _count_aliases(raw: str) -> int:
    yaml, loader = _yaml()
    count = 0
    for event in yaml.parse(raw, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            count += 1
            if count > MAX_ALIASES:
                break
    return count


class _TooBig(Exception):
    pass


class _TooLong(Exception):
    """An integer with more digits than Python converts to text (4,300)."""


def _plain(value: Any, budget: list[int]) -> Any:
    """Convert loaded YAML to JSON-safe values, spending one unit of ``budget`` per node."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if -MAX_INT - 1 <= value <= MAX_INT:
            return value
        try:
            return str(value)
        except ValueError:
            raise _TooLong from None
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, budget) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# --- the fast path -------------------------------------------------------------------------
#
# Almost every page an LLM writes has simple frontmatter: ``key: scalar`` lines, flow lists of
# scalars (``tags: [a, b]``), block lists (``tags:`` then ``  - a`` lines), one level of nested
# mapping (``meta:`` then ``  key: value`` lines), block scalars (``summary: >-`` then indented
# lines), comments, quoted strings with the common escapes, dates and timestamps. PyYAML spends
# most of a cold index on those; :func:`fast_load` reads exactly that subset and answers ``None``
# for anything else (deeper nesting, anchors, tags, multi-line flow or quoted scalars, odd numbers,
# uneven indentation...), so the caller falls back to PyYAML. Where it answers, the result equals
# what :func:`load` makes of PyYAML's (types included); tests/engine/corpus/test_frontmatter_fast.py
# checks that on the corpus generators, the hostile set and random mixes of tricky lines.

_FAST_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_FAST_NESTED_KEY = re.compile(r"( +)([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_FAST_ITEM = re.compile(r"( *)- +(.*)|( *)-")
# Characters that make PyYAML reject the stream or read lines differently: non-printables (as
# PyYAML's reader defines them), tabs, CR, the Unicode line breaks and the BOM. ASCII text only
# needs the short check; the full one is compiled on first use (it costs ~15 ms).
_FAST_REJECT_ASCII = re.compile("[^\x0A\x20-\x7E]")


@functools.cache
def _fast_reject() -> re.Pattern[str]:
    return re.compile("[^\x0A\x20-\x7E\xA0-\u2027\u202A-\uD7FF\uE000-\uFEFE\uFF00-\uFFFD"
                      "\U00010000-\U0010FFFF]")
_YAML_BOOL = {"yes": True, "Yes": True, "YES": True, "true": True, "True": True, "TRUE": True,
              "on": True, "On": True, "ON": True, "no": False, "No": False, "NO": False,
              "false": False, "False": False, "FALSE": False, "off": False, "Off": False,
              "OFF": False}
_YAML_NULL = frozenset({"null", "Null", "NULL", "~"})
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# A subset of the YAML 1.1 timestamp PyYAML resolves (single separators only), read into the
# same datetime its constructor builds.
_DATETIME = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]| )([0-9]{1,2}):([0-9]{2}):([0-9]{2})"
                       r"(?:\.([0-9]*))?(?: ?(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?")
#: Every character an int, float or timestamp of YAML 1.1 (PyYAML's implicit resolvers) can hold
#: when it starts with a digit or a minus: a plain scalar so starting with any other character in
#: it is a string (``2024 Horizon Ember``), one without is left to PyYAML unless read below.
_NUMERIC_CHARS = frozenset("0123456789_.:+-eEbxabcdefABCDEFTtZ ")
_NO_VALUE = object()
#: Characters that end or nest a scalar inside a flow list (``[a, b]``).
_FLOW_SPECIAL = frozenset(",[]{}:#\"'")
# Double-quoted scalars with the escapes agents write; any other escape is PyYAML's to read.
_DQ_SIMPLE = re.compile(r'"((?:[^"\\]|\\["\\/ntr]|\\u[0-9A-Fa-f]{4})*)"')
_DQ_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")
_DQ_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_DQ_CHARS = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r"}
# A quoted scalar or flow list at the start of a value, so a comment after it can be cut off.
_DQ_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"')
_SQ_TOKEN = re.compile(r"'(?:[^']|'')*'")
# One flow-list item and what follows it: a quoted scalar (commas and brackets allowed inside)
# or a plain one, then ``,`` or the closing ``]``.
_FLOW_ITEM = re.compile(r""" *("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^ ,\[\]{}"'#][^,\[\]{}"'#]*?) *(,|\])""")
_COMMENT_TAIL = re.compile(r" +#.*")
#: block scalar headers read here: literal or folded, clipped or stripped (no indent digit, no ``+``)
_BLOCK_SCALARS = frozenset({"|", "|-", ">", ">-"})


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    return chr(int(code[1:], 16)) if len(code) == 5 else _DQ_CHARS[code]


def _fast_digits(text: str) -> Any:
    """A plain scalar starting with a digit or ``-digit``, as PyYAML resolves it, or ``_NO_VALUE``."""
    m = _DATE.fullmatch(text)
    if m:  # (no int or float looks like a date: the commonest case first)
        try:
            return _dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        except ValueError:
            return _NO_VALUE
    if not _NUMERIC_CHARS.issuperset(text):
        return text
    if _INT.fullmatch(text):
        return int(text) if len(text) <= 18 else _NO_VALUE  # (PyYAML's reading decides: _plain)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text[0] == "-":
        return _NO_VALUE
    m = _DATETIME.fullmatch(text)
    if m is None:
        return _NO_VALUE
    fraction = int(m[7][:6].ljust(6, "0")) if m[7] else 0
    tz: _dt.tzinfo | None = None
    try:
        if m[9]:
            delta = _dt.timedelta(hours=int(m[10]), minutes=int(m[11] or 0))
            tz = _dt.timezone(-delta if m[9] == "-" else delta)
        elif m[8]:
            tz = _dt.UTC
        return _dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]),
                            fraction, tzinfo=tz).isoformat()
    except ValueError:
        return _NO_VALUE


def _fast_scalar(text: str, flow: bool) -> Any:
    """A plain or quoted scalar (already stripped), or ``_NO_VALUE`` when unsure."""
    if not text:
        return None
    first = text[0]
    if first == '"':
        m = _DQ_SIMPLE.fullmatch(text)
        if m is None:
            return _NO_VALUE
        inner = m.group(1)
        if "\\" not in inner:
            return inner
        if _DQ_SURROGATE.search(inner):
            return _NO_VALUE
        return _DQ_ESCAPE.sub(_unescape, inner)
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            return _NO_VALUE
        return inner.replace("''", "'")
    if " #" in text or ": " in text or text.endswith(":") or "  " in text:
        return _NO_VALUE
    if flow and not _FLOW_SPECIAL.isdisjoint(text):
        return _NO_VALUE
    if first.isdigit() or (first == "-" and text[1:2].isdigit()):
        return _fast_digits(text)
    if not first.isalpha():
        return _NO_VALUE
    if text in _YAML_BOOL:
        return _YAML_BOOL[text]
    if text in _YAML_NULL:
        return None
    return text


def _fast_flow_list(text: str) -> Any:
    """``[a, "b, c", 'd']``: the whole of ``text``, one line, scalars only."""
    if text[1:].strip() == "]":
        return []
    out = []
    if "'" not in text and '"' not in text and text.count("]") == 1 and text[-1] == "]":
        # no quotes: the items are what lies between the commas (the commonest case; splitting
        # is 1.8x faster than the item regex)
        for item in text[1:-1].split(","):
            value = _fast_scalar(item.strip(" "), True)
            if value is _NO_VALUE or value is None:
                return _NO_VALUE  # ``[a, , b]`` and ``[a,]``: leave to PyYAML
            out.append(value)
        return out
    pos = 1
    while True:
        m = _FLOW_ITEM.match(text, pos)
        if m is None:
            return _NO_VALUE  # ``[a, , b]``, ``[a,]``, nesting, flow maps: leave to PyYAML
        value = _fast_scalar(m.group(1), True)
        if value is _NO_VALUE or value is None:
            return _NO_VALUE
        out.append(value)
        pos = m.end()
        if m.group(2) == "]":
            return out if pos == len(text) else _NO_VALUE


def _uncomment(rest: str) -> str | None:
    """A value's text (right-stripped) without its trailing comment; None: not sure where it ends."""
    first = rest[0]
    if first == "#":
        return ""
    if first == "[":
        # up to the last ``]``: the flow-list reading checks that nothing else follows its end
        end = rest.rfind("]") + 1
        tail = rest[end:]
        return rest[:end] if end and (not tail or _COMMENT_TAIL.fullmatch(tail)) else None
    if first in "\"'":
        m = (_DQ_TOKEN if first == '"' else _SQ_TOKEN).match(rest)
        if m is None:
            return None
        tail = rest[m.end():]
        if tail and not _COMMENT_TAIL.fullmatch(tail):
            return None
        return m.group()
    cut = rest.find(" #")
    return rest if cut < 0 else rest[:cut].rstrip(" ")


def _fast_value(rest: str) -> Any:
    """A one-line value: a flow list or a scalar."""
    if rest[0] == "[":
        return _fast_flow_list(rest)
    return _fast_scalar(rest, False)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _deeper(lines: list[str], i: int, width: int) -> bool:
    """Whether line ``i`` exists, is not blank and is indented more than ``width``."""
    return i < len(lines) and _indent(lines[i]) > width and not lines[i].isspace()


def _fast_block_list(lines: list[str], i: int) -> tuple[Any, int]:
    items: list[Any] = []
    indent: int | None = None
    n = len(lines)
    while i < n:
        nxt = lines[i]
        if not nxt or nxt.isspace():
            if i + 1 < n and lines[i + 1].lstrip().startswith("-"):
                return _NO_VALUE, i  # blank lines inside a list: leave to PyYAML
            break
        im = _FAST_ITEM.fullmatch(nxt.rstrip(" "))
        if im is None:
            break
        width = len(im.group(1) if im.group(1) is not None else im.group(3))
        if indent is None:
            indent = width
        elif width != indent:
            return _NO_VALUE, i
        body = im.group(2)
        if body is not None:
            if body.startswith(("-", "[", "#")):
                return _NO_VALUE, i
            text = _uncomment(body) if "#" in body else body
            if text is None:
                return _NO_VALUE, i
            value = _fast_scalar(text, False)
        else:
            value = None
        if value is _NO_VALUE:
            return _NO_VALUE, i
        items.append(value)
        i += 1
    return (items if indent is not None else _NO_VALUE), i


def _fast_mapping(lines: list[str], i: int, width: int) -> tuple[Any, int]:
    """One level of nested ``key: value`` lines, all indented by ``width``."""
    out: dict[str, Any] = {}
    n = len(lines)
    while i < n:
        m = _FAST_NESTED_KEY.fullmatch(lines[i])
        if m is None or len(m.group(1)) != width:
            break
        key = m.group(2)
        if key in _YAML_BOOL or key in _YAML_NULL:
            return _NO_VALUE, i
        rest = _uncomment(m.group(3).rstrip(" ")) if m.group(3) else ""
        if rest is None:
            return _NO_VALUE, i
        value = _fast_value(rest) if rest else None
        i += 1
        if value is _NO_VALUE or _deeper(lines, i, width):
            return _NO_VALUE, i  # deeper nesting or a continuation line: leave to PyYAML
        out[key] = value
    return out, i


def _fast_block_scalar(lines: list[str], i: int, header: str) -> tuple[Any, int]:
    """``|``/``>`` (``-``) text: lines all indented alike, without blank lines or trailing blanks."""
    contents: list[str] = []
    width = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        indent = _indent(line)
        if indent == 0 or indent == len(line):
            break
        if not contents:
            width = indent
        elif indent != width:
            return _NO_VALUE, i
        if line[-1] == " ":
            return _NO_VALUE, i
        contents.append(line[width:])
        i += 1
    if not contents or i >= n:
        return _NO_VALUE, i  # empty, or the last line has no line break to clip
    text = ("\n" if header[0] == "|" else " ").join(contents)
    return (text if header[-1] == "-" else text + "\n"), i


def fast_load(raw: str) -> dict[str, Any] | None:
    """The simple frontmatter subset, exactly as :func:`load` reads it; None: not that subset."""
    if (_FAST_REJECT_ASCII if raw.isascii() else _fast_reject()).search(raw):
        return None
    out: dict[str, Any] = {}
    lines = raw.split("\n")
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if not line or line.isspace() or line[0] == "#":
            continue
        m = _FAST_KEY.fullmatch(line)
        if m is None:
            return None
        key = m.group(1)
        if key in _YAML_BOOL or key in _YAML_NULL:
            return None
        rest = m.group(2)
        if rest:
            rest = rest.rstrip(" ")
            if "#" in rest:  # (most lines have none: the comment reading is skipped)
                rest = _uncomment(rest)
                if rest is None:
                    return None
        value: Any
        if not rest:
            # a block list or a nested mapping below, or no value at all
            nxt = lines[i] if i < n else ""
            if _FAST_ITEM.match(nxt):
                value, i = _fast_block_list(lines, i)
            elif nxt[:1] == " " and not nxt.isspace():
                nested = _FAST_NESTED_KEY.fullmatch(nxt)
                if nested is None:
                    return None  # folded text or deeper structure
                value, i = _fast_mapping(lines, i, len(nested.group(1)))
            else:
                value = None
        elif rest in _BLOCK_SCALARS:
            value, i = _fast_block_scalar(lines, i, rest)
        else:
            value = _fast_flow_list(rest) if rest[0] == "[" else _fast_scalar(rest, False)
            if i < n and lines[i][:1] == " " and not lines[i].isspace():
                return None  # a continuation line (multi-line plain scalar): leave to PyYAML
        if value is _NO_VALUE:
            return None
        out[key] = value
    return out


def load(raw: str) -> tuple[dict[str, Any], str | None]:
    """Load a frontmatter block into a JSON-safe dict; on any problem, ``({}, reason)``.

    The flat frontmatter most pages have is read by :func:`fast_load`; the rest by PyYAML.
    """
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return {}, f"frontmatter larger than {MAX_FRONTMATTER_CHARS // 1024} KB ignored"
    if not raw.strip():
        return {}, None
    fast = fast_load(raw)
    if fast is not None:
        return fast, None
    return load_yaml(raw)


def load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    """:func:`load` through PyYAML only (no fast path): the reference the fast path must equal."""
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return {}, f"frontmatter larger than {MAX_FRONTMATTER_CHARS // 1024} KB ignored"
    if not raw.strip():
        return {}, None
    yaml, loader = _yaml()
    try:
        if "*" in raw and "&" in raw and _count_aliases(raw) > MAX_ALIASES:
            return {}, f"frontmatter uses more than {MAX_ALIASES} YAML aliases; ignored"
        data = yaml.load(raw, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return {}, f"malformed YAML frontmatter{where}: {reason}"
    except (ValueError, TypeError, RecursionError) as exc:
        return {}, f"malformed YAML frontmatter: {exc}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, f"frontmatter is a {type(data).__name__}, not a mapping of keys"
    try:
        return _plain(data, [MAX_NODES]), None
    except (_TooBig, RecursionError):
        return {}, f"frontmatter expands to more than {MAX_NODES} values (YAML alias bomb?); ignored"
    except _TooLong:
        return {}, "frontmatter holds an integer too long to read; ignored"


# --- rewriting -----------------------------------------------------------------------------

_TOP_KEY = re.compile(r"""^(?:"([^"]*)"|'([^']*)'|([^\s#'"][^:]*?))\s*:(?:\s|$)""")


def _dump_item(key: str, value: Any) -> list[str]:
    yaml = _yaml()[0]
    opts: dict[str, Any] = {"allow_unicode": True, "sort_keys": False, "width": 10_000}
    if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        # short lists (tags, aliases) read best in flow style: ``tags: [a, b]``
        head = yaml.safe_dump({key: None}, default_flow_style=False, **opts).rstrip("\n")
        head = head[: -len("null")].rstrip()
        flow = yaml.safe_dump(value, default_flow_style=True, **opts).strip()
        return [f"{head} {flow}"]
    text: str = yaml.safe_dump({key: value}, default_flow_style=False, **opts)
    return text.rstrip("\n").split("\n")


def _key_of(line: str) -> str | None:
    if not line or line[0] in " \t#-":
        return None
    m = _TOP_KEY.match(line)
    if not m:
        return None
    return next(g for g in m.groups() if g is not None).strip()


def update(text: str, changes: dict[str, Any], remove: tuple[str, ...] = ()) -> str:
    """Return ``text`` with the top-level frontmatter keys in ``changes`` set and ``remove`` dropped.

    Only the lines of the affected keys change; a page without frontmatter gets a new block.
    Line endings follow the text's own (CRLF stays CRLF). ``text`` must not include a BOM.
    """
    nl = "\r\n" if "\r\n" in text[:4096] else "\n"
    parts = split(text)
    if parts.raw is None or parts.problem:
        lines: list[str] = []
        body = text
    else:
        lines = parts.raw.replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        body = parts.body
    # Group the block into (key, [lines]) runs; lines before the first key stay as they are.
    blocks: list[tuple[str | None, list[str]]] = []
    for line in lines:
        key = _key_of(line)
        if key is not None or not blocks:
            blocks.append((key, [line]))
        else:
            blocks[-1][1].append(line)
    pending = dict(changes)
    out: list[str] = []
    for key, block in blocks:
        if key is not None and key in remove:
            continue
        if key is not None and key in pending:
            out.extend(_dump_item(key, pending.pop(key)))
            # comments that followed the old value are the operator's notes: keep them
            out.extend(x for x in block[1:] if x.lstrip().startswith("#"))
            continue
        out.extend(block)
    for key, value in pending.items():
        out.extend(_dump_item(key, value))
    head = nl.join(["---", *out, "---"]) + nl
    return head + body
