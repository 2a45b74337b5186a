"""Multi-file actions are atomic (docs/design.md §5): a merge killed at any moment is, after recovery, either
wholly in one commit or not there at all; git stays consistent (fsck), the index in line with HEAD.

The fault injection runs a real merge (a few hundred pages rewritten) in a subprocess, SIGKILLs it
at a random moment, then lets the next process recover, and compares the whole tree with the two
allowed states: the tree before the merge and the tree of the merge run to its end.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from curator.engine.write.actions import recover_pending, undo
from curator.engine.write.bootstrap import init_wiki

_WORKER = """
import sys
from curator.engine.wiki import Wiki
from curator.engine.write.merge import merge_pages
w = Wiki(sys.argv[1])
w.pages
print("ready", flush=True)
res = merge_pages(w, "keep", "merged")
print(res.status, res.commit, flush=True)
"""


def git(root: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=check).stdout


def make_wiki(root: Path, pages: int) -> str:
    init_wiki(root)
    wiki = root / "wiki"
    wiki.mkdir()
    (wiki / "keep.md").write_text("---\ntitle: Keep\ntrust: 0.9\n---\n# Keep\n\n## Updates\n\n"
                                  "- The crane is inspected every March (added 2024-01-02)\n")
    (wiki / "merged.md").write_text("---\ntitle: Merged\n---\n# Merged\n\n## Updates\n\n"
                                    "- Spare parts come from Hamburg (added 2024-02-04)\n")
    for i in range(pages):
        (wiki / f"linker-{i:04d}.md").write_text(f"# Linker {i}\n\nSee [[merged]] and [[Merged|the notes]].\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    return git(root, "rev-parse", "HEAD").strip()


def tree(root: Path) -> str:
    return git(root, "rev-parse", "HEAD^{tree}").strip()


def assert_consistent(root: Path) -> None:
    fsck = subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=root, capture_output=True,
                          text=True)
    assert fsck.returncode == 0 and not fsck.stdout.strip(), fsck.stdout + fsck.stderr
    # the working tree and the index both equal HEAD: nothing half-written, nothing half-staged
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert not (root / ".curator" / "pending.jsonl").exists()


def kill_merges(root: Path, base: str, kills: int, seed: int) -> Counter[str]:
    """Run the merge to the end once (the 'whole' tree), then ``kills`` killed runs; returns how
    each killed run ended up after recovery (``none`` or ``whole``) and what the recovery did
    (``recovery:rolled_back``, ``recovery:recovered``, ``recovery:none needed``)."""
    env = dict(os.environ)
    # Each worker is started (the interpreter up, the engine imported) while the one before is
    # checked, and opens the wiki when told to go, once the tree is back at ``base``.
    worker = _WORKER.replace("w = Wiki(", "sys.stdin.readline()\nw = Wiki(")

    def spawn() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", worker, str(root)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def go(proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "ready"

    done = spawn()
    go(done)
    # The kills are timed from "ready", so the span is the merge's own (from "ready" to its end):
    # timed from the start, the interpreter's start-up and the wiki's load made it 3-4x longer and
    # most kills landed after the merge had ended.
    t = time.monotonic()
    out, err = done.communicate()
    span = time.monotonic() - t
    assert done.returncode == 0 and out.split()[0] == "merged", err
    whole = tree(root)
    before = git(root, "rev-parse", f"{base}^{{tree}}").strip()
    assert whole != before
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    spare = spawn()
    try:
        for _ in range(kills):
            git(root, "reset", "-q", "--hard", base)
            git(root, "clean", "-fdq")
            proc = spare
            go(proc)
            time.sleep(rng.uniform(0.0, span * 0.8))
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            spare = spawn()
            w = Wiki(root)
            try:
                rec = recover_pending(w)
            finally:
                w.close()
            assert rec is None or not rec.is_error, rec.message
            outcomes[f"recovery:{rec.status if rec is not None else 'none needed'}"] += 1
            now = tree(root)
            commits = git(root, "rev-list", f"{base}..HEAD").split()
            if now == before:
                assert commits == [], "a commit that changes nothing"
                outcomes["none"] += 1
            else:
                assert now == whole, "a partial merge was committed"
                assert len(commits) == 1, "the merge is spread over several commits"
                outcomes["whole"] += 1
            assert_consistent(root)
    finally:
        spare.kill()
        spare.communicate()
    return outcomes


def test_merge_killed_at_random_moments_is_all_or_nothing(tmp_path: Path) -> None:
    root = tmp_path / "w"
    base = make_wiki(root, 200)
    outcomes = kill_merges(root, base, 50, seed=14)
    print("outcomes of 50 killed merges:", dict(outcomes))
    assert outcomes["none"] + outcomes["whole"] == 50
    assert outcomes["recovery:rolled_back"] > 0  # the kills did land inside the merge, not only after it


def test_undo_after_a_killed_merge_reverts_the_merge_not_the_action_before(tmp_path: Path) -> None:
    root = tmp_path / "w"
    make_wiki(root, 30)
    crash = _WORKER.replace("print(\"ready\", flush=True)\n",
                            "from curator.engine.repo import git\ngit.Git.commit_paths = lambda *a, **k: "
                            "__import__('os')._exit(9)\n")
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    w = Wiki(root)
    try:
        res = undo(w, OPERATOR)
    finally:
        w.close()
    assert res.status == "reverted" and "merge: wiki/merged.md into wiki/keep.md" in res.message
    assert (root / "wiki" / "merged.md").exists() and "[[merged]]" in (root / "wiki" / "linker-0007.md").read_text()
    subjects = git(root, "log", "--format=%s").splitlines()
    assert subjects[:2] == ["revert: recover: merge: wiki/merged.md into wiki/keep.md",
                            "recover: merge: wiki/merged.md into wiki/keep.md"]
    assert_consistent(root)


@pytest.mark.parametrize("where", ["apply", "commit"])
def test_recover_cli_reports_the_roll_back_or_forward(tmp_path: Path, where: str) -> None:
    import json

    root = tmp_path / "w"
    make_wiki(root, 20)
    # "apply": killed as the 10th file is put in place (a single write ends in an os.replace, a
    # batch rewrites each file in place), so half the merge is on disk; "commit": killed at the commit.
    hook = ("import os\nfrom curator.engine.write import actions\n_r, _w, _n = os.replace, actions._rewrite_in_place, [0]\n"
            "def tick():\n    _n[0] += 1\n    if _n[0] == 10: os._exit(9)\n"
            "def rp(src, dst):\n    tick()\n    return _r(src, dst)\n"
            "def wp(full, old, new):\n    tick()\n    return _w(full, old, new)\n"
            "os.replace, actions._rewrite_in_place = rp, wp\n") if where == "apply" else (
        "from curator.engine.repo import git\ngit.Git.commit_paths = lambda *a, **k: __import__('os')._exit(9)\n")
    crash = _WORKER.replace("print(\"ready\", flush=True)\n", hook)
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert git(root, "status", "--porcelain")  # half a merge (or a whole one) is on disk
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "recover", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    if where == "apply":
        assert data["interrupted"]["status"] == "rolled_back"
        assert git(root, "log", "--format=%s").splitlines()[0] == "seed"
        assert (root / "wiki" / "merged.md").exists()
    else:
        assert data["interrupted"]["status"] == "recovered"
        assert not (root / "wiki" / "merged.md").exists()
        assert (root / "_archive" / "wiki" / "merged.md").exists()
    # recover must not bring back anything of the merged page either way
    assert data["restored"] == []
    assert_consistent(root)


_FAULTS = {
    # stopped after every file is written, before git is asked to commit
    "before_commit": "from curator.engine.repo import git\ngit.Git.commit_paths = lambda *a, **k: os._exit(9)\n",
    # the commit made, the process gone before the journal line
    "after_commit": ("from curator.engine.repo import git\n_c = git.Git.commit_paths\n"
                     "def c(*a, **k):\n    _c(*a, **k)\n    os._exit(9)\ngit.Git.commit_paths = c\n"),
    # journaled, gone before the pending record is cleared
    "after_journal": ("from curator.engine.repo import journal\n_a = journal.Journal.append\n"
                      "def a(self, rec):\n    _a(self, rec)\n    if rec.get('action') == 'merge': os._exit(9)\n"
                      "journal.Journal.append = a\n"),
}


@pytest.mark.parametrize("fault", sorted(_FAULTS))
def test_a_merge_stopped_at_its_commit_is_rolled_forward_exactly_once(tmp_path: Path, fault: str) -> None:
    root = tmp_path / "w"
    base = make_wiki(root, 40)
    done = subprocess.run([sys.executable, "-c", _WORKER, str(root)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    whole = tree(root)
    git(root, "reset", "-q", "--hard", base)
    crash = _WORKER.replace("print(\"ready\", flush=True)\n", "import os\n" + _FAULTS[fault])
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    w = Wiki(root)
    try:
        rec = recover_pending(w)
    finally:
        w.close()
    assert (rec is not None and rec.status == "recovered") == (fault == "before_commit")
    assert tree(root) == whole and len(git(root, "rev-list", f"{base}..HEAD").split()) == 1
    assert_consistent(root)
    import json

    journal = [json.loads(x) for x in (root / ".curator" / "journal.jsonl").read_text().splitlines()]
    merges = [r for r in journal if r.get("action") == "merge" and r.get("committed")]
    assert len(merges) == 2  # the complete run, and this one: journaled once, committed
    assert merges[-1]["commit"] == git(root, "rev-parse", "HEAD").strip()
    assert merges[-1]["removed"] == ["wiki/merged.md"]
