"""``curator lint``'s text for the operator is printed from the saved answer's parts (issue 44):
each part's lines are saved as printed under the part's digest, so a later answer prints the
parts it holds as they are and renders only those a change touched. Whatever the path, the bytes
are exactly those of every issue rendered (``lint`` of the engine), the exit status too."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.cli import main
from curator.commands import read as read_command
from curator.commands.invocation import terminal_safe
from curator.engine.review import lint as lint_module
from curator.engine.wiki import Wiki
from tests.corpus import write_pages


def pages(n: int) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for i in range(n):  # (each page has problems: unresolved links, some a bad layer, one a format character)
        layer = "bogus" if i % 5 == 0 else "core"
        odd = "\u202e" if i == 7 else ""
        out[f"notes/p{i:02d}{odd}.md"] = (f"---\nlayer: {layer}\n---\n# P{i}\n\nSee [[gone-{i}]] and "
                                          f"[[missing {i}]].\n")
    return out


def expected(root: Path) -> str:
    """The text of every issue rendered, as ``lint`` printed it before any was saved."""
    wiki = Wiki(root)
    try:
        issues = lint_module.lint(wiki)
        errors = sum(1 for i in issues if i.severity == lint_module.ERROR)
        summary = f"{len(issues)} problems ({errors} errors) in {wiki.store.count()} pages"
        return terminal_safe("\n".join([*(i.render() for i in issues), summary])) + "\n"
    finally:
        wiki.close()


class Rendered:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = 0
        real = lint_module.render_rows

        def counting(rows: list[lint_module.Row]) -> list[str]:
            self.rows += len(rows)
            return real(rows)

        monkeypatch.setattr(lint_module, "render_rows", counting)


def lint_text(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["--wiki", str(root), "lint", *extra])
    out, err = capsys.readouterr()
    assert err == ""
    return code, out


def test_parts_held_are_printed_as_saved_and_only_the_changed_ones_rendered(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_module, "PART_ROWS", 6)  # (many parts from a small wiki)
    root = write_pages(tmp_path / "w", pages(30))
    rendered = Rendered(monkeypatch)
    code, first = lint_text(root, capsys)
    assert code == 1 and first == expected(root)
    assert "p07<U+202E>.md" in first and "\u202e" not in first  # (terminal-safe)
    everything = rendered.rows
    assert everything > 60
    rendered.rows = 0
    assert lint_text(root, capsys) == (code, first) and rendered.rows == 0  # every part held
    # one page changed: its part alone is rendered again
    (root / "notes/p12.md").write_text("---\nlayer: core\n---\n# P12\n\nSee [[p13]] and [[nowhere]].\n", "utf-8")
    code, after = lint_text(root, capsys)
    assert code == 1 and after == expected(root) and after != first
    assert 0 < rendered.rows <= 2 * 6 + 2
    rendered.rows = 0
    assert lint_text(root, capsys) == (code, after) and rendered.rows == 0
    # --exit-zero: the same text, status 0
    assert lint_text(root, capsys, "--exit-zero") == (0, after)


def test_a_damaged_saved_text_is_rendered_again(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", pages(8))
    _, first = lint_text(root, capsys)
    wiki = Wiki(root)
    try:
        wiki.store.count()
        for bad in (b"not marshal", b"\xe9" * 3):
            wiki.store.save_derived(read_command.SAVED_LINT_TEXT, bad)
            assert lint_text(root, capsys)[1] == first
            wiki.store.count()
    finally:
        wiki.close()


def test_an_agent_and_json_are_answered_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", {**pages(6), "wiki/secret.md": "---\nlayer: bogus\n---\n# S\n\n[[nowhere]]\n"})
    lint_text(root, capsys)  # (the operator's text saved)
    (root / ".scope.toml").write_text('[namespaces."wiki"]\nvisible_to_departments = ["ops"]\n', "utf-8")
    _, agent = lint_text(root, capsys, "--as", "agent:bot-1", "--department", "sales")
    assert "secret" not in agent and agent.rstrip().endswith("in 6 pages")


def test_a_renamed_target_is_sorted_in_and_the_rows_are_read_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A page renamed with plain git: its linkers' problem (looked up in git each time) is sorted in
    among the rest, every issue rendered as ``lint`` of the engine has it; the saved rows are read
    once for it, not again."""
    import subprocess

    from tests.gui_helpers import GIT_ID, make_wiki

    root = make_wiki(tmp_path / "w", {"wiki/tides.md": "# Tide Tables\n\nHigh water.\n",
                                      "notes/linker.md": "# Linker\n\nSee [tides](../wiki/tides.md).\n",
                                      "notes/other.md": "---\nlayer: bogus\n---\n# Other\n\n[[nowhere]]\n"})
    subprocess.run(["git", "mv", "wiki/tides.md", "wiki/tide-tables.md"], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-qm", "renamed"], cwd=root, check=True)
    reads: list[int] = []
    real = lint_module._operators_rows

    def counting(wiki: Wiki) -> object:
        reads.append(1)
        return real(wiki)

    monkeypatch.setattr(lint_module, "_operators_rows", counting)
    code, out = lint_text(root, capsys)
    assert "[moved-target]" in out and code == 1 and len(reads) == 1
    assert out == expected(root)
