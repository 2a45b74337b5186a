"""A merge writes content, not noise (issue 43): no section of empty headings, an identical table
or section once, a table that differs as one table with the rows it lacked, no line cut short,
and tags exactly the union of what the pages declare; the conservation check still holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import parse_page
from curator.engine.wiki import Wiki
from curator.engine.write import merge
from curator.engine.write.actions import Invalid
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.merge import merge_pages, preview_merge


def make_wiki(tmp_path: Path, pages: dict[str, str]) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    for name, text in pages.items():
        (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed"], cwd=root, check=True)
    return root


def merged(root: Path, keep: str, *gone: str) -> str:
    """``keep``'s text after the merge (which must succeed and match its preview)."""
    plan = preview_merge(Wiki(root), keep, list(gone))
    result = merge_pages(Wiki(root), keep, list(gone))
    assert result.ok, result.message
    after = (root / f"{keep}.md").read_text("utf-8")
    assert after == plan.keep_after
    return after


SCENES = "".join(f"### ===== SCENE {n}\n" for n in range(1, 8))

KEEP = """---
title: Night Story
tags: [story]
---
# Night Story

The night story opens in the harbour.

## Cast

| Name | Role |
| --- | --- |
| Ann | lead |

## Ages

| Who | Age |
| --- | --- |
| Ann | 30 |
| Bob | 41 |
| Cid | 7 |
"""


def member(title: str, body: str, tags: str = "[story]") -> str:
    return f"---\ntitle: {title}\ntags: {tags}\n---\n# {title}\n\nThe night story opens in the harbour.\n\n{body}"


def test_headings_with_nothing_under_them_are_not_written(tmp_path: Path) -> None:
    root = make_wiki(tmp_path, {"night.md": KEEP,
                                "night-copy.md": member("Night Copy", f"## Script\n\n{SCENES}"),
                                "night-old.md": member("Night Old", f"{SCENES}\n## Kept\n\n### Inner\n\nA line.\n")})
    after = merged(root, "night", "night-copy", "night-old")
    assert "SCENE" not in after
    assert "## From Night Copy" not in after  # nothing of its own: no section at all
    tail = after.split("## From Night Old\n", 1)[1]
    assert [x for x in tail.split("\n") if x.strip()] == ["### Kept", "#### Inner", "A line."]


def test_empty_headings_are_not_content_but_a_heading_over_lost_lines_is() -> None:
    merge.check_conservation([("b.md", "# B\n\n## Empty\n### Also empty\n\n## Full\n\nkept\n")],
                             "# A\n\nkept\n", "a.md", [], {"b.md": {"B"}})
    with pytest.raises(Invalid, match=r"line 5 of b\.md .*'Full'"):
        merge.check_conservation([("b.md", "# B\n\n## Empty\n\n## Full\n\nkept\n")],
                                 "# A\n\n", "a.md", [], {"b.md": {"B"}})


def test_an_identical_table_and_section_stand_once(tmp_path: Path) -> None:
    cast = KEEP.split("## Cast\n", 1)[1].split("## Ages", 1)[0]
    root = make_wiki(tmp_path, {"night.md": KEEP,
                                "night-copy.md": member("Night Copy", f"Own line.\n\n## Cast\n{cast}")})
    after = merged(root, "night", "night-copy")
    assert after.count("| Ann | lead |") == 1
    assert after.count("Cast") == 1
    assert after.split("## From Night Copy\n", 1)[1].strip() == "Own line."


def test_a_table_differing_in_one_cell_becomes_one_table_with_both_rows(tmp_path: Path) -> None:
    table = "| Who | Age |\n|---|---|\n| Ann | 30 |\n| Bob | 42 |\n| Cid | 7 |\n| Dee | 19 |\n"
    root = make_wiki(tmp_path, {"night.md": KEEP, "night-copy.md": member("Night Copy", f"## Ages\n\n{table}")})
    plan = preview_merge(Wiki(root), "night", "night-copy")
    after = merged(root, "night", "night-copy")
    assert after.count("| Who | Age |") == 1 and after.count("| Ann | 30 |") == 1
    ages = after.split("## Ages\n\n", 1)[1].strip().split("\n")
    # the two versions of Bob's row stand together; a row only the copy has is added
    assert ages == ["| Who | Age |", "| --- | --- |", "| Ann | 30 |", "| Bob | 41 |", "| Bob | 42 |",
                    "| Cid | 7 |", "| Dee | 19 |"]
    assert "## From" not in after
    assert plan.rows_added == [{"page": "night-copy.md", "row": "| Bob | 42 |"},
                               {"page": "night-copy.md", "row": "| Dee | 19 |"}]


