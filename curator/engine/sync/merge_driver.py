"""The git merge driver for pages (issue 11): append-only knowledge merges without conflicts.

Git runs it for every ``*.md`` file changed on both sides of a merge (``.gitattributes``:
``*.md merge=curator``; repository config ``merge.curator.driver``), and for the review inbox's
records (``_review/inbox/*.json``, ``_review/rejected/*.json``: :func:`merge_record`)::

    <python> -m curator.engine.sync.merge_driver [--ours SHA --theirs SHA] %O %A %B %P

``%O`` is the merge base's version, ``%A`` ours (the result is written here), ``%B`` theirs,
``%P`` the page's path. Exit status 0 = merged cleanly, 1 = conflict (``%A`` then holds the page
with normal conflict markers). Lock-free and side-effect free apart from ``%A``: it runs inside git
(``git merge``, ``git merge-tree``), which may run it while a Curator action holds the wiki lock.

The rules, applied to the frontmatter and the body separately:

* **Facts** (``- `` bullets) that a side *inserted* into a ``## Updates`` section are lifted out
  of both sides before the text merge and put back at the end of the section afterwards, ours
  first, then theirs, each deduplicated against the merged page with docs/design.md §4's fact rule
  (:func:`~.append.find_duplicate`): concurrent appends to the same page never conflict and a fact
  appended on both sides is kept once.
* **Frontmatter** is merged key by key (three-way). A key only one side changed takes that side's
  value. Where both sides changed a key to different values: ``updated`` = the newest, ``created``
  = the oldest, ``trust`` = the operator's side (below), lists (``tags``, ``aliases``,
  ``related``, any list) = united (items either side added kept, ours first; an item one side
  removed stays removed). Any other key changed differently on both sides is a conflict.
* Everything else goes through ``git merge-file``; what it cannot merge is a conflict with normal
  markers (``<<<<<<< ours`` / ``=======`` / ``>>>>>>> theirs``). On a conflict the facts are still
  put back when the conflict lies outside the ``## Updates`` section; otherwise the bodies are
  merged as they are. Either way every line of both sides is in the file.

**The operator's side** (for ``trust``): the side on which a commit authored ``operator`` touched
the page since the merge base. When both or neither did, ours (the local side, i.e. the clone
that runs the merge) wins. The driver learns the two commits from ``--ours``/``--theirs``
(:mod:`.sync` passes them to ``git merge-tree``), else from ``HEAD`` and ``MERGE_HEAD`` (a plain
``git merge``/``git pull`` in the clone), else it cannot tell and ours wins.

Robustness: pages that are not valid UTF-8 or whose frontmatter does not parse are merged as
plain text; an unexpected error falls back to ``git merge-file`` so git never loses a side.
BOM and CRLF line endings of ours are kept.

Also here: :func:`driver_command` (the command line recorded in the repository config, with an
absolute interpreter path, so a clone whose console script lives elsewhere still merges) and
:func:`install` (``.gitattributes`` line + config; ``curator init`` and ``curator sync --setup``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import difflib
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curator.engine.policy.scope import INBOX_FOLDERS
from curator.engine.repo.git import Git, GitError, merge_file_raw, run_here

DRIVER_NAME = "curator"
ATTRIBUTES_LINE = f"*.md merge={DRIVER_NAME}"
#: The review inbox's decision records (:mod:`.inbox`): one JSON file per fact, named by the fact.
RECORD_FOLDERS = INBOX_FOLDERS
#: Every ``.gitattributes`` line of the driver: pages, and the inbox's records.
ATTRIBUTES_LINES = (ATTRIBUTES_LINE, *(f"{folder}/*.json merge={DRIVER_NAME}" for folder in RECORD_FOLDERS))
OPERATOR_NAME = "operator"  # the git author name of the operator's commits (actor.git_author)
LIST_KEYS = frozenset({"tags", "aliases", "related"})


# --- installation -------------------------------------------------------------------------------

def driver_command(ours: str | None = None, theirs: str | None = None) -> str:
    """The shell command git runs (``%O %A %B %P`` substituted by git).

    Uses this interpreter's absolute path (or, in a frozen build, the ``curator`` executable and
    its hidden ``sync --merge-driver`` option), quoted for the shell git runs drivers with.
    """
    if getattr(sys, "frozen", False):  # a PyInstaller build has no -m: its CLI runs the driver
        head = [sys.executable, "sync", "--merge-driver"]
    else:
        head = [sys.executable, "-m", "curator.engine.sync.merge_driver"]
    if ours and theirs:
        head += ["--ours", ours, "--theirs", theirs]
    return " ".join(shlex.quote(x) for x in head) + " %O %A %B %P"


def configured_command(root: Path) -> str | None:
    return Git(root).config_get(f"merge.{DRIVER_NAME}.driver", local=True)


def config_ok(root: Path) -> bool:
    """Whether the repository config runs a driver whose interpreter exists."""
    command = configured_command(root)
    if not command:
        return False
    try:
        exe = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return os.path.isfile(exe) and os.access(exe, os.X_OK)


def install_config(root: Path) -> bool:
    """Record the driver in the repository config (local to this clone); True when it changed."""
    command = driver_command()
    if configured_command(root) == command:
        return False
    git = Git(root)
    for key, value in ((f"merge.{DRIVER_NAME}.name", "Curator page merge (facts, frontmatter)"),
                       (f"merge.{DRIVER_NAME}.driver", command)):
        try:
            git.config_set(key, value)
        except GitError as exc:
            from curator.engine.errors import CuratorError

            last = str(exc).removeprefix("git config failed: ")
            raise CuratorError(f"cannot record the merge driver in {root}: {last}") from None
    return True


def attributes_with_driver(existing: str) -> str | None:
    """``.gitattributes`` text with the driver's lines added (:data:`ATTRIBUTES_LINES`), or None
    when every one is there already."""
    present = {" ".join(line.split()) for line in existing.splitlines()}
    missing = [line for line in ATTRIBUTES_LINES if line not in present]
    if not missing:
        return None
    sep = "" if not existing or existing.endswith("\n") else "\n"
    return existing + sep + "".join(line + "\n" for line in missing)


# --- text helpers --------------------------------------------------------------------------------

@dataclass(slots=True)
class _Text:
    text: str  # "\n" line endings, no BOM
    bom: bool = False
    crlf: bool = False


def _decode(data: bytes) -> _Text | None:
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data[3:].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    crlf = "\r\n" in text
    return _Text(text.replace("\r\n", "\n"), bom, crlf)


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
    from curator.engine.write.append import FENCE_RE, HEADING_RE, UPDATES_RE

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
    from curator.engine.write.append import BULLET_RE

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
    from curator.engine.write.append import find_duplicate, insert_bullet

    for bullet in bullets:
        if find_duplicate(text, bullet) is None:
            text = insert_bullet(text, bullet)
    return text


# --- frontmatter -----------------------------------------------------------------------------------

_MISSING: Any = object()


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
    if a is _MISSING or a is None:
        return b
    if b is _MISSING or b is None:
        return a
    da, db = _as_date(a), _as_date(b)
    if da is not None and db is not None:
        pick_a = da >= db if newest else da <= db
    else:
        pick_a = str(a) >= str(b) if newest else str(a) <= str(b)
    return a if pick_a else b


def _unite(base: Any, ours: Any, theirs: Any) -> list[Any] | None:
    def items(v: Any) -> list[Any] | None:
        if v is _MISSING or v is None:
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
        b, o, t = base.get(k, _MISSING), ours.get(k, _MISSING), theirs.get(k, _MISSING)
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
            value = t if operator_side == "theirs" and t is not _MISSING else o
        else:
            united = _unite(b, o, t) if (k in LIST_KEYS or isinstance(o, list) or isinstance(t, list)) else None
            if united is None:
                conflicts.add(k)
                value = o
            else:
                value = united
        if value is not _MISSING:
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

def _parse(text: str) -> tuple[str | None, dict[str, Any], str]:
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
    b_head, b_meta, b_body = _parse(base)
    o_head, o_meta, o_body = _parse(ours)
    t_head, t_meta, t_body = _parse(theirs)
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
                       if merged.get(k, _MISSING) != o_meta.get(k, _MISSING)}
            head = _rewrite_meta(o_head or "", o_meta, merged, changed)
        else:
            # Write every mergeable key that differs anywhere into both sides the same way: the
            # text merge of the blocks then sees identical lines there, and only the keys left in
            # conflict (each side keeps its own value) differ, so git marks exactly those.
            keys = {k for k in {*o_meta, *t_meta, *b_meta}
                    if not (b_meta.get(k, _MISSING) == o_meta.get(k, _MISSING) == t_meta.get(k, _MISSING))}
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
    b, o, t = _decode(base), _decode(ours), _decode(theirs)
    if b is None or o is None or t is None:
        return merge_bytes(ours, base, theirs)
    text, clean = merge_texts(b.text, o.text, t.text, operator_side)
    if o.crlf:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data if o.bom else data), clean


# --- the inbox's records ------------------------------------------------------------------------

def is_record(path: str | None) -> bool:
    """Whether ``path`` is one of the review inbox's decision records (an item, a rejection)."""
    if not path or not path.endswith(".json"):
        return False
    return any(path.startswith(folder + "/") and "/" not in path[len(folder) + 1:] for folder in RECORD_FOLDERS)


