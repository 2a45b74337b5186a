"""The page merge driver (issue 11): its rules on texts, and as git runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from curator.engine.corpus import frontmatter
from curator.engine.sync.merge_driver import is_record, merge_record
from curator.engine.write.bootstrap import (
    ATTRIBUTES_LINE,
    ATTRIBUTES_LINES,
    attributes_with_driver,
    config_ok,
    configured_command,
    driver_command,
    install_config,
)
from curator.engine.write.three_way import merge_meta, merge_page, merge_texts
from tests.sync_helpers import GIT_ID, PAGE

BASE = PAGE


def add_fact(text: str, fact: str, day: str = "2024-02-02") -> str:
    anchor = "- Ann joined in 2019 (added 2024-01-01)\n"
    return text.replace(anchor, anchor + f"- {fact} (added {day})\n")


def meta(text: str) -> dict:
    split = frontmatter.split(text)
    assert split.raw is not None
    return frontmatter.load(split.raw)[0]


def test_facts_added_on_both_sides_are_both_kept_in_the_updates_section() -> None:
    ours = add_fact(BASE, "Ann moved to Bergen")
    theirs = add_fact(add_fact(BASE, "Ann speaks Polish"), "Ann plays chess", "2024-02-03")
    out, clean = merge_texts(BASE, ours, theirs)
    assert clean
    section = out[out.index("## Updates"):out.index("## Notes")]
    assert [line for line in section.splitlines() if line.startswith("- ")] == [
        "- Ann joined in 2019 (added 2024-01-01)", "- Ann moved to Bergen (added 2024-02-02)",
        "- Ann plays chess (added 2024-02-03)", "- Ann speaks Polish (added 2024-02-02)"]  # theirs' order
    assert out.endswith("## Notes\n\nNothing else yet.\n")


def test_a_fact_restated_on_the_other_side_is_kept_once() -> None:
    ours = add_fact(BASE, "Ann chairs the architecture board")
    theirs = add_fact(BASE, "Ann chairs the architecture board.", "2024-02-05")
    out, clean = merge_texts(BASE, ours, theirs)
    assert clean and out.count("architecture board") == 1


def test_frontmatter_rules() -> None:
    base = {"title": "A", "trust": 0.5, "tags": ["x", "gone"], "updated": "2024-01-01", "created": "2024-01-01"}
    ours = {**base, "trust": 0.9, "tags": ["x", "gone", "o"], "updated": "2024-03-01", "layer": "core"}
    theirs = {**base, "trust": 0.1, "tags": ["x", "t"], "updated": "2024-02-01", "created": "2023-12-31"}
    merged, conflicts = merge_meta(base, ours, theirs, operator_side="theirs")
    assert not conflicts
    assert merged["trust"] == 0.1  # the operator's side
    assert merged["tags"] == ["x", "o", "t"]  # united; "gone" was removed on one side
    assert merged["updated"] == "2024-03-01" and merged["created"] == "2023-12-31"
    assert merged["layer"] == "core" and merged["title"] == "A"
    merged, _ = merge_meta(base, ours, theirs)  # no hint: ours
    assert merged["trust"] == 0.9
    _, conflicts = merge_meta(base, {**base, "title": "B"}, {**base, "title": "C"})
    assert conflicts == {"title"}
    merged, conflicts = merge_meta(base, {**base, "title": "B"}, {k: v for k, v in base.items() if k != "title"})
    assert conflicts == {"title"}  # changed on one side, removed on the other
    merged, conflicts = merge_meta(base, base, {k: v for k, v in base.items() if k != "trust"})
    assert not conflicts and "trust" not in merged


def test_frontmatter_merge_rewrites_only_what_changed() -> None:
    ours = BASE.replace("updated: 2024-01-01", "updated: 2024-02-01").replace("tags: [people]", "tags: [people, a]")
    theirs = BASE.replace("updated: 2024-01-01", "updated: 2024-03-01").replace("tags: [people]", "tags: [people, b]")
    theirs = theirs.replace("layer: core", "layer: identity  # promoted")
    out, clean = merge_texts(BASE, ours, theirs)
    assert clean
    m = meta(out)
    assert m["tags"] == ["people", "a", "b"] and m["updated"] == "2024-03-01" and m["layer"] == "identity"
    assert "updated: 2024-03-01\n" in out and "title: Ann Smith\n" in out
    assert out.split("---\n", 2)[2] == BASE.split("---\n", 2)[2]  # body untouched


def test_conflicting_key_and_paragraph_get_normal_markers() -> None:
    ours = BASE.replace("title: Ann Smith", "title: Anne").replace("Ann runs the payments team in Oslo.",
                                                                   "Ann runs payments in Bergen.")
    theirs = BASE.replace("title: Ann Smith", "title: Annie").replace("Ann runs the payments team in Oslo.",
                                                                      "Ann runs payments remotely.")
    ours, theirs = add_fact(ours, "Ann likes tea"), add_fact(theirs, "Ann likes coffee")
    out, clean = merge_texts(BASE, ours, theirs)
    assert not clean
    assert "<<<<<<< ours\ntitle: Anne\n=======\ntitle: Annie\n>>>>>>> theirs\n" in out
    assert "<<<<<<< ours\nAnn runs payments in Bergen.\n=======\nAnn runs payments remotely.\n>>>>>>> theirs" in out
    updates = out[out.index("## Updates"):]
    assert "Ann likes tea" in updates and "Ann likes coffee" in updates and "<<<<<<<" not in updates


def test_conflict_inside_updates_keeps_every_line() -> None:
    ours = BASE.replace("- Ann joined in 2019", "- Ann joined in 2018")
    theirs = BASE.replace("- Ann joined in 2019", "- Ann joined in 2020")
    out, clean = merge_texts(BASE, ours, theirs)
    assert not clean and "joined in 2018" in out and "joined in 2020" in out and "<<<<<<< ours" in out


def test_crlf_bom_and_invalid_utf8() -> None:
    def crlf(text: str) -> bytes:
        return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()

    out, clean = merge_page(crlf(BASE), crlf(add_fact(BASE, "Ann A")), crlf(add_fact(BASE, "Ann B likes jazz")))
    assert clean and out.startswith(b"\xef\xbb\xbf") and b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")
    assert b"Ann A" in out and b"Ann B likes jazz" in out
    bad = BASE.encode() + b"\xff\n"
    out, clean = merge_page(bad, bad + b"ours\n", bad)
    assert clean and out == bad + b"ours\n"


def test_pages_without_frontmatter_and_add_add() -> None:
    base = "# Notes\n\n## Updates\n\n- one (added 2024-01-01)\n"
    out, clean = merge_texts(base, base + "- two (added 2024-01-02)\n", base + "- three (added 2024-01-02)\n")
    assert clean and out.endswith("- one (added 2024-01-01)\n- two (added 2024-01-02)\n- three (added 2024-01-02)\n")
    new = ("---\ntitle: Fresh\nlayer: deep\ntrust: 0.5\ncreated: {d}\nupdated: {d}\n---\n# Fresh\n\n"
           "## Updates\n\n- {f} (added {d})\n")
    out, clean = merge_texts("", new.format(d="2024-05-01", f="alpha fact"), new.format(d="2024-05-02", f="beta fact"))
    assert clean
    m = meta(out)
    assert m["created"] == "2024-05-01" and m["updated"] == "2024-05-02"
    assert out.count("## Updates") == 1 and "alpha fact" in out and "beta fact" in out


def test_attributes_and_command() -> None:
    every = "".join(line + "\n" for line in ATTRIBUTES_LINES)
    assert ATTRIBUTES_LINES[0] == ATTRIBUTES_LINE == "*.md merge=curator"
    assert attributes_with_driver("") == every
    assert attributes_with_driver("*.png binary") == f"*.png binary\n{every}"
    assert attributes_with_driver(f"# x\n{every}") is None
    # a wiki set up before the inbox's records had a driver gets just the missing lines
    assert attributes_with_driver(f"{ATTRIBUTES_LINE}\n") == every
    cmd = driver_command("a" * 40, "b" * 40)
    assert cmd.startswith(sys.executable) and cmd.endswith("%O %A %B %P") and "--ours " + "a" * 40 in cmd


def test_a_clone_naming_a_moved_driver_module_is_set_up_again(tmp_path: Path) -> None:
    """A clone set up by an older Curator names the driver's module where it used to live: its
    config is not taken as working (git would fail to run it on the next merge), and installing
    the config again names today's module."""
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", root], check=True)
    old = f"{sys.executable} -m curator.engine.merge_driver %O %A %B %P"
    subprocess.run(["git", "-C", root, "config", "merge.curator.driver", old], check=True)
    assert not config_ok(root)
    assert install_config(root) and configured_command(root) == driver_command() and config_ok(root)
    proc = subprocess.run([sys.executable, "-m", "curator.engine.sync.merge_driver", "--help"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # the module the config names runs


def test_git_merge_runs_the_driver(tmp_path: Path) -> None:
    """A plain ``git merge`` in a clone uses the driver (HEAD/MERGE_HEAD tell it the sides)."""
    root = tmp_path / "r"
    root.mkdir()

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *GIT_ID, *args], cwd=root, capture_output=True, text=True)

    git("init", "-q", "-b", "main")
    (root / ".gitattributes").write_text(ATTRIBUTES_LINE + "\n")
    (root / "ann.md").write_text(BASE)
    git("add", ".")
    git("commit", "-q", "-m", "base")
    git("config", "merge.curator.driver", driver_command())
    git("checkout", "-q", "-b", "other")
    (root / "ann.md").write_text(add_fact(BASE, "Ann speaks Polish"))
    git("commit", "-q", "-am", "other")
    git("checkout", "-q", "main")
    (root / "ann.md").write_text(add_fact(BASE, "Ann moved to Bergen"))
    git("commit", "-q", "-am", "main")
    proc = git("merge", "-q", "--no-edit", "other")
    assert proc.returncode == 0, proc.stderr
    text = (root / "ann.md").read_text()
    assert "Ann speaks Polish" in text and "Ann moved to Bergen" in text and "<<<<<<<" not in text


def test_inbox_records_merge_to_the_first_submission() -> None:
    """The same fact held on two clones: one record, the earlier; the same answer on both sides."""
    early = json.dumps({"id": "abc", "actor": "agent:a", "time": "2026-01-01T10:00:00.000Z"}).encode()
    late = json.dumps({"id": "abc", "actor": "agent:b", "time": "2026-01-01T10:00:05.000Z"}).encode()
    assert merge_record(early, late) == (early, True) and merge_record(late, early) == (early, True)
    assert merge_record(b"not json", late) == (b"not json", False)  # not a record: a conflict, ours kept
    assert merge_record(b"[1]", late) == (b"[1]", False)
    assert is_record("_review/inbox/abc.json") and is_record("_review/rejected/k.json")
    assert not is_record("_review/inbox/x/abc.json") and not is_record("wiki/a.json") and not is_record(None)
