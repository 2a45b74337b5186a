"""docs/design.md §3 page parsing, rule by rule: frontmatter, title, snippet, layer, trust, tags,
source_type, links, and the frontmatter rewriter."""

from __future__ import annotations

import pytest

from curator.engine.corpus import frontmatter
from curator.engine.corpus.markdown_scan import strip_code
from curator.engine.corpus.page import (
    DEFAULT_TRUST,
    SOURCE_TYPE_FACTORS,
    Page,
    decode,
    link_key,
    parse_layer,
    parse_page,
    parse_trust,
)


def parse(text: str | bytes, path: str = "wiki/page.md") -> Page:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_page(path, data)[0]


def codes(page: Page) -> list[str]:
    return [p.code for p in page.problems]


# --- frontmatter ---------------------------------------------------------------------------

def test_frontmatter_fields_are_read() -> None:
    page = parse("---\ntitle: Ann Smith\nlayer: core\ntrust: 0.8\ntags: [people, sales]\n"
                 "aliases: [Annie]\nauthor: agent:dudu\ncreated: 2026-01-02\nupdated: 2026-02-03\n"
                 "do_not_inject: true\nx-owner: finance\n---\nBody.\n")
    assert (page.title, page.layer, page.trust) == ("Ann Smith", "core", 0.8)
    assert page.tags == ["people", "sales"]
    assert page.aliases == ["Annie"]
    assert page.author == "agent:dudu"
    assert (page.created, page.updated) == ("2026-01-02", "2026-02-03")
    assert page.do_not_inject is True
    assert page.meta["x-owner"] == "finance"
    assert page.problems == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\ntitle: x\nlayer: core\n\nno closing fence\n", "unclosed"),
        ("---\n- a\n- b\n---\nbody\n", "list"),
        ("---\njust words\n---\nbody\n", "str"),
        ("---\n42\n---\nbody\n", "int"),
        ("---\ntitle: [oops\n---\nbody\n", "malformed"),
        ("---\ntitle: a\n\tlayer: b\n---\nbody\n", "malformed"),
        ("---\nkey: !!python/object:os.system x\n---\nbody\n", "malformed"),
    ],
)
def test_malformed_or_non_mapping_frontmatter_gives_empty_metadata_and_a_problem(text: str,
                                                                                 fragment: str) -> None:
    page = parse(text)
    assert page.meta == {}
    assert page.layer == "deep" and page.trust == DEFAULT_TRUST
    assert codes(page) == ["frontmatter"]
    assert fragment in page.problems[0].message


def test_empty_frontmatter_block_is_not_a_problem() -> None:
    page = parse("---\n---\n# Heading\n")
    assert page.problems == [] and page.title == "Heading"


def test_a_horizontal_rule_later_in_the_page_is_not_frontmatter() -> None:
    page = parse("# Title\n\nText\n\n---\nlayer: core\n---\n")
    assert page.layer == "deep" and page.meta == {} and page.problems == []


def test_alias_bombs_are_bounded() -> None:
    many = "---\na: &a [x, x]\n" + "".join(f"k{i}: *a\n" for i in range(100)) + "---\nbody\n"
    assert "aliases" in parse(many).problems[0].message
    doubling = ["d0: &d0 [x, y]"] + [f"d{i}: &d{i} [*d{i - 1}, *d{i - 1}]" for i in range(1, 33)]
    page = parse("---\n" + "\n".join(doubling) + "\n---\nbody\n")
    assert codes(page) == ["frontmatter"] and page.meta == {}
    # a few aliases that expand to little are fine
    ok = parse("---\nbase: &b {layer: core}\nother: *b\n---\nbody\n")
    assert ok.problems == [] and ok.meta["other"] == {"layer": "core"}


def test_frontmatter_values_become_json_safe() -> None:
    page = parse("---\ncreated: 2026-03-01\nupdated: 2026-03-01 10:00:00\nn: .inf\n---\nbody\n")
    assert page.created == "2026-03-01"
    assert page.updated is not None and page.updated.startswith("2026-03-01")
    assert page.meta["n"] == "inf"


# --- title ---------------------------------------------------------------------------------

def test_title_prefers_frontmatter_then_heading_then_file_name() -> None:
    assert parse("---\ntitle: From FM\n---\n# From Heading\n").title == "From FM"
    assert parse("---\nlayer: core\n---\n# From Heading\n").title == "From Heading"
    assert parse("No heading here.\n", "concepts/some-page.md").title == "some-page"
    assert parse("No heading.\n", "a/b.c/page.v2.md").title == "page.v2"


