"""4 processes on 2 clones append 50 facts each while syncing every few seconds (issue 11)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

from curator.engine.sync.remote import sync
from tests.sync_helpers import make_net

# One worker: appends its facts (a few pages shared by everyone, one created concurrently on both
# clones) and syncs every SYNC_EVERY seconds, between appends.
WORKER = r"""
import hashlib, json, random, sys, time
from curator.engine.policy.actor import Actor
from curator.engine.write.append import append
from curator.engine.sync.remote import sync
from curator.engine.wiki import Wiki

root, name, count, every = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
wiki = Wiki(root)
actor = Actor("agent", name)
pages = ["ann-smith", "payments", "fresh-topic"]
statuses, retries = [], 0
rng = random.Random(name)
last = time.monotonic()
for i in range(count):
    code = hashlib.sha1(f"{name}-{i}".encode()).hexdigest()[:10]
    fact = f"{name} observation {i} code {code}"
    while True:
        res = append(wiki, pages[i % 3], fact, create_new=True, actor=actor)
        if res.status != "locked":
            break
        retries += 1
    assert res.status == "appended", (res.status, res.message)
    if time.monotonic() - last >= every:
        statuses.append(sync(wiki, actor).status)
        last = time.monotonic()
    time.sleep(rng.uniform(0.02, 0.1))
print(json.dumps({"statuses": statuses, "retries": retries}))
"""

PAGES = {
    "wiki/ann-smith.md": "---\ntitle: Ann Smith\nlayer: core\ntrust: 0.5\n---\n# Ann Smith\n\n"
                         "Ann runs payments.\n\n## Updates\n\n- Ann joined in 2019 (added 2024-01-01)\n",
    "wiki/payments.md": "---\ntitle: Payments\n---\n# Payments\n\nHow money moves.\n\n## Links\n\n"
                        "See [[ann-smith]].\n",
}
PER_WORKER = 50
SYNC_EVERY = 1.0


def fact_code(name: str, i: int) -> str:
    return hashlib.sha1(f"{name}-{i}".encode()).hexdigest()[:10]


def test_four_processes_two_clones_all_facts_exactly_once(tmp_path: Path) -> None:
    start = time.monotonic()
    net = make_net(tmp_path, PAGES)
    try:
        workers = {"w1": net.a, "w2": net.a, "w3": net.b, "w4": net.b}
        procs = {
            name: subprocess.Popen([sys.executable, "-c", WORKER, str(wiki.root), name, str(PER_WORKER),
                                    str(SYNC_EVERY)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name, wiki in workers.items()
        }
        reports = {}
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, f"{name}: {err[-2000:]}"
            reports[name] = json.loads(out.strip().splitlines()[-1])
        syncs = [s for r in reports.values() for s in r["statuses"]]
        assert syncs, "the workers never synced while appending"
        assert "conflict" not in syncs and "offline" not in syncs, syncs
        assert "merged" in syncs and "pushed" in syncs  # the clones really did move concurrently
        # final sync: a, b, a
        for wiki in (net.a, net.b, net.a):
            res = sync(wiki)
            assert res.status in ("up_to_date", "pulled", "pushed", "merged"), res.message
        assert sync(net.b).status in ("up_to_date", "pulled")
        contents = {}
        for wiki in (net.a, net.b):
            assert not (wiki.state_dir / "conflicts.json").exists()
            texts = [(wiki.root / "wiki" / f"{p}.md").read_text(encoding="utf-8")
                     for p in ("ann-smith", "payments", "fresh-topic")]
            whole = "\n".join(texts)
            assert "<<<<<<<" not in whole and ">>>>>>>" not in whole
            for name in workers:
                for i in range(PER_WORKER):
                    code = fact_code(name, i)
                    assert whole.count(f"code {code}") == 1, (wiki.root.name, name, i)
            facts = [line for line in whole.splitlines() if " observation " in line]
            assert len(facts) == len(workers) * PER_WORKER
            # each fact on the page its worker appended it to
            page_text = dict(zip(("ann-smith", "payments", "fresh-topic"), texts, strict=True))
            for name in workers:
                for i in range(PER_WORKER):
                    assert f"code {fact_code(name, i)}" in page_text[("ann-smith", "payments", "fresh-topic")[i % 3]]
            contents[wiki.root.name] = texts
            status = subprocess.run(["git", "status", "--porcelain"], cwd=wiki.root, capture_output=True,
                                    text=True).stdout
            assert status == ""
        assert contents["a"] == contents["b"]
        # the fresh page was created on both clones and merged into one (frontmatter once)
        fresh = contents["a"][2]
        assert fresh.count("---\n") == 2 and fresh.count("## Updates") == 1
    finally:
        net.close()
    assert time.monotonic() - start < 90
