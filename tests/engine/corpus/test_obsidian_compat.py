"""An Obsidian vault opens unchanged (docs/design.md §3): resolution (same folder first, path-qualified,
shortest path, NFC/NFD), attachments, heading anchors and block ids, frontmatter property links,
``%%comments%%``, indented code, ``.obsidian/``/``.trash/``, nested and CJK tags; the vault's
every link compared with Obsidian's documented rule (``tests/obsidian_vault.py``)."""

from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path

import pytest

from curator.engine.corpus import markdown_scan
from curator.engine.corpus.walker import walk
from curator.engine.graph.link_graph import ATTACHMENT_PREFIX, graph_for, to_node_link
from curator.engine.review.lint import lint
from curator.engine.wiki import Wiki
from curator.engine.write.bootstrap import init_wiki
from curator.engine.write.merge import merge_pages, preview_merge
from tests.obsidian_vault import NFD_NAME, build, comparison, table


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return build(tmp_path / "vault")


@pytest.fixture
def wiki(vault: Path) -> Wiki:
    return Wiki(vault)


def targets(wiki: Wiki, path: str) -> dict[str, str | None]:
    return {e.link.target + (f"#{e.link.anchor}" if e.link.anchor else ""):
            e.resolution.path or e.resolution.attachment for e in wiki.links.outgoing[path]}


def test_every_link_of_the_vault_resolves_as_obsidians_rule(vault: Path) -> None:
    rows = comparison(vault)
    kinds = {r[2] for r in rows}
    assert {"wikilink", "embed", "markdown", "property"} <= kinds
    assert len(rows) >= 30
    unequal = [r for r in rows if r[3] != r[4]]
    assert not unequal, table(unequal)
    assert sum(1 for r in rows if r[3] is None) >= 3  # unresolved ones are compared too


def test_same_named_pages_the_linking_pages_folder_first_then_shortest_path(wiki: Wiki) -> None:
    sync = targets(wiki, "Obsidian Sync/Headless Sync.md")
    assert sync["Security and privacy"] == "Obsidian Sync/Security and privacy.md"
    assert sync["Obsidian Publish/Security and privacy"] == "Obsidian Publish/Security and privacy.md"
    assert sync["../Obsidian Publish/Security and privacy"] == "Obsidian Publish/Security and privacy.md"
    start = targets(wiki, "Getting started/Start here.md")
    # from a third folder: the shortest path ("Obsidian Sync/..." is 3 characters shorter)
    assert start["Security and privacy"] == "Obsidian Sync/Security and privacy.md"
    assert start["Home"] == "Getting started/Home.md"  # beside the linking page, not the root one
    assert start["Deep/Leaf"] == "Archive/Deep/Leaf.md"  # a path suffix
    assert targets(wiki, "Home.md")["Home"] == "Home.md"
    # the engine's own look-ups agree, from the root and from a page
    links = wiki.links
    assert links.resolve("Security and privacy", "Obsidian Publish/x.md").path == \
        "Obsidian Publish/Security and privacy.md"
    assert links.resolve("security AND privacy").path == "Obsidian Sync/Security and privacy.md"
    # lint still reports the ambiguity, naming the page chosen from there
    issues = [i for i in lint(wiki) if i.code == "ambiguous-link" and i.path == "Obsidian Sync/Headless Sync.md"]
    assert len(issues) == 1 and issues[0].line == 6
    assert "resolved to Obsidian Sync/Security and privacy.md" in issues[0].message


def test_backlinks_follow_the_same_folder_rule(wiki: Wiki) -> None:
    publish = {e.source for e in wiki.links.backlinks("Obsidian Publish/Security and privacy.md")}
    sync = {e.source for e in wiki.links.backlinks("Obsidian Sync/Security and privacy.md")}
    assert "Obsidian Sync/Headless Sync.md" in sync and "Getting started/Start here.md" in sync
    # Headless Sync reaches the Publish page only through its explicit path links
    kinds = sorted(e.link.kind for e in wiki.links.backlinks("Obsidian Publish/Security and privacy.md"))
    assert publish == {"Obsidian Sync/Headless Sync.md"} and kinds == ["markdown", "wikilink", "wikilink"]


