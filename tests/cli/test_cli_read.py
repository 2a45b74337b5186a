"""The read commands of the CLI (docs/design.md §8, §11): init, index, read, neighbors, read-all, lint,
their ``--json`` shapes, budgets, exit codes and one-line errors. Most run in-process through
``curator.cli.main``; a few run the real console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from curator.cli import main
from tests.corpus import CorpusInfo, generate, write_pages

CURATOR = str(Path(sys.executable).with_name("curator"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    return generate(tmp_path_factory.mktemp("cli") / "wiki", 60, seed=7)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def assert_one_line_error(err: str) -> None:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


# --- index ---------------------------------------------------------------------------------

def test_index_json_matches_the_corpus(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "--wiki", str(corpus.root), "index")
    assert isinstance(rows, list) and [r["path"] for r in rows] == corpus.pages
    for row in rows:
        assert list(row) == ["path", "bytes", "title", "layer", "trust"]
        want = corpus.expected[row["path"]]
        assert (row["title"], row["layer"], row["trust"]) == (want.title, want.layer, want.trust), row
        assert row["bytes"] == (corpus.root / row["path"]).stat().st_size


def test_index_text_and_global_options_in_either_place(corpus: CorpusInfo,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "index")
    assert code == 0 and out.rstrip().endswith(f"{len(corpus.pages)} pages")
    assert "wiki/付款流程.md" in out
    from curator.commands.read import _display_width

    # the layer column lines up in a terminal, CJK paths (two columns a character) included
    columns = {_display_width(line.split(".md", 1)[0]) + 3 + len(line.split(".md", 1)[1]) -
               len(line.split(".md", 1)[1].lstrip()) for line in out.splitlines() if ".md" in line}
    assert len(columns) == 1
    before = run_json(capsys, "--wiki", str(corpus.root), "index")
    code, out, _ = run(capsys, "--json", "index", "--wiki", str(corpus.root))
    assert code == 0 and json.loads(out) == before


def test_index_text_shows_control_characters_escaped_computed_or_saved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A page name or title an agent wrote with a terminal escape or a bidirectional override is
    listed escaped (never acted on by the terminal), the same whether the listing is computed or
    printed again from the saved one; the JSON keeps the stored text."""
    info = generate(tmp_path / "wiki", 12, seed=5)
    folder = info.root / "wiki"
    (folder / "evil\x1b[2Jname.md").write_text("---\ntitle: Plain\n---\nA fact.\n", encoding="utf-8")
    (folder / "plain-name.md").write_text("---\ntitle: \"Pay \\u202eyap\\x07\"\n---\nA fact.\n", encoding="utf-8")
    wiki = ["--wiki", str(info.root)]
    computed = run(capsys, *wiki, "index")[1]
    saved = run(capsys, *wiki, "index")[1]
    assert saved == computed
    assert "\x1b" not in computed and "\u202e" not in computed and "\x07" not in computed
    assert "evil\\x1b[2Jname.md" in computed and "Pay <U+202E>yap" in computed
    rows = run_json(capsys, *wiki, "index")
    assert isinstance(rows, list)
    titles = {r["path"]: r["title"] for r in rows if isinstance(r, dict)}
    assert titles["wiki/plain-name.md"] == "Pay \u202eyap\x07" and "wiki/evil\x1b[2Jname.md" in titles
    # the columns still line up: every line's layer starts at one column
    lines = [line for line in computed.splitlines() if ".md" in line]
    assert len({line.index(".md") + len(line[line.index(".md"):]) - len(line[line.index(".md") + 3:].lstrip())
                for line in lines if line.isascii()}) == 1


def test_index_as_an_agent_of_a_department(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "--wiki", str(corpus.root), "--as", "agent:bot-1", "--department", "sales", "index")
    assert isinstance(rows, list) and {r["path"] for r in rows} <= set(corpus.pages)


