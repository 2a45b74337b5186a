"""The link index build's batched pieces (issue 19): the keys of every page path, file stem and
title worked out at once equal their one-by-one forms (``path_key``, ``slug_of``, ``link_key``) on
random paths and titles (ASCII and not, whitespace, dots, ``.md`` in any case), and an index
built over random pages answers what resolving each link alone answers."""

from __future__ import annotations

import random

from curator.engine.corpus.links import LinkIndex, _page_keys, link_keys
from curator.engine.corpus.page import link_key, parse_page, path_key, slug_of

ALPHABET = "abAB/.- _0mdMD\t\n\x1cé\x00\x01付"


def _text(rng: random.Random, ascii_only: bool) -> str:
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
    text += rng.choice([".md", ".MD", "", " .md", ".md ", " ", ".md.md"])
    return text.encode("ascii", "ignore").decode().replace("\0", "").replace("\x01", "") if ascii_only else text


def test_link_keys_are_link_key_of_each() -> None:
    rng = random.Random(4)
    for _ in range(20_000):
        texts = [_text(rng, rng.random() < 0.7) for _ in range(rng.randint(0, 5))]
        assert link_keys(texts) == [link_key(t) for t in texts], texts
    titles = ["Ann Smith", "  Two  Spaces  ", "notes.md", "A.MD", "", " ", "-dash-", "x\ty"]
    assert link_keys(titles) == [link_key(t) for t in titles]


def test_page_keys_are_path_key_and_slug_of_each() -> None:
    rng = random.Random(5)
    fast = 0
    for _ in range(20_000):
        paths = [_text(rng, rng.random() < 0.8) for _ in range(rng.randint(0, 4))]
        paths = [p for p in paths if p]
        expected = ([path_key(p) for p in paths], [slug_of(p) for p in paths])
        assert _page_keys(paths) == expected, paths
        fast += bool(paths) and all(p.lower().endswith(".md") and p.isascii() and " " not in p for p in paths)
    assert fast > 100  # (the at-once path was taken)
    paths = ["wiki/Ann-Smith.md", "x/Y/z.MD", "q.md", "a/b.c.md", "a/b..md"]
    assert _page_keys(paths) == ([path_key(p) for p in paths], [slug_of(p) for p in paths])


def test_every_link_resolves_as_alone() -> None:
    rng = random.Random(6)
    names = ["ann-smith", "Ann Smith", "bob", "notes", "a-b", "plan 2024", "x", "付款"]
    pages = {}
    for n in range(300):
        folder = rng.choice(["", "wiki/", "wiki/people/", "notes/"])
        path = f"{folder}{rng.choice(names)}{'' if rng.random() < 0.5 else f'-{n}'}.md"
        links = " ".join(f"[[{rng.choice(names)}{rng.choice(['', '-1', '-7', '.png', '#h'])}]]" for _ in range(4))
        title = f"title: {rng.choice(names)}\n" if rng.random() < 0.3 else ""
        aliases = f"aliases: [{rng.choice(names)}]\n" if rng.random() < 0.2 else ""
        pages[path] = parse_page(path, f"---\n{title}{aliases}---\n{links}\n".encode())[0]
    index = LinkIndex(pages, ["wiki/x.png", "notes/bob.png"])
    fresh = LinkIndex(pages, ["wiki/x.png", "notes/bob.png"])
    for path, edges in index.outgoing.items():
        assert [e.link for e in edges] == list(pages[path].links)
        for edge in edges:
            alone = fresh.resolve_key(edge.link.key, path.rpartition("/")[0])
            assert edge.resolution == alone, edge
            if alone.path is not None and alone.path != path:
                assert edge in index.incoming[alone.path]
            elif alone.path is None and alone.attachment is None and not alone.names_file:
                assert edge in index.unresolved[edge.link.key]
    bare = [key for key in index._base if key.replace("-", "").isalnum()]
    assert len(bare) > 20 and all(index._base[key] == index._resolve(key) for key in index._base)  # (the short way too)
    assert sum(map(len, index.unresolved.values())) > 50 and sum(map(len, index.incoming.values())) > 200
