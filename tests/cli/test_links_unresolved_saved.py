"""``curator links unresolved`` saves the operator's whole list as it prints it (issue 44): a later
answer prints the same bytes without making a row, after an agent's append of a fact too, while
the saved queue it was made from and the ignored targets are the same. Anything else (a new
unresolved link, a target ignored, a damaged saved list) makes it again; an agent, ``--json`` and
``--limit`` never read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curator.cli import main
from curator.commands import links as links_command
from curator.engine.review import linkrepair
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    pages: dict[str, str] = {
        "wiki/harbour.md": "---\ntitle: Harbour\n---\n# Harbour\n\nSee [[Harbor Ledger]] and [[Quay Cranes]].\n",
        "wiki/harbour-ledger.md": "---\ntitle: Harbour Ledger\n---\n# Harbour Ledger\n\nFigures.\n",
        "wiki/notes.md": "---\ntitle: Notes\n---\n# Notes\n\nAlso [[Harbor Ledger]], [[Dock \u202eRed]].\n",
        "notes/filler.md": "---\ntitle: Filler\n---\n# Filler\n\nNothing linked.\n",
    }
    return make_wiki(tmp_path / "w", pages)


def run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> str:
    assert main(["--wiki", str(root), *argv]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def append(capsys: pytest.CaptureFixture[str], root: Path, fact: str) -> None:
    """An agent's append of ``fact`` to the filler page (its output read and dropped)."""
    assert main(["--wiki", str(root), "append", "filler", fact]) == 0
    capsys.readouterr()


class Made:
    """How many times the list was made from the targets (``linkrepair.unresolved`` called)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = linkrepair.unresolved

        def counting(*args: object, **kwargs: object) -> object:
            self.calls += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(linkrepair, "unresolved", counting)


def fresh(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The list made anew (the saved one deleted first)."""
    w = Wiki(root)
    try:
        w.store.count()
        w.store._conn.execute("DELETE FROM derived WHERE name=?", (links_command.SAVED_UNRESOLVED,))
    finally:
        w.close()
    return run(capsys, root, "links", "unresolved")


def test_the_whole_list_is_printed_again_as_saved_while_what_it_was_made_from_holds(
        wiki: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(capsys, wiki, "links", "unresolved")
    assert "[[Harbor Ledger]] in 2 page(s)  -> wiki/harbour-ledger.md" in first
    assert "[[Dock <U+202E>Red]]" in first and "\u202e" not in first  # (terminal-safe, saved so)
    made = Made(monkeypatch)
    assert run(capsys, wiki, "links", "unresolved") == first and made.calls == 0
    # an agent's append of a fact adding no link: the queue holds, so does the list
    append(capsys, wiki, "The cranes were serviced in March.")
    assert run(capsys, wiki, "links", "unresolved") == first and made.calls == 0
    assert first == fresh(wiki, capsys, monkeypatch)
    made.calls = 0
    # a new unresolved link: made again, and saved so
    append(capsys, wiki, "The [[Pilot Office]] keeps the tide tables.")
    after = run(capsys, wiki, "links", "unresolved")
    assert made.calls == 1 and "[[Pilot Office]] in 1 page(s)" in after
    assert run(capsys, wiki, "links", "unresolved") == after and made.calls == 1
    assert after == fresh(wiki, capsys, monkeypatch)
    made.calls = 0
    # a target ignored (a decision file, not a page): made again without it
    assert main(["--wiki", str(wiki), "links", "ignore", "Quay Cranes"]) == 0
    capsys.readouterr()
    ignored = run(capsys, wiki, "links", "unresolved")
    assert made.calls == 1 and "Quay Cranes" not in ignored and "Pilot Office" in ignored


def test_a_file_added_that_a_link_names_makes_the_list_again(
        wiki: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A file is no page: adding one leaves the pages' state as it was, but a link naming it
    resolves now, so the list saved with the files as they were is not printed again."""
    append(capsys, wiki, "The crane figures are in [[crane-figures.data]].")
    first = run(capsys, wiki, "links", "unresolved")
    assert "[[crane-figures.data]] in 1 page(s)" in first
    (wiki / "notes/crane-figures.data").write_bytes(b"1,2,3\n")
    after = run(capsys, wiki, "links", "unresolved")
    assert "crane-figures" not in after and after == fresh(wiki, capsys, monkeypatch)


def test_an_agent_json_and_a_limit_never_read_the_saved_list(
        wiki: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, wiki, "links", "unresolved")
    (wiki / ".scope.toml").write_text('[namespaces."wiki"]\nvisible_to_departments = ["ops"]\n', "utf-8")
    made = Made(monkeypatch)
    agent = run(capsys, wiki, "--as", "agent:bot-1", "--department", "sales", "links", "unresolved")
    assert made.calls == 1 and "Harbor Ledger" not in agent  # (the agent sees no wiki/ page's links)
    rows = json.loads(run(capsys, wiki, "--json", "links", "unresolved"))
    assert made.calls == 2 and {r["target"] for r in rows} >= {"Harbor Ledger", "Quay Cranes"}
    limited = run(capsys, wiki, "links", "unresolved", "--limit", "1")
    assert made.calls == 3 and limited.count("[[") == 1


def test_a_damaged_saved_list_is_made_again(wiki: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(capsys, wiki, "links", "unresolved")
    w = Wiki(wiki)
    try:
        w.store.count()
        for bad in (b"not zlib", b"x\x9c" + b"\x00" * 8):
            w.store.save_derived(links_command.SAVED_UNRESOLVED, bad)
            assert run(capsys, wiki, "links", "unresolved") == first
            w.store.count()
    finally:
        w.close()