def test_attachments_resolve_anywhere_and_missing_ones_are_reported_as_such(wiki: Wiki) -> None:
    start = targets(wiki, "Getting started/Start here.md")
    assert start["Manual.pdf"] == "Attachments/Manual.pdf"
    assert start["diagram.png"] == "Attachments/diagram.png"
    assert targets(wiki, "Obsidian Sync/Headless Sync.md")["web-clipper-kde.png"] == \
        "Attachments/web-clipper-kde.png"
    assert targets(wiki, "Obsidian Sync/Headless Sync.md")["Planning.canvas"] == "Planning.canvas"
    links = wiki.links
    assert all("." not in key for key in links.unresolved)  # no file is a page "not yet written"
    assert set(links.missing_attachments) == {"missing-shot.png", "attachments/gone.pdf"}
    sync = targets(wiki, "Obsidian Sync/Headless Sync.md")
    assert sync["Attachments/Manual.pdf"] == "Attachments/Manual.pdf"  # path-qualified, and markdown
    assert sync["../Attachments/diagram.png"] == "Attachments/diagram.png"  # relative to the page
    assert sync["Attachments/web-clipper-kde.png"] == "Attachments/web-clipper-kde.png"
    assert {e.source for e in links.attachment_links["Attachments/web-clipper-kde.png"]} == \
        {"Obsidian Sync/Headless Sync.md", "Guides/Transclusion demo.md"}
    issues = lint(wiki)
    missing = [i for i in issues if i.code == "missing-attachment"]
    assert [(i.path, i.line) for i in missing] == [("Getting started/Start here.md", 5),
                                                   ("Obsidian Sync/Headless Sync.md", 9)]
    assert "missing-shot.png" in missing[0].message and "not in the wiki" in missing[0].message
    assert not any(i.code == "unresolved-link" and (".png" in i.message or ".pdf" in i.message) for i in issues)


def test_the_graph_shows_attachments_only_when_asked(wiki: Wiki) -> None:
    plain = graph_for(wiki)
    assert not any(n.startswith(ATTACHMENT_PREFIX) for n in plain.nodes)
    assert not any("png" in n for n in plain.nodes)  # a file is never an unresolved page either
    full = graph_for(wiki, attachments=True)
    files = sorted(n for n in full.nodes if n.startswith(ATTACHMENT_PREFIX))
    assert files == sorted(ATTACHMENT_PREFIX + f for f in (
        "Planning.canvas", "Attachments/Manual.pdf", "Attachments/diagram.png", "Attachments/web-clipper-kde.png"))
    node = full.nodes[ATTACHMENT_PREFIX + "Attachments/diagram.png"]
    assert node.layer == "attachment" and node.label == "diagram.png"
    assert ATTACHMENT_PREFIX + "Attachments/diagram.png" in full.successors("Getting started/Start here.md")
    data = to_node_link(full)
    kinds = {n["id"]: n["kind"] for n in data["nodes"]}
    assert kinds[ATTACHMENT_PREFIX + "Planning.canvas"] == "attachment"


def test_translated_headings_and_block_ids_are_checked_as_obsidian_matches_them(wiki: Wiki) -> None:
    page = wiki.pages["Guides/Payments.md"]
    assert page.headings == ["Payments", "付款流程：概要", "Étape 2 — Vérifier (FR)", "Étape 3"]
    assert page.blocks == ["pay-rule", "step-3"]
    broken = sorted((i.line, i.message) for i in lint(wiki) if i.code == "broken-anchor")
    assert len(broken) == 2, broken
    assert broken[0][0] == 4 and "no heading 'No such heading'" in broken[0][1]
    assert broken[1][0] == 4 and "no block '^no-such-block'" in broken[1][1]
    # the translated headings, the chain and the block ids (in the body and a property) all pass
    assert all(i.path == "Guides/Anchors.md" for i in lint(wiki) if i.code == "broken-anchor")


def test_anchor_matching_is_case_and_punctuation_tolerant() -> None:
    key = markdown_scan.anchor_key
    assert key("Step 1: Install (macOS)") == key("step 1 install macOS") == "step 1 install macos"
    assert key("付款流程：概要") == key("付款流程 概要")
    assert key("Étape 2 — Vérifier") == key(unicodedata.normalize("NFD", "étape 2 vérifier"))
    assert key("Étape") != key("Etape")  # accents are letters, not punctuation


