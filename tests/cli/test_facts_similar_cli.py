"""``curator facts similar``: JSON shape, --page order, the actor's view, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curator.cli import main


def _wiki(root: Path) -> Path:
    (root / "private").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\n- Backups of the customer database are kept for thirty days.\n"
                               "- Paris is the capital city of France.\n")
    (root / "b.md").write_text("# B\n\nCustomer database backups are retained for 30 days.\n")
    (root / "private/c.md").write_text("# C\n\n- The customer database backups are kept thirty days long.\n")
    (root / ".scope.toml").write_text('[namespaces."private"]\nmode = "operator_only"\n'
                                      'visible_to_departments = ["finance"]\n')
    return root


def _run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--wiki", str(root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_similar_json_page_first_and_actor_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _wiki(tmp_path)
    code, out, err = _run(capsys, root, "facts", "similar", "--json")
    assert (code, err) == (0, "")
    groups = json.loads(out)
    assert len(groups) == 1 and set(groups[0]) == {"id", "score", "facts"}
    assert {(f["path"], f["line"]) for f in groups[0]["facts"]} == {("a.md", 3), ("b.md", 3), ("private/c.md", 3)}
    code, out, _ = _run(capsys, root, "facts", "similar", "--page", "b", "--json")
    page_groups = json.loads(out)
    assert page_groups[0]["facts"][0]["path"] == "b.md" and page_groups[0]["id"] == groups[0]["id"]
    code, out, _ = _run(capsys, root, "--as", "agent:bot", "facts", "similar", "--json")
    assert [f["path"] for f in json.loads(out)[0]["facts"]] in (["a.md", "b.md"], ["b.md", "a.md"])
    code, out, _ = _run(capsys, root, "facts", "similar")
    assert out.rstrip().endswith("1 group(s) of similar facts") and "private/c.md:3" in out


def test_similar_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _wiki(tmp_path)
    code, _out, err = _run(capsys, root, "facts", "similar", "--page", "nowhere")
    assert code != 0 and err.startswith("curator: error: no page 'nowhere'") and err.count("\n") == 1
    code, _out, err = _run(capsys, root, "facts", "similar", "--min-score", "7")
    assert code != 0 and "--min-score must be above 0" in err and "Traceback" not in err
