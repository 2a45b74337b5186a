"""The parse's fast paths equal their reference definitions.

``scan_links`` and ``headings`` are written out for speed; their definitions are
``[s.link for s in link_spans(...)]`` and ``[h.text for h in heading_spans(...) if h.text]``.
``strip_code`` guards its substring tests with one-character ones; the reference is the
unguarded test. The wikilink scan is greedy; the reference is the lazy ``WIKILINK`` pattern.
``decode``'s CRLF flag is a bounded ``find``; the reference is ``b"\\r\\n" in data[:65536]``.
Checked on the pages of both corpus profiles, the hostile set and random strings built from
the characters these scans care about.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from curator.engine.corpus import markdown_scan
from curator.engine.corpus.frontmatter import split
from curator.engine.corpus.markdown_scan import link_spans, scan_links, snippet, strip_code
from curator.engine.corpus.page import decode
from tests.corpus import generate

_LAZY_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")


def reference_strip_code(body: str, comments: bool = True) -> str:
    """strip_code as it was defined before the one-character guards."""
    text = body
    if "```" in text or "~~~" in text:
        text = markdown_scan._strip_fences(text)
    if "\n    " in text or "\n\t" in text or text.startswith(("    ", "\t")):
        text = markdown_scan._strip_indented(text)
    if "`" in text:
        text = markdown_scan._strip_spans(text)
    if comments and "%%" in text:
        text = markdown_scan._strip_comments(text)
    return text


def check(path: str, data: bytes) -> None:
    dec = decode(data)
    assert dec.crlf == (b"\r\n" in data.removeprefix(b"\xef\xbb\xbf")[:65536])
    parts = split(dec.text)
    body = parts.body
    for comments in (True, False):
        assert strip_code(body, comments) == reference_strip_code(body, comments)
    code_free = strip_code(body)
    assert [m.span() for m in markdown_scan._WIKILINK_SCAN.finditer(code_free)] == \
        [m.span() for m in _LAZY_WIKILINK.finditer(code_free)]
    for first in (1, parts.body_line):
        assert scan_links(code_free, path, first) == [s.link for s in link_spans(code_free, path, first)]
    assert markdown_scan.headings(code_free) == [h.text for h in markdown_scan.heading_spans(code_free) if h.text]
    # the single-split branch (same object) equals the zipped one (an equal copy)
    assert snippet(code_free, body) == snippet(code_free, "".join(list(body)))


def corpus_pages(root: Path) -> list[tuple[str, bytes]]:
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*.md"))
            if p.is_file()]


@pytest.mark.parametrize("kind", ["default", "hostile", "real-shaped"])
def test_fast_paths_equal_their_definitions_on_the_corpora(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "wiki"
    if kind == "real-shaped":
        generate(root, 400, seed=2, profile="real-shaped")
    else:
        generate(root, 300, seed=5, hostile=kind == "hostile")
    pages = corpus_pages(root)
    assert len(pages) >= 300
    for path, data in pages:
        check(path, data)


_PIECES = ["[[", "]]", "[", "]", "![[", "|", "\\|", "#", "#^", "^", "a", "B c", " ", "  ", "\n", "\n\n",
           "\r\n", "\t", "    ", "`", "```", "~~~", "~", "%", "%%", "](", "(", ")", "x.md", "img.png",
           "http://e.org", "../up.md", "é", "中", "!", "-", "===", "---", "# ", "## H #", "   #", "> "]


def test_fast_paths_equal_their_definitions_on_random_text() -> None:
    rng = random.Random(17)
    for _ in range(4000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 40)))
        check("wiki/sub/page.md", text.encode())
        check("page.md", ("---\ntitle: t\n---\n" + text).encode())


def test_scan_links_reads_each_kind_of_link() -> None:
    body = "x\n![[Img.png]] [[A b|Alias]] [[C#Sec]]\n[[  ]] [[#Self]] [t](../D.md#h) [[E]]"
    assert scan_links(body, "wiki/p.md", 5) == [
        ("Img.png", None, None, "embed", 6), ("A b", None, "Alias", "wikilink", 6),
        ("C", "Sec", None, "wikilink", 6), ("E", None, None, "wikilink", 7),
        ("D.md", "h", "t", "markdown", 7),
    ]
