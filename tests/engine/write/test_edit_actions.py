"""The operator's edits (engine): save is one ``edit:`` commit that never overwrites a change made
on disk since the text was opened (three-way merge instead), create from a link is append's
scaffold in one ``create:`` commit, and neither is a door around the policy for agents."""

from __future__ import annotations

import subprocess
from pathlib import Path

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.inbox import list_items
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from curator.engine.write.append import append
from curator.engine.write.edit import create_page, merge_edit, new_page_path, save_page
from tests.gui_helpers import make_wiki

AGENT = Actor("agent", "dudu")
PAGE = "wiki/refunds.md"
REFUNDS = ("---\ntitle: Refunds\nlayer: context\ntrust: 0.4\n---\n# Refunds\n\n## Rules\n\n"
           "Refunds within 30 days.\n\n## Updates\n\n- First fact (added 2024-01-01)\n")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def wiki_with(tmp_path: Path, pages: dict[str, str] | None = None) -> tuple[Path, Wiki]:
    root = make_wiki(tmp_path / "w", pages or {PAGE: REFUNDS, "wiki/home.md": "# Home\n\nSee [[Nowhere Yet]].\n"})
    return root, Wiki(root)


def test_save_is_one_edit_commit_by_the_operator_and_undoable(tmp_path: Path) -> None:
    root, wiki = wiki_with(tmp_path)
    n = commits(root)
    mine = REFUNDS.replace("within 30 days", "within 45 days")
    result = save_page(wiki, OPERATOR, PAGE, mine, base=REFUNDS)
    assert result.status == "saved" and result.commit and result.changed == [PAGE]
    assert (root / PAGE).read_text("utf-8") == mine
    assert commits(root) == n + 1
    assert git(root, "log", "-1", "--format=%s|%an") == f"edit: {PAGE}|operator"
    assert git(root, "show", "--name-only", "--format=", "HEAD") == PAGE
    assert wiki.pages[PAGE].snippet.startswith("Refunds within 45 days")  # the index follows
    again = save_page(wiki, OPERATOR, PAGE, mine, base=mine)
    assert again.status == "unchanged" and again.commit is None and commits(root) == n + 1
    assert undo(wiki, OPERATOR).ok
    assert (root / PAGE).read_text("utf-8") == REFUNDS


def test_save_after_an_agent_appended_never_overwrites_and_merges_both(tmp_path: Path) -> None:
    root, wiki = wiki_with(tmp_path)
    opened = (root / PAGE).read_text("utf-8")
    mine = opened.replace("Refunds within 30 days.", "Refunds within 30 days, 45 for members.")
    assert append(wiki, "refunds", "Chargebacks count as refunds", actor=AGENT).status == "appended"
    theirs = (root / PAGE).read_text("utf-8")
    n = commits(root)
    answer = save_page(wiki, OPERATOR, PAGE, mine, base=opened)
    assert answer.status == "conflict" and answer.commit is None and not answer.is_error
    assert (root / PAGE).read_text("utf-8") == theirs and commits(root) == n  # nothing written
    assert answer.data["theirs"] == theirs and answer.data["mine"] == mine and answer.data["base"] == opened
    assert answer.data["clean"] is True
    merged = answer.data["merged"]
    assert "45 for members" in merged and "- Chargebacks count as refunds" in merged
    assert "<<<<<<<" not in merged
    # keeping both: the merge saved against the version on disk now, one commit
    saved = save_page(wiki, OPERATOR, PAGE, merged, base=answer.data["theirs"])
    assert saved.status == "saved" and commits(root) == n + 1
    text = (root / PAGE).read_text("utf-8")
    assert "45 for members" in text and "- Chargebacks count as refunds" in text and "- First fact" in text


