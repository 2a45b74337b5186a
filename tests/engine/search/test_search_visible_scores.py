"""Search scores as an agent come from the pages it may see only (issue 14): FTS5's bm25 takes its
statistics (row count, average length, rows holding each term) from the whole index, so hidden
pages would shift an agent's scores and order, a faint sign that they exist. An agent's answer on
the full wiki must be byte-identical, scores included, to its answer on a copy without the pages
it cannot see, through the CLI and a real MCP stdio client."""

from __future__ import annotations

import random
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from mcp import ClientSession

from curator.engine.policy.actor import OPERATOR, parse_actor
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki
from tests.mcp.test_mcp_server import call, run

SCOPE = '[namespaces.hr]\nvisible_to_departments = ["hr"]\n'
ENG = ["--as", "agent:eng", "--department", "engineering"]
WORDS = ["payroll", "budget", "crane", "harbour", "ledger", "invoice", "salary", "review", "audit",
         "schedule", "vendor", "contract", "policy", "travel", "expense"]
QUERIES = ["payroll", "budget ledger", "salary OR crane", '"annual review"', "inv*", "audit -travel",
           "harbour schedule", "expense layer:deep", "policy contract vendor"]


def page(rng: random.Random, title: str, bias: list[str], n: int) -> str:
    words = [rng.choice(bias if rng.random() < 0.6 else WORDS) for _ in range(n)]
    return f"---\ntitle: {title}\ntrust: {rng.choice([0.3, 0.5, 0.8])}\n---\n# {title}\n\n" + \
        " ".join(words) + ". The annual review is due.\n"


def make(root: Path, hidden: bool) -> Path:
    rng = random.Random(7)
    files: dict[str, str] = {}
    for i in range(60):
        files[f"wiki/public-{i:02d}.md"] = page(rng, f"Public {i}", ["crane", "harbour", "budget"], 30 + i % 17)
    # hidden pages full of the words the queries use, and long: they move every statistic
    for i in range(40):
        text = page(rng, f"Secret {i}", ["payroll", "salary", "ledger", "invoice"], 120 + i)
        if hidden:
            files[f"hr/secret-{i:02d}.md" if i % 2 else f"departments/hr/secret-{i:02d}.md"] = text
    return make_wiki(root, {**files, ".scope.toml": SCOPE})


@pytest.fixture
def wikis(tmp_path: Path) -> tuple[Path, Path]:
    return make(tmp_path / "full", True), make(tmp_path / "copy", False)


def search_json(root: Path, query: str, *extra: str) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *ENG, "search", query,
                           "--json", "--limit", "50", *extra], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_agent_search_json_is_byte_identical_to_a_copy_without_the_hidden_pages(wikis: tuple[Path, Path]) -> None:
    full, copy = wikis
    for query in QUERIES:
        ours, theirs = search_json(full, query), search_json(copy, query)
        assert ours == theirs, query
        assert b'"score"' in ours or ours.strip() == b"[]", query
    assert search_json(full, "payroll", "--expand") == search_json(copy, "payroll", "--expand")


def test_the_hidden_pages_do_move_the_raw_bm25_statistics(wikis: tuple[Path, Path]) -> None:
    """The case above is not vacuous: FTS5's own scores over the whole index differ."""
    full, copy = wikis
    agent = parse_actor("agent:eng", "engineering")
    with closing(Wiki(full)) as a, closing(Wiki(copy)) as b:
        differ = 0
        for query in QUERIES:
            for w in (a, b):
                w.search.ensure_built()
            q_a, q_b = a.search._prepare(query, None), b.search._prepare(query, None)
            if not q_a.positive_match():
                continue
            raw = {r.path: r.score for r in a.search._rows(q_a) if a.visible(agent, r.path)}
            clean = {r.path: r.score for r in b.search._rows(q_b)}
            assert set(raw) == set(clean)
            differ += raw != clean
        assert differ >= len(QUERIES) - 2


def test_rescoring_reproduces_fts5_bm25_exactly_when_nothing_is_hidden(wikis: tuple[Path, Path]) -> None:
    _full, copy = wikis
    with closing(Wiki(copy)) as w:
        w.search.ensure_built()
        for query in QUERIES:
            q = w.search._prepare(query, None)
            if not q.positive_match():
                continue
            sql = [(r.path, r.score) for r in w.search._rows(q)]
            ours = [(r.path, r.score) for r in w.search._visible_rows(q, {})]
            assert ours == sql, query  # the same doubles, the same order


def test_the_operator_still_gets_fts5_scores_over_everything(wikis: tuple[Path, Path]) -> None:
    full, _copy = wikis
    with closing(Wiki(full)) as w:
        hits = w.search.search("payroll", OPERATOR, limit=100)
        assert any(h.path.startswith(("hr/", "departments/hr/")) for h in hits)
        q = w.search._prepare("payroll", None)
        assert [(h.path, h.score) for h in hits] == [(r.path, r.score) for r in w.search._rows(q)][:len(hits)]


def test_agent_search_through_mcp_is_identical_to_the_copy(wikis: tuple[Path, Path]) -> None:
    full, copy = wikis
    answers: dict[Path, list[str]] = {full: [], copy: []}

    for root in (full, copy):
        async def body(s: ClientSession, root: Path = root) -> None:
            for query in QUERIES:
                err, text = await call(s, "wiki_search", query=query, limit=50)
                assert not err, text
                answers[root].append(text)

        run(root, body, "eng", "engineering")
    assert answers[full] == answers[copy]
    assert any("public-" in t for t in answers[full])


def test_after_the_same_edit_on_both_the_answers_stay_identical(wikis: tuple[Path, Path]) -> None:
    """An index with a replaced row (a tombstone) still scores as its copy with the same edit."""
    full, copy = wikis
    assert search_json(full, "payroll") == search_json(copy, "payroll")
    for root in (full, copy):
        with open(root / "wiki" / "public-03.md", "a", encoding="utf-8") as f:
            f.write("\nA payroll ledger note, payroll again.\n")
    for query in ("payroll", "budget ledger", "inv*"):
        assert search_json(full, query) == search_json(copy, query), query


def test_agent_context_ranked_by_a_query_is_identical_to_the_copy(wikis: tuple[Path, Path]) -> None:
    """Context injection ranks pages by relevance to the query: over the visible pages too."""
    full, copy = wikis
    for root in (full, copy):
        for i in range(0, 60, 3):  # core pages, so that they are injected and ranked
            page = root / "wiki" / f"public-{i:02d}.md"
            page.write_text(page.read_text("utf-8").replace("---\ntitle:", "---\nlayer: core\ntitle:", 1), "utf-8")

    def context(root: Path, query: str) -> bytes:
        proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *ENG, "context",
                               "--query", query, "--budget", "3000", "--no-record"], capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    for query in ("payroll", "budget ledger", "inv*"):
        assert context(full, query) == context(copy, query), query


def test_a_page_hidden_by_a_rule_naming_it_is_left_out_too(wikis: tuple[Path, Path]) -> None:
    """Visibility is decided per folder, except for a page a rule names by its path."""
    full, copy = wikis
    rule = '\n[namespaces."wiki/public-05.md"]\nvisible_to_departments = ["hr"]\n'
    (full / ".scope.toml").write_text(SCOPE + rule, encoding="utf-8")
    (copy / "wiki" / "public-05.md").unlink()
    for query in ("budget ledger", "crane", "inv*"):
        ours = search_json(full, query)
        assert ours == search_json(copy, query), query
        assert b"public-05" not in ours
