"""``curator init`` and the demo wiki: make a folder a wiki root (a git repository that ignores
``.curator/`` and merges pages with Curator's driver). Named apart from the packaging `setup.py`
at the repository root.

The page merge driver itself (what git runs to merge two versions of a page) is the sync's
(:mod:`curator.engine.sync.merge_driver`); registering it (the ``.gitattributes`` lines that travel
with the wiki, and this clone's config naming the command) is done here, where a wiki is made,
and again by ``curator sync`` on a clone whose config lacks it."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from curator.engine.errors import CuratorError
from curator.engine.policy.scope import INBOX_FOLDERS
from curator.engine.repo.git import Git, GitError

GITIGNORE_LINE = ".curator/"
#: The module git runs as the page merge driver (``python -m``), named as a string: registering the
#: driver does not import it.
DRIVER_MODULE = "curator.engine.sync.merge_driver"
DRIVER_NAME = "curator"
ATTRIBUTES_LINE = f"*.md merge={DRIVER_NAME}"
#: The review inbox's decision records (:mod:`curator.engine.write.held`): one JSON file per fact, named by the fact.
RECORD_FOLDERS = INBOX_FOLDERS
#: Every ``.gitattributes`` line of the driver: pages, and the inbox's records.
ATTRIBUTES_LINES = (ATTRIBUTES_LINE, *(f"{folder}/*.json merge={DRIVER_NAME}" for folder in RECORD_FOLDERS))

# Commits never depend on a global git identity being set (docs/design.md §4).
_IDENTITY = ("curator", "curator@curator.invalid")


@dataclass(slots=True)
class InitResult:
    root: Path
    created_repo: bool
    wrote_gitignore: bool
    commit: str | None

    @property
    def message(self) -> str:
        if not (self.created_repo or self.wrote_gitignore):
            return f"{self.root} is already a Curator wiki"
        what = "initialised a new wiki" if self.created_repo else "prepared the existing repository"
        return f"{what} in {self.root}"


def is_repo_root(path: Path) -> bool:
    return (path / ".git").exists()


def init_wiki(path: Path) -> InitResult:
    if shutil.which("git") is None:
        raise CuratorError("git is not installed; Curator keeps every wiki in git (install git first)")
    if path.exists() and not path.is_dir():
        raise CuratorError(f"{path} is a file, not a folder")
    path.mkdir(parents=True, exist_ok=True)
    root = path.resolve()
    created = False
    if not is_repo_root(root):
        Git.init(root, "main")
        created = True
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    wrote = False
    if GITIGNORE_LINE not in {line.strip() for line in existing.splitlines()}:
        sep = "" if not existing or existing.endswith("\n") else "\n"
        gitignore.write_text(f"{existing}{sep}{GITIGNORE_LINE}\n", encoding="utf-8")
        wrote = True
    # The page merge driver for syncing clones (issue 11): the attribute travels with the wiki,
    # the driver's command line is this clone's (an absolute interpreter path).
    attributes = root / ".gitattributes"
    new_attributes = attributes_with_driver(attributes.read_text(encoding="utf-8") if attributes.exists() else "")
    if new_attributes is not None:
        attributes.write_text(new_attributes, encoding="utf-8")
    install_config(root)
    paths = [p for p, did in ((".gitignore", wrote), (".gitattributes", new_attributes is not None)) if did]
    commit = None
    if paths:
        commit = Git(root).commit_paths(paths, "curator init", _IDENTITY)
    return InitResult(root, created, bool(paths), commit)


def copy_demo(source: Path, dest: Path) -> Path:
    """Copy the bundled demo wiki to ``dest`` (once) and make it a wiki with one initial commit.

    The copy lets operators try every action on the demo without touching the installation.
    An existing copy is reused as it is (the operator's edits to it are theirs).
    """
    if (dest / ".git").exists():
        return dest
    if dest.exists() and any(dest.iterdir()):
        raise CuratorError(f"{dest} exists and is not a wiki; move it away to get a fresh demo")
    shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".curator", ".git"))
    init_wiki(dest)
    files = sorted(
        p.relative_to(dest).as_posix() for p in dest.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(dest).parts
    )
    Git(dest).commit_paths(files, "demo wiki", _IDENTITY)
    return dest


# --- the page merge driver's registration ---------------------------------------------------------

def driver_command(ours: str | None = None, theirs: str | None = None) -> str:
    """The shell command git runs (``%O %A %B %P`` substituted by git).

    Uses this interpreter's absolute path (or, in a frozen build, the ``curator`` executable and
    its hidden ``sync --merge-driver`` option), quoted for the shell git runs drivers with.
    """
    if getattr(sys, "frozen", False):  # a PyInstaller build has no -m: its CLI runs the driver
        head = [sys.executable, "sync", "--merge-driver"]
    else:
        head = [sys.executable, "-m", DRIVER_MODULE]
    if ours and theirs:
        head += ["--ours", ours, "--theirs", theirs]
    return " ".join(shlex.quote(x) for x in head) + " %O %A %B %P"


def configured_command(root: Path) -> str | None:
    return Git(root).config_get(f"merge.{DRIVER_NAME}.driver", local=True)


def config_ok(root: Path) -> bool:
    """Whether the repository config runs a driver whose interpreter exists, naming today's
    driver module."""
    command = configured_command(root)
    if not command:
        return False
    try:
        words = shlex.split(command)
        exe = words[0]
    except (ValueError, IndexError):
        return False
    if "-m" in words[:-1] and words[words.index("-m") + 1] != DRIVER_MODULE:
        return False  # a driver module that has moved (a clone set up by an older Curator)
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


# --- trusting a wiki's own git configuration (docs/design.md §5) -------------------------------------

def untrusted_programs(root: Path) -> list[str]:
    """What the git configuration and hooks of the wiki at ``root`` name for git to run, while
    the operator does not trust it (Curator runs none of it then); [] once trusted."""
    from curator.engine.repo.trust import is_trusted

    if is_trusted(root) or not (root / ".git").exists():
        return []
    return Git(root, trusted=False).programs()


def trust_wiki(git: Git) -> bool:
    """Trust the wiki of ``git`` (the operator's decision, kept in the user's configuration):
    this process's git calls stop overriding it at once. True if it changed."""
    from curator.engine.repo.trust import trust

    changed = trust(git.root)
    git.trusted = True
    return changed
