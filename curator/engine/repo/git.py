"""The one git backend: every git process Curator starts is started here (docs/design.md §4, §5).

Actions, sync, the page merge driver, ``curator init`` and history/blame/diff all go through the
typed methods of :class:`Git` (``commit_paths``, ``log``, ``blame_porcelain``, ``merge_tree``,
``config_get``, ``network``, ...) and never spell a git command themselves.

Why the CLI and plumbing, and no GitPython: commits use measured plumbing (blobs and the few
changed trees written here, ``update-index`` and ``update-ref`` side by side: no stat of the
whole tree, which ``git commit`` and GitPython's ``index.add`` both pay, ~50 ms on a
10,000-page wiki). For the rest (history, diffs, blame, remotes, config) GitPython would only
wrap the same ``git`` processes (its ``repo.blame``, ``git.log``, ``remote.fetch`` and config
reader spawn or parse what one call here does) while adding ~80 ms of import to every one-shot
CLI call and a second way of running git with its own environment and lock handling; so it is
not a dependency.

Rules every call follows:

* Identity is always explicit (``-c user.name/-c user.email`` plus the ``GIT_AUTHOR_*`` and
  ``GIT_COMMITTER_*`` variables), so commits never depend on a global git identity.
* Paths are literal (``--literal-pathspecs``): a page called ``a*.md`` never globs.
* Only the given paths are staged and committed; whatever else the operator has changed or
  staged in the tree stays out of the commit (and stays staged).
* A ``.lock`` file under ``.git`` left by a killed git process is cleared only when it is
  stale, see :func:`lock_is_stale`.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import subprocess
import tempfile
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from curator.engine.errors import CuratorError
from curator.engine.repo.signing import SigningKey
from curator.engine.repo.trust import is_trusted

#: Paths named on one ``ls-tree`` command line by :meth:`Git.show_many` (well under any system's limit).
SHOW_MANY_PATHS = 500

_BASE = ["git", "--literal-pathspecs", "-c", "core.quotepath=false", "-c", "commit.gpgsign=false",
         "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "gc.auto=0",
         "-c", "maintenance.auto=false"]
#: What every git call on a wiki the operator has not trusted overrides (docs/design.md §5): the
#: configuration that names a program git would run on ordinary commands. Per-name settings
#: (filters, diff and merge drivers, remotes' pack programs) are added from the repository's own
#: configuration (:meth:`Git.guard`); commands that print patches also get ``--no-ext-diff``.
NEUTRAL_CONFIG = (
    "core.fsmonitor=false", f"core.hooksPath={os.devnull}", "core.sshCommand=ssh", "core.askPass=",
    "core.pager=cat", "core.editor=:", "sequence.editor=:", "credential.helper=",
    "gpg.program=gpg", "gpg.ssh.program=ssh-keygen", "gpg.x509.program=gpgsm",
    "protocol.ext.allow=never", "submodule.recurse=false", "fetch.recurseSubmodules=false",
)
#: The neutral stand-ins of per-name programs: no filter, ``cat`` as the text converter (the file
#: as it is), git's own text merge for a merge driver, git's own pack programs.
_PER_NAME = {
    "filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
    "diff": {"textconv": "cat", "command": ""},
    "merge": {"driver": "git merge-file %A %O %B"},
    "remote": {"uploadpack": "git-upload-pack", "receivepack": "git-receive-pack"},
}
#: The network commands' own options for git's pack programs (see :meth:`Git.network`).
_PACK_PROGRAM = {"fetch": "--upload-pack=git-upload-pack", "ls-remote": "--upload-pack=git-upload-pack",
                 "push": "--receive-pack=git-receive-pack"}
#: Keys of a repository's configuration that name a program (shown before the operator trusts it).
_PROGRAM_KEY = re.compile(
    r"^(core\.(fsmonitor|hookspath|sshcommand|askpass|pager|editor|gitproxy)|sequence\.editor"
    r"|diff\.external|credential\.(.+\.)?helper|gpg\.(.+\.)?program|pager\..+|alias\..+"
    r"|filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)"
    r"|merge\..+\.driver|remote\..+\.(uploadpack|receivepack|url|pushurl)|url\..+\.(insteadof|pushinsteadof))$")
_LOCK_MSG = re.compile(r"Unable to create '([^']+\.lock)': File exists")
#: git's default ``gc.autoPackLimit`` and ``gc.auto`` (see :meth:`Git.gc_due`).
AUTO_PACK_LIMIT = 50
AUTO_LOOSE_OBJECTS = 6700
#: How old a ``.lock`` under ``.git`` must be before it may be considered stale at all. Git holds
#: its locks for milliseconds; a lock this old with no live holder is a leftover.
STALE_LOCK_MIN_AGE = 0.25
#: Where ``/proc`` is missing (not Linux) we cannot see holders; then only age decides.
STALE_LOCK_AGE_NO_PROC = 600.0
#: How long a git call that found a ``.lock`` held waits for it to go (or to turn out stale)
#: before giving up; ``CURATOR_GIT_LOCK_WAIT_S`` sets another (tests holding a lock on purpose).
FRESH_LOCK_WAIT_S = 2.0


def fresh_lock_wait() -> float:
    """:data:`FRESH_LOCK_WAIT_S`, or ``CURATOR_GIT_LOCK_WAIT_S`` when set to a number."""
    try:
        return float(os.environ.get("CURATOR_GIT_LOCK_WAIT_S", FRESH_LOCK_WAIT_S))
    except ValueError:
        return FRESH_LOCK_WAIT_S


class GitError(CuratorError):
    """A git command failed; the message is git's last error line."""


