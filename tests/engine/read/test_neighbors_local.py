"""``neighbors`` answers from a link index built around the one page (``links.local_index``):
its outgoing links and backlinks must be exactly those of the whole wiki's index, for every page
of varied wikis (same-named pages, titles, aliases, relative and ``../`` links, attachments), for
the operator and for an agent that cannot see every page; and a page edited on disk changes the
answer of the next one-shot command."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from curator.cli import main
from curator.engine.corpus.links import JOINED_MATCH_ABOVE, LinkIndex, links_reaching, local_index
from curator.engine.corpus.page import Link, Page
from curator.engine.errors import PageNotFound
from curator.engine.graph.link_graph import explain
from curator.engine.policy.actor import OPERATOR, parse_actor
from curator.engine.wiki import Wiki
from tests.corpus import generate, write_pages
from tests.obsidian_vault import build


def assert_same_as_full(pages: Mapping[str, Page], attachments: Iterable[str]) -> None:
    attachments = list(attachments)
    full = LinkIndex(pages, attachments)
    for path in pages:
        local = local_index(pages, path, attachments)
        assert local.outgoing[path] == full.outgoing[path], path
        assert local.backlinks(path) == full.backlinks(path), path


def test_local_index_matches_the_full_index_on_a_hostile_corpus(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 120, seed=3, hostile=True, cjk=True)
    wiki = Wiki(info.root)
    assert_same_as_full(wiki.pages, wiki.store.attachments)
    assert any(wiki.links.backlinks(p) for p in wiki.pages)  # the corpus has backlinks to compare


def test_local_index_matches_the_full_index_on_an_obsidian_vault(tmp_path: Path) -> None:
    wiki = Wiki(build(tmp_path / "vault"))
    assert_same_as_full(wiki.pages, wiki.store.attachments)


def test_local_index_matches_on_same_names_titles_aliases_and_odd_paths(tmp_path: Path) -> None:
    root = write_pages(tmp_path / "w", {
        "a/note.md": "[[note]] [[b/note]] [[../b/note]] [[./note]] [[Boss]] [[x/..]]\n",
        "b/note.md": "---\ntitle: Boss\n---\n[[note]] [[a/note]]\n",
        "note.md": "---\naliases: [the boss]\n---\n[[the boss]] [[Note]]\n",
        "c/ spaced .md": "[[spaced]] [[ spaced ]]\n",
        "c/d/deep.md": "[[../ spaced ]] [[c/d/deep]] [[home/c/d/deep]] [[note]] [[Boss]]\n",
    })
    wiki = Wiki(root)
    assert_same_as_full(wiki.pages, wiki.store.attachments)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_neighbors_follow_an_edit_on_disk_and_hide_what_an_agent_cannot_see(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_pages(tmp_path / "w", {
        ".scope.toml": '[namespaces.hr]\nvisible_to_departments = ["hr"]\n',
        "wiki/hub.md": "# Hub\n[[alpha]]\n",
        "wiki/alpha.md": "# Alpha\n",
        "wiki/beta.md": "# Beta\nnothing yet\n",
        "hr/secret.md": "# Secret\n[[hub]]\n",
    })
    wiki = ["--wiki", str(root)]
    agent = [*wiki, "--as", "agent:eng", "--department", "engineering"]
    out = run(capsys, *wiki, "neighbors", "hub", "--json")
    assert [n["path"] for n in out["outgoing"]] == ["wiki/alpha.md"]
    assert [n["path"] for n in out["inbound"]] == ["hr/secret.md"]
    assert run(capsys, *agent, "neighbors", "hub", "--json")["inbound"] == []

    beta = root / "wiki/beta.md"
    beta.write_text("# Beta\nsee [[Hub]] and [[secret]]\n")
    os.utime(beta, ns=(beta.stat().st_mtime_ns + 10**9,) * 2)
    out = run(capsys, *wiki, "neighbors", "hub", "--json")
    assert [n["path"] for n in out["inbound"]] == ["hr/secret.md", "wiki/beta.md"]
    out = run(capsys, *agent, "neighbors", "beta", "--json")
    assert [n["path"] for n in out["inbound"]] == []
    assert [(n["target"], n["path"]) for n in out["outgoing"]] == [("Hub", "wiki/hub.md"), ("secret", None)]
    out = run(capsys, *agent, "neighbors", "hub", "--json")
    assert [n["path"] for n in out["inbound"]] == ["wiki/beta.md"]  # the hidden page's link is gone
    assert run(capsys, *wiki, "explain", "hub", "--json")["in_degree"] == 2
    out = run(capsys, *agent, "explain", "hub", "--json")
    assert (out["in_degree"], sorted(c["path"] for c in out["strongest"])) == (1, ["wiki/alpha.md", "wiki/beta.md"])



def test_explain_around_a_page_equals_explain_over_the_whole_graph(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 80, seed=5, hostile=True, cjk=True)
    (info.root / ".scope.toml").write_text('[namespaces.wiki]\nvisible_to_departments = ["hr"]\n')
    for actor in (OPERATOR, parse_actor("agent:eng", "engineering")):
        around = Wiki(info.root)
        visible = [p.path for p in around.visible_pages(actor)]
        answers = {p: explain(around, p, actor).to_json() for p in visible}
        assert around.built_links(actor) is None  # every answer came from the graph around the page
        whole = Wiki(info.root)
        whole.links_for(actor)  # built: explain uses the cached whole graph
        assert answers == {p: explain(whole, p, actor).to_json() for p in visible}
        assert any(a["in_degree"] for a in answers.values())
    hidden = Wiki(info.root)
    assert len(hidden.visible_pages(parse_actor("agent:eng", "engineering"))) < len(hidden.pages)


@pytest.mark.parametrize("corpus", ["hostile", "obsidian"])
def test_neighbors_from_the_cache_tables_match_the_full_index(tmp_path: Path, corpus: str) -> None:
    """A one-shot ``neighbors``/``explain``/``find`` reads only the cached records around the page
    (``link_names``/``page_names``), never decodes every page, and answers exactly as the whole
    index does, for the operator and for an agent that cannot see every page."""
    if corpus == "hostile":
        root = generate(tmp_path / "w", 120, seed=3, hostile=True, cjk=True).root
        (root / ".scope.toml").write_text('[namespaces.wiki]\nvisible_to_departments = ["hr"]\n')
    else:
        root = build(tmp_path / "vault")
    Wiki(root).close()  # the cache is written
    full = Wiki(root)
    for actor in (OPERATOR, parse_actor("agent:eng", "engineering")):
        index = full.links_for(actor)
        visible = [p.path for p in full.visible_pages(actor)]
        assert visible
        for path in visible:
            wiki = Wiki(root)
            around = wiki.links_around(path, actor)
            assert around.outgoing[path] == index.outgoing[path], path
            assert around.backlinks(path) == index.backlinks(path), path
            assert set(around.pages) <= set(visible)  # an agent's index holds only pages it sees
            slug = full.pages[path].slug
            try:
                expected = full.find(slug, actor).path
            except PageNotFound:
                expected = None
            try:
                found = wiki.find(slug, actor).path
            except PageNotFound:
                found = None
            assert found == expected, slug
            assert explain(wiki, path, actor).to_json() == explain(full, path, actor).to_json(), path
            assert not wiki.store.decoded, path  # nothing decoded every page
            wiki.close()
    hidden = {p for p in full.pages if not full.visible(parse_actor("agent:eng", "engineering"), p)}
    assert hidden or corpus == "obsidian"


def test_links_around_a_page_of_a_decoded_wiki_come_from_the_name_tables(tmp_path: Path) -> None:
    """With every page decoded (the station) but the links not yet resolved (a big wiki's warm
    open), the index around a page is still built over the pages the name tables name, not over
    a scan of every page, and answers exactly as the whole index does, for every actor."""
    root = generate(tmp_path / "w", 120, seed=3, hostile=True, cjk=True).root
    (root / ".scope.toml").write_text('[namespaces.wiki]\nvisible_to_departments = ["hr"]\n')
    Wiki(root).close()
    full = Wiki(root)
    wiki = Wiki(root)
    assert wiki.pages and wiki.store.decoded and wiki.built_links() is None
    smaller = 0
    for actor in (OPERATOR, parse_actor("agent:eng", "engineering")):
        index = full.links_for(actor)
        visible = [p.path for p in full.visible_pages(actor)]
        for path in visible:
            around = wiki.links_around(path, actor)
            assert around.outgoing[path] == index.outgoing[path], path
            assert around.backlinks(path) == index.backlinks(path), path
            assert set(around.pages) <= set(visible), path
            smaller += len(around.pages) < len(visible)
    assert smaller > len(full.pages) // 2  # around most pages: a few pages, not the whole wiki
    assert wiki.built_links() is None  # nothing resolved every link


def test_the_cache_name_tables_follow_edits_renames_and_removals(tmp_path: Path) -> None:
    """The rows a page's links and names left in the cache go with the page: a link removed, a
    title changed, a page deleted or renamed no longer count for a one-shot ``neighbors``."""
    root = write_pages(tmp_path / "w", {
        "hub.md": "# Hub\n",
        "a.md": "# A\n[[hub]]\n",
        "b.md": "---\ntitle: Bee\n---\n[[hub]] [[Old Name]]\n",
        "c.md": "---\ntitle: Old Name\n---\n# C\n",
    })

    def inbound(path: str) -> list[str]:
        wiki = Wiki(root)
        try:
            return sorted(e.source for e in wiki.links_around(path).backlinks(path))
        finally:
            assert not wiki.store.decoded
            wiki.close()

    def bump(rel: str, text: str) -> None:
        file = root / rel
        file.write_text(text)
        os.utime(file, ns=(file.stat().st_mtime_ns + 10**9,) * 2)

    assert inbound("hub.md") == ["a.md", "b.md"]
    assert inbound("c.md") == ["b.md"]
    bump("a.md", "# A\nno link now\n")
    assert inbound("hub.md") == ["b.md"]
    bump("c.md", "---\ntitle: New Name\n---\n# C\n")  # [[Old Name]] no longer reaches it
    assert inbound("c.md") == []
    (root / "b.md").unlink()
    assert inbound("hub.md") == []
    (root / "a.md").rename(root / "d.md")
    bump("d.md", "# D\n[[hub]]\n")
    assert inbound("hub.md") == ["d.md"]


def plain_reaching(links: list[Link], lasts: set[str], names: set[str]) -> list[Link]:
    return [k for k in links if k.key.rpartition("/")[2] in lasts or k.key in names]


def test_links_reaching_a_page_from_a_hub_are_those_the_plain_test_finds() -> None:
    """A page with many links has them matched in its joined keys (``links_reaching``): the same
    links, in the same order, as testing each key, whatever the keys hold (the name as a whole key,
    as the last of several segments, as a prefix or a suffix of another name, adjacent matches,
    a key holding the separator)."""
    rng = random.Random(7)
    parts = ["note", "boss", "a", "b/note", "the boss", "notes", "xnote", "note x", "", "c/d", "\0", "é"]
    lasts_names = [({"note"}, {"the boss"}), ({"note", "boss"}, {"b/note", "a/boss"}), ({"a"}, set()),
                   ({"é"}, {"note"}), ({"c/d"}, {"x"}), ({""}, {"note"}), ({"x"}, {"no\0te"})]
    for size in (0, 1, 300, 2000):
        for round_ in range(20):
            keys = ["/".join(rng.choice(parts) for _ in range(rng.randint(1, 3))) for _ in range(size)]
            if round_ % 2:  # runs of the same key: adjacent matches
                keys = [k for k in keys for _ in range(rng.randint(1, 3))]
            if round_ % 5 == 0 and keys:
                keys[rng.randrange(len(keys))] = "no\0te"
            links = [Link(k, k, None, None, "wikilink", i) for i, k in enumerate(keys)]
            for lasts, names in lasts_names:
                assert links_reaching(links, lasts, names) == plain_reaching(links, lasts, names), (lasts, names)
    many = [Link(k, k, None, None, "wikilink", 1) for k in ["x/note", "note", "b/note", "a/b/note"] * 100]
    assert len(links_reaching(many, {"note"}, set())) == 400 and len(many) > JOINED_MATCH_ABOVE


def test_local_index_around_pages_a_hub_links_to_matches_the_full_index(tmp_path: Path) -> None:
    """A hub page with more links than ``JOINED_MATCH_ABOVE`` (to pages by path, slug, title and
    alias, some twice): every page's backlinks from it, from the cache tables and from the pages,
    are those of the whole index."""
    files: dict[str, str | bytes] = {f"p/n{i}.md": f"---\ntitle: Title {i}\naliases: [alias {i}]\n---\n[[n{(i + 1) % 400}]]\n"
             for i in range(400)}
    forms = ["[[n{i}]]", "[[p/n{i}]]", "[[Title {i}]]", "[[alias {i}]]", "[[x/n{i}]]"]
    files["index.md"] = "# Index\n" + "\n".join(forms[i % len(forms)].format(i=i) + (f" [[n{i}]]" * (i % 3))
                                               for i in range(400)) + "\n"
    root = write_pages(tmp_path / "w", files)
    Wiki(root).close()
    full = Wiki(root)
    index = full.links_for(OPERATOR)
    assert len(full.pages["index.md"].links) > JOINED_MATCH_ABOVE
    for path in full.pages:
        wiki = Wiki(root)
        around = wiki.links_around(path)
        assert around.backlinks(path) == index.backlinks(path), path
        assert around.outgoing[path] == index.outgoing[path], path
        wiki.close()
    assert_same_as_full(full.pages, full.store.attachments)
    assert sum(e.source == "index.md" for p in full.pages for e in index.backlinks(p)) >= 400