def test_index_defaults_to_the_current_folder(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(corpus.root)
    rows = run_json(capsys, "index")
    assert isinstance(rows, list) and len(rows) == len(corpus.pages)


def test_index_saves_the_operators_listing_and_never_gives_it_for_other_pages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = generate(tmp_path / "wiki", 30, seed=3)
    wiki = ["--wiki", str(info.root)]
    first_json = run_json(capsys, *wiki, "index")
    _, first_text, _ = run(capsys, *wiki, "index")
    from curator.engine.wiki import Wiki

    w = Wiki(info.root)
    try:  # both forms saved under the store's state
        w.store.count()
        for name in ("index-json", "index-text"):
            assert w.store.derived(name) is not None, name
    finally:
        w.close()
    # answered again from the saved listing: the same bytes as computed
    assert run_json(capsys, *wiki, "index") == first_json
    assert run(capsys, *wiki, "index")[1] == first_text
    # an agent gets its own listing, never the operator's saved one
    policy = info.root / ".scope.toml"
    policy.write_text('[namespaces."wiki"]\nvisible_to_departments = ["ops"]\n', encoding="utf-8")
    hidden = [r for r in first_json if isinstance(r, dict) and str(r["path"]).startswith("wiki/")]
    assert hidden
    agent = run_json(capsys, *wiki, "--as", "agent:bot-1", "--department", "sales", "index")
    assert isinstance(agent, list) and not any(str(r["path"]).startswith("wiki/") for r in agent)
    policy.unlink()
    # a page changed on disk: a new state, a listing computed again
    page = info.root / info.pages[0]
    text = page.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "\ntitle: " in text
    page.write_text(re.sub(r"(?m)^title: .*$", "title: A Retitled Page", text, count=1), encoding="utf-8")
    os.utime(page, ns=(10**18, 10**18))
    rows = run_json(capsys, *wiki, "index")
    assert isinstance(rows, list)
    row = next(r for r in rows if r["path"] == info.pages[0])
    assert row["title"] == "A Retitled Page" and row["bytes"] == page.stat().st_size
    _, out, _ = run(capsys, *wiki, "index")
    assert "A Retitled Page" in out and out != first_text


# --- read ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["wiki/付款流程.md", "wiki/付款流程", "付款流程", "./wiki/付款流程.md"])
def test_read_by_path_or_slug(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str], ref: str) -> None:
    data = run_json(capsys, "--wiki", str(corpus.root), "read", ref)
    assert isinstance(data, dict)
    assert data["path"] == "wiki/付款流程.md" and data["title"] == "付款流程"
    assert data["content"] == (corpus.root / "wiki/付款流程.md").read_text(encoding="utf-8")
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "read", ref)
    assert code == 0 and out == data["content"]


