"""Link graph: Mermaid (BFS depth, layer shapes, escaping, stable ids), node-link JSON, path,
explain, visibility and the CLI commands."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest

from curator.cli import main
from curator.engine.errors import PageNotFound
from curator.engine.graph import link_graph as g
from curator.engine.policy.actor import Actor, parse_actor
from curator.engine.wiki import Wiki

NODE_LINE = re.compile(r'^    ([nu][0-9a-f]{12})(\(\(|\(\[|\(|\[|>)"([^"\n]*)"(\)\)|\]\)|\)|\])$')


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def page(title: str, layer: str = "deep", body: str = "", tags: str = "[]") -> str:
    return f"---\ntitle: {json.dumps(title)}\nlayer: {layer}\ntags: {tags}\n---\n# {title}\n\n{body}\n"


@pytest.fixture()
def chain(tmp_path: Path) -> Wiki:
    """a -> b -> c -> d -> e, one page per layer, plus an orphan and an unresolved link."""
    write(tmp_path, "a.md", page("Alpha", "identity", "See [[b#Intro|the bee]] and [[nowhere]].", "[x, y]"))
    write(tmp_path, "b.md", page("Beta", "core", "On to [gamma](topics/c.md).", "[x]"))
    write(tmp_path, "topics/c.md", page("Gamma", "context", "Then [[d]]. `[[e]]` is code."))
    write(tmp_path, "d.md", page("Delta", "deep", "", "[x, y]") + "related: ignored\n")
    write(tmp_path, "e.md", "---\nrelated: [d]\n---\n# Epsilon\n")
    write(tmp_path, "lonely.md", page("Lonely"))
    return Wiki(tmp_path)


def node_lines(text: str) -> dict[str, tuple[str, str, str]]:
    out = {}
    for line in text.splitlines():
        m = NODE_LINE.match(line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    return out


def test_mermaid_bfs_depth_and_layer_shapes(chain: Wiki) -> None:
    text = g.export(chain, "mermaid", center="b", depth=1)
    assert text.startswith("graph LR\n")
    nodes = node_lines(text)
    ids = {g.mermaid_id(p): p for p in ("a.md", "b.md", "topics/c.md", "d.md", "e.md", "lonely.md")}
    shown = {ids[i] for i in nodes if i in ids}
    assert shown == {"a.md", "b.md", "topics/c.md"}  # depth 1 over undirected edges, from b
    assert nodes[g.mermaid_id("a.md")][0::2] == ("((", "))")  # identity: circle
    assert nodes[g.mermaid_id("b.md")][0::2] == ("(", ")")  # core: rounded
    assert nodes[g.mermaid_id("topics/c.md")][0::2] == ("[", "]")  # context: rectangle
    deeper = node_lines(g.export(chain, "mermaid", center="b", depth=2))
    assert nodes.keys() < deeper.keys()
    assert deeper[g.mermaid_id("d.md")][0::2] == ("([", "])")  # deep: stadium
    assert g.mermaid_id("e.md") not in deeper  # three steps away
    assert f"{g.mermaid_id('a.md')} --> {g.mermaid_id('b.md')}" in text
    for layer in ("identity", "core", "context", "deep"):
        assert f"classDef {layer} " in text
    assert f"class {g.mermaid_id('a.md')} identity;" in text


def test_mermaid_whole_wiki_has_every_page_and_unresolved_targets(chain: Wiki) -> None:
    text = g.export(chain, "mermaid")
    nodes = node_lines(text)
    assert len(nodes) == 7  # six pages + "nowhere"
    unresolved = nodes[g.mermaid_id("unresolved:nowhere")]
    assert unresolved == (">", "nowhere", "]")
    # the link inside a code span does not count
    assert f"{g.mermaid_id('topics/c.md')} --> {g.mermaid_id('e.md')}" not in text
    # related: is an edge
    assert f"{g.mermaid_id('e.md')} --> {g.mermaid_id('d.md')}" in text


def decode_entities(label: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label)


@pytest.mark.parametrize("title", [
    'He said "hi" [and] (then) {left} | right',
    "pipes || and ]] brackets [[ and ;; semicolons # hash",
    "<script>alert('x')</script> & `code` %% comment",
    "中文標題 — 日本語のタイトル 🚀 émoji",
    'end"]) --> x((evil',
])
def test_hostile_titles_cannot_break_the_diagram(tmp_path: Path, title: str) -> None:
    write(tmp_path, "h.md", page(title, "core", "[[other]]"))
    write(tmp_path, "other.md", "# Other\n")
    text = g.export(Wiki(tmp_path), "mermaid")
    lines = text.splitlines()
    node_defs = [ln for ln in lines[1:] if not ln.startswith(("    classDef", "    class "))
                 and "-->" not in ln]
    assert all(NODE_LINE.match(ln) for ln in node_defs), node_defs
    label = node_lines(text)[g.mermaid_id("h.md")][1]
    assert not re.search(r'[\"\[\]|<>(){}`%\n]', label)
    assert decode_entities(label) == " ".join(title.split())
    # every edge line is exactly "id --> id"
    assert all(re.fullmatch(r"    [nu][0-9a-f]{12} --> [nu][0-9a-f]{12}", ln) for ln in lines if "-->" in ln)


def test_multiline_label_collapses_to_one_line() -> None:
    assert g.mermaid_label("first\nsecond\r\nthird") == "first second third"
    assert g.mermaid_label("") == "#32;"


def test_ids_are_stable_not_positional(tmp_path: Path) -> None:
    write(tmp_path, "m.md", "# M\n[[n]]\n")
    write(tmp_path, "n.md", "# N\n")
    first = node_lines(g.export(Wiki(tmp_path), "mermaid"))
    write(tmp_path, "0-first.md", "# Zero\n[[m]]\n")
    second = node_lines(g.export(Wiki(tmp_path), "mermaid"))
    assert set(first) < set(second)
    assert all(second[k] == v for k, v in first.items())


def test_json_loads_with_networkx_and_carries_metadata(chain: Wiki) -> None:
    data = g.export(chain, "json")
    json.dumps(data)  # plain JSON
    graph = nx.node_link_graph(data, edges="edges")
    assert graph.is_directed()
    assert set(graph.nodes) == {"a.md", "b.md", "topics/c.md", "d.md", "e.md", "lonely.md", "unresolved:nowhere"}
    a = graph.nodes["a.md"]
    assert (a["title"], a["layer"], a["trust"], a["tags"], a["kind"]) == ("Alpha", "identity", 0.5, ["x", "y"], "page")
    assert graph.nodes["unresolved:nowhere"]["resolved"] is False
    assert graph.has_edge("a.md", "b.md") and graph.has_edge("b.md", "topics/c.md")
    assert graph.edges["b.md", "topics/c.md"]["kinds"] == ["markdown"]
    assert graph.edges["e.md", "d.md"]["kinds"] == ["related"]
    sub = nx.node_link_graph(g.export(chain, "json", center="d", depth=1), edges="edges")
    assert set(sub.nodes) == {"d.md", "topics/c.md", "e.md"}


def test_path_goes_through_an_intermediate_page(chain: Wiki) -> None:
    result = g.find_path(chain, "a", "topics/c.md")
    assert [s.node for s in result.steps] == ["a.md", "b.md", "topics/c.md"]
    assert [s.arrow for s in result.steps] == ["", "->", "->"]
    back = g.find_path(chain, "Gamma", "alpha")  # by title, links followed backwards
    assert [s.node for s in back.steps] == ["topics/c.md", "b.md", "a.md"]
    assert [s.arrow for s in back.steps[1:]] == ["<-", "<-"]
    assert "Beta (b.md)" in back.render()
    none = g.find_path(chain, "a", "lonely")
    assert not none.found and "no link path" in none.render()


def test_path_does_not_hop_through_unresolved_targets(tmp_path: Path) -> None:
    write(tmp_path, "p.md", "# P\n[[ghost]]\n")
    write(tmp_path, "q.md", "# Q\n[[ghost]]\n")
    assert not g.find_path(Wiki(tmp_path), "p", "q").found


def test_explain_reports_degree_and_strongest_connections(chain: Wiki) -> None:
    write(chain.root, "d.md", page("Delta", "deep", "[[a]] [[a]] [[b]]", "[x, y]"))
    chain.refresh()
    ex = g.explain(chain, "a")
    assert (ex.out_degree, ex.in_degree, ex.degree, ex.unresolved_out) == (2, 1, 3, 1)
    assert ex.connections[0].node == "d.md"  # two links in + two shared tags
    assert ex.connections[0].strength == 3.0
    data = ex.to_json()
    assert data["node"]["title"] == "Alpha" and data["strongest"][0]["shared_tags"] == ["x", "y"]
    assert "degree 3" in ex.render()
    ghost = g.explain(chain, "nowhere")
    assert ghost.node.page is None and ghost.in_degree == 1


class HideSecret:
    def can_read(self, actor: Actor, path: str) -> bool:
        return not path.startswith("secret/")


def test_visibility_hides_pages_and_their_existence(tmp_path: Path) -> None:
    write(tmp_path, "pub.md", "# Pub\n[[plan]] [[other]]\n")
    write(tmp_path, "other.md", "# Other\n")
    write(tmp_path, "secret/plan.md", "# Plan\n[[pub]]\n")
    wiki = Wiki(tmp_path)
    wiki.policy = HideSecret()
    agent = parse_actor("agent:bot")
    data = g.export(wiki, "json", actor=agent)
    ids = {n["id"] for n in data["nodes"]}
    assert "secret/plan.md" not in ids
    assert "unresolved:plan" in ids  # shown like a page that does not exist
    assert "Plan" not in g.export(wiki, "mermaid", actor=agent)
    with pytest.raises(PageNotFound):
        g.find_path(wiki, "pub", "secret/plan.md", actor=agent)
    with pytest.raises(PageNotFound):
        g.export(wiki, "mermaid", center="secret/plan.md", actor=agent)
    assert g.explain(wiki, "pub", actor=agent).in_degree == 0
    assert g.explain(wiki, "pub").in_degree == 1  # the operator sees everything


def test_graph_is_rebuilt_after_a_change(chain: Wiki) -> None:
    before = g.graph_for(chain)
    assert g.graph_for(chain) is before
    write(chain.root, "lonely.md", page("Lonely", "deep", "[[a]]"))
    chain.refresh()
    after = g.graph_for(chain)
    assert after is not before and "a.md" in after.successors("lonely.md")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_graph_path_explain(chain: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(chain.root)
    code, out, _ = run_cli(capsys, "--wiki", root, "graph", "--center", "b", "--depth", "1")
    assert code == 0 and out.startswith("graph LR") and len(node_lines(out)) == 3
    code, out, _ = run_cli(capsys, "--wiki", root, "graph", "--format", "json")
    assert code == 0 and nx.node_link_graph(json.loads(out), edges="edges").number_of_nodes() == 7
    code, out, _ = run_cli(capsys, "--wiki", root, "path", "a.md", "topics/c", "--json")
    assert code == 0 and [s["path"] for s in json.loads(out)["steps"]] == ["a.md", "b.md", "topics/c.md"]
    code, out, _ = run_cli(capsys, "--wiki", root, "path", "a", "topics/c.md")
    assert "Beta (b.md)" in out
    code, out, _ = run_cli(capsys, "--wiki", root, "explain", "b", "--json")
    assert code == 0 and json.loads(out)["degree"] == 2
    code, out, err = run_cli(capsys, "--wiki", root, "explain", "no-such-page")
    assert code == 1 and err.startswith("curator: error:") and "Traceback" not in err
    code, _, err = run_cli(capsys, "--wiki", root, "graph", "--depth", "-1", "--center", "a")
    assert code == 2


def _fresh_export(root: Path, attachments: bool = False) -> tuple[dict[str, object], bool]:
    """A new process's ``graph --format json`` (a new Wiki), and whether it came from the saved
    edge list (no link index built)."""
    wiki = Wiki(root)
    try:
        data = g.export(wiki, "json", attachments=attachments)
        assert isinstance(data, dict)
        return data, wiki.built_links() is None
    finally:
        wiki.close()


def _live_export(root: Path, attachments: bool = False) -> dict[str, object]:
    """``graph --format json`` with every link resolved (the link index built first)."""
    wiki = Wiki(root)
    try:
        assert wiki.links is not None
        data = g.export(wiki, "json", attachments=attachments)
        assert isinstance(data, dict)
        return data
    finally:
        wiki.close()


def _link_edits(root: Path, same: Callable[[bool], None]) -> None:
    """Edits of the chain that change links only (``same(True)``): a new edge, a new unresolved
    target (before "nowhere" in the nodes), the only link to "nowhere" gone, the first spelling
    of an unresolved target changed."""
    write(root, "a.md", page("Alpha", "identity", "See [[Zed]] and [[b]] and [[d]] twice: [[d]].", "[x, y]"))
    same(True)
    write(root, "b.md", page("Beta", "core", "On to [gamma](topics/c.md), [[ZED]] and [[new one]]."))
    same(True)
    write(root, "a.md", page("Alpha", "identity", "Only [[b]].", "[x, y]"))  # "Zed" now first written in b
    same(True)


def _name_edits(root: Path, same: Callable[[bool], None]) -> None:
    """Edits of the chain that change a page's names (a title, an alias), add a page and remove
    it (``same(False)``: every link resolved again), then one that changes links only."""
    write(root, "d.md", page("Delta Two", "deep", "", "[x, y]"))
    same(False)
    write(root, "b.md", "---\ntitle: Beta\naliases: [Delta]\n---\n# Beta\n")
    same(False)
    write(root, "f.md", page("Foxtrot", body="[[a]]"))
    same(False)
    (root / "f.md").unlink()
    same(False)
    write(root, "e.md", "---\nrelated: [d, a]\n---\n# Epsilon\n")
    same(True)


def test_a_saved_graph_is_brought_up_to_date_from_the_edited_pages_only(chain: Wiki) -> None:
    """After an edit that changes links only, a one-shot graph re-resolves the edited pages' links
    and reuses the rest of the saved edges: the same document, byte for byte, as a live build. An
    edit that changes a page's names, or a page added or removed, resolves every link."""
    root = chain.root
    g.export(chain, "json")  # saved

    def same(expect_incremental: bool, attachments: bool = False) -> None:
        fresh, from_saved = _fresh_export(root, attachments)
        live = _live_export(root, attachments)
        assert json.dumps(fresh) == json.dumps(live)
        assert from_saved is expect_incremental
        assert _fresh_export(root, attachments) == (live, True)  # saved again as it is now

    _link_edits(root, same)
    write(root, "lonely.md", page("Lonely", body="![[pic.png]] and [[a]]"))
    (root / "pic.png").write_bytes(b"\x89PNG")
    same(False, attachments=True)  # (a new attachment file: not the saved key)
    write(root, "lonely.md", page("Lonely", body="![[pic.png]] only"))
    same(True, attachments=True)
    # names: a title (links to "Delta" now unresolved), an alias, a page added, a page removed
    write(root, "lonely.md", page("Lonely", body="[[Delta]] and [[Beta]]"))
    same(False)  # (the graph without attachments was saved before pic.png was there)
    write(root, "lonely.md", page("Lonely", body="[[Delta]], [[Beta]] and [[c]]"))
    same(True)
    _name_edits(root, same)


