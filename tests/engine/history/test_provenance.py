"""Provenance (docs/design.md §14): blame per line through appends, property edits, inbox approvals, merges
and moves; the agent-range undo; visibility of blame, activity and injections."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from curator.cli import main
from curator.engine.errors import PageNotFound
from curator.engine.history.provenance import activity, blame, undo_agent
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.inbox import approve, list_items
from curator.engine.wiki import Wiki
from curator.engine.write.append import append
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.merge import merge_pages
from curator.engine.write.properties import set_property

IDENT = ["-c", "user.name=seeder", "-c", "user.email=s@t.invalid"]
POLICY = """\
[review]
layers = ["core"]
"""
PAGES = {
    "wiki/ann.md": "# Ann\n\n## Updates\n\n- Ann joined the company in 2019 as an engineer\n",
    "wiki/ann-smith.md": "# Ann Smith\n\n## Updates\n\n- Ann Smith speaks fluent Portuguese at work\n",
    "departments/finance/budget.md": "# Budget\n\n## Updates\n\n- The quokkafin reserve is ten percent\n",
}
DUDU = Actor("agent", "dudu")
MIMI = Actor("agent", "mimi")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / ".scope.toml").write_text(POLICY, encoding="utf-8")
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-qm", "seed")
    return root


def ok(result: Any) -> str:
    assert not result.is_error, result.message
    assert result.commit, result.message
    return str(result.commit)


def write_story(root: Path) -> dict[str, str]:
    """dudu appends, mimi appends, the operator makes the page core (property edit), then dudu's
    next fact is held by the review rule and the operator approves it."""
    wiki = Wiki(root)
    try:
        shas = {
            "dudu": ok(append(wiki, "ann", "Ann leads the payments team since March", [], False, DUDU)),
            "mimi": ok(append(wiki, "ann", "Ann prefers written status updates over calls", [], False, MIMI)),
            "layer": ok(set_property(wiki, OPERATOR, "ann", "layer", "core")),
        }
        held = append(wiki, "ann", "Ann mentors two junior engineers this year", [], False, DUDU)
        assert held.status == "pending", held.message
        item = list_items(wiki)[0]
        shas["approved"] = ok(approve(wiki, OPERATOR, item.id))
    finally:
        wiki.close()
    return shas


def by_text(lines: list[Any], needle: str) -> Any:
    hits = [b for b in lines if needle in b.text]
    assert len(hits) == 1, [b.text for b in lines]
    return hits[0]


def test_blame_attributes_every_bullet_through_append_property_and_inbox(root: Path) -> None:
    shas = write_story(root)
    wiki = Wiki(root)
    try:
        lines = blame(wiki, "ann")
    finally:
        wiki.close()
    seed = git(root, "log", "--format=%H", "--grep=^seed$").strip()
    joined = by_text(lines, "joined the company")
    assert (joined.actor, joined.commit, joined.reviewer) == ("seeder", seed, None)
    leads = by_text(lines, "leads the payments team")
    assert (leads.actor, leads.commit, leads.action, leads.reviewer) == (
        "agent:dudu", shas["dudu"], "wiki_append", None)
    prefers = by_text(lines, "prefers written status")
    assert (prefers.actor, prefers.commit) == ("agent:mimi", shas["mimi"])
    layer = by_text(lines, "layer: core")
    assert (layer.actor, layer.commit, layer.action) == ("operator", shas["layer"], "set_layer")
    mentors = by_text(lines, "mentors two junior")
    assert (mentors.actor, mentors.commit, mentors.reviewer) == ("agent:dudu", shas["approved"], "operator")
    assert mentors.date and mentors.date.endswith("Z")
    assert all(b.moved_by is None for b in lines)
    # the CLI's JSON carries the same answer, one object per line of the file
    code, out = cli(root, "blame", "ann", "--json")
    assert code == 0
    rows = json.loads(out)
    text = (root / "wiki/ann.md").read_text("utf-8")
    assert [r["text"] for r in rows] == text.splitlines()
    assert {r["actor"] for r in rows} >= {"seeder", "agent:dudu", "agent:mimi", "operator"}
    assert set(rows[0]) >= {"line", "text", "actor", "date", "commit", "action", "reviewer"}


def test_blame_keeps_original_authors_after_merge_into_another_page(root: Path) -> None:
    shas = write_story(root)
    wiki = Wiki(root)
    try:
        moved = ok(append(wiki, "ann-smith", "Ann Smith ran the Lisbon office opening", [], False, MIMI))
        merged = ok(merge_pages(wiki, "ann", "ann-smith", OPERATOR))
        lines = blame(wiki, "ann")
    finally:
        wiki.close()
    assert not (root / "wiki/ann-smith.md").exists()  # archived by the merge
    lisbon = by_text(lines, "Lisbon office opening")
    assert (lisbon.actor, lisbon.commit) == ("agent:mimi", moved)
    assert lisbon.moved_by is not None and lisbon.moved_by.commit == merged
    assert lisbon.moved_by.action == "merge" and lisbon.moved_by.actor == "operator"
    portuguese = by_text(lines, "fluent Portuguese")
    assert portuguese.actor == "seeder" and portuguese.moved_by is not None
    # the page's own bullets are unchanged by the merge
    leads = by_text(lines, "leads the payments team")
    assert (leads.actor, leads.commit, leads.moved_by) == ("agent:dudu", shas["dudu"], None)
    assert by_text(lines, "mentors two junior").reviewer == "operator"


def test_blame_follows_a_moved_page(root: Path) -> None:
    shas = write_story(root)
    wiki = Wiki(root)
    try:
        from curator.engine.write.move import move_page

        # the real `curator move`: the page moves and gains its old slug as an alias
        moved = ok(move_page(wiki, "wiki/ann.md", "people/ann.md", OPERATOR))
        wiki.refresh()
        lines = blame(wiki, "people/ann.md")
    finally:
        wiki.close()
    leads = by_text(lines, "leads the payments team")
    assert (leads.actor, leads.commit) == ("agent:dudu", shas["dudu"])
    assert leads.origin == "wiki/ann.md"
    assert leads.moved_by is not None and leads.moved_by.commit == moved
    assert by_text(lines, "prefers written status").actor == "agent:mimi"


def test_blame_marks_uncommitted_lines(root: Path) -> None:
    write_story(root)
    with (root / "wiki/ann.md").open("a", encoding="utf-8") as f:
        f.write("- An edit the operator has not committed yet\n")
    wiki = Wiki(root)
    try:
        lines = blame(wiki, "ann")
    finally:
        wiki.close()
    line = by_text(lines, "not committed yet")
    assert line.commit is None and line.actor is None
    assert by_text(lines, "leads the payments").actor == "agent:dudu"


def cli(root: Path, *args: str, actor: str = "operator", department: str | None = None) -> tuple[int, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    extra = ["--department", department] if department else []
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--wiki", str(root), "--as", actor, *extra, *args])
    return code, out.getvalue() + err.getvalue()


def test_agent_range_undo_removes_exactly_that_agents_facts(root: Path) -> None:
    write_story(root)
    before_text = (root / "wiki/ann.md").read_text("utf-8")
    code, out = cli(root, "activity", "--agent", "dudu", "--since", "2000-01-01", "--json")
    assert code == 0
    acts = json.loads(out)
    # the approval (authored by dudu, reviewed by the operator), the held item, the first append
    assert [a["action"] for a in acts] == ["wiki_append", "inbox_hold", "wiki_append"]
    assert all(a["actor"] == "agent:dudu" for a in acts)
    head = git(root, "rev-parse", "HEAD").strip()
    code, out = cli(root, "undo", "--agent", "dudu", "--since", "2000-01-01", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert answer["status"] == "reverted" and len(answer["reverted"]) == 3
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # ONE revert commit
    after = (root / "wiki/ann.md").read_text("utf-8")
    assert "leads the payments team" not in after and "mentors two junior" not in after
    assert "prefers written status updates" in after and "layer: core" in after
    assert "joined the company in 2019" in after
    # exactly the two bullets went: every other line is as it was
    gone = [line for line in before_text.splitlines() if line not in after.splitlines()]
    assert len(gone) == 2 and all("dudu" not in g for g in gone)
    body = git(root, "log", "-1", "--format=%B")
    assert body.count("This reverts commit") == 3
    # nothing left to undo for dudu
    code, out = cli(root, "undo", "--agent", "dudu", "--since", "2000-01-01")
    assert code == 1 and "nothing to undo" in out


def test_agent_range_undo_refuses_when_an_operator_later_edited_the_same_lines(root: Path) -> None:
    write_story(root)
    page = root / "wiki/ann.md"
    page.write_text(page.read_text("utf-8").replace("leads the payments team", "leads the billing team"),
                    encoding="utf-8")
    git(root, "commit", "-qam", "operator: fix Ann's team")
    before = page.read_bytes()
    head = git(root, "rev-parse", "HEAD").strip()
    code, out = cli(root, "undo", "--agent", "dudu", "--since", "2000-01-01")
    assert code == 1
    assert "wiki/ann.md" in out and "nothing was reverted" in out
    assert "Traceback" not in out
    assert page.read_bytes() == before and git(root, "rev-parse", "HEAD").strip() == head


def test_an_agent_may_not_undo_another_actors_writes(root: Path) -> None:
    write_story(root)
    head = git(root, "rev-parse", "HEAD").strip()
    code, out = cli(root, "undo", "--agent", "dudu", "--since", "2000-01-01", actor="agent:mimi")
    assert code == 1 and "may not undo" in out
    assert git(root, "rev-parse", "HEAD").strip() == head
    wiki = Wiki(root)
    try:
        assert undo_agent(wiki, MIMI, "operator", "2000-01-01").status == "denied"
        # its own writes: allowed, although dudu's approved bullet was appended right after
        # mimi's (touching lines are no conflict)
        res = undo_agent(wiki, MIMI, "mimi", "2000-01-01")
        assert res.status == "reverted"
        assert "prefers written status" not in (root / "wiki/ann.md").read_text("utf-8")
    finally:
        wiki.close()
    code, out = cli(root, "undo", "--agent", "dudu")
    assert code == 2 and "together" in out


def test_agents_cannot_blame_or_see_activity_of_hidden_pages(root: Path) -> None:
    finance = Actor("agent", "fin", "finance")
    wiki = Wiki(root)
    try:
        ok(append(wiki, "budget", "The reserve is reviewed every quarter", [], False, finance))
        ok(append(wiki, "ann", "Ann joined the finance offsite in June", [], False, finance))
        with pytest.raises(PageNotFound):
            blame(wiki, "departments/finance/budget.md", DUDU)
        assert blame(wiki, "departments/finance/budget.md", finance)
        seen = activity(wiki, "fin", DUDU)
        assert [e.paths for e in seen] == [["wiki/ann.md"]]
        assert len(activity(wiki, "fin", OPERATOR)) == 2
    finally:
        wiki.close()
    code, out = cli(root, "blame", "departments/finance/budget.md", actor="agent:dudu")
    assert code == 1 and "no page" in out and "quokkafin" not in out
    code, out = cli(root, "activity", "--agent", "fin", "--json", actor="agent:dudu")
    assert code == 0 and "departments/finance" not in out


def test_bad_dates_are_one_line_errors(root: Path) -> None:
    code, out = cli(root, "activity", "--agent", "dudu", "--since", "last tuesday")
    assert code == 2 and "invalid date" in out and "Traceback" not in out
    code, out = cli(root, "injections", "--since", "soon")
    assert code == 2 and "invalid date" in out
