"""The review inbox through the agents' door: a real MCP client over stdio (docs/design.md §13, §11)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from mcp import ClientSession

from curator.engine.policy.actor import OPERATOR
from curator.engine.review.inbox import approve, list_items, reject
from curator.engine.wiki import Wiki
from curator.engine.write.held import INBOX_DIR
from tests.mcp.test_mcp_server import IDENT, assert_one_line_error, call, git_log, make_wiki, run

POLICY = """\
[review]
create = true
layers = ["identity", "core"]

[namespaces."hr"]
mode = "read_only"
synced_from = "capability:hr-sync"
review = true

[namespaces."ops"]
review = true
"""


def seeded(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "w")
    (root / ".scope.toml").write_text(POLICY, encoding="utf-8")
    (root / "ops").mkdir()
    (root / "ops/runbook.md").write_text("# Runbook\n\n## Updates\n\n- Restart on Mondays\n", encoding="utf-8")
    subprocess.run(["git", *IDENT, "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", *IDENT, "commit", "-qm", "policy"], cwd=root, check=True, capture_output=True)
    return root


def held_id(text: str) -> str:
    m = re.search(r"inbox item ([0-9a-f]{12})", text)
    assert m, text
    return m.group(1)


def test_held_writes_are_pending_successes_that_say_do_not_retry(tmp_path: Path) -> None:
    root = seeded(tmp_path)
    ids: dict[str, str] = {}

    async def body(s: ClientSession) -> None:
        # core page (layers rule), identity page, new page (create rule), ops/ (namespace rule)
        for key, args in {"core": {"slug": "payments", "content": "Refunds settle in five days"},
                          "identity": {"slug": "dudu", "content": "I answer in English"},
                          "create": {"slug": "treasury", "content": "Treasury meets on Fridays",
                                     "create_new": True},
                          "ns": {"slug": "runbook", "content": "Drain the queue first"}}.items():
            is_error, text = await call(s, "wiki_append", **args)
            assert not is_error, text
            assert text.startswith("pending: queued for review as inbox item"), text
            assert "do NOT retry" in text and "not an error" in text
            ids[key] = held_id(text)
        # the same fact again: the same id, nothing new
        is_error, text = await call(s, "wiki_append", slug="payments", content="refunds settle in five days.")
        assert not is_error and held_id(text) == ids["core"] and "already queued" in text
        # not held: a deep page outside the review namespaces
        is_error, text = await call(s, "wiki_append", slug="refunds", content="Refunds need a receipt")
        assert not is_error and text.startswith("appended:"), text
        # denied beats review: hr/ is read_only (and review = true)
        is_error, text = await call(s, "wiki_append", slug="handbook", content="Holidays need two weeks notice")
        assert_one_line_error(is_error, text)
        assert "denied" in text

    run(root, body)
    wiki = Wiki(root)
    try:
        assert sorted(i.id for i in list_items(wiki)) == sorted(set(ids.values()))
        assert len(list_items(wiki)) == 4
        assert not any(i.target.startswith("hr/") for i in list_items(wiki))
        assert "Refunds settle" not in (root / "wiki/payments.md").read_text()
        assert not (root / "wiki/treasury.md").exists()
        assert git_log(root)[0] == "agent:dudu <dudu@agents.invalid>|wiki_append: refunds"
        # the operator approves one: it lands authored by the agent, with the trailer
        res = approve(wiki, OPERATOR, ids["core"], fetch=False)
        assert res.status == "appended", res.message
        assert "- Refunds settle in five days (added " in (root / "wiki/payments.md").read_text()
        assert git_log(root, "%an|%(trailers:key=Reviewed-by,valueonly)")[0].strip() == "agent:dudu|operator"
        assert reject(wiki, OPERATOR, ids["ns"], "We never drain it", fetch=False).status == "rejected"
    finally:
        wiki.close()

    async def after(s: ClientSession) -> None:
        # rejection is sticky for any agent (kiki here), nothing queued, not an error
        is_error, text = await call(s, "wiki_append", slug="runbook", content="Drain the queue first")
        assert not is_error, text
        assert text.startswith("rejected:") and "We never drain it" in text and "Do not submit it again" in text

    run(root, after, agent="kiki")
    wiki = Wiki(root)
    try:
        assert len(list_items(wiki)) == 2 and not (root / INBOX_DIR / f"{ids['ns']}.json").exists()
    finally:
        wiki.close()


def test_tool_description_names_the_inbox_answers(tmp_path: Path) -> None:
    root = seeded(tmp_path)

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        doc = tools["wiki_append"].description or ""
        assert "'pending'" in doc and "'rejected'" in doc and "do not retry" in doc

    run(root, body)
