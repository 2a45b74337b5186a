"""Move, rename and archive (docs/design.md §9): every link form re-pointed with its text kept, old names
kept as aliases, one commit, undo exact; renames done outside found by lint and repaired; the
scope policy holds for every path; a seeded property test over 500 random moves."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from curator.engine.errors import PageNotFound
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.lint import lint
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.move import archive_page, move_page, plan_move, preview_move, repair_move
from tests.engine.write.test_curation_merge import (
    _link,
    _page_text,
    _pages,
    _resolved,
    commit_all,
    git,
    shown,
    snapshot,
)

TARGET = """---
title: Tide Tables
aliases: [Tides]
---
# Tide Tables

Back to [[harbour]] and [the harbour](../harbour.md), [[tide-tables#Spring|spring tides]] here.

## Spring

High water.
"""

LINKER = """---
title: Linker
related: [tide-tables, "[[wiki/data/tide-tables]]"]
up: "[[Tides]]"
---
# Linker

By stem [[tide-tables]], title [[Tide Tables]], alias [[Tides]], path [[wiki/data/tide-tables]],
anchor [[tide-tables#Spring]], text [[tide-tables|the tables]], embed ![[tide-tables]],
markdown [tables](../wiki/data/tide-tables.md#spring).

| t | [[tide-tables]] |

```
[[tide-tables]] in code stays
```
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki/data").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "locked").mkdir()
    (root / "wiki/data/tide-tables.md").write_text(TARGET, encoding="utf-8")
    (root / "wiki/harbour.md").write_text("# Harbour\n\nSee [[Tide Tables]].\n", encoding="utf-8")
    (root / "notes/linker.md").write_text(LINKER, encoding="utf-8")
    (root / "locked/secret.md").write_text("# Secret\n\nOperator notes.\n", encoding="utf-8")
    (root / ".scope.toml").write_text('[namespaces."locked"]\nmode = "operator_only"\n', encoding="utf-8")
    commit_all(root)
    return root


def test_move_rewrites_every_link_form_keeps_text_one_commit_undo_exact(root: Path) -> None:
    before = snapshot(root)
    head = git(root, "rev-parse", "HEAD").strip()
    texts = {p: shown(t.decode("utf-8")) for p, t in before.items() if p.endswith(".md")}
    wiki = Wiki(root)
    plan = preview_move(wiki, "tide-tables", "reference/tides-2026")
    assert snapshot(root) == before and plan.new == "reference/tides-2026.md"
    result = move_page(wiki, "tide-tables", "reference/tides-2026")
    assert result.status == "moved", result.message
    assert not (root / "wiki/data/tide-tables.md").exists()
    moved = (root / "reference/tides-2026.md").read_text(encoding="utf-8")
    assert "aliases: [Tides, tide-tables]" in moved
    assert "Back to [[harbour]] and [the harbour](../wiki/harbour.md)" in moved  # re-based
    assert "[[tides-2026#Spring|spring tides]]" in moved
    linker = (root / "notes/linker.md").read_text(encoding="utf-8")
    assert "By stem [[tides-2026|tide-tables]], title [[tides-2026|Tide Tables]], alias [[tides-2026|Tides]]" in linker
    assert "path [[reference/tides-2026|wiki/data/tide-tables]]" in linker
    assert "[[tides-2026#Spring|tide-tables › Spring]]" in linker and "![[tides-2026|tide-tables]]" in linker
    assert "[tables](../reference/tides-2026.md#spring)" in linker
    assert "| t | [[tides-2026\\|tide-tables]] |" in linker
    assert "```\n[[tide-tables]] in code stays\n```" in linker
    assert "related: [tides-2026, '[[reference/tides-2026]]']" in linker
    assert 'up: "[[tides-2026|Tides]]"' in linker  # edited in place, quoting kept
    # every page shows the same link texts; every link resolves to the new path
    after = snapshot(root)
    for path, data in after.items():
        if path.endswith(".md") and path != "reference/tides-2026.md":
            assert shown(data.decode("utf-8")) == texts[path], path
    assert shown(moved) == texts["wiki/data/tide-tables.md"]
    wiki.refresh()
    assert {e.source for e in wiki.links.backlinks("reference/tides-2026.md")} == {"notes/linker.md",
                                                                                   "wiki/harbour.md"}
    linker_edges = [e for e in wiki.links.outgoing["notes/linker.md"]]
    assert len(linker_edges) == 12 and all(e.target == "reference/tides-2026.md" for e in linker_edges)  # up: too
    assert all(e.target == "wiki/harbour.md" for e in wiki.links.outgoing["reference/tides-2026.md"]
               if e.link.kind != "wikilink" or e.link.target != "tides-2026")
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(root, "log", "-1", "--format=%s").strip() == \
        "move: wiki/data/tide-tables.md -> reference/tides-2026.md"
    assert git(root, "status", "--porcelain").strip() == ""
    assert undo(wiki, OPERATOR).status == "reverted"
    assert snapshot(root) == before


def test_move_refuses_bad_destinations(root: Path) -> None:
    wiki = Wiki(root)
    before = snapshot(root)
    for dest, words in (("wiki/harbour.md", "exists"), ("../out.md", "relative"), ("_archive/x.md", "excluded"),
                        ("wiki/data/tide-tables", "already there"), ("", "new path")):
        result = move_page(wiki, "tide-tables", dest)
        assert result.status == "invalid" and words in result.message, (dest, result.message)
    assert snapshot(root) == before


def test_move_into_a_folder_keeps_the_name_and_renames_case(root: Path) -> None:
    wiki = Wiki(root)
    assert move_page(wiki, "wiki/harbour.md", "notes/").status == "moved"
    assert (root / "notes/harbour.md").exists()
    moved = (root / "wiki/data/tide-tables.md").read_text(encoding="utf-8")
    assert "[the harbour](../../notes/harbour.md)" in moved and "[[harbour]]" in moved


def test_archive_moves_to_archive_and_lists_linking_pages(root: Path) -> None:
    before = snapshot(root)
    wiki = Wiki(root)
    result = archive_page(wiki, "tide-tables")
    assert result.status == "archived", result.message
    assert result.data["linking"] == ["notes/linker.md", "wiki/harbour.md"]
    assert (root / "_archive/wiki/data/tide-tables.md").read_text(encoding="utf-8") == TARGET
    wiki.refresh()
    assert wiki.links.resolve("tide-tables").path is None  # now "not yet written"
    assert undo(wiki, OPERATOR).status == "reverted" and snapshot(root) == before


def test_agents_cannot_move_or_archive_around_the_policy(root: Path) -> None:
    before = snapshot(root)
    wiki = Wiki(root)
    agent = Actor("agent", "dudu")
    into = move_page(wiki, "harbour", "locked/harbour.md", agent)
    assert into.status == "denied" and "locked/harbour.md" in into.message
    (root / "locked/secret.md").write_text("# Secret\n\nSee [[harbour]].\n", encoding="utf-8")
    commit_all(root, "link from locked")
    before = snapshot(root)
    wiki.refresh()
    # the move would rewrite a link inside locked/: the whole action is refused
    assert move_page(wiki, "harbour", "wiki/port.md", agent).status == "denied"
    assert archive_page(wiki, "locked/secret.md", agent).status == "denied"
    assert repair_move(wiki, "wiki/old-harbour.md", "harbour", agent).status in ("denied", "unchanged")
    assert snapshot(root) == before
    assert move_page(wiki, "harbour", "wiki/port.md", OPERATOR).status == "moved"


def test_hidden_pages_cannot_be_moved_by_an_agent_that_cannot_see_them(tmp_path: Path) -> None:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "departments/legal").mkdir(parents=True)
    (root / "departments/legal/contract.md").write_text("# Contract\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    with pytest.raises(PageNotFound):
        move_page(wiki, "contract", "wiki/contract.md", Actor("agent", "dudu", "sales"))
    with pytest.raises(PageNotFound):
        archive_page(wiki, "contract", Actor("agent", "dudu", "sales"))
    assert (root / "departments/legal/contract.md").exists()


def test_rename_outside_is_reported_by_lint_and_repaired_in_one_command(root: Path) -> None:
    git(root, "mv", "wiki/data/tide-tables.md", "wiki/data/tides.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "renamed by an agent")
    wiki = Wiki(root)
    moved = [i for i in lint(wiki) if i.code == "moved-target"]
    assert {i.path for i in moved} == {"notes/linker.md"}
    assert "curator move --repair wiki/data/tide-tables.md wiki/data/tides.md" in moved[0].message
    head = git(root, "rev-parse", "HEAD").strip()
    result = repair_move(wiki, "wiki/data/tide-tables.md", "wiki/data/tides.md")
    assert result.status == "repaired", result.message
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    linker = (root / "notes/linker.md").read_text(encoding="utf-8")
    # links by path broke (by title and alias they still resolve): those are re-pointed
    assert "path [[wiki/data/tides|wiki/data/tide-tables]]" in linker
    assert "[tables](../wiki/data/tides.md#spring)" in linker
    assert shown(linker) == shown(LINKER)
    wiki.refresh()
    assert not [i for i in lint(wiki) if i.code in ("moved-target", "unresolved-link")]
    assert "tide-tables" in (root / "wiki/data/tides.md").read_text(encoding="utf-8")  # old slug: an alias


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_move_archive_repair_and_errors(root: Path) -> None:
    code, out, _ = cli(root, "move", "tide-tables", "reference/tides", "--preview")
    assert code == 0 and "[[tides|Tide Tables]]" in out and (root / "wiki/data/tide-tables.md").exists()
    code, out, _ = cli(root, "move", "tide-tables", "reference/tides", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "moved" and data["new"] == "reference/tides.md"
    assert "notes/linker.md" in data["pages_rewritten"]
    code, out, err = cli(root, "move", "harbour", "reference/tides.md")
    assert code == 1 and out.startswith("invalid: ") and "exists" in out and "Traceback" not in err
    code, out, err = cli(root, "move", "no-such-page", "x")
    assert code == 1 and err.startswith("curator: error:") and "Traceback" not in err
    code, out, _ = cli(root, "archive", "harbour", "--json")
    assert code == 0 and json.loads(out)["archive"] == "_archive/wiki/harbour.md"
    code, out, _ = cli(root, "move", "--repair", "wiki/nowhere.md", "reference/tides.md")
    assert code == 0 and "nothing to repair" in out
    code, out, _ = cli(root, "move", "--repair", "reference/tides.md", "notes/linker.md")
    assert code == 1 and "still exists" in out
    code, out, _ = cli(root, "move", "--help")
    assert code == 0 and "--repair" in out


def test_move_resolves_a_bare_name_from_each_linking_page_s_folder(tmp_path: Path) -> None:
    """Two pages share the name ``x``: ``[[x]]`` means the one beside the linking page (and, at the
    root, the first by path). Moving ``a/x.md`` re-points exactly the links that meant it, although
    every linking page writes the same ``[[x]]`` (``b/linker.md`` links both pages)."""
    root = tmp_path / "w"
    init_wiki(root)
    for folder in ("a", "b"):
        (root / folder).mkdir()
        (root / folder / "x.md").write_text(f"# X in {folder}\n", encoding="utf-8")
        (root / folder / "linker.md").write_text("# Linker\n\nSee [[x]].\n", encoding="utf-8")
    (root / "b/linker.md").write_text("# Linker\n\nSee [[x]] and [[a/x|the other]].\n", encoding="utf-8")
    (root / "top.md").write_text("# Top\n\nSee [[x]].\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    result = move_page(wiki, "a/x.md", "c/y.md")
    assert result.status == "moved", result.message
    assert sorted(result.data["pages_rewritten"]) == ["a/linker.md", "b/linker.md", "top.md"]
    assert (root / "a/linker.md").read_text(encoding="utf-8") == "# Linker\n\nSee [[y|x]].\n"
    assert (root / "top.md").read_text(encoding="utf-8") == "# Top\n\nSee [[y|x]].\n"
    assert (root / "b/linker.md").read_text(encoding="utf-8") == \
        "# Linker\n\nSee [[x]] and [[c/y|the other]].\n"
    wiki.refresh()
    assert {e.source for e in wiki.links.backlinks("c/y.md")} == {"a/linker.md", "b/linker.md", "top.md"}
    assert {e.source for e in wiki.links.backlinks("b/x.md")} == {"b/linker.md"}
    wiki.close()


# --- the property test ----------------------------------------------------------------------------

def test_property_move_leaves_every_link_resolved_to_the_new_path() -> None:
    rng = random.Random(1515)
    for case in range(500):
        old = f"{rng.choice(['wiki/', 'wiki/a/', ''])}page-{case}.md"
        new = f"{rng.choice(['moved/', 'wiki/b/deep/', '', 'wiki/'])}{rng.choice(['renamed', 'page'])}-{case}.md"
        stub = _pages({old: "---\ntitle: Moving Page\naliases: [Mover]\n---\n", "wiki/anchor.md": "# Anchor\n"})
        files = {old: _page_text(rng, "Moving Page", [_link(rng, stub[old], "wiki/"),
                                                     _link(rng, stub["wiki/anchor.md"], old)], "Mover"),
                 "wiki/anchor.md": "# Anchor\n\nPlain.\n"}
        for j in range(rng.randint(1, 4)):
            folder = rng.choice(["", "wiki/", "x/y/"])
            files[f"{folder}q{j}.md"] = _page_text(rng, f"Q{j}", [_link(rng, stub[old], folder) for _ in range(3)]
                                                   + [_link(rng, stub["wiki/anchor.md"], folder)], None)
        index, before = _resolved(files)
        page = index.pages[old]
        plan = plan_move(SimpleNamespace(links=index), page, new,  # type: ignore[arg-type]
                         lambda p, files=files: (files[p], False))
        after = {p: t for p, t in files.items() if p != old}
        after.update({p: t for p, (t, _bom) in plan.writes.items()})
        after[new] = plan.moved_text
        _, resolved = _resolved(after)
        for path, links in resolved.items():
            was = before[old if path == new else path]
            assert [t for _, t in links] == [t for _, t in was], (case, path)  # same texts shown
            expected = [new if target == old else target for target, _ in was]
            assert [target for target, _ in links] == expected, (case, path)  # same pages, new path


@pytest.mark.parametrize("per_call", [500, 2])
def test_show_many_reads_what_show_reads(root: Path, monkeypatch: pytest.MonkeyPatch, per_call: int) -> None:
    """Undo reads every version of a big merge or move with one git call (``show_many``), and a
    follow of the duplicate index each changed page's text at its basis: the same bytes as
    ``show`` for files, None for a folder, a missing path or an unknown commit, a name with
    pathspec characters read literally (``per_call``: paths named on one ``ls-tree``)."""
    from curator.engine.repo import git as git_module
    from curator.engine.write.actions import git_of

    monkeypatch.setattr(git_module, "SHOW_MANY_PATHS", per_call)
    (root / "wiki/naïve name.md").write_text("# Naïve\n", encoding="utf-8")
    (root / "wiki/a*.md").write_text("# Star\n", encoding="utf-8")
    (root / "wiki/ab.md").write_text("# Not the star\n", encoding="utf-8")
    commit_all(root, "odd names")
    g = git_of(Wiki(root))
    head, parent = g.resolve("HEAD"), g.resolve("HEAD~1")
    assert head and parent
    paths = ("wiki/naïve name.md", "wiki/harbour.md", "nope.md", "wiki", "wiki/a*.md", "wiki/ab.md", "wiki/a?.md")
    wanted = [(c, p) for c in (head, parent, "0" * 40) for p in paths] + [(head, "wiki/harbour.md")]
    found = g.show_many(wanted)
    assert found == {key: g.show(*key) for key in wanted}
    assert found[(head, "wiki/a*.md")] == b"# Star\n" and found[(parent, "wiki/a*.md")] is None
    # a "commit" that reads as an option is a name git does not know, never an option
    dropped = root.parent / "dropped.txt"
    assert g.show_many([(f"--output={dropped}", "wiki/harbour.md")]) == {(f"--output={dropped}", "wiki/harbour.md"): None}
    assert not dropped.exists()


def test_the_rename_log_is_asked_of_git_once_per_commit_and_after_one_only_for_the_new_commits(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git finds the last 50 commits with a rename by diffing commits back until it has them (a
    wiki with few renames: its whole history). The log is kept with the commit it was read at:
    asked again there, git is not asked; after commits on top without a merge, only for those;
    across a merge, or after history was rewritten, whole again. Each answer is git's own."""
    from curator.engine.repo.git import Git
    from curator.engine.write import move as move_module
    from curator.engine.write.move import broken_by_renames

    asked: list[str | None] = []
    real = Git.renames

    def renames(self: Git, limit: int, since: str | None = None) -> str | None:
        asked.append(since)
        return real(self, limit, since)

    def whole(wiki: Wiki) -> str | None:
        return real(Git(wiki.root), 50)

    def commit(message: str) -> None:
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)

    monkeypatch.setattr(Git, "renames", renames)
    git(root, "mv", "wiki/data/tide-tables.md", "wiki/data/tides.md")
    commit("renamed by an agent")
    first = broken_by_renames(Wiki(root))
    assert [b.old for b in first] == ["wiki/data/tide-tables.md"] and asked == [None]
    asked.clear()
    assert broken_by_renames(Wiki(root)) == first and asked == []  # (the same commit: kept)
    # an append on top: only it is asked for, and the log is git's own
    head = git(root, "rev-parse", "HEAD").strip()
    (root / "notes/more.md").write_text("# More\n\nSee [[wiki/data/tide-tables]].\n", "utf-8")
    commit_all(root, "an append")
    wiki = Wiki(root)
    assert [b.old for b in broken_by_renames(wiki)] == ["wiki/data/tide-tables.md"]
    assert asked == [head]
    assert move_module._renames_log(wiki, 50) == whole(wiki)
    # a second rename on top: found the same way, newest first
    asked.clear()
    git(root, "mv", "notes/more.md", "notes/most.md")
    commit("another rename")
    wiki = Wiki(root)
    assert move_module._renames_log(wiki, 50) == whole(wiki) and len(asked) == 1 and asked[0] is not None
    # history rewritten (the last commit amended away): whole again, never the kept log's
    asked.clear()
    git(root, "reset", "-q", "--hard", "HEAD~1")
    wiki = Wiki(root)
    assert move_module._renames_log(wiki, 50) == whole(wiki)
    assert asked[-1] is None
    # a merge since the kept log: whole again (the last 50 are not the new ones then the kept)
    git(root, "checkout", "-q", "-b", "side")
    (root / "notes/side.md").write_text("# Side\n", "utf-8")
    commit_all(root, "on a side branch")
    git(root, "checkout", "-q", "-")
    (root / "notes/main.md").write_text("# Main\n", "utf-8")
    commit_all(root, "on the main branch")
    move_module._renames_log(Wiki(root), 50)
    before_merge = git(root, "rev-parse", "HEAD").strip()
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "--no-ff", "-m", "merged", "side")
    asked.clear()
    wiki = Wiki(root)
    assert move_module._renames_log(wiki, 50) == whole(wiki) and asked == [before_merge, None]


def test_after_a_commit_or_two_the_rename_log_is_one_git_call(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The common case (an append or two since the log was kept): one ``git log`` of the commits
    since gives their renames and shows they are one chain on the kept commit (was three calls:
    is-ancestor, merge count, log, 40 ms of every lint and health after an append). The answer
    is git's own log of the last 50 renames."""
    from curator.engine.repo.git import Git
    from curator.engine.write import move as move_module

    git(root, "mv", "wiki/data/tide-tables.md", "wiki/data/tides.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "renamed")
    move_module._renames_log(Wiki(root), 50)
    calls: list[str] = []
    real = Git.run

    def run(self: Git, *args: str, **kwargs: object) -> object:
        calls.append(args[0])
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    (root / "notes/more.md").write_text("# More\n\nSee [[wiki/data/tide-tables]].\n", "utf-8")
    commit_all(root, "an append")
    git(root, "mv", "notes/more.md", "notes/most.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "renamed again")
    wiki = Wiki(root)
    wiki.refresh()
    monkeypatch.setattr(Git, "run", run)
    log = move_module._renames_log(wiki, 50)
    monkeypatch.undo()
    assert [c for c in calls if c != "rev-parse"] == ["log"]
    assert log == Git(root).renames(50) and "notes/most.md" in (log or "")


def test_a_kept_rename_log_naming_no_commit_is_never_handed_to_git(root: Path) -> None:
    import marshal

    from curator.engine.repo.git import Git
    from curator.engine.write import move as move_module

    wiki = Wiki(root)
    wiki.refresh()
    for bad in (("--output=/tmp/owned", 50, "\0made up"), ("HEAD~1", 50, "\0made up"), "not a tuple"):
        wiki.store.save_derived(move_module.RENAMES_NAME, marshal.dumps(bad))
        assert move_module._renames_log(wiki, 50) == Git(root).renames(50)
