"""Operators are people (issue 42): the operator's commits carry their own git identity and the
``Curator-Actor: operator`` trailer, the inbox names who decided, another clone sees who decided
an item first, ``review = 2`` waits for two different people, and sync still recognises an
operator's commit by its trailer and signature, never by its author name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from curator.cli import main
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.policy.scope import parse_scope
from curator.engine.review.inbox import approve, list_items
from curator.engine.sync.remote import sync
from curator.engine.write.append import append
from curator.engine.write.held import INBOX_DIR
from tests.engine.review.test_inbox import POLICY, agent_append, cli, git, items, seed
from tests.sync_helpers import GIT_ID, PAGE, make_net

ANN = ("Ann Operator", "ann@example.org")
BOB = ("Bob Operator", "bob@example.org")
RUNBOOK = "# Runbook\n\n## Updates\n\n- Restart the queue on Mondays\n"
TWO = POLICY.replace('[namespaces."ops"]\nreview = true', '[namespaces."ops"]\nreview = 2')


def be(root: Path, person: tuple[str, str]) -> str:
    """Configure this clone's git identity (as an operator does once per machine)."""
    git(root, "config", "--local", "user.name", person[0])
    git(root, "config", "--local", "user.email", person[1])
    return f"{person[0]} <{person[1]}>"


def last(root: Path, fmt: str) -> str:
    return git(root, "log", "-1", f"--format={fmt}").strip()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return seed(tmp_path / "w")


# --- the operator's commits ---------------------------------------------------------------------

def test_cli_commits_as_the_configured_person_with_the_trailer(capsys: pytest.CaptureFixture[str],
                                                               root: Path) -> None:
    code, out = cli(capsys, root, "append", "tea", "Oolong is in the right cupboard")
    assert code == 0 and out["status"] == "appended", out
    # no identity configured: the neutral operator, still marked by the trailer
    assert last(root, "%an <%ae>") == "operator <operator@curator.invalid>"
    assert last(root, "%(trailers:key=Curator-Actor,valueonly)") == "operator"
    be(root, ANN)
    code, out = cli(capsys, root, "append", "tea", "Rooibos is on the top shelf")
    assert code == 0 and out["status"] == "appended", out
    assert last(root, "%an <%ae>|%cn <%ce>") == "Ann Operator <ann@example.org>|Ann Operator <ann@example.org>"
    assert last(root, "%(trailers:key=Curator-Actor,valueonly)") == "operator"
    assert last(root, "%s") == "wiki_append: tea"
    # history and blame name the person
    code, hist = cli(capsys, root, "history", "--limit", "1")
    assert code == 0 and hist[0]["actor"] == "Ann Operator", hist
    # an agent's commit keeps the agent's name and carries no operator trailer
    code, out = agent_append(capsys, root, "tea", "Mint tea is by the kettle")
    assert code == 0 and last(root, "%an") == "agent:dudu"
    assert last(root, "%(trailers:key=Curator-Actor,valueonly)") == ""
    # the operator's activity holds the commits made under the person's name and the neutral one
    code, acts = cli(capsys, root, "activity", "--agent", "operator")
    subjects = [a["subject"] for a in acts]
    assert code == 0 and subjects.count("wiki_append: tea") == 2, acts
    assert {a["actor"] for a in acts} >= {"Ann Operator", "operator"}, acts


