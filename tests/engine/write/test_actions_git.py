"""The git backend's path-exact commits agree with git itself (packed repos, attributes, caches)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.engine.repo.git import Git, GitError

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


def test_loose_objects_written_here_are_what_git_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``write_loose_object`` writes what ``git hash-object -w`` would: same sha, read back by git,
    read-only, idempotent, no temporary file left; a stale temporary name is stepped over."""
    import os

    from curator.engine.repo import git as gitmod

    root = tmp_path / "r"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    git_dir = root / ".git"
    data = "héllo\n".encode() * 300
    (root / "f.md").write_bytes(data)
    expected = git(root, "hash-object", "f.md").strip()  # (not written by git: -w is ours to do)
    counter = iter(range(10**6))
    monkeypatch.setattr(gitmod, "_TMP_OBJECTS", counter)
    folder = git_dir / "objects" / expected[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"tmp_obj_{os.getpid()}_0").write_bytes(b"left by a dead process")
    sha = gitmod.write_loose_object(git_dir, b"blob", data)
    assert sha == expected
    assert subprocess.run(["git", "cat-file", "blob", sha], cwd=root, capture_output=True,
                          check=True).stdout == data
    obj = folder / sha[2:]
    assert obj.stat().st_mode & 0o777 == 0o444
    before = obj.stat().st_mtime_ns
    assert gitmod.write_loose_object(git_dir, b"blob", data, fsync=True) == sha  # idempotent
    assert obj.stat().st_mtime_ns == before
    assert sorted(p.name for p in folder.iterdir()) == sorted([sha[2:], f"tmp_obj_{os.getpid()}_0"])
    tree = gitmod.write_loose_object(git_dir, b"tree", b"", fsync=True)  # a folder not there yet
    assert tree == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize(("count", "index_fails"), [(100, False), (100, True), (300, False), (300, True)])
def test_a_big_commit_stores_every_blob_before_the_branch_moves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                count: int, index_fails: bool) -> None:
    """Every blob of a commit is stored before ``update-ref`` moves the branch, whatever
    ``update-index`` does (here it may fail, then it is retried): the commit is whole. From
    ``PACK_MIN`` new blobs on they go into one pack (``git fast-import``), else loose."""
    import hashlib

    from curator.engine.repo import git as gitmod

    root = tmp_path / "r"
    root.mkdir()
    g = Git.init(root)
    files = {f"wiki/p{i:03}.md": f"# Page {i}\n\nText {i}.\n".encode() for i in range(count)}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    started: list[str] = []
    missing_at_ref: list[str] = []
    real_start = Git.start

    def start(self: Git, *args: str) -> subprocess.Popen[bytes]:
        started.append(args[0])
        if args[0] == "update-ref":
            shas = [hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() for data in files.values()]
            check = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, check=True, capture_output=True,
                                   input="".join(f"{sha}\n" for sha in shas).encode()).stdout.decode()
            missing_at_ref.extend(line.split()[0] for line in check.splitlines() if line.endswith("missing"))
        if index_fails and args[0] == "update-index":
            return real_start(self, "update-index", "--no-such-option")
        return real_start(self, *args)

    monkeypatch.setattr(Git, "start", start)
    sha = g.commit_paths(sorted(files), "edit: many", ("t", "t@t"))
    assert started[:2] == ["update-index", "update-ref"] and missing_at_ref == []
    assert git(root, "rev-parse", "HEAD").strip() == sha
    subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root, check=True, capture_output=True)
    for rel, data in files.items():
        assert subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=root, capture_output=True,
                              check=True).stdout == data
    assert git(root, "status", "--porcelain").strip() == ""  # the index followed (retried when it failed)
    packs = list((root / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == (1 if count >= gitmod.PACK_MIN else 0)



def _packs(root: Path) -> int:
    return sum(1 for _ in (root / ".git" / "objects" / "pack").glob("*.pack"))


def _pile_up_packs(root: Path, count: int) -> None:
    """``count`` one-blob packs, as ``count`` big actions (one fast-import pack each) leave them."""
    for i in range(count):
        sha = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=f"blob {i}\n",
                             capture_output=True, text=True, check=True).stdout
        subprocess.run(["git", "pack-objects", "-q", ".git/objects/pack/pack"], cwd=root, input=sha,
                       capture_output=True, text=True, check=True)


def test_an_action_lets_git_pack_the_repository_when_its_auto_gc_rule_says_so(tmp_path: Path) -> None:
    """Our git commands run with gc.auto=0 (never a gc inside an action, under the lock); after an
    action, with the lock released, git's own `gc --auto` runs when its rule is met, honouring the
    repository's own settings."""
    from curator.engine.policy.actor import OPERATOR
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionContext, git_of, run_action
    from curator.engine.write.bootstrap import init_wiki

    def write(path: str) -> Callable[[ActionContext], None]:
        return lambda ctx: ctx.write_text(path, f"# {path}\n")

    root = tmp_path / "w"
    init_wiki(root)
    git(root, "config", "gc.autoDetach", "false")  # the packing in this process: checkable at once
    w = Wiki(root)
    try:
        assert run_action(w, OPERATOR, "edit", "a", write("wiki/a.md")).commit
        assert not git_of(w).gc_due() and _packs(root) == 0  # nothing due: git was not asked
        _pile_up_packs(root, 52)
        assert git_of(w).gc_due()
        git(root, "config", "gc.auto", "0")  # the repository's own "never" is honoured
        assert run_action(w, OPERATOR, "edit", "b", write("wiki/b.md")).commit
        assert _packs(root) == 52
        git(root, "config", "--unset", "gc.auto")
        assert run_action(w, OPERATOR, "edit", "c", write("wiki/c.md")).commit
        assert _packs(root) == 1 and not git_of(w).gc_due()  # git's rule met: one pack again
        git(root, "fsck", "--strict")
        assert git(root, "log", "--format=%s").split("\n")[:3] == ["edit: c", "edit: b", "edit: a"]
        assert (root / "wiki" / "a.md").read_text() == "# wiki/a.md\n"
    finally:
        w.close()