def test_no_line_is_cut(tmp_path: Path) -> None:
    long = ("The harbour crane lifts forty tonnes at twelve metres reach and is inspected every March "
            "by the port authority, whose report goes to the operators and the insurers alike.")
    keep = KEEP.replace("The night story opens in the harbour.", f"The night story opens in the harbour.\n\n{long}")
    cut = long[:long.index(" whose")] + "."
    longer = long + " The report is public."
    root = make_wiki(tmp_path, {
        "night.md": keep,
        # a heading ending in '#' is a word, not a closing run of marks
        "night-copy.md": member("Night Copy", f"## Notes on C#\n\nWritten in C# and F#.\n\n{cut}\n"),
        "night-old.md": member("Night Old", f"{longer}\n"),
    })
    after = merged(root, "night", "night-copy", "night-old")
    assert "### Notes on C#\n" in after
    # a copy cut short is not written again; a longer copy replaces the shorter in place
    assert cut not in after and after.count(long) == 1 and after.count(longer) == 1
    assert after.index(longer) < after.index("## Cast")
    assert "## From Night Old" not in after


def test_cut_copy_must_stand_whole_in_the_result() -> None:
    merge.check_conservation([("b.md", "# B\n\nalpha beta.\n")], "# A\n\nalpha beta gamma\n", "a.md", [],
                             {"b.md": {"B"}}, {"b.md": {"alpha beta."}})
    with pytest.raises(Invalid, match="would be lost"):
        merge.check_conservation([("b.md", "# B\n\nalpha bet.\n")], "# A\n\nalpha beta gamma\n", "a.md", [],
                                 {"b.md": {"B"}}, {"b.md": {"alpha bet."}})


def test_tags_are_the_union_of_the_declared_tags(tmp_path: Path) -> None:
    root = make_wiki(tmp_path, {
        "night.md": KEEP,
        "night-copy.md": member("Night Copy", "Filed as #night-copy by the agent.\n", tags="[story, drama]"),
        "night-old.md": member("Night Old", "Old notes, see #night-old.\n", tags="[noir]"),
    })
    inputs = {p: parse_page(p, (root / p).read_bytes())[0] for p in ("night.md", "night-copy.md", "night-old.md")}
    after = merged(root, "night", "night-copy", "night-old")
    meta = frontmatter.load(frontmatter.split(after).raw or "")[0]
    assert meta["tags"] == ["story", "drama", "noir"]
    # the body tags moved with their lines: the page's tags are exactly the members' together
    assert set(parse_page("night.md", after.encode())[0].tags) == {t for p in inputs.values() for t in p.tags}


def test_the_preview_names_the_rows_and_blocks_it_unites(tmp_path: Path) -> None:
    table = "| Who | Age |\n| --- | --- |\n| Bob | 42 |\n"
    root = make_wiki(tmp_path, {"night.md": KEEP, "night-copy.md": member("Night Copy", f"## Ages\n\n{table}")})
    text = preview_merge(Wiki(root), "night", "night-copy").render()
    assert "table row added from night-copy.md: | Bob | 42 |" in text
    assert "1 block(s) already on night.md" in text  # the opening paragraph both pages have


def test_a_title_ending_in_hash_is_not_cut(tmp_path: Path) -> None:
    page = "# Notes on C#\n\nWritten in C# and F#.\n"
    assert parse_page("c.md", page.encode())[0].title == "Notes on C#"
    assert parse_page("t.md", b"# Closed title ##\n\ntext\n")[0].title == "Closed title"
    root = make_wiki(tmp_path, {"night.md": KEEP, "c-notes.md": page})
    after = merged(root, "night", "c-notes")
    assert "\n## From Notes on C#\n" in after and "Notes on C," not in after
    assert "Notes on C#]" in after.split("---", 2)[1]  # the alias, whole


def test_keep_is_read_once_per_merged_page_not_once_per_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (reading keep again for every block made a 1,000-block page into a 380 KB one take minutes)
    blocks = "".join(f"Own paragraph {i}.\n\n| k{i} | v |\n| --- | --- |\n| y | {i} |\n\n" for i in range(200))
    root = make_wiki(tmp_path, {"night.md": KEEP, "night-copy.md": member("Night Copy", blocks)})
    calls: list[int] = []
    real = merge.units

    def counting(body: str) -> list[merge.Unit]:
        calls.append(len(body))
        return real(body)

    monkeypatch.setattr(merge, "units", counting)
    plan = preview_merge(Wiki(root), "night", "night-copy")
    assert plan.keep_after.count("Own paragraph") == 200
    assert len(calls) < 10


def test_a_row_joins_a_crlf_table_with_crlf(tmp_path: Path) -> None:
    root = make_wiki(tmp_path, {"night.md": KEEP.replace("\n", "\r\n"),
                                "night-copy.md": member("Night Copy", "| Who | Age |\n| --- | --- |\n| Bob | 42 |\n")})
    result = merge_pages(Wiki(root), "night", "night-copy")
    assert result.ok, result.message
    after = (root / "night.md").read_bytes()
    assert b"| Bob | 41 |\r\n| Bob | 42 |\r\n| Cid | 7 |\r\n" in after
    assert b"\n" not in after.replace(b"\r\n", b"")
