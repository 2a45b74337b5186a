"""The agents' MCP door, through a real MCP client session over stdio (docs/design.md §11, issue 9).

Every test spawns ``python -m curator.cli mcp --wiki DIR --agent ID [--department D]`` with the
SDK's ``stdio_client`` and talks to it with a ``ClientSession``, exactly as an agent runtime would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from curator.engine.dedup import families as dedup_families
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.engine.write.bootstrap import init_wiki
from tests import REPO

REPO = REPO
IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
TOOLS = {
    "wiki_append": ["slug", "content", "links", "create_new"],
    "wiki_search": ["query", "min_trust", "layer", "expand", "limit"],
    "wiki_read": ["page_name", "part"],
    "wiki_index": ["namespace", "cursor"],
    "files_neighbors": ["slug", "max_bytes", "snippet_chars"],
    "wiki_read_all": ["max_bytes"],
    "wiki_graph": ["center", "depth"],
    "wiki_dedup": [],
    "wiki_context": ["budget", "query"],
    "wiki_conflicts": ["page"],
    "files_wiki_ingest": ["filename", "content", "url"],
}
REQUIRED = {"wiki_append": ["slug", "content"], "wiki_search": ["query"], "wiki_read": ["page_name"],
            "files_neighbors": ["slug"], "files_wiki_ingest": ["filename"]}
SCOPE = """\
[namespaces."hr"]
mode = "read_only"
synced_from = "capability:hr-sync"
"""
PAGES = {
    "wiki/payments.md": "---\ntitle: Payments\nlayer: core\ntrust: 0.8\n---\n# Payments\n\n"
                        "How we take money. See [[refunds]] and [[not-written-yet]].\n\n## Updates\n"
                        "- Card payments settle in two days (added 2026-01-05)\n",
    "wiki/refunds.md": "# Refunds\n\nRefunds go back to the card. Back to [[payments]].\n",
    "wiki/dudu.md": "---\ntitle: Dudu\nlayer: identity\n---\n# Dudu\n\nI am dudu, the helpful agent.\n",
    "hr/handbook.md": "# Handbook\n\nHolidays are booked in the HR tool.\n\n## Updates\n",
    "departments/sales/pipeline.md": "# Pipeline\n\nThe zebracorn deal closes in May.\n",
    "departments/finance/budget.md": "# Budget\n\nThe quokkafin reserve is ten percent.\n",
}


def make_wiki(root: Path) -> Path:
    init_wiki(root)
    (root / ".scope.toml").write_text(SCOPE, encoding="utf-8")
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", *IDENT, "add", "."], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", *IDENT, "commit", "-qm", "seed"], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def wiki_root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w")


@asynccontextmanager
async def mcp_session(root: Path, agent: str = "dudu", department: str | None = None
                      ) -> AsyncIterator[ClientSession]:
    args = ["-m", "curator.cli", "mcp", "--wiki", str(root), "--agent", agent]
    if department:
        args += ["--department", department]
    # The whole environment: the tests' git settings (no global identity) must reach the server.
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ), cwd=str(REPO))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(root: Path, body: Callable[[ClientSession], Awaitable[None]], agent: str = "dudu",
        department: str | None = None) -> None:
    async def main() -> None:
        async with mcp_session(root, agent, department) as session:
            await body(session)

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:  # the task groups wrap a failed assertion: show it plainly
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from None


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await session.call_tool(tool, arguments)
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return bool(result.is_error), text


def assert_one_line_error(is_error: bool, text: str) -> None:
    assert is_error, text
    assert "\n" not in text and "Traceback" not in text, text


def git_log(root: Path, fmt: str = "%an <%ae>|%s") -> list[str]:
    out = subprocess.run(["git", "log", f"--format={fmt}"], cwd=root, check=True, capture_output=True,
                         text=True).stdout
    return out.splitlines()


# --- tests ------------------------------------------------------------------------------------

def test_tool_list_names_arguments_and_descriptions(wiki_root: Path) -> None:
    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, args in TOOLS.items():
            schema = tools[name].input_schema
            assert list(schema.get("properties", {})) == args, name
            assert sorted(schema.get("required", [])) == sorted(REQUIRED.get(name, [])), name
            assert len(tools[name].description or "") > 60, name
        append_doc = tools["wiki_append"].description
        assert "only way to write" in append_doc and "create_new" in append_doc
        assert "duplicate" in append_doc and "candidates" in append_doc
        assert "Mermaid" in tools["wiki_graph"].description

    run(wiki_root, body)


def test_append_duplicate_candidates_and_search(wiki_root: Path) -> None:
    before = len(git_log(wiki_root))

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_append", slug="payments",
                               content="Refunds over 500 euros need a flamingo approval", links=["refunds"])
        assert not err and text.startswith("appended: appended to wiki/payments.md"), text
        page = (wiki_root / "wiki/payments.md").read_text("utf-8")
        assert "- Refunds over 500 euros need a flamingo approval [[refunds]] (added " in page

        err, text = await call(s, "wiki_append", slug="Payments",
                               content="refunds over 500 euros need a flamingo approval.")
        assert not err, text  # a near-duplicate is a success that says what to do next
        assert text.startswith("duplicate:")
        assert '"Refunds over 500 euros need a flamingo approval"' in text  # the matched bullet, quoted
        assert "Do not append it again" in text

        err, text = await call(s, "wiki_append", slug="payments-team", content="The team has five people")
        assert not err and text.startswith("candidates:"), text
        assert "payments (wiki/payments.md" in text and "create_new" in text
        assert not (wiki_root / "wiki/payments-team.md").exists()

        err, text = await call(s, "wiki_append", slug="payments-team", content="The team has five people",
                               create_new=True)
        assert not err and "created wiki/payments-team.md" in text, text

        err, text = await call(s, "wiki_search", query="flamingo")
        assert not err and "- wiki/payments.md — Payments [core, trust 0.80" in text, text
        assert "«flamingo»" in text
        err, text = await call(s, "wiki_search", query="five people")
        assert not err and "wiki/payments-team.md" in text, text

    run(wiki_root, body)
    log = git_log(wiki_root)
    # Two writes, two commits, each authored as the agent; the declined calls wrote nothing.
    assert log[: len(log) - before] == ["agent:dudu <dudu@agents.invalid>|wiki_append: payments-team",
                                        "agent:dudu <dudu@agents.invalid>|wiki_append: payments"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=wiki_root, capture_output=True, text=True)
    assert status.stdout == ""


def test_errors_are_tool_errors_of_one_line(wiki_root: Path) -> None:
    handbook = (wiki_root / "hr/handbook.md").read_bytes()
    before = len(git_log(wiki_root))

    async def body(s: ClientSession) -> None:
        # hr/ is read_only (synced from capability:hr-sync): the policy denies the agent's write.
        err, text = await call(s, "wiki_append", slug="handbook", content="Holidays need two weeks notice")
        assert_one_line_error(err, text)
        assert text.startswith("denied:") and "hr/handbook.md" in text, text

        for tool, args, expected in [
            ("wiki_append", {"slug": "!!!", "content": "a fact"}, "invalid slug"),
            ("wiki_append", {"slug": "payments", "content": "  "}, "content is empty"),
            ("wiki_append", {"slug": "payments"}, "content: Field required"),
            ("wiki_search", {"query": "payments", "limit": 0}, "limit must be between 1 and 100"),
            ("wiki_search", {"query": "payments", "limit": "many"}, "limit: Input should be a valid integer"),
            ("wiki_search", {"query": "payments", "min_trust": 2}, "min_trust must be between 0 and 1"),
            ("wiki_search", {"query": "payments layer:bogus"}, "unknown layer 'bogus' in layer:bogus"),
            ("wiki_search", {"query": "payments trust:>=abc"}, "trust:>=abc: trust is a number from 0 to 1"),
            ("wiki_search", {"query": "trust:>=7"}, "so 7 matches no page"),
            ("wiki_read", {"page_name": "paymnts"}, "did you mean wiki/payments.md"),
            ("files_neighbors", {"slug": "payments", "max_bytes": 0}, "max_bytes must be a positive"),
            ("wiki_graph", {"center": "payments", "depth": -1}, "depth must be 0 or more"),
            ("files_wiki_ingest", {"filename": "x.txt"}, "exactly one of content or url"),
            ("files_wiki_ingest", {"filename": "x.txt", "url": "file:///etc/passwd"}, "only http and https"),
        ]:
            err, text = await call(s, tool, **args)
            assert_one_line_error(err, text)
            assert expected in text, (tool, args, text)

    run(wiki_root, body)
    assert (wiki_root / "hr/handbook.md").read_bytes() == handbook
    assert len(git_log(wiki_root)) == before


async def index_ready(s: ClientSession) -> None:
    """Wait for the fact index the server builds in the background when it starts."""
    from curator.engine.facts.door import BUILDING

    for _ in range(600):
        err, text = await call(s, "wiki_conflicts", page="payments")
        if not text.startswith(BUILDING):
            assert not err, text
            return
        await anyio.sleep(0.1)
    raise AssertionError("the fact index was never ready")


def test_wiki_conflicts_lists_only_the_facts_the_agent_may_see(wiki_root: Path) -> None:
    refunds = {"wiki/refund-window.md": "30", "wiki/support.md": "14", "departments/finance/refund-rules.md": "60"}
    for rel, days in refunds.items():
        (wiki_root / rel).write_text(f"# Page\n\n- The refund window for card payments is {days} days.\n",
                                     encoding="utf-8")

    async def no_department(s: ClientSession) -> None:
        await index_ready(s)
        err, text = await call(s, "wiki_conflicts")
        assert not err, text
        assert "wiki/refund-window.md:3" in text and "wiki/support.md:3" in text, text
        assert "30 days" in text and "14 days" in text and "1 conflict:" in text, text
        assert "departments/finance" not in text and "60 days" not in text, text
        err, text = await call(s, "wiki_conflicts", page="payments")
        assert (err, text) == (False, "no conflicts among the facts you may see on payments"), text
        err, text = await call(s, "wiki_conflicts", page="departments/finance/refund-rules.md")
        assert_one_line_error(err, text)

    async def finance(s: ClientSession) -> None:
        await index_ready(s)
        err, text = await call(s, "wiki_conflicts", page="refund-rules")
        assert not err and "departments/finance/refund-rules.md:3" in text and "60 days" in text, text

    before = (wiki_root / "wiki/support.md").read_bytes()
    run(wiki_root, no_department, agent="nodept")
    run(wiki_root, finance, agent="fin", department="finance")
    assert (wiki_root / "wiki/support.md").read_bytes() == before  # read-only


def test_append_answer_lists_close_facts_the_agent_may_see(wiki_root: Path) -> None:
    (wiki_root / "departments/finance/fees.md").write_text(
        "# Fees\n\n- Card payments settle within two business days.\n", encoding="utf-8")

    async def body(s: ClientSession) -> None:
        await index_ready(s)
        err, text = await call(s, "wiki_append", slug="refunds", content="Card payments are settled in two days.")
        assert not err and text.startswith("appended:"), text
        lines = text.splitlines()
        assert "Closest in meaning elsewhere in the wiki:" in lines, text
        close = lines[lines.index("Closest in meaning elsewhere in the wiki:") + 1:]
        assert len(close) == 3 and close[0].startswith("- wiki/payments.md:11 ("), text
        assert "departments/" not in text, text

    run(wiki_root, body, agent="nodept")


def test_department_visibility_in_search_read_and_index(wiki_root: Path) -> None:
    async def sales(s: ClientSession) -> None:
        err, text = await call(s, "wiki_search", query="zebracorn")
        assert not err and "departments/sales/pipeline.md" in text, text
        err, text = await call(s, "wiki_search", query="quokkafin")
        assert not err and text == "no pages match 'quokkafin'", text
        err, text = await call(s, "wiki_read", page_name="departments/sales/pipeline.md")
        assert not err and "zebracorn deal" in text
        err, text = await call(s, "wiki_read", page_name="departments/finance/budget.md")
        assert_one_line_error(err, text)
        assert text.startswith("no page 'departments/finance/budget.md'") and "quokkafin" not in text
        err, text = await call(s, "wiki_read", page_name="budget")  # by slug: no leak either
        assert_one_line_error(err, text)
        err, text = await call(s, "wiki_index")
        assert "departments/sales/pipeline.md" in text and "departments/finance" not in text
        err, text = await call(s, "wiki_read_all")
        assert "zebracorn" in text and "quokkafin" not in text

    async def no_department(s: ClientSession) -> None:
        for word in ("zebracorn", "quokkafin"):
            err, text = await call(s, "wiki_search", query=word)
            assert not err and text.startswith("no pages match"), text
        err, text = await call(s, "wiki_read", page_name="departments/sales/pipeline.md")
        assert_one_line_error(err, text)
        err, text = await call(s, "wiki_index")
        assert "departments/" not in text and "wiki/payments.md" in text

    run(wiki_root, sales, agent="sam", department="sales")
    run(wiki_root, no_department, agent="nodept")


def test_changes_made_by_other_processes_are_seen(wiki_root: Path) -> None:
    cli = [sys.executable, "-m", "curator.cli", "--wiki", str(wiki_root), "--as", "agent:kiki"]

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_search", query="xylophone")
        assert not err and text.startswith("no pages match"), text
        err, text = await call(s, "wiki_read", page_name="refunds")
        assert "xylophone" not in text

        # Another agent appends through the one-shot CLI (a separate process, its own commit).
        await anyio.to_thread.run_sync(lambda: subprocess.run(
            [*cli, "append", "refunds", "Refunds are logged next to the xylophone"], check=True,
            capture_output=True))
        err, text = await call(s, "wiki_search", query="xylophone")
        assert not err and "wiki/refunds.md" in text, text
        err, text = await call(s, "wiki_read", page_name="refunds")
        assert "Refunds are logged next to the xylophone" in text

        # The station (a long-lived process with a loaded cache) creates a page: the shared cache
        # database already knows it, which is what this process must still pick up.
        station = Wiki(wiki_root)
        try:
            _ = station.pages
            res = append(station, "ocarina-notes", "The ocarina lives in the station", create_new=True,
                         actor=Actor("operator"))
            assert res.status == "appended", res.message
        finally:
            station.close()
        err, text = await call(s, "wiki_index")
        assert "wiki/ocarina-notes.md — Ocarina Notes" in text, text
        err, text = await call(s, "files_neighbors", slug="ocarina-notes")
        assert not err and "The ocarina lives in the station" in text

        # A direct edit in place (an editor saving over the file) of the page about to be read.
        page = wiki_root / "wiki/payments.md"
        with open(page, "a", encoding="utf-8") as f:
            f.write("- The marimba fee is waived [[marimba-rules]] (added 2026-02-01)\n")
        err, text = await call(s, "files_neighbors", slug="payments")  # its links, parsed again
        assert "The marimba fee is waived" in text and "[[marimba-rules]] — not yet written" in text
        # An edit in place of a page nobody asks for by name: the server's file watcher reports it
        # (events arrive asynchronously, so allow them a moment; the stat sweep would take minutes).
        with open(wiki_root / "wiki/refunds.md", "a", encoding="utf-8") as f:
            f.write("\nThe tuba refund window is thirty days.\n")
        deadline = time.monotonic() + 1.5
        while True:
            err, text = await call(s, "wiki_search", query="tuba")
            if "wiki/refunds.md" in text or time.monotonic() > deadline:
                break
            await anyio.sleep(0.05)
        assert "wiki/refunds.md" in text, text
        # ... and a page written straight into a folder is found by search at once.
        (wiki_root / "wiki/kazoo.md").write_text("# Kazoo\n\nThe kazoo budget is tiny.\n", encoding="utf-8")
        err, text = await call(s, "wiki_search", query="kazoo budget")
        assert "wiki/kazoo.md" in text, text

        # The server's own next write routes to a page it learnt about from others.
        err, text = await call(s, "wiki_append", slug="kazoo", content="The kazoo is red")
        assert not err and text.startswith("appended: appended to wiki/kazoo.md"), text

    run(wiki_root, body)


def test_reading_tools_graph_context_dedup_and_ingest(wiki_root: Path) -> None:
    from curator.engine.read.agent_context import build_context

    w = Wiki(wiki_root)
    try:  # exactly what the engine injects for this agent
        expected_context = build_context(w, Actor("agent", "dudu")).text
    finally:
        w.close()

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "files_neighbors", slug="payments")
        assert not err and text.startswith("# Payments (wiki/payments.md)"), text
        assert "How we take money" in text and "## Pages linking here (1)\n- Refunds (wiki/refunds.md)" in text
        assert "Refunds (wiki/refunds.md)" in text and "[[not-written-yet]] — not yet written" in text

        err, text = await call(s, "wiki_graph", center="payments", depth=1)
        assert not err and text.startswith("graph LR"), text
        assert "Payments" in text and "Refunds" in text and "Pipeline" not in text

        err, text = await call(s, "wiki_context")
        assert not err and text == expected_context, text
        assert text.index("## Dudu") < text.index("### Wiki — core") < text.index("## Payments")
        err, text = await call(s, "wiki_context", budget=10)
        assert not err and text.startswith("no identity or core pages fit"), text

        err, text = await call(s, "wiki_dedup")
        assert not err and (text == "no duplicate families" or "duplicate famil" in text), text

        err, text = await call(s, "wiki_search", query="payments", expand=True, limit=1)
        assert not err and "wiki/refunds.md" in text and "linked from a hit" in text, text

        err, text = await call(s, "files_wiki_ingest", filename="call notes 1.txt",
                               content="Transcript: the client asked about refunds.")
        assert not err and text.startswith("ingested: stored raw/call_notes_1.txt"), text

    run(wiki_root, body)
    assert (wiki_root / "raw/call_notes_1.txt").read_text("utf-8") == "Transcript: the client asked about refunds."
    assert git_log(wiki_root)[0] == "agent:dudu <dudu@agents.invalid>|ingest: raw/call_notes_1.txt"


def test_bad_start_is_one_line_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "mcp", "--wiki", str(tmp_path / "nope"),
                           "--agent", "dudu"], capture_output=True, text=True, cwd=REPO, timeout=30)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "mcp", "--wiki", str(tmp_path),
                           "--agent", "bad id!"], capture_output=True, text=True, cwd=REPO, timeout=30)
    assert proc.returncode == 2 and "invalid actor" in proc.stderr and proc.stderr.count("\n") == 1


def test_dedup_gives_families_the_agent_may_read(tmp_path: Path) -> None:
    from tests.engine.dedup.test_dedup_families import FAMILY, FIXED, HIDDEN, NEXT, NEXT_COPY, wiki_pages
    from tests.gui_helpers import make_wiki as make_families_wiki

    root = make_families_wiki(tmp_path / "fam", wiki_pages())

    def families(text: str) -> list[set[str]]:
        out = []
        for line in text.splitlines():
            if line.startswith("- keep "):
                keep, _, rest = line[len("- keep "):].partition("  <-  merge ")
                out.append({keep, *rest.partition(": ")[0].split(", ")})
        return out

    async def sales(s: ClientSession) -> None:
        err, text = await call(s, "wiki_dedup")
        assert not err and "duplicate families" in text and "append new facts to the page marked keep" in text, text
        assert f"- keep {FIXED}  <-  merge " in text  # one line per family, its survivor first
        found = families(text)
        assert FAMILY in found and {NEXT, NEXT_COPY} in found  # the finance copy is not in it
        assert HIDDEN not in text

    async def finance(s: ClientSession) -> None:
        err, text = await call(s, "wiki_dedup")
        assert not err and {NEXT, NEXT_COPY, HIDDEN} in families(text), text

    # the operator's scan keeps its result (every page, the finance copy too): the agents' servers
    # answer from it, visibility applied at answer time
    from curator.engine.wiki import Wiki

    assert HIDDEN in {p for f in dedup_families.find_families(Wiki(root)) for p in f.pages}
    kept = Wiki(root)
    kept.refresh()
    assert kept.store.derived("dedup") is not None
    run(root, sales, agent="dudu", department="sales")
    run(root, finance, agent="fin", department="finance")