def test_title_whitespace_is_collapsed_and_non_text_titles_fall_back() -> None:
    assert parse("---\ntitle: '  Two   words '\n---\n").title == "Two words"
    assert parse("---\ntitle: [1, 2]\n---\n# Heading\n").title == "Heading"
    assert parse("---\ntitle: 2026\n---\n").title == "2026"


def test_only_a_level_one_heading_within_800_characters_is_a_title() -> None:
    assert parse("## Second level\n\ntext\n", "wiki/x.md").title == "x"
    near = "a" * 780 + "\n\n# Near\n"
    assert parse(near).title == "Near"
    far = "a" * 800 + "\n\n# Far\n"
    assert parse(far, "wiki/far.md").title == "far"


def test_a_heading_inside_code_is_not_a_title() -> None:
    assert parse("```\n# Not a title\n```\n\n# Real\n").title == "Real"


def test_title_uses_the_text_after_a_bom_and_crlf() -> None:
    page = parse(b"\xef\xbb\xbf---\r\nlayer: core\r\n---\r\n# Crlf Title\r\n\r\nBody.\r\n")
    assert page.title == "Crlf Title" and page.layer == "core"
    assert page.bom and page.crlf and page.snippet == "Body."


# --- snippet -------------------------------------------------------------------------------

def test_snippet_is_the_first_non_heading_paragraph_on_one_line() -> None:
    page = parse("---\ntitle: T\n---\n# T\n\n## Sub\n\nFirst   paragraph\nsecond line.\n\nNext.\n")
    assert page.snippet == "First paragraph second line."


def test_snippet_skips_code_blocks_but_keeps_inline_code_text() -> None:
    page = parse("```\ncode block line that is long\n```\n\nUse `make test` now.\n")
    assert page.snippet == "Use `make test` now."


def test_snippet_is_at_most_280_characters() -> None:
    page = parse("word " * 200)
    assert len(page.snippet) <= 280 and page.snippet.endswith("…")
    assert len(parse("x" * 280).snippet) == 280


# --- layer ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("value", "layer"),
    [("identity", "identity"), ("core", "core"), ("context", "context"), ("deep", "deep"),
     ("l0", "identity"), ("L1", "core"), ("l2", "context"), ("L3", "deep"), ("CORE", "core"),
     (" Context ", "context")],
)
def test_layer_names_and_aliases(value: str, layer: str) -> None:
    assert parse_layer(value) == (layer, None)
    assert parse(f"---\nlayer: '{value}'\n---\n").layer == layer


def test_layer_default_and_unknown() -> None:
    assert parse("body").layer == "deep"
    page = parse("---\nlayer: l9\n---\n")
    assert page.layer == "deep" and codes(page) == ["layer"]
    assert parse_layer(4)[1] is not None


# --- trust ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("value", "trust", "problem"),
    [(None, 0.5, False), (0, 0.0, False), (1, 1.0, False), (0.7, 0.7, False), ("0.25", 0.25, False),
     ("high", 0.5, True), (True, 0.5, True), (float("nan"), 0.5, True), ([0.3], 0.5, True),
     (1.7, 1.0, True), (-0.2, 0.0, True), (12, 1.0, True)],
)
def test_trust_rules(value: object, trust: float, problem: bool) -> None:
    got, message = parse_trust(value)
    assert got == trust
    assert (message is not None) is problem


def test_trust_problems_reach_the_page() -> None:
    assert codes(parse("---\ntrust: very\n---\n")) == ["trust"]
    page = parse("---\ntrust: 3\n---\n")
    assert page.trust == 1.0 and codes(page) == ["trust"]


# --- tags ----------------------------------------------------------------------------------

def test_tags_from_list_or_comma_string_plus_body_tags() -> None:
    assert parse("---\ntags: [a, b]\n---\n").tags == ["a", "b"]
    assert parse("---\ntags: 'a, b ,, c'\n---\n").tags == ["a", "b", "c"]
    assert parse("---\ntags: ['#ops']\n---\nSee #Finance and #ops again.\n").tags == ["ops", "Finance"]


def test_body_tags_skip_code_headings_urls_anchors_and_numbers() -> None:
    text = ("# Heading\n\n## Sub heading\n\nReal #tag1 and #multi/level-tag.\n"
            "`#incode` and http://x.example/#frag and [l](#anchor) and issue #123 but #2026plans.\n\n"
            "```\n#fenced\n```\nword#glued\n")
    assert parse(text).tags == ["tag1", "multi/level-tag", "2026plans"]


