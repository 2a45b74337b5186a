"""One page's frontmatter cannot stop the wiki (issue 45): a 4,301-digit integer made Python's
int() refuse, and every command said ``internal error: ValueError``, ``curator mcp`` would not
start and the station hung on load. Values are read with limits; a page whose frontmatter cannot
be read is a lint problem, through the CLI, a real MCP client and the station."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession

from curator.engine.corpus import frontmatter
from tests.gui_helpers import loaded_window, make_wiki
from tests.mcp.test_mcp_server import call, run

HUGE = "9" * 4301
PAGES = {
    "wiki/huge.md": f"---\ntitle: Huge\ntrust: {HUGE}\n---\n# Huge\n\nLedger notes.\n",
    "wiki/huge-list.md": f"---\ntitle: Huge list\ntags: [a, {HUGE}]\n---\n# Huge list\n\nLedger list.\n",
    "wiki/long-id.md": f"---\ntitle: Long id\nid: {'7' * 40}\ntrust: 0.8\n---\n# Long id\n\nLedger id.\n",
    "wiki/payments.md": "# Payments\n\nLedger payments. [[huge]]\n",
}


@pytest.mark.parametrize("raw", [f"trust: {HUGE}", f"tags: [a, {HUGE}]", f"x:\n  - {HUGE}",
                                 f"x: 0x{'f' * 4000}", f"x: {'1' * 3000}:{'2' * 2000}"])
def test_a_huge_integer_is_a_problem_of_the_page_not_an_error(raw: str) -> None:
    meta, problem = frontmatter.load(raw)
    assert isinstance(meta, dict)
    if problem is None:
        assert all(not isinstance(v, int) or abs(v) <= frontmatter.MAX_INT for v in meta.values()), meta
    else:
        assert "frontmatter" in problem


def test_integers_beyond_64_bits_are_kept_as_text_and_both_readers_agree() -> None:
    for digits in (1, 18, 19, 40, 300):
        raw = f"id: {'7' * digits}\ntitle: T"
        fast, slow = frontmatter.load(raw), frontmatter.load_yaml(raw)
        assert fast == slow
        number = int("7" * digits)
        assert fast[0]["id"] == (number if number <= frontmatter.MAX_INT else "7" * digits)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", PAGES)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)


def test_every_command_answers_and_lint_names_the_page(root: Path) -> None:
    for args in (["index"], ["search", "ledger"], ["health"], ["read", "wiki/huge.md"], ["graph"],
                 ["append", "payments", "Cards settle in two days"]):
        proc = cli(root, *args)
        assert proc.returncode == 0 and "internal error" not in proc.stderr, (args, proc.stderr)
    lint = cli(root, "lint")
    assert "wiki/huge.md" in lint.stdout and "frontmatter" in lint.stdout, lint.stdout
    assert "internal error" not in lint.stderr


def test_the_mcp_server_starts_and_answers(root: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_search", query="ledger")
        assert not err and "huge" in text.lower(), text
        err, text = await call(s, "wiki_read", page_name="wiki/huge.md")
        assert not err and "Ledger notes" in text, text

    run(root, body)


def test_the_station_opens_the_wiki_and_the_page(qtbot, root: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win = loaded_window(qtbot, root, tmp_path)
    win.open_page((0, "wiki/huge.md"))
    qtbot.waitUntil(lambda: "Ledger notes" in win.page_view.browser.toPlainText(), timeout=15_000)
    win.close()