def test_property_links_count_with_their_line_and_comments_in_yaml_do_not(wiki: Wiki) -> None:
    props = [(e.link.target, e.link.anchor, e.link.alias, e.link.line, e.target)
             for e in wiki.links.outgoing["Home.md"] if e.link.kind == "property"]
    assert props == [
        ("Start here", None, None, 2, "Getting started/Start here.md"),
        ("Headless Sync", None, None, 4, "Obsidian Sync/Headless Sync.md"),
        ("Payments", "^pay-rule", "the rule", 5, "Guides/Payments.md"),
    ]
    assert "Not a property link" not in targets(wiki, "Home.md")
    assert any(e.source == "Home.md" and e.link.kind == "property"
               for e in wiki.links.backlinks("Getting started/Start here.md"))


def test_an_nfd_file_name_resolves_from_nfc_links(wiki: Wiki) -> None:
    nfd_path = f"Notes/{NFD_NAME}.md"
    assert nfd_path in wiki.pages and unicodedata.is_normalized("NFD", nfd_path)
    assert targets(wiki, "Home.md")["Café crème"] == nfd_path
    assert wiki.links.resolve(unicodedata.normalize("NFD", "café CRÈME")).path == nfd_path
    assert wiki.find("Café crème").path == nfd_path


def test_comments_indented_code_and_obsidian_folders_hold_no_links_or_pages(wiki: Wiki, vault: Path) -> None:
    home = targets(wiki, "Home.md")
    for hidden in ("Hidden In Comment", "Also Hidden", "Inside Indented Code"):
        assert hidden not in home
    assert home["Under A List"] == "Under A List.md"  # indented under a list item: list content
    assert not any(p.startswith((".obsidian/", ".trash/")) for p in wiki.pages)
    assert home["README"] is None and home["Deleted note"] is None
    assert not any(e.source.startswith((".obsidian", ".trash")) for e in wiki.links.backlinks("Home.md"))
    files: list[str] = []
    pages = [f.path for f in walk(vault, files)]
    assert ".obsidian/snippets.md" not in pages and ".trash/Deleted note.md" not in pages
    assert ".obsidian/app.json" not in files and "Attachments/diagram.png" in files


def test_nested_tags_and_tags_ending_at_cjk_punctuation(wiki: Wiki) -> None:
    tags = wiki.pages["Home.md"].tags
    assert "project/alpha" in tags and "标签" in tags and "デザイン" in tags
    assert "1984" not in tags and not any("then" in t or "。" in t or "，" in t for t in tags)
    assert markdown_scan.scan_tags("a #tag（note） and #中文！ and #x/y/") == ["tag", "中文", "x/y"]


def test_strip_code_blanks_comments_and_indented_code_keeping_offsets() -> None:
    body = "para\n\n    code [[a]]\n\t[[b]]\n\n- item\n\n    [[c]] continues the item\n%% [[d]]\nstill %% [[e]]\n"
    free = markdown_scan.strip_code(body)
    assert len(free) == len(body) and free.count("\n") == body.count("\n")
    assert "[[a]]" not in free and "[[b]]" not in free and "[[d]]" not in free
    assert "[[c]]" in free and "[[e]]" in free
    assert "[[x]]" not in markdown_scan.strip_code("text %% unclosed [[x]]\nmore\n")


def test_find_section_for_transclusion() -> None:
    body = ("# T\n\nintro\n\n## A: one\n\ntext a ^blk\n\n### A.1\n\nsub\n\n## B\n\nb\n\n- item one ^li\n- two\n")
    assert markdown_scan.find_section(body, "a one") == "## A: one\n\ntext a ^blk\n\n### A.1\n\nsub"
    assert markdown_scan.find_section(body, "A one#A 1") == "### A.1\n\nsub"
    assert markdown_scan.find_section(body, "^blk") == "text a"
    assert markdown_scan.find_section(body, "^li") == "- item one"
    assert markdown_scan.find_section(body, "nope") is None and markdown_scan.find_section(body, "^x") is None
    assert markdown_scan.find_section(body, None) == body


def _commit_all(root: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed"], cwd=root,
                   check=True)


