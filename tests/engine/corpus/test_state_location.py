"""Where a wiki's local state lives (docs/design.md §2): ``.curator/`` in a git repository's root,
kept out of ``git status`` by ``.git/info/exclude``; nothing at all in a folder that is not a wiki."""

from __future__ import annotations

import io
import os
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from curator.cli import main
from curator.engine.corpus.state import EXCLUDE_LINE, locate_state
from curator.engine.wiki import Wiki
from curator.engine.write.bootstrap import init_wiki
from tests.corpus import IDENTITY, write_pages

PAGES = {"wiki/payments.md": "---\nlayer: core\n---\n# Payments\n\nRefunds take [[five days]].\n",
         "notes/b.md": "# B\n\nSee [[payments]].\n"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def cli(root: Path, *argv: str) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return main(["--wiki", str(root), *argv])


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside ``.git``) with its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def repository(root: Path) -> Path:
    write_pages(root, PAGES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pages")
    return root


def test_a_folder_that_is_not_a_wiki_gets_nothing_written_in_it(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "docs", PAGES)
    before = tree(root)
    for argv in (["index"], ["search", "refunds"], ["lint"], ["neighbors", "payments"]):
        assert cli(root, *argv) in (0, 1), argv  # (lint: 1 when it finds an error)
    assert tree(root) == before and not (root / ".curator").exists()
    state = Wiki(root).state_dir
    cache_home = Path(os.environ["XDG_CACHE_HOME"])
    assert state.is_relative_to(cache_home / "curator") and (state / "cache.sqlite").is_file()
    # one folder, one state folder: another folder of the same name elsewhere gets its own
    other = write_pages(tmp_path / "elsewhere" / "docs", PAGES)
    assert locate_state(other) != state and locate_state(root) == state


def test_in_a_repository_index_and_search_leave_git_status_clean(tmp_path: Path) -> None:
    root = repository(tmp_path / "vault")  # (no .gitignore, as an Obsidian vault)
    exclude = root / ".git" / "info" / "exclude"
    kept = exclude.read_bytes()  # git's own template lines stay as they are
    head = git(root, "rev-parse", "HEAD:")
    for argv in (["index"], ["search", "refunds"], ["index"]):
        assert cli(root, *argv) == 0, argv
    assert (root / ".curator" / "cache.sqlite").is_file()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(root, "rev-parse", "HEAD:") == head and git(root, "diff", "HEAD") == ""
    text = exclude.read_bytes()
    assert text.startswith(kept) and text.decode().splitlines().count(EXCLUDE_LINE) == 1  # once


def test_an_ignore_file_naming_the_state_is_enough(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    init_wiki(root)  # (writes .curator/ to .gitignore)
    exclude = root / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else b""
    assert cli(root, "index") == 0
    assert (exclude.read_bytes() if exclude.exists() else b"") == before
    assert git(root, "status", "--porcelain") == ""


def test_a_linked_worktree_excludes_in_its_repository(tmp_path: Path) -> None:
    main_root = repository(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main_root, "worktree", "add", "-q", "-b", "other", str(linked))
    assert (linked / ".git").is_file()
    assert cli(linked, "search", "refunds") == 0
    assert (linked / ".curator").is_dir()
    assert git(linked, "status", "--porcelain") == "" and git(main_root, "status", "--porcelain") == ""


def test_a_folder_made_a_repository_after_opening_writes_its_journal_in_it(tmp_path: Path) -> None:
    """The station opens a folder, then runs ``curator init`` on it: its writes must take the
    same write lock and journal as any other process, in the repository's ``.curator/``."""
    root = write_pages(tmp_path / "w", PAGES)
    wiki = Wiki(root)
    assert not wiki.state_dir.is_relative_to(root)
    init_wiki(root)
    assert wiki.session.lock.state_dir == root / ".curator" == wiki.state_dir
