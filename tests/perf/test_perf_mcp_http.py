"""The HTTP door under a team's load: 16 agents appending at once vs one stdio session (issue 42).

On one generated wiki, ``curator mcp --http`` serves 16 agents (each its own token and MCP
session through the SDK's streamable-HTTP client) making 20 ``wiki_append`` calls each, all at
once; then one stdio session (``curator mcp --agent``) makes the same 320 appends one after the
other. Targets: over HTTP every acknowledged fact is on its page exactly once, the p95 of an
append's round trip is at most 1 s, the throughput (appends per second, wall clock) is at least
0.8x the stdio session's, and the p50 of ``wiki_search`` over HTTP is at most 1.5x over stdio.

Run: ``.venv/bin/pytest tests/perf/test_perf_mcp_http.py -s`` (``CURATOR_PERF_PAGES`` sets the
wiki's size, 2,000 pages by default).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from curator.mcp_server import open_door
from tests import REPO
from tests.corpus import generate
from tests.mcp.http_helpers import add_agent, call, http_server, http_session
from tests.perf.test_perf_mcp import queries

N_PAGES = int(os.environ.get("CURATOR_PERF_PAGES", "2000"))
AGENTS = 16
APPENDS = 20
SEARCHES = 40
P95_BUDGET_S = 1.0
MIN_THROUGHPUT_RATIO = 0.8
MAX_SEARCH_RATIO = 1.5


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


def fact(tag: str, i: int) -> str:
    return f"Load probe {tag} {i} recorded reference {uuid.uuid4().hex}"


def test_http_door_under_16_agents(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    generate(root, N_PAGES, git=True)
    door = open_door(root, "probe")
    try:
        pages = sorted(p for p in door.wiki.pages
                       if p.startswith("wiki/") and door.wiki.visible(door.actor, p))
    finally:
        door.wiki.close()
    slugs = [Path(p).stem for p in pages[:: max(1, len(pages) // (AGENTS * APPENDS))]][: AGENTS * APPENDS]
    assert len(slugs) == AGENTS * APPENDS, len(slugs)
    tokens = {f"bench{k}": add_agent(root, f"bench{k}") for k in range(AGENTS)}
    qs = queries(SEARCHES)

    # --- HTTP: 16 agents at once --------------------------------------------------------------
    http_lat: list[float] = []
    http_search: list[float] = []
    stdio_lat: list[float] = []
    stdio_search: list[float] = []
    acknowledged: dict[str, str] = {}
    with http_server(root) as (url, _):

        async def agent(k: int, name: str) -> None:
            async with http_session(url, tokens[name]) as s:
                for i in range(APPENDS):
                    slug, text = slugs[k * APPENDS + i], fact(name, i)
                    t = time.perf_counter()
                    err, answer = await call(s, "wiki_append", slug=slug, content=text)
                    http_lat.append(time.perf_counter() - t)
                    assert not err and answer.startswith("appended"), answer
                    acknowledged[text] = answer

        async def load() -> float:
            t = time.perf_counter()
            async with anyio.create_task_group() as tg:
                for k, name in enumerate(tokens):
                    tg.start_soon(agent, k, name)
            return time.perf_counter() - t

        http_wall = anyio.run(load)
        found = b"".join((root / p).read_bytes() for p in pages).decode("utf-8", "replace")
        assert len(acknowledged) == AGENTS * APPENDS
        assert all(found.count(text) == 1 for text in acknowledged), "an acknowledged fact is missing or doubled"

        # --- stdio: the same number of appends through one session --------------------------
        params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=dict(os.environ),
                                       args=["-m", "curator.cli", "mcp", "--wiki", str(root), "--agent", "solo"])

        async def stdio_appends(s: ClientSession) -> float:
            t0 = time.perf_counter()
            for n, slug in enumerate(slugs):
                t = time.perf_counter()
                err, answer = await call(s, "wiki_append", slug=slug, content=fact("solo", n))
                stdio_lat.append(time.perf_counter() - t)
                assert not err and answer.startswith("appended"), answer
            return time.perf_counter() - t0

        async def searches(http: ClientSession, stdio: ClientSession) -> None:
            # Both servers up, on the same pages: the queries alternate between the two doors.
            for s in (http, stdio):
                await call(s, "wiki_search", query=qs[0])  # the index catches up with the appends
            for q in qs:
                for s, samples in ((http, http_search), (stdio, stdio_search)):
                    t = time.perf_counter()
                    err, answer = await call(s, "wiki_search", query=q)
                    samples.append(time.perf_counter() - t)
                    assert not err, answer

        async def stdio_then_search() -> float:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                wall = await stdio_appends(s)
                async with http_session(url, tokens["bench0"]) as h:
                    await searches(h, s)
            return wall

        stdio_wall = anyio.run(stdio_then_search)

    n = AGENTS * APPENDS
    http_tp, stdio_tp = n / http_wall, n / stdio_wall
    http_s50, stdio_s50 = statistics.median(http_search), statistics.median(stdio_search)
    print(f"\n{N_PAGES} pages; {AGENTS} agents x {APPENDS} appends over HTTP vs {n} through one stdio session")
    print(f"append HTTP : p50 {statistics.median(http_lat) * 1000:.0f} ms, p95 {p95(http_lat) * 1000:.0f} ms, "
          f"{http_tp:.1f}/s ({http_wall:.1f} s)")
    print(f"append stdio: p50 {statistics.median(stdio_lat) * 1000:.0f} ms, p95 {p95(stdio_lat) * 1000:.0f} ms, "
          f"{stdio_tp:.1f}/s ({stdio_wall:.1f} s)")
    print(f"throughput HTTP/stdio {http_tp / stdio_tp:.2f}x; search p50 HTTP {http_s50 * 1000:.1f} ms, "
          f"stdio {stdio_s50 * 1000:.1f} ms ({http_s50 / stdio_s50:.2f}x)")
    assert p95(http_lat) <= P95_BUDGET_S
    assert http_tp >= MIN_THROUGHPUT_RATIO * stdio_tp
    assert http_s50 <= MAX_SEARCH_RATIO * stdio_s50
