"""``curator index``'s text listing is carried past a change that leaves every line as it was
(issue 44): an agent's append changes a page's size, which the text does not show, so the listing
saved under the state before is printed again (and saved under this one) instead of a line being
made for every page. A page retitled, added or removed makes it again. Whatever the path, the text
is exactly the one made from every page."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.cli import main
from curator.commands import read as read_command
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki

PAGES = {
    "wiki/harbour.md": "---\ntitle: Harbour\nlayer: core\ntrust: 0.8\n---\n# Harbour\n\nThe quay.\n",
    "wiki/ledger.md": "---\ntitle: Harbour Ledger\n---\n# Harbour Ledger\n\nFigures.\n",
    "notes/cranes.md": "---\ntitle: Cranes\n---\n# Cranes\n\nTwo cranes.\n",
}


class Made:
    """How many times the listing was made from every page (``_emit_index`` called)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = read_command._emit_index

        def counting(*args: object) -> object:
            self.calls += 1
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(read_command, "_emit_index", counting)


def listing(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    assert main(["--wiki", str(root), "index"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def fresh(capsys: pytest.CaptureFixture[str], root: Path) -> str:
    """The listing made from every page (the saved one deleted first)."""
    wiki = Wiki(root)
    try:
        wiki.store.count()
        wiki.store._conn.execute("DELETE FROM derived WHERE name=?", (read_command.SAVED_LISTING[False],))
    finally:
        wiki.close()
    return listing(capsys, root)


def test_an_append_carries_the_listing_and_a_new_line_makes_it_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    first = listing(capsys, root)
    assert "wiki/ledger.md" in first and first.endswith("3 pages\n")
    made = Made(monkeypatch)
    assert main(["--wiki", str(root), "append", "cranes", "The cranes were serviced in March."]) == 0
    capsys.readouterr()
    assert listing(capsys, root) == first and made.calls == 0  # carried: the same lines
    assert listing(capsys, root) == first and made.calls == 0  # (and saved under this state)
    assert fresh(capsys, root) == first
    made.calls = 0
    # a page retitled: its line changed, the listing is made again
    (root / "wiki/ledger.md").write_text("---\ntitle: The Quay Ledger\n---\n# Ledger\n\nFigures.\n", "utf-8")
    retitled = listing(capsys, root)
    assert made.calls == 1 and "The Quay Ledger" in retitled and retitled == fresh(capsys, root)
    made.calls = 0
    # a page added, then one removed: made again each time (the column and the count move)
    (root / "notes/a-much-longer-page-name.md").write_text("# Long\n\nText.\n", "utf-8")
    added = listing(capsys, root)
    assert made.calls == 1 and added.endswith("4 pages\n") and added == fresh(capsys, root)
    made.calls = 0
    (root / "notes/cranes.md").unlink()
    removed = listing(capsys, root)
    assert made.calls == 1 and "cranes" not in removed and removed == fresh(capsys, root)


def test_a_listing_of_an_older_format_is_made_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from curator.commands.invocation import packed_answer

    root = make_wiki(tmp_path / "w", PAGES)
    first = listing(capsys, root)
    wiki = Wiki(root)
    try:
        wiki.store.count()
        wiki.store.save_derived(read_command.SAVED_LISTING[False], packed_answer(b"listing-3\0", b"stale text"))
    finally:
        wiki.close()
    assert listing(capsys, root) == first
