"""The fast paths of ``slugify`` and ``slug_features`` (names that are already slugs, or words split
by single spaces, skip the pattern): the same answers as the pattern gives, on random names."""

from __future__ import annotations

import random

from curator.engine.corpus import slugs

ALPHABETS = ["abcXYZ019-_ .é付", "aB1 -", "ab -\t\n", "aé-İß ", "x-"]
EDGES = ["", " ", "-", "a1", "abc", "a-b", "1", "x" * 70, "a-" * 40, "a " * 40, "-a", "a--b", "ABC", "a_b",
         "9-9", "Nocturne Bg3 V4", "a b ", " a b", "a  b", "a - b", "ǅungla", "ﬁle", "①②"]


def _pattern_slugify(text: str) -> str:
    """slugify as docs/design.md §4 states it: NFKC, lowercase, runs of non-alphanumerics to ``-``."""
    import unicodedata

    text = unicodedata.normalize("NFKC", text).lower()
    slug = slugs._NON_ALNUM.sub("-", text).strip("-")
    return slug[:slugs.SLUG_MAX].rstrip("-") if len(slug) > slugs.SLUG_MAX else slug


def _names(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [*EDGES, *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 70)))
                      for alphabet in ALPHABETS for _ in range(4000))]


def test_slugify_fast_path_is_the_pattern() -> None:
    for name in _names(1):
        assert slugs.slugify(name) == _pattern_slugify(name), repr(name)


def test_slug_features_fast_path_is_the_pattern() -> None:
    for name in _names(2):
        feats = slugs.slug_features(name)
        assert feats.alnum == slugs._alnum(name), repr(name)
        low = f" {name.lower()} "
        assert feats.tri == frozenset(low[i:i + 3] for i in range(len(low) - 2))


def test_normalize_target_is_the_whitespace_pattern_on_every_character() -> None:
    """``normalize_target`` (trim, lowercase, whitespace runs -> ``-``) splits with ``str.split``:
    the same answer as ``\\s+`` -> ``-``, for every character ``\\s`` matches and names mixing them."""
    import re
    import sys

    pattern = re.compile(r"\s+")
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if pattern.fullmatch(chr(c))]
    assert "\u3000" in spaces and "\x1f" in spaces and "\u200b" not in spaces
    rng = random.Random(11)
    pool = [*spaces, *"aB-_/é付İ", "\u200b", "\xad"]
    names = [*EDGES, *("".join(rng.choice(pool) for _ in range(rng.randint(0, 9))) for _ in range(20_000))]
    for name in names:
        assert slugs.normalize_target(name) == pattern.sub("-", name.strip().lower()), repr(name)
