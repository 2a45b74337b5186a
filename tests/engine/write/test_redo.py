"""Redo (issue 22): the revert of the last undo, an action checked against the scope policy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki
from curator.engine.write.actions import history, last_redoable, redo, revert, run_action, undo
from curator.engine.write.bootstrap import init_wiki
from tests.engine.write.test_actions_core import edit, git

AGENT = Actor("agent", "dudu")
POLICY = '[namespaces.secret]\nmode = "operator_only"\n'


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    root = tmp_path / "w"
    init_wiki(root)
    (root / ".scope.toml").write_text(POLICY, encoding="utf-8")
    (root / "wiki").mkdir()
    (root / "wiki" / "ann.md").write_text("# Ann\n\nAnn likes tea.\n", encoding="utf-8")
    git(root, "add", ".scope.toml", "wiki/ann.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    w = Wiki(root)
    yield w
    w.close()


def test_redo_reapplies_what_undo_took_back_in_order(wiki: Wiki) -> None:
    root = wiki.root
    a = run_action(wiki, OPERATOR, "edit", "one", edit("wiki/one.md", "one\n"))
    run_action(wiki, OPERATOR, "edit", "ann", edit("wiki/ann.md", "# Ann\n\nAnn likes coffee.\n"))
    assert redo(wiki, OPERATOR).status == "invalid"  # nothing undone yet
    undo(wiki, OPERATOR)
    undo(wiki, OPERATOR)
    assert not (root / "wiki" / "one.md").exists()
    first = redo(wiki, OPERATOR)  # the newest undo first: "one" comes back
    assert first.status == "redone" and first.ok and first.commit
    assert first.data["redone"] == a.commit and "edit: one" in first.message
    assert (root / "wiki" / "one.md").read_text() == "one\n"
    assert "tea" in (root / "wiki" / "ann.md").read_text()
    second = redo(wiki, OPERATOR)
    assert second.status == "redone" and "coffee" in (root / "wiki" / "ann.md").read_text()
    assert redo(wiki, OPERATOR).status == "invalid"  # the stack is empty again
    # each redo is one commit of exactly the touched path, and undo after redo takes it back again
    assert git(root, "show", "--name-only", "--format=", second.commit or "").split() == ["wiki/ann.md"]
    assert undo(wiki, OPERATOR).status == "reverted"
    assert "tea" in (root / "wiki" / "ann.md").read_text()
    assert git(root, "status", "--porcelain") == ""


def test_a_new_action_empties_the_redo_stack(wiki: Wiki) -> None:
    run_action(wiki, OPERATOR, "edit", "one", edit("wiki/one.md", "one\n"))
    undo(wiki, OPERATOR)
    assert last_redoable(wiki) is not None
    run_action(wiki, AGENT, "edit", "two", edit("wiki/two.md", "two\n"))
    assert last_redoable(wiki) is None
    res = redo(wiki, OPERATOR)
    assert res.status == "invalid" and "nothing to redo" in res.message
    assert not (wiki.root / "wiki" / "one.md").exists()


def test_an_agent_cannot_redo_around_the_policy(wiki: Wiki) -> None:
    root = wiki.root
    run_action(wiki, OPERATOR, "edit", "plan", edit("secret/plan.md", "# Plan\n\nThe plan.\n"))
    undo(wiki, OPERATOR)
    assert not (root / "secret" / "plan.md").exists()
    head = git(root, "rev-parse", "HEAD")
    res = redo(wiki, AGENT)
    assert res.status == "denied" and res.is_error, res
    assert not (root / "secret" / "plan.md").exists()
    assert git(root, "rev-parse", "HEAD") == head  # nothing committed
    # the policy file itself: an operator's policy change, undone, is not the agent's to redo
    tighter = POLICY + '[namespaces.wiki]\nmode = "operator_only"\n'
    run_action(wiki, OPERATOR, "edit", "policy", edit(".scope.toml", tighter))
    undo(wiki, OPERATOR)
    res = redo(wiki, AGENT)
    assert res.status == "denied" and "only the operator" in res.message, res
    assert '[namespaces.wiki]' not in (root / ".scope.toml").read_text()
    # the operator may
    assert redo(wiki, OPERATOR).status == "redone"
    assert '[namespaces.wiki]' in (root / ".scope.toml").read_text()
    assert history(wiki, 1)[0].subject.startswith("redo: edit: policy")


def test_curator_redo_on_the_command_line(wiki: Wiki) -> None:
    import json
    import sys

    root = wiki.root
    run_action(wiki, OPERATOR, "edit", "one", edit("wiki/one.md", "one\n"))
    undo(wiki, OPERATOR)

    def cli(*args: str) -> tuple[int, dict[str, object]]:
        proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args, "--json"],
                              capture_output=True, text=True, timeout=120)
        return proc.returncode, json.loads(proc.stdout)

    rc, out = cli("--as", "agent:dudu", "redo")
    assert rc == 0 and out["status"] == "redone" and (root / "wiki" / "one.md").exists()
    rc, out = cli("redo")
    assert rc == 1 and out["status"] == "invalid" and "nothing to redo" in str(out["message"])


def test_a_redo_is_named_redo_of_what_the_undo_took_back(wiki: Wiki) -> None:
    run_action(wiki, OPERATOR, "edit", "one", edit("wiki/one.md", "one\n"))
    undo(wiki, OPERATOR)
    assert history(wiki, 1)[0].subject == "revert: edit: one"
    first = redo(wiki, OPERATOR)
    entry = history(wiki, 1)[0]
    assert entry.subject == "redo: edit: one" and entry.action == "redo" and entry.target == "edit: one"
    assert first.action == "redo" and first.message.startswith("redid edit: one")
    # undone and redone again: still named after the action, never "revert: revert: ..."
    assert undo(wiki, OPERATOR).status == "reverted"
    assert history(wiki, 1)[0].subject == "revert: edit: one"
    assert redo(wiki, OPERATOR).status == "redone"
    assert history(wiki, 1)[0].subject == "redo: edit: one"
    assert (wiki.root / "wiki" / "one.md").read_text() == "one\n"
    assert redo(wiki, OPERATOR).status == "invalid"
    # an undo reverted by hand (History's "Revert selected") is a redo too
    undo(wiki, OPERATOR)
    assert revert(wiki, OPERATOR, history(wiki, 1)[0].commit).ok
    assert history(wiki, 1)[0].subject == "redo: edit: one"
