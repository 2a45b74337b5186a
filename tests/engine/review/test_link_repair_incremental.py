"""The unresolved-link queue after a change costs what the change touches (issue 44): the operator's
queue saved under an earlier state is brought up to date from the changed pages and the pages they
can affect (curator/engine/review/link_queue.py), and must equal the queue computed from every
page; an agent's queue is never the operator's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.review import link_queue, linkrepair
from curator.engine.review.health import health
from curator.engine.review.linkrepair import IGNORED_FILE, unresolved, unresolved_totals
from curator.engine.wiki import Wiki
from tests.corpus import CorpusInfo, generate, write_pages
from tests.engine.review.test_link_repair import AGENT, root  # noqa: F401  (the fixture, with a hidden folder)

PAGES = {
    "notes/hub.md": "---\ntitle: Hub\n---\n# Hub\n\n[[Planning Guide]] [[ledger-a#Totals]] [[budget]]\n"
                    "[[nowhere-yet]] [[later-page]] [[Lantern]]\n",
    "notes/plan.md": "---\ntitle: Planning Guide\n---\n# Plan\n\n[[hub]] [[Nowhere Yet]]\n",
    "notes/ledger-a.md": "# Ledger A\n\nno totals yet\n",
    "notes/budget.md": "# Budget\n\n[[hub]] [[nowhere-yet]]\n",
    "notes/lanterns-of-the-north.md": "# Lanterns of the North\n",
}


@pytest.fixture
def corpus(tmp_path: Path) -> CorpusInfo:
    info = generate(tmp_path / "w", 80, seed=44)
    write_pages(info.root, PAGES)
    return info


def rows(items: list[linkrepair.Unresolved]) -> list[dict[str, Any]]:
    return [{**u.to_json(), "lines": u.lines} for u in items]


def from_scratch(top: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The queue computed from every page as before any was saved (the link index and a suggester
    over every page; the saved queue not asked for)."""
    with monkeypatch.context() as m:
        m.setattr(linkrepair, "saved_queue", lambda wiki, compute=True: None)
        return rows(unresolved(Wiki(top), OPERATOR))


