"""The git merge driver for pages (issue 11): append-only knowledge merges without conflicts.

Git runs it for every ``*.md`` file changed on both sides of a merge (``.gitattributes``:
``*.md merge=curator``; repository config ``merge.curator.driver``), and for the review inbox's
records (``_review/inbox/*.json``, ``_review/rejected/*.json``: :func:`merge_record`)::

    <python> -m curator.engine.sync.merge_driver [--ours SHA --theirs SHA] %O %A %B %P

``%O`` is the merge base's version, ``%A`` ours (the result is written here), ``%B`` theirs,
``%P`` the page's path. Exit status 0 = merged cleanly, 1 = conflict (``%A`` then holds the page
with normal conflict markers). Lock-free and side-effect free apart from ``%A``: it runs inside git
(``git merge``, ``git merge-tree``), which may run it while a Curator action holds the wiki lock.

How two versions of a page merge (facts kept, frontmatter united) is
:mod:`curator.engine.write.three_way`'s: the operator's conflicting save uses the same merge.

**The operator's side** (for ``trust``): the side on which an operator's commit (trailer
``Curator-Actor: operator``, or authored ``operator``) touched
the page since the merge base. When both or neither did, ours (the local side, i.e. the clone
that runs the merge) wins. The driver learns the two commits from ``--ours``/``--theirs``
(:mod:`curator.engine.sync.remote` passes them to ``git merge-tree``), else from ``HEAD`` and ``MERGE_HEAD`` (a plain
``git merge``/``git pull`` in the clone), else it cannot tell and ours wins.

Registering the driver (the ``.gitattributes`` lines and this clone's config, with an absolute
interpreter path) is :mod:`curator.engine.write.bootstrap`'s (``curator init`` and
``curator sync --setup``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from curator.engine.repo.git import run_here
from curator.engine.write.bootstrap import RECORD_FOLDERS
from curator.engine.write.three_way import MISSING, decode_page, merge_bytes, merge_page, parse_parts

#: What marks the operator's commits: the ``Curator-Actor: operator`` trailer (operators commit
#: under their own names); ``operator`` is also the author name of commits made without a git identity.
OPERATOR_NAME = "operator"


# --- the inbox's records ------------------------------------------------------------------------

def is_record(path: str | None) -> bool:
    """Whether ``path`` is one of the review inbox's decision records (an item, a rejection)."""
    if not path or not path.endswith(".json"):
        return False
    return any(path.startswith(folder + "/") and "/" not in path[len(folder) + 1:] for folder in RECORD_FOLDERS)


def merge_record(ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
    """Merge two versions of one inbox record: (bytes for ``%A``, clean).

    A record is named by its fact (:func:`~curator.engine.review.inbox.item_id`, :func:`~curator.engine.review.inbox.rejection_key`) and
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
        # (the trailer's key is spelled here: the driver runs inside git and imports no actions)
        found = run_here("log", "--format=%an%n%(trailers:key=Curator-Actor,valueonly)", rng, "--", path) or ""
        return OPERATOR_NAME in found.splitlines()

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
        d = decode_page(data)
        metas.append(parse_parts(d.text)[1] if d is not None else {})
    b, o, t = (m.get("trust", MISSING) for m in metas)
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
