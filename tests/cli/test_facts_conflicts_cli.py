"""``curator facts conflicts | resolve`` (issue 41): facts close in meaning that disagree where it
matters, through the command line on a real wiki with the local model; the operator's decision is
one commit and ``both`` is never reported again; an agent neither sees a hidden fact nor decides."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.corpus.state import state_dir_for
from tests.engine.facts.fake_chat import configure, serving
from tests.gui_helpers import make_wiki

PAGES = {
    "wiki/refunds.md": "# Refunds\n\n- The refund window for card payments is 30 days.\n"
                       "- Refunds are paid back to the original card.\n",
    "wiki/support.md": "# Support\n\n- The refund window for card payments is 14 days.\n"
                       "- Support answers within one business day.\n",
    "departments/hr/leave.md": "# Leave\n\n- The refund window for card payments is 60 days.\n",
}


def run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--wiki", str(root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def conflicts(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, root, *extra, "facts", "conflicts", "--json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", PAGES)


def test_conflicts_name_the_difference_and_keep_one_removes_the_other(capsys: pytest.CaptureFixture[str],
                                                                      root: Path) -> None:
    found = conflicts(capsys, root)
    pair = next(c for c in found if {f["path"] for f in c["facts"]} == {"wiki/refunds.md", "wiki/support.md"})
    assert set(pair) == {"id", "score", "reason", "facts"}
    assert "30 days" in pair["reason"] and "14 days" in pair["reason"], pair
    # an agent of no department never sees the HR page's fact
    seen = {f["path"] for c in conflicts(capsys, root, "--as", "agent:bob") for f in c["facts"]}
    assert "departments/hr/leave.md" not in seen and "wiki/refunds.md" in seen
    code, out, _ = run(capsys, root, "--as", "agent:bob", "facts", "resolve", str(pair["id"]), "--keep", "1")
    assert code == 1 and "denied" in out
    before = commits(root)
    keep_first = pair["facts"][0]["path"]
    other = pair["facts"][1]
    code, out, _ = run(capsys, root, "facts", "resolve", str(pair["id"])[:8], "--keep", "1")
    assert code == 0, out
    assert commits(root) == before + 1
    assert other["text"] not in (root / str(other["path"])).read_text(encoding="utf-8")
    assert str(pair["facts"][0]["text"]) in (root / str(keep_first)).read_text(encoding="utf-8")
    body = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=root, capture_output=True, text=True).stdout
    assert f"Curator-Conflict: {pair['id']}" in body


def test_both_true_is_remembered(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    pair = next(c for c in conflicts(capsys, root)
                if {f["path"] for f in c["facts"]} == {"wiki/refunds.md", "wiki/support.md"})
    code, out, _ = run(capsys, root, "facts", "resolve", str(pair["id"]), "--keep", "both")
    assert code == 0, out
    assert all(c["id"] != pair["id"] for c in conflicts(capsys, root))
    assert (root / ".curator-fact-decisions.json").exists()
    code, _out, err = run(capsys, root, "facts", "resolve", "ffffffffffff", "--keep", "both")
    assert code != 0 and err.count("\n") == 1 and "no conflict" in err


JUDGED_PAGES = {**PAGES,
                "wiki/desktop.md": "# Desktop\n\n- Telemetry is enabled in the desktop build.\n",
                "wiki/privacy.md": "# Privacy\n\n- Telemetry is disabled in the desktop build.\n"}


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}


def test_the_judge_verdict_is_shown_never_applied(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", JUDGED_PAGES)
    before, pages = commits(root), tree(root)
    plain = conflicts(capsys, root)
    with serving() as chat:
        configure(state_dir_for(root), chat)
        code, out, err = run(capsys, root, "facts", "conflicts", "--judge")
        assert (code, err) == (0, ""), err
        assert "judge (tiny-model): dismiss — different builds" in out
        assert "judge (tiny-model): confirm — a refund window cannot be both" in out
        # each verdict sits under its own conflict
        telemetry = out.split("enabled vs disabled")[1].split("conflict ")[0]
        assert "judge (tiny-model): dismiss" in telemetry, out
        code, out, _ = run(capsys, root, "facts", "conflicts", "--judge", "--json")
        judged = json.loads(out)
        # a dismissed conflict stays listed: the same conflicts, in the same order
        assert [c["id"] for c in judged] == [c["id"] for c in plain] and len(plain) >= 2
        dismissed = next(c for c in judged if c["reason"] == "enabled vs disabled")
        assert dismissed["judge"] == {"verdict": "dismiss", "why": "different builds", "model": "tiny-model"}
        asked = len(chat.requests)
        code, out, _ = run(capsys, root, "facts", "conflicts", "--judge", "--top", "1", "--json")
        top = json.loads(out)
        assert code == 0 and len(chat.requests) == asked + 1
        assert "judge" in top[0] and all("judge" not in c for c in top[1:])
    assert commits(root) == before and tree(root) == pages  # nothing applied
    assert git_status(root) == ""  # the settings (with their key) live outside the wiki's tree


def git_status(root: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_a_missing_or_failing_judge_is_one_line(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, out, err = run(capsys, root, "facts", "conflicts", "--judge")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "facts-judge.json" in err and str(state_dir_for(root)) in err
    code, _out, err = run(capsys, root, "facts", "conflicts", "--top", "3")
    assert code == 2 and err.count("\n") == 1 and "--top N goes with --judge" in err
    with serving() as chat:
        configure(state_dir_for(root), chat)
        code, _out, err = run(capsys, root, "facts", "conflicts", "--judge", "--top", "0")
        assert code == 2 and "must be 1 or more" in err
        chat.status = 500
        code, out, err = run(capsys, root, "facts", "conflicts", "--judge")
        assert (code, out) == (1, "") and err.count("\n") == 1 and "answered HTTP 500" in err, err
        port = chat.server.server_address[1]
    code, out, err = run(capsys, root, "facts", "conflicts", "--judge")
    assert (code, out) == (1, "") and err.count("\n") == 1, err
    assert f"cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions" in err
    (state_dir_for(root) / "facts-judge.json").write_text("{oops", encoding="utf-8")
    code, _out, err = run(capsys, root, "facts", "conflicts", "--judge")
    assert code == 2 and err.count("\n") == 1 and "facts-judge.json: not valid JSON" in err, err


def test_the_help_names_the_judges_default() -> None:
    """The parser says the judge's default without importing the engine for it: the two agree."""
    from curator.commands import facts as facts_command
    from curator.engine.facts.judge import DEFAULT_TOP

    assert facts_command._JUDGE_TOP == DEFAULT_TOP
