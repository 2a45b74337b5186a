"""Three-way merge of a page, losing no fact: two versions written apart since a common base
become one (docs/design.md §4.5, issue 11).

Used wherever two writers met: the sync's page merge driver (:mod:`curator.engine.sync.merge_driver`,
run by git for every page changed on both sides) and the operator's save that met an agent's
write (:mod:`curator.engine.write.edit`).

The rules, applied to the frontmatter and the body separately:

* **Facts** (``- `` bullets) that a side *inserted* into a ``## Updates`` section are lifted out
  of both sides before the text merge and put back at the end of the section afterwards, ours
  first, then theirs, each deduplicated against the merged page with docs/design.md §4's fact rule
  (:func:`~curator.engine.corpus.facts.find_duplicate`): concurrent appends to the same page never
  conflict and a fact appended on both sides is kept once.
* **Frontmatter** is merged key by key (three-way). A key only one side changed takes that side's
  value. Where both sides changed a key to different values: ``updated`` = the newest, ``created``
  = the oldest, ``trust`` = the operator's side (below), lists (``tags``, ``aliases``,
  ``related``, any list) = united (items either side added kept, ours first; an item one side
  removed stays removed). Any other key changed differently on both sides is a conflict.
* Everything else goes through ``git merge-file``; what it cannot merge is a conflict with normal
  markers (``<<<<<<< ours`` / ``=======`` / ``>>>>>>> theirs``). On a conflict the facts are still
  put back when the conflict lies outside the ``## Updates`` section; otherwise the bodies are
  merged as they are. Either way every line of both sides is in the file.

Robustness: pages that are not valid UTF-8 or whose frontmatter does not parse are merged as
plain text; an unexpected error falls back to ``git merge-file`` so git never loses a side.
BOM and CRLF line endings of ours are kept.
"""

from __future__ import annotations

import datetime as _dt
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curator.engine.repo.git import merge_file_raw

LIST_KEYS = frozenset({"tags", "aliases", "related"})


# --- text helpers --------------------------------------------------------------------------------

@dataclass(slots=True)
class DecodedPage:
    """A page's text with its BOM and line endings noted, to be written back as they were."""

    text: str  # "\n" line endings, no BOM
    bom: bool = False
    crlf: bool = False


def decode_page(data: bytes) -> DecodedPage | None:
    """The page's text as the merge works on it, or None when it is not UTF-8."""
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data[3:].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    crlf = "\r\n" in text
    return DecodedPage(text.replace("\r\n", "\n"), bom, crlf)


def merge_file(ours: str, base: str, theirs: str) -> tuple[str, bool]:
    """Three-way text merge with ``git merge-file``: (result with markers, clean)."""
    if ours == theirs:
        return ours, True
    if base == ours:
        return theirs, True
    if base == theirs:
        return ours, True
    raw, clean = merge_bytes(ours.encode("utf-8"), base.encode("utf-8"), theirs.encode("utf-8"))
    return raw.decode("utf-8", "replace"), clean


