"""Where a wiki root's local state lives (docs/design.md §2): the page cache, search index,
journal, write lock and the other rebuildable files, and the files Curator trusts as the
operator's own (the agents' token hashes, the fact judge's and embedder's settings, sync's held
commits).

A wiki is a folder at the top of a git repository (``curator init`` makes one). Its state is
``.curator/`` in it, kept out of ``git status`` by the repository's own ``.git/info/exclude`` (so
no tracked file changes) unless a ``.gitignore`` there already names it. Any other folder, and a
repository whose folder cannot be written, keeps its state under the user's cache folder
(``$XDG_CACHE_HOME/curator/<name>-<hash of the path>``): a read-only command run on ``/etc`` or
on a folder of notes leaves nothing in it.

A ``.curator/`` is used only if Curator made it on this machine for this user: a folder that
arrived with the wiki (a repository tracking ``.curator/agents.json`` that ``git clone`` checks
out, a downloaded or unzipped wiki) would otherwise hand its author an agent token the HTTP server
accepts, a judge URL the wiki's facts are sent to, and ``marshal`` blobs to load. Curator makes the
folder with an origin stamp in it (:data:`ORIGIN_NAME`: a random id and its keyed BLAKE2b under a
per-user secret, :data:`SECRET_NAME` in the user's configuration folder, mode 0600; no path, so a
moved or renamed wiki keeps its state). A ``.curator/`` whose stamp is missing or does not verify
(or that is a symbolic link, or whose stamp is one) is foreign: nothing in it is read or written,
the wiki's state lives under the user's cache folder as for a folder that is not a wiki, and one
line (once per process and wiki) tells the operator that ``curator trust DIR`` adopts it. A
``.curator/`` made before the stamp existed is adopted silently when the operator already trusts
the wiki (``trusted-wikis.json``, :mod:`curator.engine.repo.trust`), else it is foreign too.
Verifying costs two small file reads and no git process: every command opens a wiki.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
import sys
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


def config_dir() -> Path:
    """The user's configuration folder for Curator (platformdirs' ``user_config_path``, where
    ``trusted-wikis.json`` is too). Worked out here on Linux: importing platformdirs costs more
    than the rest of opening a wiki's state."""
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        return Path(xdg if os.path.isabs(xdg) else os.path.expanduser("~/.config")) / "curator"
    from platformdirs import user_config_path

    return user_config_path("curator", appauthor=False)


#: The operator's list of the wikis they trust (``curator trust``, :mod:`curator.engine.repo.trust`),
#: in :func:`config_dir`: read here too, where a state folder an older Curator made is adopted.
TRUST_FILE = "trusted-wikis.json"


def trust_file() -> Path:
    return config_dir() / TRUST_FILE


def trust_key(root: Path) -> str:
    """How the trusted list names ``root``: its resolved path."""
    return str(Path(root).resolve())


