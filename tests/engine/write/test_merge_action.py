"""Merge (docs/design.md §9): link rewriting with anchors and aliases kept, code untouched, bullets through
the fact dedup, metadata united, archive, exactly one commit, undo restores everything; dismiss
decisions are committed and survive re-opening the wiki."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.policy.scope import Decision
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.merge import merge_pages, preview_merge

KEPT = """---
title: Kept Page
tags: [ops]
aliases: [The Keeper]
trust: 0.9
---
# Kept Page

## Updates

- The crane is inspected every March (added 2024-01-02)
"""

MERGED = """---
title: Merged Page
tags: [ops, cranes]
related: [other]
aliases: [Old Name]
---
# Merged Page

## Section

Some prose that stays in the archive.

## Updates

- The crane is inspected every March [[kept]] (added 2024-02-03)
- Spare parts are ordered from Hamburg (added 2024-02-04)
"""

LINKER = """---
title: Linker
related: [merged, "[[merged#Section]]"]
---
# Linker

See [[merged#Section|text]] and [[merged]] and ![[merged]] and [[Merged Page|by title]].
A table | [[merged\\|cell]] |
Also [a markdown link](sub/../merged.md#section) and [external](https://example.com/merged.md).
Inline code `[[merged]]` stays, and so does this block:

```
[[merged#Section|text]]
[md](merged.md)
```
"""

DEEP = "# Deep\n\nBack up: [up](../merged.md) and [[merged|the merged page]].\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "kept.md").write_text(KEPT, encoding="utf-8")
    (root / "merged.md").write_text(MERGED, encoding="utf-8")
    (root / "linker.md").write_text(LINKER, encoding="utf-8")
    (root / "other.md").write_text("# Other\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub/deep.md").write_text(DEEP, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".curator" not in p.parts}


def test_merge_rewrites_links_keeps_code_archives_one_commit_and_undo(root: Path) -> None:
    before = snapshot(root)
    head = git(root, "rev-parse", "HEAD").strip()
    wiki = Wiki(root)
    result = merge_pages(wiki, "kept", "merged.md")
    assert result.status == "merged" and result.commit, result.message

    linker = (root / "linker.md").read_text(encoding="utf-8")
    assert "[[kept#Section|text]]" in linker
    assert "and [[kept|merged]] and ![[kept|merged]] and [[kept|by title]]" in linker  # text kept
    assert "[[kept\\|cell]]" in linker
    assert "[a markdown link](kept.md#section)" in linker
    assert "[external](https://example.com/merged.md)" in linker  # not a page link
    assert "`[[merged]]`" in linker  # inline code untouched
    assert "```\n[[merged#Section|text]]\n[md](merged.md)\n```" in linker  # code block untouched
    assert "related: [kept, '[[kept#Section]]']" in linker or "related: [kept, \"[[kept#Section]]\"]" in linker
    deep = (root / "sub/deep.md").read_text(encoding="utf-8")
    assert "[up](../kept.md)" in deep and "[[kept|the merged page]]" in deep

    kept = (root / "kept.md").read_text(encoding="utf-8")
    assert kept.count("The crane is inspected every March") == 1  # fact dedup
    assert "- Spare parts are ordered from Hamburg (added 2024-02-04)" in kept
    assert "tags: [ops, cranes]" in kept
    assert "related: [other]" in kept
    assert "aliases: [The Keeper, merged, Merged Page, Old Name]" in kept
    assert not (root / "merged.md").exists()
    assert (root / "_archive/merged.md").read_text(encoding="utf-8") == MERGED

    # exactly one commit, touching exactly these paths
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(root, "log", "-1", "--format=%s").strip() == "merge: merged.md into kept.md"
    changed = set(git(root, "show", "--no-renames", "--name-only", "--format=", "HEAD").split())
    assert changed == {"kept.md", "merged.md", "_archive/merged.md", "linker.md", "sub/deep.md"}
    assert git(root, "status", "--porcelain").strip() == ""

    # the wiki sees the result: links resolve to kept, the old name is an alias
    wiki.refresh()
    assert wiki.find("merged").path == "kept.md"
    assert {e.source for e in wiki.links.backlinks("kept.md")} >= {"linker.md", "sub/deep.md"}

    reverted = undo(wiki, parse_actor("operator"))
    assert reverted.status == "reverted", reverted.message
    assert snapshot(root) == before


def test_preview_lists_rewrites_and_writes_nothing(root: Path) -> None:
    before = snapshot(root)
    plan = preview_merge(Wiki(root), "kept.md", "merged")
    assert snapshot(root) == before
    by_page: dict[str, list[tuple[str, str]]] = {}
    for r in plan.rewrites:
        by_page.setdefault(r.page, []).append((r.old, r.new))
    assert ("[[merged#Section|text]]", "[[kept#Section|text]]") in by_page["linker.md"]
    assert ("[a markdown link](sub/../merged.md#section)", "[a markdown link](kept.md#section)") in by_page["linker.md"]
    assert ("merged", "kept") in by_page["linker.md"]  # a related: entry
    assert sum(1 for r in plan.rewrites if r.page == "linker.md") == 8
    assert {r.kind for r in plan.rewrites} == {"wikilink", "embed", "markdown", "related"}
    line = next(r.line for r in plan.rewrites if r.old == "[[merged#Section|text]]")
    assert (root / "linker.md").read_text().splitlines()[line - 1].startswith("See [[merged#Section|text]]")
    assert plan.bullets_added == ["- Spare parts are ordered from Hamburg (added 2024-02-04)"]
    assert plan.bullets_skipped[0]["matched"].startswith("The crane is inspected")
    assert plan.aliases_added == ["merged", "Merged Page", "Old Name"]
    assert "linker.md" in plan.render() and plan.to_json()["archive"] == "_archive/merged.md"


def test_merge_refuses_a_page_into_itself_and_unknown_pages(root: Path) -> None:
    wiki = Wiki(root)
    result = merge_pages(wiki, "kept", "kept.md")
    assert result.is_error and "itself" in result.message
    from curator.engine.errors import PageNotFound

    with pytest.raises(PageNotFound):
        merge_pages(wiki, "kept", "nope")


class ReadOnlyAgents:
    def can_read(self, actor: Actor, path: str) -> bool:
        return True

    def check_write(self, actor: Actor, path: str) -> Decision:
        return Decision(False, "agents may not merge here")


def test_merge_by_a_denied_actor_changes_nothing(root: Path) -> None:
    before = snapshot(root)
    wiki = Wiki(root)
    wiki.policy = ReadOnlyAgents()
    result = merge_pages(wiki, "kept", "merged", parse_actor("agent:bot"))
    assert result.status == "denied"
    assert snapshot(root) == before


def test_dismissed_pair_never_returns_even_after_reopening(root: Path) -> None:
    (root / "crane-plan.md").write_text("# Crane Plan\n", encoding="utf-8")
    (root / "crane-plans.md").write_text("# Crane Plans\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
    wiki = Wiki(root)
    pair = ("crane-plan.md", "crane-plans.md")
    assert pair in {dedup.pair_key(c.keep, c.merge) for c in dedup_families.find_duplicates(wiki)}
    result = dedup.dismiss(wiki, "crane-plans", "crane-plan.md")
    assert result.status == "dismissed" and result.commit
    assert git(root, "log", "-1", "--format=%s").strip() == "dismiss: crane-plan.md + crane-plans.md"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [dedup.DECISIONS_FILE]
    assert pair not in {dedup.pair_key(c.keep, c.merge) for c in dedup_families.find_duplicates(wiki)}
    again = dedup.dismiss(wiki, "crane-plan", "crane-plans")
    assert again.status == "unchanged" and again.commit is None
    wiki.close()
    fresh = Wiki(root)  # re-opened (and, being tracked, the file travels with a clone)
    assert pair not in {dedup.pair_key(c.keep, c.merge) for c in dedup_families.find_duplicates(fresh)}
    data = json.loads((root / dedup.DECISIONS_FILE).read_text())
    assert data["not_duplicates"][0]["pages"] == list(pair)
    assert "crane" not in git(root, "status", "--porcelain")
    # undo brings the pair back
    assert undo(fresh, parse_actor("operator")).status == "reverted"
    assert pair in {dedup.pair_key(c.keep, c.merge) for c in dedup_families.find_duplicates(fresh)}


def test_damaged_decisions_file_is_a_clear_error(root: Path) -> None:
    (root / dedup.DECISIONS_FILE).write_text("{not json", encoding="utf-8")
    from curator.engine.errors import CuratorError

    with pytest.raises(CuratorError, match="damaged"):
        dedup_families.find_duplicates(Wiki(root))


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_dedup_dismiss_merge(root: Path) -> None:
    (root / "crane-plan.md").write_text("# Crane Plan\n", encoding="utf-8")
    (root / "crane-plans.md").write_text("# Crane Plans\n", encoding="utf-8")
    code, out, _ = cli(root, "dedup", "--json")
    assert code == 0
    rows = json.loads(out)
    assert all(set(r) >= {"keep", "merge", "reason", "scores"} for r in rows)
    assert {(r["keep"], r["merge"]) for r in rows} >= {("crane-plan.md", "crane-plans.md")}
    code, out, _ = cli(root, "dismiss", "crane-plan", "crane-plans", "--json")
    assert code == 0 and json.loads(out)["status"] == "dismissed"
    code, out, _ = cli(root, "dedup", "--json")
    assert ("crane-plan.md", "crane-plans.md") not in {(r["keep"], r["merge"]) for r in json.loads(out)}
    code, out, _ = cli(root, "merge", "kept", "merged", "--preview")
    assert code == 0 and "[[kept#Section|text]]" in out and (root / "merged.md").exists()
    code, out, _ = cli(root, "merge", "kept", "merged", "--json")
    assert code == 0 and json.loads(out)["status"] == "merged" and not (root / "merged.md").exists()
    code, _, err = cli(root, "merge", "kept", "no-such-page")
    assert code == 1 and err.startswith("curator: error:") and "Traceback" not in err


def test_merge_keeps_bom_and_crlf_of_linking_pages_and_drops_self_references(root: Path) -> None:
    crlf = "---\r\ntitle: Windows\r\n---\r\n# Windows\r\n\r\nSee [[merged#Section|there]].\r\n"
    (root / "win.md").write_bytes(b"\xef\xbb\xbf" + crlf.encode("utf-8"))
    (root / "kept.md").write_text(KEPT.replace("tags: [ops]", "tags: [ops]\nrelated: [merged, other]"),
                                  encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "windows")
    result = merge_pages(Wiki(root), "kept", "merged")
    assert result.status == "merged", result.message
    data = (root / "win.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data[3:].decode("utf-8") == crlf.replace("[[merged#Section|there]]", "[[kept#Section|there]]")
    kept = (root / "kept.md").read_text(encoding="utf-8")
    assert "related: [other]" in kept  # "merged" would now point at kept itself
