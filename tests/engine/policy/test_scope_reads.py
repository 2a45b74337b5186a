"""No leak through any read path: index, read, neighbors, read-all, lint, find (docs/design.md §6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.errors import PageNotFound
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.read.reading import neighbors, read, read_all
from curator.engine.review.lint import lint
from curator.engine.wiki import Wiki

SECRET = "salary-band-table"
PAGES = {
    "wiki/welcome.md": "# Welcome\n\nStart here. See [[payroll]] and [[pipeline]] and [[open-notes]].\n",
    "wiki/open-notes.md": "# Open notes\n\nLinks back to [[welcome]].\n",
    "hr/payroll.md": f"# Payroll\n\nThe {SECRET} lives here. Back to [[welcome]].\n",
    "departments/sales/pipeline.md": "# Pipeline\n\nSales pipeline, see [[welcome]] and [[payroll]].\n",
    "vault/keys.md": "# Keys\n\nNobody but the operator. [[welcome]]\n",
}
SCOPE = """
[namespaces.hr]
visible_to_departments = ["hr"]
[namespaces.vault]
visible_to_departments = []
"""
SALES = Actor("agent", "dudu", "sales")
HR = Actor("agent", "kiki", "hr")
NODEPT = Actor("agent", "momo")


def make_wiki(root: Path, pages: dict[str, str], scope: str) -> Wiki:
    """A wiki (no git needed for reads) with ``pages`` and a ``.scope.toml``."""
    for rel, text in pages.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (root / ".scope.toml").write_text(scope, encoding="utf-8")
    return Wiki(root)


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    w = make_wiki(tmp_path, PAGES, SCOPE)
    yield w
    w.close()


def visible_set(wiki: Wiki, actor: Actor) -> set[str]:
    return {p.path for p in wiki.visible_pages(actor)}


def test_index_per_actor(wiki: Wiki) -> None:
    everyone = {"wiki/welcome.md", "wiki/open-notes.md"}
    assert visible_set(wiki, OPERATOR) == set(PAGES)
    assert visible_set(wiki, SALES) == everyone | {"departments/sales/pipeline.md"}
    assert visible_set(wiki, HR) == everyone | {"hr/payroll.md"}
    assert visible_set(wiki, NODEPT) == everyone


def test_read_and_find_hide_invisible_pages_like_missing_ones(wiki: Wiki) -> None:
    with pytest.raises(PageNotFound) as err:
        read(wiki, "hr/payroll.md", SALES)
    assert "hr/payroll.md" not in str(err.value).partition("did you mean")[2]
    with pytest.raises(PageNotFound) as near:
        read(wiki, "payrol", SALES)  # suggestions never name invisible pages
    assert "hr/payroll.md" not in str(near.value)
    with pytest.raises(PageNotFound):
        wiki.find("payroll", SALES)
    assert SECRET in read(wiki, "payroll", HR).text
    with pytest.raises(PageNotFound):
        read(wiki, "pipeline", HR)


def test_neighbors_do_not_leak(wiki: Wiki) -> None:
    result = neighbors(wiki, "welcome", SALES)
    shown = {n.path for n in result.outgoing + result.inbound}
    assert "hr/payroll.md" not in shown and "vault/keys.md" not in shown
    assert "departments/sales/pipeline.md" in shown
    assert SECRET not in result.text and "Payroll" not in result.text.split("## Links")[1]
    hr_view = neighbors(wiki, "welcome", HR)
    assert "hr/payroll.md" in {n.path for n in hr_view.outgoing}
    assert "departments/sales/pipeline.md" not in {n.path for n in hr_view.outgoing + hr_view.inbound}


def test_read_all_does_not_leak(wiki: Wiki) -> None:
    text = read_all(wiki, SALES).text
    assert SECRET not in text and "Nobody but the operator" not in text
    assert "Sales pipeline" in text
    assert SECRET in read_all(wiki, OPERATOR).text


def test_lint_does_not_leak(wiki: Wiki) -> None:
    issues = lint(wiki, NODEPT)
    paths = {i.path for i in issues}
    assert paths <= {"wiki/welcome.md", "wiki/open-notes.md"}
    text = "\n".join(i.render() for i in issues)
    assert "hr/" not in text and "vault/" not in text and "departments/" not in text
    # the operator sees every page's issues
    assert {i.path for i in lint(wiki, OPERATOR)} >= {"vault/keys.md"}


def test_hot_reload_through_the_wiki(wiki: Wiki) -> None:
    assert "hr/payroll.md" not in visible_set(wiki, NODEPT)
    links_before = wiki.links
    scope = wiki.root / ".scope.toml"
    scope.write_text("", encoding="utf-8")
    st = scope.stat()
    os.utime(scope, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    # caches keyed by the link index (per-actor graphs) are dropped when the policy changes
    assert wiki.links is not links_before
    assert "hr/payroll.md" in visible_set(wiki, NODEPT)
    assert "departments/sales/pipeline.md" not in visible_set(wiki, NODEPT)


def test_write_check_on_the_wiki(wiki: Wiki) -> None:
    (wiki.root / ".scope.toml").write_text('[namespaces.wiki]\nmode = "operator_only"\n', encoding="utf-8")
    assert wiki.can_write(OPERATOR, "wiki/x.md")
    decision = wiki.check_write(SALES, "wiki/x.md")
    assert not decision and "operator_only" in decision.reason


def test_cli_index_as_agent(wiki: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["--wiki", str(wiki.root), "--as", "agent:dudu", "--department", "sales", "index", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["path"] for r in rows} == visible_set(wiki, SALES)
    assert main(["--wiki", str(wiki.root), "--as", "agent:dudu", "read", "hr/payroll.md"]) == 1
    assert SECRET not in capsys.readouterr().out
