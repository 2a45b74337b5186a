"""Provenance at size (issue 21): blame of a page with 500 bullets written by 500 commits, and the
injections log of 100,000 records filtered by agent.

Budgets: blame <= 1 s; the filtered log <= 0.5 s (medians over >= 5 runs). Measured in the same run:
a naive blame (every version of the page read with its own ``git show``, each line attributed to
the oldest version from which it is present without a gap), a naive log filter (``json.loads`` of
every line), and a plain read of the page / the log file for scale.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_provenance.py -s -p no:cacheprovider``
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from curator.engine.history.provenance import blame
from curator.engine.policy.actor import OPERATOR
from curator.engine.read.injections import LOG_NAME, read_records
from curator.engine.wiki import Wiki
from tests.corpus import generate

N_BULLETS = 500
N_RECORDS = 100_000
N_AGENTS = 20
RUNS = 5
BLAME_BUDGET_S = 1.0
LOG_BUDGET_S = 0.5
PAGE = "wiki/provenance-bench.md"
ACTORS = ("agent:dudu", "agent:mimi", "operator")


def median(fn: Callable[[], object], runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def build_history(root: Path) -> None:
    """500 commits on PAGE, one bullet each, by three actors (every 7th through the inbox), with
    git fast-import (one process instead of 500 commits' worth)."""
    lines = ["# Provenance bench", "", "## Updates", ""]
    stream: list[bytes] = []
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()
    t = 1_700_000_000
    for i in range(N_BULLETS):
        actor = ACTORS[i % 3]
        email = "operator@curator.invalid" if actor == "operator" else f"{actor[6:]}@agents.invalid"
        lines.append(f"- Fact number {i} about the provenance bench, written by {actor} (added 2026-01-01)")
        body = "\n".join(lines) + "\n"
        msg = "wiki_append: provenance-bench\n\nReviewed-by: operator\n" if i % 7 == 0 else \
            "wiki_append: provenance-bench\n"
        data = body.encode()
        stream += [b"commit refs/heads/main\n",
                   f"author {actor} <{email}> {t + i} +0000\n".encode(),
                   f"committer {actor} <{email}> {t + i} +0000\n".encode(),
                   f"data {len(msg.encode())}\n{msg}\n".encode()]
        if i == 0:
            stream.append(f"from {head}\n".encode())
        stream += [f"M 100644 inline {PAGE}\n".encode(), f"data {len(data)}\n".encode(), data, b"\n"]
    subprocess.run(["git", "fast-import", "--quiet", "--force"], cwd=root, input=b"".join(stream),
                   check=True, capture_output=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True, capture_output=True)


def naive_blame(root: Path) -> list[tuple[str, str]]:
    """Every version read with its own ``git show``; a line's author is the one of the oldest
    version from which on it is present in every version."""
    log = subprocess.run(["git", "log", "--reverse", "--format=%H%x1f%an", "--", PAGE], cwd=root,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    since: dict[str, str] = {}
    for entry in log:
        sha, author = entry.split("\x1f")
        text = subprocess.run(["git", "show", f"{sha}:{PAGE}"], cwd=root, capture_output=True,
                              text=True, check=True).stdout
        present = set(text.splitlines())
        since = {line: since.get(line, author) for line in present}
    return [(line, since.get(line, "")) for line in (root / PAGE).read_text("utf-8").splitlines()]


def write_log(path: Path) -> None:
    pages = [{"path": f"wiki/page-{k}.md", "title": f"Page {k}", "layer": "core",
              "blob": f"{k:040x}", "bytes": 400 + k} for k in range(5)]
    with path.open("w", encoding="utf-8") as f:
        for i in range(N_RECORDS):
            rec = {"t": f"2026-01-{1 + i % 28:02d}T10:00:00.000Z", "agent": f"agent:a{i % N_AGENTS}",
                   "department": None, "id": f"{i:012x}", "source": "mcp", "budget": 8000,
                   "query": "payments" if i % 2 else None, "commit": f"{i:040x}", "bytes": 2100,
                   "sha256": f"{i:064x}", "pages": pages}
            f.write(json.dumps(rec, separators=(", ", ": ")) + "\n")


def naive_filter(path: Path, agent: str) -> list[dict[str, object]]:
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("agent") == agent:
                out.append(rec)
    return out


def test_blame_of_500_commits_and_injections_log_of_100000(tmp_path: Path) -> None:
    root = tmp_path / "w"
    generate(root, 300, git=True)
    build_history(root)
    wiki = Wiki(root)
    try:
        lines = blame(wiki, PAGE, OPERATOR)
        facts = [b for b in lines if b.text.startswith("- Fact number")]
        assert len(facts) == N_BULLETS
        for b in facts:  # every bullet attributed to the actor named in its own text
            assert b.text.split("written by ")[1].split(" (")[0] == b.actor, b.text
            n = int(b.text.split()[3])
            assert (b.reviewer == "operator") == (n % 7 == 0)
        ours = median(lambda: blame(wiki, PAGE, OPERATOR))
        naive = median(lambda: naive_blame(root), runs=3)
        plain = median(lambda: (root / PAGE).read_bytes())
        assert naive_blame(root)[-1][1] == facts[-1].actor

        log = wiki.state_dir / LOG_NAME
        wiki.state_dir.mkdir(exist_ok=True)
        write_log(log)
        got = read_records(wiki, OPERATOR, agent="a7")
        assert len(got) == N_RECORDS // N_AGENTS and all(r.agent == "agent:a7" for r in got)
        assert [r.data["id"] for r in got] == [r["id"] for r in naive_filter(log, "agent:a7")]
        log_ours = median(lambda: read_records(wiki, OPERATOR, agent="a7"))
        log_naive = median(lambda: naive_filter(log, "agent:a7"))
        log_plain = median(lambda: log.read_bytes())
        log_since = median(lambda: read_records(wiki, OPERATOR, agent="a7", since="2026-01-20"))
    finally:
        wiki.close()
    size_mb = log.stat().st_size / 1e6
    print(f"\nblame, {N_BULLETS} bullets / {N_BULLETS} commits: ours {ours * 1000:.0f} ms, naive "
          f"{naive * 1000:.0f} ms ({naive / ours:.1f}x ours), plain read {plain * 1e6:.0f} us "
          f"(budget {BLAME_BUDGET_S * 1000:.0f} ms)")
    print(f"injections log, {N_RECORDS:,} records ({size_mb:.0f} MB), one agent of {N_AGENTS}: ours "
          f"{log_ours * 1000:.0f} ms (with --since {log_since * 1000:.0f} ms), naive json.loads-all "
          f"{log_naive * 1000:.0f} ms ({log_naive / log_ours:.1f}x ours), plain read "
          f"{log_plain * 1000:.0f} ms (budget {LOG_BUDGET_S * 1000:.0f} ms)")
    assert ours <= BLAME_BUDGET_S
    assert log_ours <= LOG_BUDGET_S