def trusted_roots() -> list[str]:
    """The wiki roots the operator trusts (resolved paths), as recorded."""
    import json

    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return []  # a damaged list trusts nothing (the safe reading); `curator trust` rewrites it
    roots = data.get("trusted") if isinstance(data, dict) else None
    return [str(r) for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def is_trusted(root: Path) -> bool:
    return trust_key(root) in trusted_roots()


#: The per-user secret stamps are keyed with, in :func:`config_dir` (never in a wiki).
SECRET_NAME = "state-secret"
#: The origin stamp in a state folder Curator made (or the operator adopted).
ORIGIN_NAME = "origin"
_SECRET_BYTES = 32
_ORIGIN_TAG = "curator-state-origin-1"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _read_small(path: Path, limit: int) -> bytes | None:
    """A regular file's first ``limit`` bytes, not through a symbolic link; None when there is none:
    a stamp linked to another wiki's would otherwise verify."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _secret(create: bool) -> bytes | None:
    """The per-user secret, made (32 random bytes, mode 0600) on first use when ``create``; None
    when there is none (or it cannot be made: the state then stays under the cache folder)."""
    try:
        return _read_secret(config_dir() / SECRET_NAME, create)
    except OSError:
        return None


def _read_secret(path: Path, create: bool) -> bytes | None:
    key = _read_small(path, 64)
    if key is not None and len(key) == _SECRET_BYTES:
        return key
    if key is not None or not create:
        return None  # (a damaged secret verifies nothing: a new one would orphan every stamp silently)
    import tempfile  # (here: only making it needs it, and every command verifies)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{SECRET_NAME}-", dir=path.parent)  # (mode 0600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(_SECRET_BYTES))
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # never replaces: two processes making it at once agree on one
    finally:
        os.unlink(tmp)
    key = _read_small(path, 64)
    return key if key is not None and len(key) == _SECRET_BYTES else None


def _mac(key: bytes, ident: str) -> str:
    return hashlib.blake2b(f"{_ORIGIN_TAG}\0{ident}".encode(), key=key, digest_size=32).hexdigest()


def _origin_text(key: bytes) -> bytes:
    ident = os.urandom(16).hex()
    return f"{_ORIGIN_TAG} {ident} {_mac(key, ident)}\n".encode()


def is_ours(state: Path) -> bool:
    """Whether ``state`` is a state folder Curator made (or the operator adopted) on this machine
    for this user: a real folder whose origin stamp verifies under the user's secret."""
    try:
        if not stat.S_ISDIR(os.lstat(state).st_mode):
            return False
    except OSError:
        return False
    text = _read_small(state / ORIGIN_NAME, 256)
    if text is None:
        return False
    parts = text.split()
    if len(parts) != 3 or parts[0] != _ORIGIN_TAG.encode():
        return False
    key = _secret(create=False)
    return key is not None and hmac.compare_digest(parts[2], _mac(key, parts[1].decode("latin-1")).encode())


def foreign_state(root: Path) -> bool:
    """Whether ``root`` has a ``.curator/`` that is not this user's (:func:`is_ours`)."""
    return os.path.lexists(Path(root) / STATE_DIR) and not is_ours(Path(root) / STATE_DIR)


def adopt_state(root: Path) -> bool:
    """Stamp the wiki's existing ``.curator/`` as this user's (``curator trust DIR``: the
    operator's decision that the folder is theirs); True if it was not stamped before. A symbolic
    link there is not adopted (its folder belongs to whatever it points at)."""
    state = Path(root) / STATE_DIR
    try:
        if not stat.S_ISDIR(os.lstat(state).st_mode):
            return False
    except OSError:
        return False
    if is_ours(state):
        return False
    key = _secret(create=True)
    if key is None:
        return False
    origin = state / ORIGIN_NAME
    tmp = state / f".{ORIGIN_NAME}-{os.urandom(4).hex()}"
    try:
        tmp.write_bytes(_origin_text(key))
        os.replace(tmp, origin)  # (replaces a foreign stamp, or a link standing where it goes)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True


def _make_state(root: Path) -> bool:
    """Make ``root/.curator`` with its origin stamp in one step (a folder made elsewhere and renamed
    into place): a process never sees it unstamped and takes it for foreign. False when it cannot."""
    key = _secret(create=True)
    if key is None:
        return False
    import shutil
    import tempfile

    try:
        tmp = Path(tempfile.mkdtemp(prefix=f"{STATE_DIR}-new-", dir=root))
    except OSError:
        return False
    try:
        (tmp / ORIGIN_NAME).write_bytes(_origin_text(key))
        os.rename(tmp, root / STATE_DIR)
    except OSError:
        pass  # (another process made it first: it is asked again)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


#: The wikis whose foreign state folder this process tree has said already: passed on to the
#: processes it starts (the station's workers, a command's helpers), which say it no more.
_SAID = "CURATOR_FOREIGN_STATE_SAID"
_warned: set[str] = {p for p in os.environ.get(_SAID, "").split(os.pathsep) if p}


def _warn_foreign(root: Path, elsewhere: Path) -> None:
    """One line per wiki and process tree (logging's last resort prints it on stderr, no traceback)."""
    key = str(root)
    if key in _warned:
        return
    _warned.add(key)
    os.environ[_SAID] = os.pathsep.join(sorted(_warned))
    import logging

    logging.getLogger(__name__).warning(
        "curator: %s was not made by Curator for you on this machine (it came with the wiki, or an older "
        "Curator made it): "
        "ignored, the wiki's local state is kept in %s; 'curator trust %s' adopts it if it is yours",
        root / STATE_DIR, elsewhere, root)


def _local_state(root: Path, warn: bool) -> Path | None:
    """``root/.curator`` when it may be used (it is ours, or absent: ours to make), else None."""
    local = root / STATE_DIR
    if not os.path.lexists(local) or is_ours(local):
        return local
    # Made by a Curator from before the stamp: the operator's own if they trust the wiki.
    if os.path.isdir(local) and not os.path.islink(local) and is_trusted(root):
        return local
    if warn:
        _warn_foreign(root, cache_state_dir(root))
    return None


def locate_state(root: Path, *, warn: bool = True) -> Path:
    """Where ``root`` keeps its local state (see the module doc), touching nothing."""
    if is_wiki(root) and os.access(root, os.W_OK):
        local = _local_state(root, warn)
        if local is not None:
            return local
    return cache_state_dir(root)


def state_dir_for(root: Path) -> Path:
    """:func:`locate_state`, making a repository's ``.curator/`` (stamped) when there is none,
    adopting one an older Curator made in a wiki the operator trusts, and keeping it out of
    ``git status``."""
    state = locate_state(root)
    if state == root / STATE_DIR:
        if not os.path.lexists(state):
            _make_state(root)
            if not is_ours(state):  # (not made, or another process made one at the same time)
                return locate_state(root) if os.path.lexists(state) else cache_state_dir(root)
        elif not is_ours(state):
            adopt_state(root)  # (only reached for an unstamped folder of a trusted wiki)
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
