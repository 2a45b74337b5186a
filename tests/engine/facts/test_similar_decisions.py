"""Deciding a group of similar facts: keep one wording (the others leave their pages, one commit)
or keep them all (remembered in the tracked decision file, the group never listed again)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from curator.engine.facts.decisions import DECISIONS_FILE, keep_all, keep_wording
from curator.engine.facts.similar import find_similar
from curator.engine.policy.actor import parse_actor
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki

OPERATOR = parse_actor("operator")
BUILD = ("# Team\n\n- The team lunch is paid for by the company on Fridays.\n"
         "- The build server has sixty-four gigabytes of memory.\n")
OPS = ("# Ops\n\nOn Fridays the company pays for the team's lunch.\n\n"
       "Our main supplier of steel is based in Rotterdam.\n")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def the_group(wiki: Wiki):  # type: ignore[no-untyped-def]
    groups = find_similar(wiki, OPERATOR)
    assert len(groups) == 1, [[f.text for f in g.facts] for g in groups]
    return groups[0]


def test_keep_wording_removes_the_others_in_one_commit(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", {"wiki/build.md": BUILD, "wiki/ops.md": OPS})
    wiki = Wiki(root)
    group = the_group(wiki)
    kept = next(f for f in group.facts if f.path == "wiki/build.md")
    before = git(root, "rev-parse", "HEAD").strip()
    result = keep_wording(wiki, OPERATOR, group, kept.key)
    assert result.status == "resolved", result.message
    assert git(root, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["wiki/ops.md"]
    assert f"Curator-Similar: {group.id}" in git(root, "log", "-1", "--format=%B")
    assert (root / "wiki/ops.md").read_text() == "# Ops\n\nOur main supplier of steel is based in Rotterdam.\n"
    assert (root / "wiki/build.md").read_text() == BUILD
    assert find_similar(Wiki(root), OPERATOR) == []


def test_keep_all_is_remembered_and_the_group_leaves(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", {"wiki/build.md": BUILD, "wiki/ops.md": OPS})
    group = the_group(Wiki(root))
    result = keep_all(Wiki(root), OPERATOR, group)
    assert result.status == "recorded", result.message
    data = json.loads((root / DECISIONS_FILE).read_text())
    assert [e["group"] for e in data["similar_kept"]] == [group.id]
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [DECISIONS_FILE]
    assert find_similar(Wiki(root), OPERATOR) == []  # a new Wiki: read from the tracked file
    assert keep_all(Wiki(root), OPERATOR, group).status == "unchanged"


def test_only_an_operator_decides(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", {"wiki/build.md": BUILD, "wiki/ops.md": OPS})
    wiki = Wiki(root)
    group = the_group(wiki)
    agent = parse_actor("agent:bot")
    assert keep_all(wiki, agent, group).status == "denied"
    assert keep_wording(wiki, agent, group, group.facts[0].key).status == "denied"
    assert keep_wording(wiki, OPERATOR, group, "nope").status == "invalid"