def merge_bytes(ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, bool]:
    proc = merge_file_raw(ours, base, theirs, ("ours", "base", "theirs"))
    if proc.returncode < 0 or proc.returncode > 127:
        if b"binary" in proc.stderr.lower():
            return ours, False  # as git does for binary files: ours kept, reported as a conflict
        raise RuntimeError(f"git merge-file failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout, proc.returncode == 0


# --- facts in ## Updates sections -----------------------------------------------------------------

def _updates_lines(lines: Sequence[str]) -> set[int]:
    """Indexes of the lines inside a ``## Updates`` section (fence-aware, as append sees them)."""
    from curator.engine.corpus.facts import FENCE_RE, HEADING_RE, UPDATES_RE

    inside: set[int] = set()
    in_section = in_fence = False
    for i, line in enumerate(lines):
        if FENCE_RE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = HEADING_RE.match(line)
            if UPDATES_RE.match(line.strip()):
                in_section = True
                continue
            if m and len(m.group(1)) <= 2:
                in_section = False
        if in_section:
            inside.add(i)
    return inside


def lift_facts(base: str, side: str) -> tuple[str, list[str]]:
    """``side`` without the bullets it inserted into a ``## Updates`` section, and those bullets."""
    from curator.engine.corpus.facts import BULLET_RE

    b_lines, s_lines = base.split("\n"), side.split("\n")
    section = _updates_lines(s_lines)
    drop: set[int] = set()
    matcher = difflib.SequenceMatcher(None, b_lines, s_lines, autojunk=False)
    for op, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if op != "insert":
            continue  # replacements are edits, left to the text merge
        drop.update(j for j in range(j1, j2) if j in section and BULLET_RE.match(s_lines[j]))
    if not drop:
        return side, []
    kept = [line for j, line in enumerate(s_lines) if j not in drop]
    return "\n".join(kept), [s_lines[j].strip() for j in sorted(drop)]


def _put_back(text: str, bullets: Sequence[str]) -> str:
    from curator.engine.corpus.facts import find_duplicate, insert_bullet

    for bullet in bullets:
        if find_duplicate(text, bullet) is None:
            text = insert_bullet(text, bullet)
    return text


# --- frontmatter -----------------------------------------------------------------------------------

#: A key absent from a version's frontmatter (None is a value).
MISSING: Any = object()


def _as_date(value: Any) -> _dt.datetime | None:
    if isinstance(value, (int, float)) or value is None:
        return None
    s = str(value).strip()
    try:
        d = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=_dt.UTC)


def _newest(a: Any, b: Any, newest: bool) -> Any:
    if a is MISSING or a is None:
        return b
    if b is MISSING or b is None:
        return a
    da, db = _as_date(a), _as_date(b)
    if da is not None and db is not None:
        pick_a = da >= db if newest else da <= db
    else:
        pick_a = str(a) >= str(b) if newest else str(a) <= str(b)
    return a if pick_a else b


def _unite(base: Any, ours: Any, theirs: Any) -> list[Any] | None:
    def items(v: Any) -> list[Any] | None:
        if v is MISSING or v is None:
            return []
        return list(v) if isinstance(v, list) else None

    b, o, t = items(base), items(ours), items(theirs)
    if b is None or o is None or t is None:
        return None

    def key(x: Any) -> str:
        return repr(x)

    removed = ({key(x) for x in b} - {key(x) for x in o}) | ({key(x) for x in b} - {key(x) for x in t})
    out: list[Any] = []
    seen: set[str] = set()
    for x in [*o, *t]:
        k = key(x)
        if k not in seen and k not in removed:
            seen.add(k)
            out.append(x)
    return out


def merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any],
               operator_side: str = "ours") -> tuple[dict[str, Any], set[str]]:
    """Key-by-key three-way merge: (merged values, keys left in conflict). Absent = not a key."""
    merged: dict[str, Any] = {}
    conflicts: set[str] = set()
    for k in dict.fromkeys([*ours, *theirs, *base]):
        b, o, t = base.get(k, MISSING), ours.get(k, MISSING), theirs.get(k, MISSING)
        if o == t:
            value = o
        elif o == b:
            value = t
        elif t == b:
            value = o
        elif k == "updated":
            value = _newest(o, t, newest=True)
        elif k == "created":
            value = _newest(o, t, newest=False)
        elif k == "trust":
            value = t if operator_side == "theirs" and t is not MISSING else o
        else:
            united = _unite(b, o, t) if (k in LIST_KEYS or isinstance(o, list) or isinstance(t, list)) else None
            if united is None:
                conflicts.add(k)
                value = o
            else:
                value = united
        if value is not MISSING:
            merged[k] = value
    return merged, conflicts


def _yaml_value(value: Any) -> Any:
    """Loaded values are JSON-safe (dates as ISO strings); dump dates as dates again, unquoted."""
    if isinstance(value, str) and 8 <= len(value) <= 40 and value[:4].isdigit():
        try:
            return _dt.date.fromisoformat(value) if len(value) == 10 else _dt.datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return [_yaml_value(v) for v in value]
    return value


