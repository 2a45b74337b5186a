"""The hostile corpus: every hostile page is listed by ``index`` and reported by ``lint``; nothing
crashes, hangs or explodes in memory; excluded and escaping files never become pages."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from curator.cli import main
from curator.engine.corpus.page import parse_page
from curator.engine.read.reading import json_size
from tests.corpus import HOSTILE_PAGES, CorpusInfo, generate

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    return generate(tmp_path_factory.mktemp("hostile") / "wiki", 30, seed=1, hostile=True, git=True)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0) -> object:
    assert main([*argv, "--json"]) == status
    out, err = capsys.readouterr()
    assert err == ""
    return json.loads(out)


def test_the_hostile_set_is_complete(corpus: CorpusInfo) -> None:
    assert set(corpus.hostile) == set(HOSTILE_PAGES)
    assert {"loop_dir", "self_loop", "escape_dir", "escape_file"} <= set(corpus.symlinks)
    assert (corpus.root / corpus.hostile["huge"]).stat().st_size >= 10 * 1024 * 1024
    assert (corpus.root / ".git").is_dir()


def test_index_lists_every_page_and_nothing_else(corpus: CorpusInfo,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "--wiki", str(corpus.root), "index")
    assert isinstance(rows, list)
    paths = [r["path"] for r in rows]
    assert paths == corpus.pages
    for row in rows:
        assert set(row) >= {"path", "bytes", "title", "layer", "trust"}
        assert row["bytes"] == (corpus.root / row["path"]).stat().st_size
        assert row["layer"] in ("identity", "core", "context", "deep") and 0 <= row["trust"] <= 1
    by_path = {r["path"]: r for r in rows}
    h = corpus.hostile
    assert by_path[h["bom"]]["title"] == "With BOM" and by_path[h["bom"]]["layer"] == "core"
    assert by_path[h["crlf"]]["title"] == "With CRLF" and by_path[h["crlf"]]["trust"] == 0.8
    assert by_path[h["empty"]]["bytes"] == 0
    assert by_path[h["unclosed_frontmatter"]]["layer"] == "deep"


def test_lint_reports_every_hostile_page(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    # (broken frontmatter and bad values are errors: lint's status says so)
    issues = run_json(capsys, "--wiki", str(corpus.root), "lint", status=1)
    assert isinstance(issues, list)
    assert all(set(i) >= {"path", "code", "severity", "message", "line"} for i in issues)
    codes: dict[str, set[str]] = {}
    for issue in issues:
        codes.setdefault(issue["path"], set()).add(issue["code"])
    h = corpus.hostile
    for kind in corpus.frontmatter_problems:
        assert "frontmatter" in codes[h[kind]], kind
    assert "encoding" in codes[h["invalid_utf8"]]
    assert "nul-bytes" in codes[h["nul_bytes"]]
    assert {"layer", "trust"} <= codes[h["bad_values"]]
    assert "empty" in codes[h["empty"]]
    assert "links" in codes[h["huge"]]
    for kind, path in h.items():
        assert path in codes, f"{kind} page not reported"
    assert not set(corpus.not_pages) & set(codes)
    # the 10 MB page repeats one broken link ~10^5 times: lint says so once
    assert sum(1 for i in issues if i["path"] == h["huge"] and i["code"] == "unresolved-link") == 1


def test_read_and_neighbors_of_hostile_pages(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(corpus.root)
    for kind, path in corpus.hostile.items():
        data = run_json(capsys, "--wiki", root, "read", path)
        assert isinstance(data, dict) and data["path"] == path, kind
        result = run_json(capsys, "--wiki", root, "neighbors", path)
        assert isinstance(result, dict)
        assert json_size(result) <= 30_000, kind
    bad = run_json(capsys, "--wiki", root, "read", corpus.hostile["invalid_utf8"])
    assert isinstance(bad, dict) and "\ufffd" in bad["content"]
    huge = run_json(capsys, "--wiki", root, "neighbors", corpus.hostile["huge"])
    assert isinstance(huge, dict) and huge["truncated"] is True and huge["page_cut"] is True
    assert "[truncated at 30000 bytes: the page is cut short" in huge["note"]
    assert json_size(huge) <= 30_000


def test_read_all_over_the_hostile_corpus(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "--wiki", str(corpus.root), "read-all")
    assert isinstance(result, dict)
    assert len(result["included"]) + result["not_reached"] == len(corpus.pages)
    assert corpus.hostile["huge"] in result["not_reached_paths"]


def test_escaping_symlinks_never_expose_outside_files(corpus: CorpusInfo,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for ref in ("wiki/secret-link.md", "wiki/outside-dir/inner.md", "secret", str(corpus.outside / "secret.md")):
        assert main(["--wiki", str(corpus.root), "read", ref]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err
        assert "outside the wiki" not in out


def test_alias_bombs_stay_small_in_memory(corpus: CorpusInfo) -> None:
    for kind in ("alias_bomb", "deep_alias_bomb"):
        data = (corpus.root / corpus.hostile[kind]).read_bytes()
        tracemalloc.start()
        try:
            page, _ = parse_page(corpus.hostile[kind], data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 20 * 1024 * 1024, (kind, peak)
        assert page.meta == {} and page.problems[0].code == "frontmatter"


def test_the_ten_megabyte_page_stays_bounded(corpus: CorpusInfo) -> None:
    path = corpus.hostile["huge"]
    data = (corpus.root / path).read_bytes()
    tracemalloc.start()
    try:
        page, _ = parse_page(path, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert page.title == "Ten Megabytes" and len(page.snippet) <= 280
    assert peak < 200 * 1024 * 1024, peak


def test_an_unchanged_hostile_corpus_is_served_from_the_cache(corpus: CorpusInfo,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import curator.engine.corpus.store as store_module

    run_json(capsys, "--wiki", str(corpus.root), "index")

    def fail(*_args: object, **_kw: object) -> None:
        raise AssertionError("re-parsed an unchanged page")

    monkeypatch.setattr(store_module, "parse_page", fail)
    rows = run_json(capsys, "--wiki", str(corpus.root), "index")
    assert isinstance(rows, list) and [r["path"] for r in rows] == corpus.pages