def test_a_one_shot_graph_is_rebuilt_from_the_saved_edges_only_for_the_same_pages(chain: Wiki) -> None:
    root = chain.root
    live = g.export(chain, "json")
    assert chain.built_links() is not None  # resolved here, then saved
    again, from_saved = _fresh_export(root)
    assert again == live and from_saved  # nothing resolved: the same document
    assert g.export(Wiki(root), "mermaid") == g.to_mermaid(g.graph_for(chain))
    fresh = Wiki(root)
    saved = g.graph_for(fresh)
    assert fresh.built_links() is None  # from the saved edges: the backlinks made from them
    built = g.graph_for(chain)
    assert [(t, list(s)) for t, s in saved.inc.items()] == [(t, list(s)) for t, s in built.inc.items()]
    assert g.find_path(fresh, "a", "e").to_json() == g.find_path(chain, "a", "e").to_json()
    fresh.close()
    assert _fresh_export(root, attachments=True)[1] is False  # saved separately
    # a page edited in place: a new state, its links resolved again (the rest reused), the new link seen
    write(root, "lonely.md", page("Lonely", body="Now [[a]]."))
    changed, from_saved = _fresh_export(root)
    assert from_saved and changed == _live_export(root)
    assert {"source": "lonely.md", "target": "a.md", "weight": 1, "kinds": ["wikilink"]} in changed["edges"]  # type: ignore[operator]
    # an attachment file appears: links to it resolve, though no page changed
    write(root, "lonely.md", page("Lonely", body="Now [[a]] and ![[pic.png]]."))
    _fresh_export(root, attachments=True)
    assert _fresh_export(root, attachments=True)[1] is True
    (root / "pic.png").write_bytes(b"\x89PNG")
    with_file, from_saved = _fresh_export(root, attachments=True)
    assert not from_saved and "attachment:pic.png" in {n["id"] for n in with_file["nodes"]}  # type: ignore[attr-defined]


