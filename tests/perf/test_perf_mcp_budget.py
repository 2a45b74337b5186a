"""Every MCP answer fits a model's context on a 32,000-page real-shaped wiki (issue 42).

Before the budgets, ``wiki_index`` answered about 3 MB, ``wiki_graph`` without a center about
9.7 MB and ``wiki_read`` of the 2 MB index page 2 MB. Each tool is called here through the
:class:`~curator.mcp_server.AgentDoor` with its default arguments (the biggest page for the
reads) and must answer at most 100 KB; the sizes are printed.

Run: ``.venv/bin/pytest tests/perf/test_perf_mcp_budget.py -s``
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curator.mcp_server import AgentDoor, open_door
from tests.corpus import generate

N_PAGES = 32_000
LIMIT = 100_000


@pytest.fixture(scope="session")
def big_wiki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("budget32k") / "wiki", N_PAGES, profile="real-shaped", git=True).root


def test_every_answer_fits_at_32k_pages(big_wiki: Path) -> None:
    door = open_door(big_wiki, "sizer")
    try:
        door.warm()
        pages = door.wiki.visible_pages(door.actor)
        biggest = max(pages, key=lambda p: p.size).path
        target = pages[len(pages) // 2].path.rsplit("/", 1)[-1].removesuffix(".md")
        calls: dict[str, Callable[[], str]] = {
            "wiki_append": lambda: door.append(target, "The budget probe is a durable fact."),
            "wiki_search": lambda: door.search("ledger", limit=100, expand=True),
            "wiki_read": lambda: door.read(biggest),
            "wiki_index": door.index,
            "files_neighbors": lambda: door.neighbors(biggest),
            "wiki_read_all": door.read_all,
            "wiki_graph": door.graph,
            "wiki_dedup": door.dedup,
            "wiki_context": door.context,
            "files_wiki_ingest": lambda: door.ingest("probe.txt", content="x" * 1000),
        }
        sizes = {name: answer_size(door, fn) for name, fn in calls.items()}
    finally:
        door.wiki.close()
    for name, (size, seconds) in sizes.items():
        print(f"{name:18} {size:>9,} bytes  {seconds:5.1f} s")
    assert all(size <= LIMIT for size, _ in sizes.values()), sizes
    assert all(size > 0 for size, _ in sizes.values()), sizes


def answer_size(door: AgentDoor, fn: Callable[[], str]) -> tuple[int, float]:
    t = time.perf_counter()
    text = door.call(fn)
    return len(text.encode("utf-8", "surrogateescape")), time.perf_counter() - t
