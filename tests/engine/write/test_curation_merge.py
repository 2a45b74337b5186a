"""Merge that loses nothing (docs/design.md §9): whole bullets, every other block under ``## From``, the
conservation check, display text kept on every rewritten link, self-links made plain, code
untouched, several pages in one commit, the keep rule's inbound count, and a property test."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from curator.engine.corpus import frontmatter
from curator.engine.corpus.links import LinkIndex
from curator.engine.corpus.markdown_scan import display_label, link_spans, strip_code
from curator.engine.corpus.page import Page, parse_page
from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.graph import link_graph as graph
from curator.engine.policy.actor import OPERATOR
from curator.engine.wiki import Wiki
from curator.engine.write import merge
from curator.engine.write.actions import Invalid, undo
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.merge import merge_pages, plan_merge, preview_merge
from curator.models.dedup import page_side

KEEP = """---
title: Harbour Crane
tags: [ops]
aliases: [The Crane]
related: [wiki/crane-notes.md]
trust: 0.9
---
# Harbour Crane

The crane lifts containers. Details: [[Crane Notes]] and [notes](crane-notes.md).

## Updates

- The crane is inspected every March (added 2024-01-02)
"""

MERGED = """---
title: Crane Notes
tags: [ops, notes]
aliases: [Crane Log]
related: [other]
---
# Crane Notes

