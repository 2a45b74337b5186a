"""The review inbox (docs/design.md §13) through the command line: which agent writes are held, the pending
items on disk, approve / reject as operator-only actions, undo, sync between clones, recovery."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from curator.cli import main
from curator.engine.facts.index import fact_index_for, fact_index_on_disk
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.policy.scope import parse_scope
from curator.engine.review.inbox import approve, get_item, item_view, list_items, similar_facts
from curator.engine.sync.remote import sync
from curator.engine.wiki import Wiki
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.held import INBOX_DIR, fact_key
from tests import REPO
from tests.sync_helpers import PAGE, make_net

REPO = REPO
IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
POLICY = """\
[review]
create = true
layers = ["identity", "core"]

[namespaces."ops"]
review = true

[namespaces."policies"]
mode = "operator_only"
review = true
"""
PAGES = {
    "wiki/ann.md": "---\ntitle: Ann\nlayer: core\n---\n# Ann\n\n## Updates\n\n- Ann joined in 2019 (added 2024-01-01)\n",
    "wiki/bob.md": "---\ntitle: Bob\nlayer: context\n---\n# Bob\n\n## Updates\n\n- Bob runs the warehouse\n",
    "wiki/me.md": "---\ntitle: Me\nlayer: l0\n---\n# Me\n\nI am the agent.\n",
    "ops/runbook.md": "# Runbook\n\n## Updates\n\n- Restart the queue on Mondays\n",
    "policies/travel.md": "# Travel\n\n## Updates\n\n- Book trains, not planes\n",
    "notes/tea.md": "# Tea\n\n## Updates\n\n- Green tea is in the left cupboard\n",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def seed(root: Path, policy: str | None = POLICY, pages: dict[str, str] = PAGES) -> Path:
    init_wiki(root)
    if policy is not None:
        (root / ".scope.toml").write_text(policy, encoding="utf-8")
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return seed(tmp_path / "w")


def cli(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, Any]:
    """Run the command line in-process with --json; (exit status, parsed answer or stderr)."""
    capsys.readouterr()
    code = main(["--wiki", str(root), *args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else err)


def agent_append(capsys: pytest.CaptureFixture[str], root: Path, slug: str, fact: str, *extra: str,
                 agent: str = "agent:dudu") -> tuple[int, Any]:
    return cli(capsys, root, "--as", agent, "append", slug, fact, *extra)


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def items(root: Path) -> list[str]:
    folder = root / INBOX_DIR
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# --- held or not -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("slug", "fact", "extra", "held"), [
    ("carol", "Carol joined the board", ("--create-new",), "[review] create"),
    ("ann", "Ann moved to Oslo", (), "core pages"),
    ("me", "I answer in English", (), "identity pages"),
    ("runbook", "Drain the queue before restarting", (), "namespace 'ops'"),
    ("bob", "Bob moved to night shifts", (), None),
    ("tea", "Black tea is on the top shelf", (), None),
])
def test_each_rule_holds_and_other_writes_go_through(capsys: pytest.CaptureFixture[str], root: Path, slug: str,
                                                     fact: str, extra: tuple[str, ...], held: str | None) -> None:
    before = commits(root)
    code, out = agent_append(capsys, root, slug, fact, *extra)
    assert code == 0, out
    if held is None:
        assert out["status"] == "appended" and items(root) == []
        assert fact in (root / out["page"]).read_text()
        return
    assert out["status"] == "pending" and held in out["reason"] and len(out["id"]) == 12
    assert items(root) == [f"{out['id']}.json"]
    item = json.loads((root / INBOX_DIR / f"{out['id']}.json").read_text())
    assert item["actor"] == "agent:dudu" and item["content"] == fact and item["target"] == out["page"]
    assert item["create"] is (slug == "carol") and item["links"] == [] and item["time"]
    page = root / out["page"]
    assert not page.exists() or fact not in page.read_text()  # nothing on the page yet
    # committed in the same action, authored by the agent, touching only the item
    assert commits(root) == before + 1
    assert git(root, "log", "-1", "--format=%an|%s").strip() == f"agent:dudu|inbox_hold: {slug}"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [f"{INBOX_DIR}/{out['id']}.json"]
    assert git(root, "status", "--porcelain").strip() == ""


def test_no_review_table_holds_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = seed(tmp_path / "w", policy=None)
    assert agent_append(capsys, root, "ann", "Ann moved to Oslo")[1]["status"] == "appended"
    assert agent_append(capsys, root, "zed", "Zed is new", "--create-new")[1]["status"] == "appended"
    assert items(root) == []


def test_denied_beats_review_and_operator_is_never_held(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    before = commits(root)
    code, out = agent_append(capsys, root, "travel", "Planes are fine for long trips")
    assert code == 1 and out["status"] == "denied" and items(root) == [] and commits(root) == before
    for slug, fact, extra in (("travel", "Planes are fine for long trips", ()), ("ann", "Ann likes tea", ()),
                              ("newpage", "A brand new page", ("--create-new",)), ("runbook", "Oil it", ())):
        code, out = cli(capsys, root, "append", slug, fact, *extra)
        assert code == 0 and out["status"] == "appended", out
    assert items(root) == []
    # nor is a capability (a sync job mirroring its source)
    code, out = cli(capsys, root, "--as", "capability:mirror", "append", "ann", "Ann mirrors a source")
    assert code == 0 and out["status"] == "appended" and items(root) == []


def test_pending_id_is_stable_for_a_resubmission(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, first = agent_append(capsys, root, "ann", "Ann moved to Oslo", "--link", "Oslo")
    count = commits(root)
    _, again = agent_append(capsys, root, "ann", "ann moved to  Oslo.", "--link", "Oslo")
    _, other = agent_append(capsys, root, "ann", "Ann moved to Oslo", agent="agent:kiki")
    assert first["status"] == again["status"] == other["status"] == "pending"
    assert first["id"] == again["id"] == other["id"]
    assert "already queued" in again["message"] and again["commit"] is None
    assert commits(root) == count and len(items(root)) == 1
    _, different = agent_append(capsys, root, "ann", "Ann moved to Bergen")
    assert different["id"] != first["id"] and len(items(root)) == 2


def test_pending_item_survives_a_restart(root: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args], cwd=REPO,
                              capture_output=True, text=True, timeout=60)

    out = json.loads(run("--as", "agent:dudu", "append", "ann", "Ann moved to Oslo", "--json").stdout)
    listed = json.loads(run("inbox", "list", "--json").stdout)  # a fresh process, nothing in memory
    assert [i["id"] for i in listed] == [out["id"]] and listed[0]["content"] == "Ann moved to Oslo"
    shown = run("inbox", "show", out["id"][:6])
    assert shown.returncode == 0 and "+- Ann moved to Oslo (added " in shown.stdout, shown.stderr
    bad = run("inbox", "show", "zz-not-an-id")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


# --- approve -----------------------------------------------------------------------------------

def test_approve_puts_exactly_that_text_as_the_agent_with_the_trailer(capsys: pytest.CaptureFixture[str],
                                                                      root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo in 2024", "--link", "Oslo",
                           agent="agent:kiki")
    code, out = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 0 and out["status"] == "appended" and out["page"] == "wiki/ann.md", out
    text = (root / "wiki/ann.md").read_text()
    bullet = [line for line in text.splitlines() if "Oslo" in line]
    assert len(bullet) == 1 and bullet[0].startswith("- Ann moved to Oslo in 2024 [[oslo]] (added ")
    assert git(root, "log", "-1", "--format=%an <%ae>").strip() == "agent:kiki <kiki@agents.invalid>"
    body = git(root, "log", "-1", "--format=%B")
    assert body.startswith("wiki_append: ann\n") and "Reviewed-by: operator" in body
    assert f"Inbox-item: {held['id']}" in body
    changed = sorted(git(root, "show", "--name-only", "--format=", "HEAD").split())
    assert changed == sorted(["wiki/ann.md", f"{INBOX_DIR}/{held['id']}.json"])  # one commit, both
    assert items(root) == [] and git(root, "status", "--porcelain").strip() == ""
    # decided: a second approve is a clear refusal naming who and where
    code, again = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 1 and again["status"] == "invalid"
    assert re.search(rf"already approved by operator at [\d-]+ [\d:]+ in {out['commit'][:12]}", again["message"])
    # ... also when the item is named by a short prefix of its id (a glob pathspec git must expand)
    code, again = cli(capsys, root, "inbox", "approve", held["id"][:6])
    assert code == 1 and re.search(rf"already approved by operator at [\d-]+ [\d:]+ in {out['commit'][:12]}", again["message"])


def test_edited_approval_and_dedup_recheck(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    code, out = cli(capsys, root, "inbox", "approve", held["id"], "--content", "Ann moved to Oslo in March 2024")
    assert code == 0 and out["status"] == "appended"
    text = (root / "wiki/ann.md").read_text()
    assert "- Ann moved to Oslo in March 2024 (added " in text and "- Ann moved to Oslo (added" not in text
    # a held fact the page meanwhile states is closed as duplicate, nothing added twice
    _, held2 = agent_append(capsys, root, "ann", "Ann joined in 2019!")
    assert held2["status"] == "duplicate"  # dedup runs before the hold: no item at all
    _, held3 = agent_append(capsys, root, "ann", "Ann speaks Norwegian")
    cli(capsys, root, "append", "ann", "Ann speaks Norwegian")  # the operator wrote it meanwhile
    code, out = cli(capsys, root, "inbox", "approve", held3["id"])
    assert code == 0 and out["status"] == "duplicate" and items(root) == []
    assert (root / "wiki/ann.md").read_text().count("Ann speaks Norwegian") == 1
    code, out = cli(capsys, root, "inbox", "approve", "abcdef123456", "--content", "x")
    assert code == 1 and "no pending inbox item" in out["message"]


def test_approve_of_a_new_page_creates_it(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "carol", "Carol joined the board", "--create-new")
    assert not (root / "wiki/carol.md").exists()
    code, out = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 0 and out["created"] is True and out["page"] == "wiki/carol.md"
    assert "- Carol joined the board (added " in (root / "wiki/carol.md").read_text()


def test_only_the_operator_decides(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    before = commits(root)
    code, out = cli(capsys, root, "--as", "agent:dudu", "inbox", "approve", held["id"])
    assert code == 1 and out["status"] == "denied"
    code, out = cli(capsys, root, "--as", "agent:dudu", "inbox", "reject", held["id"], "--reason", "meh")
    assert code == 1 and out["status"] == "denied"
    assert commits(root) == before and items(root) == [f"{held['id']}.json"]
    # no other door writes the inbox's files as an agent
    wiki = Wiki(root)
    agent = Actor("agent", "dudu")
    for path in (f"{INBOX_DIR}/{held['id']}.json", f"{INBOX_DIR}/forged.json", "_review/rejected/x.json"):
        assert not wiki.check_write(agent, path).allowed
    wiki.close()
    # the agent cannot undo its own hold away (the revert touches the inbox)
    code, out = cli(capsys, root, "--as", "agent:dudu", "undo")
    assert code == 1 and out["status"] == "denied" and items(root) == [f"{held['id']}.json"]


def test_undo_of_approve_and_reject(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    cli(capsys, root, "inbox", "approve", held["id"])
    code, out = cli(capsys, root, "undo")
    assert code == 0 and out["status"] == "reverted"
    assert "Oslo" not in (root / "wiki/ann.md").read_text() and items(root) == [f"{held['id']}.json"]
    code, out = cli(capsys, root, "inbox", "reject", held["id"], "--reason", "not confirmed")
    assert code == 0 and out["status"] == "rejected"
    assert agent_append(capsys, root, "ann", "Ann moved to Oslo")[1]["status"] == "rejected"
    code, out = cli(capsys, root, "undo")
    assert code == 0 and items(root) == [f"{held['id']}.json"]
    assert agent_append(capsys, root, "ann", "Ann moved to Oslo")[1]["status"] == "pending"


# --- reject ---------------------------------------------------------------------------------------

def test_rejection_is_sticky_for_any_agent(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    code, out = cli(capsys, root, "inbox", "reject", held["id"][:6], "--reason", "She lives in Bergen")
    assert code == 0 and out["status"] == "rejected" and items(root) == []
    assert git(root, "log", "-1", "--format=%an|%s").strip() == f"operator|inbox_reject: {held['id']}"
    before = commits(root)
    for agent, slug, fact in (("agent:dudu", "ann", "Ann moved to Oslo"),
                              ("agent:kiki", "ann", "ann MOVED to [[oslo]] Oslo."),
                              ("agent:lulu", "bob", "Ann moved to Oslo")):  # any page, even unheld
        code, out = agent_append(capsys, root, slug, fact, agent=agent)
        assert code == 0 and out["status"] == "rejected" and out["reason"] == "She lives in Bergen", out
        assert "do not submit it again" in out["message"]
    assert commits(root) == before and items(root) == []
    assert "Oslo" not in (root / "wiki/bob.md").read_text()
    # the operator may still state it
    assert cli(capsys, root, "append", "ann", "Ann moved to Oslo")[1]["status"] == "appended"
    code, out = cli(capsys, root, "inbox", "reject", held["id"], "--reason", "again")
    assert code == 1 and "already rejected by operator at " in out["message"]
    code, out = cli(capsys, root, "inbox", "reject", "abcd1234", "--reason", "  ")
    assert code == 1 and "needs a reason" in out["message"]


# --- policy ------------------------------------------------------------------------------------

def test_review_policy_parses_and_is_shown(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    parsed = parse_scope('[review]\ncreate = "yes"\nlayers = ["L1", "nonsense"]\n[namespaces.x]\nreview = "yes"\n')
    assert parsed.review.create is True and parsed.review.layers == ("core", "deep")
    assert parsed.rules["x"].review == 1 and len(parsed.warnings) == 3
    assert parse_scope("[review]\nlayers = 3\n").review.layers == ("identity", "core", "context", "deep")
    code, out = cli(capsys, root, "scope")
    assert code == 0 and out["review"] == {"create": True, "layers": ["identity", "core"]}
    rows = {r["namespace"]: r for r in out["namespaces"]}
    assert rows["ops"]["review"] is True and rows["wiki"]["review"] is False
    capsys.readouterr()
    main(["--wiki", str(root), "scope"])
    text = capsys.readouterr().out
    assert "review inbox: agent writes to new pages, identity pages, core pages, ops/, policies/ are held" in text


def test_a_damaged_item_is_reported_not_fatal(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    (root / INBOX_DIR / "0badc0ffee00.json").write_text("{not json", encoding="utf-8")
    code, out = cli(capsys, root, "inbox", "list")
    assert code == 0 and [i["id"] for i in out] == [held["id"]]
    capsys.readouterr()
    assert main(["--wiki", str(root), "inbox", "list"]) == 0
    err = capsys.readouterr().err
    assert "1 inbox item file(s) do not parse" in err and "0badc0ffee00.json" in err
    assert main(["--wiki", str(root), "inbox", "show", "0badc0ffee00"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is damaged" in err and "Traceback" not in err


def test_inbox_files_are_not_pages(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    agent_append(capsys, root, "ann", "Ann moved to Oslo")
    code, out = cli(capsys, root, "index")
    assert not any(p["path"].startswith("_review/") for p in out)
    code, out = cli(capsys, root, "auto", "list")
    assert code == 0 and out == []


# --- similar facts ----------------------------------------------------------------------------

def test_similar_facts_anywhere_in_the_wiki(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    (root / "notes/oslo.md").write_text("# Oslo\n\n- Ann moved to Oslo last spring\n- Oslo is cold\n")
    wiki = Wiki(root)
    found = similar_facts(wiki, "Ann moved to Oslo in 2024")
    assert found[0]["page"] == "notes/oslo.md" and found[0]["fact"] == "Ann moved to Oslo last spring"
    assert len(found) <= 3 and all(set(f) == {"page", "fact", "score"} for f in found)
    assert [f["score"] for f in found] == sorted((f["score"] for f in found), reverse=True)
    wiki.close()
    assert fact_key("- Ann [[x]] moved, to OSLO (added 2024-01-01)") == "ann moved to oslo"


def test_item_view_lists_facts_close_in_meaning_the_reader_may_see(capsys: pytest.CaptureFixture[str],
                                                                    root: Path) -> None:
    # One word each to the word-overlap answer (no spaces in Chinese): only meaning relates them.
    (root / "notes/server.md").write_text("# Server\n\n- 服务器每天凌晨两点自动重启。\n", encoding="utf-8")
    (root / "departments/hr").mkdir(parents=True)
    (root / "departments/hr/server.md").write_text("# HR server\n\n- 人事部的服务器每天凌晨两点自动重启。\n",
                                                   encoding="utf-8")
    code, out = agent_append(capsys, root, "ann", "每晚两点服务器会自动重新启动。")
    assert code == 0 and out["status"] == "pending", out
    wiki = Wiki(root)
    fact_index_for(wiki)  # as `curator facts similar` or the station leave it
    item = get_item(wiki, out["id"])
    view = item_view(wiki, item, Actor("agent", "dudu"))
    seen = view["similar"]
    assert view["similar_by"] == "meaning"
    assert len(seen) == 3 and all(set(f) == {"page", "line", "fact", "score"} for f in seen), seen
    assert (seen[0]["page"], seen[0]["line"], seen[0]["fact"]) == ("notes/server.md", 3, "服务器每天凌晨两点自动重启。")
    assert not any(f["page"].startswith("departments/") for f in seen), seen
    assert "departments/hr/server.md" in [f["page"] for f in item_view(wiki, item, OPERATOR)["similar"]]
    assert similar_facts(wiki, item.content) == []  # what the inbox showed before: nothing
    assert item_view(wiki, item, OPERATOR, meaning=False)["similar_by"] == "words"
    wiki.close()
    capsys.readouterr()
    assert main(["--wiki", str(root), "inbox", "show", out["id"]]) == 0
    shown = capsys.readouterr().out
    assert "closest facts in meaning:" in shown and "notes/server.md: 服务器每天凌晨两点自动重启。" in shown, shown


def test_item_view_by_shared_words_without_a_fact_index_builds_none(capsys: pytest.CaptureFixture[str],
                                                                   root: Path) -> None:
    code, out = agent_append(capsys, root, "ann", "Ann joined the Oslo office in 2019")
    assert code == 0 and out["status"] == "pending", out
    wiki = Wiki(root)
    view = item_view(wiki, get_item(wiki, out["id"]), OPERATOR)
    assert view["similar_by"] == "words" and not fact_index_on_disk(wiki)
    assert view["similar"][0] == {"page": "wiki/ann.md", "fact": "Ann joined in 2019", "score": 0.571}  # 4 of 7 words
    wiki.close()


# --- sync between clones -------------------------------------------------------------------------

def _held_in_net(tmp_path: Path) -> tuple[Any, str]:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": POLICY})
    agent = Actor("agent", "dudu")
    from curator.engine.write.append import append

    res = append(net.a, "ann-smith", "Ann moved to Oslo", actor=agent)
    assert res.status == "pending", res.message
    assert sync(net.a, OPERATOR).status == "pushed"
    assert sync(net.b, OPERATOR).status == "pulled"
    return net, res.data["id"]


def test_pending_item_travels_to_a_second_clone(tmp_path: Path) -> None:
    net, iid = _held_in_net(tmp_path)
    try:
        assert [i.id for i in list_items(net.b)] == [iid]
        result = approve(net.b, OPERATOR, iid)
        assert result.status == "appended", result.message
        assert sync(net.b, OPERATOR).status == "pushed"
        assert sync(net.a, OPERATOR).status == "pulled"
        assert "Ann moved to Oslo" in (net.a.root / "wiki/ann-smith.md").read_text()
        again = approve(net.a, OPERATOR, iid)
        assert again.status == "invalid"
        assert re.search(rf"already approved by operator at [\d-]+ [\d:]+ in {result.commit[:12]}", again.message)
    finally:
        net.close()


def test_concurrent_approve_on_two_clones_applies_once(tmp_path: Path) -> None:
    net, iid = _held_in_net(tmp_path)
    try:
        first = approve(net.a, OPERATOR, iid)
        assert first.status == "appended"
        assert sync(net.a, OPERATOR).status == "pushed"
        before = (net.b.root / "wiki/ann-smith.md").read_bytes()
        second = approve(net.b, OPERATOR, iid)  # b has not synced: its approve fetches first
        assert second.status == "invalid" and second.commit is None
        assert "already approved by operator at " in second.message and first.commit[:12] in second.message
        assert (net.b.root / "wiki/ann-smith.md").read_bytes() == before
        assert [i.id for i in list_items(net.b)] == [iid]  # unchanged until it syncs
        assert sync(net.b, OPERATOR).status == "pulled"
        assert (net.b.root / "wiki/ann-smith.md").read_text().count("Ann moved to Oslo") == 1
        assert list_items(net.b) == []
    finally:
        net.close()


# --- crash mid-approve ---------------------------------------------------------------------------

KILL = """
import os, sys
from curator.engine.repo import git as g
from curator.engine.policy.actor import OPERATOR
from curator.engine.review.inbox import approve
from curator.engine.wiki import Wiki