def test_overlapping_edits_are_a_conflict_with_markers_and_every_line(tmp_path: Path) -> None:
    root, wiki = wiki_with(tmp_path)
    mine = REFUNDS.replace("Refunds within 30 days.", "Refunds within 14 days.")
    (root / PAGE).write_text(REFUNDS.replace("Refunds within 30 days.", "Refunds within 60 days."), "utf-8")
    answer = save_page(wiki, OPERATOR, PAGE, mine, base=REFUNDS)
    assert answer.status == "conflict" and answer.data["clean"] is False
    merged = answer.data["merged"]
    assert "<<<<<<< ours" in merged and "14 days" in merged and "60 days" in merged
    assert "60 days" in (root / PAGE).read_text("utf-8") and "14 days" not in (root / PAGE).read_text("utf-8")


def test_merge_edit_keeps_facts_added_on_both_sides() -> None:
    mine = REFUNDS + "- Operator fact (added 2024-02-01)\n"
    theirs = REFUNDS + "- Agent fact (added 2024-02-02)\n"
    merged, clean = merge_edit(REFUNDS, mine, theirs)
    assert clean and "- Operator fact" in merged and "- Agent fact" in merged


def test_save_keeps_bom_and_crlf(tmp_path: Path) -> None:
    crlf = REFUNDS.replace("\n", "\r\n")
    root = make_wiki(tmp_path / "w", {PAGE: "\ufeff" + crlf})
    wiki = Wiki(root)
    lf = REFUNDS.replace("30 days", "31 days")  # the editor works in \n
    assert save_page(wiki, OPERATOR, PAGE, lf, base=REFUNDS).status == "saved"
    data = (root / PAGE).read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data[3:] == lf.replace("\n", "\r\n").encode()


def test_save_refuses_a_page_gone_or_not_utf8_in_one_line(tmp_path: Path) -> None:
    root, wiki = wiki_with(tmp_path)
    (root / "wiki/bad.md").write_bytes(b"# Bad \xff\xfe\n")
    git(root, "add", "wiki/bad.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bad")
    wiki.refresh()
    n = commits(root)
    bad = save_page(wiki, OPERATOR, "wiki/bad.md", "# Bad\n", base="# Bad \ufffd\ufffd\n")
    assert bad.status == "invalid" and "not valid UTF-8" in bad.message and "\n" not in bad.message
    assert (root / "wiki/bad.md").read_bytes() == b"# Bad \xff\xfe\n"
    (root / PAGE).unlink()
    gone = save_page(wiki, OPERATOR, PAGE, "x\n", base=REFUNDS)
    assert gone.is_error and not (root / PAGE).exists() and commits(root) == n


def test_agents_cannot_edit_or_create_through_the_operators_doors(tmp_path: Path) -> None:
    """An agent must write through append (limits, dedup, review): edit and create refuse it,
    including where the policy holds its new pages for review or makes a namespace operator-only."""
    pages = {PAGE: REFUNDS, "secret/plan.md": "# Plan\n\nTop secret.\n",
             ".scope.toml": '[review]\ncreate = true\n\n[namespaces.secret]\nmode = "operator_only"\n'}
    root, wiki = wiki_with(tmp_path, pages)
    n = commits(root)
    for actor in (AGENT, Actor("capability", "sync")):
        assert save_page(wiki, actor, PAGE, "overwritten\n", base=REFUNDS).status == "denied"
        assert save_page(wiki, actor, "secret/plan.md", "mine\n").status == "denied"
        assert create_page(wiki, actor, "Brand New").status == "denied"
    assert (root / PAGE).read_text("utf-8") == REFUNDS
    assert (root / "secret/plan.md").read_text("utf-8") == "# Plan\n\nTop secret.\n"
    assert not (root / "wiki/brand-new.md").exists() and not list_items(wiki)
    assert commits(root) == n
    # the operator may (operator_only is the operator's)
    assert save_page(wiki, OPERATOR, "secret/plan.md", "# Plan\n\nStill secret.\n").status == "saved"


