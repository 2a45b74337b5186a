"""Which wikis the operator trusts to run programs their own git configuration names
(docs/design.md §5): ``curator trust DIR``.

A repository's ``.git/config`` (and its hooks folder) can name programs git runs on ordinary
commands: a file-system monitor, hooks, clean/smudge filters, diff text converters, merge drivers,
credential helpers, upload/receive-pack programs. A wiki that came from elsewhere (downloaded,
unzipped, cloned from a shared remote) is not the operator's: until the operator trusts it, every
git call Curator makes overrides those settings (:class:`~curator.engine.repo.git.Git`). The list
of trusted wikis lives in the user's own configuration folder, never in a repository, so no wiki
can trust itself.

Trusting a wiki is also the operator's word that a ``.curator/`` it came with is theirs: it is
adopted (stamped, :func:`curator.engine.corpus.state.adopt_state`), so its agents' tokens and
judge settings are used from then on; until then Curator reads nothing in it (docs/design.md §2).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# (the list is read where the state folder is decided too, a layer below)
from curator.engine.corpus.state import TRUST_FILE, adopt_state, is_trusted, trust_file, trusted_roots
from curator.engine.corpus.state import trust_key as _key
from curator.engine.errors import CuratorError

__all__ = ["TRUST_FILE", "distrust", "is_trusted", "trust", "trust_file", "trusted_roots"]


def _save(roots: list[str]) -> None:
    path = trust_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"trusted": sorted(set(roots))}, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise CuratorError(f"cannot record trusted wikis in {path}: {exc.strerror or exc}") from None


def trust(root: Path) -> bool:
    """Trust the wiki at ``root`` (its git configuration's programs run again) and adopt its
    ``.curator/`` if it has an unstamped one; True if the trusted list changed."""
    roots = trusted_roots()
    key = _key(root)
    if key not in roots:
        _save([*roots, key])
    adopt_state(Path(key))  # (after the list: a wiki opened meanwhile finds it trusted anyway)
    return key not in roots


def distrust(root: Path) -> bool:
    """Stop trusting the wiki at ``root``; True if it was trusted."""
    roots = trusted_roots()
    key = _key(root)
    if key not in roots:
        return False
    _save([r for r in roots if r != key])
    return True
