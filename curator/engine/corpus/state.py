"""Where a wiki root's local state lives (docs/design.md §2): the page cache, search index,
journal, write lock and the other rebuildable files.

A wiki is a folder at the top of a git repository (``curator init`` makes one). Its state is
``.curator/`` in it, kept out of ``git status`` by the repository's own ``.git/info/exclude`` (so
no tracked file changes) unless a ``.gitignore`` there already names it. Any other folder, and a
repository whose folder cannot be written, keeps its state under the user's cache folder
(``$XDG_CACHE_HOME/curator/<name>-<hash of the path>``): a read-only command run on ``/etc`` or
on a folder of notes leaves nothing in it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STATE_DIR = ".curator"
#: The line ``.git/info/exclude`` gets (the form ``curator init`` writes to ``.gitignore``).
EXCLUDE_LINE = ".curator/"
#: Lines of an ignore file that already keep the state folder out of ``git status``.
_IGNORING = frozenset({".curator", ".curator/", "/.curator", "/.curator/", ".curator/*", "/.curator/*"})


def is_wiki(root: Path) -> bool:
    """Whether ``root`` is the top of a git repository (``.git``: a folder, or a file naming one)."""
    return os.path.lexists(root / ".git")


def cache_state_dir(root: Path) -> Path:
    """The state folder of a folder that is not a wiki, under the user's cache folder."""
    from platformdirs import user_cache_path

    real = os.path.realpath(root)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in (os.path.basename(real) or "root"))[:40]
    return user_cache_path("curator", appauthor=False) / "state" / f"{name}-{digest}"


def locate_state(root: Path) -> Path:
    """Where ``root`` keeps its local state (see the module doc), touching nothing."""
    if is_wiki(root) and os.access(root, os.W_OK):
        return root / STATE_DIR
    return cache_state_dir(root)


def state_dir_for(root: Path) -> Path:
    """:func:`locate_state`, making sure a repository's ``.curator/`` stays out of ``git status``."""
    state = locate_state(root)
    if state == root / STATE_DIR:
        exclude_state(root)
    return state


def _git_dir(root: Path) -> Path | None:
    """The folder holding ``info/exclude``: ``.git``, or for a linked worktree or submodule (a
    ``.git`` file, ``gitdir: ...``) the repository's common folder. Read here, not asked of git:
    every command opens a wiki, and a git process costs more than the rest of a warm ``search``."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (root / text[len("gitdir:"):].strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return (git_dir / common).resolve()


def _names_state(path: Path) -> bool:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip() in _IGNORING for line in lines)


def exclude_state(root: Path) -> None:
    """Append ``.curator/`` to the repository's ``info/exclude`` once, unless the root's
    ``.gitignore`` or the exclude file already name it. Append only: the user's lines are kept as
    they are. A repository that cannot be written is left alone (``.curator/`` then shows as
    untracked, nothing worse)."""
    if _names_state(root / ".gitignore"):
        return
    git_dir = _git_dir(root)
    if git_dir is None:
        return
    exclude = git_dir / "info" / "exclude"
    if _names_state(exclude):
        return
    try:
        current = exclude.read_bytes()
    except FileNotFoundError:
        current = b""
    except OSError:
        return
    try:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with open(exclude, "ab") as f:
            if current and not current.endswith(b"\n"):
                f.write(b"\n")
            f.write(f"# Curator's local state (caches, journal, lock)\n{EXCLUDE_LINE}\n".encode())
    except OSError:
        pass
