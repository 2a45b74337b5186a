"""Slugs: link-target normalisation, the append door's ``slugify`` and ``slug_sim`` (docs/design.md §3, §4)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

# Anything that is not a letter or digit in any script. ``\w`` covers letters, digits and "_" in
# every script, so "not \w, or _" is "not a letter or digit".
_NON_ALNUM = re.compile(r"[\W_]+")

SLUG_MAX = 60


def normalize_target(target: str) -> str:
    """Normalise a link target or a page name for matching: trim, lowercase, whitespace -> ``-``.

    (``str.split`` splits at exactly the characters ``\\s`` matches, ``str.isspace``: the same
    as ``re.sub(r"\\s+", "-", ...)`` on the trimmed text, four times faster; a cold index asks
    this of every link of every page.)"""
    return "-".join(target.strip().lower().split())


def slugify(text: str) -> str:
    """docs/design.md §4 slugify: lowercase, runs of non letters/digits -> ``-``, trimmed, <= 60 characters.

    Letters and digits of every script are kept (``付款流程`` stays ``付款流程``); on ASCII input
    this is exactly ``[^a-z0-9]+ -> -``. An empty result means the input had no usable name.
    """
    if text.isascii():  # (NFKC leaves ASCII as it is)
        text = text.lower()
        # the common names need no pattern: a slug already, or words split by single spaces
        dashed = text.replace(" ", "-")
        if dashed.replace("-", "").isalnum() and "--" not in dashed and dashed[0] != "-" and dashed[-1] != "-":
            return dashed if len(dashed) <= SLUG_MAX else dashed[:SLUG_MAX].rstrip("-")
    else:
        text = unicodedata.normalize("NFKC", text).lower()
    slug = _NON_ALNUM.sub("-", text).strip("-")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rstrip("-")
    return slug


_NON_ALNUM_ASCII = re.compile(r"[^a-z0-9\0]+")  # (after lower(): what _NON_ALNUM matches in ASCII)
#: ASCII -> what slugify keeps of it: letters lowered, digits (and the NUL joining texts) as they are, the rest "-"
_ASCII_SLUG = {c: (chr(c).lower() if chr(c).isalnum() or c == 0 else "-") for c in range(128)}
_HYPHENS = re.compile("--+")


def slugify_many(texts: Sequence[str]) -> list[str]:
    """:func:`slugify` of each of ``texts``, the ASCII ones in one pass (joined, lowered and
    hyphenated at once, then split): a name index slugifies ~80,000 file names, titles and aliases."""
    joined = "\0".join(texts)
    if texts and joined.isascii() and joined.count("\0") == len(texts) - 1:  # (the common case: all at once)
        joined = _HYPHENS.sub("-", joined.translate(_ASCII_SLUG))
        out = joined.replace("-\0", "\0").replace("\0-", "\0").strip("-").split("\0")
        if max(map(len, out)) > SLUG_MAX:
            out = [slug if len(slug) <= SLUG_MAX else slug[:SLUG_MAX].rstrip("-") for slug in out]
        return out
    out = [""] * len(texts)
    plain = [k for k, text in enumerate(texts) if text.isascii() and "\0" not in text]
    for k in set(range(len(texts))).difference(plain) if len(plain) < len(texts) else ():
        out[k] = slugify(texts[k])
    if plain:
        joined = _NON_ALNUM_ASCII.sub("-", "\0".join([texts[k] for k in plain]).lower())
        for k, slug in zip(plain, joined.split("\0"), strict=True):
            slug = slug.strip("-")
            out[k] = slug if len(slug) <= SLUG_MAX else slug[:SLUG_MAX].rstrip("-")
    return out


def _alnum(text: str) -> str:
    return _NON_ALNUM.sub("", text.lower())


class SlugFeatures(NamedTuple):
    """What ``slugSim`` looks at, computed once per slug (routing over 10,000 pages keeps them)."""

    slug: str
    alnum: str  # letters and digits only, lowercase
    tri: frozenset[str]  # trigrams of the lowercase slug padded with one space on each side
    words: frozenset[str]  # words of the lowercase slug, hyphens as spaces


def slug_features(slug: str) -> SlugFeatures:
    low = slug.lower()
    padded = f" {low} "
    alnum = low.replace("-", "")
    if not (alnum.isascii() and alnum.isalnum()):  # (a slug of a-z, 0-9 and "-" needs no pattern)
        alnum = _alnum(slug)
    return SlugFeatures(slug, alnum, frozenset([padded[i : i + 3] for i in range(len(padded) - 2)]),
                        frozenset(low.replace("-", " ").split()))


#: the slugs a batched scorer takes as they are: what ``slugify`` makes of ASCII text (words of
#: a-z, 0-9 split by single hyphens, at most ``SLUG_MAX`` characters)
plain_slug = re.compile(rf"(?=[a-z0-9-]{{1,{SLUG_MAX}}}\Z)[a-z0-9]+(?:-[a-z0-9]+)*").fullmatch


_PLAIN_JOINED = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*(?:\0[a-z0-9]+(?:-[a-z0-9]+)*)*").fullmatch


def all_plain(slugs: Sequence[str]) -> bool:
    """Whether every one of ``slugs`` is a :data:`plain_slug` (one pass over them joined)."""
    return not slugs or (_PLAIN_JOINED("\0".join(slugs)) is not None and max(map(len, slugs)) <= SLUG_MAX)


def similarity(a: SlugFeatures, b: SlugFeatures, floor: float = 0.0) -> float:
    """docs/design.md §4 ``slugSim`` on precomputed features.

    Both are stripped to letters and digits; empty -> 0; equal -> 1; containment ->
    ``max(0.7, shorter/longer)``; otherwise the greater of the trigram Jaccard (space-padded
    slugs) and the word-set Jaccard (hyphens as spaces). With ``floor``, a pair whose set sizes
    alone keep both Jaccards below it scores 0 without any set arithmetic (scores at or above
    ``floor`` are unchanged).
    """
    sa, sb = a.alnum, b.alnum
    if not sa or not sb:
        return 0.0
    if sa == sb:
        return 1.0
    if sa in sb or sb in sa:
        shorter, longer = sorted((len(sa), len(sb)))
        return max(0.7, shorter / longer)
    ta, tb, wa, wb = len(a.tri), len(b.tri), len(a.words), len(b.words)
    # the largest Jaccard two sets of these sizes can have: smaller / larger (0 for an empty one)
    if floor > 0 and (ta / tb if ta < tb else tb / ta if ta else 0.0) < floor \
            and (0.0 if not (wa and wb) else wa / wb if wa < wb else wb / wa) < floor:
        return 0.0
    inter = len(a.tri & b.tri)
    tri = inter / (ta + tb - inter)
    words = 0.0
    if wa and wb:
        inter = len(a.words & b.words)
        words = inter / (wa + wb - inter)
    return max(tri, words)


def slug_sim(a: str, b: str) -> float:
    """docs/design.md §4 ``slugSim``: similarity of two slugs in [0, 1] (see :func:`similarity`)."""
    return similarity(slug_features(a), slug_features(b))