def test_non_scalar_tags_are_ignored() -> None:
    page = parse("---\ntags: {a: 1}\naliases: 7\n---\n")
    assert page.tags == [] and page.aliases == ["7"]


# --- source_type ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("path", "trust", "expected"),
    [("sources/chat.md", 0.9, "raw_dialogue"), ("concepts/x.md", 0.7, "verified_fact"),
     ("concepts/x.md", 0.69, "unknown"), ("entities/acme.md", 0.95, "verified_fact"),
     ("wiki/concepts/x.md", 0.8, "verified_fact"), ("wiki/sources/x.md", 0.5, "raw_dialogue"),
     ("wiki/x.md", 0.9, "unknown"), ("x.md", 0.9, "unknown")],
)
def test_source_type_derivation(path: str, trust: float, expected: str) -> None:
    assert parse(f"---\ntrust: {trust}\n---\n", path).source_type == expected


def test_explicit_source_type_wins_and_unknown_values_are_flagged() -> None:
    page = parse("---\nsource_type: User_Statement\n---\n", "sources/a.md")
    assert page.source_type == "user_statement" and page.source_factor == 1.0
    bad = parse("---\nsource_type: rumour\n---\n")
    assert bad.source_type == "unknown" and codes(bad) == ["source-type"]
    assert SOURCE_TYPE_FACTORS == {"verified_fact": 1.2, "user_statement": 1.0, "tool_output": 0.9,
                                   "unknown": 0.8, "raw_dialogue": 0.6}


# --- encoding ------------------------------------------------------------------------------

def test_invalid_utf8_is_replaced_and_flagged() -> None:
    page = parse(b"---\ntitle: Bad\n---\nok \xff\xfe here\n")
    assert page.invalid_utf8 and codes(page) == ["encoding"] and page.title == "Bad"
    assert "\ufffd" in decode(b"ok \xff").text


def test_nul_bytes_and_empty_pages_are_flagged() -> None:
    assert "nul-bytes" in codes(parse(b"a\x00b"))
    assert codes(parse(b"")) == ["empty"]
    assert codes(parse(b"  \n\n")) == ["empty"]


# --- links ---------------------------------------------------------------------------------

def test_every_link_kind_is_found_with_anchor_alias_and_line() -> None:
    text = ("---\ntitle: L\nrelated: [wiki/rel-one.md, '[[Rel Two]]']\n---\n"
            "[[Plain]] and [[With Anchor#Sec]] and [[Aliased|shown]] and [[Both#Sec|shown too]].\n"
            "![[Embedded]] and ![[picture.png]].\n"
            "[md](../concepts/Other%20Page.md#part) and [up](sub/deeper.md) "
            "[web](https://x.example/a.md) [abs](/abs.md) [txt](notes.txt) [self](#here).\n"
            "| table | [[Piped\\|cell]] |\n")
    page = parse(text, "wiki/l.md")
    got = [(k.kind, k.target, k.anchor, k.alias, k.line) for k in page.links]
    assert got == [
        ("wikilink", "Plain", None, None, 5),
        ("wikilink", "With Anchor", "Sec", None, 5),
        ("wikilink", "Aliased", None, "shown", 5),
        ("wikilink", "Both", "Sec", "shown too", 5),
        ("embed", "Embedded", None, None, 6),
        ("embed", "picture.png", None, None, 6),  # an attachment embed is a link to that file
        ("wikilink", "Piped", None, "cell", 8),
        ("markdown", "concepts/Other Page.md", "part", "md", 7),
        ("markdown", "wiki/sub/deeper.md", None, "up", 7),
        ("related", "wiki/rel-one.md", None, None, 0),
        ("related", "Rel Two", None, None, 0),
    ]
    assert [k.key for k in page.links][:2] == ["plain", "with-anchor"]
    assert page.related == ["wiki/rel-one.md", "[[Rel Two]]"]


def test_links_inside_code_do_not_count() -> None:
    text = ("Inline `[[in-span]]` and ``[[double ` span]]`` are code.\n\n"
            "```\n[[in-fence]]\n```\n\n~~~md\n[x](in-tilde.md)\n~~~\n\n"
            "```\nunclosed fence [[in-unclosed]]\n")
    assert parse(text).links == []
    assert [k.target for k in parse("`[[a]]` [[b]] `x` [[c]]").links] == ["b", "c"]
    assert [k.target for k in parse("an unpaired ` backtick then [[real]]").links] == ["real"]


