"""Link resolution (docs/design.md §3 order: stem, path, alias/title, suffix), backlinks, unresolved and
ambiguous links, and what lint reports about them."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.review.lint import lint
from curator.engine.wiki import Wiki
from tests.corpus import generate, write_pages


def open_wiki(root: Path, pages: dict[str, str | bytes]) -> Wiki:
    return Wiki(write_pages(root, pages))


def targets(wiki: Wiki, path: str) -> list[tuple[str, str | None]]:
    return [(e.link.target, e.target) for e in wiki.links.outgoing[path]]


def test_resolution_order_stem_path_alias_title_suffix(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/ann-smith.md": "---\ntitle: Ann Smith\naliases: [Annie, The Boss]\n---\n",
        "wiki/people/bob.md": "---\ntitle: Robert Jones\n---\n",
        "wiki/pay-flow.md": "---\ntitle: Payment Flow\n---\n",
        "concepts/payment-flow-old.md": "# Old\n",
        "wiki/src.md": (
            "[[Ann Smith]] [[ann-smith]] [[wiki/ann-smith]] [[wiki/ann-smith.md]] [[Annie]] "
            "[[the boss]] [[Payment Flow]] [[Robert Jones]] [[people/bob]] [[home/wiki/people/bob]] "
            "[[nobody]] [[ANN SMITH#History|her]]\n"
        ),
    })
    assert targets(wiki, "wiki/src.md") == [
        ("Ann Smith", "wiki/ann-smith.md"),
        ("ann-smith", "wiki/ann-smith.md"),
        ("wiki/ann-smith", "wiki/ann-smith.md"),
        ("wiki/ann-smith.md", "wiki/ann-smith.md"),
        ("Annie", "wiki/ann-smith.md"),
        ("the boss", "wiki/ann-smith.md"),
        ("Payment Flow", "wiki/pay-flow.md"),
        ("Robert Jones", "wiki/people/bob.md"),
        ("people/bob", "wiki/people/bob.md"),
        ("home/wiki/people/bob", "wiki/people/bob.md"),
        ("nobody", None),
        ("ANN SMITH", "wiki/ann-smith.md"),
    ]


def test_a_stem_match_beats_a_title_match(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/payments.md": "# Ledger\n",
        "wiki/other.md": "---\ntitle: payments\n---\n",
        "wiki/src.md": "[[payments]]\n",
    })
    res = wiki.links.resolve("payments")
    assert res.path == "wiki/payments.md" and not res.ambiguous


def test_markdown_links_resolve_relative_to_the_linking_page(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/a.md": "[b](../concepts/b.md) [c](c.md) [gone](missing.md)\n",
        "wiki/c.md": "c\n",
        "concepts/b.md": "b\n",
    })
    assert targets(wiki, "wiki/a.md") == [("concepts/b.md", "concepts/b.md"), ("wiki/c.md", "wiki/c.md"),
                                         ("wiki/missing.md", None)]


def test_related_entries_are_links(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/a.md": "---\nrelated: [b, 'concepts/c.md', '[[D Page]]']\n---\n",
        "wiki/b.md": "", "concepts/c.md": "", "wiki/d-page.md": "",
    })
    assert [t for _, t in targets(wiki, "wiki/a.md")] == ["wiki/b.md", "concepts/c.md", "wiki/d-page.md"]
    assert wiki.links.backlinks("concepts/c.md")[0].link.kind == "related"


def test_cjk_and_unicode_normalisation(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "café")
    wiki = open_wiki(tmp_path, {
        "wiki/付款流程.md": "# 付款流程\n",
        f"wiki/{nfd}.md": "# Café\n",
        "wiki/src.md": "[[付款流程]] [[付款流程#审批|审批]] [[café]]\n",
    })
    got = [t for _, t in targets(wiki, "wiki/src.md")]
    assert got[:2] == ["wiki/付款流程.md", "wiki/付款流程.md"]
    assert got[2] is not None and unicodedata.normalize("NFC", got[2]) == "wiki/café.md"


def test_backlinks_unresolved_and_self_links(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/a.md": "[[b]] [[b#x]] [[a]] [[ghost]]\n",
        "wiki/b.md": "[[a]]\n",
    })
    links = wiki.links
    assert [e.source for e in links.backlinks("wiki/b.md")] == ["wiki/a.md", "wiki/a.md"]
    assert [e.source for e in links.backlinks("wiki/a.md")] == ["wiki/b.md"]  # its self-link excluded
    assert list(links.unresolved) == ["ghost"]
    assert links.unresolved["ghost"][0].source == "wiki/a.md"


def test_ambiguous_links_resolve_deterministically_and_lint_reports_them(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/overview.md": "# Overview\n\n[[start]]\n",
        "concepts/overview.md": "# Overview\n\n[[start]]\n",
        "start.md": "[[overview]] and again [[Overview]]\n",
    })
    res = wiki.links.resolve("overview")
    # Obsidian's rule (docs/design.md §3): the shortest path string first, ties alphabetical
    assert res.ambiguous and res.candidates == ("wiki/overview.md", "concepts/overview.md")
    assert res.path == "wiki/overview.md"
    issues = [i for i in lint(wiki) if i.code == "ambiguous-link"]
    assert len(issues) == 1 and issues[0].path == "start.md" and issues[0].line == 1
    assert "2 times" in issues[0].message and "concepts/overview.md" in issues[0].message
    assert "resolved to wiki/overview.md" in issues[0].message
    dupes = sorted(i.path for i in lint(wiki) if i.code == "duplicate-basename")
    assert dupes == ["concepts/overview.md", "wiki/overview.md"]


def test_lint_reports_every_kind_of_problem(tmp_path: Path) -> None:
    wiki = open_wiki(tmp_path, {
        "wiki/hub.md": "[[bad-yaml]] [[bad-values]] [[bytes]] [[missing]] [[missing]]\n",
        "wiki/bad-yaml.md": "---\ntitle: [x\n---\n[[hub]]\n",
        "wiki/bad-values.md": "---\nlayer: top\ntrust: lots\n---\n[[hub]]\n",
        "wiki/bytes.md": b"[[hub]] \xff\n",
        "wiki/orphan.md": "[[hub]]\n",
    })
    found = {(i.path, i.code, i.severity) for i in lint(wiki)}
    assert {
        ("wiki/bad-yaml.md", "frontmatter", "error"),
        ("wiki/bad-values.md", "layer", "error"),
        ("wiki/bad-values.md", "trust", "error"),
        ("wiki/bytes.md", "encoding", "error"),
        ("wiki/hub.md", "unresolved-link", "warning"),
        ("wiki/orphan.md", "orphan", "warning"),
    } <= found
    assert not any(code == "orphan" for path, code, _ in found if path != "wiki/orphan.md")
    unresolved = [i for i in lint(wiki) if i.code == "unresolved-link"]
    assert len(unresolved) == 1 and unresolved[0].line == 1 and "(2 times)" in unresolved[0].message


def test_the_generated_corpus_resolves_as_designed(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 80, seed=3)
    wiki = Wiki(info.root)
    links = wiki.links
    for source, target, expected in info.sample_links:
        assert links.resolve(target).path == expected, (source, target)
    written = {e.link.key for edges in links.outgoing.values() for e in edges}
    assert info.unresolved and info.unresolved <= set(links.unresolved)
    assert not (info.code_only & written)
    assert links.resolve("overview").ambiguous
    kinds = {e.link.kind for edges in links.outgoing.values() for e in edges}
    assert kinds == {"wikilink", "embed", "markdown", "related"}
    anchors = [e for edges in links.outgoing.values() for e in edges if e.link.anchor and e.link.alias]
    assert anchors and all(e.target is not None for e in anchors)


def test_the_operators_lint_is_answered_again_for_the_same_pages_and_files_only(tmp_path: Path,
                                                                                 monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Lint's saved answer (see curator/engine/review/lint.py): a new process on the same pages answers
    it without resolving anything; an in-place edit brings it up to date from the edited page (not
    every page checked again), a new attachment file or an agent get a fresh one, each equal to
    lint computed from scratch."""
    from curator.engine.policy.actor import parse_actor
    from curator.engine.review import lint as lint_module

    root = write_pages(tmp_path, {
        "wiki/hub.md": "[[ghost]] [[plan#Nowhere]] ![[diagram.png]] [[plan]]\n",
        "wiki/plan.md": "# Plan\n\n[[hub]]\n",
        "wiki/lonely.md": "---\nlayer: top\n---\nno links\n",
    })
    first = lint(Wiki(root))
    assert {i.code for i in first} >= {"unresolved-link", "broken-anchor", "missing-attachment", "orphan", "layer"}
    computed = lint_module._page_issues

    def refuse(wiki: Wiki, actor: object, links: object = None) -> object:
        raise AssertionError("lint was computed again for the same pages")

    monkeypatch.setattr(lint_module, "_page_issues", refuse)
    assert lint(Wiki(root)) == first  # a new process, the same pages and files: the saved answer

    hub = root / "wiki/hub.md"
    stat = hub.stat()
    hub.write_text("[[ghost]] [[plan#Plan]]  ![[diagram.png]] [[plan]]\n")  # in place, another size
    os.utime(hub, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # (even with the old mtime)
    edited = lint(Wiki(root))  # (brought up to date from the edited page: not every page checked again)
    assert "broken-anchor" not in {i.code for i in edited} and edited == computed(Wiki(root), OPERATOR)

    (root / "wiki/diagram.png").write_bytes(b"\x89PNG")
    with pytest.raises(AssertionError, match="computed again"):
        lint(Wiki(root))  # (the links resolve among other files: every page is checked again)
    (root / "wiki/diagram.png").unlink()
    monkeypatch.setattr(lint_module, "_page_issues", computed)

    (root / "wiki/diagram.png").write_bytes(b"\x89PNG")  # no page changed: the attachment files did
    with_file = lint(Wiki(root))
    assert "missing-attachment" not in {i.code for i in with_file}
    assert with_file == computed(Wiki(root), OPERATOR)

    monkeypatch.setattr(lint_module, "_page_issues", refuse)
    assert lint(Wiki(root)) == with_file
    with pytest.raises(AssertionError, match="computed again"):  # an agent's answer is never saved
        lint(Wiki(root), parse_actor("agent:bot", None))