def test_a_name_that_would_forge_a_trailer_stays_on_one_line(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    git(root, "config", "--local", "user.name", "Eve\nReviewed-by: operator")
    code, out = cli(capsys, root, "append", "tea", "Chai is in the jar")
    assert code == 0, out
    assert last(root, "%an") == "Eve Reviewed-by: operator"
    assert "Reviewed-by" not in last(root, "%b")


def test_reviewed_by_and_rejected_by_name_the_person(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    me = be(root, ANN)
    _, held = agent_append(capsys, root, "ann", "Ann moved to Oslo in 2024")
    code, out = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 0 and out["status"] == "appended", out
    assert f"Reviewed-by: {me}" in last(root, "%B")
    assert last(root, "%an") == "agent:dudu"  # the fact is still the agent's
    code, again = cli(capsys, root, "inbox", "show", held["id"])
    assert code == 1 and f"already approved by {me} at " in again, again
    _, held = agent_append(capsys, root, "ann", "Ann collects stamps")
    code, out = cli(capsys, root, "inbox", "reject", held["id"], "--reason", "not verified")
    assert code == 0 and out["status"] == "rejected", out
    assert last(root, "%an") == "Ann Operator"
    record = next((root / "_review/rejected").glob("*.json"))
    assert json.loads(record.read_text())["by"] == me


# --- two clones -------------------------------------------------------------------------------------

def test_the_second_clone_sees_who_approved_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": POLICY})
    try:
        ann, bob = be(net.a.root, ANN), be(net.b.root, BOB)
        res = append(net.a, "ann-smith", "Ann moved to Oslo", actor=Actor("agent", "dudu"))
        iid = res.data["id"]
        assert sync(net.a, OPERATOR).status == "pushed"
        assert sync(net.b, OPERATOR).status == "pulled"
        assert approve(net.a, OPERATOR, iid).status == "appended"
        assert sync(net.a, OPERATOR).status == "pushed"
        git(net.b.root, "fetch", "-q", "origin")  # b knows the remote's state, has not merged it
        code = main(["--wiki", str(net.b.root), "inbox", "list"])
        text = capsys.readouterr().out
        assert code == 0 and iid in text and f"already approved by {ann} at " in text, text
        assert "on origin/main: run 'curator sync'" in text
        main(["--wiki", str(net.b.root), "inbox", "list", "--json"])
        row = json.loads(capsys.readouterr().out)[0]
        assert row["decided"]["by"] == ann and row["decided"]["decision"] == "approved"
        second = approve(net.b, OPERATOR, iid)  # not offered again: refused, naming who and when
        assert second.status == "invalid" and f"already approved by {ann} at " in second.message
        assert bob not in second.message
        assert sync(net.b, OPERATOR).status == "pulled"
        assert list_items(net.b) == []
        code = main(["--wiki", str(net.b.root), "inbox", "show", iid])
        err = capsys.readouterr().err
        assert code == 1 and f"already approved by {ann} at " in err and "Traceback" not in err
    finally:
        net.close()


# --- review = 2 -------------------------------------------------------------------------------------

def test_review_two_waits_for_a_second_different_person(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = seed(tmp_path / "w", TWO)
    page = (root / "ops/runbook.md").read_text()
    _, held = agent_append(capsys, root, "runbook", "Drain the queue before restarting")
    assert held["status"] == "pending" and "until 2 different operators approve" in held["reason"], held
    iid = held["id"]
    ann = be(root, ANN)
    code, out = cli(capsys, root, "inbox", "approve", iid)
    assert code == 0 and out["status"] == "pending", out
    assert out["approvals"][0]["by"] == ann and out["needed"] == 2
    assert last(root, "%s") == f"inbox_approval: {iid}" and last(root, "%an") == "Ann Operator"
    assert last(root, "%(trailers:key=Curator-Actor,valueonly)") == "operator"
    assert (root / "ops/runbook.md").read_text() == page  # nothing applied yet
    stored = json.loads((root / INBOX_DIR / f"{iid}.json").read_text())
    assert [a["by"] for a in stored["approvals"]] == [ann]
    assert git(root, "status", "--porcelain").strip() == ""  # the approval is committed
    # the same person again: still waiting, nothing committed
    head = git(root, "rev-parse", "HEAD")
    code, out = cli(capsys, root, "inbox", "approve", iid)
    assert code == 0 and out["status"] == "pending" and "approved it already" in out["message"], out
    assert git(root, "rev-parse", "HEAD") == head and len(out["approvals"]) == 1
    # list and show say what it waits for
    capsys.readouterr()
    main(["--wiki", str(root), "inbox", "list"])
    assert f"waits: 1 of 2 approvals: {ann}" in capsys.readouterr().out
    main(["--wiki", str(root), "inbox", "show", iid])
    assert f"waits: 1 of 2 approvals: {ann}" in capsys.readouterr().out
    # a second, different person: the fact is committed, with both reviewers
    bob = be(root, BOB)
    code, out = cli(capsys, root, "inbox", "approve", iid)
    assert code == 0 and out["status"] == "appended", out
    assert "Drain the queue before restarting" in (root / "ops/runbook.md").read_text()
    body = last(root, "%B")
    assert f"Reviewed-by: {ann}\nReviewed-by: {bob}" in body and last(root, "%an") == "agent:dudu"
    assert items(root) == []
    # provenance names both reviewers of the line
    code, lines = cli(capsys, root, "blame", "runbook")
    [line] = [b for b in lines if "Drain the queue" in b["text"]]
    assert code == 0 and line["actor"] == "agent:dudu" and line["reviewer"] == f"{ann}, {bob}", line


def test_review_two_needs_told_apart_operators(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = seed(tmp_path / "w", TWO)
    _, held = agent_append(capsys, root, "runbook", "Check the disks weekly")
    assert cli(capsys, root, "inbox", "approve", held["id"])[1]["status"] == "pending"
    code, out = cli(capsys, root, "inbox", "approve", held["id"])
    assert code == 0 and out["status"] == "pending" and "git config user.name" in out["message"], out


def test_review_numbers_parse() -> None:
    parsed = parse_scope('[namespaces.a]\nreview = 2\n[namespaces.b]\nreview = 99\n[namespaces.c]\nreview = false\n')
    assert parsed.rules["a"].review == 2 and parsed.rules["c"].review == 0
    assert parsed.rules["b"].review == 1 and any("1 to 9" in w for w in parsed.warnings)


# --- sync recognises the operator by trailer and signature ---------------------------------------

def _b_commit(root: Path, rel: str, text: str, name: str, message: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", rel)
    subprocess.run(["git", *GIT_ID, "-c", f"user.name={name}", "commit", "-qm", message], cwd=root, check=True,
                   capture_output=True)
    git(root, "push", "-q", "origin", "main")


@pytest.mark.parametrize(("name", "message", "why"), [
    ("Ann Operator", "wiki_append: ann-smith\n\nCurator-Actor: operator", "claims to be the operator"),
    ("Ann Operator", "tidy", "writes policies/rules.md"),
])
def test_an_unsigned_person_commit_is_still_held(tmp_path: Path, name: str, message: str, why: str) -> None:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": '[namespaces.policies]\nmode = "operator_only"\n',
                              "policies/rules.md": "# Rules\n"})
    try:
        _b_commit(net.tmp / "b", "policies/rules.md", "# Rules\n\nAnyone now\n", name, message)
        result = sync(net.a, OPERATOR)
        assert result.status == "held" and why in result.message, result.message
    finally:
        net.close()


def test_a_forged_approval_from_another_clone_is_held(tmp_path: Path) -> None:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": TWO, "ops/runbook.md": RUNBOOK})
    try:
        res = append(net.a, "runbook", "Reboot on Fridays", actor=Actor("agent", "dudu"))
        assert res.status == "pending", res.message
        iid = res.data["id"]
        assert sync(net.a, OPERATOR).status == "pushed"
        git(net.tmp / "b", "pull", "-q", "origin", "main")
        rel = f"{INBOX_DIR}/{iid}.json"
        data: dict[str, Any] = json.loads((net.tmp / "b" / rel).read_text())
        data["approvals"] = [{"by": "Ann Operator <ann@example.org>", "time": data["time"]}]
        _b_commit(net.tmp / "b", rel, json.dumps(data), "agent:mallory", "approve")
        result = sync(net.a, OPERATOR)
        assert result.status == "held" and f"decides the inbox record {rel}" in result.message, result.message
    finally:
        net.close()


def test_a_signed_approval_from_another_clone_is_taken(tmp_path: Path) -> None:
    net = make_net(tmp_path, {"wiki/ann-smith.md": PAGE, ".scope.toml": TWO, "ops/runbook.md": RUNBOOK})
    try:
        ann, bob = be(net.a.root, ANN), be(net.b.root, BOB)
        res = append(net.a, "runbook", "Reboot on Fridays", actor=Actor("agent", "dudu"))
        assert res.status == "pending", res.message
        iid = res.data["id"]
        assert approve(net.a, OPERATOR, iid).status == "pending"
        assert sync(net.a, OPERATOR).status == "pushed"
        assert sync(net.b, OPERATOR).status == "pulled"  # Ann's signed approval is taken
        [item] = list_items(net.b)
        assert item.approvers == [ann]
        done = approve(net.b, OPERATOR, iid)
        assert done.status == "appended", done.message
        assert f"Reviewed-by: {ann}\nReviewed-by: {bob}" in git(net.b.root, "log", "-1", "--format=%B")
    finally:
        net.close()


def test_the_operators_trust_wins_a_merge_when_committed_under_a_persons_name(tmp_path: Path) -> None:
    from curator.engine.corpus import frontmatter
    from curator.engine.write.properties import set_property
    from tests.engine.sync.test_sync_remote import edit, meta
    from tests.sync_helpers import read

    net = make_net(tmp_path)
    try:
        be(net.a.root, ANN)
        assert set_property(net.a, OPERATOR, "wiki/ann-smith.md", "trust", 0.9).ok
        assert last(net.a.root, "%an") == "Ann Operator"
        edit(net.b, Actor("capability", "grader"), "wiki/ann-smith.md",
             lambda t: frontmatter.update(t, {"trust": 0.3}))
        assert sync(net.a).status == "pushed"
        res = sync(net.b)  # b merges: the other side is the operator's, known by its trailer
        assert res.status == "merged", res.message
        assert meta(read(net.b))["trust"] == 0.9
    finally:
        net.close()