def die(self, paths, message, author, **options):
    os._exit(9)  # killed after the files are written, before the commit

g.Git.commit_paths = die
approve(Wiki(sys.argv[1]), OPERATOR, sys.argv[2])
"""


def test_nothing_lost_if_killed_mid_approve(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    proc = subprocess.run([sys.executable, "-c", KILL, str(root), held["id"]], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 9, proc.stderr
    assert "Ann moved to Oslo" in (root / "wiki/ann.md").read_text()  # written, not committed
    assert git(root, "status", "--porcelain").strip() != ""
    code, out = cli(capsys, root, "recover")
    assert code == 0 and out["interrupted"]["status"] == "recovered", out
    assert git(root, "status", "--porcelain").strip() == ""
    assert items(root) == []
    log = git(root, "log", "-1", "--format=%an|%B")
    assert log.startswith("agent:dudu|recover: wiki_append: ann") and "Reviewed-by: operator" in log
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == sorted(
        ["wiki/ann.md", f"{INBOX_DIR}/{held['id']}.json"])
    wiki = Wiki(root)
    with pytest.raises(Exception, match="already approved by operator"):
        get_item(wiki, held["id"])
    wiki.close()


KILL_BETWEEN = """
import os, sys
from curator.engine.write import actions
from curator.engine.policy.actor import OPERATOR
from curator.engine.review.inbox import approve
from curator.engine.wiki import Wiki