def merge_record(ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
    """Merge two versions of one inbox record: (bytes for ``%A``, clean).

    A record is named by its fact (:func:`~.inbox.item_id`, :func:`~.inbox.rejection_key`) and
    written once, so two versions are the same fact held (or rejected) on two clones before they
    synced, by other agents or at other times. The first one stays, by its ``time`` (ties: ours),
    the same choice on every clone: the fact is decided once. Anything that is not such a record
    on both sides is a conflict, ours kept."""
    import json

    try:
        o, t = json.loads(ours), json.loads(theirs)
    except ValueError:
        return ours, False
    if not isinstance(o, dict) or not isinstance(t, dict) or not isinstance(o.get("time"), str) \
            or not isinstance(t.get("time"), str):
        return ours, False
    return (theirs if t["time"] < o["time"] else ours), True


# --- the operator's side -------------------------------------------------------------------------------

def operator_side(path: str | None, ours: str | None = None, theirs: str | None = None) -> str:
    """``"ours"`` or ``"theirs"``: which side's ``trust`` wins for ``path`` (module docstring)."""
    if not path:
        return "ours"
    ours = ours or run_here("rev-parse", "-q", "--verify", "HEAD")
    theirs = theirs or run_here("rev-parse", "-q", "--verify", "MERGE_HEAD")
    if not ours or not theirs:
        return "ours"
    base = run_here("merge-base", ours, theirs)

    def by_operator(tip: str) -> bool:
        rng = f"{base}..{tip}" if base else tip
        names = run_here("log", "--format=%an", rng, "--", path) or ""
        return OPERATOR_NAME in names.splitlines()

    o, t = by_operator(ours), by_operator(theirs)
    return "theirs" if t and not o else "ours"


# --- the driver -------------------------------------------------------------------------------------------

def run_driver(base: Path, ours: Path, theirs: Path, path: str | None,
               ours_commit: str | None = None, theirs_commit: str | None = None) -> int:
    """Merge the files as git asks; write the result to ``ours``; 0 clean, 1 conflict."""
    b, o, t = base.read_bytes(), ours.read_bytes(), theirs.read_bytes()
    if is_record(path):
        data, clean = merge_record(o, t)
        ours.write_bytes(data)
        return 0 if clean else 1
    try:
        side = "ours"
        if _trust_differs(b, o, t):
            side = operator_side(path, ours_commit, theirs_commit)
        data, clean = merge_page(b, o, t, side)
    except Exception as exc:  # never lose a side: fall back to git's own text merge
        sys.stderr.write(f"curator merge driver: {type(exc).__name__}: {exc}; plain text merge\n")
        try:
            data, clean = merge_bytes(o, b, t)
        except Exception as exc2:  # not even that: keep ours untouched and report a conflict
            sys.stderr.write(f"curator merge driver: {exc2}; kept our side, resolve by hand\n")
            return 1
    ours.write_bytes(data)
    return 0 if clean else 1


def _trust_differs(base: bytes, ours: bytes, theirs: bytes) -> bool:
    # Cheap test first (asking git whose side is the operator's costs three git calls).
    if b"trust" not in ours and b"trust" not in theirs:
        return False
    metas = []
    for data in (base, ours, theirs):
        d = _decode(data)
        metas.append(_parse(d.text)[1] if d is not None else {})
    b, o, t = (m.get("trust", _MISSING) for m in metas)
    return bool(o != t and o != b and t != b)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="curator-merge-driver",
                                     description="git merge driver for Curator pages (%O %A %B %P)")
    parser.add_argument("--ours", metavar="SHA", help="the local commit being merged")
    parser.add_argument("--theirs", metavar="SHA", help="the other commit being merged")
    parser.add_argument("base")
    parser.add_argument("current")
    parser.add_argument("other")
    parser.add_argument("path", nargs="?")
    args = parser.parse_args(argv)
    try:
        return run_driver(Path(args.base), Path(args.current), Path(args.other), args.path,
                          args.ours, args.theirs)
    except OSError as exc:  # one line for git's output, never a traceback
        sys.stderr.write(f"curator merge driver: {exc.strerror or exc}: {exc.filename}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
