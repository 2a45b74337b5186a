"""Slugs: link-target normalisation, the append door's ``slugify`` and ``slug_sim`` (SPEC §3, §4)."""

from __future__ import annotations

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
# Anything that is not a letter or digit in any script. ``\w`` covers letters, digits and "_" in
# every script, so "not \w, or _" is "not a letter or digit".
_NON_ALNUM = re.compile(r"[\W_]+")

SLUG_MAX = 60


def normalize_target(target: str) -> str:
    """Normalise a link target or a page name for matching: trim, lowercase, whitespace -> ``-``."""
    return _WHITESPACE.sub("-", target.strip().lower())


def slugify(text: str) -> str:
    """SPEC §4 slugify: lowercase, runs of non letters/digits -> ``-``, trimmed, <= 60 characters.

    Letters and digits of every script are kept (``付款流程`` stays ``付款流程``); on ASCII input
    this is exactly ``[^a-z0-9]+ -> -``. An empty result means the input had no usable name.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    slug = _NON_ALNUM.sub("-", text).strip("-")
    if len(slug) > SLUG_MAX:
        slug = slug[:SLUG_MAX].rstrip("-")
    return slug


def _alnum(text: str) -> str:
    return _NON_ALNUM.sub("", text.lower())


def _trigrams(slug: str) -> set[str]:
    padded = f" {slug} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def slug_sim(a: str, b: str) -> float:
    """SPEC §4 ``slugSim``: similarity of two slugs in [0, 1].

    Both are stripped to letters and digits; empty -> 0; equal -> 1; containment ->
    ``max(0.7, shorter/longer)``; otherwise the greater of the trigram Jaccard (space-padded
    slugs) and the word-set Jaccard (hyphens as spaces).
    """
    sa, sb = _alnum(a), _alnum(b)
    if not sa or not sb:
        return 0.0
    if sa == sb:
        return 1.0
    if sa in sb or sb in sa:
        shorter, longer = sorted((len(sa), len(sb)))
        return max(0.7, shorter / longer)
    la, lb = a.lower(), b.lower()
    tri = _jaccard(_trigrams(la), _trigrams(lb))
    words = _jaccard(set(la.replace("-", " ").split()), set(lb.replace("-", " ").split()))
    return max(tri, words)