def test_read_of_a_missing_page_is_one_line_exit_1(corpus: CorpusInfo,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--wiki", str(corpus.root), "read", "start-her")
    assert code == 1 and out == ""
    assert_one_line_error(err)
    assert err.startswith("curator: error: no page 'start-her'") and "wiki/start-here.md" in err


def test_a_missing_wiki_folder_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--wiki", str(tmp_path / "nope"), "index")
    assert code == 1
    assert_one_line_error(err)
    assert "does not exist" in err


# --- neighbors -----------------------------------------------------------------------------

@pytest.fixture
def small(tmp_path: Path) -> Path:
    long = " ".join(["word"] * 120)
    return write_pages(tmp_path / "w", {
        "wiki/hub.md": "---\ntitle: Hub\nlayer: core\n---\n# Hub\n\nLinks to [[a]], [[b|Bee]], [[a#x]] "
                       "and [[not-written-yet]].\n",
        "wiki/a.md": f"# A\n\nPage A says {long}. Back to [[hub]].\n",
        "wiki/b.md": "# B\n\nPage B. See [[hub]].\n",
        "wiki/c.md": "# C\n\nAlso [hub](hub.md).\n",
    })


def test_neighbors_shows_page_outgoing_unresolved_and_inbound(small: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--wiki", str(small), "neighbors", "hub")
    assert code == 0
    assert out.startswith("# Hub (wiki/hub.md) — layer core, trust 0.5\n---\ntitle: Hub")
    assert "## Links from this page (3)" in out and "## Pages linking here (3)" in out
    assert "- [[not-written-yet]] — not yet written" in out
    assert "- A (wiki/a.md): Page A says" in out and "truncated" not in out
    data = run_json(capsys, "--wiki", str(small), "neighbors", "wiki/hub.md")
    assert isinstance(data, dict)
    assert set(data) >= {"page", "content", "outgoing", "inbound", "truncated", "omitted"}
    assert "text" not in data  # the rendered text would repeat the page: the budget holds it once
    assert [(n["path"], n["resolved"]) for n in data["outgoing"]] == [
        ("wiki/a.md", True), ("wiki/b.md", True), (None, False)]
    assert [n["path"] for n in data["inbound"]] == ["wiki/a.md", "wiki/b.md", "wiki/c.md"]
    assert all(len(n["snippet"]) <= 280 for n in data["inbound"])


def test_neighbors_snippet_chars(small: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "--wiki", str(small), "neighbors", "hub", "--snippet-chars", "20")
    assert isinstance(data, dict)
    snippets = [n["snippet"] for n in data["inbound"]]
    assert all(len(s) <= 20 for s in snippets) and snippets[0].endswith("…")


def test_neighbors_max_bytes_truncates_with_an_explicit_line(small: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--wiki", str(small), "neighbors", "hub", "--max-bytes", "400")
    assert code == 0
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith("[truncated at 400 bytes:") and "neighbours not shown" in last
    assert "max_bytes" in last  # says how to see more
    body = out[: out.rindex("[truncated")]
    assert len(body.encode("utf-8")) <= 400
    data = run_json(capsys, "--wiki", str(small), "neighbors", "hub", "--max-bytes", "400")
    assert isinstance(data, dict) and data["truncated"] is True
    assert data["omitted"] >= 1 and f"{data['omitted']} of 6 neighbours not listed" in data["note"]


def test_neighbors_default_budget_is_30000_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pages: dict[str, str | bytes] = {"hub.md": "# Hub\n"}
    for i in range(400):
        pages[f"p{i:03d}.md"] = f"# P{i}\n\n{'text ' * 50}[[hub]]\n"
    root = write_pages(tmp_path / "w", pages)
    code, out, _ = run(capsys, "--wiki", str(root), "neighbors", "hub")
    assert code == 0 and "[truncated at 30000 bytes" in out
    assert len(out[: out.rindex("[truncated")].encode("utf-8")) <= 30_000


# --- read-all ------------------------------------------------------------------------------

def test_read_all_orders_by_layer_and_reports_what_it_did_not_reach(
        corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "--wiki", str(corpus.root), "read-all", "--max-bytes", "5000")
    assert isinstance(data, dict)
    assert data["included"] and corpus.expected[data["included"][0]].layer == "identity"
    assert data["not_reached"] == len(corpus.pages) - len(data["included"]) > 0
    assert len(data["not_reached_paths"]) == data["not_reached"]
    assert f"[{data['not_reached']} of {len(corpus.pages)} pages not reached within 5000 bytes" in data["text"]
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "read-all", "--max-bytes", "5000")
    assert code == 0 and "pages not reached" in out
    everything = run_json(capsys, "--wiki", str(corpus.root), "read-all", "--max-bytes", "10000000")
    assert isinstance(everything, dict) and everything["not_reached"] == 0
    layers = [corpus.expected[p].layer for p in everything["included"]]
    rank = {"identity": 0, "core": 1, "context": 2, "deep": 3}
    assert [rank[x] for x in layers] == sorted(rank[x] for x in layers)


# --- lint ----------------------------------------------------------------------------------

def test_lint_json_and_text(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str]) -> None:
    issues = run_json(capsys, "--wiki", str(corpus.root), "lint")
    assert isinstance(issues, list) and issues
    assert all(list(i) == ["path", "code", "severity", "message", "line"] for i in issues)
    found = {i["code"] for i in issues}
    assert {"unresolved-link", "ambiguous-link", "duplicate-basename"} <= found
    code, out, _ = run(capsys, "--wiki", str(corpus.root), "lint")
    assert code == 0 and out.rstrip().endswith(f"in {len(corpus.pages)} pages")


def test_lint_exit_status_follows_error_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As ruff and eslint: 1 when a problem of error severity is found, 0 for warnings alone,
    and ``--exit-zero`` opts out."""
    root = write_pages(tmp_path / "w", {"a.md": "---\nlayer: core\n---\n# A\n\nSee [[b]] and [[nowhere]].\n",
                                        "b.md": "---\nlayer: core\n---\n# B\n\nSee [[a]].\n"})
    code, out, _ = run(capsys, "--wiki", str(root), "lint")
    assert code == 0 and "[unresolved-link]" in out and "(0 errors)" in out
    (root / "b.md").write_text("---\nlayer: bogus\n---\n# B\n\nSee [[a]].\n", encoding="utf-8")
    code, out, _ = run(capsys, "--wiki", str(root), "lint")
    assert code == 1 and "error: [layer]" in out and "(1 errors)" in out
    code, out, _ = run(capsys, "--wiki", str(root), "lint", "--json")
    assert code == 1 and any(i["code"] == "layer" for i in json.loads(out))
    for extra in (["--exit-zero"], ["--exit-zero", "--json"]):
        code, out, _ = run(capsys, "--wiki", str(root), "lint", *extra)
        assert code == 0 and "layer" in out


# --- usage errors ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "argv",
    [["frobnicate"], ["read"], ["neighbors", "x", "--max-bytes", "lots"], ["neighbors", "x", "--max-bytes", "0"],
     ["read-all", "--max-bytes", "-5"], ["--as", "robot", "index"], ["index", "--bogus"], []],
)
def test_bad_usage_exits_2_with_one_line(corpus: CorpusInfo, capsys: pytest.CaptureFixture[str],
                                         argv: list[str]) -> None:
    code, out, err = run(capsys, "--wiki", str(corpus.root), *argv)
    assert code == 2
    if argv:
        assert_one_line_error(err)
    else:  # no command: the help text, on stdout
        assert "usage: curator" in out
def test_lint_reports_every_problem_of_a_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # [[Topic#No Such Heading]] with two Topic.md is ambiguous AND its anchor is missing from the
    # page it resolves to: both are reported at once, not the anchor only after the ambiguity is fixed
    root = write_pages(tmp_path / "w", {
        "a/Topic.md": "# Topic\n\n## Real Heading\n",
        "b/Topic.md": "# Topic\n\n## Real Heading\n",
        "notes.md": "# Notes\n\nSee [[Topic#No Such Heading]] and [[Topic#Real Heading]].\n",
    })
    issues = run_json(capsys, "--wiki", str(root), "lint")
    assert isinstance(issues, list)
    mine = sorted(i["code"] for i in issues if i["path"] == "notes.md" and i["code"] != "orphan")
    assert mine == ["ambiguous-link", "broken-anchor"]
    broken = next(i for i in issues if i["path"] == "notes.md" and i["code"] == "broken-anchor")
    assert "'No Such Heading'" in broken["message"] and broken["line"] == 3
    code, out, _ = run(capsys, "--wiki", str(root), "lint")
    assert code == 0 and "[ambiguous-link]" in out and "[broken-anchor] [[Topic#No Such Heading]]" in out




def test_an_unexpected_failure_is_one_line_not_a_traceback(corpus: CorpusInfo,
                                                           capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import curator.commands.read as read_commands

    def boom(*_args: object) -> int:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(read_commands, "run_index", boom)
    code, _, err = run(capsys, "--wiki", str(corpus.root), "index")
    assert code == 1
    assert_one_line_error(err)
    assert "RuntimeError: disk on fire" in err


# --- init ----------------------------------------------------------------------------------

def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def test_init_creates_a_repository_that_ignores_curator_state(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "new wiki"
    data = run_json(capsys, "init", str(target))
    assert isinstance(data, dict) and data["status"] == "ok" and data["created_repo"] is True
    assert (target / ".git").is_dir()
    assert (target / ".gitignore").read_text() == ".curator/\n"
    assert git(target, "log", "--format=%s").strip() == "curator init"
    assert git(target, "status", "--porcelain") == ""
    again = run_json(capsys, "init", str(target))
    assert isinstance(again, dict) and again["created_repo"] is False and again["commit"] is None
    assert "already" in again["message"]
    # the cache folder it makes later stays out of git
    run_json(capsys, "--wiki", str(target), "index")
    assert (target / ".curator").is_dir() and git(target, "status", "--porcelain") == ""


def test_init_prepares_an_existing_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = generate(tmp_path / "w", 8, git=True)
    (info.root / ".gitignore").write_text("*.tmp")  # no trailing newline, no .curator/ line
    code, out, _ = run(capsys, "--wiki", str(info.root), "init")
    assert code == 0 and "prepared the existing repository" in out
    assert (info.root / ".gitignore").read_text() == "*.tmp\n.curator/\n"


def test_init_without_any_git_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull,
               GIT_CONFIG_NOSYSTEM="1", EMAIL="")
    proc = subprocess.run([CURATOR, "init", str(tmp_path / "w")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert git(tmp_path / "w", "log", "--format=%s").strip() == "curator init"


def test_init_on_a_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    code, _, err = run(capsys, "init", str(tmp_path / "f"))
    assert code == 1
    assert_one_line_error(err)


# --- the real console script ---------------------------------------------------------------

def test_console_script_help_and_errors(corpus: CorpusInfo) -> None:
    proc = subprocess.run([CURATOR, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for command in ("init", "index", "read", "neighbors", "read-all", "lint"):
        assert command in proc.stdout
    proc = subprocess.run([CURATOR, "--wiki", str(corpus.root), "read", "no-such-page"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert_one_line_error(proc.stderr)
    proc = subprocess.run([CURATOR, "nonsense"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert_one_line_error(proc.stderr)


def test_console_script_index_json(corpus: CorpusInfo) -> None:
    proc = subprocess.run([CURATOR, "--wiki", str(corpus.root), "index", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    assert [r["path"] for r in json.loads(proc.stdout)] == corpus.pages


def test_a_closed_pipe_is_not_an_error(corpus: CorpusInfo) -> None:
    # read-all writes ~100 KB, more than a pipe holds, so the writer really meets the closed end
    proc = subprocess.run(f"'{CURATOR}' --wiki '{corpus.root}' read-all --max-bytes 10000000 | head -n 1",
                          shell=True,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.count("\n") == 1 and proc.stderr == ""


def test_the_cli_does_not_import_qt_or_the_engine_for_help() -> None:
    code = ("import sys, contextlib, io\n"
            "from curator.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        main(['--help'])\n"
            "    except SystemExit:\n"
            "        pass\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'git', 'yaml')"
            " or m.startswith('curator.engine')]\n"
            "print(heavy)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_each_group_declares_exactly_the_commands_it_registers() -> None:
    """The CLI builds only the running command's group; COMMANDS must match what register adds."""
    import argparse
    import importlib

    from curator.cli import COMMAND_GROUP, COMMAND_GROUPS, _command_of, _groups_for, build_parser

    seen: set[str] = set()
    for group in COMMAND_GROUPS:
        parser = build_parser((group,))
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        declared = importlib.import_module(f"curator.commands.{group}").COMMANDS
        assert set(sub.choices) == set(declared), group
        assert not seen & set(declared)
        seen |= set(declared)
        assert {c for c, g in COMMAND_GROUP.items() if g == group} == set(declared), group
    assert set(COMMAND_GROUP) == seen  # (the CLI's static map names every command, each in its group)
    assert _command_of(["--wiki", "append", "--json", "append", "x"]) == "append"
    assert _groups_for(["--as", "agent:a", "append", "s", "c"]) == ("write",)
    assert _groups_for(["--help"]) == COMMAND_GROUPS
    assert _groups_for(["nonsense"]) == COMMAND_GROUPS


def test_the_check_started_before_parsing_is_the_one_each_parser_asks_for() -> None:
    """The console script starts a command's walk (or sweep) before it builds the parser, from
    the static map AHEAD: it must name exactly the commands whose parser sets walk_ahead or
    sweep_ahead, and the guess from the words must be what the parsed options say."""
    import argparse

    from curator.cli import AHEAD, COMMAND_GROUPS, _ahead_of, build_parser

    asked: dict[str, str] = {}

    def visit(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    defaults = child._defaults
                    kind = "walk" if defaults.get("walk_ahead") else "sweep" if defaults.get("sweep_ahead") else None
                    if kind:
                        asked[f"{prefix}{name}"] = kind
                    visit(child, f"{prefix}{name} ")

    visit(build_parser(COMMAND_GROUPS), "")
    assert asked == AHEAD
    assert _ahead_of(["index"]) == ("walk", ".")
    assert _ahead_of(["--wiki", "w", "--json", "links", "unresolved"]) == ("walk", "w")
    assert _ahead_of(["search", "ledger", "--wiki=w2"]) == ("sweep", "w2")
    assert _ahead_of(["--as", "index", "append", "s", "fact"]) is None  # (index is the actor here)
    assert _ahead_of(["links", "fix", "T", "--to", "P"]) is None
    for argv in (["index", "--help"], ["--version"], ["-h"], [], ["append", "index", "x"]):
        assert _ahead_of(argv) is None, argv


def test_a_wrong_guess_before_parsing_still_checks_the_wiki_the_options_name(tmp_path: Path) -> None:
    """An option spelled so the guess from the words misses it (``--wik``, an abbreviation
    argparse accepts, whose value then looks like the command): the parsed options start the
    walk instead, of the wiki they name, and that wiki is the one answered."""
    root = write_pages(tmp_path / "w", {"a.md": "# A\n\nalpha\n"})
    elsewhere = write_pages(tmp_path / "cwd", {"z.md": "# Z\n"})
    proc = subprocess.run([CURATOR, "--wik", str(root), "index", "--json"], capture_output=True, text=True,
                          cwd=elsewhere, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert [row["path"] for row in json.loads(proc.stdout)] == ["a.md"]


def test_the_console_script_sees_edits_made_right_before_it(tmp_path: Path) -> None:
    """The console script walks the wiki ahead (a child process, see walker.walk_ahead): what it
    answers is still the files as they are when it starts. A page rewritten in place within the
    same clock tick and size (the racy-stamp guard's case), a page added and one removed right
    before each command are all seen; the answers equal an in-process caller's, which walks itself."""
    from curator.engine.wiki import Wiki

    root = write_pages(tmp_path / "w", {"a.md": "# A\n\nalpha text\n", "b.md": "# B\n\n[[a]]\n",
                                        "c.md": "# C\n\n[[a]]\n"})
    Wiki(root).close()  # cached, a moment after the writes: a.md is racy
    st = (root / "a.md").stat()
    (root / "a.md").write_text("# A\n\nomega text\n", "utf-8")  # same size
    os.utime(root / "a.md", ns=(st.st_atime_ns, st.st_mtime_ns))  # same stamp
    (root / "c.md").unlink()
    write_pages(root, {"d.md": "# D\n\n[[a]]\n"})
    env = {k: v for k, v in os.environ.items() if k != "CURATOR_DEBUG"}

    def console(*argv: str) -> str:
        proc = subprocess.run([CURATOR, "--wiki", str(root), *argv], capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        return proc.stdout

    assert "omega" in console("read", "a") and "alpha" not in console("read-all")
    shown = json.loads(console("neighbors", "a", "--json"))
    assert sorted(n["path"] for n in shown["inbound"]) == ["b.md", "d.md"]
    assert [r["path"] for r in json.loads(console("index", "--json"))] == ["a.md", "b.md", "d.md"]
    for argv in (["neighbors", "a", "--json"], ["index", "--json"], ["explain", "a", "--json"], ["lint", "--json"]):
        proc = subprocess.run([sys.executable, "-c", "import sys; from curator.cli import main; sys.exit(main(sys.argv[1:]))",
                               "--wiki", str(root), *argv], capture_output=True, text=True, env=env, timeout=120)
        assert proc.stdout == console(*argv), argv  # (main(argv) never walks ahead)


def test_every_commands_help_reads_as_written() -> None:
    """Each command's --help as argparse prints it: a percent sign written for %-formatting
    (``%%``) where argparse does not format (a description without ``%(prog)``) showed as ``%%``."""
    import argparse

    from curator.cli import build_parser

    def visit(parser: argparse.ArgumentParser, seen: list[str]) -> None:
        seen.append(parser.format_help())
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    visit(child, seen)

    helps: list[str] = []
    visit(build_parser(), helps)
    assert len(helps) > 30
    assert not [h.splitlines()[0] for h in helps if "%%" in h or "%(" in h]
    assert any(">= 60% of the smaller page" in " ".join(h.split()) for h in helps)
