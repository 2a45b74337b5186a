"""``curator init`` and the demo wiki: make a folder a wiki root (a git repository that ignores
``.curator/``). Named apart from the packaging `setup.py` at the repository root."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from curator.engine.errors import CuratorError
from curator.engine.repo.git import Git

GITIGNORE_LINE = ".curator/"
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
    from curator.engine.sync.merge_driver import attributes_with_driver, install_config

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
