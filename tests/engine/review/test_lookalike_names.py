"""Look-alike page names (issue 45): ``wiki/pаyments.md`` (a Cyrillic ``а``) beside ``payments``
was reported by nothing, and an agent's ``pаyments`` made a second page. Lint names the pair;
routing takes look-alike names as the same name."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from curator.engine.corpus import lookalike
from curator.engine.corpus.lookalike import escape_controls
from tests.gui_helpers import make_wiki

LATIN = "wiki/payments.md"
CYRILLIC = "wiki/p\u0430yments.md"


def cli(root: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def test_lint_reports_both_pages_of_a_lookalike_pair(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", {LATIN: "# Payments\n", CYRILLIC: "# Payments too\n",
                                      "wiki/refunds.md": "# Refunds\n"})
    _rc, out = cli(root, "lint", "--json")
    issues = [i for i in json.loads(out) if i["code"] == "lookalike-name"]
    assert sorted(i["path"] for i in issues) == sorted([LATIN, CYRILLIC]), out
    assert all("looks like" in i["message"] for i in issues)


def test_routing_takes_lookalike_names_as_one(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", {LATIN: "# Payments\n\n## Updates\n\n- Cards settle in two days\n"})
    rc, out = cli(root, "--as", "agent:bob", "append", "p\u0430yments", "Refunds take five days", "--json")
    answer = json.loads(out)
    assert rc == 0 and answer["status"] == "appended" and answer["page"] == LATIN, answer
    assert not (root / CYRILLIC).exists()
    # the other way round: only the look-alike page exists, the Latin name reaches it
    other = make_wiki(tmp_path / "o", {CYRILLIC: "# Payments\n\n## Updates\n\n- Cards settle in two days\n"})
    rc, out = cli(other, "--as", "agent:bob", "append", "payments", "Refunds take five days", "--json")
    answer = json.loads(out)
    assert rc == 0 and answer["page"] == CYRILLIC and not (other / LATIN).exists(), answer


def test_controls_are_shown_escaped() -> None:
    assert escape_controls("Approve \u202eyaP fo sutats\u202c all refunds") == \
        "Approve <U+202E>yaP fo sutats<U+202C> all refunds"
    assert escape_controls("a\u200bb\nReviewed-by: operator") == "a<U+200B>b<U+000A>Reviewed-by: operator"
    assert escape_controls("plain text, Ünïcode, 東京") == "plain text, Ünïcode, 東京"


def test_a_whole_answer_is_escaped_line_by_line_as_character_by_character() -> None:
    """A whole answer (its own line breaks kept) is escaped a line at a time, a printable line
    taken as it is (84,000 lines of lint took 1.5 s character by character): the same text, for
    every mix of line breaks, tabs, CJK, spaces that are not printable and control characters."""
    parts = ["a", " ", "東京", "Ü", "\t", "\r", "\n", "\u202e", "\u200b", "\x1b", "\u00a0", "\u3000", "\u2028",
             "\ufeff", "\U000e0041"]
    rng = random.Random(44)
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(30)))
        assert escape_controls(text, keep_lines=True) == lookalike._escape_chars(text, True), repr(text)
    assert escape_controls(text) == lookalike._escape_chars(text, False)


def test_dedup_reports_lookalike_names_to_those_who_see_both(tmp_path: Path) -> None:
    """Two pages whose names read the same but whose texts differ: dedup names them (a family of
    their names, signal ``lookalike``), not only lint; an agent who may not see one of them is
    not told of it."""
    root = make_wiki(tmp_path / "w", {LATIN: "# Payments\n\nCards settle in two days.\n",
                                      CYRILLIC: "# Payment rules\n\nThe bank sends statements at six.\n",
                                      "departments/hr/p\u0430yments.md": "# HR payments\n\nSalaries on the 25th.\n",
                                      "wiki/refunds.md": "# Refunds\n"})
    _rc, out = cli(root, "dedup", "--groups", "--json")
    families = [f for f in json.loads(out) if "lookalike" in f["signals"]]
    assert any({LATIN, CYRILLIC} <= set(f["pages"]) for f in families), out
    assert all("look-alike names" in f["reason"] for f in families)
    _rc, out = cli(root, "dedup", "--groups", "--signal", "lookalike")
    assert "look-alike names" in out, out
    _rc, out = cli(root, "--as", "agent:bob", "dedup", "--json")
    seen = {p for pair in json.loads(out) for p in (pair["keep"], pair["merge"])}
    assert "departments/hr/p\u0430yments.md" not in seen and {LATIN, CYRILLIC} <= seen, out
