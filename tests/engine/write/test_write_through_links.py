"""No write follows a symbolic link at any level of its path (issue 45): through
``wiki/pol -> ../policies`` an agent's append wrote the operator-only page, and through
``wiki/hr2 -> ../departments/hr`` any agent appended to, and committed a copy of, the HR page.
Each path is refused with one clear line and nothing is written or committed: through the CLI,
through a real MCP client, and for the operator's own edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import ClientSession

from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from curator.engine.write.edit import save_page
from tests.engine.test_hardening_policy import cli, commit_all, git
from tests.mcp.test_mcp_server import call, run

SCOPE = ('[namespaces.policies]\nmode = "operator_only"\n\n'
         '[namespaces.departments]\nvisible_to_departments = ["hr"]\n')
PAGES = {
    "policies/rules.md": "# Rules\n\n## Updates\n\n- Only the operator writes here\n",
    "departments/hr/salaries.md": "# Salaries\n\n## Updates\n\n- The band table is private\n",
    "wiki/welcome.md": "# Welcome\n\n## Updates\n\n- Start here\n",
}
AGENT = ["--as", "agent:bob", "--department", "engineering"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    from curator.engine.write.bootstrap import init_wiki

    root = tmp_path / "w"
    init_wiki(root)
    (root / ".scope.toml").write_text(SCOPE, encoding="utf-8")
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    os.symlink("../policies", root / "wiki" / "pol")
    os.symlink("../departments/hr", root / "wiki" / "hr2")
    (root / "wiki" / "deep").mkdir()
    os.symlink("../../policies", root / "wiki" / "deep" / "inner")
    commit_all(root, "seed")
    return root


def untouched(root: Path, head: str) -> None:
    assert git(root, "rev-parse", "HEAD") == head
    for rel, text in PAGES.items():
        assert (root / rel).read_text("utf-8") == text, rel
    assert git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("who", [AGENT, ["--as", "agent:kiki", "--department", "hr"], []])
@pytest.mark.parametrize("target", ["wiki/pol/rules", "wiki/hr2/salaries", "wiki/deep/inner/rules"])
def test_the_cli_refuses_every_write_through_a_link(root: Path, who: list[str], target: str) -> None:
    head = git(root, "rev-parse", "HEAD")
    rc, out, err = cli(root, *who, "append", target, "A fact through a link", "--create-new", "--json")
    assert rc == 1 and out["status"] in ("invalid", "denied"), out
    assert "\n" not in out["message"] and "Traceback" not in err
    if out["status"] == "invalid":
        assert "symbolic link" in out["message"], out
    untouched(root, head)


def test_the_refusal_names_the_link(root: Path) -> None:
    rc, out, _ = cli(root, "append", "wiki/pol/rules", "The operator too", "--json")
    assert rc == 1 and out["status"] == "invalid"
    assert "wiki/pol is a symbolic link" in out["message"], out


def test_the_operators_edit_does_not_follow_a_link(root: Path) -> None:
    head = git(root, "rev-parse", "HEAD")
    wiki = Wiki(root)
    try:
        result = save_page(wiki, OPERATOR, "wiki/pol/rules.md", "# Rules\n\nreplaced\n")
    finally:
        wiki.close()
    assert result.status.is_error and "\n" not in result.message, result
    untouched(root, head)


def test_mcp_refuses_a_write_through_a_link(root: Path) -> None:
    head = git(root, "rev-parse", "HEAD")

    async def body(s: ClientSession) -> None:
        for slug in ("wiki/pol/rules", "wiki/hr2/salaries"):
            err, text = await call(s, "wiki_append", slug=slug, content="Leaked through a link",
                                   create_new=True)
            assert err and "\n" not in text and "Leaked" not in text, text

    run(root, body, agent="bob", department="engineering")
    untouched(root, head)


def test_writes_beside_the_links_still_work(root: Path) -> None:
    rc, out, _ = cli(root, *AGENT, "append", "wiki/welcome", "The lift is on the left", "--json")
    assert rc == 0 and out["status"] == "appended" and out["page"] == "wiki/welcome.md", out