def test_merge_rewrites_property_links_and_keeps_their_display_text(tmp_path: Path) -> None:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "kept.md").write_text("# Kept\n", encoding="utf-8")
    (root / "merged.md").write_text("# Merged\n\n- a fact (added 2024-01-01)\n", encoding="utf-8")
    (root / "child.md").write_text(
        "---\nup: \"[[merged]]\"\nparents:\n  - \"[[merged#Merged|the parent]]\"\n  - \"[[other]]\"\n"
        "# keep this comment [[merged]]\ncustom: 3  # nor [[merged]] here\n---\n# Child\n\nBody [[merged]].\n", encoding="utf-8")
    (root / "other.md").write_text("# Other\n", encoding="utf-8")
    _commit_all(root)
    wiki = Wiki(root)
    plan = preview_merge(wiki, "kept", "merged")
    kinds = [(r.kind, r.line, r.old, r.new) for r in plan.rewrites if r.page == "child.md"]
    assert ("property", 2, "[[merged]]", "[[kept|merged]]") in kinds  # display text kept (docs/design.md §9)
    assert ("property", 4, "[[merged#Merged|the parent]]", "[[kept#Merged|the parent]]") in kinds
    result = merge_pages(wiki, "kept", "merged")
    assert result.status == "merged", result.message
    text = (root / "child.md").read_text(encoding="utf-8")
    assert text.startswith("---\nup: \"[[kept|merged]]\"\nparents:\n  - \"[[kept#Merged|the parent]]\"\n"
                           "  - \"[[other]]\"\n# keep this comment [[merged]]\ncustom: 3  # nor [[merged]] here\n---\n")
    assert "Body [[kept|merged]]." in text
    wiki.refresh()
    assert any(e.link.kind == "property" and e.source == "child.md" for e in wiki.links.backlinks("kept.md"))