class IndexNotUpdated(GitError):
    """The commit was made (the branch points at it) but git's index could not be updated.

    Raised by :meth:`Git.commit_paths` when ``update-index`` fails after ``update-ref`` moved the
    branch (e.g. ``.git/index.lock`` held by a live process): the change *is* committed
    (``commit``), and the index entries of ``paths`` still show the old content until
    :meth:`Git.repair_index` puts them back in line with HEAD.
    """

    def __init__(self, message: str, commit: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.commit = commit
        self.paths = list(paths)


@dataclass(slots=True)
class LogEntry:
    """One commit as :meth:`Git.log` reports it."""

    commit: str
    author_name: str
    author_email: str
    time: int  # unix seconds (author date)
    subject: str
    body: str = ""
    paths: list[str] = field(default_factory=list)


def _env(author: tuple[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    # A caller's GIT_DIR / GIT_INDEX_FILE (e.g. inside a git hook) must not redirect our commands.
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    if author is not None:
        name, email = author
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
                   GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    return env


def lock_is_stale(lock: Path, repo_root: Path) -> bool:
    """Whether ``lock`` (a ``.lock`` file under ``.git``) was left by a process that is gone.

    The rule: the file must be at least :data:`STALE_LOCK_MIN_AGE` seconds old, and on Linux no
    live process may have it open and no live ``git`` process may be working in this repository
    (its cwd inside ``repo_root``): git closes a lock file before renaming it, so an open-file scan
    alone would miss a git still mid-commit. Without ``/proc`` the lock must be 10 minutes old.
    Curator's own git calls for a wiki run only under the wiki's write lock, so the caller (who
    holds it) knows no other Curator action is using git here.
    """
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return False  # gone already: nothing to clear
    if age < STALE_LOCK_MIN_AGE:
        return False
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return age >= STALE_LOCK_AGE_NO_PROC
    lock_s = str(lock)
    root_s = str(repo_root)
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            if comm.startswith("git"):
                cwd = os.readlink(entry / "cwd")
                if cwd == root_s or cwd.startswith(root_s + os.sep):
                    return False
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) == lock_s:
                    return False
        except OSError:
            continue  # the process ended meanwhile, or is not ours to inspect
    return True


class Git:
    """Git commands for one repository (the wiki root)."""

    def __init__(self, root: Path, trusted: bool | None = None) -> None:
        self.root = Path(root)
        self.git_dir = self.root / ".git"
        #: Whether the operator trusts this wiki's own git configuration (``curator trust``); when
        #: not, every call overrides what names a program (:meth:`guard`).
        self.trusted = is_trusted(self.root) if trusted is None else trusted
        self._guard: tuple[float, list[str]] | None = None  # (.git/config mtime, the -c arguments)
        # Parsed trees by sha (immutable, so never stale) and commit -> root tree: a long-lived
        # process re-reads nothing it wrote or read before.
        self._trees: OrderedDict[str, dict[bytes, tuple[bytes, bytes]]] = OrderedDict()
        self._commit_trees: dict[str, str] = {}
        self._head_reader: _TreeReader | None = None
        self._pinned: tuple[str | None] | None = None  # HEAD, read once for a batch (same_head)
        self._last_changed: tuple[str, dict[str, int]] | None = None  # (HEAD, last_changed())

    # --- plumbing ----------------------------------------------------------------------
    def run(self, *args: str, author: tuple[str, str] | None = None, check: bool = True,
            input: bytes | None = None, literal: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``git <args>`` in the root; on a stale ``.lock`` clear it and retry once.

        ``literal=False`` lets git expand pathspec magic (``:(glob)...``), which every other call
        must not (a page called ``a*.md`` never globs). ``env``: variables set for this call."""
        ident = author or ("curator", "curator@curator.invalid")
        base = _BASE if literal else [x for x in _BASE if x != "--literal-pathspecs"]
        cmd = [*base, *self.guard(), "-c", f"user.name={ident[0]}", "-c", f"user.email={ident[1]}", *args]
        for attempt in range(2):
            proc = subprocess.run(cmd, cwd=self.root, capture_output=True, env={**_env(author), **(env or {})},
                                  input=input)
            if proc.returncode == 0 or not check:
                return proc
            err = proc.stderr.decode("utf-8", "replace")
            m = _LOCK_MSG.search(err)
            if attempt == 0 and m and self._clear_stale_lock(Path(m.group(1))):
                continue
            last = [line for line in err.strip().splitlines() if line.strip()][-1:] or ["(no message)"]
            raise GitError(f"git {args[0]} failed: {last[0].strip()}")
        raise AssertionError("unreachable")

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """Start ``git <args>`` with pipes (for calls that run side by side; no lock retry)."""
        cmd = [*_BASE, *self.guard(), "-c", "user.name=curator", "-c", "user.email=curator@curator.invalid",
               *args]
        return subprocess.Popen(cmd, cwd=self.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_env(None))

    # --- programs the repository's own configuration names ---------------------------------
    def guard(self) -> list[str]:
        """The ``-c`` arguments every git call of this wiki carries: none when the operator
        trusts it; else :data:`NEUTRAL_CONFIG` and a neutral stand-in for every filter, diff and
        merge driver and remote pack program the repository's configuration names."""
        if self.trusted:
            return []
        config = self.git_dir / "config"
        try:
            stamp = config.stat().st_mtime
        except OSError:
            stamp = -1.0
        if self._guard is not None and self._guard[0] == stamp:
            return self._guard[1]
        args = [x for item in NEUTRAL_CONFIG for x in ("-c", item)]
        for key, _value in self._local_config(args) if stamp >= 0 else ():
            section, _, rest = key.partition(".")
            name, _, leaf = rest.rpartition(".")
            stand_in = _PER_NAME.get(section, {}).get(leaf) if name else None
            if stand_in is not None:
                args += ["-c", f"{section}.{name}.{leaf}={stand_in}"]
        self._guard = (stamp, args)
        return args

    def _local_config(self, neutral: list[str]) -> list[tuple[str, str]]:
        """(key, value) of the repository's own configuration (includes followed), read with
        every program neutralised (``git config`` runs none, but a hook path could be set)."""
        proc = subprocess.run(["git", *neutral, "config", "--local", "--includes", "--list", "-z"],
                              cwd=self.root, capture_output=True, env=_env(None))
        out = []
        for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
            key, _, value = item.partition("\n")
            if key:
                out.append((key, value))  # (git prints section and leaf in lower case already)
        return out

    def programs(self) -> list[str]:
        """What this repository's own configuration and hooks would have git run (``key = value``
        lines, ``hook NAME``): what Curator neutralises until the operator trusts the wiki. Our
        own page merge driver (``merge.curator.driver`` naming ``curator.engine.sync``) is not
        listed."""
        found = []
        for key, value in self._local_config([x for item in NEUTRAL_CONFIG for x in ("-c", item)]):
            if not _PROGRAM_KEY.match(key.lower()):
                continue
            if key.lower() == "core.fsmonitor" and value.lower() in ("false", "0", "no", "off", ""):
                continue
            low = key.lower()
            if low.startswith("remote.") and low.endswith(("url", "pushurl")) and not value.startswith("ext::"):
                continue  # an ordinary remote (only the ext:: transport runs a program)
            if low.startswith("url.") and not key[4:].startswith("ext::"):
                continue  # a rewrite to an ordinary URL
            if low.startswith("alias.") and not value.startswith("!"):
                continue  # an alias of a git command runs no program
            if key.lower() == "merge.curator.driver" and "curator.engine.sync.merge_driver" in value:
                continue
            found.append(f"{key} = {value}")
        hooks = self.git_dir / "hooks"
        try:
            names = sorted(e.name for e in os.scandir(hooks)
                           if not e.name.endswith(".sample") and e.is_file() and os.access(e.path, os.X_OK))
        except OSError:
            names = []
        found += [f"hook {name}" for name in names]
        return found

    def _clear_stale_lock(self, lock: Path) -> bool:
        """Remove ``lock`` when stale; wait a little for a fresh one held by a live git."""
        if not lock.is_absolute():
            lock = self.root / lock
        try:
            lock.resolve().relative_to(self.git_dir.resolve())
        except (ValueError, OSError):
            return False  # never delete anything outside .git
        deadline = time.monotonic() + fresh_lock_wait()
        while time.monotonic() < deadline:
            if not lock.exists():
                return True  # its holder finished meanwhile: just retry
            if lock_is_stale(lock, self.root.resolve()):
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()
                return True
            time.sleep(0.05)
        return False

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.decode("utf-8", "replace").strip()

    def out_head(self, *args: str, limit: int) -> tuple[str, bool]:
        """The first ``limit`` bytes of ``git <args>``'s output, and whether there was more.

        The rest is never read (git is stopped): the patch of a commit that imported a whole
        115 MB wiki must not be held in memory to show its first screens.
        """
        ident = ("curator", "curator@curator.invalid")
        cmd = [*_BASE, *self.guard(), "-c", f"user.name={ident[0]}", "-c", f"user.email={ident[1]}", *args]
        with subprocess.Popen(cmd, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=_env(None)) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            data = proc.stdout.read(limit + 1)
            more = len(data) > limit
            if more:
                proc.kill()
            err = b"" if more else proc.stderr.read()
            code = proc.wait()
        if not more and code != 0:
            last = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()][-1:]
            raise GitError(f"git {args[0]} failed: {(last or ['(no message)'])[0]}")
        return data[:limit].decode("utf-8", "replace").strip(), more

    # --- queries -----------------------------------------------------------------------
    def is_repo(self) -> bool:
        return self.git_dir.exists()

    @contextlib.contextmanager
    def same_head(self) -> Iterator[None]:
        """Within this block :meth:`head` is read once: for a batch of questions about HEAD's
        files (a merge asks about thousands) during which nothing is committed."""
        self._pinned = (self.head(),)
        try:
            yield
        finally:
            self._pinned = None

    def head(self) -> str | None:
        """The commit HEAD points at, or None in a repository without commits.

        Read from the files directly (no process): this runs before and after every action.
        """
        if self._pinned is not None:
            return self._pinned[0]
        try:
            ref = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        if not ref.startswith("ref: "):
            return ref or None
        name = ref[5:]
        try:
            return (self.git_dir / name).read_text().strip() or None
        except OSError:
            pass
        try:  # the branch may live only in packed-refs
            for line in (self.git_dir / "packed-refs").read_text().splitlines():
                sha, _, refname = line.partition(" ")
                if refname == name:
                    return sha
        except OSError:
            pass
        return None

    def dirty(self, paths: Iterable[str]) -> list[str]:
        """Which of ``paths`` differ from HEAD (modified, added, deleted or untracked)."""
        paths = list(dict.fromkeys(paths))
        if not paths:
            return []
        proc = self.run("status", "--porcelain=v1", "-z", "--untracked-files=all",
                        "--ignored=no", "--", *paths)
        found: list[str] = []
        items = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        i = 0
        while i < len(items):
            item = items[i]
            i += 1
            if len(item) < 4:
                continue
            code, path = item[:2], item[3:]
            found.append(path)
            if "R" in code or "C" in code:
                found.append(items[i])  # the rename's source follows
                i += 1
        wanted = set(paths)
        return [p for p in dict.fromkeys(found) if p in wanted]

    def tracked(self, paths: Iterable[str]) -> set[str]:
        paths = list(paths)
        if not paths:
            return set()
        out = self.run("ls-files", "-z", "--", *paths).stdout.decode("utf-8", "surrogateescape")
        return {p for p in out.split("\0") if p}

    def show(self, commit: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``commit``, or None when it did not exist there."""
        proc = self.run("cat-file", "blob", f"{commit}:{path}", check=False)
        return proc.stdout if proc.returncode == 0 else None

    def good_signers(self, rng: str, allowed_signers: Path | None, openpgp_home: Path | None = None,
                     openpgp_names: dict[str, str] | None = None) -> dict[str, str]:
        """Commit -> signer for the commits of ``rng`` whose signature git verifies as good: an SSH
        signature against ``allowed_signers`` (git's allowed-signers file; the signer is its
        principal), an OpenPGP one by a key of the keyring ``openpgp_home`` whose primary
        fingerprint ``openpgp_names`` names (the signer is that name). Unsigned commits and bad or
        unknown signatures are left out."""
        config = ["-c", "gpg.ssh.program=ssh-keygen", "-c", "gpg.program=gpg"]
        if allowed_signers is not None:
            config += ["-c", f"gpg.ssh.allowedSignersFile={allowed_signers}"]
        env = {"GNUPGHOME": str(openpgp_home)} if openpgp_home is not None else None
        proc = self.run(*config, "log", "--format=%H%x00%G?%x00%GS%x00%GP%x00%GF", rng, check=False, env=env)
        names = {k.upper(): v for k, v in (openpgp_names or {}).items()}
        out = {}
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            sha, status, signer, primary, fingerprint = (line.split("\0") + [""] * 5)[:5]
            if status != "G":
                continue
            if fingerprint.startswith(("SHA256:", "MD5:")):  # SSH: the allowed-signers principal
                if signer and allowed_signers is not None:
                    out[sha] = signer
            else:  # OpenPGP: the allow-list's name for the key, never the key's own user id
                name = names.get(primary.upper()) or names.get(fingerprint.upper())
                if name:
                    out[sha] = name
        return out

    def commits_between(self, ours: str, theirs: str,
                        trailer: str = "") -> list[tuple[str, list[str], str, str, list[str]]]:
        """(commit, parents, author name, subject, values of the ``trailer`` key) of the commits
        of ``theirs`` that ``ours`` lacks, oldest first (parents before children), in one call."""
        key = re.sub(r"[^A-Za-z0-9-]", "", trailer)
        fmt = "%H%x01%P%x01%an%x01%s%x01" + (f"%(trailers:key={key},valueonly,separator=%x02)" if key else "")
        out = self.run("log", "--reverse", "--topo-order", "-z", f"--format={fmt}",
                       f"{ours}..{theirs}").stdout.decode("utf-8", "replace")
        found = []
        for record in out.split("\0"):
            fields = record.strip("\n").split("\x01")
            if len(fields) == 5:
                values = [v.strip() for v in fields[4].split("\x02") if v.strip()]
                found.append((fields[0], fields[1].split(), fields[2], fields[3], values))
        return found

    def tree_of(self, commit: str) -> str:
        return self.out("rev-parse", f"{commit}^{{tree}}")

    def changes_of(self, commit: str, parents: Sequence[str]) -> list[tuple[str, str, str]]:
        """(status, new mode, path) of what ``commit`` (with ``parents``) changed: against its
        parent, or for a merge what its result holds that none of its parents had (``--cc``:
        what the merge itself wrote); a root commit against nothing."""
        args = ["diff-tree", "-r", "-z", "--no-commit-id", "--raw", "--no-renames"]
        if not parents:
            args.append("--root")
        elif len(parents) > 1:
            args.append("--cc")
        fields = self.run(*args, commit).stdout.decode("utf-8", "surrogateescape").split("\0")
        out = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            words = meta.lstrip(":").split()
            parent_count = len(meta) - len(meta.lstrip(":"))
            out.append((words[-1], words[:parent_count + 1][-1], path))
        return out

    def show_many(self, wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bytes | None]:
        """:meth:`show` for many (commit, path) pairs: one ``ls-tree`` per commit names their
        blobs, one ``cat-file --batch`` reads them. (``cat-file`` given ``commit:path`` walks the
        commit's trees again for each path, reading a folder of 260,000 pages each time: 17 ms a
        path at 300,000 pages, where one ``ls-tree`` for 33 paths took 57 ms.)"""
        out: dict[tuple[str, str], bytes | None] = {}
        by_commit: dict[str, list[str]] = {}
        for c, p in dict.fromkeys(wanted):
            if "\n" in p or "\r" in p:  # (not a line of ls-tree's or cat-file's)
                out[(c, p)] = self.show(c, p)
            else:
                by_commit.setdefault(c, []).append(p)
        blob_of: dict[tuple[str, str], str] = {}
        for c, paths in by_commit.items():
            for i in range(0, len(paths), SHOW_MANY_PATHS):
                chunk = paths[i:i + SHOW_MANY_PATHS]
                try:
                    entries = self.tree_entries(c, chunk)
                except GitError:
                    entries = {}  # (an unknown commit: nothing there)
                # (a folder, a submodule or a missing path: no file)
                blob_of.update(((c, p), entries[p][2]) for p in chunk if p in entries and entries[p][1] == "blob")
                out.update(((c, p), None) for p in chunk if (c, p) not in blob_of)
        if not blob_of:
            return out
        keys = list(blob_of)
        data = self.run("cat-file", "--batch", input="".join(f"{blob_of[k]}\n" for k in keys).encode()).stdout
        pos = 0
        for key in keys:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].rsplit(b" ", 2)
            pos = nl + 1
            if header[-1] in (b"missing", b"ambiguous") or len(header) != 3:  # "<name> missing"
                out[key] = None
                continue
            size = int(header[2])
            out[key] = data[pos:pos + size] if header[1] == b"blob" else None
            pos += size + 1
        return out

    def changed_paths(self, commit: str) -> list[str]:
        """Paths a commit changed relative to its first parent (all of them for a root commit)."""
        out = self.run("diff-tree", "--no-commit-id", "-r", "--root", "--name-only", "-z",
                       "--no-renames", commit).stdout.decode("utf-8", "surrogateescape")
        return [p for p in out.split("\0") if p]

    def parent(self, commit: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", f"{commit}^", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def resolve(self, rev: str) -> str | None:
        proc = self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def log(self, limit: int = 50, rev: str | None = None, paths: Sequence[str] = (),
            options: Sequence[str] = ()) -> list[LogEntry]:
        """Commits newest first with the paths each changed, in one ``git log`` call
        (``options`` are further ``git log`` options, e.g. ``--since=...``)."""
        if self.head() is None:
            return []
        args = ["log", f"-n{max(1, limit)}", "-z", "--name-only", "--no-renames",
                "--format=%x1e%H%x1f%an%x1f%ae%x1f%at%x1f%s%x1f%b", *options]
        if rev:
            args.append(rev)
        if paths:
            args += ["--", *paths]
        raw = self.run(*args).stdout.decode("utf-8", "replace")
        entries: list[LogEntry] = []
        for chunk in raw.split("\x1e")[1:]:
            header, _, names = chunk.partition("\0")
            parts = header.split("\x1f")
            if len(parts) < 6:
                continue
            sha, name, email, when, subject, body = parts[:6]
            files = [p for p in names.lstrip("\n").split("\0") if p]
            entries.append(LogEntry(sha, name, email, int(when or 0), subject, body.strip(), files))
        return entries

    # --- history, branches, remotes, config (typed: callers never spell a git command) ------
    def branch(self) -> str | None:
        """The branch HEAD is on, or None when HEAD is detached (read from the file, no process)."""
        try:
            ref = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        return ref[len("ref: refs/heads/"):] if ref.startswith("ref: refs/heads/") else None

    def config_get(self, key: str, *, local: bool = False) -> str | None:
        """A config value (``--local``: this repository's own file only), None when unset."""
        proc = self.run("config", *(["--local"] if local else []), "--get", key, check=False)
        return proc.stdout.decode("utf-8", "replace").strip() or None if proc.returncode == 0 else None

    def identity(self) -> tuple[str | None, str | None]:
        """This repository's ``user.name`` and ``user.email`` as git would use them (its own
        config, else the user's), each None when unset; one ``git config`` call."""
        proc = self.run("config", "-z", "--show-scope", "--get-regexp", r"^user\.(name|email)$", check=False)
        found: dict[str, str] = {}
        fields = proc.stdout.decode("utf-8", "replace").split("\0")
        for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
            key, _, value = entry.partition("\n")
            # Every call names Curator's own neutral identity on the command line: not the user's.
            if scope != "command" and value.strip():
                found[key] = value.strip()  # (the last one wins, as for git)
        return found.get("user.name"), found.get("user.email")

    def config_set(self, key: str, value: str) -> None:
        """Set ``key`` in this repository's own config (``--local``)."""
        self.run("config", "--local", key, value)

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def count(self, rev: str) -> int:
        """How many commits ``rev`` has (``rev-list --count``)."""
        return int(self.out("rev-list", "--count", rev) or 0)

    def ahead_behind(self, ours: str, theirs: str) -> tuple[int, int]:
        """Commits only in ``ours``, commits only in ``theirs``."""
        out = self.out("rev-list", "--left-right", "--count", f"{ours}...{theirs}").split()
        return int(out[0]), int(out[1])

    def names_in_tree(self, rev: str, paths: Sequence[str] = ()) -> list[str]:
        """Every file path in ``rev``'s tree (below ``paths`` when given)."""
        out = self.run("ls-tree", "-r", "-z", "--name-only", rev, *(["--", *paths] if paths else [])).stdout
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def tree_entries(self, rev: str, paths: Sequence[str]) -> dict[str, tuple[str, str, str]]:
        """Path -> (mode, type, object sha) of the files of ``rev``'s tree named by ``paths``
        (from the top of the repository; a folder among them names every file below it), in one
        ``ls-tree``. Raises :class:`GitError` for an unknown ``rev``."""
        listing = self.run("ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev, "--", *paths).stdout
        entries: dict[str, tuple[str, str, str]] = {}
        for item in listing.decode("utf-8", "surrogateescape").split("\0"):
            if "\t" in item:
                meta, path = item.split("\t", 1)
                mode, kind, sha = meta.split()
                entries[path] = (mode, kind, sha)
        return entries

    def tree_entry(self, rev: str, path: str) -> tuple[str, str] | None:
        """(mode, object sha) of ``path`` in ``rev``'s tree, or None when absent there."""
        out = self.run("ls-tree", "-z", rev, "--", path).stdout.decode("utf-8", "surrogateescape")
        if not out:
            return None
        meta = out.split("\t", 1)[0].split()
        return meta[0], meta[2]

    def diff_names(self, old: str, new: str) -> list[str]:
        """Paths that differ between two commits (no rename detection)."""
        out = self.run("diff", "--name-only", "-z", "--no-renames", old, new).stdout
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def names_touched(self, rng: str, paths: Sequence[str]) -> list[str]:
        """Paths below ``paths`` that commits of ``rng`` (``a..b`` or a commit) touched, in order."""
        out = self.run("log", "--format=", "--name-only", "-z", "--no-renames", rng, "--", *paths).stdout
        return list(dict.fromkeys(p for p in out.decode("utf-8", "surrogateescape").replace("\n", "\0")
                                  .split("\0") if p))

    def messages(self, commits: Sequence[str]) -> dict[str, str]:
        """The full message of each of ``commits`` (one ``git log --no-walk`` call)."""
        if not commits:
            return {}
        proc = self.run("log", "--no-walk=unsorted", "--stdin", "--format=%H%x1f%B%x1e",
                        input=("\n".join(commits) + "\n").encode())
        out: dict[str, str] = {}
        for chunk in proc.stdout.decode("utf-8", "replace").split("\x1e"):
            sha, sep, body = chunk.strip().partition("\x1f")
            if sep:
                out[sha] = body
        return out

    def last_changed(self) -> dict[str, int]:
        """Each path's newest commit time on HEAD (Unix seconds), from one ``git log`` over the
        whole history, kept until HEAD moves (the stale queue asks it for every page)."""
        head = self.head()
        if head is None:
            return {}
        cached = self._last_changed
        if cached is not None and cached[0] == head:
            return cached[1]
        raw = self.run("log", "-z", "--name-only", "--no-renames", "--format=%x1e%ct", head).stdout
        out: dict[str, int] = {}
        for chunk in raw.decode("utf-8", "surrogateescape").split("\x1e")[1:]:
            when, _, names = chunk.partition("\0")
            stamp = int(when.strip() or 0)
            for name in names.split("\0"):
                name = name.strip("\n")
                if name and name not in out:  # newest first: the first time a path shows is its last change
                    out[name] = stamp
        self._last_changed = (head, out)
        return out

    def added_in(self, path: str, rev: str = "HEAD") -> str | None:
        """The newest commit of ``rev`` that added ``path`` (created it or moved it there)."""
        return self.out("log", "-n1", "--diff-filter=A", "--format=%H", rev, "--", path) or None

    def deleted_in(self, rev: str, pathspec: str) -> tuple[str, str, str, str, str] | None:
        """(sha, author name, subject, body, author date in ISO 8601) of the newest commit of
        ``rev`` that removed a file matching ``pathspec`` (a path, or a ``:(glob)`` pattern), or None."""
        proc = self.run("log", "-1", "--diff-filter=D", "--format=%H%x00%an%x00%aI%x00%s%x00%B", rev, "--",
                        pathspec, check=False, literal=not pathspec.startswith(":("))
        out = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
        if not out:
            return None
        sha, author, when, subject, body = [*out.split("\0"), "", "", "", ""][:5]
        return sha, author, subject, body, when

    def renames(self, limit: int, since: str | None = None) -> str | None:
        """``git log --name-status`` of the last ``limit`` commits with a rename (each commit
        introduced by a NUL and its sha), or None when git cannot say. ``since``: only those
        after that commit (``since..HEAD``); None also when it is not an ancestor of HEAD or a
        merge came since (the last ``limit`` are then not these followed by those before it)."""
        if since is not None:
            followed = self._renames_since(since)
            if followed is not False:
                return followed
            known = self.run("merge-base", "--is-ancestor", since, "HEAD", check=False)
            merges = self.run("rev-list", "--merges", "--count", f"{since}..HEAD", check=False)
            if known.returncode != 0 or merges.returncode != 0 or merges.stdout.strip() != b"0":
                return None
        proc = self.run("log", f"-{limit}", "-M", "--diff-filter=R", "--name-status", "--format=%x00%H",
                        *([f"{since}..HEAD"] if since is not None else []), check=False)
        return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None

    def _renames_since(self, since: str, most: int = 64) -> str | Literal[False] | None:
        """:meth:`renames` after ``since`` in one ``git log`` of every commit since (the usual
        case: an append or two since the last lint), not three (is it an ancestor, was there a
        merge, the renames: 40 ms of every ``lint`` and ``health`` after an append): the commits
        must be a chain of one parent each down to ``since``. False when more than ``most``
        commits came since (their every change is listed here): :meth:`renames` asks as before."""
        proc = self.run("log", f"-{most + 1}", "-M", "--name-status", "--format=%x00%H %P", f"{since}..HEAD",
                        check=False)
        if proc.returncode != 0:
            return None
        commits = [c.strip().split("\n") for c in proc.stdout.decode("utf-8", "replace").split("\0") if c.strip()]
        if len(commits) > most:
            return False
        below, out = None, []
        for lines in commits:  # (newest first)
            sha, *parents = lines[0].split()
            if len(parents) != 1 or (below is not None and sha != below):
                return None  # a merge, or not one chain
            below = parents[0]
            renamed = [line for line in lines[1:] if line.startswith("R") and line.count("\t") == 2]
            if renamed:
                out.append(f"\0{sha}\n\n" + "\n".join(renamed) + "\n")
        if below != since:
            return None  # (nothing since: HEAD is at or behind ``since``, which is not its ancestor)
        return "".join(out)

    def authors(self, rng: str, path: str) -> list[str]:
        """Author names of the commits of ``rng`` that touched ``path``, newest first."""
        proc = self.run("log", "--format=%an", rng, "--", path, check=False)
        return proc.stdout.decode("utf-8", "replace").split() if proc.returncode == 0 else []

    def blame_porcelain(self, path: str, *, copy_score: int | None = None) -> subprocess.Popen[bytes]:
        """Start ``git blame --porcelain HEAD -- path`` (following moves and copies at
        ``copy_score`` when given); the caller reads it, so two can run side by side."""
        follow = [f"-M{copy_score}", f"-C{copy_score}"] if copy_score is not None else []
        plain = ["--no-textconv"] if not self.trusted else []
        return self.start("blame", "--porcelain", *plain, *follow, "HEAD", "--", path)

    def patch(self, commit: str, *, stat: bool, limit: int) -> tuple[str, bool]:
        """``git show`` of ``commit`` (header, optional stat, patch), at most ``limit`` bytes read,
        and whether there was more."""
        return self.out_head("show", "--no-color", *self._no_programs(), *(["--stat"] if stat else []), "--patch",
                             "--format=%H%n%an <%ae>%n%aI%n%n%B", commit, limit=limit)

    def _no_programs(self) -> list[str]:
        """A patch of an untrusted wiki is git's own: no external diff, no text converter."""
        return [] if self.trusted else ["--no-ext-diff", "--no-textconv"]

    def changed_count(self, commit: str) -> int:
        """How many files ``commit`` changed (a tree diff, no content compared)."""
        return self.run("diff-tree", "-r", "--root", "--no-commit-id", "--name-only", "-z", commit).stdout.count(b"\0")

    def blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Blob contents by id (one ``cat-file --batch``); absent ones are left out."""
        if not shas:
            return {}
        data = self.run("cat-file", "--batch", input=("\n".join(shas) + "\n").encode(), check=False).stdout
        out: dict[str, bytes] = {}
        pos = 0
        for sha in shas:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            header = data[pos:nl].split()
            pos = nl + 1
            if len(header) != 3 or header[1] != b"blob":
                continue  # "<sha> missing" (or not a blob)
            size = int(header[2])
            out[sha] = data[pos:pos + size]
            pos += size + 1
        return out

    # --- merging and building commits by hand (sync) ---------------------------------------
    def merge_tree(self, ours: str, theirs: str, config: Sequence[tuple[str, str]] = ()) -> tuple[str, list[str]]:
        """``git merge-tree --write-tree`` of two commits: (the tree, conflicted paths), with
        extra ``config`` (e.g. the page merge driver told which commits it merges)."""
        opts = [x for key, value in config for x in ("-c", f"{key}={value}")]
        proc = self.run(*opts, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages",
                        "--allow-unrelated-histories", ours, theirs, check=False)
        if proc.returncode not in (0, 1):
            raise GitError(f"git merge-tree failed: {last_line(proc.stderr)}")
        parts = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        tree = parts[0].strip()
        conflicts = list(dict.fromkeys(p for p in parts[1:] if p)) if proc.returncode == 1 else []
        return tree, conflicts

    def make_commit(self, tree: str, parents: Sequence[str], message: str, author: tuple[str, str],
                    sign: SigningKey | None = None) -> str:
        """A commit object of ``tree`` with ``parents`` (``git commit-tree``, signed with ``sign``);
        no ref moves."""
        args = [*(sign.git_config() if sign else []), "commit-tree", *(["-S"] if sign else []), tree]
        for p in parents:
            args += ["-p", p]
        return self.run(*args, input=message.encode("utf-8"), author=author).stdout.decode().strip()

    def fast_forward(self, target: str) -> subprocess.CompletedProcess[bytes]:
        """``git merge --ff-only`` to ``target`` (branch, index and working tree); the caller reads
        git's refusal (which paths are in the way) from the answer."""
        return self.run("merge", "--ff-only", "--no-edit", "--quiet", target, check=False)

    def update_ref(self, ref: str, commit: str) -> bool:
        return self.run("update-ref", ref, commit, check=False).returncode == 0

    def tree_with(self, tree: str, entries: dict[str, tuple[str, str] | None]) -> str:
        """``tree`` with the given paths set to (mode, sha) or removed (None), via a throw-away index."""
        with tempfile.TemporaryDirectory(prefix="curator-resolve-") as tmp:
            env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
            env.pop("GIT_WORK_TREE", None)
            env.pop("GIT_DIR", None)

            def git(*args: str, data: bytes | None = None) -> str:
                proc = subprocess.run(["git", "--literal-pathspecs", *self.guard(), *args], cwd=self.root, env=env,
                                      input=data, capture_output=True)
                if proc.returncode != 0:
                    raise GitError(f"git {args[0]} failed: {last_line(proc.stderr)}")
                return proc.stdout.decode().strip()

            git("read-tree", tree)
            lines = []
            for path, entry in entries.items():
                mode, sha = entry if entry is not None else ("0", "0" * 40)
                lines.append(f"{mode} {sha}\t{path}\0")
            git("update-index", "-z", "--index-info", data="".join(lines).encode("utf-8", "surrogateescape"))
            return git("write-tree")

    # --- the network (fetch, push) ---------------------------------------------------------------
    def network(self, *args: str, timeout: float) -> subprocess.CompletedProcess[bytes]:
        """A fetch or push: never prompts for credentials, never waits for ever (exit 124 and a
        "timed out" message after ``timeout`` seconds)."""
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", SSH_ASKPASS="true")
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes -o ConnectTimeout=20")
        for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            env.pop(key, None)
        if not self.trusted and args and args[0] in _PACK_PROGRAM:
            # (a remote's uploadpack/receivepack setting is not overridden by ``-c``: git takes
            # the first value it read, the repository's; the option is)
            args = (args[0], _PACK_PROGRAM[args[0]], *args[1:])
        cmd = ["git", "-c", "core.quotepath=false", "-c", "gc.auto=0", "-c", "maintenance.auto=false",
               *self.guard(), *args]
        try:
            return subprocess.run(cmd, cwd=self.root, capture_output=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(cmd, 124, b"", f"timed out after {timeout:.0f} s".encode())

    # --- housekeeping ---------------------------------------------------------------------------
    def gc_due(self) -> bool:
        """Whether git's own ``gc --auto`` rule would pack the repository: more packs than
        ``gc.autoPackLimit`` (50), or more loose objects than ``gc.auto`` (6,700, estimated as git
        does from the ``objects/17`` folder). With git's defaults, read from the folders alone:
        no process is started for the common answer, "no"."""
        objects = self.git_dir / "objects"
        try:
            packs = sum(1 for name in os.listdir(objects / "pack")
                        if name.endswith(".pack") and not os.path.exists(objects / "pack" / (name[:-5] + ".keep")))
        except OSError:
            packs = 0
        if packs > AUTO_PACK_LIMIT:
            return True
        try:
            loose = sum(1 for name in os.listdir(objects / "17") if len(name) == 38)
        except OSError:
            return False
        return loose > (AUTO_LOOSE_OBJECTS + 255) // 256

    def maintain_if_due(self) -> bool:
        """Let git pack the repository when its auto-gc rule says so (:meth:`gc_due`).

        Every command of ours turns git's auto-gc off (``gc.auto=0``): a gc must never run inside
        an action, under the wiki lock, nor in the middle of a fetch. Without it the objects of
        every commit (and the one pack a big commit writes, :meth:`store_blobs`) pile up and git
        slows down, so after an action, with the lock released, this runs ``git gc --auto`` as a
        plain ``git commit`` would: git checks its rule again with the repository's own settings
        (a ``gc.auto=0`` there is honoured), and by default does the packing in a background
        process of its own (``gc.autoDetach``). Returns whether git was asked."""
        if not self.gc_due():
            return False
        # No pipes: the background gc must not keep a pipe of ours open until it ends.
        subprocess.run(["git", "-c", "core.quotepath=false", *self.guard(), "gc", "--auto", "--quiet"], cwd=self.root,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=_env(None), check=False)
        return True

    # --- a new repository ------------------------------------------------------------------------
    @staticmethod
    def init(root: Path, branch: str = "main") -> Git:
        """``git init`` ``root`` (on ``branch``) and return its :class:`Git`."""
        git = Git(root)
        git.run("init", "-q", "-b", branch)
        return git

    # --- objects -------------------------------------------------------------------------
    def _read_loose(self, sha: str) -> tuple[bytes, bytes] | None:
        """(kind, data) of a loose object, or None when it is packed (or absent)."""
        try:
            raw = zlib.decompress((self.git_dir / "objects" / sha[:2] / sha[2:]).read_bytes())
        except (OSError, zlib.error):
            return None
        header, _, data = raw.partition(b"\0")
        kind, _, size = header.partition(b" ")
        return (kind, data) if size.isdigit() and int(size) == len(data) else None

    def cached_tree(self, sha: str) -> dict[bytes, tuple[bytes, bytes]] | None:
        """A tree's entries from memory or a loose object; None when only git can read it."""
        entries = self._trees.get(sha)
        if entries is not None:
            self._trees.move_to_end(sha)
            return entries
        obj = self._read_loose(sha)
        if obj is None or obj[0] != b"tree":
            return None
        entries = _parse_tree(obj[1])
        self.remember_tree(sha, entries)
        return entries

    def remember_tree(self, sha: str, entries: dict[bytes, tuple[bytes, bytes]]) -> None:
        self._trees[sha] = entries
        self._trees.move_to_end(sha)
        while len(self._trees) > 256:
            self._trees.popitem(last=False)

    def commit_tree(self, commit: str) -> str | None:
        """The root tree of ``commit`` from memory or a loose object, else None."""
        tree = self._commit_trees.get(commit)
        if tree is None:
            obj = self._read_loose(commit)
            if obj is None or obj[0] != b"commit" or not obj[1].startswith(b"tree "):
                return None
            tree = obj[1][5:45].decode()
            self._commit_trees[commit] = tree
        return tree

    def _plain_blobs(self, paths: Sequence[str]) -> bool:
        """Whether no gitattributes can apply to ``paths``: then a blob is the file's bytes and
        hashing it here equals ``git hash-object`` (with the ``core.autocrlf=false`` we pass)."""
        home = Path.home()
        xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        candidates = [self.git_dir / "info" / "attributes", xdg / "git" / "attributes",
                      Path("/etc/gitattributes")]
        root = str(self.root)
        folders: set[str] = set()
        for p in paths:
            folders.add(p.rpartition("/")[0])
            if os.path.islink(os.path.join(root, p)):
                return False
        for folder in sorted(folders):  # each folder's chain of .gitattributes, once per batch
            parts = folder.split("/") if folder else []
            candidates += [self.root.joinpath(*parts[:i], ".gitattributes") for i in range(len(parts) + 1)]
        if not all(_content_neutral(c) for c in dict.fromkeys(candidates)):
            return False
        configs = [self.git_dir / "config", Path("/etc/gitconfig"), xdg / "git" / "config"]
        glob = os.environ.get("GIT_CONFIG_GLOBAL")
        configs.append(Path(glob) if glob else home / ".gitconfig")
        for c in configs:
            try:
                if "attributesfile" in c.read_text("utf-8", "replace").lower():
                    return False
            except OSError:
                continue
        return True

    # --- blobs kept for roll-back -----------------------------------------------------------
    def store_blob(self, data: bytes, *, durable: bool = False) -> str:
        """Write ``data`` as a blob into the object database (no filters); return its sha.

        ``durable``: a new object is fsynced (with its folder) before this returns: a roll-back
        copy must survive a power loss that the file it stands for may not."""
        if self._fast_ok():
            return write_loose_object(self.git_dir, b"blob", data, fsync=durable)
        sha = self.run("hash-object", "-w", "--no-filters", "--stdin", input=data).stdout.decode().strip()
        if durable:
            with contextlib.suppress(OSError):
                fsync_path(self.git_dir / "objects" / sha[:2] / sha[2:])
        return sha

    def store_blobs(self, files: dict[str, bytes]) -> dict[str, str]:
        """Store the blobs of ``files`` (path -> bytes, no filters); return path -> sha.

        Many new ones (:data:`PACK_MIN` and up: a merge's 2,000 rewritten pages) go into the object
        database as one pack, written by ``git fast-import``: creating 2,000 loose object files
        cost more than everything else the commit does. Fewer, or when fast-import fails, loose.
        """
        shas = {p: object_sha(b"blob", data) for p, data in files.items()}
        objects = self.git_dir / "objects"
        new = {sha: files[p] for p, sha in shas.items()
               if not os.path.exists(os.path.join(objects, sha[:2], sha[2:]))}
        if len(new) >= PACK_MIN and self._fast_ok():
            stream = b"".join(b"blob\ndata %d\n%s\n" % (len(data), data) for data in new.values())
            try:
                proc = self.run("fast-import", "--quiet", "--done", input=stream + b"done\n", check=False)
                if proc.returncode == 0:
                    return shas
            except OSError:
                pass
        for data in new.values():
            write_loose_object(self.git_dir, b"blob", data)
        return shas

    def blob(self, sha: str) -> bytes | None:
        """The bytes of the blob ``sha``, or None when the object database lacks it."""
        obj = self._read_loose(sha)
        if obj is not None and obj[0] == b"blob":
            return obj[1]
        proc = self.run("cat-file", "blob", sha, check=False)
        return proc.stdout if proc.returncode == 0 else None

    def head_blob(self, path: str) -> str | None:
        """The blob sha of ``path`` at HEAD (None: absent there), from cached trees when it can."""
        head = self.head()
        if head is None:
            return None
        if self._head_reader is None or self._head_reader.head != head:
            self._head_reader = _TreeReader(self, head)  # one per HEAD: a merge asks for thousands
        folder, _, name = path.rpartition("/")
        entry = self._head_reader.entries(folder).get(name.encode("utf-8", "surrogateescape"))
        return entry[1].hex() if entry is not None and entry[0] != _TREE_MODE else None

    def plain_blobs(self, paths: Sequence[str]) -> bool:
        """Whether no gitattributes can filter the blobs of ``paths`` (one check for a batch: pass
        the answer to :meth:`differs_from_head` for each of them)."""
        return self._plain_blobs(paths)

    def differs_from_head(self, path: str, data: bytes | None,
                          plain: bool | None = None) -> tuple[bool, str | None]:
        """(whether the file ``path`` holding ``data`` (None: absent) differs from HEAD's version,
        HEAD's blob sha when it is exactly ``data``, so no copy of it needs writing).

        In process when no attributes can filter the blob (then hashing the bytes is what git
        does), else with ``git status``. ``plain``: :meth:`plain_blobs` already answered for a
        batch holding ``path`` (a merge asks for thousands of paths in a few folders).
        """
        if plain is None and data is not None:
            plain = self._plain_blobs([path])
        if data is not None and not plain:
            return bool(self.dirty([path])), None
        head = self.head_blob(path)
        if data is None:
            return head is not None, None
        raw = b"blob " + str(len(data)).encode() + b"\0" + data
        same = head == hashlib.sha1(raw).hexdigest()
        return not same, head if same else None

    def repair_index(self, paths: Sequence[str]) -> None:
        """Set the index entries of ``paths`` to HEAD's (absent at HEAD: removed from the index).

        After a commit whose ``update-index`` failed, the index still holds the old entries: ``git
        status`` shows ``MM`` and an ordinary ``git commit`` would undo the change in HEAD. Only
        the given paths are touched; whatever else the operator staged stays staged.
        """
        paths = list(dict.fromkeys(paths))
        head = self.head()
        if not paths or head is None:
            return
        entries = {path: f"{mode} {sha}\t{path}\0" for path, (mode, _kind, sha) in self.tree_entries(head, paths).items()}
        info = "".join(entries.get(p, f"0 {'0' * 40}\t{p}\0") for p in paths)
        self.run("update-index", "-z", "--index-info", input=info.encode("utf-8", "surrogateescape"))

    # --- writes ------------------------------------------------------------------------
    def can_commit_bytes(self, path: str) -> bool:
        """Whether :meth:`commit_paths` can commit given bytes for ``path`` (``contents``)."""
        return self._fast_ok() and self._plain_blobs([path])

    def commit_paths(self, paths: Sequence[str], message: str, author: tuple[str, str],
                     contents: dict[str, bytes] | None = None, sign: SigningKey | None = None) -> str:
        """Stage and commit exactly ``paths`` (created, modified or deleted); return the sha.

        Whatever else is modified or staged in the tree stays out of the commit and stays as it
        was. The fast path builds the commit with plumbing (blobs hashed by git with the path's
        attributes/filters, the few changed trees written here, ``update-index`` for the touched
        entries, ``update-ref`` with the old value as a guard): it never stats the whole tree,
        which ``git commit`` does on every call (~50 ms on a 10,000-page wiki). Repositories it
        does not handle (a ``.git`` file, sha256 objects) use ``git add`` + ``git commit -- paths``.
        A big batch of new blobs (a merge's 2,000 rewritten pages) is stored as one pack
        (:meth:`store_blobs`), every blob before the branch moves.

        ``contents``: for some of ``paths``, the bytes to commit instead of the file's (the file
        keeps uncommitted edits of someone else; see :meth:`can_commit_bytes`). Their index entry
        gets the committed blob, so ``git status`` shows those edits as unstaged, as before.

        ``sign``: the key the commit is signed with (an operator's action,
        :mod:`curator.engine.repo.signing`).
        """
        paths = list(dict.fromkeys(paths))
        contents = {p: b for p, b in (contents or {}).items() if p in paths}
        if not paths:
            raise GitError("nothing to commit: no paths")
        if self._fast_ok():
            return self._commit_plumbing(paths, message, author, contents, sign)
        if contents:
            raise GitError("cannot commit given contents in this repository")
        return self._commit_porcelain(paths, message, author, sign)

    def _fast_ok(self) -> bool:
        if not self.git_dir.is_dir() or not (self.git_dir / "objects").is_dir():
            return False
        try:
            config = (self.git_dir / "config").read_text("utf-8", "replace").lower()
        except OSError:
            return False
        return "objectformat" not in config

    def _commit_porcelain(self, paths: list[str], message: str, author: tuple[str, str],
                          sign: SigningKey | None = None) -> str:
        existing = [p for p in paths if os.path.lexists(self.root / p)]
        gone = sorted(self.tracked([p for p in paths if p not in existing]))
        if existing:
            self.run("add", "--", *existing, author=author)
        todo = existing + gone
        if not todo:
            raise GitError("nothing to commit: none of the paths exist or are tracked")
        self.run(*(sign.git_config() if sign else []), "commit", "-q", "--no-verify", "--allow-empty-message", "-m", message,
                 *(["-S"] if sign else []), "--", *todo, author=author)
        sha = self.head()
        if sha is None:
            raise GitError("git commit left no HEAD")
        return sha

    def _commit_plumbing(self, paths: list[str], message: str, author: tuple[str, str],
                         contents: dict[str, bytes], sign: SigningKey | None = None) -> str:
        head = self.head()
        given = {p: write_loose_object(self.git_dir, b"blob", b) for p, b in contents.items()}
        root = str(self.root)
        existing = [p for p in paths if os.path.lexists(os.path.join(root, p)) and p not in given]
        trees = _TreeReader(self, head)
        folders = {""}
        for p in paths:
            parts = p.split("/")[:-1]
            folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        # Hashing the blobs and reading the trees they go into are independent read-mostly git
        # calls: run them side by side (one process latency instead of two).
        hasher = None
        blobs: dict[str, str] = {}
        if existing and self._plain_blobs(existing):
            blobs = self.store_blobs({p: _read(os.path.join(root, p)) for p in existing})
        elif len(existing) > 200:  # pipes could fill both ways: no side-by-side run for big batches
            shas = self.run("hash-object", "-w", "--stdin-paths",
                            input="".join(p + "\n" for p in existing).encode("utf-8", "surrogateescape")).stdout.split()
            blobs = dict(zip(existing, (x.decode() for x in shas), strict=True))
        elif existing:
            hasher = self.start("hash-object", "-w", "--stdin-paths")
            assert hasher.stdin is not None
            hasher.stdin.write("".join(p + "\n" for p in existing).encode("utf-8", "surrogateescape"))
            hasher.stdin.close()
        trees.load(sorted(folders))  # one cat-file call for every tree the commit rewrites
        if hasher is not None:
            assert hasher.stdout is not None and hasher.stderr is not None
            out, err = hasher.stdout.read(), hasher.stderr.read()
            if hasher.wait() != 0:
                raise GitError(f"git hash-object failed: {err.decode('utf-8', 'replace').strip()[-200:]}")
            hashed = out.decode().split()
            if len(hashed) != len(existing):
                raise GitError("git hash-object returned an unexpected answer")
            blobs = dict(zip(existing, hashed, strict=True))
        blobs.update(given)
        changes: dict[str, tuple[bytes, bytes] | None] = {}
        modes: dict[str, str] = {}
        for p in paths:
            if p in blobs:
                full = os.path.join(root, p)
                if os.path.islink(full):
                    mode = b"120000"
                elif os.access(full, os.X_OK):
                    mode = b"100755"
                else:
                    mode = b"100644"
                changes[p] = (mode, bytes.fromhex(blobs[p]))
                modes[p] = mode.decode()
            else:
                changes[p] = None
        root_sha = _rewrite_tree(self, trees, "", changes)
        if root_sha is None:  # every file removed: git's empty tree
            root_sha = write_loose_object(self.git_dir, b"tree", b"")
        old_root = trees.sha("")
        if root_sha == old_root and head is not None:
            raise GitError("nothing to commit: the paths are unchanged")
        lines = [f"tree {root_sha}"]
        if head:
            lines.append(f"parent {head}")
        stamp = _git_time()
        name, email = (_clean_ident(x) for x in author)
        lines.append(f"author {name} <{email}> {stamp}")
        lines.append(f"committer {name} <{email}> {stamp}")
        body = message if message.endswith("\n") else message + "\n"
        data = ("\n".join(lines) + "\n\n" + body).encode("utf-8")
        if sign is not None:
            data = signed_commit_object(data, sign)
        commit = write_loose_object(self.git_dir, b"commit", data)
        self._commit_trees[commit] = root_sha or ""
        # The index and the branch are updated side by side (they take different git locks).
        # Should update-ref fail, the change is merely staged, as after `git add`; should
        # update-index fail while the branch moved, it is retried (with stale-lock handling).
        zero = "0" * 40
        plain = [p for p in paths if p not in given]
        index = self.start("update-index", "--add", "--remove", "--", *plain) if plain else \
            self.start("update-index", "-z", "--index-info")
        info = "".join(f"{modes[p]} {given[p]}\t{p}\0" for p in given).encode("utf-8", "surrogateescape")
        ref = self.start("update-ref", "-m", f"commit: {message.splitlines()[0] if message else ''}",
                         "HEAD", commit, head or zero)
        results = []
        for proc in (index, ref):
            _out, err = proc.communicate(info if proc is index and not plain else None)
            results.append((proc.returncode, err.decode("utf-8", "replace").strip()))
        if results[1][0] != 0:
            m = _LOCK_MSG.search(results[1][1])
            if not (m and self._clear_stale_lock(Path(m.group(1)))):
                raise GitError(f"git update-ref failed: {results[1][1].splitlines()[-1:] or ''}")
            self.run("update-ref", "-m", f"commit: {message.splitlines()[0] if message else ''}",
                     "HEAD", commit, head or zero, author=author)
        try:
            if results[0][0] != 0 and plain:
                self.run("update-index", "--add", "--remove", "--", *plain, author=author)
            if given and (plain or results[0][0] != 0):
                self.run("update-index", "-z", "--index-info", input=info, author=author)
        except GitError as exc:  # the branch moved: the change IS committed, say so
            raise IndexNotUpdated(f"committed {commit[:12]}, but the git index was not updated "
                                  f"({exc})", commit, paths) from None
        return commit


def last_line(data: bytes) -> str:
    """git's own reason: its first ``fatal:``/``error:`` line (advice lines follow it), else the last."""
    lines = [x.strip() for x in data.decode("utf-8", "replace").splitlines() if x.strip()]
    for line in lines:
        if line.lower().startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    hint = [x for x in lines if not x.lower().startswith(("hint:", "to ", "remote:"))]
    return (hint or lines or ["(no message)"])[-1]


def merge_file_raw(current: bytes, base: bytes, other: bytes,
                   labels: tuple[str, str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git merge-file -p`` of three texts (no repository needed): the merged bytes (with
    conflict markers, labelled ``labels`` when given) and git's exit status (0 clean, 1..127
    conflicts, else a failure)."""
    with tempfile.TemporaryDirectory(prefix="curator-merge-") as tmp:
        files = []
        for name, data in (("current", current), ("base", base), ("other", other)):
            p = Path(tmp) / name
            p.write_bytes(data)
            files.append(str(p))
        names = [x for label in labels for x in ("-L", label)] if labels else []
        return subprocess.run(["git", "-c", "core.quotepath=false", "merge-file", "-p", *names, *files],
                              capture_output=True)


def run_here(*args: str) -> str | None:
    """``git <args>``'s output in the repository git runs us in (a merge driver: the cwd and
    git's own environment name the repository), or None when it fails."""
    neutral = [x for item in NEUTRAL_CONFIG for x in ("-c", item)]
    proc = subprocess.run(["git", "-c", "core.quotepath=false", *neutral, *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


#: Attributes that never change a blob's bytes (the page merge driver's ``*.md merge=curator``).
_NEUTRAL_ATTRS = frozenset({"merge", "diff", "export-ignore", "export-subst", "delta"})


def _content_neutral(path: Path) -> bool:
    """Whether the attributes file ``path`` is absent or only sets attributes that leave blobs as
    the file's bytes (then in-process hashing still equals ``git hash-object``)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return True
    except (OSError, UnicodeDecodeError):
        return False
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if parts[0].startswith("[attr]"):
            return False  # a macro could stand for anything
        for attr in parts[1:]:
            if attr.lstrip("-!").split("=", 1)[0] not in _NEUTRAL_ATTRS:
                return False
    return True


def _git_time() -> str:
    now = time.time()
    offset = time.localtime(now).tm_gmtoff // 60
    sign = "+" if offset >= 0 else "-"
    offset = abs(offset)
    return f"{int(now)} {sign}{offset // 60:02d}{offset % 60:02d}"


def _clean_ident(text: str) -> str:
    # git itself strips these from identities; a stray "<" or newline would corrupt the header
    return re.sub(r"[<>\n\r\0]", "", text).strip() or "unknown"


def fsync_path(path: Path | str, *, folder: bool = False) -> None:
    """Make the data of the file ``path`` durable (``folder``: its folder's entries too)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    if folder and os.name == "posix":
        fsync_path(os.path.dirname(path) or ".")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


#: From how many new blobs :meth:`Git.store_blobs` writes one pack instead of loose objects.
PACK_MIN = 256


def object_sha(kind: bytes, data: bytes) -> str:
    """The sha1 git gives the object ``data`` of ``kind`` (``blob``, ``tree``, ``commit``)."""
    return hashlib.sha1(kind + b" " + str(len(data)).encode() + b"\0" + data).hexdigest()


_TMP_OBJECTS = itertools.count()
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def write_loose_object(git_dir: Path, kind: bytes, data: bytes, *, fsync: bool = False) -> str:
    """Write a loose object (idempotent); return its sha1 hex (``fsync``: made durable first).

    As git does: a temporary file in the object's folder (``tmp_obj_*``, created read-only with
    ``O_EXCL``), renamed into place. Plain ``os`` calls, no ``tempfile``/``pathlib`` layer: a merge
    writes 2,000 of these, and that layer (a random name, ``fdopen``, ``chmod``, ``mkdir`` each)
    cost more than the writes.
    """
    raw = kind + b" " + str(len(data)).encode() + b"\0" + data
    sha = hashlib.sha1(raw).hexdigest()
    folder = os.path.join(git_dir, "objects", sha[:2])
    target = os.path.join(folder, sha[2:])
    if os.path.exists(target):
        return sha
    packed = zlib.compress(raw, 1)
    while True:
        tmp = os.path.join(folder, f"tmp_obj_{os.getpid()}_{next(_TMP_OBJECTS)}")
        try:
            fd = os.open(tmp, _TMP_FLAGS, 0o444)
            break
        except FileExistsError:
            continue  # left by a process that died (git's gc removes such files)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)  # the first object of this folder
    try:
        try:
            view = memoryview(packed)
            while view:
                view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        if fsync and os.name == "posix":
            fsync_path(folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sha


_TREE_MODE = b"40000"


class _TreeReader:
    """Entries of the trees at HEAD that a commit rewrites, read with one ``cat-file --batch``."""

    def __init__(self, git: Git, head: str | None) -> None:
        self.git = git
        self.head = head
        self._entries: dict[str, dict[bytes, tuple[bytes, bytes]]] = {}
        self._shas: dict[str, str | None] = {}

    def load(self, folders: Iterable[str]) -> None:
        todo = [f for f in dict.fromkeys(folders) if f not in self._entries]
        if not todo:
            return
        if self.head is None:
            for f in todo:
                self._entries[f], self._shas[f] = {}, None
            return
        todo = [f for f in todo if not self._load_cached(f)]
        if not todo:
            return
        query = "".join(f"{self.head}:{f}\n" for f in todo).encode("utf-8", "surrogateescape")
        out = self.git.run("cat-file", "--batch", input=query).stdout
        pos = 0
        for folder in todo:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            pos = nl + 1
            if len(header) == 3 and header[1] == b"tree":
                size = int(header[2])
                sha = header[0].decode()
                self._entries[folder] = _parse_tree(out[pos : pos + size])
                self._shas[folder] = sha
                self.git.remember_tree(sha, self._entries[folder])
                pos += size + 1
            elif len(header) == 3:  # a blob where a folder is wanted: replaced below
                pos += int(header[2]) + 1
                self._entries[folder], self._shas[folder] = {}, None
            else:  # "missing"
                self._entries[folder], self._shas[folder] = {}, None

    def _load_cached(self, folder: str) -> bool:
        """Resolve ``folder`` at HEAD from cached or loose trees; False when git must be asked."""
        assert self.head is not None
        sha = self.git.commit_tree(self.head)
        if not sha:
            return False
        for part in folder.split("/") if folder else ():
            entries = self.git.cached_tree(sha)
            if entries is None:
                return False
            entry = entries.get(part.encode("utf-8", "surrogateescape"))
            if entry is None or entry[0] != _TREE_MODE:
                self._entries[folder], self._shas[folder] = {}, None  # no such folder at HEAD
                return True
            sha = entry[1].hex()
        entries = self.git.cached_tree(sha)
        if entries is None:
            return False
        self._entries[folder], self._shas[folder] = entries, sha
        return True

    def entries(self, folder: str) -> dict[bytes, tuple[bytes, bytes]]:
        self.load([folder])
        return self._entries[folder]

    def sha(self, folder: str) -> str | None:
        self.load([folder])
        return self._shas[folder]


def _parse_tree(data: bytes) -> dict[bytes, tuple[bytes, bytes]]:
    entries: dict[bytes, tuple[bytes, bytes]] = {}
    pos = 0
    while pos < len(data):
        sp = data.index(b" ", pos)
        nul = data.index(b"\0", sp)
        mode, name = data[pos:sp], data[sp + 1 : nul]
        entries[name] = (mode, data[nul + 1 : nul + 21])
        pos = nul + 21
    return entries


def _tree_bytes(entries: dict[bytes, tuple[bytes, bytes]]) -> bytes:
    # git orders entries by name, comparing a folder's name as if it ended in "/"
    def key(item: tuple[bytes, tuple[bytes, bytes]]) -> bytes:
        name, (mode, _sha) = item
        return name + b"/" if mode == _TREE_MODE else name

    return b"".join(mode + b" " + name + b"\0" + sha for name, (mode, sha) in sorted(entries.items(), key=key))


def _rewrite_tree(git: Git, trees: _TreeReader, folder: str,
                  changes: dict[str, tuple[bytes, bytes] | None]) -> str | None:
    """Write the new tree of ``folder`` with ``changes`` (paths relative to the root) applied.

    Returns its sha, or None when the folder ends up empty (git has no empty trees).
    """
    prefix = folder + "/" if folder else ""
    here: dict[str, tuple[bytes, bytes] | None] = {}
    below: dict[str, dict[str, tuple[bytes, bytes] | None]] = {}
    for path, change in changes.items():
        rest = path[len(prefix):]
        head, sep, _tail = rest.partition("/")
        if sep:
            below.setdefault(head, {})[path] = change
        else:
            here[head] = change
    trees.load([prefix + name for name in below])
    entries = dict(trees.entries(folder))
    for name, change in here.items():
        key = name.encode("utf-8", "surrogateescape")
        if change is None:
            entries.pop(key, None)
        else:
            entries[key] = change
    for name, sub in below.items():
        key = name.encode("utf-8", "surrogateescape")
        old = entries.get(key)
        if old is not None and old[0] != _TREE_MODE:
            entries.pop(key)  # a file became a folder
        sha = _rewrite_tree(git, trees, prefix + name, sub)
        if sha is None:
            entries.pop(key, None)
        else:
            entries[key] = (_TREE_MODE, bytes.fromhex(sha))
    if not entries:
        return None
    old_sha = trees.sha(folder)
    if old_sha is not None and trees.entries(folder) == entries:
        return old_sha
    sha = write_loose_object(git.git_dir, b"tree", _tree_bytes(entries))
    git.remember_tree(sha, entries)
    return sha


def signed_commit_object(body: bytes, key: SigningKey) -> bytes:
    """A commit object's text with its ``gpgsig`` header (after ``committer``), as git writes a
    signed commit: the signature covers the object without that header."""
    signature = key.sign(body)
    head, sep, message = body.partition(b"\n\n")
    header = "gpgsig " + "\n ".join(signature.splitlines())
    return head + b"\n" + header.encode("ascii") + sep + message
