"""The fast frontmatter path gives exactly PyYAML's result, or hands the block to PyYAML.

Property-tested on the pages of both corpus profiles, the hostile set, and thousands of random
blocks built from lines that trip YAML up (booleans, nulls, numbers, dates, quotes, comments,
anchors, nesting, odd indentation, tabs, CR, Unicode line breaks), and from the shapes agents
write beyond flat frontmatter (nested mappings, block scalars, timestamps, escapes, comments,
digit-first words) with their near misses.
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
    assert info.real is not None
    blocks = raw_blocks(info.root, info.pages)
    answered = sum(check(raw) for raw in blocks)
    assert answered >= 0.99 * len(blocks)
    # the shapes that used to go to PyYAML (nested mapping, folded text, timestamp, comment) don't
    complex_blocks = raw_blocks(info.root, info.real.complex_frontmatter)
    assert complex_blocks and all(check(raw) for raw in complex_blocks)


def test_fast_path_reads_at_least_99_percent_of_real_shaped_frontmatter(tmp_path: Path) -> None:
    # issue 44's figure is 95 % of real pages; the real-shaped profile's shapes are all read
    info = generate(tmp_path / "w", 400, seed=44, profile="real-shaped")
    blocks = [raw for raw in raw_blocks(info.root, info.pages) if raw.strip()]
    answered = sum(check(raw) for raw in blocks)
    assert answered >= 0.99 * len(blocks), (answered, len(blocks))


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


# --- the shapes agent-written frontmatter has beyond the flat kind (issue 44) ---------------

#: each block is read by the fast path, and equals PyYAML's reading
RICH_SHAPES = {
    "digit-first title": "title: 2024 Horizon Ember\ntags: [2025 Cobalt, 3D printing]\n",
    "digit-first words": "a: 12 Monkeys\nb: 1st place\nc: 100%\nd: 0.5 cups\ne: 9 to 5\n",
    "negative numbers": "a: -3\nb: -0.25\nc: -0\nd: [-1, 2]\n",
    "date and datetimes": ("a: 2026-02-01\nb: 2026-02-01T10:00:00Z\nc: 2026-02-01 10:00:00\n"
                           "d: 2026-02-01t10:00:00.5+02:00\ne: 2026-2-1 9:05:00 -05:30\n"
                           "f: 2026-02-01T10:00:00.1234567 Z\ng: 2026-02-01T10:00:00.\n"),
    "double-quoted escapes": 'a: "say \\"hi\\""\nb: "C:\\\\path"\nc: "l1\\nl2\\tx"\nd: "\\u00e9t\\u00e9 \\/ x"\n',
    "single-quoted": "a: 'it''s # not a comment'\nb: 'x: y'\n",
    "comments": ("# a comment the agent left\ntitle: Foo # trailing\ntags: [a, b] # why\nq: 'x' # c\n"
                 "d: \"y\"   # c\n#no space\nlist: # the list\n  - a # first\n  - 'b' # second\n"),
    "nested mapping": ("metadata:\n  origin: agent\n  score: 3\n  tags: [x, y]\n  when: 2026-01-01\n"
                       "  empty:\n  note: 'q' # c\ntitle: After\n"),
    "nested mapping, deeper indent": "meta:\n    a: 1\n    b: two words\n",
    "folded text": "summary: >-\n  A folded summary\n  over two lines.\ntitle: T\n",
    "folded, clipped": "summary: >\n  A folded\n  summary\n\ntitle: T\n",
    "literal text": "body: |\n  line one\n  line: two # not a comment\nnext: |-\n    kept\n    as is\n",
    "block scalar header comment": "s: | # c\n  x\n",
    "quoted wikilinks in lists": ('related: ["[[Alpha]]", "[[Beta, Gamma]]", \'[[It\'\'s]]\']\n'
                                  'sources:\n  - "[[Alpha]]"\n  - \'[[Beta]]\'\n'),
    "flow list spacing": "a: [ x , y ]\nb: [ ]\n",
}


def test_fast_path_reads_each_shape_agents_write() -> None:
    for name, raw in RICH_SHAPES.items():
        assert check(raw), name


def test_fast_path_refuses_what_it_cannot_be_sure_of() -> None:
    # each of these reads differently from the look of it (or fails): PyYAML decides
    for raw in ("a: 0x1F\n", "a: 1_000\n", "a: 017\n", "a: 1e3\n", "a: 1:30\n", "a: 2024-5-1\n",
                "a: 2024 Bead\n", "a: -01\n", "a: 2026-13-01T10:00:00\n", "a: 2026-02-01T10:00:00+24:00\n",
                'a: "\\x41"\n', 'a: "\\ud800"\n', "a: |+\n  x\n", "a: |2\n  x\n", "a: |\n  x\n   y\n",
                "a: >\n  x\n\n  y\n", "a: |\n  x", "a:\n  b:\n    c: 1\n", "a:\n  b: 1\n c: 2\n",
                "a:\n  b: 1\n  - c\n", "a: [x, [y]]\n", "a: [x] y\n", "a: [x,]\n", "a: {b: 1}\n",
                'a: "x" y\n', "a: 'x\n", "  # indented comment\na: 1\n"):
        fast = frontmatter.fast_load(raw)
        assert fast is None, (raw, fast)


RICH_KEYS = ("title", "meta", "summary", "tags", "k", "created")
RICH_SCALARS = (
    "2024 Horizon Ember", "2024 Bead", "3D", "1st", "12 Monkeys", "0.5 cups", "-3", "-0.25", "-01",
    "-x", "-1e3", "0x1F", "1_000", "1:30", "190:20:30.15", "1.", "1.5.6", "2026-02-01",
    "2026-2-1", "2026-02-30", "2026-02-01T10:00:00Z", "2026-02-01 10:00:00", "2026-02-01t10:00:00",
    "2026-02-01 10:00:00 +5", "2026-02-01T10:00:00.1234567+02:30", "2026-02-01T25:00:00",
    "2026-02-01T10:00:00+24:00", "2026-02-01 10:00", '"a \\"b\\" c"', '"C:\\\\x"', '"\\n\\t\\r\\/"',
    '"\\u00e9"', '"\\ud83d"', '"\\x41"', '"\\e"', '"a # b"', '"a', "'it''s'", "'a # b'", "'a",
    "plain # comment", "plain #not", "C#", "x #", "#", "# only", '"q" # c', "'q' # c", '"q"x',
    '["[[A]]", "[[B, C]]"]', "[a, b] # c", "[a, b] # c [d]", "[a, 'b, c', \"d]\"]", "[ a , b ]",
    "[a, , b]", "[a,]", "[a, [b]]", "[2024 Foo, -3, 1.5]", "[a #b]", '["k": v]', "{a: 1}",
    "|", "|-", ">", ">-", "| # c", "|+", ">2", "Foo Bar", "yes", "null", "",
)
RICH_COMMON = ("2024 Horizon Ember", "12 Monkeys", "-3", "-0.25", "2026-02-01T10:00:00Z",
               "2026-02-01 10:00:00", '"a \\"b\\" c"', '"\\u00e9"', "'it''s'", "plain # comment",
               '"q" # c', '["[[A]]", "[[B, C]]"]', "[a, b] # c", "Foo Bar", "0.8", "[x, y]")
RICH_LINES = ("# comment", "#", "  # indented comment", "", "  ", "  nested: 1", "    deeper: 2",
              "  - item", " odd: 1", "  folded line", "  trailing  ")


def random_rich_block(rng: random.Random) -> str:
    """Blocks of the new shapes, their near misses mixed in."""
    def value() -> str:
        return rng.choice(RICH_SCALARS) if rng.random() < 0.2 else rng.choice(RICH_COMMON)

    lines: list[str] = []
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        key = rng.choice(RICH_KEYS) if rng.random() < 0.9 else rng.choice(KEYS)
        if roll < 0.45:
            lines.append(f"{key}: {value()}")
        elif roll < 0.65:  # a nested mapping
            lines.append(f"{key}:" + rng.choice(("", "", " # c")))
            indent = rng.choice(("  ", "  ", "    ", " ", "  "))
            for _ in range(rng.randint(1, 4)):
                sub = rng.choice(RICH_KEYS) if rng.random() < 0.9 else rng.choice(KEYS)
                line = f"{indent}{sub}: {value()}".rstrip(" ")
                lines.append(line if rng.random() < 0.9 else f"{indent}{sub}:")
                if rng.random() < 0.04:
                    lines.append(rng.choice(RICH_LINES))
        elif roll < 0.8:  # a block scalar
            lines.append(f"{key}: {rng.choice(('|', '|-', '>', '>-', '>- # c', '|+', '|2'))}")
            indent = rng.choice(("  ", "  ", "    "))
            for _ in range(rng.randint(1, 3)):
                text = rng.choice(("text line", "a: b # c", "- x", "'q'", "#h", "text", "x: y")
                                  if rng.random() < 0.9 else ("  more", "", "x  "))
                lines.append(f"{indent}{text}" if text else "")
        elif roll < 0.92:  # a block list
            lines.append(f"{key}:" + rng.choice(("", "", " # c")))
            indent = rng.choice(("", "  ", "  "))
            for _ in range(rng.randint(1, 3)):
                lines.append(f"{indent}- {value()}".rstrip(" "))
        elif roll < 0.96:
            lines.append(rng.choice(("# comment", "#", "")))
        else:
            lines.append(rng.choice(RICH_LINES))
    return "\n".join(lines) + ("\n" if rng.random() < 0.9 else "")


def test_fast_path_equals_pyyaml_on_random_blocks_of_the_new_shapes() -> None:
    answered = total = 0
    for seed in range(40):
        rng = random.Random(seed)
        for _ in range(250):
            answered += check(random_rich_block(rng))
            total += 1
    assert answered > total // 4, answered  # the property is exercised, not just the fallback


def test_numbers_dates_and_words_starting_with_a_digit_equal_pyyaml() -> None:
    # random short scalars from the characters YAML 1.1 numbers and timestamps are made of, and
    # a few letters: wherever the fast path reads one, it reads it as PyYAML does
    rng = random.Random(44)
    alphabet = "0123456789" * 3 + "-:._ +TtZeEbxoabcfXOrsn"
    answered = 0
    for _ in range(20_000):
        text = rng.choice("0123456789-") + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        answered += check(f"a: {text}\nb: [{text}]\n")
        if rng.random() < 0.3:
            stamp = (f"{rng.randint(1990, 2030)}-{rng.randint(0, 13):0{rng.choice((1, 2))}d}-"
                     f"{rng.randint(0, 32):0{rng.choice((1, 2))}d}{rng.choice(('T', 't', ' ', '  ', ''))}"
                     f"{rng.randint(0, 25)}:{rng.randint(0, 61):02d}:{rng.randint(0, 61):02d}"
                     f"{rng.choice(('', '.', '.5', '.1234567'))}{rng.choice(('', 'Z', ' Z', '+02:00', '-5', ' +5:30', '+24'))}")
            answered += check(f"a: {stamp}\n")
    assert answered > 2000, answered


def test_fast_path_equals_pyyaml_on_near_misses_of_each_shape() -> None:
    # each shape with a few characters inserted, deleted or replaced by ones YAML reads specially
    alphabet = " #:-'\"[]{},|>\n\\0123456789abTZ.+_ux&*!?%@`~"
    rng = random.Random(44)
    bases = list(RICH_SHAPES.values())
    answered = 0
    for _ in range(20_000):
        chars = list(rng.choice(bases))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars) + 1)
            roll = rng.random()
            if roll < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif at < len(chars):
                if roll < 0.7:
                    del chars[at]
                else:
                    chars[at] = rng.choice(alphabet)
        answered += check("".join(chars))
    assert answered > 4000, answered
