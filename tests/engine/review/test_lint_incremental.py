"""Lint after a change costs what the change touches (issue 44): the operator's answer saved under
an earlier state is brought up to date from the changed pages and the pages they can affect
(curator/engine/review/lint.py), and must equal lint computed from every page."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.review import lint as lint_module
from curator.engine.review.lint import LintIssue, lint, lint_counts
from curator.engine.wiki import Wiki
from tests.corpus import CorpusInfo, generate, write_pages

#: hand-written pages beside the generated ones: each step below changes what one of them reports
PAGES = {
    "notes/hub.md": "---\ntitle: Hub\n---\n# Hub\n\n[[Planning Guide]] [[ledger-a#Totals]] [[budget]]\n"
                    "[[nowhere-yet]] [[later-page]]\n",
    "notes/plan.md": "---\ntitle: Planning Guide\n---\n# Plan\n\n[[hub]]\n",
    "notes/ledger-a.md": "# Ledger A\n\nno totals yet\n",
    "notes/budget.md": "# Budget\n\n[[hub]]\n",
    "notes/lonely.md": "# Lonely\n\nnobody links here\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> CorpusInfo:
    info = generate(tmp_path / "w", 60, seed=44)
    write_pages(info.root, PAGES)
    return info


#: lint of every page (kept here: the tests refuse it to lint while the incremental path answers)
EVERY_PAGE = lint_module._page_issues


def from_scratch(root: Path) -> list[LintIssue]:
    """Lint of every page, nothing saved used (no git here: no renames seen in history)."""
    return EVERY_PAGE(Wiki(root), OPERATOR)


def refuse_every_page(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse computing lint from every page, and count the pages checked (each call of lint's
    per-page check, by path): the incremental path alone must answer."""
    checked: list[str] = []
    check = lint_module._issues_of

    def counted(path: str, *args: Any) -> list[LintIssue]:
        checked.append(path)
        return check(path, *args)

    def refuse(*args: object) -> object:
        raise AssertionError("lint was computed from every page")

    monkeypatch.setattr(lint_module, "_issues_of", counted)
    monkeypatch.setattr(lint_module, "_page_issues", refuse)
    return checked


@pytest.mark.parametrize("part_rows", [lint_module.PART_ROWS, 3])  # (3: the rows saved in many parts)
def test_every_kind_of_change_gives_the_answer_computed_from_every_page(corpus: CorpusInfo, part_rows: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_module, "PART_ROWS", part_rows)
    root = corpus.root
    first = lint(Wiki(root))  # computed from every page, and saved
    assert first == from_scratch(root)
    assert {i.code for i in first} >= {"unresolved-link", "broken-anchor", "orphan"}
    generated = sorted(p for p in corpus.pages if p.startswith(("wiki/", "concepts/")))
    unresolved = sorted(corpus.unresolved)[0]

    def append(rel: str, text: str) -> None:
        with (root / rel).open("a", encoding="utf-8") as f:
            f.write(text)

    def write(rel: str, text: str) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")

    steps: list[tuple[str, Callable[[], None], Callable[[list[LintIssue]], bool]]] = [
        ("an append", lambda: append(generated[3], "\nOne more fact.\n"), lambda _: True),
        ("an append adding the anchor a link looks for", lambda: append("notes/ledger-a.md", "\n## Totals\n"),
         lambda out: not any(i.code == "broken-anchor" and i.path == "notes/hub.md" for i in out)),
        ("an edit linking an orphan", lambda: append("notes/budget.md", "\n[[lonely]]\n"),
         lambda out: not any(i.code == "orphan" and i.path == "notes/lonely.md" for i in out)),
        ("an edit dropping that link again", lambda: write("notes/budget.md", "# Budget\n\n[[hub]]\n"),
         lambda out: any(i.code == "orphan" and i.path == "notes/lonely.md" for i in out)),
        ("a new title (links by the old one break)",
         lambda: write("notes/plan.md", "---\ntitle: Roadmap\n---\n# Plan\n\n[[hub]]\n"),
         lambda out: any(i.code == "unresolved-link" and "Planning Guide" in i.message for i in out)),
        ("a page made for a link not yet written", lambda: write("notes/later-page.md", "# Later\n\n[[hub]]\n"),
         lambda out: not any("later-page" in i.message for i in out)),
        ("a page for a generated unresolved target", lambda: write(f"wiki/{unresolved}.md", "# Found\n"),
         lambda out: not any(i.code == "unresolved-link" and f"[[{unresolved}]]" in i.message for i in out)),
        ("a second page named like a linked one (the link becomes ambiguous)",
         lambda: write("archive/budget.md", "# Old budget\n"),
         lambda out: any(i.code == "ambiguous-link" and i.path == "notes/hub.md" for i in out)),
        ("a page renamed (moved to another folder; its title still names it)",
         lambda: os.rename(root / "notes/ledger-a.md", root / "archive/ledger-b.md"),
         lambda out: not any("ledger-a" in i.message for i in out if i.path == "notes/hub.md")),
        ("a renamed page's title changed (the link by it breaks)",
         lambda: write("archive/ledger-b.md", "# Ledger B\n\n## Totals\n"),
         lambda out: any(i.code == "unresolved-link" and "ledger-a" in i.message for i in out)),
        ("a page removed (the ambiguity goes)", lambda: (root / "archive/budget.md").unlink(),
         lambda out: not any(i.code == "ambiguous-link" and i.path == "notes/hub.md" for i in out)),
        ("a generated page removed", lambda: (root / generated[5]).unlink(), lambda _: True),
        ("a page given a title another link names", lambda: write("notes/plan.md",
                                                                 "---\ntitle: Nowhere Yet\n---\n# Plan\n"),
         lambda out: not any("nowhere-yet" in i.message.lower() for i in out)),
        ("a folder differing in case", lambda: write("Notes/extra.md", "# Extra\n\n[[hub]]\n"),
         lambda out: any(i.code == "folder-case" for i in out)),
        ("a look-alike name", lambda: write("notes/hu\u0431.md", "# Hub?\n"), lambda _: True),
        ("a whole folder moved", lambda: shutil.move(root / "Notes", root / "Moved"),
         lambda out: not any(i.code == "folder-case" for i in out)),
    ]
    for what, change, expected in steps:
        change()
        with monkeypatch.context() as patched:
            refuse_every_page(patched)
            if what.startswith("an edit"):  # (Health's counts bring the saved answer up to date too)
                assert lint_counts(Wiki(root)) == Counter(i.code for i in from_scratch(root)), what
            answer = lint(Wiki(root))
        assert answer == from_scratch(root), what
        assert expected(answer), what
        assert lint(Wiki(root)) == answer, what  # (and saved as it is now)
        assert lint_counts(Wiki(root)) == Counter(i.code for i in answer), what  # (from the saved rows)