def die(self, rel, data):
    os._exit(9)  # killed after the page is written, before the item is removed

actions.ActionContext.write_record = die
approve(Wiki(sys.argv[1]), OPERATOR, sys.argv[2])
"""


def test_killed_between_page_and_item_loses_nothing(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo")
    proc = subprocess.run([sys.executable, "-c", KILL_BETWEEN, str(root), held["id"]], cwd=REPO,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 9, proc.stderr
    code, out = cli(capsys, root, "recover")
    # the approve was stopped half-way: rolled back whole (an action is all or nothing, issue 14)
    assert code == 0 and out["interrupted"]["status"] == "rolled_back", out
    assert git(root, "status", "--porcelain").strip() == ""
    assert "Ann moved to Oslo" not in (root / "wiki/ann.md").read_text()
    assert items(root) == [f"{held['id']}.json"]  # still pending: deciding it again applies it
    code, out = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 0 and out["status"] == "appended" and items(root) == []
    assert (root / "wiki/ann.md").read_text().count("Ann moved to Oslo") == 1


def test_approve_on_both_clones_before_either_syncs_merges_to_one_fact(tmp_path: Path) -> None:
    net, iid = _held_in_net(tmp_path)
    try:
        assert approve(net.a, OPERATOR, iid).status == "appended"
        time.sleep(1.1)  # a later second: b's commit is not byte-for-byte a's
        assert approve(net.b, OPERATOR, iid).status == "appended"  # nothing pushed yet: b cannot know
        assert sync(net.a, OPERATOR).status == "pushed"
        merged = sync(net.b, OPERATOR)
        assert merged.status == "merged", merged.message
        assert (net.b.root / "wiki/ann-smith.md").read_text().count("Ann moved to Oslo") == 1
        assert list_items(net.b) == []
        assert sync(net.a, OPERATOR).status == "pulled"
        assert (net.a.root / "wiki/ann-smith.md").read_text().count("Ann moved to Oslo") == 1
    finally:
        net.close()


def test_the_same_fact_held_on_two_clones_syncs_to_one_item(tmp_path: Path) -> None:
    """The item's id is the fact's: two clones holding the same fact add the same file with other
    details (agent, time); the sync keeps the first submission, not a conflict."""
    from curator.engine.write.append import append

    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": POLICY})
    try:
        first = append(net.a, "ann-smith", "Ann moved to Oslo", actor=Actor("agent", "dudu"))
        time.sleep(1.1)  # a later second: b's item is not byte-for-byte a's
        second = append(net.b, "ann-smith", "Ann moved to oslo.", actor=Actor("agent", "kiki"))
        assert first.status == second.status == "pending" and first.data["id"] == second.data["id"]
        iid = first.data["id"]
        mine = json.loads((net.a.root / INBOX_DIR / f"{iid}.json").read_text())
        assert sync(net.a, OPERATOR).status == "pushed"
        merged = sync(net.b, OPERATOR)
        assert merged.status == "merged", merged.message
        assert sync(net.a, OPERATOR).status == "pulled"
        for wiki in (net.a, net.b):
            assert [(i.id, i.actor, i.content) for i in list_items(wiki)] == [(iid, "agent:dudu", "Ann moved to Oslo")]
            assert json.loads((wiki.root / INBOX_DIR / f"{iid}.json").read_text()) == mine
        assert approve(net.b, OPERATOR, iid).status == "appended"
    finally:
        net.close()