Prose about the crane that must survive, linking [[harbour-crane|the crane page]] and
[[crane-notes#Loads|our own loads section]].

## Updates

- The crane is inspected every March [[harbour-crane]] (added 2024-02-03)
- Spare parts come from Hamburg and take
  six weeks to arrive ([[Supplier List]] and [[Customs]]) (added 2024-02-04)
- Shift plan
  - night shift: two operators
  - day shift: three operators

## Loads

| Load | Tonnes |
| --- | --- |
| Container | 30 |
| Boat \\| yacht | 12 |

```
[[crane-notes]] stays as written in code, and so does [x](crane-notes.md)
```

> A quote about [[Other]].
"""

LINKER = """---
title: Linker
related: [crane-notes, "[[Crane Notes#Loads]]"]
up: "[[Crane Log]]"
---
# Linker

By title [[Crane Notes]], by alias [[Crane Log]], by path [[wiki/crane-notes]], with anchor
[[crane-notes#Loads]], with text [[crane-notes#Loads|the loads]], embedded ![[crane-notes]],
markdown [see notes](../wiki/crane-notes.md#loads), in a table:

| a | [[crane-notes]] |

`[[crane-notes]]` in code stays.
"""

OTHER = "# Other\n\nNothing here links anywhere.\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def commit_all(root: Path, message: str = "seed") -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and ".curator" not in p.parts}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "pages").mkdir()
    (root / "wiki/harbour-crane.md").write_text(KEEP, encoding="utf-8")
    (root / "wiki/crane-notes.md").write_text(MERGED, encoding="utf-8")
    (root / "pages/linker.md").write_text(LINKER, encoding="utf-8")
    (root / "other.md").write_text(OTHER, encoding="utf-8")
    commit_all(root)
    return root


_TEST_LINK = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]|\[([^\]\n]*)\]\(([^()\s]+)\)")


def _label(m: re.Match[str]) -> str:
    """The text one link match shows (the test's own reading, not the engine's)."""
    if m.group(1) is not None:
        inner = m.group(1).replace("\\|", "|")
        target, _, alias = inner.partition("|")
        name, _, anchor = target.partition("#")
        return alias.strip() or (f"{name.strip()} › {anchor.strip()}" if anchor else name.strip())
    return m.group(2)


def shown(text: str) -> list[str]:
    """The texts a page's links show, in order (code excluded)."""
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return [_label(m) for m in _TEST_LINK.finditer(strip_code(body))]


def reading(line: str) -> str:
    """A line as a person reads it: links by the text they show, headings without their marks."""
    line = re.sub(r"^ {0,3}#{1,6}\s*", "", line)
    return " ".join(_TEST_LINK.sub(_label, line).split())


def body_lines(text: str) -> list[str]:
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return [line for line in body.split("\n") if line.strip()]


def test_merge_keeps_every_line_and_every_link_text(root: Path) -> None:
    before = snapshot(root)
    head = git(root, "rev-parse", "HEAD").strip()
    linker_shown = shown(LINKER)
    wiki = Wiki(root)
    plan = preview_merge(wiki, "harbour-crane", "crane-notes")
    assert snapshot(root) == before  # a preview writes nothing
    result = merge_pages(wiki, "harbour-crane", "crane-notes")
    assert result.status == "merged", result.message
    kept = (root / "wiki/harbour-crane.md").read_text(encoding="utf-8")
    assert kept == plan.keep_after  # what the preview showed is what was committed

    # every content line of the merged page is in keep (as read) or a deduplicated bullet
    deduplicated = [line for s in result.data["bullets_skipped"] for line in s["bullet"].split("\n")]
    assert [s["matched"] for s in result.data["bullets_skipped"]] == ["The crane is inspected every March"]
    have = {reading(line) for line in body_lines(kept)} | {reading(line) for line in deduplicated}
    lost = [line for line in body_lines(MERGED) if reading(line) not in have
            and line not in ("# Crane Notes", "## Updates")]
    assert lost == []
    # bullets are whole units: continuation lines and nested sub-bullets stay with their bullet
    assert ("- Spare parts come from Hamburg and take\n  six weeks to arrive ([[Supplier List]] and "
            "[[Customs]]) (added 2024-02-04)\n- Shift plan\n  - night shift: two operators\n"
            "  - day shift: three operators\n\n## From Crane Notes") in kept
    updates = kept.split("## Updates", 1)[1].split("## From", 1)[0]
    assert "Spare parts" in updates and "Shift plan" in updates
    # prose, headed sections (demoted), the table and the code block under "## From"
    section = kept.split("## From Crane Notes", 1)[1]
    assert "Prose about the crane that must survive" in section
    assert "### Loads" in section and "| Boat \\| yacht | 12 |" in section
    assert "```\n[[crane-notes]] stays as written in code, and so does [x](crane-notes.md)\n```" in section
    assert "> A quote about [[Other]]." in section
    # self-links on keep became their text, both keep's own and the merged page's
    assert "Details: Crane Notes and notes." in kept
    assert "linking the crane page and\nour own loads section." in kept
    assert "[[harbour-crane" not in kept.split("```")[0] and "[[crane-notes" not in kept.split("```")[0]
    # frontmatter united; the merged page's names become aliases
    assert "tags: [ops, notes]" in kept and "related: [other]" in kept
    assert "aliases: [The Crane, crane-notes, Crane Notes, Crane Log]" in kept

    # every other page shows the same link texts; code untouched; nothing names the merged page
    linker = (root / "pages/linker.md").read_text(encoding="utf-8")
    assert shown(linker) == linker_shown
    assert "`[[crane-notes]]` in code stays." in linker
    assert "[[harbour-crane|Crane Notes]]" in linker and "[[harbour-crane|Crane Log]]" in linker
    assert "[[wiki/harbour-crane|wiki/crane-notes]]" in linker
    assert "[[harbour-crane#Loads|crane-notes › Loads]]" in linker
    assert "[[harbour-crane#Loads|the loads]]" in linker and "![[harbour-crane|crane-notes]]" in linker
    assert "[see notes](../wiki/harbour-crane.md#loads)" in linker
    assert "| a | [[harbour-crane\\|crane-notes]] |" in linker
    assert "related: [harbour-crane, '[[harbour-crane#Loads]]']" in linker
    assert 'up: "[[harbour-crane|Crane Log]]"' in linker  # edited in place, quoting kept
    wiki.refresh()
    assert all(e.target != "wiki/crane-notes.md" for edges in wiki.links.outgoing.values() for e in edges)
    assert {e.source for e in wiki.links.backlinks("wiki/harbour-crane.md")} == {"pages/linker.md"}
    assert not wiki.links.unresolved.get("crane-notes")

    # archived, exactly one commit, undo restores every file byte for byte
    assert (root / "_archive/wiki/crane-notes.md").read_text(encoding="utf-8") == MERGED
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(root, "status", "--porcelain").strip() == ""
    assert undo(wiki, OPERATOR).status == "reverted"
    assert snapshot(root) == before


def test_conservation_check_refuses_and_writes_nothing(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(root)
    real = merge._merge_body

    def losing(plan: merge.MergePlan, keep_text: str, *args: object) -> tuple[str, set[str], set[str], set[str]]:
        text, exempt, cut, replaced = real(plan, keep_text, *args)  # type: ignore[arg-type]
        text = text.replace("  six weeks to arrive ([[Supplier List]] and [[Customs]]) (added 2024-02-04)\n", "")
        return text, exempt, cut, replaced

    monkeypatch.setattr(merge, "_merge_body", losing)
    result = merge_pages(Wiki(root), "harbour-crane", "crane-notes")
    assert result.status == "invalid"
    assert "line 16 of wiki/crane-notes.md" in result.message and "six weeks to arrive" in result.message
    assert snapshot(root) == before
    with pytest.raises(Invalid, match="would be lost"):
        preview_merge(Wiki(root), "harbour-crane", "crane-notes")


def test_check_conservation_names_the_missing_line() -> None:
    with pytest.raises(Invalid, match=r"line 3 of b\.md .*'second'"):
        merge.check_conservation([("b.md", "# B\n\nsecond\n")], "# A\n\nB\n", "a.md", [], {"b.md": {"B"}})
    merge.check_conservation([("b.md", "- [[x|shown]]\n")], "- shown\n", "a.md", [])


SETEXT_MERGED = """---
title: Crane Notes
---
Crane Notes
===========

Updates
-------

- Spare parts come from Hamburg (added 2024-02-04)

Loads and
lifting limits
--------------

The crane lifts **40 t** at `12 m` reach.

- a bullet, then a thematic break, not a heading
---
> a quote, then a thematic break
---
"""


def test_merge_reads_setext_headings_as_the_renderer_does(root: Path) -> None:
    """A setext title is the merged page's title (not moved as prose), a setext ``Updates`` is its
    fact log, a setext section heading is demoted like an ATX one, and the conservation check reads
    an underline as markup, not content; a list item's or a quote's ``---`` stays a break."""
    (root / "wiki/crane-notes.md").write_text(SETEXT_MERGED, encoding="utf-8")
    commit_all(root, "setext")
    units = merge.units(frontmatter.split(SETEXT_MERGED).body)
    assert [(u.kind, u.level, u.text) for u in units if u.kind == "heading"] == [
        ("heading", 1, "Crane Notes"), ("heading", 2, "Updates"), ("heading", 2, "Loads and lifting limits")]
    result = merge_pages(Wiki(root), "harbour-crane", "crane-notes")
    assert result.status == "merged", result.message
    kept = (root / "wiki/harbour-crane.md").read_text(encoding="utf-8")
    updates = kept.split("## Updates", 1)[1].split("## From", 1)[0]
    assert "- Spare parts come from Hamburg (added 2024-02-04)" in updates
    section = kept.split("## From Crane Notes", 1)[1]
    assert "Crane Notes\n===" not in kept and "Updates\n---" not in kept
    assert "### Loads and lifting limits\n\nThe crane lifts **40 t** at `12 m` reach." in section
    assert "- a bullet, then a thematic break, not a heading\n---" in section
    assert "> a quote, then a thematic break\n---" in section
    # the underline of a setext heading is markup: a result without it keeps every content line
    merge.check_conservation([("b.md", "Title\n=====\n\nLong\nheading\n---\n")],
                             "# A\n\n### Long heading\n", "a.md", [], {"b.md": {"Title"}})


def test_several_pages_merge_in_one_commit(root: Path) -> None:
    (root / "wiki/crane-manual.md").write_text(
        "# Crane Manual\n\nRead [[Crane Notes]] first.\n\n- Grease the hook weekly\n", encoding="utf-8")
    (root / "other.md").write_text(OTHER + "\nSee [[Crane Manual]] and [[crane-notes]].\n", encoding="utf-8")
    commit_all(root, "more")
    head = git(root, "rev-parse", "HEAD").strip()
    before = snapshot(root)
    wiki = Wiki(root)
    result = merge_pages(wiki, "harbour-crane", ["crane-notes", "crane-manual"])
    assert result.status == "merged", result.message
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    kept = (root / "wiki/harbour-crane.md").read_text(encoding="utf-8")
    assert "- Grease the hook weekly" in kept and "## From Crane Manual" in kept
    assert "Read Crane Notes first." in kept  # a link between two merged pages became plain text
    other = (root / "other.md").read_text(encoding="utf-8")
    assert "See [[harbour-crane|Crane Manual]] and [[harbour-crane|crane-notes]]." in other
    assert {"_archive/wiki/crane-notes.md", "_archive/wiki/crane-manual.md"} <= set(snapshot(root))
    assert result.data["merges"] == ["wiki/crane-notes.md", "wiki/crane-manual.md"]
    assert undo(wiki, OPERATOR).status == "reverted" and snapshot(root) == before


def test_crlf_keep_gets_crlf_lines(root: Path) -> None:
    crlf = KEEP.replace("\n", "\r\n")
    (root / "wiki/harbour-crane.md").write_bytes(crlf.encode("utf-8"))
    commit_all(root, "crlf")
    assert merge_pages(Wiki(root), "harbour-crane", "crane-notes").status == "merged"
    data = (root / "wiki/harbour-crane.md").read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")


# --- the keep rule -------------------------------------------------------------------------------

def test_keep_rule_uses_the_inbound_count_explain_shows(tmp_path: Path) -> None:
    """Many pages link copy A by its title (which copy B shares), one links copy B by its stem:
    A must be kept "for more inbound links", with the numbers explain and the panel show."""
    root = tmp_path / "w"
    init_wiki(root)
    (root / "aizen-bg3-v2.md").write_text("---\ntitle: Aizen BG3 V2\ncreated: 2025-01-01\n---\n# Aizen\n\nA.\n",
                                          encoding="utf-8")
    (root / "aizen-bg3-v2-ADCwQxVe.md").write_text(
        "---\ntitle: Aizen BG3 V2\ncreated: 2024-01-01\n---\n# Aizen\n\nB.\n", encoding="utf-8")
    for i in range(12):
        (root / f"fan-{i}.md").write_text(f"# Fan {i}\n\nSee [[Aizen BG3 V2]].\n", encoding="utf-8")
    (root / "lone.md").write_text("# Lone\n\nSee [[aizen-bg3-v2-ADCwQxVe]].\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    pair = next(c for c in dedup_families.find_duplicates(wiki)
                if {c.keep, c.merge} == {"aizen-bg3-v2.md", "aizen-bg3-v2-ADCwQxVe.md"})
    assert pair.keep == "aizen-bg3-v2.md", pair.reason
    assert "more inbound links" in pair.reason
    index = dedup.index_for(wiki)
    for path, count in (("aizen-bg3-v2.md", 12), ("aizen-bg3-v2-ADCwQxVe.md", 1)):
        assert FamilyAnswers(index).inbound(path) == count
        assert graph.explain(wiki, path).in_degree == count
        assert page_side(wiki, path).inbound == count


def test_a_comparison_side_reads_its_page_alone_and_counts_as_the_whole_index(tmp_path: Path) -> None:
    """A comparison's side (the Duplicates view's) reads its own page and counts its inbound links
    from the link index around it: every page is not decoded nor every link resolved for it, and
    the count is the whole index's, whichever way a page is linked (path, title, alias, slug, a
    folder's page, itself, a name two pages share)."""
    root = tmp_path / "w"
    write = {
        "wiki/ledger.md": "---\ntitle: The Ledger\naliases: [Books]\n---\n# Ledger\n\n[[The Ledger]] links itself.\n",
        "wiki/ledger-copy.md": "---\ntitle: Ledger Copy\n---\n# Copy\n\nSee [[ledger]] and [[Books]].\n",
        "notes/a.md": "# A\n\n[[The Ledger]], [[wiki/ledger]], [[Ledger Copy]].\n",
        "notes/b.md": "# B\n\n[[books]] [[ledger-copy]] [[Twin]]\n",
        "notes/twin.md": "---\ntitle: Twin\n---\n# Twin\n",
        "wiki/twin.md": "---\ntitle: Twin\n---\n# Twin\n\n[[a]]\n",
    }
    for path, text in write.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    wiki = Wiki(root)
    try:
        sides = {path: page_side(wiki, path).inbound for path in sorted(write)}
        assert not wiki.store.decoded and wiki.built_links() is None
    finally:
        wiki.close()
    whole = Wiki(root)
    try:
        links = whole.links
        assert sides == {path: links.inbound(path) for path in sorted(write)}
        assert sides["wiki/ledger.md"] == 3 and sides["wiki/ledger-copy.md"] == 2
    finally:
        whole.close()


# --- the property test -----------------------------------------------------------------------------

WORDS = ["crane", "hook", "cargo", "ship", "port", "tide", "rope", "deck", "steel", "bolt", "winch",
         "load", "shift", "pier", "dock", "chain", "barge", "quay", "buoy", "mast"]


def _sentence(rng: random.Random, n: int = 6) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _link(rng: random.Random, target: Page, folder: str) -> str:
    stem = target.stem
    forms = [f"[[{stem}]]", f"[[{target.title}]]", f"[[{stem}|{_sentence(rng, 2)}]]", f"[[{stem}#Part]]",
             f"![[{stem}]]", f"[md {rng.choice(WORDS)}]({'../' * folder.count('/')}{target.path})",
             f"[[{target.path[:-3]}]]"]
    if target.aliases:
        forms.append(f"[[{target.aliases[0]}]]")
    return rng.choice(forms)


def _page_text(rng: random.Random, title: str, links: list[str], alias: str | None) -> str:
    parts = ["---", f"title: {title}"] + ([f"aliases: [{alias}]"] if alias else []) + ["---", f"# {title}", ""]
    blocks = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(["prose", "bullet", "multi", "nested", "table", "code", "heading", "updates"])
        link = rng.choice(links) if links and rng.random() < 0.6 else ""
        if kind == "prose":
            blocks.append(f"{_sentence(rng)} {link}\n{_sentence(rng)}.")
        elif kind == "bullet":
            blocks.append(f"- {_sentence(rng)} {link}")
        elif kind == "multi":
            blocks.append(f"- {_sentence(rng)}\n  {_sentence(rng)} {link}")
        elif kind == "nested":
            blocks.append(f"- {_sentence(rng, 3)}\n  - {_sentence(rng)} {link}\n  - {_sentence(rng)}")
        elif kind == "table":
            blocks.append(f"| a | b |\n| --- | --- |\n| {_sentence(rng, 2)} | {link} |")
        elif kind == "code":
            blocks.append(f"```\n{link or '[[x]]'} {_sentence(rng, 2)}\n```")
        elif kind == "heading":
            blocks.append(f"## {rng.choice(WORDS).title()} {rng.randint(1, 99)}\n\n{_sentence(rng)}")
        else:
            blocks.append(f"## Updates\n\n- {_sentence(rng)} {link} (added 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)})")
    return "\n".join(parts) + "\n\n".join(blocks) + "\n"


def _pages(files: dict[str, str]) -> dict[str, Page]:
    return {path: parse_page(path, text.encode("utf-8"))[0] for path, text in files.items()}


def _resolved(files: dict[str, str]) -> tuple[LinkIndex, dict[str, list[tuple[str | None, str]]]]:
    """(link index, per page the (target, shown text) of every link) for a set of files."""
    pages = _pages(files)
    index = LinkIndex(pages)
    out: dict[str, list[tuple[str | None, str]]] = {}
    for path, text in files.items():
        body = frontmatter.split(text).body
        spans = link_spans(strip_code(body), path)
        out[path] = [(index.resolve(s.link.target).path,
                      s.link.alias if s.link.kind == "markdown" else
                      display_label(s.link.target, s.link.anchor, s.link.alias)) for s in spans]
    return index, out


def test_property_merge_never_loses_a_line_or_leaves_a_dangling_link() -> None:
    rng = random.Random(15)
    checked = 0
    for case in range(500):
        folder_k, folder_m = rng.choice(["wiki/", "wiki/sub/", ""]), rng.choice(["wiki/", "notes/", ""])
        keep_path, merge_path = f"{folder_k}keep-{case}.md", f"{folder_m}twin-{case}.md"
        stub = {keep_path: "---\ntitle: Keep\n---\n", merge_path: "---\ntitle: Twin\naliases: [Twin Alias]\n---\n"}
        first = _pages(stub)
        keep_p, merge_p = first[keep_path], first[merge_path]
        to_merge = [_link(rng, merge_p, folder_m) for _ in range(3)]
        to_keep = [_link(rng, keep_p, folder_k) for _ in range(2)]
        files = {
            keep_path: _page_text(rng, "Keep", to_merge, None),
            merge_path: _page_text(rng, "Twin", to_merge + to_keep, "Twin Alias"),
        }
        for j in range(rng.randint(1, 3)):
            folder = rng.choice(["", "wiki/", "other/deep/"])
            files[f"{folder}p{j}.md"] = _page_text(rng, f"P{j}", [_link(rng, merge_p, folder) for _ in range(3)]
                                                   + [_link(rng, keep_p, folder)], None)
        index, links_before = _resolved(files)
        pages = index.pages
        fake = SimpleNamespace(links=index)
        plan = plan_merge(fake, pages[keep_path], [pages[merge_path]],  # type: ignore[arg-type]
                          lambda p, files=files: (files[p], False))
        after = {p: t for p, t in files.items() if p != merge_path}
        after.update({p: t for p, (t, _bom) in plan.writes.items()})
        # no line lost (by the test's own reading of lines and links)
        deduplicated = [line for s in plan.bullets_skipped for line in s["bullet"].split("\n")]
        have = {reading(x) for x in body_lines(after[keep_path])} | {reading(x) for x in deduplicated}
        for source in (files[merge_path], files[keep_path]):
            lost = [x for x in body_lines(source) if reading(x) not in have
                    and reading(x) not in ("Twin", "Updates")]
            assert lost == [], (case, lost)
        # no dangling link: everything that resolved still resolves, nothing points at the twin
        _, links_after = _resolved(after)
        for path, links in links_after.items():
            assert all(target is not None and target != merge_path for target, _ in links), (case, path)
            if path != keep_path:  # other pages show exactly the same link texts
                assert [t for _, t in links] == [t for _, t in links_before[path]], (case, path)
        checked += 1
    assert checked == 500


def test_cli_merges_several_pages_and_previews_the_diff(root: Path) -> None:
    import json
    import sys

    (root / "wiki/crane-manual.md").write_text("# Crane Manual\n\n- Grease the hook weekly\n", encoding="utf-8")
    commit_all(root, "manual")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                              capture_output=True, text=True, timeout=120)

    preview = cli("merge", "harbour-crane", "crane-notes", "crane-manual", "--preview")
    assert preview.returncode == 0 and "+## From Crane Notes" in preview.stdout
    assert "+- Grease the hook weekly" in preview.stdout and "already there:" in preview.stdout
    # keep's `related: [wiki/crane-notes.md]` would point keep at itself: the preview says it goes
    assert "wiki/crane-notes.md  ->  (dropped from related:" in preview.stdout
    assert not any(line.rstrip().endswith("->") for line in preview.stdout.splitlines())
    done = cli("merge", "harbour-crane", "crane-notes", "crane-manual", "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["status"] == "merged"
    assert data["archives"] == ["_archive/wiki/crane-notes.md", "_archive/wiki/crane-manual.md"]
    assert git(root, "log", "-1", "--format=%s").strip() == \
        "merge: wiki/crane-notes.md, wiki/crane-manual.md into wiki/harbour-crane.md"
    bad = cli("merge", "harbour-crane", "harbour-crane")
    assert bad.returncode == 1 and "itself" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr
