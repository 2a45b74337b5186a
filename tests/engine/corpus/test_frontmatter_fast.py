"""The fast frontmatter path gives exactly PyYAML's result, or hands the block to PyYAML.

Property-tested on the pages of both corpus profiles, the hostile set, and thousands of random
blocks built from lines that trip YAML up (booleans, nulls, numbers, dates, quotes, comments,
anchors, nesting, odd indentation, tabs, CR, Unicode line breaks).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import decode, parse_page
from tests.corpus import HOSTILE_PAGES, generate


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``True == 1`` does not count)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check(raw: str) -> bool:
    """Assert the property for one block; True when the fast path answered."""
    fast = frontmatter.fast_load(raw)
    if fast is None:
        return False
    reference, problem = frontmatter.load_yaml(raw)
    assert problem is None, (raw, problem)
    assert same(fast, reference), (raw, fast, reference)
    return True


def raw_blocks(root: Path, pages: list[str]) -> list[str]:
    out = []
    for path in pages:
        parts = frontmatter.split(decode((root / path).read_bytes()).text)
        if parts.raw is not None:
            out.append(parts.raw)
    return out


def test_fast_path_equals_pyyaml_on_the_real_shaped_corpus(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 3000, seed=5, profile="real-shaped", hostile=True)
    blocks = raw_blocks(info.root, info.pages)
    answered = sum(check(raw) for raw in blocks)
    # the fast path is the common path: all but the non-flat shapes (and the hostile pages)
    assert answered >= 0.97 * (3000 - len(info.real.complex_frontmatter)) if info.real else False
    # and the non-flat shapes went to PyYAML
    assert all(frontmatter.fast_load(r) is None for r in raw_blocks(info.root, info.real.complex_frontmatter))


def test_fast_path_equals_pyyaml_on_the_default_corpus_and_hostile_set(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 300, seed=2, hostile=True)
    blocks = raw_blocks(info.root, info.pages)
    assert sum(check(raw) for raw in blocks) >= 200
    for _rel, data in HOSTILE_PAGES.values():
        text = decode(data if isinstance(data, bytes) else data.encode()).text
        raw = frontmatter.split(text).raw
        if raw is not None:
            check(raw)
    # what a page makes of its frontmatter is the same with and without the fast path
    for path in info.pages:
        if path in info.hostile.values() and path.endswith("ten-mb.md"):
            continue
        data = (info.root / path).read_bytes()
        page, _ = parse_page(path, data)
        raw = frontmatter.split(decode(data).text).raw
        if raw is not None and not page.problems:
            assert same(page.meta, frontmatter.load_yaml(raw)[0]), path


KEYS = ("title", "tags", "x-custom-1", "yes", "on", "No", "null", "123", "_k", "a b", "k", "title",
        "é", "key#", "[k]", "'q'", "-k")
VALUES = ("plain text", "yes", "No", "off", "ON", "tRue", "y", "n", "null", "Null", "~", "0", "7",
          "01", "1.5", "0.80", "1e3", "1.0e+3", "+1", "-1", "0x1F", "0o7", "1_000", "10:30", ".inf",
          ".NaN", "2026-01-15", "2026-02-30", "2026-1-5", "2026-01-15T10:00:00Z", "2026-01-15 10:00",
          "a: b", "a:b", "a #b", "a#b", "C#", "it's", "'quoted'", "'it''s'", "''''", "'a''", '"dq"',
          '"a\\nb"', '"a # b"', '"x" # c', "[a, b]", "[a, 'b, c']", '["x", 2, 2026-01-01]', "[]",
          "[ ]", "[a,]", "[a, , b]", "[a, [b]]", "[yes, null, ~]", "{a: 1}", "&x foo", "*x",
          "!tag v", "|", ">-", "-", "- x", "%x", "@x", "`x`", "Ünïcödé", "付款流程", "two  spaces",
          "trailing   ", "=", "<<", "?", ": x", "a, b, c", "Foo [draft]", "x]", "name: 'v'", "#",
          "\u00e9t\u00e9", "emoji \U0001F600", "")
RAW_LINES = ("", "   ", "# comment", "  - item", "- item", "  -", "    - deeper", "  nested: 1",
             "\tlayer: core", "title: cr\r", "a\u2028b: c", "x: \x85", "...", "  continued text",
             "-x", "key: \ufeffbom", "k: v\x07")


COMMON = ("Foo Bar", "plain text", "0.8", "3", "2026-01-15", "yes", "false", "null", "[a, b]",
          "[]", "'q'", '"dq"', "", "付款流程", "it's", "C#", "Foo [draft]", "a, b, c", "x-y_z")
COMMON_KEYS = ("title", "tags", "x-custom-1", "k", "_k", "type")


def random_block(rng: random.Random) -> str:
    """Mostly common lines (so the fast path answers often), with tricky ones mixed in."""
    def value() -> str:
        return rng.choice(VALUES) if rng.random() < 0.15 else rng.choice(COMMON)

    def key() -> str:
        return rng.choice(KEYS) if rng.random() < 0.1 else rng.choice(COMMON_KEYS)

    lines = []
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.65:
            lines.append(f"{key()}: {value()}")
        elif roll < 0.95:
            lines.append(f"{key()}:")
            indent = rng.choice(("", "  ", "  ", "    "))
            for _ in range(rng.randint(0, 3)):
                lines.append(f"{indent}- {value()}" if rng.random() < 0.95 else f"{indent}-")
        else:
            lines.append(rng.choice(RAW_LINES))
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


def test_fast_path_equals_pyyaml_on_random_tricky_blocks() -> None:
    rng = random.Random(17)
    answered = 0
    for _ in range(6000):
        answered += check(random_block(rng))
    assert answered > 1500  # the property is exercised, not just the fallback


def test_fast_path_reads_the_common_shapes() -> None:
    raw = ("title: Nocturne Bg3 V4 Campaign\ntype: entity\ntags: [games, bg3]\naliases:\n  - Nocturne\n"
           "  - 'BG3: V4'\ncreated: 2026-01-15\ntrust: 0.8\nversion: 3\ndraft: false\nstatus:\n")
    assert frontmatter.fast_load(raw) == {
        "title": "Nocturne Bg3 V4 Campaign", "type": "entity", "tags": ["games", "bg3"],
        "aliases": ["Nocturne", "BG3: V4"], "created": "2026-01-15", "trust": 0.8, "version": 3,
        "draft": False, "status": None}
    assert check(raw)
    for hard in ("a: &x 1\nb: *x\n", "a:\n  b: 1\n", "a: >-\n  folded\n", "a: 1 # note\n", "a: yes\n"):
        fast = frontmatter.fast_load(hard)
        assert fast is None or same(fast, frontmatter.load_yaml(hard)[0])
    assert frontmatter.fast_load("a: yes\n") == {"a": True}
    assert frontmatter.load("title: [unclosed\n")[1]  # a broken block still reports its problem


def _split_line_by_line(text: str) -> tuple[str | None, str, int, str | None]:
    """The block's definition, one line at a time: a ``---`` first line, and the next line that
    is ``---`` (trailing blanks or a CR allowed) starting within the size limit closes it."""
    lines = text.split("\n")
    if not frontmatter._FENCE.match(lines[0]) or len(lines) == 1:
        problem = "unclosed frontmatter: no closing '---' line" if frontmatter._FENCE.match(lines[0]) else None
        return None, text, 1, problem
    limit = min(len(text), frontmatter.MAX_FRONTMATTER_CHARS + 4096)
    pos = len(lines[0]) + 1
    for number, line in enumerate(lines[1:], 2):
        if pos >= limit:
            break
        if frontmatter._FENCE.match(line):
            return text[len(lines[0]) + 1:pos], text[pos + len(line) + 1:], number + 1, None
        pos += len(line) + 1
    return None, text, 1, "unclosed frontmatter: no closing '---' line"


def test_split_finds_the_closing_fence_as_a_line_by_line_reading_does(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 300, seed=3, profile="real-shaped")
    texts = [decode((info.root / p).read_bytes()).text for p in info.pages]
    texts += [decode(data if isinstance(data, bytes) else data.encode()).text for _, data in HOSTILE_PAGES.values()]
    rng = random.Random(11)
    pieces = ["---", "--- ", "---\r", "---\t", "----", " ---", "x---", "-- -", "a: b", "", "\r", "---x"]
    for _ in range(20_000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        texts.append(text + "\n" if rng.random() < 0.3 else text)
    for rows in (13_000, 13_200, 13_300, 20_000):  # a closing line just inside or past the size limit
        texts.append("---\n" + "a: b\n" * rows + "---\nbody\n")
    for text in texts:
        parts = frontmatter.split(text)
        assert (parts.raw, parts.body, parts.body_line, parts.problem) == _split_line_by_line(text), text[:200]