def test_create_from_a_link_is_the_scaffold_and_resolves_the_link(tmp_path: Path) -> None:
    root, wiki = wiki_with(tmp_path)
    assert wiki.links.resolve("Nowhere Yet", "wiki/home.md").path is None
    n = commits(root)
    result = create_page(wiki, OPERATOR, "Nowhere Yet")
    assert result.status == "created" and result.data["page"] == "wiki/nowhere-yet.md"
    assert git(root, "log", "-1", "--format=%s|%an") == "create: wiki/nowhere-yet.md|operator"
    assert commits(root) == n + 1
    text = (root / "wiki/nowhere-yet.md").read_text("utf-8")
    assert "title: Nowhere Yet" in text and "\n# Nowhere Yet\n\n## Updates\n" in text
    assert "layer: deep" in text and "trust: 0.5" in text and "created:" in text
    assert wiki.links.resolve("Nowhere Yet", "wiki/home.md").path == "wiki/nowhere-yet.md"
    again = create_page(wiki, OPERATOR, "Nowhere Yet")
    assert again.status == "invalid" and "already exists" in again.message and commits(root) == n + 1
    # a chosen folder, a title that is not a slug (the link resolves by title)
    other = create_page(wiki, OPERATOR, "Ann's notes", folder="people/")
    assert other.data["page"] == "people/ann-s-notes.md"
    assert "title: Ann's notes" in (root / "people/ann-s-notes.md").read_text("utf-8")
    assert wiki.links.resolve("Ann's notes", "wiki/home.md").path == "people/ann-s-notes.md"
    assert create_page(wiki, OPERATOR, "!!!").status == "invalid"
    assert create_page(wiki, OPERATOR, "escape", folder="../outside").status == "invalid"
    assert not (tmp_path / "outside").exists()


def test_new_page_path_follows_the_link(tmp_path: Path) -> None:
    _root, wiki = wiki_with(tmp_path)
    assert new_page_path(wiki, "Nowhere Yet") == "wiki/nowhere-yet.md"
    assert new_page_path(wiki, "Nowhere Yet#Section|shown") == "wiki/nowhere-yet.md"
    assert new_page_path(wiki, "projects/Big Plan") == "projects/big-plan.md"
    assert new_page_path(wiki, "Big Plan", "") == "big-plan.md"


def test_facts_appended_below_an_edited_last_paragraph_merge_cleanly(tmp_path: Path) -> None:
    """The first append to a page adds ``## Updates`` right below its last paragraph: an edit of
    that paragraph and the agent's facts touch adjacent lines, yet both are kept, no markers."""
    page = "---\ntitle: Refunds\nupdated: 2024-01-01\n---\n# Refunds\n\nRefunds within 30 days.\n"
    root, wiki = wiki_with(tmp_path, {PAGE: page})
    mine = page.replace("within 30 days.", "within 30 days, 45 for members.")
    assert append(wiki, "refunds", "Chargebacks count as refunds", actor=AGENT).ok
    assert append(wiki, "refunds", "Refund fees are waived for members", actor=AGENT).ok
    theirs = (root / PAGE).read_text("utf-8")
    answer = save_page(wiki, OPERATOR, PAGE, mine, base=page)
    assert answer.status == "conflict" and answer.data["clean"] is True
    merged = answer.data["merged"]
    assert "<<<<<<<" not in merged and "45 for members" in merged
    assert merged.index("- Chargebacks") < merged.index("- Refund fees") and "## Updates" in merged
    assert "updated: 2024-01-01" not in merged and theirs.split("updated: ")[1][:10] in merged
    # an edit on disk that is not an append is never replayed: it stays a conflict to resolve
    edited = page.replace("within 30 days.", "within 60 days.")
    assert merge_edit(page, mine, edited)[1] is False


def test_an_agents_first_append_adding_updated_merges_cleanly(tmp_path: Path) -> None:
    page = "---\ntitle: Refunds\n---\n# Refunds\n\nRefunds within 30 days.\n"
    _root, wiki = wiki_with(tmp_path, {PAGE: page})
    mine = page.replace("30 days.", "30 days, 45 for members.")
    assert append(wiki, "refunds", "Chargebacks count as refunds", actor=AGENT).ok
    answer = save_page(wiki, OPERATOR, PAGE, mine, base=page)
    assert answer.data["clean"] is True
    merged = answer.data["merged"]
    assert "45 for members" in merged and "- Chargebacks count as refunds" in merged
    assert "\nupdated: " in merged.split("---")[1]  # as the agent's append left it
