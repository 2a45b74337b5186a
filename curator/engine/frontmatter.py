"""YAML frontmatter: tolerant splitting and loading, and minimal in-place rewriting (SPEC §3).

Reading never fails: malformed, unclosed or non-mapping frontmatter yields empty metadata and a
problem string that lint reports. Alias bombs are bounded twice: a cap on alias events before the
YAML is constructed, and a node budget while it is converted to plain JSON-safe values.

Rewriting edits only the top-level keys it is asked to change, line by line, so unknown keys,
comments, key order and quoting of everything else survive untouched.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

try:  # the C loader is ~10x faster; fall back to the pure-Python one where libyaml is missing
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_ALIASES = 64
MAX_NODES = 20_000

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
    pos = first_nl + 1 if first_nl >= 0 else len(text)
    line_no = 2
    limit = min(len(text), MAX_FRONTMATTER_CHARS + 4096)
    while pos < limit:
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        if _FENCE.match(text[pos:end]):
            raw = text[first_nl + 1 : pos]
            body = text[end + 1 :] if nl >= 0 else ""
            return Split(raw, body, line_no + 1)
        if nl < 0:
            break
        pos = nl + 1
        line_no += 1
    return Split(None, text, 1, "unclosed frontmatter: no closing '---' line")


def _count_aliases(raw: str) -> int:
    count = 0
    for event in yaml.parse(raw, Loader=_SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            count += 1
            if count > MAX_ALIASES:
                break
    return count


class _TooBig(Exception):
    pass


def _plain(value: Any, budget: list[int]) -> Any:
    """Convert loaded YAML to JSON-safe values, spending one unit of ``budget`` per node."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if value is None or isinstance(value, (bool, int, str)):
        return value
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


def load(raw: str) -> tuple[dict[str, Any], str | None]:
    """Load a frontmatter block into a JSON-safe dict; on any problem, ``({}, reason)``."""
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return {}, f"frontmatter larger than {MAX_FRONTMATTER_CHARS // 1024} KB ignored"
    if not raw.strip():
        return {}, None
    try:
        if "*" in raw and "&" in raw and _count_aliases(raw) > MAX_ALIASES:
            return {}, f"frontmatter uses more than {MAX_ALIASES} YAML aliases; ignored"
        data = yaml.load(raw, Loader=_SafeLoader)
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


# --- rewriting -----------------------------------------------------------------------------

_TOP_KEY = re.compile(r"""^(?:"([^"]*)"|'([^']*)'|([^\s#'"][^:]*?))\s*:(?:\s|$)""")


def _dump_item(key: str, value: Any) -> list[str]:
    opts: dict[str, Any] = {"allow_unicode": True, "sort_keys": False, "width": 10_000}
    if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
        # short lists (tags, aliases) read best in flow style: ``tags: [a, b]``
        head = yaml.safe_dump({key: None}, default_flow_style=False, **opts).rstrip("\n")
        head = head[: -len("null")].rstrip()
        flow = yaml.safe_dump(value, default_flow_style=True, **opts).strip()
        return [f"{head} {flow}"]
    text = yaml.safe_dump({key: value}, default_flow_style=False, **opts)
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
