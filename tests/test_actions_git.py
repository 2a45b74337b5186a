"""The git backend's path-exact commits agree with git itself (packed repos, attributes, caches)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from curator.engine.git import Git, GitError

AUTHOR = ("agent:t", "t@agents.invalid")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def agrees_with_git(root: Path) -> None:
    """HEAD's tree is what `git add -A` would build, the tree is clean, fsck is happy."""
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "write-tree").strip() == git(root, "rev-parse", "HEAD^{tree}").strip()
    git(root, "fsck", "--strict")


def test_commits_in_a_fresh_a_packed_and_a_cached_repository(repo: Path) -> None:
    g = Git(repo)
    (repo / "a.md").write_text("a\n")
    first = g.commit_paths(["a.md"], "one: a", AUTHOR)
    assert g.head() == first and git(repo, "log", "-1", "--format=%an|%s").strip() == "agent:t|one: a"
    agrees_with_git(repo)
    for i in range(5):
        (repo / "wiki" / f"d{i}").mkdir(parents=True)
        (repo / "wiki" / f"d{i}" / "p.md").write_text(f"{i}\n")
    g.commit_paths([f"wiki/d{i}/p.md" for i in range(5)], "many: x", AUTHOR)
    agrees_with_git(repo)
    git(repo, "gc", "-q", "--prune=now")  # everything packed: the trees come from cat-file now
    fresh = Git(repo)
    (repo / "wiki" / "d3" / "p.md").write_text("changed\n")
    fresh.commit_paths(["wiki/d3/p.md"], "edit: d3", AUTHOR)
    agrees_with_git(repo)
    (repo / "wiki" / "d3" / "p.md").write_text("again\n")  # cached trees this time
    fresh.commit_paths(["wiki/d3/p.md"], "edit: d3", AUTHOR)
    agrees_with_git(repo)
    with pytest.raises(GitError):
        fresh.commit_paths(["wiki/d3/p.md"], "edit: nothing", AUTHOR)


def test_an_operator_commit_between_ours_is_respected(repo: Path) -> None:
    g = Git(repo)
    (repo / "a.md").write_text("a\n")
    g.commit_paths(["a.md"], "one: a", AUTHOR)
    (repo / "b.md").write_text("b\n")
    git(repo, "add", "b.md")
    git(repo, "commit", "-qm", "operator")
    (repo / "a.md").write_text("a2\n")
    g.commit_paths(["a.md"], "two: a", AUTHOR)
    assert git(repo, "show", "HEAD:b.md") == "b\n"
    agrees_with_git(repo)


def test_gitattributes_filters_are_honoured(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.md text eol=lf\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attrs")
    (repo / "w.md").write_bytes(b"line one\r\nline two\r\n")
    Git(repo).commit_paths(["w.md"], "add: w", AUTHOR)
    assert git(repo, "cat-file", "-p", "HEAD:w.md") == "line one\nline two\n"  # normalised like git add
    assert git(repo, "status", "--porcelain") == ""


def test_removing_every_file_commits_the_empty_tree(repo: Path) -> None:
    g = Git(repo)
    (repo / "only.md").write_text("x\n")
    g.commit_paths(["only.md"], "one: x", AUTHOR)
    (repo / "only.md").unlink()
    g.commit_paths(["only.md"], "remove: x", AUTHOR)
    assert git(repo, "ls-tree", "HEAD") == ""
    git(repo, "fsck", "--strict")


def test_executable_bit_and_history_paths(repo: Path) -> None:
    g = Git(repo)
    script = repo / "tool.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    sha = g.commit_paths(["tool.sh"], "add: tool", AUTHOR)
    assert git(repo, "ls-tree", "HEAD", "tool.sh").split()[0] == "100755"
    entry = g.log(1)[0]
    assert (entry.commit, entry.subject, entry.paths, entry.author_name) == (sha, "add: tool", ["tool.sh"], "agent:t")
    assert g.changed_paths(sha) == ["tool.sh"] and g.show(sha, "tool.sh") == b"#!/bin/sh\n"
    assert g.show(sha, "missing.md") is None
