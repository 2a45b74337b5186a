"""Injection records (docs/design.md §14): every context built for an agent is recorded and can be rebuilt
exactly as it was sent, after later edits, and diffed against today's context."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from mcp import ClientSession

from curator.cli import main
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.read.injections import diff_today, get_record, read_records, rebuild
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from tests.mcp.test_mcp_server import call, make_wiki, run


def cli(root: Path, *args: str, actor: str = "operator") -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--wiki", str(root), "--as", actor, *args])
    return code, out.getvalue() + err.getvalue()


def test_injection_over_mcp_is_rebuilt_byte_identical_after_later_edits(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    sent: list[str] = []

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_context", budget=4000, query="payments")
        assert not err
        sent.append(text)

    run(root, body, agent="dudu", department="sales")
    assert "Card payments settle in two days" in sent[0]
    # the operator edits an injected page on disk without committing, then an agent appends
    page = root / "wiki/payments.md"
    page.write_text(page.read_text("utf-8").replace("How we take money.", "How we take money now."),
                    encoding="utf-8")
    wiki = Wiki(root)
    try:
        res = append(wiki, "payments", "Refunds to cards take five days", [], False, Actor("agent", "mimi"))
        assert res.commit
        records = read_records(wiki, OPERATOR, agent="dudu")
        assert len(records) == 1
        rec = records[0]
        assert rec.data["source"] == "mcp" and rec.data["department"] == "sales"
        assert rec.data["budget"] == 4000 and rec.data["query"] == "payments"
        assert rec.data["commit"] and rec.data["commit"] != res.commit  # HEAD at the time
        assert [p["path"] for p in rec.pages] == ["wiki/dudu.md", "wiki/payments.md"]
        assert all(len(p["blob"]) == 40 and p["bytes"] > 0 for p in rec.pages)
        built = rebuild(wiki, rec)
        assert built.exact and built.text.encode("utf-8") == sent[0].encode("utf-8")
        assert "How we take money now." not in built.text
        diff = diff_today(wiki, rec)
        assert "+How we take money now." in diff and "-How we take money." in diff
        assert "+- Refunds to cards take five days" in diff
    finally:
        wiki.close()
    # the CLI shows the same text, byte for byte, and the diff
    code, out = cli(root, "injections", "1")
    assert code == 0 and out == sent[0]
    code, out = cli(root, "injections", "1", "--diff")
    assert code == 0 and "+How we take money now." in out


def test_curator_context_records_unless_no_record_and_filters(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    code, text = cli(root, "context", "--agent", "dudu", "--budget", "3000")
    assert code == 0
    code, _ = cli(root, "context", "--agent", "dudu", "--no-record")
    assert code == 0
    code, _ = cli(root, "context", "--agent", "mimi")
    assert code == 0
    code, out = cli(root, "injections", "--json")
    rows = json.loads(out)
    assert [r["agent"] for r in rows] == ["agent:dudu", "agent:mimi"]
    assert rows[0]["source"] == "cli" and rows[0]["bytes"] == len(text.encode("utf-8"))
    code, out = cli(root, "injections", "--agent", "mimi", "--json")
    assert [r["n"] for r in json.loads(out)] == [2]
    code, out = cli(root, "injections", "--since", "2999-01-01", "--json")
    assert json.loads(out) == []
    code, out = cli(root, "injections", "1")
    assert out == text
    # an agent sees only its own records, and another's record is "no such record"
    code, out = cli(root, "injections", "--json", actor="agent:mimi")
    assert [r["n"] for r in json.loads(out)] == [2]
    code, out = cli(root, "injections", "1", actor="agent:mimi")
    assert code == 1 and "no injection record 1" in out
    code, out = cli(root, "injections", "9")
    assert code == 1 and "no injection record 9" in out and "Traceback" not in out


def test_an_agent_cannot_see_its_injection_of_a_page_now_hidden(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    fin = Actor("agent", "fin", "finance")
    (root / "departments/finance/budget.md").write_text(
        "---\ntitle: Budget\nlayer: core\n---\n# Budget\n\nThe quokkafin reserve is ten percent.\n",
        encoding="utf-8")
    code, out = cli(root, "--department", "finance", "context", "--agent", "fin")
    assert code == 0 and "quokkafin" in out
    wiki = Wiki(root)
    try:
        assert len(read_records(wiki, fin)) == 1
        moved = Actor("agent", "fin", "sales")  # the same id, now in another department
        assert read_records(wiki, moved) == []
        assert read_records(wiki, Actor("agent", "dudu"), agent="fin") == []
        rec = get_record(wiki, OPERATOR, 1)
        assert "quokkafin" in rebuild(wiki, rec).text
    finally:
        wiki.close()
    code, out = cli(root, "--department", "sales", "injections", "1", actor="agent:fin")
    assert code == 1 and "quokkafin" not in out