def _rewrite_meta(text: str, meta: dict[str, Any], merged: dict[str, Any], keys: set[str]) -> str:
    from curator.engine.corpus import frontmatter

    changes = {k: _yaml_value(merged[k]) for k in keys if k in merged}
    remove = tuple(k for k in keys if k not in merged and k in meta)
    if not changes and not remove:
        return text
    return frontmatter.update(text, changes, remove)


# --- the page merge ---------------------------------------------------------------------------------

def parse_parts(text: str) -> tuple[str | None, dict[str, Any], str]:
    """(frontmatter block with fences or None when unusable, metadata, body)."""
    from curator.engine.corpus import frontmatter

    parts = frontmatter.split(text)
    if parts.raw is None or parts.problem:
        return None, {}, text
    meta, problem = frontmatter.load(parts.raw)
    if problem:
        return None, {}, text
    head = text[: len(text) - len(parts.body)] if parts.body else text
    return head, meta, parts.body


def merge_texts(base: str, ours: str, theirs: str, operator_side: str = "ours") -> tuple[str, bool]:
    """Merge three versions of a page (``\\n`` line endings, no BOM): (result, clean)."""
    b_head, b_meta, b_body = parse_parts(base)
    o_head, o_meta, o_body = parse_parts(ours)
    t_head, t_meta, t_body = parse_parts(theirs)
    if o_head is None or t_head is None or (b_head is None and base.strip()):
        # Some side has no usable frontmatter: the whole page is text.
        b_head = o_head = t_head = ""
        b_meta, o_meta, t_meta = {}, {}, {}
        b_body, o_body, t_body = base, ours, theirs
    head_clean = True
    head = ""
    if o_head or t_head:
        merged, conflicts = merge_meta(b_meta, o_meta, t_meta, operator_side)
        if not conflicts:
            # Ours' block with the keys whose merged value differs rewritten (the rest of ours'
            # lines, comments and key order stay as they are).
            changed = {k for k in {*merged, *o_meta}
                       if merged.get(k, MISSING) != o_meta.get(k, MISSING)}
            head = _rewrite_meta(o_head or "", o_meta, merged, changed)
        else:
            # Write every mergeable key that differs anywhere into both sides the same way: the
            # text merge of the blocks then sees identical lines there, and only the keys left in
            # conflict (each side keeps its own value) differ, so git marks exactly those.
            keys = {k for k in {*o_meta, *t_meta, *b_meta}
                    if not (b_meta.get(k, MISSING) == o_meta.get(k, MISSING) == t_meta.get(k, MISSING))}
            keys -= conflicts
            o_head2 = _rewrite_meta(o_head or "", o_meta, merged, keys)
            t_head2 = _rewrite_meta(t_head or "", t_meta, merged, keys)
            head, head_clean = merge_file(o_head2, b_head or "", t_head2)
    o_rest, o_facts = lift_facts(b_body, o_body)
    t_rest, t_facts = lift_facts(b_body, t_body)
    body, body_clean = merge_file(o_rest, b_body, t_rest)
    if not body_clean and _markers_in_updates(body):
        # The conflict reaches into the Updates section: facts could not be placed outside the
        # markers, so merge the bodies as they are (every line of both sides is in the file).
        body, _ = merge_file(o_body, b_body, t_body)
        return head + body, False
    result = head + body
    if o_facts or t_facts:
        result = _put_back(result, [*o_facts, *t_facts])
    return result, head_clean and body_clean


def _markers_in_updates(text: str) -> bool:
    lines = text.split("\n")
    return any(lines[i].startswith(("<<<<<<< ", "=======", ">>>>>>> ")) for i in _updates_lines(lines))


def merge_page(base: bytes, ours: bytes, theirs: bytes, operator_side: str = "ours") -> tuple[bytes, bool]:
    """Merge three versions of a page file: (bytes for ``%A``, clean)."""
    b, o, t = decode_page(base), decode_page(ours), decode_page(theirs)
    if b is None or o is None or t is None:
        return merge_bytes(ours, base, theirs)
    text, clean = merge_texts(b.text, o.text, t.text, operator_side)
    if o.crlf:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data if o.bom else data), clean
