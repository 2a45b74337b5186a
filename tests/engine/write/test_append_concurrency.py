"""Many writers, and writers killed mid-action (docs/design.md §4.4, §4.7, §5)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.engine.write.bootstrap import init_wiki

_WORKER = r"""
import sys
from curator.engine.wiki import Wiki
from curator.engine.policy.actor import Actor
from curator.engine.write.append import append
root, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = Wiki(root)
actor = Actor("agent", f"w{worker}")
for i in range(count):
    fact = f"fact-token w{worker}n{i} recorded"
    for attempt in range(50):
        res = append(w, "shared-page", fact, actor=actor)
        if res.status != "locked":
            break
        print("LOCKED", flush=True)
    print(res.status, fact, res.commit, flush=True)
"""

BULLET = re.compile(r"^- fact-token (w\d+n\d+) recorded \(added \d{4}-\d{2}-\d{2}\)$")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki" / "shared-page.md").write_text("# Shared\n\n## Updates\n\n")
    for i in range(30):  # some other pages to route over
        (root / "wiki" / f"other-{i}.md").write_text(f"# Other {i}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    return root


def bullets(root: Path) -> list[str]:
    text = (root / "wiki" / "shared-page.md").read_text()
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_eight_processes_fifty_appends_each(root: Path) -> None:
    workers, per = 8, 50
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(root), str(k), str(per)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for k in range(workers)]
    outputs = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        outputs.append(out)
    statuses = Counter(line.split()[0] for out in outputs for line in out.splitlines() if line)
    assert statuses["appended"] == workers * per, statuses
    lines = bullets(root)
    facts = Counter()
    for line in lines:
        m = BULLET.match(line)
        assert m, f"malformed bullet {line!r}"
        facts[m.group(1)] += 1
    expected = {f"w{k}n{i}" for k in range(workers) for i in range(per)}
    assert set(facts) == expected and set(facts.values()) == {1}
    subjects = git(root, "log", "--format=%s").splitlines()
    assert subjects.count("wiki_append: shared-page") == workers * per
    # one commit each, touching only the page
    touched = set(git(root, "log", "--format=", "--name-only", "-n", str(workers * per)).split())
    assert touched == {"wiki/shared-page.md"}
    subprocess.run(["git", "fsck", "--strict"], cwd=root, check=True, capture_output=True)
    assert git(root, "status", "--porcelain") == ""


def test_appenders_killed_at_random_moments(root: Path) -> None:
    rng = random.Random(11)
    reported: set[str] = set()
    worker = 0
    deadline = time.monotonic() + 25
    rounds = 0
    while rounds < 6 and time.monotonic() < deadline:
        rounds += 1
        procs = []
        for _ in range(3):
            procs.append(subprocess.Popen([sys.executable, "-c", _WORKER, str(root), str(worker), "400"],
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
            worker += 1
        time.sleep(rng.uniform(0.6, 1.6))  # let them start and append a while
        for p in procs:
            time.sleep(rng.uniform(0.0, 0.15))
            p.send_signal(signal.SIGKILL)
        for p in procs:
            out, _ = p.communicate()
            # Only whole lines are acknowledgments: a worker killed while printing leaves a last
            # line without its newline (even a bare "appended"), which no agent ever received.
            for line in out.split("\n")[:-1]:
                parts = line.split()
                if parts and parts[0] == "appended":
                    assert len(parts) == 5, f"malformed acknowledgment {line!r}"
                    reported.add(parts[2])
    assert reported, "the workers never got to append"
    # the next action succeeds (recovering whatever a kill left) and leaves a clean tree
    w = Wiki(root)
    try:
        res = append(w, "shared-page", "fact-token w999n0 recorded", actor=Actor("agent", "after"))
    finally:
        w.close()
    assert res.status == "appended" and res.commit
    assert git(root, "status", "--porcelain") == ""
    subprocess.run(["git", "fsck"], cwd=root, check=True, capture_output=True)
    facts = Counter()
    for line in bullets(root):
        m = BULLET.match(line)
        assert m, f"partial or malformed bullet {line!r}"
        facts[m.group(1)] += 1
    assert max(facts.values()) == 1, "a fact was written twice"
    assert {f.split()[0] for f in reported} <= set(facts)  # every acknowledged fact is there
    assert "w999n0" in facts
    print("recoveries:", git(root, "log", "--format=%s").count("recover: "), "facts:", len(facts), "reported:", len(reported))
    # every fact on the page is committed: HEAD's page equals the working tree's
    assert git(root, "diff", "HEAD", "--stat") == ""
    assert not [p for p in (root / "wiki").iterdir() if ".curator-tmp-" in p.name]


def test_append_result_for_locked_wiki(root: Path) -> None:

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from filelock import FileLock; l=FileLock(sys.argv[1]); l.acquire();"
         "print('held', flush=True); time.sleep(30)", str(root / ".curator" / "write.lock")],
        stdout=subprocess.PIPE, text=True)
    w = Wiki(root)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        w.session.lock.patience = 0.3
        res = append(w, "shared-page", "blocked fact here")
        assert res.status == "locked" and res.is_error
        assert res.data == {"created": False, "page": None, "candidates": [], "matched": None}
    finally:
        holder.kill()
        holder.wait()
        w.close()


def test_threads_of_one_process_share_the_wiki_safely(root: Path) -> None:
    import threading

    w = Wiki(root)
    assert "wiki/shared-page.md" in w.pages  # a long-lived process with its cache loaded
    results: list[str] = []

    def worker(k: int) -> None:
        for i in range(10):
            res = append(w, "shared-page", f"fact-token w{k}n{i} recorded", actor=Actor("agent", f"t{k}"))
            results.append(res.status)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        w.close()
    assert results.count("appended") == 40
    facts = Counter(BULLET.match(line).group(1) for line in bullets(root))  # type: ignore[union-attr]
    assert len(facts) == 40 and set(facts.values()) == {1}
    assert git(root, "log", "--format=%s").splitlines().count("wiki_append: shared-page") == 40
    assert git(root, "status", "--porcelain") == ""