def test_an_edit_checks_only_the_pages_it_can_affect(corpus: CorpusInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    root = corpus.root
    first = lint(Wiki(root))  # computed from every page, and saved
    checked = refuse_every_page(monkeypatch)
    with (root / "notes/budget.md").open("a", encoding="utf-8") as f:
        f.write("\nAnother fact about the budget.\n")
    wiki = Wiki(root)
    answer = lint(wiki)
    assert checked == ["notes/budget.md"]  # one page checked of the 65
    assert not wiki.store.decoded  # (and the others' records never all decoded)
    assert answer == first  # (an append of plain text changes nothing lint reports)

    checked.clear()
    (root / "notes/lonely.md").write_text("# Lonely\n\n[[ledger-a#Totals]]\n", encoding="utf-8")
    wiki = Wiki(root)
    answer = lint(wiki)
    # the edited page alone checked whole: ledger-a, linked now, only has its orphan status recounted
    assert checked == ["notes/lonely.md"] and not wiki.store.decoded
    assert not any(i.code == "orphan" and i.path == "notes/ledger-a.md" for i in answer)
    assert any(i.code == "broken-anchor" and i.path == "notes/lonely.md" for i in answer)

    checked.clear()
    (root / "notes/ledger-a.md").write_text("# Ledger A\n\n## Totals\n", encoding="utf-8")
    wiki = Wiki(root)
    answer = lint(wiki)
    # a heading added: the pages with an anchor into it are checked again, nothing else
    assert sorted(checked) == ["notes/hub.md", "notes/ledger-a.md", "notes/lonely.md"]
    assert not any(i.code == "broken-anchor" for i in answer if i.path.startswith("notes/"))
    monkeypatch.undo()
    assert answer == from_scratch(root)


def test_an_append_that_changes_nothing_lint_sees_keeps_the_saved_answer_as_it_is(
        corpus: CorpusInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fact appended (no link, title or problem changed): the answer saved before is stamped
    with the new state, not encoded and written again whole (6 MB at 100,000 pages, after every
    append); an edit that changes what a page's links see is written again, and both answers
    are what every page gives."""
    from curator.engine.corpus.store import PageStore, Saved

    root = corpus.root
    lint(Wiki(root))
    written: list[str] = []
    save, carry = PageStore.save_derived, PageStore.carry_derived

    def saving(self: PageStore, name: str, data: bytes, state: bytes | None = None) -> bool:
        written.append(f"save {name}")
        return save(self, name, data, state)

    def carrying(self: PageStore, name: str, found: Saved, state: bytes | None = None) -> None:
        written.append(f"carry {name}")
        carry(self, name, found, state)

    monkeypatch.setattr(PageStore, "save_derived", saving)
    monkeypatch.setattr(PageStore, "carry_derived", carrying)
    before = Wiki(root)
    before.store.count()
    saved = before.store.derived_since(lint_module.SAVED_NAME)
    assert saved is not None
    with (root / "notes/budget.md").open("a", encoding="utf-8") as f:
        f.write("\nAnother fact about the budget.\n")
    wiki = Wiki(root)
    answer = lint(wiki)
    assert f"carry {lint_module.SAVED_NAME}" in written and f"save {lint_module.SAVED_NAME}" not in written
    assert wiki.store.derived(lint_module.SAVED_NAME) == saved[0]  # (for the new state, byte for byte)
    assert answer == from_scratch(root)
    written.clear()
    (root / "notes/budget.md").write_text("# Budget\n\nSee [[nowhere-at-all]].\n", encoding="utf-8")
    answer = lint(Wiki(root))
    assert f"save {lint_module.SAVED_NAME}" in written
    assert any(i.path == "notes/budget.md" and "nowhere-at-all" in i.message for i in answer)
    monkeypatch.undo()
    assert answer == from_scratch(root)


def test_an_agents_lint_is_not_saved_nor_brought_up_to_date(corpus: CorpusInfo) -> None:
    from curator.engine.policy.actor import parse_actor

    root = corpus.root
    agent = parse_actor("agent:bob")
    assert lint(Wiki(root), agent) == lint_module._page_issues(Wiki(root), agent)
    assert lint_counts(Wiki(root), agent) == Counter(i.code for i in lint_module._page_issues(Wiki(root), agent))
    assert Wiki(root).store.derived(lint_module.SAVED_NAME) is None
    assert lint(Wiki(root)) == from_scratch(root)
    assert OPERATOR.is_operator
