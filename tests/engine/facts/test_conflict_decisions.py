"""Resolving a conflict: keep 1 or 2 removes the other fact from its page, keep both is
remembered in a tracked decision file; one commit each with the ``Curator-Conflict`` trailer;
only an operator decides."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from curator.engine.corpus.facts import page_facts
from curator.engine.facts.conflicts import Conflict, find_conflicts
from curator.engine.facts.decisions import DECISIONS_FILE, decided_pairs, remove_fact, resolve
from curator.engine.policy.actor import parse_actor
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from tests.gui_helpers import make_wiki

OPERATOR = parse_actor("operator")
REFUNDS = ("---\ntitle: Refunds\n---\n# Refunds\n\n## Updates\n\n"
           "- Refunds are accepted within 30 days of purchase. (added 2024-01-02)\n"
           "- Refunds go back to the original card.\n\n"
           "Store credit is offered\nwhen the card has expired.\n")
POLICY = ("# Policy\n\nThe team reviews refunds weekly.\n\n"
          "Refunds are accepted within 14 days of purchase.\n\nEscalations go to finance.\n")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", {"wiki/refunds.md": REFUNDS, "wiki/policy.md": POLICY})


def the_conflict(root: Path) -> Conflict:
    """The one conflict between the two pages, built from their facts as the index would pair them."""
    facts = [f for rel in ("wiki/refunds.md", "wiki/policy.md")
             for f in page_facts(rel, (root / rel).read_text(encoding="utf-8"))]
    pairs = [(a, b, 0.9) for i, a in enumerate(facts) for b in facts[i + 1:]]
    found = find_conflicts(pairs)
    assert len(found) == 1, [c.reason for c in found]
    return found[0]


def commit_message(root: Path) -> str:
    return git(root, "log", "-1", "--format=%B")


@pytest.mark.parametrize(("keep", "gone_page", "gone_text"), [
    ("1", "wiki/policy.md", "Refunds are accepted within 14 days of purchase."),
    ("2", "wiki/refunds.md", "Refunds are accepted within 30 days of purchase. (added 2024-01-02)"),
])
def test_keep_one_removes_the_other_in_one_commit(root: Path, keep: str, gone_page: str, gone_text: str) -> None:
    wiki = Wiki(root)
    conflict = the_conflict(root)
    assert conflict.reason == "30 days vs 14 days"
    before = git(root, "rev-parse", "HEAD").strip()
    kept_page = "wiki/refunds.md" if gone_page == "wiki/policy.md" else "wiki/policy.md"
    kept_before = (root / kept_page).read_text(encoding="utf-8")
    result = resolve(wiki, OPERATOR, conflict, keep)
    assert result.status == "resolved", result.message
    assert git(root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [gone_page]
    message = commit_message(root)
    assert message.startswith(f"fact_resolve: {conflict.id} keep {keep}\n")
    assert f"Curator-Conflict: {conflict.id}" in message.splitlines()
    text = (root / gone_page).read_text(encoding="utf-8")
    assert gone_text not in text
    assert (root / kept_page).read_text(encoding="utf-8") == kept_before
    # the rest of the page is as it was: neighbours kept, no double blank line left behind
    assert "\n\n\n" not in text
    if gone_page == "wiki/policy.md":
        assert text == "# Policy\n\nThe team reviews refunds weekly.\n\nEscalations go to finance.\n"
    else:
        assert "- Refunds go back to the original card.\n" in text and "Store credit is offered\n" in text
    assert "updated:" in text or gone_page == "wiki/policy.md"  # a page with frontmatter is stamped
    assert the_conflict_gone(root)
    assert undo(wiki, OPERATOR).status == "reverted"  # an ordinary action: undo brings the fact back
    assert (root / gone_page).read_text(encoding="utf-8") == (REFUNDS if gone_page == "wiki/refunds.md" else POLICY)


def the_conflict_gone(root: Path) -> bool:
    facts = [f for rel in ("wiki/refunds.md", "wiki/policy.md")
             for f in page_facts(rel, (root / rel).read_text(encoding="utf-8"))]
    return not find_conflicts([(a, b, 0.9) for i, a in enumerate(facts) for b in facts[i + 1:]])


def test_keep_both_is_remembered_after_reopening(root: Path) -> None:
    wiki = Wiki(root)
    conflict = the_conflict(root)
    pages_before = {p: (root / p).read_text(encoding="utf-8") for p in ("wiki/refunds.md", "wiki/policy.md")}
    result = resolve(wiki, OPERATOR, conflict, "both")
    assert result.status == "recorded", result.message
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [DECISIONS_FILE]
    assert f"Curator-Conflict: {conflict.id}" in commit_message(root).splitlines()
    assert {p: (root / p).read_text(encoding="utf-8") for p in pages_before} == pages_before
    pairs = [(conflict.a, conflict.b, conflict.score)]
    assert find_conflicts(pairs, decided_pairs(wiki)) == []
    again = resolve(wiki, OPERATOR, conflict, "both")
    assert again.status == "unchanged" and again.commit is None
    wiki.close()
    fresh = Wiki(root)  # read back from the tracked file, in either order and wherever the facts are now
    assert git(root, "ls-files", DECISIONS_FILE).strip() == DECISIONS_FILE
    moved = [(conflict.b, conflict.a, 0.99)]
    assert find_conflicts(moved, decided_pairs(fresh)) == []
    data = json.loads((root / DECISIONS_FILE).read_text(encoding="utf-8"))
    assert data["both_true"][0]["conflict"] == conflict.id
    assert git(root, "status", "--porcelain").strip() == ""


def test_an_agent_may_not_resolve(root: Path) -> None:
    wiki = Wiki(root)
    conflict = the_conflict(root)
    head = git(root, "rev-parse", "HEAD")
    for keep in ("1", "2", "both"):
        result = resolve(wiki, parse_actor("agent:bot"), conflict, keep)
        assert result.status == "denied", (keep, result.message)
        assert "only an operator" in result.message
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain").strip() == ""


def test_bad_choice_and_a_fact_already_gone(root: Path) -> None:
    wiki = Wiki(root)
    conflict = the_conflict(root)
    bad = resolve(wiki, OPERATOR, conflict, "3")
    assert bad.status == "invalid" and "keep 1, 2 or both" in bad.message
    (root / "wiki/policy.md").write_text("# Policy\n\nNothing about refunds here at all.\n", encoding="utf-8")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "edit")
    gone = resolve(wiki, OPERATOR, conflict, "1")
    assert gone.status == "invalid" and "no longer says" in gone.message


def test_remove_fact_takes_continuation_lines_only() -> None:
    text = "# T\n\n- one fact that spans\n  two lines here\n- a neighbour item stays\n\nA paragraph stays here.\n"
    fact = page_facts("t.md", text)[0]
    assert fact.text == "one fact that spans two lines here"
    assert remove_fact(text, fact) == "# T\n\n- a neighbour item stays\n\nA paragraph stays here.\n"
    crlf = text.replace("\n", "\r\n")
    assert remove_fact(crlf, page_facts("t.md", crlf)[0]) == (
        "# T\n\n- a neighbour item stays\n\nA paragraph stays here.\n".replace("\n", "\r\n"))