# --- the operator's whole graph as saved pieces (graph_export) -------------------------------


@pytest.fixture()
def big_chain(chain: Wiki) -> Wiki:
    """The chain plus 60 filler pages linking along and out (more than 50 nodes: the document
    printed one key per line, the form the saved pieces make)."""
    for i in range(60):
        write(chain.root, f"fill/p{i:02d}.md",
              page(f"Filler {i}", "deep", f"Next [[p{i + 1:02d}]], back to [[Alpha]], and [[Ghost {i % 7}]]."))
    return Wiki(chain.root)


def _document(root: Path, attachments: bool = False) -> tuple[bytes | None, bool]:
    """A new process's saved-pieces document, and whether it left every page undecoded (from the
    saved pieces, patched from the edited pages alone when there were edits)."""
    from curator.engine.graph.export import node_link_document

    wiki = Wiki(root)
    try:
        return node_link_document(wiki, attachments), not wiki.store.decoded
    finally:
        wiki.close()


def _live_bytes(root: Path, attachments: bool = False) -> bytes:
    from curator.engine.corpus.walker import json_document_bytes

    return json_document_bytes(_live_export(root, attachments))


def test_the_saved_document_is_the_live_one_byte_for_byte_through_edits(big_chain: Wiki) -> None:
    root = big_chain.root

    def same(expect_patched: bool, attachments: bool = False) -> None:
        document, undecoded = _document(root, attachments)
        assert document is not None
        assert document == _live_bytes(root, attachments)
        assert undecoded is expect_patched
        assert _document(root, attachments) == (document, True)  # saved as it is now

    same(False)  # the first call builds and saves the pieces
    same(True)
    _link_edits(root, same)
    write(root, "fill/p03.md", page("Filler 3", "core", "Tags and layer changed, [[ghost 0]] respelled.", "[q]"))
    same(True)
    # an attachment appears (not the saved key: built again), then a link to it changes
    write(root, "lonely.md", page("Lonely", body="![[pic.png]] and [[a]]"))
    (root / "pic.png").write_bytes(b"\x89PNG")
    same(False, attachments=True)
    write(root, "lonely.md", page("Lonely", body="![[pic.png]] only"))
    same(True, attachments=True)
    same(False)  # (the document without attachments was saved before pic.png was there)
    # names: a title, an alias, a page added, a page removed: every link resolved again
    _name_edits(root, same)