class Counted:
    """Refuses the queue computed from every page and records what the incremental path redoes:
    the pages whose links are resolved again and the targets suggested again."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.resolved: list[list[str]] = []
        self.suggested: list[list[str]] = []
        outgoing, suggest = link_queue.outgoing_by_name, link_queue._suggest

        def resolving(chosen: Any, *args: Any) -> Any:
            self.resolved.append(sorted(chosen))
            return outgoing(chosen, *args)

        def suggesting(suggester: Any, targets: list[link_queue.Target]) -> None:
            self.suggested.append([t.written for t in targets])
            suggest(suggester, targets)

        def refuse(*args: object) -> object:
            raise AssertionError("the queue was computed from every page")

        monkeypatch.setattr(link_queue, "outgoing_by_name", resolving)
        monkeypatch.setattr(link_queue, "_suggest", suggesting)
        monkeypatch.setattr(link_queue, "computed", refuse)


def append(top: Path, rel: str, text: str) -> None:
    with (top / rel).open("a", encoding="utf-8") as f:
        f.write(text)


def test_every_kind_of_change_gives_the_queue_computed_from_every_page(corpus: CorpusInfo,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    top = corpus.root
    first = rows(unresolved(Wiki(top)))  # computed from every page, and saved
    assert first == from_scratch(top, monkeypatch)
    keys = {r["key"] for r in first}
    assert {"nowhere-yet", "later-page", "lantern"} <= keys
    generated = sorted(p for p in corpus.pages if p.startswith(("wiki/", "concepts/")))
    steps: list[tuple[str, Any]] = [
        ("a fact without a link", lambda: append(top, generated[2], "\nThe ledger closes on Fridays.\n")),
        ("a link's line moved", lambda: (top / "notes/hub.md").write_text(
            "---\ntitle: Hub\n---\n# Hub\n\nA line first.\n\n[[Planning Guide]] [[ledger-a#Totals]] [[budget]]\n"
            "[[nowhere-yet]] [[later-page]] [[Lantern]]\n", encoding="utf-8")),
        ("a link to a new missing page", lambda: append(top, generated[0], "\nSee [[Brand New Gap]].\n")),
        ("another occurrence, written otherwise", lambda: append(top, generated[1], "\n[[Nowhere Yet]] [[Nowhere Yet]]\n")),
        ("a link removed", lambda: (top / "notes/budget.md").write_text("# Budget\n\n[[hub]]\n", encoding="utf-8")),
        ("a page that resolves a target", lambda: write_pages(top, {"notes/later-page.md": "# Later\n\n[[hub]]\n"})),
        ("a page a target begins", lambda: write_pages(top, {"notes/brand-new-gap-plans.md": "# Brand New Gap Plans\n"})),
        ("a plural's page", lambda: write_pages(top, {"notes/lanterns.md": "---\ntitle: Lanterns\n---\n# L\n"})),
        ("a page renamed", lambda: (top / "notes/budget.md").rename(top / "notes/budget-2027.md")),
        ("a page removed", lambda: (top / "notes/ledger-a.md").unlink()),
        ("a title changed", lambda: (top / "notes/plan.md").write_text(
            "---\ntitle: Plan Book\naliases: [Nowhere]\n---\n# Plan\n\n[[hub]]\n", encoding="utf-8")),
        ("a page removed that was suggested", lambda: (top / "notes/lanterns.md").unlink()),
    ]
    for what, change in steps:
        change()
        with monkeypatch.context() as m:
            counted = Counted(m)
            got = rows(unresolved(Wiki(top)))
        assert got == from_scratch(top, monkeypatch), what
        assert counted.resolved, what  # (brought up to date, not computed from every page)
        with monkeypatch.context() as m:  # Health's totals: each key's count saved apart, no target decoded
            m.setattr(link_queue, "read_targets", lambda *a: pytest.fail("the totals decoded every target"))
            assert unresolved_totals(Wiki(top)) == (len(got), sum(r["count"] for r in got)), what
    # an ignored target is left out of the saved totals too (the decision file as a sync brings it)
    (top / IGNORED_FILE).write_text(json.dumps({"version": 1, "ignored": [
        {"target": got[0]["target"], "key": got[0]["key"], "by": "operator", "date": "2026-12-06"}]}))
    with monkeypatch.context() as m:
        m.setattr(link_queue, "read_targets", lambda *a: pytest.fail("the totals decoded every target"))
        assert unresolved_totals(Wiki(top)) == (len(got) - 1, sum(r["count"] for r in got[1:]))
    final = {r["key"] for r in got}
    assert "later-page" not in final and {"ledger-a", "planning-guide", "brand-new-gap", "lantern"} <= final


def test_unchanged_and_one_append_redo_only_what_changed(corpus: CorpusInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    top = corpus.root
    unresolved(Wiki(top))  # saved
    page = sorted(p for p in corpus.pages if p.startswith("concepts/"))[0]
    with monkeypatch.context() as m:
        counted = Counted(m)
        m.setattr(link_queue, "updated", lambda *a: pytest.fail("an unchanged wiki was brought up to date"))
        warm = rows(unresolved(Wiki(top)))
        assert unresolved_totals(Wiki(top)) == (len(warm), sum(r["count"] for r in warm))
    assert counted.resolved == [] and counted.suggested == []
    append(top, page, "\nA new fact [[Some Missing Page]].\n")
    with monkeypatch.context() as m:
        counted = Counted(m)
        after = rows(unresolved(Wiki(top)))
    assert counted.resolved == [[page]]  # the appended page's links only
    assert counted.suggested == [["Some Missing Page"]]  # the one new target only
    assert after == from_scratch(top, monkeypatch)
    # health counts from the same saved queue (nothing computed again for the same state)
    with monkeypatch.context() as m:
        counted = Counted(m)
        figures = health(Wiki(top), duplicates=False, lint=False)
    assert counted.resolved == []
    assert figures.figure("unresolved_targets").value == len(after)  # type: ignore[union-attr]


def test_an_agent_never_gets_the_operators_saved_queue(root: Path) -> None:  # noqa: F811
    hidden = "departments/finance/"
    op = unresolved(Wiki(root))  # the operator's, saved
    assert "payroll-secrets" not in {u.key for u in op}
    assert any(s.path.startswith(hidden) for u in op for s in u.suggestions)
    append(root, "wiki/open.md", "\nAlso [[Payroll Secrets 2026 Draft]].\n")
    op = unresolved(Wiki(root))  # the operator's brought up to date and saved again
    draft = next(u for u in op if u.key == "payroll-secrets-2026-draft")
    assert any(s.path.startswith(hidden) for s in draft.suggestions)  # (what the agent must not get)
    for _ in range(2):  # before and after another change
        items = unresolved(Wiki(root), AGENT)
        keys = {u.key for u in items}
        assert "payroll-secrets" in keys  # a link to a hidden page reads as a missing one
        assert "payroll-secrets-2026-draft" in keys
        for u in items:
            assert not any(p.startswith(hidden) for p in u.pages), u
            assert not any(s.path.startswith(hidden) for s in u.suggestions), u
        targets, _links = unresolved_totals(Wiki(root), AGENT)
        assert targets == len(items)
        append(root, "wiki/bystander.md", "\n[[Payroll]]\n")


def test_an_append_that_changes_no_link_carries_the_saved_queue_over(corpus: CorpusInfo,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """After an append with no link (what agents mostly write), the saved queue holds for the new
    state as it is: stamped with that state, not encoded and written again (0.4 s at 100,000
    pages); the next process answers it for the new state without bringing anything up to date."""
    top = corpus.root
    unresolved(Wiki(top))  # saved
    page = sorted(p for p in corpus.pages if p.startswith("concepts/"))[0]
    append(top, page, "\nThe ledger closes on Fridays.\n")
    with monkeypatch.context() as m:
        m.setattr(link_queue, "saved_blob", lambda *a: pytest.fail("the unchanged queue was encoded again"))
        assert rows(unresolved(Wiki(top))) == from_scratch(top, monkeypatch)
    wiki = Wiki(top)
    wiki.store.count()
    found = wiki.store.derived_since(link_queue.SAVED_NAME)
    assert found is not None and found[1] == set()  # (saved under the new state)
    append(top, page, "\nSee [[Another Missing Page]].\n")  # a link: the queue changes, and is saved whole
    assert "another-missing-page" in {r["key"] for r in rows(unresolved(Wiki(top)))}
    assert rows(unresolved(Wiki(top))) == from_scratch(top, monkeypatch)


def test_health_after_a_change_that_leaves_the_queue_decodes_no_target(corpus: CorpusInfo,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Health's totals asked first after each change, as ``curator health`` and the station ask
    them after an agent's append: when the changed pages keep their names and their unresolved
    links as saved, the saved queue is carried to the new state without a target decoded or a
    page brought up to date (at 100,000 pages decoding the targets was 0.4 s of that figure);
    otherwise it is brought up to date. Either way the totals, and the queue asked next, equal
    the queue computed from every page."""
    top = corpus.root
    unresolved(Wiki(top))  # saved
    generated = sorted(p for p in corpus.pages if p.startswith(("wiki/", "concepts/")))

    def two_facts() -> None:
        append(top, generated[4], "\nThe crane is inspected in May.\n")
        append(top, generated[5], "\nThe quay opens at six.\n")

    steps: list[tuple[str, bool, Any]] = [
        ("a fact without a link", True, lambda: append(top, generated[2], "\nThe ledger closes on Fridays.\n")),
        ("a link to a page that exists", True, lambda: append(top, generated[3], "\nSee [[hub]].\n")),
        ("two facts on two pages", True, two_facts),
        ("a link to a missing page", False, lambda: append(top, generated[0], "\nSee [[Brand New Gap]].\n")),
        ("a link's line moved", False, lambda: (top / "notes/hub.md").write_text(
            "---\ntitle: Hub\n---\n# Hub\n\nA line first.\n\n[[Planning Guide]] [[ledger-a#Totals]] [[budget]]\n"
            "[[nowhere-yet]] [[later-page]] [[Lantern]]\n", encoding="utf-8")),
        ("a title changed", False, lambda: (top / "notes/plan.md").write_text(
            "---\ntitle: Nowhere Yet\n---\n# Plan\n\n[[hub]] [[Nowhere Yet]]\n", encoding="utf-8")),
        ("a page added", False, lambda: write_pages(top, {"notes/later-page.md": "# Later\n\n[[hub]]\n"})),
        ("a page removed", False, lambda: (top / "notes/ledger-a.md").unlink()),
        ("a fact after all that", True, lambda: append(top, generated[6], "\nNothing links from here.\n")),
    ]
    for what, carried, change in steps:
        change()
        with monkeypatch.context() as m:
            if carried:
                m.setattr(link_queue, "read_targets", lambda *a: pytest.fail("the totals decoded every target"))
                m.setattr(link_queue, "updated", lambda *a: pytest.fail("the unchanged queue was brought up to date"))
            totals = unresolved_totals(Wiki(top))
        expected = from_scratch(top, monkeypatch)
        assert totals == (len(expected), sum(r["count"] for r in expected)), what
        assert rows(unresolved(Wiki(top))) == expected, what


def test_a_pages_digest_is_of_its_values_not_of_the_objects_holding_them() -> None:
    """A page parsed now and the same page decoded from its record hold equal values as other
    objects (a link's key the very string of its target, or another; interned, or not): the
    digest the saved queue compares is the same, so an append adding no unresolved link keeps
    the saved list (made again after every append, the list cost 0.4 s of Health at 100,000)."""
    import sys

    from curator.engine.review.link_queue import _page_digest

    target = "".join(["ledger", "-home"])
    shared = [(target, target, 3)]
    apart = [("".join(["ledger", "-", "home"]), "".join(["ledger-", "home"]), 3)]
    interned = [(sys.intern("ledger-home"), sys.intern("ledger-home"), 3)]
    title = "".join(["Ledger ", "Note"])
    digests = {_page_digest(title, (), shared), _page_digest("Ledger Note", (), apart),
               _page_digest(sys.intern("Ledger Note"), (), interned)}
    assert len(digests) == 1
    assert _page_digest("Ledger Note", (), [("ledger-home", "Ledger Home", 3)]) not in digests
