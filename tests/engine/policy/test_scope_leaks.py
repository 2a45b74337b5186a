"""No leak through search (and its expansion), context injection or the graph (docs/design.md §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curator.engine.errors import CuratorError
from curator.engine.graph.link_graph import explain, export, find_path, graph_for
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.read.agent_context import build_context
from curator.engine.wiki import Wiki
from tests.engine.policy.test_scope_reads import make_wiki

HIDDEN = ("hr/payroll.md", "departments/sales/pipeline.md")
PAGES = {
    "wiki/welcome.md": "---\nlayer: core\n---\n# Welcome\n\nZebra handbook. See [[payroll]] and [[pipeline]].\n",
    "wiki/open.md": "---\nlayer: core\n---\n# Open\n\nLinks to [[welcome]].\n",
    "hr/payroll.md": "---\nlayer: core\n---\n# Payroll\n\nZebra salaries, quokka bands. [[welcome]]\n",
    "departments/sales/pipeline.md": "---\nlayer: identity\n---\n# Pipeline\n\nZebra deals, quokka leads. [[welcome]]\n",
}
SCOPE = '[namespaces.hr]\nvisible_to_departments = ["hr"]\n'
AGENT = Actor("agent", "momo", "support")


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    w = make_wiki(tmp_path, PAGES, SCOPE)
    yield w
    w.close()


def test_search_and_its_expansion(wiki: Wiki) -> None:
    assert {h.path for h in wiki.search.search("quokka", OPERATOR)} == set(HIDDEN)
    assert wiki.search.search("quokka", AGENT) == []
    hits = wiki.search.search("handbook", AGENT, expand=True)
    assert [h.path for h in hits if not h.expanded] == ["wiki/welcome.md"]
    expanded = {h.path for h in hits if h.expanded}
    assert expanded == {"wiki/open.md"} and not expanded & set(HIDDEN)
    op = {h.path for h in wiki.search.search("handbook", OPERATOR, expand=True)}
    assert set(HIDDEN) <= op  # the operator's expansion does reach them
    sales = {h.path for h in wiki.search.search("zebra", Actor("agent", "dudu", "sales"), expand=True)}
    assert "departments/sales/pipeline.md" in sales and "hr/payroll.md" not in sales


def test_context_injection(wiki: Wiki) -> None:
    result = build_context(wiki, AGENT, query="zebra")
    assert "salaries" not in result.text and "deals" not in result.text
    assert "Zebra handbook" in result.text
    assert "salaries" in build_context(wiki, OPERATOR).text


def test_graph(wiki: Wiki) -> None:
    graph = graph_for(wiki, AGENT)
    assert not set(HIDDEN) & set(graph.pages)
    mermaid = export(wiki, "mermaid", actor=AGENT)
    data = export(wiki, "json", actor=AGENT)
    text = mermaid + json.dumps(data)
    for path in HIDDEN:
        assert path not in text
    assert "Pipeline" not in text and "Payroll" not in text  # titles of hidden pages
    assert "hr/payroll.md" in json.dumps(export(wiki, "json", actor=OPERATOR))
    with pytest.raises(CuratorError):
        find_path(wiki, "open", "hr/payroll.md", AGENT)
    with pytest.raises(CuratorError):
        explain(wiki, "hr/payroll.md", AGENT)
    welcome = explain(wiki, "welcome", AGENT).to_json()
    assert "hr/payroll.md" not in json.dumps(welcome)


def test_graph_follows_a_policy_edit(wiki: Wiki) -> None:
    assert "hr/payroll.md" not in graph_for(wiki, AGENT).pages
    scope = wiki.root / ".scope.toml"
    scope.write_text("# open to all now\n", encoding="utf-8")
    assert "hr/payroll.md" in graph_for(wiki, AGENT).pages
    scope.write_text(SCOPE + "# and closed again\n", encoding="utf-8")
    assert "hr/payroll.md" not in graph_for(wiki, AGENT).pages


def test_lint_text_counts_only_the_pages_an_agent_is_shown(wiki: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    from curator.cli import main

    def summary(*who: str) -> str:
        assert main(["--wiki", str(wiki.root), *who, "lint"]) == 0
        return capsys.readouterr().out.strip().splitlines()[-1]

    assert summary().endswith(" in 4 pages")
    agent = summary("--as", "agent:momo", "--department", "support")
    assert agent.endswith(" in 2 pages"), agent  # payroll and the sales pipeline are not counted
    assert "payroll" not in agent and "pipeline" not in agent