def test_merge_resolves_links_from_each_linking_page(tmp_path: Path) -> None:
    """A bare [[note]] beside another same-named page points there, so a merge leaves it alone."""
    root = tmp_path / "w"
    init_wiki(root)
    for rel, text in {"a/note.md": "# Note A\n", "b/note.md": "# Note B\n", "a/kept.md": "# Kept\n",
                      "a/linker.md": "[[note]]\n", "b/linker.md": "[[note]]\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _commit_all(root)
    wiki = Wiki(root)
    result = merge_pages(wiki, "a/kept.md", "a/note.md")
    assert result.status == "merged", result.message
    assert (root / "a/linker.md").read_text(encoding="utf-8") == "[[kept|note]]\n"
    assert (root / "b/linker.md").read_text(encoding="utf-8") == "[[note]]\n"  # its own folder's note


def test_reading_view_hides_comments_and_block_ids_but_not_in_code() -> None:
    body = "a %%note%% b ^blk\n%%\nmulti\n%%\n`%%kept%%` and\n\n```\nx ^in-code\n```\n"
    shown = markdown_scan.reading_view(body)
    assert shown == "a  b\n\n`%%kept%%` and\n\n```\nx ^in-code\n```\n"


def test_embeds_attachments_and_anchors_honour_visibility(tmp_path: Path) -> None:
    from curator.engine.policy.actor import Actor
    from curator.engine.read.reading import embedded

    root = tmp_path / "w"
    pages = {
        "wiki/open.md": "# Open\n\n![[salaries#Bands]] ![[payslip.png]] [[salaries#No such]] [[open#Open]]\n",
        "departments/hr/salaries.md": "# Salaries\n\n## Bands\n\nsecret band table\n",
    }
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "departments/hr/payslip.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    wiki = Wiki(root)
    sales, hr = Actor("agent", "dudu", "sales"), Actor("agent", "kiki", "hr")
    section = embedded(wiki, "salaries", "Bands", "wiki/open.md", hr)
    assert section is not None and "secret band table" in (section.text or "")
    assert embedded(wiki, "salaries", "Bands", "wiki/open.md", sales) is None
    assert embedded(wiki, "payslip.png", None, "wiki/open.md", sales) is None
    assert embedded(wiki, "payslip.png", None, "wiki/open.md", hr) is not None
    files = {n for n in graph_for(wiki, sales, attachments=True).nodes if n.startswith(ATTACHMENT_PREFIX)}
    assert files == set()
    assert ATTACHMENT_PREFIX + "departments/hr/payslip.png" in graph_for(wiki, hr, attachments=True).nodes
    # lint does not reveal the hidden page's headings: no broken-anchor for it to an outsider,
    # and a hidden file is reported to an outsider exactly like a missing one
    assert not any(i.code == "broken-anchor" for i in lint(wiki, sales))
    assert [i.code for i in lint(wiki, sales) if "payslip" in i.message] == ["missing-attachment"]
    assert not any("payslip" in i.message for i in lint(wiki, hr))
    assert [i.message for i in lint(wiki, hr) if i.code == "broken-anchor"] == \
        ["[[salaries#No such]]: departments/hr/salaries.md has no heading 'No such'"]


def test_anchors_into_the_page_itself_are_checked(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "self.md").write_text("# Self\n\n## Étape 1 : début\n\nok ^here\n\n"
                                  "[[#étape 1 début]] [[#^here]] [[#Nowhere]]\n`[[#in code]]`\n[[#^gone|x]]\n",
                                  encoding="utf-8")
    wiki = Wiki(root)
    broken = [(i.line, i.message) for i in lint(wiki) if i.code == "broken-anchor"]
    assert broken == [(7, "[[#Nowhere]]: this page has no heading 'Nowhere'"),
                      (9, "[[#^gone]]: this page has no block '^gone'")]
    assert wiki.links.outgoing["self.md"] == []  # a link into the page itself is no edge


SETEXT_CASES = ["Title\n=====\n\ntext\n", "# A\nSub one\nline two\n---\nbody\n", "- item\n---\n",
                "> quote\n---\n", "para\n\n---\n", "***\nfoo\n---\n", "---\n---\n", "x\n-\n",
                "```\ncode\n```\n---\n", "a\n= =\n", "## H2\ntext\n===\n## Next\n", "1. one\n---\n",
                "a\n    ---\n", "   a\n   ---\n", "    code\n---\n"]


@pytest.mark.parametrize("body", SETEXT_CASES)
def test_setext_headings_are_headings_as_the_renderer_reads_them(body: str) -> None:
    """A paragraph underlined by ``===``/``---`` is a heading for anchors exactly when markdown-it
    (the reading view's renderer, CommonMark) renders one; a list item's ``---`` is a break."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(body)
    rendered = [tokens[i + 1].content.replace("\n", " ") for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert markdown_scan.headings(markdown_scan.strip_code(body)) == rendered


def test_setext_headings_are_anchors_and_sections(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "guide.md").write_text("Guide\n=====\n\nintro\n\nInstall steps\n-------------\n\nrun it\n\n"
                                   "Usage\n=====\n\nuse it\n\n- a list item\n---\n", encoding="utf-8")
    (root / "ref.md").write_text("[[guide#Install steps]] [[guide#Guide#Install steps]] [[guide#a list item]]\n",
                                 encoding="utf-8")
    wiki = Wiki(root)
    assert wiki.pages["guide.md"].headings == ["Guide", "Install steps", "Usage"]
    broken = [i.message for i in lint(wiki) if i.code == "broken-anchor"]
    assert broken == ["[[guide#a list item]]: guide.md has no heading 'a list item'"], broken
    body = (root / "guide.md").read_text(encoding="utf-8")
    assert markdown_scan.find_section(body, "Install steps") == "Install steps\n-------------\n\nrun it"
    assert markdown_scan.find_section(body, "Guide") == body[:body.index("Usage")].rstrip()


def test_a_new_attachment_is_picked_up_by_a_refresh(wiki: Wiki, vault: Path) -> None:
    assert set(wiki.links.missing_attachments) == {"missing-shot.png", "attachments/gone.pdf"}
    assert not wiki.refresh()  # nothing changed: no change reported
    (vault / "Attachments" / "missing-shot.png").write_bytes((vault / "Attachments/diagram.png").read_bytes())
    changes = wiki.refresh()
    assert changes and changes.attachments and not changes.paths
    assert targets(wiki, "Getting started/Start here.md")["missing-shot.png"] == "Attachments/missing-shot.png"
    assert set(wiki.links.missing_attachments) == {"attachments/gone.pdf"}