def test_a_short_graph_is_not_saved_in_pieces(chain: Wiki) -> None:
    from curator.engine.graph.export import node_link_document

    assert node_link_document(chain) is None  # (printed indented by the general path)
    assert chain.store.derived_since("graph-json") is None


def test_cli_graph_json_is_the_live_document_after_an_in_place_edit(
        big_chain: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    root = big_chain.root
    code, out, _ = run_cli(capsys, "--wiki", str(root), "graph", "--format", "json")
    assert code == 0 and out.encode() == _live_bytes(root)
    write(root, "fill/p10.md", page("Filler 10", body="Now only [[Beta]] and [[Nowhere Else]]."))
    code, out, _ = run_cli(capsys, "--wiki", str(root), "graph", "--format", "json")
    assert code == 0 and out.encode() == _live_bytes(root)
    data = json.loads(out)
    assert {"source": "fill/p10.md", "target": "b.md", "weight": 1, "kinds": ["wikilink"]} in data["edges"]
    assert not any(e["source"] == "fill/p10.md" and e["target"] == "fill/p11.md" for e in data["edges"])


def test_an_agent_never_gets_the_operators_saved_document(big_chain: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    root = big_chain.root
    write(root, "secret/plan.md", page("Zanzibar Plan", body="[[Alpha]]"))
    write(root, "fill/p20.md", page("Filler 20", body="[[plan]]"))
    code, out, _ = run_cli(capsys, "--wiki", str(root), "graph", "--format", "json")
    assert code == 0 and "secret/plan.md" in {n["id"] for n in json.loads(out)["nodes"]}  # saved now
    write(root, ".scope.toml", '[namespaces."secret"]\nvisible_to_departments = ["ops"]\n')
    code, out, err = run_cli(capsys, "--wiki", str(root), "--as", "agent:bot-1", "--department", "sales",
                             "graph", "--format", "json")
    assert code == 0, err
    ids = {n["id"] for n in json.loads(out)["nodes"]}
    assert "secret/plan.md" not in ids and "Zanzibar" not in out
    assert "fill/p20.md" in ids and "unresolved:plan" in ids  # shown like a page that does not exist


@pytest.mark.parametrize("blob", [b"", b"not marshal", b"\xe9\x00\x01", None])
def test_a_damaged_or_old_saved_document_is_built_again(big_chain: Wiki, blob: bytes | None) -> None:
    import marshal

    root = big_chain.root
    first, _ = _document(root)
    wiki = Wiki(root)
    try:
        wiki.store.count()
        saved = wiki.store.derived_since("graph-json")
        assert saved is not None
        old = marshal.dumps((0, *marshal.loads(saved[0])[1:]))  # another format's version
        wiki.store.save_derived("graph-json", old if blob is None else blob)
    finally:
        wiki.close()
    again, undecoded = _document(root)
    assert again == first == _live_bytes(root) and not undecoded
    assert _document(root) == (first, True)  # saved again, readable


def test_explain_never_trims_the_shared_link_index(chain: Wiki, monkeypatch: pytest.MonkeyPatch) -> None:
    """graph_around finds no index built (another thread holds the lock, building it), then
    links_around gets the built one: the page's graph is cut from a copy, never from it."""
    links = chain.links
    before = {source: list(edges) for source, edges in links.outgoing.items()}
    real = Wiki.built_links
    calls = [0]

    def first_busy(self: Wiki, actor: Actor = g.OPERATOR) -> object:
        calls[0] += 1
        return None if calls[0] == 1 else real(self, actor)

    monkeypatch.setattr(Wiki, "built_links", first_busy)
    assert g.explain(chain, "b").in_degree == 1
    assert calls[0] >= 2 and chain.links is links
    assert {source: list(edges) for source, edges in links.outgoing.items()} == before
    assert "d.md" in {e.target for e in links.outgoing["topics/c.md"]}  # another page's links kept
