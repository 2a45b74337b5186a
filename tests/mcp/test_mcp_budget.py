"""Every MCP answer keeps to the door's byte budget, cut with a notice that says how to get the rest
(issue 42). A small real-shaped wiki with a small budget pins the mechanism; the 32,000-page size
check is tests/perf/test_perf_mcp_budget.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.engine.errors import CuratorError
from curator.mcp_server import AgentDoor, _cursor, cut_to_budget, open_door
from tests.corpus import generate

N_PAGES = 400
ENTRY = re.compile(r"^- (\S+\.md) — ", re.M)
CURSOR = re.compile(r"cursor='([^']+)'")


def size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("budget") / "wiki", N_PAGES, profile="real-shaped", git=True).root


@pytest.fixture
def door(root: Path) -> Iterator[AgentDoor]:
    # No department: departments/sales and departments/finance are hidden from this agent.
    d = open_door(root, "budgeter")
    d.budget = 4_000
    yield d
    d.wiki.close()


def visible(door: AgentDoor) -> list[str]:
    return [p.path for p in door.wiki.visible_pages(door.actor)]


def page_through(door: AgentDoor, namespace: str | None = None) -> list[str]:
    """Every entry wiki_index gives, following its cursors to the end."""
    seen: list[str] = []
    cursor: str | None = None
    while True:
        text = door.call(lambda c=cursor: door.index(namespace, c))
        assert size(text) <= door.budget
        seen += ENTRY.findall(text)
        more = CURSOR.search(text)
        if more is None:
            assert text.endswith("]") and "end of the index" in text.splitlines()[-1]
            return seen
        cursor = more.group(1)


def test_index_pages_through_every_visible_page_exactly_once(door: AgentDoor) -> None:
    paths = visible(door)
    assert len(paths) < N_PAGES and not any(p.startswith("departments/") for p in paths)
    first = door.call(door.index)
    # Too big for one answer: a summary by namespace counting only visible pages, then a cursor.
    assert first.startswith(f"{len(paths)} pages you may see, in ")
    assert "departments" not in first and "[... " in first
    assert page_through(door) == paths
    namespaces = re.findall(r"^- ([^\s:]+): \d+ pages?, ", first, re.M)
    assert namespaces and "departments" not in namespaces
    by_namespace = [p for ns in namespaces for p in page_through(door, ns)]
    assert sorted(by_namespace) == paths and len(by_namespace) == len(set(by_namespace))


def test_index_cursor_never_opens_hidden_pages(door: AgentDoor) -> None:
    hidden = sorted(p for p in door.wiki.pages if p.startswith("departments/"))
    assert hidden
    # A forged cursor naming a hidden page only says where to go on from.
    text = door.call(lambda: door.index(cursor=_cursor("", hidden[0])))
    assert "departments/" not in text and ENTRY.findall(text)[0] > hidden[0]
    with pytest.raises(CuratorError) as hidden_ns:
        door.call(lambda: door.index("departments"))
    with pytest.raises(CuratorError) as no_ns:
        door.call(lambda: door.index("no-such-folder"))
    assert str(hidden_ns.value).replace("departments", "X") == str(no_ns.value).replace("no-such-folder", "X")
    with pytest.raises(CuratorError, match=r"^invalid: the cursor is not one wiki_index gave"):
        door.call(lambda: door.index(cursor="not a cursor!"))


def test_small_wiki_index_is_the_whole_list(door: AgentDoor) -> None:
    door.budget = 1_000_000
    text = door.call(door.index)
    assert ENTRY.findall(text) == visible(door) and text.endswith(f"\n{len(visible(door))} pages")


def test_graph_without_center_is_the_community_overview(door: AgentDoor) -> None:
    door.budget = 1_500
    text = door.call(door.graph)
    assert size(text) <= door.budget and text.startswith("graph LR\n    %% Community overview: the ")
    counts = [int(n.replace(",", "")) for n in re.findall(r': ([\d,]+) pages"\]', text)]
    assert len(counts) >= 2 and counts == sorted(counts, reverse=True)
    more = re.search(r"%% \[\.\.\. ([\d,]+) more communities \(([\d,]+) pages\)", text)
    assert more is not None
    total = int(re.search(r"the ([\d,]+) pages you may see", text).group(1).replace(",", ""))  # type: ignore[union-attr]
    alone = int(re.search(r"; (\d+) pages? links? to no other", text).group(1))  # type: ignore[union-attr]
    # Counted over visible pages only: the shown and the cut communities and the orphans add up.
    assert sum(counts) + int(more.group(2).replace(",", "")) + alone == total
    assert total <= len(visible(door)) and "departments/" not in text
    # Around a well-linked page, the nearest pages while they fit, and the same notice style.
    hub = re.search(r'\((\S+\.md)\): ', text).group(1)  # type: ignore[union-attr]
    around = door.call(lambda: door.graph(hub, 3))
    assert size(around) <= door.budget and around.startswith("graph LR")
    assert re.search(r"%% \[\.\.\. [\d,]+ more pages within 3 links: pass a smaller depth", around)


def test_dedup_keeps_to_the_budget_with_the_notice(door: AgentDoor) -> None:
    door.budget = 1_500
    text = door.call(door.dedup)
    assert size(text) <= door.budget
    listed = len(re.findall(r"^- keep ", text, re.M))
    more = re.search(r"^\[\.\.\. (\d+) more families: the (\d+) with the most", text, re.M)
    total = re.search(r"^(\d+) duplicate families\.", text, re.M)
    assert more and total and listed >= 1
    assert int(more.group(2)) == listed and listed + int(more.group(1)) == int(total.group(1))


def test_a_big_page_reads_in_parts_that_add_up_to_it(door: AgentDoor) -> None:
    big = max(door.wiki.visible_pages(door.actor), key=lambda p: p.size)
    whole = door.wiki.read_text(big.path)
    assert size(whole) > door.budget
    texts: list[str] = []
    part = 1
    while True:
        text = door.call(lambda p=part: door.read(big.path, p))
        assert size(text) <= door.budget
        body, _, notice = text.rpartition("\n")
        texts.append(body)
        if notice.startswith("[end of the page"):
            break
        assert notice.startswith("[... ") and f"pass part={part + 1} to read on" in notice
        part += 1
    assert "".join(texts) == whole and part > 1
    with pytest.raises(CuratorError, match=rf"^invalid: {re.escape(big.path)} has {part} parts, not {part + 1}$"):
        door.call(lambda: door.read(big.path, part + 1))


def test_every_tool_answers_within_the_budget(door: AgentDoor) -> None:
    target = visible(door)[len(visible(door)) // 2]
    big = max(door.wiki.visible_pages(door.actor), key=lambda p: p.size).path
    answers = {
        "wiki_append": lambda: door.append(target.rsplit("/", 1)[-1][:-3], "The budget probe is a durable fact."),
        "wiki_search": lambda: door.search("ledger", limit=100, expand=True),
        "wiki_read": lambda: door.read(big),
        "wiki_index": lambda: door.index(),
        "files_neighbors": lambda: door.neighbors(big, max_bytes=1_000_000),
        "wiki_read_all": lambda: door.read_all(max_bytes=1_000_000),
        "wiki_graph": lambda: door.graph(),
        "wiki_dedup": lambda: door.dedup(),
        "wiki_context": lambda: door.context(budget=1_000_000),
        "files_wiki_ingest": lambda: door.ingest("probe.txt", content="x" * 10_000),
    }
    for name, fn in answers.items():
        text = door.call(fn)
        assert 0 < size(text) <= door.budget, (name, size(text))
    search = door.call(lambda: door.search("ledger", limit=100))
    assert re.search(r"^\[\.\.\. \d+ more hits not shown: narrow the query or lower limit\]$", search, re.M)


def test_the_safety_net_cuts_any_answer_at_a_line_end() -> None:
    text = "\n".join(f"line {i}" for i in range(10_000))
    cut = cut_to_budget(text, 2_000)
    assert size(cut) <= 2_000 and cut.endswith("bytes not shown: the answer is cut at 2,000 bytes; ask for less]")
    assert text.startswith(cut.rpartition("\n")[0] + "\n")
    assert cut_to_budget("short", 2_000) == "short"


def test_index_pages_through_the_top_level_pages_even_one_at_a_time(door: AgentDoor) -> None:
    door.budget = 300  # less than the notice's room: still one page per answer, and a cursor
    top = [p for p in visible(door) if "/" not in p]
    assert len(top) >= 2
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(len(top) + 1):
        text = door.call(lambda c=cursor: door.index("/", c))
        seen += ENTRY.findall(text)
        more = CURSOR.search(text)
        if more is None:
            break
        cursor = more.group(1)
    assert seen == top
