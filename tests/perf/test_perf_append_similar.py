"""Append with ``similar`` (issue 41) against today's append, on a real-shaped wiki
(``tests.corpus.generate(..., profile="real-shaped")``, 2,000 pages by default):

* **long-lived** (the MCP server): the MCP handler's append (:meth:`AgentDoor.append` through
  :meth:`AgentDoor.call`) with the fact index warm, against the same handler with the door by
  meaning turned off (plain :func:`~curator.engine.write.append.append` in its place), alternating
  on distinct pages in one run, each after the index's refresh for the previous append is done
  (an agent thinks between two appends); target: the median with meaning at most 1.2x the median
  without. Printed too: bursts of appends back to back, where that refresh competes with the next;
* **one process per append** (an agent shelling out to ``curator append --json``): with the index
  file on disk, without one (the answer then says ``similar_note``, nothing is built; the
  same-page check still loads the model) and with the door by meaning turned off (today's
  append: plain :func:`~curator.engine.write.append.append` behind the same command). Printed,
  not a target: a fresh process also loads the model (0.1 s) and the index file (0.3 s at
  32,000 pages), which a long-lived door holds.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_append_similar.py -s -p no:cacheprovider``
(``CURATOR_SCALE_PAGES`` picks another size).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from curator.engine.facts import door as meaning_door
from curator.engine.facts.door import NOT_BUILT
from curator.engine.facts.index import INDEX_NAME, fact_index_for
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append, page_slug
from curator.mcp_server import AgentDoor
from tests import REPO
from tests.corpus import generate

PAGES = int(os.environ.get("CURATOR_SCALE_PAGES", "2000"))
RUNS = 15
CLI_RUNS = 5
BURST = 10
BURST_ROUNDS = 3
TARGET_RATIO = 1.2
pytestmark = pytest.mark.timeout(3600)


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def plain_append(wiki: Wiki, slug: str, content: str, links: Any = (), create_new: bool = False,
                 actor: Actor | None = None) -> Any:
    """The door without meaning: what the handler called before issue 41."""
    assert actor is not None
    return append(wiki, slug, content, list(links), create_new, actor)


def test_append_with_similar_costs_at_most_a_fifth_more(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    generate(root, PAGES, seed=41, profile="real-shaped", git=True)
    actor = Actor("agent", "bench")
    wiki = Wiki(root)
    agent = AgentDoor(wiki, actor)
    with_meaning = meaning_door.append_with_similar
    try:
        started = time.perf_counter()
        fact_index_for(wiki)
        print(f"\nfact index built in {time.perf_counter() - started:.1f} s for {PAGES} pages")
        paths = sorted(p for p in wiki.pages if not p.startswith(("auto/", "_review/")) and wiki.visible(actor, p))
        targets = [page_slug(p) for p in paths[:: max(1, len(paths) // (2 * RUNS + 3 * CLI_RUNS + 2 * BURST * BURST_ROUNDS + 4))]]

        def settled() -> None:
            """Wait for the index's refresh after the last append (an agent thinks between two)."""
            refresher = wiki.session.peek(meaning_door._Live)
            if refresher is not None:
                refresher.pool.submit(lambda: None).result()

        def handler(slug: str, fact: str, meaning: bool, settle: bool = True) -> tuple[float, str]:
            if settle:
                settled()
            meaning_door.append_with_similar = with_meaning if meaning else plain_append  # type: ignore[assignment]
            t = time.perf_counter()
            text = agent.call(lambda: agent.append(slug, fact))
            return time.perf_counter() - t, text

        handler(targets[0], "warm-up fact one", True)
        handler(targets[1], "warm-up fact two", False)
        plain: list[float] = []
        similar: list[float] = []
        for i in range(RUNS):
            took, text = handler(targets[2 + 2 * i], f"The ledger export number {i} runs at night.", False)
            assert text.startswith("appended:") and "Closest in meaning" not in text, text
            plain.append(took)
            took, text = handler(targets[3 + 2 * i], f"The payout report number {i} is mailed on Fridays.", True)
            assert text.startswith("appended:") and "Closest in meaning elsewhere in the wiki:" in text, text
            similar.append(took)
        # Back to back (no thought between appends): the refresh after one competes with the next.
        burst: dict[bool, list[float]] = {False: [], True: []}
        spare = iter(targets[2 + 2 * RUNS + 3 * CLI_RUNS:])
        for n, meaning in enumerate((False, True) * BURST_ROUNDS):
            settled()
            t = time.perf_counter()
            for i in range(BURST):
                handler(next(spare), f"Burst fact {i} of run {n}.", meaning, False)
            settled()
            burst[meaning].append((time.perf_counter() - t) / BURST)
    finally:
        meaning_door.append_with_similar = with_meaning  # type: ignore[assignment]
        wiki.close()

    rest = targets[2 + 2 * RUNS:]
    index = root / ".curator" / INDEX_NAME
    aside = index.with_name("aside.sqlite")
    one_shot: dict[str, list[float]] = {"on disk": [], "none": [], "plain": []}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = ["--wiki", str(root), "--as", "agent:bench", "append"]
    # today's append behind the same command: the door by meaning replaced by plain append
    plain_cli = ("import sys\n"
                 "from curator.engine.facts import door\n"
                 "from curator.engine.write.append import append\n"
                 "door.append_with_similar = lambda w, s, c, links=(), new=False, actor=None: "
                 "append(w, s, c, list(links), new, actor)\n"
                 "from curator.cli import main\n"
                 "sys.exit(main(sys.argv[1:]))\n")
    for i in range(CLI_RUNS):
        for n, kind in enumerate(("on disk", "none", "plain")):
            if kind == "none":
                index.rename(aside)
            start = [sys.executable, "-c", plain_cli] if kind == "plain" else [sys.executable, "-m", "curator.cli"]
            t = time.perf_counter()
            proc = subprocess.run([*start, *command, rest[3 * i + n], f"The one-shot fact {i} {n} is kept.", "--json"],
                                  capture_output=True, text=True, env=env)
            one_shot[kind].append(time.perf_counter() - t)
            assert proc.returncode == 0, proc.stderr
            answer = json.loads(proc.stdout)
            assert answer["status"] == "appended", answer
            if kind == "none":
                assert answer["similar"] == [] and answer["similar_note"] == NOT_BUILT and not index.exists()
                aside.rename(index)
            elif kind == "plain":
                assert "similar" not in answer, answer
            else:
                assert len(answer["similar"]) == 3, answer

    ratio = ms(similar) / ms(plain)
    print(f"MCP handler, median of {RUNS}: append {ms(plain):.1f} ms, with similar {ms(similar):.1f} ms "
          f"(x{ratio:.2f}, target x{TARGET_RATIO})")
    plain_burst, similar_burst = ms(burst[False]), ms(burst[True])
    print(f"MCP handler back to back, median of {BURST_ROUNDS} bursts of {BURST}: append {plain_burst:.1f} ms, "
          f"with similar {similar_burst:.1f} ms (x{similar_burst / plain_burst:.2f})")
    base = ms(one_shot["plain"])
    print(f"CLI one-shot, median of {CLI_RUNS}: today's append (meaning off) {base:.0f} ms, no index "
          f"{ms(one_shot['none']):.0f} ms (x{ms(one_shot['none']) / base:.2f}), index on disk "
          f"{ms(one_shot['on disk']):.0f} ms (x{ms(one_shot['on disk']) / base:.2f})")
    assert ratio <= TARGET_RATIO
