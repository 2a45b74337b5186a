"""``curator facts stale | verify | retire`` (issue 41): the JSON shape the issue names, one
commit per decision, an agent refused, bad input a one-line error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.write.bootstrap import init_wiki


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    # Dates far in the past: stale on whatever day the test runs.
    (root / "wiki/now.md").write_text("---\nlayer: context\n---\n- The lobby door code is 4711 today (added 2001-02-03)\n"
                                      "- Parking moves to the north lot (added 2001-02-04)\n", encoding="utf-8")
    (root / "wiki/old.md").write_text("---\ntitle: Old rules\nlayer: core\nvalid_until: 2001-01-01\n---\nThe old rules still apply here.\n",
                                      encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed"], cwd=root, check=True)
    return root


def stale(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, "--wiki", str(root), *extra, "facts", "stale", "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert isinstance(data, list)
    return data


def test_stale_json_shape_then_verify_and_retire(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = stale(capsys, root)
    assert [list(r) for r in rows] == [["id", "path", "line", "text", "due", "why"]] * 3
    assert rows[0] == {"id": rows[0]["id"], "path": "wiki/old.md", "line": 1, "text": "Old rules",
                       "due": "2001-01-01", "why": "page valid_until 2001-01-01"}
    door = next(r for r in rows if str(r["text"]).startswith("The lobby"))
    assert door["due"] == "2001-03-05" and door["line"] == 4
    code, out, err = run(capsys, "--wiki", str(root), "facts", "verify", str(door["id"]))
    assert code == 0 and out.startswith("ok: verified wiki/now.md:4"), (out, err)
    assert door["id"] not in {r["id"] for r in stale(capsys, root)}
    parking = next(r for r in rows if str(r["text"]).startswith("Parking"))
    code, out, _ = run(capsys, "--wiki", str(root), "facts", "retire", str(parking["id"]), "--reason", "lot closed")
    assert code == 0, out
    assert "Parking" not in (root / "wiki/now.md").read_text("utf-8")
    log = subprocess.run(["git", "log", "--format=%s|%b", "-2"], cwd=root, capture_output=True, text=True).stdout
    assert log.startswith(f"retire: {parking['id']}|Reason: lot closed") and f"verify: {door['id']}" in log


def test_an_agent_is_refused_and_bad_input_is_one_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    [row, *_] = stale(capsys, root, "--as", "agent:bot")
    code, out, err = run(capsys, "--wiki", str(root), "--as", "agent:bot", "facts", "verify", str(row["id"]))
    assert code == 1 and out.startswith("denied: ") and out.count("\n") == 1, (out, err)
    code, out, err = run(capsys, "--wiki", str(root), "facts", "retire", "nope", "--reason", "x")
    assert code == 1 and out.startswith("invalid: no stale fact") and "Traceback" not in out + err
    code, out, err = run(capsys, "--wiki", str(root), "--json", "facts", "verify", "nope")
    assert code == 1 and json.loads(out)["status"] == "invalid"


def test_context_leaves_the_expired_page_out_and_says_so_on_stderr(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--wiki", str(root), "context", "--agent", "bot", "--no-record")
    assert code == 0 and "old rules" not in out.lower()
    assert err == "[1 page was left out: past valid_until, no longer vouched for (the operator's stale queue lists it)]\n"
    code, out, _ = run(capsys, "--wiki", str(root), "--json", "context", "--agent", "bot", "--no-record")
    assert json.loads(out)["notice"].startswith("[1 page was left out")
