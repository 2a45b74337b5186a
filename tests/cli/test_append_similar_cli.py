"""``curator append`` at the door by meaning (issue 41): once the fact index exists every answer
lists the three facts closest in meaning anywhere in the wiki (only from pages the writer may
see); without one the answer says so and nothing builds it; a fact the page already states in
other words is a duplicate (no index needed), a different fact on the same subject is appended."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.facts.door import NOT_BUILT, PARAPHRASE_MIN
from curator.engine.facts.index import INDEX_NAME
from tests.engine.facts.planted import DISTRACTORS, PARAPHRASES
from tests.gui_helpers import make_wiki

BACKUPS, BACKUPS_REWORDED = PARAPHRASES[3]  # scores 0.85 with the local model
POSTGRES = DISTRACTORS[3]  # the same subject (the customer database), another fact
PAGES = {
    "wiki/backups.md": f"# Backups\n\n- {BACKUPS}\n- The office printer is on the second floor.\n",
    "wiki/ops.md": "# Ops\n\n- Deployments happen on Tuesdays.\n",
    "wiki/garden.md": "# Garden\n\n- The garden needs watering twice a week in summer.\n",
    "departments/hr/records.md": "# Records\n\n- Backups of the staff records database are kept for thirty days.\n",
}


def run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> dict[str, object]:
    capsys.readouterr()
    code = main(["--wiki", str(root), *argv, "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    answer: dict[str, object] = json.loads(out)
    return answer


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout)


def index_file(root: Path) -> Path:
    return root / ".curator" / INDEX_NAME


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_wiki(tmp_path / "w", PAGES)


@pytest.fixture
def indexed(capsys: pytest.CaptureFixture[str], root: Path) -> Path:
    run(capsys, root, "facts", "similar")  # what builds the index on disk
    assert index_file(root).is_file()
    return root


def test_without_a_fact_index_append_says_so_and_builds_none(capsys: pytest.CaptureFixture[str],
                                                             root: Path) -> None:
    answer = run(capsys, root, "--as", "agent:bob", "append", "ops", BACKUPS_REWORDED)
    assert answer["status"] == "appended", answer
    assert (answer["similar"], answer["similar_note"]) == ([], NOT_BUILT)
    assert not index_file(root).exists()


def test_append_answers_the_three_closest_facts_the_writer_may_see(capsys: pytest.CaptureFixture[str],
                                                                   indexed: Path) -> None:
    answer = run(capsys, indexed, "--as", "agent:bob", "append", "ops", BACKUPS_REWORDED)
    assert answer["status"] == "appended" and "similar_note" not in answer, answer
    similar = answer["similar"]
    assert isinstance(similar, list) and len(similar) == 3, similar
    assert all(set(s) == {"path", "line", "text", "score"} for s in similar)
    assert (similar[0]["path"], similar[0]["line"], similar[0]["text"]) == ("wiki/backups.md", 3, BACKUPS)
    assert similar[0]["score"] >= PARAPHRASE_MIN
    # an agent of no department never gets the HR page's fact, close as it is
    assert not any(s["path"].startswith("departments/") for s in similar), similar
    assert [s["score"] for s in similar] == sorted((s["score"] for s in similar), reverse=True)
    # the operator sees it (it is the second closest), and never the fact just written
    answer = run(capsys, indexed, "append", "garden", BACKUPS_REWORDED + " Really.")
    paths = [s["path"] for s in answer["similar"]]  # type: ignore[union-attr]
    assert "departments/hr/records.md" in paths, answer
    assert BACKUPS_REWORDED + " Really." not in [s["text"] for s in answer["similar"]]  # type: ignore[union-attr]


@pytest.mark.parametrize("with_index", [False, True])
def test_a_same_page_paraphrase_is_a_duplicate_and_nothing_is_written(
        capsys: pytest.CaptureFixture[str], root: Path, with_index: bool) -> None:
    if with_index:
        run(capsys, root, "facts", "similar")
    before, page = commits(root), (root / "wiki/backups.md").read_bytes()
    answer = run(capsys, root, "--as", "agent:bob", "append", "backups", BACKUPS_REWORDED)
    assert answer["status"] == "duplicate", answer
    assert answer["matched"] == BACKUPS and "already says" in str(answer["message"])
    assert (root / "wiki/backups.md").read_bytes() == page and commits(root) == before
    assert index_file(root).exists() == with_index  # the check needs no index
    if with_index:
        assert answer["similar"] and answer["similar"][0]["text"] == BACKUPS  # type: ignore[index]


def test_another_fact_on_the_same_subject_is_appended(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    before = commits(root)
    answer = run(capsys, root, "append", "backups", POSTGRES)
    assert answer["status"] == "appended", answer
    assert POSTGRES in (root / "wiki/backups.md").read_text(encoding="utf-8") and commits(root) == before + 1


def test_the_human_answer_lists_them_too(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    capsys.readouterr()
    assert main(["--wiki", str(indexed), "append", "ops", BACKUPS_REWORDED]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "appended: appended to wiki/ops.md" and out[1] == "closest in meaning elsewhere:"
    assert out[2].startswith("  wiki/backups.md:3 (0.8") and out[2].endswith(BACKUPS), out
    assert len(out) == 5, out
