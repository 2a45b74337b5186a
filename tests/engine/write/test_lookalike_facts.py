"""The door's duplicate check sees facts as a reader does (issue 45): eleven copies of one bullet
passed as new with a zero-width space, ZWNJ, ZWJ, word joiner, BOM, soft hyphen, ``&shy;``,
fullwidth letters, mathematical bold letters, a Cyrillic ``а`` and combining marks. Each is now
answered ``duplicate`` through the CLI and a real MCP client, and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession

from curator.engine.corpus.facts import find_duplicate
from curator.engine.corpus.lookalike import visible_form
from tests.gui_helpers import make_wiki
from tests.mcp.test_mcp_server import call, run

FACT = "Refunds settle within fourteen days"
DISGUISED = {
    "zero-width space": "Refunds set\u200btle within fourteen days",
    "ZWNJ": "Refunds settle with\u200cin fourteen days",
    "ZWJ": "Refu\u200dnds settle within fourteen days",
    "word joiner": "Refunds settle within four\u2060teen days",
    "BOM": "\ufeffRefunds settle within fourteen days",
    "soft hyphen": "Refunds set\u00adtle within fourteen days",
    "&shy;": "Refunds set&shy;tle within fourteen days",
    "fullwidth": "Ｒｅｆｕｎｄｓ settle within fourteen days",
    "mathematical bold": "𝐑𝐞𝐟𝐮𝐧𝐝𝐬 settle within fourteen days",
    "Cyrillic a": "Refunds settle within fourteen dаys",
    "combining marks": "Refu\u0301nds se\u0308ttle within fourteen days",
}
PAGE = f"# Payments\n\n## Updates\n\n- {FACT} (added 2026-01-01)\n"


@pytest.mark.parametrize("name", list(DISGUISED))
def test_every_disguise_reads_as_the_same_fact(name: str) -> None:
    assert visible_form(DISGUISED[name]).lower() == FACT.lower()
    assert find_duplicate(PAGE, DISGUISED[name]) is not None


def test_different_facts_and_other_scripts_stay_different() -> None:
    assert find_duplicate(PAGE, "Refunds settle within five days") is None
    page = "# 学校\n\n## Updates\n\n- がっこうは九時に始まる\n"
    assert find_duplicate(page, "かっこうは九時に始まる") is None  # (kana voicing marks are meaning)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", {"wiki/payments.md": PAGE})


def test_the_cli_answers_duplicate_for_every_disguise(root: Path) -> None:
    before = (root / "wiki/payments.md").read_bytes()
    for name, fact in DISGUISED.items():
        proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "--as", "agent:bob",
                               "append", "payments", fact, "--json"], capture_output=True, text=True, timeout=60)
        out = json.loads(proc.stdout)
        assert proc.returncode == 0 and out["status"] == "duplicate", (name, out)
    assert (root / "wiki/payments.md").read_bytes() == before


def test_mcp_answers_duplicate_for_every_disguise(root: Path) -> None:
    before = (root / "wiki/payments.md").read_bytes()

    async def body(s: ClientSession) -> None:
        for name, fact in DISGUISED.items():
            err, text = await call(s, "wiki_append", slug="payments", content=fact)
            assert not err and text.startswith("duplicate"), (name, text)

    run(root, body, agent="bob")
    assert (root / "wiki/payments.md").read_bytes() == before
