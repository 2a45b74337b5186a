"""``curator search`` and ``curator context`` (docs/design.md §7, §11): JSON shapes, options, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.policy.actor import Actor
from curator.engine.read.agent_context import build_context
from curator.engine.wiki import Wiki
from tests.corpus import CJK_PATH, CorpusInfo, generate

CURATOR = str(Path(sys.executable).with_name("curator"))
KEYS = ["path", "title", "score", "layer", "trust", "snippet", "expanded"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    return generate(tmp_path_factory.mktemp("search-cli") / "wiki", 80, seed=3)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def search_json(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, "--wiki", str(root), "search", *argv, "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert isinstance(data, list)
    return data


def test_search_json_shape_and_cjk(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    rows = search_json(capsys, corpus.root, "付款")
    assert rows and rows[0]["path"] == CJK_PATH
    for row in rows:
        assert list(row) == KEYS
        assert row["expanded"] is False
    assert "«付款»" in str(rows[0]["snippet"])
    scores = [float(r["score"]) for r in rows]  # type: ignore[arg-type]
    assert scores == sorted(scores, reverse=True)


def test_search_options(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    root = corpus.root
    assert len(search_json(capsys, root, "payment")) == 10
    assert len(search_json(capsys, root, "payment", "--limit", "3")) == 3
    core = search_json(capsys, root, "payment", "--layer", "core", "--limit", "100")
    assert core and all(r["layer"] == "core" for r in core)
    trusted = search_json(capsys, root, "payment", "--min-trust", "0.75", "--limit", "100")
    assert trusted and all(float(r["trust"]) >= 0.75 for r in trusted)  # type: ignore[arg-type]
    expanded = search_json(capsys, root, "payment", "--limit", "3", "--expand")
    flags = [r["expanded"] for r in expanded]
    assert True in flags and flags == sorted(flags)  # expanded pages come last
    several_words = search_json(capsys, root, "ledger", "invoice", "--limit", "100")
    assert several_words == search_json(capsys, root, "ledger invoice", "--limit", "100")


def test_search_as_an_agent_respects_department_visibility(corpus: CorpusInfo,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    def run_as(department: str) -> list[dict[str, object]]:
        return search_json(capsys, corpus.root, "--as", "agent:bot", "--department", department,
                           "payment OR ledger OR invoice", "--limit", "100", "--expand")

    sales = run_as("sales")
    assert not any(str(r["path"]).startswith("departments/finance/") for r in sales)
    finance = run_as("finance")
    assert any(str(r["path"]).startswith("departments/finance/") for r in finance)
    assert not any(str(r["path"]).startswith("departments/sales/") for r in finance)


@pytest.mark.parametrize("query", ['"', "AND(", "NEAR(", "*", "-", "^", "'; DROP TABLE pages; --", "OR"])
def test_hostile_queries_exit_zero(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str], query: str) -> None:
    code, out, err = run(capsys, "--wiki", str(corpus.root), "search", "--json", "--", query)
    assert (code, err) == (0, "")
    assert isinstance(json.loads(out), list)


@pytest.mark.parametrize("argv", [
    ["search", "x", "--limit", "0"], ["search", "x", "--limit", "101"], ["search", "x", "--layer", "bogus"],
    ["search", "x", "--min-trust", "2"], ["search"], ["search", "  "], ["context", "--budget", "-1"],
    ["context", "--agent", "bad id!"], ["search", "x layer:bogus"], ["search", "trust:>=abc"],
    ["search", "x trust:>=7"], ["search", "x -trust:0.5"], ["context", "--query", "x layer:bogus"],
])
def test_usage_errors_are_one_line_exit_2(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str],
                                         argv: list[str]) -> None:
    code, out, err = run(capsys, "--wiki", str(corpus.root), *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_query_filter_that_cannot_match_is_said_as_the_option_is(corpus: CorpusInfo,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--wiki", str(corpus.root), "search", "--layer", "bogus", "x")
    assert code == 2 and "unknown layer 'bogus'" in err
    code, out, err = run(capsys, "--wiki", str(corpus.root), "search", "x layer:bogus")
    assert (code, out) == (2, "") and "unknown layer 'bogus' in layer:bogus" in err and err.count("\n") == 1
    code, out, err = run(capsys, "--wiki", str(corpus.root), "search", "payment trust:>=7", "--json")
    assert (code, out) == (2, "") and "trust:>=7: trust is a number from 0 to 1" in err


def test_search_text_output_and_rebuild(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "search", "付款")
    assert code == 0 and CJK_PATH in out and "«付款»" in out and out.rstrip().endswith("hits")
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "search", "--rebuild", "--json")
    assert code == 0 and json.loads(out) == {"status": "ok", "indexed": len(corpus.pages)}
    assert search_json(capsys, corpus.root, "付款", "--rebuild")[0]["path"] == CJK_PATH


def test_context_prints_exactly_the_injected_text(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--wiki", str(corpus.root), "--department", "sales", "context", "--agent", "bot", "--budget", "3000"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    wiki = Wiki(corpus.root)
    expected = build_context(wiki, Actor("agent", "bot", "sales"), budget=3000)
    wiki.close()
    assert out == expected.text
    assert 0 < len(out.encode()) <= 3000
    assert "departments/finance" not in out
    code, out, err = run(capsys, *argv, "--json", "--query", "refund")
    data = json.loads(out)
    assert data["bytes"] == len(data["text"].encode()) <= data["budget"] == 3000
    assert data["included"] and {"path", "title", "layer", "bytes"} <= set(data["included"][0])
    assert all(not p["path"].startswith("departments/finance/") for p in data["included"] + data["skipped"])


def test_console_script_search(corpus: CorpusInfo) -> None:
    proc = subprocess.run([CURATOR, "--wiki", str(corpus.root), "search", "付款流程", "--json"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["path"] == CJK_PATH


def test_console_script_search_finds_an_edit_in_place(tmp_path: Path) -> None:
    # the console script sweeps every page in a child process while it imports (walker.sweep_ahead)
    info = generate(tmp_path / "wiki", 30, seed=5)
    argv = [CURATOR, "--wiki", str(info.root), "search"]
    for _ in range(2):  # built, then answered with the sweep ahead
        proc = subprocess.run([*argv, "zanzibarite", "--json"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and json.loads(proc.stdout) == [], proc.stderr
    page = info.root / info.pages[3]
    with page.open("a", encoding="utf-8") as f:
        f.write("\nThe zanzibarite ledger.\n")  # in place: no folder changes
    os.utime(page, ns=(10**18, 10**18))
    proc = subprocess.run([*argv, "zanzibarite", "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [h["path"] for h in json.loads(proc.stdout)] == [info.pages[3]]
    page.write_text(page.read_text(encoding="utf-8").replace("zanzibarite", "basalt"), encoding="utf-8")
    os.utime(page, ns=(10**18 + 7, 10**18 + 7))
    proc = subprocess.run([*argv, "zanzibarite"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "0 hits", proc.stdout


def test_search_text_output_shows_snippets_as_plain_text(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "wiki"
    root.mkdir()
    (root / "fees.md").write_text(
        "# Fees\n\nThe **refund** fee is waived, see [[refund-policy|the policy]] and [[Ledger]].\n\n"
        "| Item | Refund fee |\n|---|---|\n| card | none |\n", encoding="utf-8")
    code, out, _ = run(capsys, "--wiki", str(root), "search", "refund")
    assert code == 0
    snippet = next(line.strip() for line in out.splitlines() if "waived" in line)
    assert snippet == ("Fees The «refund» fee is waived, see the policy and Ledger. "
                       "Item · «Refund» fee · card · none")
    score = out.splitlines()[0].split()[0]
    assert "e" not in score and float(score) > 0
    code, out, _ = run(capsys, "--wiki", str(root), "search", "refund", "--json")
    assert "|the policy]]" in json.loads(out)[0]["snippet"]  # JSON: the page's text