def test_strip_code_keeps_offsets_and_lines() -> None:
    body = "a `code` b\n```\nfenced [[x]]\n```\nend"
    stripped = strip_code(body)
    assert len(stripped) == len(body) and stripped.count("\n") == body.count("\n")
    assert "[[x]]" not in stripped and stripped.endswith("end")


def test_link_keys_normalise_case_whitespace_and_md_suffix() -> None:
    assert link_key("  Ann   Smith ") == "ann-smith"
    assert link_key("wiki/Ann Smith.md") == "wiki/ann-smith"
    assert link_key("付款流程") == "付款流程"


def test_a_huge_page_parses_in_bounded_time_and_keeps_bounded_links() -> None:
    from curator.engine.corpus.page import MAX_LINKS_PER_PAGE

    body = "[[same]] and `code` and #tag\n" * 60_000
    page = parse(body)
    assert len(page.links) == MAX_LINKS_PER_PAGE and "links" in codes(page)


# --- rewriting -----------------------------------------------------------------------------

def test_update_changes_only_the_given_keys_and_keeps_unknown_keys_and_comments() -> None:
    text = ("---\n# owner notes\ntitle: Old\nx-custom: {a: 1}\ntags:\n  - a\n  - b\n"
            "trust: 0.5  # reviewed\n---\nBody stays.\n")
    out = frontmatter.update(text, {"title": "New", "trust": 0.9, "layer": "core"}, remove=("tags",))
    assert out == ("---\n# owner notes\ntitle: New\nx-custom: {a: 1}\ntrust: 0.9\nlayer: core\n---\n"
                   "Body stays.\n")
    page = parse(out)
    assert (page.title, page.trust, page.layer, page.meta["x-custom"]) == ("New", 0.9, "core", {"a": 1})


def test_update_keeps_crlf_and_a_caller_restores_the_bom() -> None:
    data = b"\xef\xbb\xbf---\r\ntitle: T\r\nx-keep: 1\r\n---\r\nLine one\r\nLine two\r\n"
    dec = decode(data)
    out = frontmatter.update(dec.text, {"tags": ["a", "b"]})
    assert "\n" not in out.replace("\r\n", "")
    rewritten = ("\ufeff" if dec.bom else "") + out
    assert rewritten.encode("utf-8") == (b"\xef\xbb\xbf---\r\ntitle: T\r\nx-keep: 1\r\ntags: [a, b]\r\n---\r\n"
                                         b"Line one\r\nLine two\r\n")


def test_update_adds_a_block_to_a_page_without_frontmatter() -> None:
    out = frontmatter.update("# Title\n\nBody\n", {"title": "付款流程", "aliases": ["Pay"]})
    assert out == "---\ntitle: 付款流程\naliases: [Pay]\n---\n# Title\n\nBody\n"


# --- fuzz ----------------------------------------------------------------------------------

FRAGMENTS: tuple[bytes, ...] = (
    b"---\n", b"---\r\n", b"title: x\n", b"layer: L2\n", b"trust: 2\n", b"tags: [a, b]\n", b"a: &a [1]\n",
    b"b: *a\n", b"- item\n", b"\t", b"# Head\n", b"## Sub\n", b"```\n", b"~~~\n", b"`", b"``", b"[[", b"]]",
    b"[[x#y|z]]", b"![[e]]", b"[t](../a.md)", b"#tag ", b"\n\n", b"\xef\xbb\xbf", b"\xff", b"\x00", b"\r\n",
    "付款流程".encode(), b"related: [a, '[[b]]']\n", b"source_type: tool_output\n", b"{", b"}", b":", b"'",
)


def test_random_pages_never_break_the_parser() -> None:
    import random

    rng = random.Random(20261130)
    for _ in range(3000):
        data = b"".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 40)))
        page, body = parse_page("wiki/fuzz.md", data)
        assert page.title and len(page.snippet) <= 280
        assert page.layer in ("identity", "core", "context", "deep") and 0.0 <= page.trust <= 1.0
        assert page.source_type in SOURCE_TYPE_FACTORS
        assert all(link.key for link in page.links)
        text = decode(data).text
        assert len(strip_code(body)) == len(body) and body in text
        if "frontmatter" not in codes(page):  # broken YAML stays the operator's to fix
            rewritten = parse(frontmatter.update(text, {"trust": 0.7}).encode("utf-8"))
            assert rewritten.trust == 0.7 and "frontmatter" not in codes(rewritten), data
