"""Duplicate candidates (docs/design.md §9) and families (docs/design.md §12), found at wiki scale and kept up to date
page by page.

Five signals make a pair a candidate:

* **title**: the same normalised title (case, punctuation and separators folded), or a title
  similarity (rapidfuzz ``ratio`` of the case-folded titles) of at least 0.9;
* **tags**: tag Jaccard >= 0.8 for two pages in the same folder that both have tags, sharing at
  least two tags that are not categories of the folder (see below);
* **slug**: ``slugSim`` >= 0.7 (subset names such as ``project-x`` / ``project-x-notes``);
* **body**: near-identical bodies, shingle Jaccard >= 0.8 on word 5-shingles, found with
  MinHash-LSH and verified exactly, with boilerplate shared by many pages discounted;
* **containment**: at least 60 % of the smaller body's shingles found in the other page (a page
  copying 5 of another's 6 facts under a new title), counting only text on at most
  :data:`CONTAINMENT_MAX_PAGES` pages; blocked by the shingles every page samples alike (one in
  :data:`CONTAINMENT_SAMPLE`) and verified exactly.

No signal compares all pairs. Titles are compared with rapidfuzz's C ``cdist`` inside length
windows (a ratio of 0.9 bounds the length difference); slugs are blocked by exact keys (every
contiguous run of their words, their word set with one or two words left out where that can
still reach the threshold, and every one-character deletion); tags by the rare tags of each folder;
bodies by LSH bands; containment by runs of equal samples in one sorted array. A full scan files
slug keys and bands in sorted key tables (:class:`_KeyTable`: stable hashes, one sort, one join).

**Families** and the answers for one reader (which pairs an agent sees, the keep rule, Health's
count, saving an answer's result for the next process) are :mod:`curator.engine.dedup.families`'s:
this index finds and verifies the pairs.

What must not flood the queue is discounted, not hidden behind a threshold:

* **numbered series** (``meeting-1`` / ``meeting-12``, ``Q3 budget`` / ``Q4 budget``): pages whose
  names differ in their numbers are different pages, so title, slug and tag signals skip them;
* **templates**: body shingles found on more than ``boilerplate_pages`` pages are boilerplate and
  left out of the body comparison; tags used by more than :data:`RARE_TAG_PAGES` pages of a folder
  are categories and do not count as shared evidence; and a page that matches more than :data:`MAX_FANOUT` pages on one name
  signal (a title every template copy shares, a generic slug contained in many others) loses that
  signal, since a true duplicate has one or two twins, not a crowd.

"Not duplicates" decisions live in :data:`DECISIONS_FILE` at the wiki root, a tracked file that is
committed by the ``dismiss`` action, so a dismissed pair (or family, or one member taken out of a
family) never returns for anyone who clones the wiki; entries follow their pages through renames
(:func:`dismissed_pairs`). ``keep`` is the page with more trust, then more inbound links, then
the older one (:meth:`~curator.engine.dedup.families.FamilyAnswers.keep_rank`).

:func:`index_for` keeps one :class:`DedupIndex` per wiki. Its first call answers from the result
a full scan kept for the pages as they are (:mod:`curator.engine.dedup.cache`: pairs, scores and inbound counts
under the page store's state), else scans every page: the bodies are shingled in worker
processes (:data:`PARALLEL_SHINGLES`) while this process computes every page's features, then the
slugs and the bodies are compared (the titles and tags while the workers shingle). Once every page's features are in memory (a scan, or :meth:`DedupIndex.build`), later
calls re-examine only the pages whose (mtime, size) changed since, and what those changes move
for other pages (:meth:`DedupIndex.update`), so every answer is exactly a full scan's. An index
answering from a kept result is built (:meth:`DedupIndex.build`, the station's background work)
apart: the scan fills a new index while the kept result goes on answering, then its state is
taken in one step.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as _dt
import hashlib
import itertools
import json
import marshal
import operator
import os
import posixpath
import re
import threading
import unicodedata
import zlib
from array import array
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, MutableMapping
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from rapidfuzz import fuzz, process

from curator.engine import memory
from curator.engine.corpus import frontmatter, parallel
from curator.engine.corpus.page import Page, decode, link_key, path_key, slug_of
from curator.engine.corpus.slugs import SlugFeatures, similarity, slug_features, slugify
from curator.engine.corpus.store import digest, gc_paused
from curator.engine.corpus.walker import PageFile
from curator.engine.dedup import cache as dedup_cache
from curator.engine.dedup import compact as dedup_compact
from curator.engine.dedup import detached as dedup_detached
from curator.engine.dedup import follow as dedup_follow
from curator.engine.dedup import spill as dedup_spill
from curator.engine.errors import CuratorError
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import (
    ARCHIVE_DIR,
    ActionContext,
    ActionResult,
    Invalid,
    run_action,
    staged_write,
)
from curator.engine.write.decision_files import load_decision_file

TITLE_SIMILARITY = 0.9
TAG_JACCARD = 0.8
SLUG_SIMILARITY = 0.7
BODY_JACCARD = 0.8
SHINGLE_WORDS = 5
#: Fewer discounted shingles than this: too little own text to call two bodies duplicates.
MIN_SHINGLES = 5
#: A page matching more pages than this on one name signal (title, slug, tags) loses that signal.
MAX_FANOUT = 5
#: A tag on more pages of a folder than this is a category, not evidence of sameness; a tag
#: match needs at least MIN_RARE_TAGS shared tags that are not categories.
RARE_TAG_PAGES = 8
MIN_RARE_TAGS = 2
#: Body shingles on more pages than max(this, pages / 2000) are boilerplate.
BOILERPLATE_MIN_PAGES = 8
NUM_PERM = 64
BANDS, ROWS = 16, 4  # P(candidate | J=0.8) = 1 - (1 - 0.8**4)**16 > 0.9997
DECISIONS_FILE = ".curator-decisions.json"
#: Containment (docs/design.md §12): the smaller body has at least this share of its (discounted) shingles
#: in the other page. Blocked by sampled shingles (one in CONTAINMENT_SAMPLE: those whose top bits
#: are zero, the same sample on every page, so shared samples estimate shared text), verified
#: exactly on the whole bodies.
CONTAINMENT = 0.6
CONTAINMENT_SAMPLE = 4
#: A pair is verified when it shares at least this share of the smaller page's samples (and
#: at least CONTAINMENT_MIN_HITS of them); the estimate's spread sits well above it at 0.6.
CONTAINMENT_HITS = 0.3
CONTAINMENT_MIN_HITS = 2
#: Containment counts only text found on at most this many pages: a copy has a few twins, while
#: a passage a dozen pages share (a quoted policy, a template tail) is no evidence of one more.
CONTAINMENT_MAX_PAGES = MAX_FANOUT + 1
SIGNALS: tuple[str, ...] = ("title", "tags", "slug", "body", "containment")
#: Two page names that differ only by look-alike or invisible characters (``pаyments`` with a
#: Cyrillic ``а`` beside ``payments``): found from the names when an answer is made, not scanned.
LOOKALIKE = "lookalike"
#: Every signal an answer may name.
REPORTED_SIGNALS: tuple[str, ...] = (*SIGNALS, LOOKALIKE)
#: Signals that compare the text itself: a pair with one of them joins its pages into a family;
#: a pair with name signals only (title, slug, tags) never does.
CONTENT_SIGNALS: frozenset[str] = frozenset({"body", "containment"})
#: Pages to shingle from which a scan uses worker processes (below, starting them costs more).
PARALLEL_SHINGLES = 1500
#: A kept result (:mod:`curator.engine.dedup.cache`) holds the scores of every two pages of a text family up to
#: this size (a family's survivor, and so the pairs asked about, depend on who looks and on what was
#: dismissed); a bigger one is asked about from a full scan.
KEPT_FAMILY_MAX = 40
#: Up to how many pairs changed since the operator's family count was last made an index follows
#: them to count again over those pairs' families alone (:class:`FollowedCount`); past it, every
#: pair is grouped again.
FOLLOWED_COUNT_MAX = 20_000
#: The per-page signatures file of session 4's design, removed by the first scan that finds it.
OLD_SIGNATURES = "dedup-shingles.npz"
#: What a kept result's answer depends on besides the pages (part of its key).
SETTINGS = (TITLE_SIMILARITY, TAG_JACCARD, SLUG_SIMILARITY, BODY_JACCARD, SHINGLE_WORDS, MIN_SHINGLES,
            MAX_FANOUT, RARE_TAG_PAGES, MIN_RARE_TAGS, BOILERPLATE_MIN_PAGES, NUM_PERM, BANDS, ROWS,
            CONTAINMENT, CONTAINMENT_SAMPLE, CONTAINMENT_HITS, CONTAINMENT_MIN_HITS, CONTAINMENT_MAX_PAGES)

_T = TypeVar("_T")
_R = TypeVar("_R")
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+")
_NON_ALNUM = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")

_SAMPLE_SHIFT = np.uint64(65 - CONTAINMENT_SAMPLE.bit_length())  # 4 -> the top 2 bits zero
_rng = np.random.default_rng(20240531)  # fixed: signatures are comparable across calls
_PERM_A = _rng.integers(1, 2**63, NUM_PERM, dtype=np.uint64) | np.uint64(1)
_PERM_B = _rng.integers(0, 2**63, NUM_PERM, dtype=np.uint64)
_SHINGLE_MULT = _rng.integers(1, 2**63, SHINGLE_WORDS, dtype=np.uint64) | np.uint64(1)
_BAND_MULT = _rng.integers(1, 2**63, ROWS, dtype=np.uint64) | np.uint64(1)


# --- normalisation -------------------------------------------------------------------------

def fold(text: str) -> str:
    """Case, punctuation and separators folded away: ``Project-X Notes!`` -> ``projectxnotes``."""
    return _NON_ALNUM.sub("", _folded(text))


def fold_spaced(text: str) -> str:
    """Case folded, punctuation and separators as single spaces (for similarity ratios)."""
    return " ".join(_NON_ALNUM.sub(" ", _folded(text)).split())


def _folded(text: str) -> str:
    """NFKC, case folded (an ASCII text: lowercased, which is the same)."""
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()


def numbers(text: str) -> tuple[str, ...]:
    """The numbers in a name (leading zeros dropped): a series differs exactly here."""
    return tuple(m.lstrip("0") or "0" for m in _DIGITS.findall(text))


def tokens(text: str) -> list[str]:
    """Words (CJK characters one by one), lowercased."""
    return _TOKEN.findall(text.lower())


def _splitmix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (a bijection of 64-bit values), wrapping."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def _mults(n: int) -> np.ndarray:
    """``n`` odd 64-bit multipliers, the k-th the same for every ``n`` (splitmix64 of k)."""
    with np.errstate(over="ignore"):
        z = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return _splitmix(z) | np.uint64(1)


#: Word ids: a polynomial hash of the word's lowercased UTF-8 bytes (``sum(byte_j * P**j)``,
#: wrapping 64-bit) with its length mixed in, finished by splitmix64: stable across processes
#: (``hash`` of a str is salted per process, so samples, bands and borderline answers would
#: differ from one run to the next), and computed for every word of many texts at once from
#: prefix sums (:func:`_word_ids`), no Python object per word. :func:`word_id` is the definition.
_WORD_P, _WORD_LEN = (int(x) for x in _mults(2).tolist())
_WORD_PINV = pow(_WORD_P, -1, 1 << 64)
_U64 = (1 << 64) - 1
#: Texts shingled in one block of at most this many bytes (a bigger text is a block alone, its
#: words found a block's bytes at a time: :func:`_block_word_ids`). A block's temporaries (8 bytes
#: per byte) stay below the allocator's mmap threshold, so they are reused, not fresh zeroed pages
#: each: blocks of 4 MB spent a third of the shingling in the kernel (blocks of 256 KB and of 1 MB
#: shingle 32,000 pages in the same time).
_WORD_BLOCK = 1 << 18
_powers: list[np.ndarray] = [np.ones(1, dtype=np.uint64), np.ones(1, dtype=np.uint64)]  # P**j, P**-j


def word_id(word: str) -> int:
    """A word's stable 64-bit id (the definition :func:`_word_ids` computes in bulk)."""
    h = 0
    data = word.encode("utf-8", "surrogatepass")
    for j, c in enumerate(data):
        h = (h + c * pow(_WORD_P, j, 1 << 64)) & _U64
    return int(_splitmix(np.array([h ^ ((len(data) * _WORD_LEN) & _U64)], dtype=np.uint64))[0])


def _word_powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``P**j`` and ``P**-j`` (wrapping) for j < at least ``n``."""
    if len(_powers[0]) < n:
        size = max(n, min(2 * len(_powers[0]), _WORD_BLOCK))
        with np.errstate(over="ignore"):
            for i, base in enumerate((_WORD_P, _WORD_PINV)):
                steps = np.full(size, base, dtype=np.uint64)
                steps[0] = 1
                _powers[i] = np.cumprod(steps, dtype=np.uint64)
    return _powers[0], _powers[1]


def _word_ids(data: bytes, ascii_words: bool) -> tuple[np.ndarray, np.ndarray]:
    """(ids, start offsets) of the words of ``data``: with ``ascii_words``, the runs of ASCII
    letters and digits of an ASCII text, lowercased; else the runs of bytes other than spaces
    (lowercased words joined by spaces). A word's hash is ``(S[end] - S[start]) * P**-start``
    over the prefix sums ``S`` of ``byte_j * P**j``."""
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    inword = np.zeros(n + 2, dtype=bool)  # (a byte of no word on either side)
    if ascii_words:  # (bit operations: a table look-up per byte costs 3x more)
        letter = (b | np.uint8(0x20)) - np.uint8(97) < np.uint8(26)
        np.logical_or(letter, b - np.uint8(48) < np.uint8(10), out=inword[1:-1])
        b = b | (letter.view(np.uint8) << np.uint8(5))
    else:
        np.not_equal(b, 32, out=inword[1:-1])
    edges = np.flatnonzero(inword[1:] != inword[:-1])
    starts, ends = edges[0::2], edges[1::2]
    pw, ipw = _word_powers(n)
    with np.errstate(over="ignore"):
        sums = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(b * pw[:n], out=sums[1:])
        h = (sums[ends] - sums[starts]) * ipw[starts]
        h ^= (ends - starts).astype(np.uint64) * np.uint64(_WORD_LEN)
    return _splitmix(h), starts


def _block_word_ids(data: bytes, ascii_words: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_word_ids` of ``data``, a piece of at most :data:`_WORD_BLOCK` bytes at a time, cut
    at a space (no word spans one: the ids are the same). A 2 MB index page shingled whole made
    its worker's power tables and temporaries 8 bytes per byte of it: ~100 MB more in each
    shingling process, kept to its end."""
    if len(data) <= _WORD_BLOCK:
        return _word_ids(data, ascii_words)
    ids: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    at = 0
    while at < len(data):
        end = len(data)
        if at + _WORD_BLOCK < end:
            cut = data.rfind(b" ", at + 1, at + _WORD_BLOCK)
            if cut > at:  # (no space in a whole block: the rest in one piece)
                end = cut
        piece_ids, piece_starts = _word_ids(data[at:end], ascii_words)
        ids.append(piece_ids)
        starts.append(piece_starts + at)
        at = end
    return np.concatenate(ids), np.concatenate(starts)


def _hashes(ids: np.ndarray, k: int) -> np.ndarray:
    """The hash of every run of ``k`` consecutive word ids."""
    n = len(ids) - k + 1
    with np.errstate(over="ignore"):
        h: np.ndarray = ids[0:n] * _SHINGLE_MULT[0]
        for j in range(1, k):
            h = h * np.uint64(31) + ids[j:j + n] * _SHINGLE_MULT[j]
    return h


def _sorted_unique(h: np.ndarray) -> np.ndarray:
    """``h``'s distinct values, sorted (numpy >= 2.3's ``np.unique`` hashes: ~10x slower here)."""
    h = np.sort(h)
    keep = np.empty(len(h), dtype=bool)
    keep[:1] = True
    np.not_equal(h[1:], h[:-1], out=keep[1:])
    return h[keep]


def shingles(text: str) -> np.ndarray:
    """Sorted unique 64-bit hashes of the word 5-shingles of ``text`` (the same in every process;
    a text of fewer words is one shingle of them all)."""
    return shingles_many([text])[0]


def shingles_many(texts: list[str]) -> list[np.ndarray]:
    """:func:`shingles` of each of ``texts``: the words of many texts hashed in one block
    (:func:`_word_ids`: ASCII texts by bit tests on their bytes, the others' words by the regex, joined by
    spaces), every window hashed in one pass (a window never spans two texts), then each text's
    sorted apart."""
    out: list[np.ndarray] = [np.zeros(0, dtype=np.uint64)] * len(texts)
    ascii_texts: list[tuple[int, bytes]] = []
    other: list[tuple[int, bytes]] = []
    for i, text in enumerate(texts):
        if not text.isascii():
            low = text.lower()
            if not low.isascii():
                other.append((i, " ".join(_TOKEN.findall(low)).encode("utf-8", "surrogatepass")))
                continue
            text = low
        ascii_texts.append((i, text.encode("ascii")))
    for group, ascii_words in ((ascii_texts, True), (other, False)):
        start = 0
        while start < len(group):
            stop, size = start + 1, len(group[start][1])
            while stop < len(group) and size + len(group[stop][1]) < _WORD_BLOCK:
                size += len(group[stop][1]) + 1
                stop += 1
            block = group[start:stop]
            ids, starts = _block_word_ids(b" ".join(data for _, data in block), ascii_words)
            offsets = np.cumsum([0, *(len(data) + 1 for _, data in block)])
            counts = np.diff(np.searchsorted(starts, offsets)).tolist()
            for (i, _), sets in zip(block, _shingle_sets(ids, counts), strict=True):
                out[i] = sets
            start = stop
    return out


def _shingle_sets(ids: np.ndarray, counts: list[int]) -> list[np.ndarray]:
    """The shingles of consecutive texts whose word ids are ``ids`` (``counts`` words each)."""
    k = SHINGLE_WORDS
    h = _hashes(ids, k) if len(ids) >= k else ids[:0]
    out: list[np.ndarray] = []
    start = 0
    for n in counts:
        if n >= k:
            out.append(_sorted_unique(h[start:start + n - k + 1]))
        elif n:
            out.append(_hashes(ids[start:start + n], n))  # (one shingle)
        else:
            out.append(np.zeros(0, dtype=np.uint64))
        start += n
    return out


#: Values looked up per block by :func:`_counts_above`.
_COUNT_BLOCK = 1 << 18
#: How many pairs of pages a scan's slug comparison scores at a time (:meth:`DedupIndex._scan_slugs`).
_SLUG_PAIRS = 32768
#: How many pages a scan decodes from their records at a time to make their features (see
#: :meth:`DedupIndex._scan_all`).
_DECODE_CHUNK = 2048
#: From how many pages an update compares their titles with every title at once (one ``cdist``),
#: not page by page.
_TITLES_AT_ONCE = 8


def _threads(fn: Callable[[_T], _R], parts: list[_T]) -> list[_R]:
    """``fn`` of each of ``parts``, in a thread per core when there are several (numpy's sorts,
    look-ups and comparisons let go of the interpreter lock: a scan's counting uses every core)."""
    threads = min(len(parts), parallel.workers(), 4)
    if threads < 2:
        return [fn(p) for p in parts]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, parts))


#: The value ranges the blocks' distinct values are merged in by :func:`_distinct_counts`, one at a time a thread.
_MERGE_RANGES = 16
#: Shingles a scan counts in one block of pages (:func:`_distinct_counts`, :meth:`DedupIndex._count_shingles`).
_DISTINCT_BLOCK = 1 << 21


def _file_place(found: bytes | dedup_spill.Spilled) -> int:
    """Where a page's shingles are in the scan's spill file (-1: in memory, first)."""
    return found.at if isinstance(found, dedup_spill.Spilled) else -1


def _page_groups(sizes: list[int], most: int) -> list[tuple[int, int]]:
    """Consecutive pages (first, past the last) of about ``most`` values each (a page over it alone)."""
    groups: list[tuple[int, int]] = []
    i = 0
    while i < len(sizes):
        j, n = i + 1, sizes[i]
        while j < len(sizes) and n + sizes[j] <= most:
            n += sizes[j]
            j += 1
        groups.append((i, j))
        i = j
    return groups


def _distinct_counts(parts: list[np.ndarray], release: Callable[[], None] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, how often each occurs) of the uint64 values of ``parts`` (every
    page's shingles). A block of pages at a time (:data:`_DISTINCT_BLOCK` values, a thread per
    core) is joined, sorted and reduced to its distinct values and their counts; the blocks' are
    then merged a range of values at a time (their slices in that range joined and sorted, runs
    summed). Every shingle is never joined into one array (114 MB at 32,000 pages, and sorting it
    was the peak of a scan's memory); the blocks' distinct values are 4.1 M of its 14.2 M.
    ``release`` is called after each round of blocks (the pages' memory they read is let go:
    :meth:`~curator.engine.dedup.spill.Spill.release`)."""
    groups = [g for g in _page_groups([len(p) for p in parts], _DISTINCT_BLOCK) if any(len(p) for p in parts[g[0]:g[1]])]

    def table(group: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        values = np.concatenate(parts[group[0]:group[1]])  # (a copy: the pages' own are not sorted)
        values.sort()
        return dedup_follow.summed_runs(values)

    threads = max(1, min(parallel.workers(), 4))
    tables: list[tuple[np.ndarray, np.ndarray]] = []
    for at in range(0, len(groups), threads):  # (a block per thread at a time: their copies bounded)
        tables.extend(_threads(table, groups[at:at + threads]))
        if release is not None:
            release()
    if len(tables) < 2:
        return (tables[0][0], tables[0][1].astype(np.int32)) if tables else \
            (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32))
    widest = max((k for k, _ in tables), key=len)
    cuts = np.unique(widest[(np.arange(1, _MERGE_RANGES) * len(widest)) // _MERGE_RANGES])  # (where each range starts)
    edges = [np.concatenate([[0], np.searchsorted(k, cuts), [len(k)]]) for k, _ in tables]

    def merged(r: int) -> tuple[np.ndarray, np.ndarray]:
        keys = np.concatenate([k[int(e[r]):int(e[r + 1])] for (k, _), e in zip(tables, edges, strict=True)])
        counts = np.concatenate([c[int(e[r]):int(e[r + 1])] for (_, c), e in zip(tables, edges, strict=True)])
        order = np.argsort(keys, kind="stable")  # (sorted runs, one per block: merged in linear time)
        return dedup_follow.summed_runs(keys[order], counts[order])

    # The ranges' answers go into one array as they come, a round of ranges (a thread each) at a
    # time: every range's held and then joined were two more copies of every distinct shingle
    # and its count beside the blocks' (208 MB each at 100,000 pages). The arrays are made as
    # long as all the blocks' distinct values (what the ranges can hold at most), then cut to
    # what they hold.
    total = sum(len(k) for k, _ in tables)
    # (a count of pages in 32 bits: 52 MB less at 100,000 pages)
    keys_out, counts_out = np.empty(total, dtype=np.uint64), np.empty(total, dtype=np.int32)
    filled, ranges, threads = 0, list(range(len(cuts) + 1)), max(1, min(parallel.workers(), 4))
    for at in range(0, len(ranges), threads):
        for k, c in _threads(merged, ranges[at:at + threads]):
            keys_out[filled:filled + len(k)] = k
            counts_out[filled:filled + len(c)] = c
            filled += len(k)
    tables.clear()  # (every block's table let go before the arrays are cut)
    del widest
    keys_out.resize(filled, refcheck=False)  # (in place: the memory past them given back, not copied)
    counts_out.resize(filled, refcheck=False)
    return keys_out, counts_out


def _kept(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``values[keep]``: ``values`` itself when every one is kept."""
    if bool(keep.all()):
        return values
    out: np.ndarray = values[keep]
    return out


#: How far from where the file's size puts a page's old body's end :meth:`DedupIndex._appended_to`
#: looks for a line's end (a frontmatter that grew or shrank by a key).
_APPEND_SLACK = 48


def _line_ends(data: bytes, start: int, end: int) -> list[int]:
    """The places of the newlines of ``data`` from ``start`` to ``end``."""
    found, at = [], data.find(b"\n", max(0, start), max(0, end))
    while at >= 0:
        found.append(at)
        at = data.find(b"\n", at + 1, max(0, end))
    return found


def _listed_chunks(keys: np.ndarray, listed: list[np.ndarray], lengths: np.ndarray) -> list[bytes]:
    """The basis's listed shingles (:attr:`~curator.engine.dedup.follow.Basis.steps`): each
    chunk of :data:`~curator.engine.dedup.follow.CHUNK_PAGES` pages' shingles as their places in
    sorted ``keys``, as steps (:func:`~curator.engine.dedup.follow.deltas`), compressed, made a
    chunk at a time (a thread each: the look-ups and zlib let go of the interpreter). Made whole
    first, the places, their steps and those as bytes were three copies of every page's listed
    shingles at once, the peak of a scan: 150 MB at 100,000 pages."""
    pages = dedup_follow.CHUNK_PAGES

    def chunk(first: int) -> bytes:
        part, sizes = listed[first:first + pages], lengths[first:first + pages]
        rows = np.searchsorted(keys, np.concatenate(part)) if len(keys) and int(sizes.sum()) else \
            np.zeros(int(sizes.sum()), dtype=np.int64)
        return zlib.compress(dedup_follow.deltas(rows, sizes).tobytes(), 1)

    return _threads(chunk, list(range(0, len(listed), pages)))


def _names_of(f: Features, link: tuple[str, ...]) -> dedup_follow.Names:
    """What the basis keeps of a page besides its shingles (:data:`~curator.engine.dedup.follow.Names`),
    ``link``: the keys links reach it by besides its path."""
    return (f.stamp, f.folder, f.title_key, f.title_text, f.title_numbers, f.slug, f.slug_alnum, f.slug_words,
            f.slug_numbers, tuple(sorted(f.tags)), link)


def _title_lengths(n: int) -> tuple[int, int]:
    """The lengths a title similar to one of ``n`` characters can have: a ratio of at least
    TITLE_SIMILARITY means the shorter title is at least 9/11 of the longer (one more each way)."""
    return int(n * 9 / 11) - 1, int(n * 11 / 9) + 1


def _names_chunks(feats: list[Features], link_names: list[tuple[str, ...]]) -> tuple[np.ndarray, list[bytes]]:
    """The basis's :data:`~curator.engine.dedup.follow.Names` of each page (where each starts,
    and the compressed chunks of :data:`~curator.engine.dedup.follow.CHUNK_PAGES` pages): made a
    chunk at a time, not every page's joined first."""
    pages = dedup_follow.CHUNK_PAGES
    at = np.zeros(len(feats) + 1, dtype=np.int64)
    chunks: list[bytes] = []
    for first in range(0, len(feats), pages):
        names = [marshal.dumps(_names_of(f, link))
                 for f, link in zip(feats[first:first + pages], link_names[first:first + pages], strict=True)]
        np.cumsum([len(x) for x in names], out=at[first + 1:first + 1 + len(names)])
        at[first + 1:first + 1 + len(names)] += at[first]
        chunks.append(zlib.compress(b"".join(names), 1))
    return at, chunks


def _slot_table(keys: np.ndarray) -> np.ndarray:
    """An open-addressing table (linear probing from the top bits) of distinct uint64 ``keys``:
    each slot holds the index of a key, or -1; at most one slot in eight is used."""
    bits = max(8, (8 * len(keys)).bit_length())
    mask = (1 << bits) - 1
    slots = np.full(1 << bits, -1, dtype=np.int64)
    at = (keys >> np.uint64(64 - bits)).astype(np.int64)
    pending = np.arange(len(keys), dtype=np.int64)
    while len(pending):
        where = at[pending]
        free = slots[where] < 0
        placed, into = pending[free], where[free]
        slots[into] = placed  # (two keys for one free slot: one of them wins it)
        won = slots[into] == placed
        pending = np.concatenate([pending[~free], placed[~won]])
        at[pending] = (at[pending] + 1) & mask
    return slots


def _find_slots(keys: np.ndarray, slots: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The index in ``keys`` of each of ``values`` (-1 for a value not among them), looked up in
    their :func:`_slot_table` ``slots``."""
    bits = len(slots).bit_length() - 1
    mask = len(slots) - 1
    at = (values >> np.uint64(64 - bits)).astype(np.int64)
    out = np.full(len(values), -1, dtype=np.int64)
    todo: np.ndarray | None = None  # (None: every value, first round)
    while todo is None or len(todo):
        where = at if todo is None else at[todo]
        slot = slots[where]
        used = slot >= 0
        hit = used & (keys[np.maximum(slot, 0)] == (values if todo is None else values[todo]))
        if todo is None:
            out[hit] = slot[hit]
            todo = np.flatnonzero(used & ~hit)
        else:
            out[todo[hit]] = slot[hit]
            todo = todo[used & ~hit]
        at[todo] = (at[todo] + 1) & mask
    return out


def _counts_above(parts: list[np.ndarray], keys: np.ndarray, counts: np.ndarray, limit: int) -> np.ndarray:
    """How often each value of ``parts`` (each page's shingles; the answer is for them one after
    another) occurs (``keys``: the distinct values, sorted; ``counts``: theirs), exact above
    ``limit`` and 1 at or below it (what a discount tells apart): the few values above it looked
    up in a hash table, a block of pages at a time in a thread per core, rather than all of them
    found by sorting. (The pages are never joined into one array: that was a copy of every shingle.)"""
    sizes = [len(p) for p in parts]
    above = counts > limit
    often, times = keys[above], counts[above]
    if not len(often):
        return np.ones(sum(sizes), dtype=np.uint32)
    slots = _slot_table(often)
    out = np.empty(sum(sizes), dtype=np.uint32)  # (a count of pages: half the memory of int64)
    # (where in out, first page, past the last page; small blocks: their temporaries are
    # reused, not fresh pages each)
    starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    blocks = [(starts[i], i, j) for i, j in _page_groups(sizes, _COUNT_BLOCK)]

    def count(block: tuple[int, int, int]) -> None:
        start, first, end = block
        values = parts[first] if end == first + 1 else np.concatenate(parts[first:end])
        if len(values):
            found = _find_slots(often, slots, values)
            out[start:start + len(values)] = np.where(found >= 0, times[np.maximum(found, 0)], 1)

    _threads(count, blocks)
    return out


def minhash(sh: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """MinHash signature (``NUM_PERM`` uint32 values) of a non-empty shingle set."""
    out = np.full(NUM_PERM, np.iinfo(np.uint64).max, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, len(sh), chunk):  # chunks bound memory on a 10 MB page
            part = sh[start:start + chunk]
            hv = (_PERM_A[:, None] * part[None, :] + _PERM_B[:, None]) >> np.uint64(32)
            np.minimum(out, hv.min(axis=1), out=out)
    return out.astype(np.uint32)


def minhash_many(sets: list[np.ndarray], chunk: int = 1 << 13) -> list[np.ndarray]:
    """:func:`minhash` of each of ``sets`` (non-empty), the small ones many at a time: one matrix
    product over about ``chunk`` values and a segmented minimum, not one per page. (Its three
    temporaries are NUM_PERM x ``chunk`` words: 4 MB each at 8,192, which stay in the cache; at
    65,536 they were 33 MB each, a third of the scan's peak above what it holds, and 2.5x slower.)"""
    out: list[np.ndarray] = [np.zeros(0, dtype=np.uint32)] * len(sets)
    sizes = [len(x) for x in sets]
    i = 0
    while i < len(sets):
        if sizes[i] >= chunk:
            out[i] = minhash(sets[i])
            i += 1
            continue
        j, total = i, 0
        while j < len(sets) and sizes[j] < chunk and total + sizes[j] <= chunk:
            total += sizes[j]
            j += 1
        part = np.concatenate(sets[i:j])
        with np.errstate(over="ignore"):
            hv = (_PERM_A[:, None] * part[None, :] + _PERM_B[:, None]) >> np.uint64(32)
        starts = np.zeros(j - i, dtype=np.int64)
        np.cumsum(sizes[i:j - 1], out=starts[1:])
        mins = np.minimum.reduceat(hv, starts, axis=1).T.astype(np.uint32)
        out[i:j] = list(mins)
        i = j
    return out


def band_keys(sig: np.ndarray) -> list[int]:
    rows = sig.reshape(BANDS, ROWS).astype(np.uint64)
    with np.errstate(over="ignore"):
        keys = (rows * _BAND_MULT[None, :]).sum(axis=1, dtype=np.uint64)
    return [int(k) for k in keys]


def band_keys_many(sigs: list[np.ndarray]) -> np.ndarray:
    """:func:`band_keys` of each signature, one row each (one pass over them all)."""
    if not sigs:
        return np.zeros((0, BANDS), dtype=np.uint64)
    rows = np.stack(sigs).reshape(len(sigs), BANDS, ROWS).astype(np.uint64)
    with np.errstate(over="ignore"):
        keys: np.ndarray = (rows * _BAND_MULT[None, None, :]).sum(axis=2, dtype=np.uint64)
    return keys


_KEY_WORDS = 8  # strings up to this many 8-byte words are hashed many at a time
_KEY_MULT = _mults(_KEY_WORDS + 1)


def str_hashes(strings: list[str]) -> np.ndarray:
    """Stable 64-bit hashes of ``strings`` (the same in every process, unlike ``hash``; equal
    strings, equal hashes): the UTF-8 bytes in 8-byte words, zero-padded, each word times its own
    odd multiplier, summed with the length times another. For blocking keys: a collision only
    makes one more candidate, which is verified exactly."""
    raw = [s.encode("utf-8", "surrogatepass") for s in strings]
    out = np.zeros(len(raw), dtype=np.uint64)
    if not raw:
        return out
    lengths = np.fromiter(map(len, raw), dtype=np.uint64, count=len(raw))
    width = 8 * _KEY_WORDS
    short = np.flatnonzero(lengths <= width)
    every = len(short) == len(raw)
    with np.errstate(over="ignore"):
        for start in range(0, len(short), 1 << 17):  # (bounded memory)
            part = short[start:start + (1 << 17)]
            chosen = raw[start:start + (1 << 17)] if every else [raw[i] for i in part.tolist()]
            words = np.array(chosen, dtype=f"S{width}").view(np.uint64).reshape(len(part), _KEY_WORDS)
            out[part] = words @ _KEY_MULT[1:]
        for i in np.flatnonzero(lengths > width).tolist():
            data = raw[i] + bytes(-len(raw[i]) % 8)
            words = np.frombuffer(data, dtype=np.uint64)
            out[i] = (words * _mults(len(words) + 1)[1:]).sum(dtype=np.uint64)
        out += lengths * _KEY_MULT[0]
    return out


class _KeyTable:
    """Pages filed under 64-bit keys, found again by key: the pages of a full scan in two arrays
    sorted by key (keys, owners' slots: one sort, not a set per key), pages placed since in a
    dict of sets, a scanned page forgotten since marked dead."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.uint64)
        self.owners = np.zeros(0, dtype=np.int64)
        self.paths: list[str] = []
        self.slot: Mapping[str, int] = {}
        self.dead = np.zeros(0, dtype=bool)
        self.extra: dict[int, set[str]] = defaultdict(set)
        self.extra_keys: dict[str, list[int]] = {}

    def build(self, paths: list[str], keys: np.ndarray, owners: np.ndarray,
              slot: Mapping[str, int] | None = None, ordered: bool = False) -> None:
        """File ``paths`` (slots) under ``keys`` (``owners``: the slot of each key); ``slot``:
        each path's slot, when known (tables of the same pages share it: it is never changed);
        ``ordered``: the keys are sorted already (a table a basis saved)."""
        if ordered:
            self.keys, self.owners = keys, owners
        else:
            # (pages under one key in any order: every answer is a set; introsort is 2.5x a stable sort)
            order = np.argsort(keys)
            self.keys, self.owners = keys[order], owners[order]
        self.paths = paths
        self.slot = slot if slot is not None else {p: i for i, p in enumerate(paths)}
        self.dead = np.zeros(len(paths), dtype=bool)
        self.extra = defaultdict(set)
        self.extra_keys = {}

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) slots of every two pages of the scan filed under one key (a < b, each pair once)."""
        n = np.int64(max(1, len(self.paths)))
        pairs = _sorted_unique(_run_pairs(self.keys, self.owners, n))
        a, b = pairs // n, pairs % n
        keep = a != b
        return a[keep], b[keep]

    def add(self, path: str, keys: Iterable[int]) -> None:
        filed = self.extra_keys.setdefault(path, [])
        for key in keys:
            self.extra[key].add(path)
            filed.append(key)

    def remove(self, path: str) -> None:
        slot = self.slot.get(path)
        if slot is not None:
            self.dead[slot] = True
        for key in self.extra_keys.pop(path, ()):
            members = self.extra.get(key)
            if members is not None:
                members.discard(path)
                if not members:
                    del self.extra[key]

    def find(self, keys: np.ndarray) -> set[str]:
        """The live pages filed under any of ``keys``."""
        return set(self.hits(keys))

    def hits(self, keys: np.ndarray) -> dict[str, int]:
        """How many of ``keys`` each live page is filed under."""
        out: dict[str, int] = defaultdict(int)
        if len(self.keys) and len(keys):
            lo = np.searchsorted(self.keys, keys, "left")
            counts = np.searchsorted(self.keys, keys, "right") - lo
            total = int(counts.sum())
            if total:  # (every key's run of owners at once: thousands of pages share a common one)
                ends = np.cumsum(counts)
                owners = self.owners[np.arange(total, dtype=np.int64) + np.repeat(lo - (ends - counts), counts)]
                owners = owners[~self.dead[owners]]
                slots, many = np.unique(owners, return_counts=True)
                paths = self.paths
                for slot, n in zip(slots.tolist(), many.tolist(), strict=True):
                    out[paths[slot]] += n
        for key in keys.tolist():
            for path in self.extra.get(key, ()):
                out[path] += 1
        return out

    def meets(self, keys: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(query slot, page slot) for every page of the scan filed under one of the query
        ``keys`` (``owners``: the querying page's slot of each key) whose slot is above the
        query's, each pair once, sorted."""
        if not len(self.keys) or not len(keys):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        ordered = np.argsort(keys)  # (sorted needles: each search starts where the last ended)
        keys, owners = keys[ordered], owners[ordered]
        lo = np.searchsorted(self.keys, keys, "left")
        counts = np.searchsorted(self.keys, keys, "right") - lo
        total = int(counts.sum())
        if not total:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        ends = np.cumsum(counts)
        at = np.arange(total, dtype=np.int64) + np.repeat(lo - (ends - counts), counts)
        n = np.int64(max(1, len(self.paths)))
        a, b = np.repeat(owners.astype(np.int64), counts), self.owners[at]
        above = b > a
        pairs = _sorted_unique(a[above] * n + b[above])
        return pairs // n, pairs % n


def _run_pairs(vals: np.ndarray, owner: np.ndarray, n: np.int64) -> np.ndarray:
    """``min * n + max`` of the owners of every two entries in each run of equal values of the
    sorted ``vals`` (``owner``: each entry's), once per value the two share."""
    starts = np.flatnonzero(np.r_[True, vals[1:] != vals[:-1]])
    lengths = np.diff(np.r_[starts, len(vals)])
    found: list[np.ndarray] = []
    for length in np.unique(lengths[lengths >= 2]).tolist():
        run = starts[lengths == length]
        i, j = np.triu_indices(length, 1)
        a, b = owner[run[:, None] + i[None, :]].ravel(), owner[run[:, None] + j[None, :]].ravel()
        found.append(np.minimum(a, b) * n + np.maximum(a, b))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _sample(body: np.ndarray) -> np.ndarray:
    """The shingles every page samples alike (one in CONTAINMENT_SAMPLE: the top bits zero)."""
    return body[(body >> _SAMPLE_SHIFT) == 0] if len(body) else body


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def common(a: np.ndarray, b: np.ndarray) -> int:
    """How many values two sorted unique arrays share: the smaller looked up in the larger
    (``np.intersect1d`` sorts both again, which costs 20x more next to a 100 KB page)."""
    if len(a) > len(b):
        a, b = b, a
    if not len(a):
        return 0
    idx = np.searchsorted(b, a)
    idx[idx == len(b)] = 0
    return int(np.count_nonzero(b[idx] == a))


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Share of the smaller set found in the other (sorted unique arrays)."""
    if not len(a) or not len(b):
        return 0.0
    return common(a, b) / min(len(a), len(b))


def array_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if not len(a) or not len(b):
        return 0.0
    inter = common(a, b)
    return inter / (len(a) + len(b) - inter)


# --- per-page features ---------------------------------------------------------------------

@dataclass(slots=True)
class Features:
    path: str
    stamp: tuple[int, int]  # (mtime_ns, size) it was computed from
    folder: str
    title_key: str  # fold(title)
    title_text: str  # fold_spaced(title)
    title_numbers: tuple[str, ...]
    slug: str  # the page's link slug (``slugSim`` input)
    slug_alnum: str
    slug_words: tuple[str, ...]
    slug_numbers: tuple[str, ...]
    tags: frozenset[str]
    shingles: np.ndarray  # all body shingles
    body: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))  # minus boilerplate
    rare: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))  # on few pages (containment)
    #: its MinHash band keys: a list, or a full scan's row of them all (an array: as a list, 16
    #: Python ints a page were 75 MB at 100,000 pages)
    bands: list[int] | np.ndarray = field(default_factory=list)
    _slug_feats: SlugFeatures | None = None

    @property
    def slug_feats(self) -> SlugFeatures:
        """``slugSim``'s view of the slug, computed once (a scan compares each slug many times)."""
        sf = self._slug_feats
        if sf is None:
            sf = self._slug_feats = slug_features(self.slug)
        return sf


class BasisFeatures(MutableMapping[str, Features]):
    """Every page's :class:`Features` as a basis holds them (:meth:`DedupIndex._adopt_basis`),
    each made when first asked for: a process that follows one append from the basis of 100,000
    pages asks for those of the changed page and its candidates, not for every page's (making
    them all cost more than the rest of the follow). Pages set since are held as given.

    What only reads a page's features (a pair's scores) borrows them (:meth:`lend`): made from
    the basis, they are not held after, but for the last :data:`LENT_MAX` asked for. The
    families answer after a scan scores the pairs of every family: made and held, every page's
    features came back, 270 MB at 100,000 pages, beside the scan's result."""

    #: How many borrowed features stay made (a families answer scores its pairs in the order of
    #: their pages' paths: a page's pairs come together, and a family's pages are near).
    LENT_MAX = 4096

    def __init__(self, paths: list[str], make: Callable[[int], Features],
                 stamp: Callable[[int], tuple[int, int]], slot: Mapping[str, int] | None = None,
                 stamps: np.ndarray | None = None) -> None:
        self._paths = paths
        self._stamps = stamps  # (int64 (pages, 2): every page's stamp, compared at once)
        self._slot = slot if slot is not None else {p: i for i, p in enumerate(paths)}  # (never changed)
        self._make, self._stamp = make, stamp
        self._own: dict[str, Features] = {}  # made, or set since
        self._lent: OrderedDict[str, Features] = OrderedDict()  # made for reading, the last asked for
        self._gone: set[str] = set()  # basis pages deleted since

    def __getitem__(self, path: str) -> Features:
        f = self._own.get(path)
        if f is None:
            f = self._lent.pop(path, None)  # (held from now on: what the caller changes in it stays)
            if f is None:
                f = self._made(path)
            self._own[path] = f
        return f

    def lend(self, path: str) -> Features:
        """``self[path]`` for reading it only: made from the basis, not held after (but for the
        last :data:`LENT_MAX`)."""
        f = self._own.get(path)
        if f is not None:
            return f
        lent = self._lent
        f = lent.get(path)
        if f is not None:
            lent.move_to_end(path)
            return f
        f = lent[path] = self._made(path)
        if len(lent) > self.LENT_MAX:
            lent.popitem(last=False)
        return f

    def _made(self, path: str) -> Features:
        i = self._slot.get(path)
        if i is None or path in self._gone:
            raise KeyError(path)
        return self._make(i)

    def __setitem__(self, path: str, f: Features) -> None:
        self._own[path] = f
        self._lent.pop(path, None)
        self._gone.discard(path)

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self._own.pop(path, None)
        self._lent.pop(path, None)
        if path in self._slot:
            self._gone.add(path)

    def __contains__(self, path: object) -> bool:
        return path in self._own or (path in self._slot and path not in self._gone)

    def __iter__(self) -> Iterator[str]:
        gone = self._gone
        yield from (p for p in self._paths if p not in gone)  # (the basis's order, as a scan's)
        yield from (p for p in self._own if p not in self._slot)

    def __len__(self) -> int:
        return len(self._slot) - len(self._gone) + sum(p not in self._slot for p in self._own)

    def stamp(self, path: str) -> tuple[int, int] | None:
        """The (mtime_ns, size) the page's features are of (None: no such page), not making them."""
        f = self._own.get(path)
        if f is not None:
            return f.stamp
        i = self._slot.get(path)
        return None if i is None or path in self._gone else self._stamp(i)

    def held(self) -> set[str]:
        """Every page held (a set, made at C speed: the mapping's own keys view checks each page)."""
        held = set(self._slot)
        held.difference_update(self._gone)
        held.update(self._own)
        return held

    def differing(self, pages: Mapping[str, tuple[int, int]], basis: set[str] | None = None,
                  added: set[str] | None = None) -> set[str]:
        """The pages whose features are not of ``pages``' stamps: held and changed or gone from
        ``pages``, and those of ``pages`` not held (one pass over the basis's stamps, not a
        lookup a page; none when ``basis`` says already which basis pages differ from ``pages``
        and ``added`` which of ``pages`` the basis does not hold: what the store's log of changes
        since the basis named, :meth:`DedupIndex._load_basis`)."""
        paths, stamp = self._paths, self._stamp
        if basis is None and self._stamps is not None:
            gone = (-1, -1)
            now = np.fromiter(itertools.chain.from_iterable(map(pages.get, paths, itertools.repeat(gone))),
                              dtype=np.int64, count=2 * len(paths)).reshape(len(paths), 2)
            basis = {paths[i] for i in np.flatnonzero((now != self._stamps).any(axis=1)).tolist()}
        elif basis is None:
            basis = {p for i, (p, now) in enumerate(zip(paths, map(pages.get, paths), strict=True)) if now != stamp(i)}
        if added is None:
            added = pages.keys() - set(paths)
        out = set(basis)
        for p in self._gone:
            out.discard(p)
        for p, f in self._own.items():
            out.discard(p)
            if pages.get(p) != f.stamp:
                out.add(p)
        out.update(p for p in added if p in pages and p not in self._own and p not in self._slot)
        out.update(p for p in self._gone if p in pages)
        return out

    def made(self) -> Iterator[tuple[str, Features]]:
        """The pages whose features were made or set since the basis (the others are the basis's)."""
        return iter(list(self._own.items()))


class _BasisGroups(dict[Any, set[str]]):
    """Pages grouped by a key (a title's, a folder's tag's) as a basis saved them
    (:data:`~curator.engine.dedup.follow.Groups`): a key's group is made, a set of its pages, when
    first asked for, and is then an entry of this dict as any other (changed, emptied, deleted
    as a defaultdict's). Filing every page's title and tags in sets cost 0.3 s of every follow at
    100,000 pages, which asks for the groups of a few pages."""

    #: A group of more pages than this is not made when a page joins or leaves it (:meth:`add`,
    #: :meth:`drop`): the change is noted beside the basis's group, and its size answered from
    #: both (:meth:`size`), until its pages are asked for. A page settled by a follow left and
    #: joined each of its tags' groups, and a folder's category tag made a set of up to 33,000
    #: pages each time (0.03 s of a follow at 100,000 pages, 0.1 s at 300,000).
    LAZY_ABOVE = 64

    def __init__(self, groups: dedup_follow.Groups, paths: list[str]) -> None:
        super().__init__()
        self._keys, self._starts, self._members = groups
        self._paths = paths  # (sorted: a page's slot is its place among them)
        self._asked: set[Any] = set()
        #: key -> page -> whether it is in the group now, for the big groups not made yet
        self._changes: dict[Any, dict[str, bool]] = {}

    def _slice(self, key: Any) -> np.ndarray | None:
        """The basis's group of ``key`` as the pages' slots (sorted), None when it has none."""
        keys = self._keys
        try:
            i = bisect.bisect_left(keys, key)
        except TypeError:  # (a key of another kind: no basis group)
            return None
        if i < len(keys) and keys[i] == key:
            found: np.ndarray = self._members[int(self._starts[i]):int(self._starts[i + 1])]
            return found
        return None

    def _in_basis(self, members: np.ndarray, path: str) -> bool:
        """Whether ``path`` is one of the basis's group ``members``."""
        at = bisect.bisect_left(self._paths, path)
        if at == len(self._paths) or self._paths[at] != path:
            return False
        i = int(np.searchsorted(members, at))
        return i < len(members) and int(members[i]) == at

    def _take(self, key: Any) -> None:
        """The basis's group of ``key`` made an entry (once: later changes are the dict's),
        with the changes noted for it meanwhile."""
        if key in self._asked:
            return
        self._asked.add(key)
        members = self._slice(key)
        paths = self._paths
        made = {paths[j] for j in members.tolist()} if members is not None else set()
        for path, present in self._changes.pop(key, {}).items():
            if present:
                made.add(path)
            else:
                made.discard(path)
        if made:
            dict.__setitem__(self, key, made)

    def _lazy(self, key: Any) -> np.ndarray | None:
        """The basis's group of ``key`` when it stays unmade as a page joins or leaves it."""
        if key in self._asked:
            return None
        members = self._slice(key)
        return members if members is not None and len(members) > self.LAZY_ABOVE else None

    def add(self, key: Any, path: str) -> None:
        """``path`` joins the group of ``key``."""
        if self._lazy(key) is not None:
            self._changes.setdefault(key, {})[path] = True
        else:
            self[key].add(path)

    def drop(self, key: Any, path: str) -> None:
        """``path`` leaves the group of ``key`` (the key goes with its last page)."""
        if self._lazy(key) is not None:
            self._changes.setdefault(key, {})[path] = False
        else:
            _discard(self, key, path)

    def size(self, key: Any) -> int:
        """How many pages the group of ``key`` holds (0: none), without making a big one."""
        members = self._lazy(key)
        if members is None:
            self._take(key)
            return len(dict.get(self, key, ()))
        size = len(members)
        for path, present in self._changes.get(key, {}).items():
            size += present - self._in_basis(members, path)
        return size

    def _every(self) -> None:
        for key in self._keys:
            self._take(key)

    def __missing__(self, key: Any) -> set[str]:
        self._take(key)
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        made: set[str] = set()
        dict.__setitem__(self, key, made)
        return made

    def get(self, key: Any, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._take(key)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        if not dict.__contains__(self, key):
            self._take(key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[Any]:
        self._every()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._every()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._every()
        return dict.keys(self)

    def values(self) -> Any:
        self._every()
        return dict.values(self)

    def items(self) -> Any:
        self._every()
        return dict.items(self)


class _BySlot(Mapping[str, int]):
    """A basis array's value of each page by its path, read from the array by the page's slot
    when asked for (a page's shingle digest, :func:`~curator.engine.dedup.follow.digest_of`; its
    inbound count): no dict of every page is made."""

    def __init__(self, slot: Mapping[str, int], values: np.ndarray,
                 frame: dedup_cache.InboundFrame | None = None) -> None:
        self._slot, self._values = slot, values
        #: Inbound counts followed from a basis: that basis's id and the counts that differ from
        #: its own (what a saved families answer compares, :func:`~curator.engine.dedup.cache.inbound_moved_between`).
        self.frame = frame

    def __getitem__(self, path: str) -> int:
        return int(self._values[self._slot[path]])

    def get(self, path: str, default: int | None = None) -> int | None:  # type: ignore[override]
        """(one look-up of the slot, not Mapping's ``in`` then ``[]``)"""
        i = self._slot.get(path)
        return default if i is None else int(self._values[i])

    def __contains__(self, path: object) -> bool:
        return path in self._slot

    def __iter__(self) -> Iterator[str]:
        return iter(self._slot)

    def __len__(self) -> int:
        return len(self._slot)


class _Slots(MutableMapping[str, int]):
    """The title slots of a basis's pages (sorted, found by bisection) with those changed since."""

    def __init__(self, base: Mapping[str, int]) -> None:
        self._base = base
        self._set: dict[str, int] = {}
        self._gone: set[str] = set()

    def __getitem__(self, path: str) -> int:
        found = self._set.get(path)
        if found is not None:
            return found
        if path in self._gone:
            raise KeyError(path)
        return self._base[path]

    def __setitem__(self, path: str, slot: int) -> None:
        self._set[path] = slot
        self._gone.discard(path)

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self._set.pop(path, None)
        if path in self._base:
            self._gone.add(path)

    def __contains__(self, path: object) -> bool:
        return path in self._set or (path not in self._gone and path in self._base)

    def __iter__(self) -> Iterator[str]:
        yield from (p for p in self._base if p not in self._gone and p not in self._set)
        yield from self._set

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _join(table: dict[Any, set[str]], key: Any, path: str) -> None:
    """Put ``path`` in ``table[key]`` (a basis's group: see :meth:`_BasisGroups.add`)."""
    if isinstance(table, _BasisGroups):
        table.add(key, path)
    else:
        table[key].add(path)


def _size(table: dict[Any, set[str]], key: Any) -> int:
    """How many pages ``table[key]`` holds, without making a basis's big group."""
    return table.size(key) if isinstance(table, _BasisGroups) else len(table.get(key, ()))


def _drop(table: dict[Any, set[str]], key: Any, path: str) -> None:
    """Take ``path`` out of ``table[key]`` (a basis's group: see :meth:`_BasisGroups.drop`)."""
    if isinstance(table, _BasisGroups):
        table.drop(key, path)
    else:
        _discard(table, key, path)


def _discard(table: dict[Any, set[str]], key: Any, path: str) -> None:
    """Take ``path`` out of the set ``table[key]`` (the key goes with its last page)."""
    members = table.get(key)
    if members is not None:
        members.discard(path)
        if not members:
            del table[key]


def page_features(page: Page, body_text: str) -> Features:
    return features_of(page, shingles(body_text))


def features_of(page: Page, body_shingles: np.ndarray) -> Features:
    """A page's features, its body already shingled (:func:`shingles`)."""
    path, title, slug = page.path, page.title, page.slug
    stem, words = _slug_words(path)
    return Features(
        path=path, stamp=(page.mtime_ns, page.size), folder=posixpath.dirname(path),
        title_key=fold(title), title_text=fold_spaced(title), title_numbers=numbers(title),
        slug=slug, slug_alnum="".join(words), slug_words=words, slug_numbers=numbers(stem),
        tags=frozenset(t.casefold() for t in page.tags), shingles=body_shingles,
    )


def _slug_words(path: str) -> tuple[str, tuple[str, ...]]:
    """(stem, the words of its slug) of the page at ``path``: what every slug signal reads."""
    stem = posixpath.splitext(path.rpartition("/")[2])[0]  # (Page.stem)
    return stem, tuple(w for w in slugify(stem).split("-") if w)


def read_body(root: Path | str, path: str) -> str:
    """A page's body as the dedup signals read it (frontmatter left out; "" when unreadable)."""
    return body_of(read_bytes(root, path))


def read_bytes(root: Path | str, path: str) -> bytes:
    """A page's bytes (b"" when unreadable)."""
    try:
        return Path(root, path).read_bytes()
    except OSError:
        return b""


def body_of(data: bytes) -> str:
    """The body of a page's bytes as the dedup signals read it (frontmatter left out)."""
    return frontmatter.split(decode(data).text).body


#: What :func:`shingle_files` answers per page: path, its body's shingles, the digest of the bytes
#: read (a racy page's, else b""), its slug table entries and queries (:func:`_slug_keys`), as bytes.
Shingled = tuple[str, bytes, bytes, bytes, bytes]


def shingle_files(root: str, files: list[PageFile], racy: frozenset[str] = frozenset()) -> list[Shingled]:
    """A :data:`Shingled` for each of ``files``: the bulk of a first scan, run in worker processes
    (:func:`~curator.engine.corpus.parallel.map_chunks`) while the scanning process compares titles. The slug keys
    need only the paths: computed here, they are off that process too."""
    with gc_paused():  # (millions of word ids, none cyclic: the collector doubled the time)
        read = [read_bytes(root, f.path) for f in files]
        made = shingle_texts([f.path for f in files], [body_of(data) for data in read])
        return [(f.path, sh, digest(data) if f.path in racy else b"", entries, queries)
                for f, data, (sh, entries, queries) in zip(files, read, made, strict=True)]


#: What :func:`shingle_texts` answers per page: its body's shingles, its slug table entries and
#: queries (:func:`_slug_keys`), as bytes.
Shingles = tuple[bytes, bytes, bytes]


def shingle_texts(paths: list[str], bodies: list[str]) -> list[Shingles]:
    """A :data:`Shingles` for each page (``paths``) of ``bodies``: what a scan needs of a page's
    text, made by :func:`shingle_files` or, during a bulk parse, in the parse workers (the page
    store's :attr:`~curator.engine.corpus.store.PageStore.byproduct`: the text is in hand there)."""
    with gc_paused():
        sets = shingles_many(bodies)
        entries, queries, owners = _slug_keys([_slug_words(p)[1] for p in paths])
        order = np.argsort(owners, kind="stable")
        entries, queries = entries[order], queries[order]
        cut = np.searchsorted(owners[order], np.arange(len(paths) + 1)).tolist()
        return [(sh.tobytes(), entries[cut[i]:cut[i + 1]].tobytes(), queries[cut[i]:cut[i + 1]].tobytes())
                for i, sh in enumerate(sets)]


def _runs(words: tuple[str, ...]) -> set[str]:
    """Every contiguous run of words, joined (runs of up to 12 words)."""
    n = len(words)
    return {"".join(words[i:j]) for i in range(n) for j in range(i + 1, min(n, i + 12) + 1)}


def _symmetric_keys(words: tuple[str, ...]) -> set[str]:
    """Keys two near-equal slugs share: word sets with words left out, one-character deletions."""
    keys: set[str] = set()
    uniq = sorted(set(words))
    if uniq:
        keys.add("w:" + " ".join(uniq))
    if len(uniq) <= 10:
        # d words left out only where |rest| / (|rest| + d) >= 0.7 can still hold
        for d in (1, 2):
            if len(uniq) - d >= 2.34 * d:
                for rest in itertools.combinations(uniq, len(uniq) - d):
                    keys.add("w:" + " ".join(rest))
    s = "".join(words)
    if 4 <= len(s) <= 64:  # one-character edits: plurals, typos, hyphenation
        keys.add("d:" + s)
        for i in range(len(s)):
            keys.add("d:" + s[:i] + s[i + 1:])
    return keys


#: What tells the three kinds of slug key apart (their hashes XORed with these).
_SLUG_WHOLE, _SLUG_RUN, _SLUG_SYMMETRIC = (np.uint64(x) for x in _mults(3).tolist())


def _slug_keys(slugs: list[tuple[str, ...]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entries, queries, owners): the hashed keys each page is filed under in the slug table,
    the keys that find every page whose slug may reach slugSim >= 0.7 with its own, and the
    index in ``slugs`` (each page's slug words, :attr:`Features.slug_words`) of the page of each
    key (entries and queries alike).

    A shorter slug finds the longer ones it is a word run of (its whole slug looked up among
    their runs), a longer one the shorter ones that are its runs (its runs looked up among whole
    slugs), near-equal ones meet on a shared symmetric key (:func:`_symmetric_keys`). Every
    string is hashed once (:func:`str_hashes`); the kind of key is XORed in.
    """
    whole: list[str] = []
    runs: list[str] = []
    sym: list[str] = []
    owners: list[int] = []
    run_counts: list[int] = []
    sym_counts: list[int] = []
    for i, words in enumerate(slugs):
        if not words:
            continue
        whole.append("".join(words))
        owners.append(i)
        r, k = _runs(words), _symmetric_keys(words)
        runs.extend(r)
        sym.extend(k)
        run_counts.append(len(r))
        sym_counts.append(len(k))
    at = np.array(owners, dtype=np.int64)
    hw, hr, hs = str_hashes(whole), str_hashes(runs), str_hashes(sym)
    entries = np.concatenate([hw ^ _SLUG_WHOLE, hr ^ _SLUG_RUN, hs ^ _SLUG_SYMMETRIC])
    queries = np.concatenate([hw ^ _SLUG_RUN, hr ^ _SLUG_WHOLE, hs ^ _SLUG_SYMMETRIC])
    return entries, queries, np.concatenate([at, np.repeat(at, run_counts), np.repeat(at, sym_counts)])


def _inbound_sources(links: Any, paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``paths`` (every page), the distinct other pages linking to it as slots in
    ``paths`` (:func:`_grouped_sources`), from the link index ``links``."""
    slot = {p: i for i, p in enumerate(paths)}
    pairs = array("q")
    for target, p in enumerate(paths):
        for e in links.incoming.get(p, ()):
            source = slot.get(e.source)
            if source is not None and e.source != p:
                pairs.append(target << 32 | source)
    return _grouped_sources(pairs, len(paths))


def _grouped_sources(pairs: array[int] | np.ndarray, pages: int) -> tuple[np.ndarray, np.ndarray]:
    """(how many distinct pages link to each of ``pages`` slots, those linking pages' slots one
    linked page after another, ascending), int32, from ``pairs``: linked slot << 32 | linking slot."""
    every = np.frombuffer(pairs, dtype=np.int64) if isinstance(pairs, array) else pairs
    linked = np.unique(every)  # (distinct, by linked page then linking page)
    lengths = np.bincount(linked >> 32, minlength=pages).astype(np.int32)
    return lengths, (linked & 0xFFFFFFFF).astype(np.int32)


def _pages_in_chunks(store: Any, paths: list[str]) -> Iterator[tuple[str, Page]]:
    """Each of ``paths`` that is a page, with its page, in order: decoded from their records
    :data:`_DECODE_CHUNK` pages at a time, none kept (what a scan makes of them is all it holds)."""
    for start in range(0, len(paths), _DECODE_CHUNK):
        chunk = paths[start:start + _DECODE_CHUNK]
        found = store.pages_at(chunk)
        for path in chunk:
            page = found.get(path)
            if page is not None:
                yield path, page


def _link_names(page: Page | None) -> tuple[str, ...]:
    """The keys links reach ``page`` by besides its path: its title's and its aliases'."""
    if page is None:
        return ()
    return tuple(sorted({k for k in (link_key(page.title), *(link_key(a) for a in page.aliases)) if k}))


def read_basis(state_dir: Path, saved: bytes) -> dedup_follow.Basis | None:
    """The basis file in ``state_dir``, when it reads back as the basis ``saved`` names (its id,
    then the stamp of the file as written, if known: see :attr:`StagedBasis.saved`); None:
    missing, damaged, or another scan's. A file whose stamp is the one saved is the file as
    written: its tables are not all read through again to be checked."""
    basis_id, stamp = saved[:16], saved[16:]
    try:
        blob, found = dedup_follow.read_stamped(state_dir / dedup_follow.FILE)
    except (OSError, ValueError):
        return None
    basis = dedup_follow.decode(blob, dedup_follow.key_of(SETTINGS), as_written=bool(stamp) and found == stamp)
    return basis if basis is not None and basis.id == basis_id else None


def _links_as_at_basis(store: Any, basis: dedup_follow.Basis, slot: Mapping[str, int], stale: Iterable[str],
                       count: int, present: Container[str]) -> bool:
    """Whether every link resolves now as it did at ``basis`` (what following inbound counts from
    it needs): the basis counted linking pages, no page came or went since (``count`` pages now,
    ``stale`` every page changed since, those of them that are pages ``present``), no changed
    page's title or aliases moved (a link elsewhere may name it now, or no longer), and the
    attachment files are the same. :class:`~curator.engine.dedup.follow.DamagedBasis` when a
    changed page's names there do not decode."""
    if (not len(basis.source_counts) or count != len(basis.paths)
            or basis.attachments != store.attachments_key()):
        return False
    for path in stale:
        i = slot.get(path)
        page = store.page(path) if path in present else None
        if i is None or page is None or _link_names(page) != tuple(basis.names_of(i)[10]):
            return False
    return True


#: How many times :func:`followed_inbound` reads the pages, the store's log and the basis again
#: when the store's state moved meanwhile or the basis file is not the one named, before it gives up.
STATE_READS = 5


def followed_inbound(wiki: Wiki) -> tuple[bytes, dict[str, int]] | None:
    """Every page's inbound link count (pages no other page links to left out), as the link
    index counts them, followed from the duplicate scan's basis and the pages changed since
    (:func:`~curator.engine.dedup.follow.inbound_followed`), and the store's state they are
    counted at. The link index is not built: a few milliseconds a changed page, where building
    it decodes every page (0.8 s and 200 MB at 32,000 pages, 1.5 GB at 300,000) in a process
    that keeps it. A page added, removed or renamed since makes the pages linking by its names
    counted again too. None when they cannot be followed exactly: no basis, more changed pages
    than a follow takes (:func:`~curator.engine.dedup.follow.follow_max`), other attachment
    files (a link may name one now), or a store whose name tables do not hold every page."""
    store = wiki.store
    if not store.loaded:
        store.refresh()
    # The pages, the log and the basis of one state: a refresh on another thread meanwhile (the
    # station's writer, an agent's append just seen), and a page added then would be counted as
    # none; a new basis published by another process (a compaction) since its id was read, and
    # the file is another. Read again then. The pages' links read after may be of a later state,
    # whose change then counts again, and under whose state these counts are not kept.
    for _ in range(STATE_READS):
        state = store.state
        count = store.count()
        found = store.derived_since(dedup_follow.NAME) if state is not None else None
        if state is None or found is None:
            return None
        present = store.known(found[1])  # (not every page's stamp: the station holds none of them)
        if store.state != state:
            continue
        basis = read_basis(wiki.state_dir, found[0])
        if basis is not None:
            break
    else:
        return None
    try:
        slot = basis.slots()
        stale = {p for p in found[1] if p in slot or p in present}
        most = dedup_follow.follow_max(len(basis.paths))
        if len(stale) > most or not len(basis.source_counts) or basis.attachments != store.attachments_key():
            return None
        # A page that came or went since the basis, or whose title or aliases moved, may be what
        # other pages' links resolve to now, or no longer: the pages linking by any of its names
        # (the cache's name tables: its title, aliases, file name, path) are counted as they are
        # now too, every other page's links resolving as at the basis.
        came = {p for p in stale if p not in slot}
        went = {p for p in stale if p not in present}
        moved: set[str] = set()
        for path in sorted(stale):
            i = slot.get(path)
            page = store.page(path) if path in present else None
            before = set(basis.names_of(i)[10]) if i is not None else None
            now = set(_link_names(page)) if page is not None else None
            if before != now:
                moved |= (before or set()) | (now or set()) | {slug_of(path), path_key(path).rpartition("/")[2]}
        if count != len(basis.paths) + len(came) - len(went):
            return None  # (a page changed that the log does not name: never expected)
        if moved:
            if not store.partial_reads:
                return None  # (the name tables do not hold every page)
            stale |= set(store.pages_linking(moved))
            if len(stale) > most:
                return None
        counts, others = dedup_follow.inbound_followed(basis, slot, stale, wiki.links_out)
        found_counts = {path: n for path, n in zip(basis.paths, counts.tolist(), strict=True) if n and path not in went}
        found_counts.update((path, n) for path, n in others.items() if n)
        return state, found_counts
    except dedup_follow.DamagedBasis:
        return None
    finally:
        basis.release()


# --- decisions --------------------------------------------------------------------------------

def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def load_decisions(wiki: Wiki) -> dict[str, Any]:
    """The decisions file (``{"version": 1, "not_duplicates": [...]}``); empty when absent."""
    return load_decision_file(wiki, DECISIONS_FILE, "not_duplicates")


def _follower(wiki: Wiki) -> Callable[[str], str]:
    """Where a page recorded in a decision is now: the same path while it is there; after a
    rename or move, the one page that keeps its old name (``move`` adds the old slug as an alias;
    a move to another folder keeps the stem); a merged or archived page (its ``_archive/`` copy
    exists) has gone and is not followed."""
    present = wiki.store.stamps()  # (decodes nothing: every page is only decoded for a moved one)
    names: dict[str, set[str]] | None = None

    def follow(path: str) -> str:
        nonlocal names
        if path in present or (wiki.root / ARCHIVE_DIR / path).exists():
            return path
        if names is None:
            names = defaultdict(set)
            for page in wiki.pages.values():
                for alias in page.aliases:
                    names["a:" + link_key(alias)].add(page.path)
                names["s:" + page.slug].add(page.path)
        stem = link_key(posixpath.splitext(posixpath.basename(path))[0])
        found = names.get("a:" + stem) or names.get("s:" + stem) or set()
        return next(iter(found)) if len(found) == 1 else path

    return follow


def dismissed_pairs(wiki: Wiki) -> set[tuple[str, str]]:
    """Every pair of pages (as they are named now) recorded as not duplicates.

    An entry ``{"pages": [...]}`` says no two of its pages are duplicates (a pair, or a whole
    family); with ``"member": P`` it says only that ``P`` is a duplicate of none of the others.
    Entries name pages by path at the time of the decision and follow them through renames and
    moves (:func:`_follower`), so a dismissed family stays dismissed whoever moves its pages; the
    file itself never needs rewriting (it is operator-only, and an agent may move pages)."""
    out: set[tuple[str, str]] = set()
    follow: Callable[[str], str] | None = None
    for entry in load_decisions(wiki)["not_duplicates"]:
        pages = entry.get("pages") if isinstance(entry, dict) else None
        if not (isinstance(pages, list) and len(pages) >= 2 and all(isinstance(p, str) for p in pages)):
            continue
        follow = follow or _follower(wiki)
        now = [follow(p) for p in pages]
        member = entry.get("member")
        if isinstance(member, str) and member in pages:
            m = follow(member)
            out.update(pair_key(m, p) for p in now if p != m)
        else:
            out.update(pair_key(a, b) for a, b in itertools.combinations(now, 2) if a != b)
    return out


def render_decisions(data: dict[str, Any]) -> str:
    """The file's text: one entry per line-block, sorted, so git diffs and merges stay small."""
    entries = sorted(data["not_duplicates"], key=lambda e: tuple(e.get("pages", ())))
    return json.dumps({**data, "not_duplicates": entries}, ensure_ascii=False, indent=2) + "\n"


# --- candidates ---------------------------------------------------------------------------------

def signal_words(signals: Iterable[str], scores: dict[str, float]) -> str:
    """The signals that fired, as a person reads them (``same title; near-identical text (…)``)."""
    words = {"title": "same title" if scores.get("title") == 1.0
             else f"similar titles ({scores.get('title', 0.0):.2f})",
             "tags": f"same folder and tags (Jaccard {scores.get('tags', 0.0):.2f})",
             "slug": f"similar names (slugSim {scores.get('slug', 0.0):.2f})",
             "body": f"near-identical text (Jaccard {scores.get('body', 0.0):.2f})",
             "containment": f"text contained in the other ({scores.get('containment', 0.0):.0%})",
             LOOKALIKE: "look-alike names (one reads as the other)"}
    return "; ".join(words[s] for s in signals)

@dataclass(slots=True)
class Candidate:
    keep: str
    merge: str
    signals: list[str]
    scores: dict[str, float]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "merge": self.merge, "reason": self.reason, "scores": self.scores,
                "signals": self.signals}


@dataclass(slots=True)
class Family:
    """Pages that are duplicates of one another, reviewed once: ``keep`` stays, the rest merge."""

    pages: list[str]  # keep first, then the others in the keep rule's order
    keep: str
    reason: str
    scores: dict[str, float]  # the best score of each signal that fired inside the family
    signals: list[str]
    strength: str  # "content" (joined by their text) | "names" (a pair with name signals only)
    impact: float  # sum over the pages of (1 + inbound links) x (0.5 + trust): what ranks families
    members: list[dict[str, Any]]  # per page: path, title, trust, inbound, keep, and vs keep: signals, scores
    edges: list[dict[str, Any]]  # the pairs that joined them: {pages, signals}

    @property
    def merges(self) -> list[str]:
        return self.pages[1:]

    @property
    def id(self) -> str:
        """A short key naming this set of pages (stable while its members are)."""
        return hashlib.sha1("\n".join(sorted(self.pages)).encode("utf-8")).hexdigest()[:12]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "pages": self.pages, "keep": self.keep, "reason": self.reason,
                "scores": self.scores, "signals": self.signals, "strength": self.strength,
                "impact": self.impact, "members": self.members, "edges": self.edges}


@dataclass(slots=True)
class _Shingling:
    """Bodies being shingled for a scan (:meth:`DedupIndex._start_shingles`)."""

    root: str
    order: list[str]
    files: list[PageFile]  # the pages to shingle (those the bulk parse did not)
    racy: dict[str, bytes]  # the store's digests of the pages its racy-stamp guard checks
    chunks: Iterator[list[Shingled]] | None  # the workers' results; None: here
    done: dict[str, tuple[bytes | dedup_spill.Spilled, bytes, bytes]]  # the store's bulk parse's (its by-products)
    #: the workers' results as taken (:meth:`DedupIndex._take_chunks`): each page's shingles (or
    #: where the spill has them) and slug keys, whether every racy page read as the store's, and
    #: what stopped the taking
    out: dict[str, bytes | dedup_spill.Spilled] = field(default_factory=dict)
    keys: dict[str, tuple[bytes, bytes]] = field(default_factory=dict)
    same: bool = True
    failed: BaseException | None = None
    taking: threading.Thread | None = None  # (taking them into the spill while the titles are compared)


class ScanStopped(CuratorError):
    """A scan was abandoned (:meth:`DedupIndex.stop`)."""


class NeedScan(Exception):
    """A kept result cannot answer this (the scores of two pages of a big family): scan."""


@dataclass(slots=True)
class Carried:
    """What a result kept since the basis said that still holds while no pair has changed since
    it (:attr:`DedupIndex.carried`): then the families are the same, so the operator's count is
    too, and so are the pairs a kept result asks scores for; only their scores and inbound counts
    may differ for the pages changed since."""

    count: tuple[bytes, int, int]  # :attr:`dedup_cache.Kept.count`
    scored: Mapping[tuple[str, str], dict[str, float]]  # every pair it held the scores of
    changed_scored: frozenset[tuple[str, str]]  # those its own changes to the base held
    inbound: Mapping[str, int]  # the pages it held the inbound count of
    #: The pages with a pair changed since it (by updates that found other pairs for the pages
    #: they re-examined): their families may differ from its families, and its count with them;
    #: every other family is its own (see FamilyAnswers._keep_carried).
    touched: frozenset[str] = frozenset()


@dataclass(slots=True)
class FollowedCount:
    """The operator's family count of this index's pairs as they were once (:attr:`dedup_cache.Kept.count`:
    the digest of the dismissed pairs it left out, content families, name-only families), and
    each pair (signal, a, b) verified or forgotten since, with whether it was there then
    (:attr:`DedupIndex.followed_count`). A family holding none of those pairs' pages is the same
    family now, so the count now is that one plus what the families those pages are in became:
    counted over them alone (:meth:`~curator.engine.dedup.families.FamilyAnswers.count`), where
    grouping every pair cost 2.7 s of a ``health`` at 300,000 pages."""

    count: tuple[bytes, int, int]
    was: dict[tuple[str, str, str], bool]


@dataclass(slots=True)
class StagedBasis:
    """A new basis written beside the page cache but not yet named there (:meth:`DedupIndex.compact_basis`):
    named, and its file moved into place, in the one transaction that keeps the result naming it
    (:meth:`DedupIndex.publish_staged`), or dropped."""

    id: bytes
    #: What the cache names it by: its id, then the stamp of its file.
    saved: bytes
    #: The file as written, moved into place as the cache names it.
    path: str
    #: The store state it was made for.
    token: bytes
    #: How many pages had changed since the basis it was made from.
    since: int = 0


@dataclass(slots=True)
class PairEdits:
    """The pairs (signal, a, b) verified or forgotten since this index's pairs were those named
    ``since`` (a kept result's :func:`~curator.engine.dedup.cache.kept_digest`), with whether
    each was there then (:attr:`DedupIndex.pair_edits`): an operator's families answer saved
    for the pairs named ``since`` is patched with them (only the families those pairs' pages
    are in, then and now, are built again), not grouped again from every pair."""

    since: bytes
    was: dict[tuple[str, str, str], bool]


def note_edits(was: dict[tuple[str, str, str], bool], before: set[tuple[str, str, str]],
               after: set[tuple[str, str, str]]) -> None:
    """Note in ``was`` the pairs that changed from ``before`` to ``after`` (every pair of the
    pages an update re-examined), with whether each was there before the first change noted; a
    pair back as it was is no change."""
    for pair in before ^ after:
        if was.setdefault(pair, pair in before) == (pair in after):
            del was[pair]


#: What a :class:`DedupIndex` keeps of its own when it takes another's scanned state (:meth:`DedupIndex._adopt`).
_OWN = frozenset({"wiki", "_lock", "niceness", "_stop", "_building"})


class DedupIndex:
    """Per-page features and the verified pairs of every signal, updated page by page."""

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self._lock = threading.RLock()
        #: The CPU priority drop of the worker processes a scan starts (see :func:`index_for`).
        self.niceness = 0
        self._stop = threading.Event()  # see stop()
        self._building: threading.Event | None = None  # set once the build in progress is done
        #: Where the next scan's every-page shingles are written as they arrive (None: in memory):
        #: opened by the load whose bulk parse shingles the pages, or by the scan (see scan)
        self._spill: dedup_spill.Spill | None = None
        #: the scan's pages (their places in its order) in the order the spill has them (see _count_shingles)
        self._spill_order: list[int] | None = None
        #: each page's link names (title, aliases) as a lean scan read them, for its basis (see _scan_all)
        self._scan_names: list[tuple[str, ...]] | None = None
        #: the bytes _appended_to read of a page, for the update under way to take (one read a
        #: page); emptied as each update starts
        self._read_now: dict[str, bytes] = {}
        #: Where set (the station's dedup worker, :mod:`curator.engine.dedup.worker`): runs a first
        #: scan in a process of its own, which keeps its result and basis for these pages, and says
        #: whether it did. A long-lived process then loads them as a warm one does, and the
        #: scan's peak leaves with that process (kept in here, it held the worker at 620 MB after
        #: a cold open of 32,000 pages, where loading the result holds 210 MB).
        #: (Handed the event :meth:`stop` sets: a scan apart stops when it is set.)
        self.scan_apart: Callable[[threading.Event], bool] | None = None
        self._reset()

    def _reset(self) -> None:
        self.features: MutableMapping[str, Features] = {}
        #: signal -> pair -> score (pairs are sorted path tuples)
        self.pairs: dict[str, dict[tuple[str, str], float]] = {s: {} for s in SIGNALS}
        self.partners: dict[str, dict[str, set[str]]] = {s: defaultdict(set) for s in SIGNALS}
        #: A kept result's pairs not filed in :attr:`pairs` and :attr:`partners` yet (loaded from a
        #: basis: :meth:`file_pairs` files a page's as a follow re-examines it, :meth:`file_all`
        #: every one when an answer asks for them all); None: every pair is filed.
        self._unfiled: dedup_cache.PairTable | None = None
        self._title_groups: dict[str, set[str]] = defaultdict(set)
        self._slugs = _KeyTable()  # by the entries of _slug_keys
        self._scan_queries: tuple[np.ndarray, np.ndarray] | None = None  # (a scan's, till _scan_slugs)
        self._tag_index: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._bands = [_KeyTable() for _ in range(BANDS)]
        self._shingle_keys = np.zeros(0, dtype=np.uint64)
        self._shingle_counts: np.ndarray | dedup_follow.FollowedCounts = np.zeros(0, dtype=np.int64)
        self._extra_counts: dict[int, int] = defaultdict(int)  # shingles not in _shingle_keys: their counts
        self._extra_sorted: tuple[np.ndarray, np.ndarray] | None = None  # (those as arrays, made when read)
        self._titles: list[str] = []  # title_text by slot, "" for a free slot
        self._title_len: list[int] = []
        #: every slot's title length as an array (-1: a free slot), made again after titles
        #: changed (None): once an update, not for each page it examines
        self._lengths: np.ndarray | None = None
        self._title_slot: MutableMapping[str, int] = {}
        self._title_paths: list[str] = []  # the page of each slot, "" for a free one
        self.boilerplate_pages = BOILERPLATE_MIN_PAGES
        # containment blocking: every page's sampled body shingles (:func:`_sample`)
        self._samples = _KeyTable()
        #: scores of the pairs asked for (families ask again and again), per page of the pair
        self._scores: MutableMapping[tuple[str, str], dict[str, float]] = {}
        self._scored: dict[str, set[tuple[str, str]]] = defaultdict(set)
        #: the scores a followed kept result holds (:meth:`_take_kept`), void for a pair with a page
        #: in ``_kept_void`` (changed since, or forgotten): filed per page only when asked for
        self._kept_scores: Mapping[tuple[str, str], dict[str, float]] = {}
        self._kept_void: set[str] = set()
        self._same = True  # (a scan's shingles are of the bytes the store read: see _all_shingles)
        #: (:meth:`_links_key`, every page's inbound count) counted by a scan (while the pages are as it read them)
        self._scan_inbound: tuple[tuple[bytes | None, bytes], Mapping[str, int]] | None = None
        #: followed from a basis (:meth:`_follow_inbound`): the pages whose inbound count differs
        #: from the scan's (the others' are the basis's, as a result kept whole after it holds them)
        self.inbound_moved: set[str] = set()
        #: (how many, which) distinct pages link to each page, in the scan's order (page slots):
        #: what the basis keeps to follow inbound counts (see _follow_inbound)
        self._scan_sources: tuple[np.ndarray, np.ndarray] | None = None
        #: the pages whose links :meth:`_follow_inbound` counts as they are now (the others' as at
        #: the basis), while it follows the inbound counts; None: the link index answers them
        self._inbound_stale: set[str] | None = None
        self.scanned = False
        #: The store state a kept result was loaded for (answers come from it: no features, no
        #: index; after a change to the pages the next update loads the basis, else scans), else None.
        self.kept: bytes | None = None
        self.kept_inbound: dict[str, int] = {}
        #: Loaded from a basis and a result kept since: what that result says, while every update
        #: since has found the same pairs for the pages it re-examined as before (None once one
        #: did not, or a page came or went): Health's count and the next kept result are then
        #: carried over instead of grouping every pair again (:mod:`curator.engine.dedup.families`).
        self.carried: Carried | None = None
        #: The operator's family count of these pairs as they were once, and the pairs changed
        #: since (:class:`FollowedCount`): set where :attr:`carried` is, or where an answer
        #: grouped every pair; None once a page came or went (a family may have lost a page
        #: no pair names) or past FOLLOWED_COUNT_MAX changed pairs.
        self.followed_count: FollowedCount | None = None
        #: The name of this index's pairs as they are now: the digest (:func:`~curator.engine.dedup.cache.kept_digest`)
        #: of a kept result holding them (loaded from it, or it was just kept), or of the earlier
        #: one with the very same pairs (``dedup-pairs``); None: not known. The operator's
        #: families answer saved under that name holds families of these very pairs, so an
        #: answer patches it instead of grouping every pair again.
        self.kept_digest: bytes | None = None
        #: The pairs changed since this index's pairs were the ones a kept result named
        #: (:class:`PairEdits`; None: none known, or a page came or went since), saved with each
        #: result kept since (:data:`~curator.engine.dedup.cache.PAIR_EDITS_NAME`) for a later
        #: process to read with it.
        self.pair_edits: PairEdits | None = None
        #: The store state this index's pairs are exactly a full scan's of (the bytes it read
        #: are the store's); None: not known. What an answer built from them is saved under.
        self.at_state: bytes | None = None
        #: The pages whose pairs this index verified again (:meth:`_examine`) since it was loaded,
        #: or since the operator's families answer was last saved (which then cleared it): a
        #: saved answer's family holding one is built again, the others are still exact.
        self.examined: set[str] = set()
        #: The result last kept whole, which a result followed since is kept as changes to
        #: (:func:`~curator.engine.dedup.cache.encode_delta`); None: the next is kept whole.
        self.kept_base: dedup_cache.KeptBase | None = None
        #: The store state the last full scan (or exact update) read, while its result is not yet
        #: kept (see _keep); an update's is kept by keep() (the station: after showing the answer)
        self.unkept: bytes | None = None
        self.unkept_update = False
        #: a process of its own makes the new basis this index found due (see compact_basis)
        self.compacting_elsewhere = False
        #: the new basis this index made, written but not yet named (see compact_basis), and the
        #: last one refused: the basis it was made from and the pages changed since it then
        self.staged_basis: StagedBasis | None = None
        self._refused: tuple[bytes, int] | None = None
        #: The basis (:mod:`curator.engine.dedup.follow`) these features were scanned as or loaded
        #: from (b"" when none was saved), and the pages whose features differ from it since
        #: (changed, or discounted anew): a kept result names both, so that the next process
        #: following from that basis reuses the other pages' scores.
        self.basis_id = b""
        self._since_basis: set[str] = set()
        #: Loaded from a basis: the pages whose features hold only their listed shingles (the
        #: others are boilerplate whichever way FOLLOW_MARGIN changes go); more changed pages than
        #: that since the basis, and the next update scans.
        self.from_basis = False
        self._partial: set[str] = set()
        self._every: dict[str, np.ndarray] = {}  # every shingle of a partial page, read when a score needs it
        #: whether the pages :meth:`_settle` read were the bytes the store parsed (see update)
        self._settled_same = True
        self._reexamine: set[str] = set()  # (see _load_basis)
        self._unknown: set[str] = set()  # changed pages whose big shingles stayed in the counts
        self._basis_head = ""  # (a basis's, loaded: see _read_back)
        self._basis_digests: Mapping[str, int] = {}
        self._basis_sizes: Mapping[str, int] = {}  # (each page's file size at the basis: see _appended_to)
        #: (store state, the basis pages whose stamps differ from the pages then): what the basis's
        #: loading found, which the update that follows it does not look for again
        self._basis_differs: tuple[bytes | None, set[str], set[str]] = (None, set(), set())
        self._big_at = np.zeros(0, dtype=np.int64)  # where the basis's big shingles are in _shingle_keys
        #: the basis loaded (see _adopt_basis): whose features still hold its listed shingles (the
        #: pages in _partial) is found in one pass over them all (_holders)
        self._listed_basis: dedup_follow.Basis | None = None
        self._listed: list[np.ndarray] | None = None  # (a scan's, for its basis)
        self._digests: np.ndarray | None = None  # (a scan's: each page's dedup_follow.digest_of, for its basis)

    # --- reading pages ----------------------------------------------------------------------
    def _features_in_chunks(self, order: list[str], names: bool) -> tuple[list[Features], list[tuple[str, ...]]]:
        """Every page's features in ``order`` (those of a page gone since are not made), and
        (``names``) the names links reach each by: each page decoded from its record a chunk of
        pages at a time, and let go (see :meth:`_scan_all`)."""
        none = np.zeros(0, dtype=np.uint64)
        feats: list[Features] = []
        link_names: list[tuple[str, ...]] = []
        for _path, page in _pages_in_chunks(self.wiki.store, order):
            feats.append(features_of(page, none))
            if names:
                link_names.append(_link_names(page))
        return feats, link_names

    def _start_shingles(self, order: list[str]) -> _Shingling:
        """Start shingling every page body (in ``order``): in worker processes when there are many,
        which run while this process compares names (see :meth:`scan`)."""
        store, root = self.wiki.store, str(self.wiki.root)
        made, store.byproducts = store.byproducts, {}
        done: dict[str, tuple[bytes | dedup_spill.Spilled, bytes, bytes]] = {}
        files: list[PageFile] = []
        stamps = store.stamps(order)
        for p in order:
            stamp = stamps.get(p, (0, 0))
            found = made.get(p)
            if found is not None and found[0] == stamp:
                done[p] = found[1]  # (of the very bytes the store parsed)
            else:
                files.append(PageFile(p, stamp[0], stamp[1]))
        del made
        racy = {f.path: d for f in files if (d := store.racy_digest(f.path)) is not None}
        chunks = (parallel.map_chunks(shingle_files, root, files, frozenset(racy), niceness=self.niceness)
                  if len(files) >= PARALLEL_SHINGLES else None)
        work = _Shingling(root, order, files, racy, chunks, done)
        if chunks is not None and self._spill is not None:
            # The workers' results are written to the spill as they come, on a thread of their
            # own, while this one compares titles: waiting for _all_shingles, every page's
            # shingles arrived and were held in memory first (114 MB at 32,000 pages).
            work.taking = threading.Thread(target=self._take_chunks, args=(work,), daemon=True,
                                           name="curator-dedup-spill")
            work.taking.start()
        return work

    def _take_chunks(self, work: _Shingling) -> None:
        """Take every chunk of the workers' results (``work.chunks``) into ``work``: each page's
        shingles written to the spill (when there is one), its slug keys, and whether its bytes
        were the store's. Stops between chunks when the scan is stopped; what stopped it (or went
        wrong) is ``work.failed``, raised by :meth:`_all_shingles`."""
        chunks, racy, spill = work.chunks, work.racy, self._spill
        try:
            self._stop_shingling(chunks)
            for chunk in chunks if chunks is not None else ():
                for path, blob, read, entries, queries in chunk:
                    work.out[path] = spill.put(blob) if spill is not None else blob  # (written as it comes)
                    work.keys[path] = entries, queries
                    if read and read != racy[path]:
                        work.same = False
                del chunk  # (its pages' bytes: written to the spill, not held to the next chunk)
                self._stop_shingling(chunks)
        except BaseException as exc:  # (raised on the scan's thread)
            work.failed = exc

    def _stop_shingling(self, chunks: Iterator[Any] | None) -> None:
        """When the scan is stopped (:meth:`stop`): cancel the workers' queued chunks (closing
        their results shuts the pool down: a closing station waits for no shingling), then stop."""
        if self._stop.is_set():
            if chunks is not None:
                # (one chunk waited for: a generator closed before it started never runs its
                # cleanup, which is what shuts the pool down)
                with suppress(StopIteration):
                    next(chunks)
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
            self._check_stop()

    def _all_shingles(self, work: _Shingling) -> tuple[list[np.ndarray], list[tuple[bytes, bytes]], bool]:
        """Every page's body shingles and slug keys (entries, queries: :func:`shingle_files`), in
        the order shingling started with, and whether the shingles are of the bytes the page
        store read: a page its racy-stamp guard still checks
        (:meth:`~curator.engine.corpus.store.PageStore.racy_digest`) may have been rewritten in place, within one tick
        of the file clock, since the store read it; its digest is compared, and a scan that read
        other bytes than the store's is not kept (:meth:`_keep`)."""
        if work.taking is not None:
            work.taking.join()  # (the workers' results, taken meanwhile: _take_chunks)
        else:
            self._stop_shingling(work.chunks)  # (the workers' queued chunks cancelled, if stopped)
            if work.chunks is None and work.files:  # (no workers: shingled here)
                work.chunks = iter((shingle_files(work.root, work.files, frozenset(work.racy)),))
            self._take_chunks(work)
        if work.failed is not None:
            raise work.failed
        spill, out, keys, same = self._spill, work.out, work.keys, work.same
        for path, (blob, entries, queries) in work.done.items():
            out[path] = blob
            keys[path] = entries, queries
        work.done.clear()
        with suppress(OSError):  # what session 4 kept per page (as big as the pages): not used any more
            (self.wiki.state_dir / OLD_SIGNATURES).unlink()
        found = [out[p] for p in work.order]
        if spill is not None:
            self._spill_order = sorted(range(len(found)), key=lambda i: _file_place(found[i]))
        return [self._shingles_at(at) for at in found], [keys[p] for p in work.order], same

    def _shingles_at(self, found: bytes | dedup_spill.Spilled) -> np.ndarray:
        """A page's shingles as a scan received them: their bytes, or where the spill has them."""
        if isinstance(found, dedup_spill.Spilled):
            assert self._spill is not None  # (what put them there)
            return self._spill.view(found)
        return np.frombuffer(found, dtype=np.uint64)

    # --- full scan ----------------------------------------------------------------------------
    def scan(self) -> None:
        """(Re)build everything from the current pages."""
        with self._lock, gc_paused():
            order = self.wiki.paths  # (no page decoded: _scan_all decodes them a chunk at a time)
            token = self.wiki.store.state  # the state these pages are (refreshed by .paths)
            self._reset()
            lean = token is not None and self._writable_state()
            if self._spill is None and lean:
                self._spill = dedup_spill.open_spill(self.wiki.state_dir)
            try:
                self._scan_all(order, lean=lean)
            finally:
                self._close_spill()
            self.unkept, self.unkept_update = (token if self._same else None), False
            self.at_state = token if self._same else None
            try:
                saved = self._same and token is not None and self._save_basis(token)
                if self._partial and not saved:
                    self.scanned = False  # (no basis to follow changes from: the next update scans again)
            finally:
                self._listed, self._digests, self._scan_names = None, None, None

    def _scan_all(self, order: list[str], lean: bool = False) -> None:
        """:meth:`scan`'s work. The bodies are shingled (and the slugs' keys hashed) in worker
        processes, unless the store's bulk parse already did, while this one computes every
        page's features and compares titles and tags (they need no body); then the slugs and
        the bodies are compared. (A forked child used to find the titles, tags and inbound
        counts beside the body comparison: 0.3 s faster at 32,000 pages, but the pages the two
        processes came to hold apart made it 180 MB more, 460 MB at 100,000.)

        ``lean``: the basis will be saved (:meth:`_save_basis`), so that once every page's counts
        are known, each page keeps only its listed shingles (:meth:`_listed_only`); the inbound
        counts it keeps are counted too (:meth:`_count_inbound`).

        Every page's features (and the names links reach it by) are made first, from its record
        decoded a chunk of pages at a time, before any other page is decoded: made from every
        page decoded at once, what they kept was scattered through the decoded pages' memory,
        which then stayed resident when they were let go (100 MB at 32,000 pages, 300 MB at
        100,000, held to the end of the scan). The inbound counts come after them, from the link
        index where it is built already, else resolved a chunk of pages at a time
        (:meth:`_count_inbound`)."""
        # Where the link index is built already (``health`` counted its link figures first; a
        # long-lived process keeps it) the inbound counts are read from it first, and a one-shot
        # command lets go of it before the features are made: made while it was held, what they
        # kept pinned its memory resident too (20-40 MB more at 32,000 pages).
        read_first = lean and (memory.runs_for_long() or self.wiki.links_built())
        if read_first:
            self._count_inbound(order)
        feats, names = self._features_in_chunks(order, lean)
        order = [f.path for f in feats]  # (a page gone since the walk: not scanned)
        if lean:
            self._scan_names = names
            if not read_first or self._scan_sources is None or len(self._scan_sources[0]) != len(order):
                self._count_inbound(order)
            if not memory.runs_for_long():
                # A one-shot command lets go of the decoded pages: nothing after the features
                # reads them (a score that needs a page's text reads its file), and held
                # through the counting and the basis's save they were a fifth of its peak.
                self.wiki.store.release_pages()
                memory.trim()
        # (the shingling workers started once the pages are let go: started before, they ran
        # beside every page decoded and the link index, 50-70 MB more at the station's first scan)
        work = self._start_shingles(order)
        try:
            self.features = {f.path: f for f in feats}
            for f in feats:
                self._index_names(f)
            for step in (self._scan_titles, self._scan_tags):
                self._check_stop()
                step(feats)
        finally:
            bodies, slug_keys, self._same = self._all_shingles(work)  # (workers are waited for whatever happened)
        self._check_stop()
        self._index_slugs(feats, slug_keys)
        del slug_keys
        for f, sh in zip(feats, bodies, strict=True):
            f.shingles = sh
        del bodies
        self.boilerplate_pages = max(BOILERPLATE_MIN_PAGES, len(feats) // 2000)
        listed = self.boilerplate_pages + dedup_follow.FOLLOW_MARGIN
        none = np.zeros(0, dtype=np.uint64)
        self._listed, self._digests = [none] * len(feats), np.zeros(len(feats), dtype=np.uint64)
        for i, c in self._count_shingles(feats):
            f = feats[i]
            self._digests[i] = dedup_follow.digest_of(f.shingles)
            kept = c <= listed
            self._listed[i] = few = f.shingles[kept]  # (a copy: never a view of the spill)
            self._discount(f, bands=False, among=(few, c[kept]))
        if lean and self._same:
            self._listed_only(feats)
        # (the slugs compared once the pages no longer hold every shingle: what that makes is not
        # held beside them)
        self._scan_slugs(feats)
        self._check_stop()
        self._index_all_bands(feats)
        for step in (self._scan_bodies, self._scan_containment):
            self._check_stop()
            step(feats)
        self.scanned = True

    def _links_key(self) -> tuple[bytes | None, bytes]:
        """What the operator's link index (the inbound counts) is built from: the pages' state and
        the attachment files."""
        store = self.wiki.store
        return store.state, store.attachments_key()

    def known_inbound(self) -> Mapping[str, int]:
        """Every page's inbound count as the scan counted it (or a load followed it from the
        basis, :meth:`_follow_inbound`) while the pages are as then (empty otherwise: the link
        index answers, :meth:`inbound`)."""
        found = self._scan_inbound
        if found is None or self.kept is not None:
            return {}
        if found[0][0] is None or found[0] != self._links_key():
            self._scan_inbound = None
            return {}
        return found[1]

    def _count_shingles(self, feats: list[Features]) -> Iterator[tuple[int, np.ndarray]]:
        """Count on how many pages each shingle occurs; yield each page's place in ``feats`` and
        its per-shingle counts (exact above CONTAINMENT_MAX_PAGES, 1 at or below it: what
        :meth:`_discount` tells apart), made a block of pages at a time (those of every page at
        once were 57 MB at 32,000 pages). The pages come in the order the spill file has them
        (:attr:`_spill_order`): a block then reads one stretch of it, where pages in path order
        each mapped the 64 KB around them (80 MB resident for a block of 16 MB)."""
        places = self._spill_order if self._spill_order is not None else list(range(len(feats)))
        self._spill_order = None
        sizes = [len(feats[i].shingles) for i in places]
        if not sum(sizes):
            yield from ((i, np.zeros(0, dtype=np.int64)) for i in places)
            return
        # One vectorised pass over all shingles instead of a lookup per page: sorting blocks of
        # them (a thread each) gives the distinct shingles and their counts; the few on
        # more than CONTAINMENT_MAX_PAGES pages are then found again in a hash table. (Sorting
        # every value's position instead, to give each its count, cost ~3x more.)
        shingles = [feats[i].shingles for i in places]
        release = self._spill.release if self._spill is not None else None
        self._shingle_keys, self._shingle_counts = _distinct_counts(shingles, release)
        for first, end in _page_groups(sizes, _DISTINCT_BLOCK):
            per = _counts_above(shingles[first:end], self._shingle_keys, self._shingle_counts, CONTAINMENT_MAX_PAGES)
            yield from zip(places[first:end], np.split(per, np.cumsum(sizes[first:end])[:-1]), strict=True)
            if release is not None:
                release()  # (the group's shingles read: not held while the next is)

    def _counts_of(self, sh: np.ndarray) -> np.ndarray:
        keys = self._shingle_keys
        if not len(keys):
            out = np.zeros(len(sh), dtype=np.int64)
        else:
            idx = np.minimum(np.searchsorted(keys, sh), len(keys) - 1)
            out = np.where(keys[idx] == sh, self._shingle_counts[idx], 0)
        if self._extra_counts and len(sh):
            # (looked up in one search: a dict lookup a shingle cost 30 ms a follow of 130 pages)
            if self._extra_sorted is None:
                extra = self._extra_counts
                at = np.fromiter(extra.keys(), dtype=np.uint64, count=len(extra))
                order = np.argsort(at)
                self._extra_sorted = at[order], np.fromiter(extra.values(), dtype=np.int64, count=len(extra))[order]
            extra_keys, extra_counts = self._extra_sorted
            idx = np.minimum(np.searchsorted(extra_keys, sh), len(extra_keys) - 1)
            out = out + np.where(extra_keys[idx] == sh, extra_counts[idx], 0)
        return out

    def _add_counts_of(self, arrays: Iterable[np.ndarray], delta: int) -> None:
        """:meth:`_add_counts` of every array of ``arrays`` in one search, their shingles sorted:
        a search a page into the basis's keys (13 million at 100,000 pages) cost 0.4 ms a page,
        mostly cache misses, three times what sorted ones cost; a follow settles hundreds of pages."""
        arrays = [a for a in arrays if len(a)]
        if arrays:
            self._add_counts(np.sort(np.concatenate(arrays)), delta)

    def _counts_of_each(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """:meth:`_counts_of` of each array of ``arrays``, found in one search of their shingles
        sorted (see :meth:`_add_counts_of`)."""
        if not arrays:
            return []
        every = np.concatenate(arrays)
        order = np.argsort(every, kind="stable")
        counts = np.empty(len(every), dtype=np.int64)
        counts[order] = self._counts_of(every[order])
        return np.split(counts, np.cumsum([len(a) for a in arrays])[:-1])

    def _add_counts(self, sh: np.ndarray, delta: int) -> None:
        keys = self._shingle_keys
        if len(keys):
            idx = np.minimum(np.searchsorted(keys, sh), len(keys) - 1)
            hit = keys[idx] == sh
            counts = self._shingle_counts
            if isinstance(counts, dedup_follow.FollowedCounts):
                counts.add_at(idx[hit], delta)
            else:
                np.add.at(counts, idx[hit], delta)
            missing = sh[~hit]
        else:
            missing = sh
        if len(missing):
            self._extra_sorted = None
        for x in missing.tolist():
            self._extra_counts[x] += delta

    def _discount(self, f: Features, counts: np.ndarray | None = None, bands: bool = True,
                  among: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Boilerplate left out of ``f``'s body and rare text; its bands (unless ``bands`` is
        False: a scan computes every page's at once, :func:`minhash_many`). ``among``: shingles
        of ``f`` holding every one at or below the boilerplate limit, and their counts (a scan's
        listed ones), which the body and rare text are taken from. Each is the array it is taken
        from when that holds nothing else (most pages at scale: a copy each was 40 MB at 32,000
        pages, 200 MB at 300,000)."""
        sh = f.shingles
        if among is not None:
            sh, counts = among
        elif counts is None:
            counts = self._counts_of(sh)
        body_kept = counts <= self.boilerplate_pages
        body = _kept(sh, body_kept)
        f.body = body if len(body) >= MIN_SHINGLES else np.zeros(0, dtype=np.uint64)
        rare = _kept(body, counts[body_kept] <= CONTAINMENT_MAX_PAGES) if len(f.body) else f.body
        f.rare = rare if len(rare) >= MIN_SHINGLES else np.zeros(0, dtype=np.uint64)
        if bands:
            f.bands = band_keys(minhash(f.body)) if len(f.body) else []

    def _index(self, f: Features) -> None:
        self._index_names(f)
        self._slugs.add(f.path, _slug_keys([f.slug_words])[0].tolist())
        for b, band in enumerate(f.bands):
            self._bands[b].add(f.path, (band,))

    def _index_names(self, f: Features) -> None:
        if f.title_key:
            _join(self._title_groups, f.title_key, f.path)
        self._tag(f)
        slot = len(self._titles)
        self._titles.append(f.title_text)
        self._title_len.append(len(f.title_text))
        self._lengths = None
        self._title_slot[f.path] = slot
        self._title_paths.append(f.path)

    def _index_slugs(self, feats: list[Features], keys: list[tuple[bytes, bytes]]) -> None:
        """Every page of a scan filed in one sorted slug table, by the keys :func:`shingle_files`
        hashed (``keys``: each page's entries and queries)."""
        entries = np.frombuffer(b"".join(e for e, _ in keys), dtype=np.uint64)
        queries = np.frombuffer(b"".join(q for _, q in keys), dtype=np.uint64)
        counts = np.fromiter((len(e) // 8 for e, _ in keys), dtype=np.int64, count=len(keys))
        owners = np.repeat(np.arange(len(keys), dtype=np.int64), counts)
        self._slugs.build([f.path for f in feats], entries, owners)
        self._scan_queries = queries, owners

    def _index_all_bands(self, feats: list[Features]) -> None:
        """Every discounted body's MinHash bands, computed and filed at once (a table per band)."""
        slots = [i for i, f in enumerate(feats) if len(f.body)]
        keys = band_keys_many(minhash_many([feats[i].body for i in slots]))
        for i, row in zip(slots, keys, strict=True):
            feats[i].bands = row
        paths = [f.path for f in feats]
        slot = {p: i for i, p in enumerate(paths)}
        owners = np.array(slots, dtype=np.int64)
        for b, table in enumerate(self._bands):
            table.build(paths, keys[:, b], owners, slot)

    def _tag(self, f: Features) -> None:
        """File the page under each (folder, tag) of ``f``."""
        for tag in f.tags:
            _join(self._tag_index, (f.folder, tag), f.path)

    def _untag(self, f: Features) -> None:
        """Take the page out of each (folder, tag) group of ``f`` (an empty group goes)."""
        for tag in f.tags:
            _drop(self._tag_index, (f.folder, tag), f.path)

    def _unindex(self, f: Features) -> None:
        _drop(self._title_groups, f.title_key, f.path)
        self._slugs.remove(f.path)
        self._untag(f)
        for table in self._bands:
            table.remove(f.path)
        slot = self._title_slot.pop(f.path, None)
        if slot is not None:
            self._titles[slot] = ""
            self._title_len[slot] = -1
            self._title_paths[slot] = ""
            self._lengths = None

    # --- signal checks (exact verification of blocked candidates) -----------------------------
    def _check_title(self, a: Features, b: Features) -> float | None:
        if not a.title_key or not b.title_key or a.title_numbers != b.title_numbers:
            return None
        if a.title_key == b.title_key:
            return 1.0
        score = fuzz.ratio(a.title_text, b.title_text) / 100
        return score if score >= TITLE_SIMILARITY else None

    def _check_slug(self, a: Features, b: Features) -> float | None:
        if a.slug_numbers != b.slug_numbers or not a.slug_alnum or not b.slug_alnum:
            return None
        score = similarity(a.slug_feats, b.slug_feats)
        if score < SLUG_SIMILARITY:
            return None
        short, long_ = sorted((a.slug_alnum, b.slug_alnum), key=len)
        if short != long_ and short in long_:
            # Containment counts on word boundaries ("project-x" in "project-x-notes") or between
            # near-identical names ("refund" / "refunds"), not "ai" inside "maintenance".
            on_words = any("".join(w[i:j]) == short for w in (a.slug_words, b.slug_words)
                           for i in range(len(w)) for j in range(i + 1, len(w) + 1))
            if not on_words and len(long_) - len(short) > 1:
                return None
        return score

    def _check_tags(self, a: Features, b: Features) -> float | None:
        if a.folder != b.folder or not a.tags or not b.tags or a.slug_numbers != b.slug_numbers:
            return None
        score = jaccard(a.tags, b.tags)
        if score < TAG_JACCARD:
            return None
        # Evidence is two or more shared tags that are not categories of the folder: one shared
        # topic tag (next to "meeting") is what siblings have, not what twins have.
        rare = [t for t in a.tags & b.tags if _size(self._tag_index, (a.folder, t)) <= RARE_TAG_PAGES]
        return score if len(rare) >= MIN_RARE_TAGS else None

    def _check_body(self, a: Features, b: Features) -> float | None:
        score = array_jaccard(a.body, b.body)
        return score if score >= BODY_JACCARD else None

    def _check_containment(self, a: Features, b: Features) -> float | None:
        """Share of the smaller body's shingles found in the other body (>= CONTAINMENT); a pair
        the body signal already calls near-identical is left to it."""
        if not len(a.rare) or not len(b.rare) or array_jaccard(a.body, b.body) >= BODY_JACCARD:
            return None
        score = containment(a.rare, b.rare)
        return score if score >= CONTAINMENT else None

    def _add(self, signal: str, a: str, b: str, score: float) -> None:
        key = pair_key(a, b)
        self.pairs[signal][key] = round(score, 4)
        self.partners[signal][a].add(b)
        self.partners[signal][b].add(a)

    def _verify(self, signal: str, a: str, candidates: Iterable[str]) -> None:
        check = getattr(self, f"_check_{signal}")
        fa = self.features[a]
        for b in candidates:
            if b == a or b not in self.features:
                continue
            score = check(fa, self.features[b])
            if score is not None:
                self._add(signal, a, b, score)

    # --- blocking: full scan --------------------------------------------------------------------
    def _scan_titles(self, feats: list[Features]) -> None:
        for members in self._title_groups.values():
            if len(members) > 1:
                ordered = sorted(members)
                for i, a in enumerate(ordered):
                    self._verify("title", a, ordered[i + 1:])
        # Similar (not equal) titles: rapidfuzz cdist, only among titles carrying the same numbers
        # (others are a series, never a match) and within length windows: ratio >= 0.9 means
        # 2*min/(la+lb) >= 0.9, i.e. the shorter is at least 9/11 of the longer.
        groups: dict[tuple[str, ...], list[tuple[int, str]]] = defaultdict(list)
        for f in feats:
            if f.title_text:
                groups[f.title_numbers].append((len(f.title_text), f.path))
        for lengths in groups.values():
            if len(lengths) > 1:
                self._similar_titles(sorted(lengths))

    def _similar_titles(self, order: list[tuple[int, str]], chunk: int = 64) -> None:
        paths = [p for _, p in order]
        texts = [self.features[p].title_text for p in paths]
        lengths = [n for n, _ in order]
        for start in range(0, len(paths), chunk):
            stop = min(len(paths), start + chunk)
            hi = bisect.bisect_right(lengths, _title_lengths(lengths[stop - 1])[1])
            if hi <= start + 1:
                continue
            scores = process.cdist(texts[start:stop], texts[start:hi], scorer=fuzz.ratio,
                                   score_cutoff=TITLE_SIMILARITY * 100, dtype=np.uint8, workers=1)
            rows, cols = np.nonzero(scores)
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                if c > r:
                    self._verify("title", paths[start + r], (paths[start + c],))

    def _verify_slots(self, signal: str, feats: list[Features], a: np.ndarray, b: np.ndarray) -> None:
        """Verify the pairs (``feats[a[i]]``, ``feats[b[i]]``) of a full scan."""
        check = getattr(self, f"_check_{signal}")
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            fa, fb = feats[x], feats[y]
            score = check(fa, fb)
            if score is not None:
                self._add(signal, fa.path, fb.path, score)

    def _scan_slugs(self, feats: list[Features]) -> None:
        queries, owners = self._scan_queries or _slug_keys([f.slug_words for f in feats])[1:]
        self._scan_queries = None
        a, b = self._slugs.meets(queries, owners)  # (each pair once: slots are in path order)
        # A block of pairs at a time, the slug features their pages make let go after each: made
        # for every page a pair names and held to the end (a page's trigrams: 3 KB of sets and
        # strings), they were 870 MB of a scan's peak at 300,000 pages, and the memory the sets
        # had stayed with the scan.
        for start in range(0, len(a), _SLUG_PAIRS):
            block_a, block_b = a[start:start + _SLUG_PAIRS], b[start:start + _SLUG_PAIRS]
            self._verify_slots("slug", feats, block_a, block_b)
            for i in np.unique(np.concatenate([block_a, block_b])).tolist():
                feats[i]._slug_feats = None

    def _scan_tags(self, feats: list[Features]) -> None:
        for (_folder, _tag), members in self._tag_index.items():
            if 1 < len(members) <= RARE_TAG_PAGES:
                ordered = sorted(members)
                for i, a in enumerate(ordered):
                    self._verify("tags", a, ordered[i + 1:])

    def _scan_bodies(self, feats: list[Features]) -> None:
        n = np.int64(max(1, len(feats)))
        found = [a * n + b for a, b in (table.runs() for table in self._bands)]
        pairs = _sorted_unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
        self._verify_slots("body", feats, pairs // n, pairs % n)

    def _scan_containment(self, feats: list[Features]) -> None:
        """Pages sharing enough sampled shingles, verified exactly: one sort of every page's
        samples, then the pairs inside each run of equal values (a run is short: boilerplate,
        on more than ``boilerplate_pages`` pages, is already left out of the bodies)."""
        samples = [_sample(f.rare) for f in feats]
        sizes = np.array([len(x) for x in samples], dtype=np.int64)
        vals = np.concatenate(samples) if sizes.sum() else np.zeros(0, dtype=np.uint64)
        self._samples.build([f.path for f in feats], vals,
                            np.repeat(np.arange(len(feats), dtype=np.int64), sizes))
        if not len(vals):
            return
        vals, owner = self._samples.keys, self._samples.owners
        # runs of equal values of length >= 2: every pair of owners in a run shares that sample
        n = np.int64(len(feats))
        every = np.sort(_run_pairs(vals, owner, n))
        if not len(every):
            return
        starts = np.flatnonzero(np.r_[True, every[1:] != every[:-1]])
        pairs, hits = every[starts], np.diff(np.r_[starts, len(every)])  # (np.unique's, by sorting)
        a, b = pairs // n, pairs % n
        need = np.maximum(CONTAINMENT_MIN_HITS, np.ceil(CONTAINMENT_HITS * np.minimum(sizes[a], sizes[b])))
        keep = (hits >= need) & (a != b)
        for x, y in zip(a[keep].tolist(), b[keep].tolist(), strict=True):
            self._verify("containment", feats[x].path, (feats[y].path,))

    def _containment_candidates(self, f: Features) -> set[str]:
        """Pages sharing enough sampled shingles with ``f`` (for one changed page)."""
        sample = _sample(f.rare)
        if not len(sample):
            return set()
        out = set()
        for other, n in self._samples.hits(sample).items():
            if n < CONTAINMENT_MIN_HITS:
                continue  # (below any page's need: its features are not made to be told so)
            g = self.features.get(other)
            if g is None or other == f.path:
                continue
            need = max(CONTAINMENT_MIN_HITS, CONTAINMENT_HITS * min(len(sample), len(_sample(g.rare))))
            if n >= need:
                out.add(other)
        return out

    # --- incremental update -------------------------------------------------------------------
    def _forget(self, path: str, counts: bool = True) -> None:
        self.file_pairs((path,))
        self._kept_void.add(path)
        for pair in self._scored.pop(path, set()):
            self._scores.pop(pair, None)
        f = self.features.pop(path, None)
        if f is None:
            return
        self._unindex(f)
        self._samples.remove(path)
        if counts:
            self._add_counts(f.shingles, -1)
        for signal in SIGNALS:
            for other in self.partners[signal].pop(path, set()):
                self.pairs[signal].pop(pair_key(path, other), None)
                mates = self.partners[signal].get(other)
                if mates is not None:
                    mates.discard(path)

    def _place(self, f: Features, counts: np.ndarray | None = None) -> None:
        """File a page (its features and counts already in) under every blocking key, discounted
        by the counts as they are (``counts``: its shingles', found already)."""
        self._discount(f, counts)
        self._index(f)
        self._samples.add(f.path, _sample(f.rare).tolist())

    def _place_all(self, feats: list[Features]) -> None:
        """:meth:`_place` each of ``feats`` (every one's counts in already), their counts found in
        one search (:meth:`_counts_of_each`)."""
        for f, counts in zip(feats, self._counts_of_each([f.shingles for f in feats]), strict=True):
            self._place(f, counts)

    def _title_window(self, texts: list[str]) -> tuple[np.ndarray, list[str]]:
        """The title slots whose length is within the similar-title window of any of ``texts``
        (ascending), and their titles (:func:`_title_lengths`)."""
        lo = min(_title_lengths(len(t))[0] for t in texts)
        hi = max(_title_lengths(len(t))[1] for t in texts)
        # (the length window in one pass over an array: a Python loop over every title and a
        # map of every slot to its page cost ~7 ms a changed page at 32,000 pages)
        if self._lengths is None:
            self._lengths = np.fromiter(self._title_len, dtype=np.int64, count=len(self._title_len))
        lens = self._lengths
        slots = np.flatnonzero((lens >= max(lo, 0)) & (lens <= hi))
        # (the window's titles picked in C, in slot order: a list made in Python took 10 ms at
        # 300,000 pages, and titles in another order than they lie in memory compare 2x slower)
        found = slots.tolist()
        return slots, (list(operator.itemgetter(*found)(self._titles)) if len(found) > 1
                       else [self._titles[i] for i in found])

    def _similar_titles_of(self, feats: list[Features], batch: int = 64) -> dict[str, list[int]]:
        """The title slots similar to each of ``feats``' titles (what :meth:`_examine` verifies),
        for an update of many pages: one rapidfuzz ``cdist`` of ``batch`` titles at a time over
        the window spanning their lengths, where a search a page (``extract``) cost 23 ms each at
        300,000 pages, most of it reading the window's titles again."""
        out: dict[str, list[int]] = {}
        titled = sorted((f for f in feats if f.title_text), key=lambda f: len(f.title_text))
        for start in range(0, len(titled), batch):
            part = titled[start:start + batch]
            texts = [f.title_text for f in part]
            slots, choices = self._title_window(texts)
            scores = process.cdist(texts, choices, scorer=fuzz.ratio, score_cutoff=TITLE_SIMILARITY * 100,
                                   dtype=np.uint8, workers=1)
            lens = self._lengths
            assert lens is not None  # (made by _title_window)
            for f, row in zip(part, scores, strict=True):
                lo, hi = _title_lengths(len(f.title_text))
                hits = slots[np.flatnonzero(row)]
                out[f.path] = hits[(lens[hits] >= max(lo, 0)) & (lens[hits] <= hi)].tolist()
        return out

    def _examine(self, f: Features, similar: Mapping[str, list[int]] | None = None) -> None:
        """Verify a placed page against every other page its keys find (``similar``: the title
        slots similar to its title, found already for many pages at once)."""
        self.examined.add(f.path)
        if f.title_key:
            self._verify("title", f.path, self._title_groups.get(f.title_key, ()))
        if f.title_text:
            found = similar.get(f.path) if similar is not None else None
            if found is None:
                slots, texts = self._title_window([f.title_text])
                found = [int(slots[k]) for _text, _score, k in process.extract(
                    f.title_text, texts, scorer=fuzz.ratio, score_cutoff=TITLE_SIMILARITY * 100, limit=None)]
            for slot in found:
                self._verify("title", f.path, (self._title_paths[slot],))
        self._verify("slug", f.path, self._slugs.find(_slug_keys([f.slug_words])[1]))
        for tag in f.tags:
            if _size(self._tag_index, (f.folder, tag)) <= RARE_TAG_PAGES:
                self._verify("tags", f.path, self._tag_index.get((f.folder, tag), set()))
        body_cands: set[str] = set()
        for table, band in zip(self._bands, f.bands, strict=False):
            body_cands |= table.find(np.array([band], dtype=np.uint64))
        self._verify("body", f.path, body_cands)
        self._verify("containment", f.path, self._containment_candidates(f))

    def update(self, paths: Iterable[str] | None = None, kept_answers: bool = True) -> list[str]:
        """:meth:`_update`; a basis found damaged on the way (a page's part of it not decoding,
        :class:`~curator.engine.dedup.follow.DamagedBasis`) is a full scan, which saves a new one."""
        try:
            return self._update(paths, kept_answers)
        except dedup_follow.DamagedBasis:
            with self._lock:
                self.scan()
                return sorted(self.features)
        finally:
            basis = self._listed_basis
            if basis is not None:
                basis.release()  # (what the load's checks and the follow read: not held resident)

    def _update(self, paths: Iterable[str] | None = None, kept_answers: bool = True) -> list[str]:
        """Re-examine changed pages (``paths``, or every page whose (mtime, size) changed); the
        answer is exactly a full :meth:`scan`'s. ``kept_answers`` False: a first load never
        answers from a kept result (:meth:`build`: it wants features to follow changes with).

        An index answering from a kept result (no features) whose pages changed loads as a new
        process would: from the basis when at most ``follow_max`` pages changed since it, else by a
        full scan. (It used to scan at once: a long-lived process then held every page's features,
        most of a gigabyte at 32,000 pages, where the basis's hold a fraction.)

        What a page's pairs depend on besides the two pages is examined again too: every page
        holding a shingle whose count crossed a threshold because of the change (boilerplate,
        containment's few pages), every page of a folder's tag whose page count crossed the rare
        tag limit; a change of the boilerplate limit itself (the number of pages) is a full scan.
        After an update over every page (no ``paths``) the result is kept as a scan's is.
        """
        with self._lock, gc_paused():
            self._read_now = {}  # (read by another update: never these bytes)
            if self.kept is not None:
                if self.wiki.store.current() == self.kept:
                    return []
                self._reset()  # the pages changed: loaded again (a kept result has no features)
            if not self.scanned:
                store = self.wiki.store
                with self.shingles_from_parse():  # (for the scan that follows if no kept result answers)
                    if kept_answers and self._load_kept():
                        return []
                    store.byproduct = None
                    followed = self._load_basis()
                    if followed is None and self._scanned_apart():
                        if kept_answers and self._load_kept():
                            return []
                        followed = self._load_basis()
                    if followed is None:
                        self.scan()  # (takes the by-products whose page is as parsed: _start_shingles)
                        return sorted(self.features)
            else:
                followed = set()
            # (the pages' stamps, not the pages: a one-shot command decodes only the changed ones)
            pages = self.wiki.store.stamps()
            token = self.wiki.store.state
            if paths is None:
                if isinstance(self.features, BasisFeatures):
                    # (the basis pages differing from these very stamps: found while it was loaded)
                    found = self._basis_differs
                    differing = (self.features.differing(pages, found[1], found[2]) if found[0] == token
                                 else self.features.differing(pages))
                    stale = [p for p in pages if p in differing]  # (in the pages' order, as below)
                    stale += sorted(p for p in differing if p not in pages and p in self.features)
                else:
                    stale = [p for p, stamp in pages.items() if self._stamp_of(p) != stamp]
                    stale += [p for p in self.features if p not in pages]
                stale += sorted(followed.difference(stale))  # (rewritten within a tick: the store knows)
            else:
                stale = list(dict.fromkeys(paths))
            if not stale:
                self._carry_inbound()
                self.at_state = token if self.at_state is not None and self._settled_same else None
                return stale
            if self.from_basis:
                # a changed page loaded from the basis without its big shingles: read back from
                # git, else they stay in the counts (see follow), a bounded number of times
                self._read_back(stale)
                self._unknown.update(p for p in stale if p in self._partial)
                if len(self._unknown) > dedup_follow.FOLLOW_MARGIN:
                    self.scan()
                    return stale
            known = self.features
            n = (len(known) + sum(p not in known for p in stale if p in pages)
                 - sum(p not in pages for p in stale if p in known))
            if max(BOILERPLATE_MIN_PAGES, n // 2000) != self.boilerplate_pages:
                self.scan()  # every page's discount moves
                return stale
            same, self._settled_same = self._settled_same, True  # (and those _settle read)
            fresh: dict[str, Features] = {}
            store, root = self.wiki.store, self.wiki.root
            read_now, self._read_now = self._read_now, {}
            for path in stale:
                page = store.page(path) if path in pages else None
                if page is not None:
                    data = read_now.get(path) or read_bytes(root, path)
                    fresh[path] = features_of(page, shingles(body_of(data)))
                    racy = store.racy_digest(path)
                    same = same and (racy is None or racy == digest(data))
            if self.carried is not None and any(p not in known or p not in pages for p in stale):
                self.carried = None  # (a page came or went: the pages a family may hold differ)
            if any(p not in known or p not in pages for p in stale):
                self.kept_digest = self.followed_count = self.pair_edits = None
            follows_pairs = (self.carried is not None or self.kept_digest is not None
                             or self.followed_count is not None or self.pair_edits is not None)
            pairs_before = self._pairs_of(stale) if follows_pairs else set()
            old = [known[p] for p in stale if p in known]
            changed = [*old, *fresh.values()]
            touched = (np.unique(np.concatenate([f.shingles for f in changed])) if changed
                       else np.zeros(0, dtype=np.uint64))
            groups = {(f.folder, t) for f in changed for t in f.tags}
            before = self._counts_of(touched)
            sizes = {g: _size(self._tag_index, g) for g in groups}
            self.file_pairs(stale)
            for path in stale:
                self._forget(path)
                self._every.pop(path, None)
            self._partial.difference_update(stale)
            # Every count and tag group as it ends up before any page is placed or verified (a
            # page placed before another changed page's counts are in would keep a discount no
            # scan gives it).
            for f in fresh.values():
                self.features[f.path] = f
            self._add_counts_of((f.shingles for f in fresh.values()), +1)
            after = self._counts_of(touched)
            again: set[str] = set()
            limits = (self.boilerplate_pages, CONTAINMENT_MAX_PAGES)
            crossed = touched[np.logical_or.reduce([(before <= x) != (after <= x) for x in limits])]
            if self.from_basis and self._big_crossing(crossed):
                self.scan()  # (which pages hold a big shingle is not kept: see follow)
                return stale
            if len(crossed):
                again.update(self._holders(crossed))
            for g, size in sizes.items():
                final = _size(self._tag_index, g) + sum(f.folder == g[0] and g[1] in f.tags for f in fresh.values())
                if (size <= RARE_TAG_PAGES) != (final <= RARE_TAG_PAGES):
                    again.update(self._tag_index.get(g, set()))
            again.update(p for p in self._reexamine if p in self.features)
            self._reexamine = set()
            again -= fresh.keys()
            redo = {p: self.features[p] for p in sorted(again)}  # (unchanged pages: their shingles as they are)
            if follows_pairs:
                pairs_before |= self._pairs_of(redo)
            self.file_pairs(redo)
            for path in redo:
                self._forget(path, counts=False)
            work = [*fresh.values(), *redo.values()]
            for f in work:
                self.features[f.path] = f
            self._place_all(work)
            similar = self._similar_titles_of(work) if len(work) >= _TITLES_AT_ONCE else None
            for f in work:
                self._examine(f, similar)
            # (an update forgets and verifies only pairs with a page it re-examines: the same
            # such pairs before and after, every pair is the same)
            if follows_pairs:
                pairs_after = self._pairs_of([*stale, *redo])
                if pairs_after != pairs_before:
                    if self.pair_edits is None and self.kept_digest is not None:
                        self.pair_edits = PairEdits(self.kept_digest, {})
                    self.kept_digest = None
                    if self.carried is not None:
                        ends = {p for _signal, a, b in pairs_before ^ pairs_after for p in (a, b)}
                        self.carried = replace(self.carried, touched=self.carried.touched | ends)
                    self._follow_count(pairs_before, pairs_after)
            self._since_basis.update(stale)
            self._since_basis.update(redo)
            self._follow_inbound_again(stale, pages)
            if self._scan_inbound is not None and self._scan_inbound[0] != self._links_key():
                self._scan_inbound = None  # (older pages' counts: never carried to a later state)
            if paths is None and same:
                # (a new process that followed from a basis saves its result with its answer, as
                # a scan's; the station keeps an update's once the answer is shown)
                self.unkept, self.unkept_update = token, not followed
            self.at_state = token if same else None
            return stale

    def _follow_count(self, before: set[tuple[str, str, str]], after: set[tuple[str, str, str]]) -> None:
        """Note in :attr:`pair_edits` and :attr:`followed_count` the pairs an update changed
        (``before`` and ``after``: every pair of the pages it re-examined, so no other pair
        changed); past FOLLOWED_COUNT_MAX, drop them. Call with the lock held."""
        edits = self.pair_edits
        if edits is not None:
            note_edits(edits.was, before, after)
            if len(edits.was) > FOLLOWED_COUNT_MAX:
                self.pair_edits = None  # (the families are grouped again)
        counted = self.followed_count
        if counted is None:
            return
        note_edits(counted.was, before, after)
        if len(counted.was) > FOLLOWED_COUNT_MAX:
            self.followed_count = self.carried = None  # (every pair is grouped again)

    def file_pairs(self, paths: Iterable[str]) -> None:
        """File the kept pairs of ``paths`` not filed yet (see :attr:`_unfiled`). Call with the lock held."""
        table = self._unfiled
        if table is None:
            return
        pairs, partners = self.pairs, self.partners
        for signal, a, b, score in table.take(paths):
            pairs[signal][(a, b)] = score
            partners[signal][a].add(b)
            partners[signal][b].add(a)

    def file_all(self) -> None:
        """File every kept pair not filed yet: before anything reads :attr:`pairs` whole (an
        answer's families). Call with the lock held."""
        table, self._unfiled = self._unfiled, None
        if table is None:
            return
        for signal, found in table.take_all().items():
            self.pairs[signal].update(found)
            partners = self.partners[signal]
            for a, b in found:
                partners[a].add(b)
                partners[b].add(a)

    def _pairs_of(self, paths: Iterable[str]) -> set[tuple[str, str, str]]:
        """(signal, pair) of every verified pair with one of ``paths``."""
        paths = list(paths)
        self.file_pairs(paths)
        out: set[tuple[str, str, str]] = set()
        for signal in SIGNALS:
            partners = self.partners[signal]
            for path in paths:
                for other in partners.get(path, ()):
                    out.add((signal, *pair_key(path, other)))
        return out

    @contextmanager
    def shingles_from_parse(self) -> Iterator[bool]:
        """While open, a first load of the page store that parses the pages in bulk (a cold
        cache) shingles each body in its parse workers too, with the text in hand, for a scan
        that follows (:meth:`_start_shingles` takes those whose page is as parsed): the scan then
        starts no shingling processes and reads no page again. Each page's shingles go to the
        spill file as they come (:mod:`curator.engine.dedup.spill`); none outlive the block.
        Yields whether it collects (nothing when the store is loaded already, or this index has
        scanned). Opened by a first update, and by a command that loads the pages for something
        else before it asks a dedup answer (``health``: its link figures come first)."""
        store = self.wiki.store
        collect = not store.loaded and not self.scanned
        if collect:
            store.byproduct = shingle_texts
            if self._spill is None and self._writable_state():
                self._spill = dedup_spill.open_spill(self.wiki.state_dir)
            if self._spill is not None:  # (each page's shingles written there as they come)
                store.byproducts = dedup_spill.SpillingByproducts(self._spill)
        try:
            yield collect
        finally:
            if collect:  # (none outlive the block, whatever ended it)
                store.byproduct, store.byproducts = None, {}
                self._close_spill()

    def _scanned_apart(self) -> bool:
        """Whether :attr:`scan_apart` scanned these pages in another process (then their result
        and basis are kept; pages changed meanwhile are followed from them as after any load).
        Not where the state folder cannot be written: that process could keep nothing."""
        if self.scan_apart is None or not self._writable_state():
            return False
        self._close_spill()  # (nothing of this process's parse is scanned here)
        done = self.scan_apart(self._stop)
        self._check_stop()
        return done

    def stop(self) -> None:
        """Abandon a scan in progress, and every later one (the station closing): it raises
        :class:`ScanStopped` at its next step, leaving the index empty."""
        self._stop.set()

    def _check_stop(self) -> None:
        if self._stop.is_set():
            self._reset()
            raise ScanStopped("the duplicate scan was stopped (the wiki is closing)")

    def build(self) -> None:
        """Make sure the index holds every page's features, so that later changes are followed
        page by page (:meth:`update`): the station does this in the background after its first
        answer. The features are the basis's (:mod:`curator.engine.dedup.follow`, each made when
        asked for) when at most ``follow_max`` pages changed since it was saved, else a full scan's.

        An index answering from a kept result goes on answering from it meanwhile: the basis is
        loaded (or the scan made) into a new index apart (this one's lock is not held), whose state
        this one then takes in one step (:meth:`_adopt`). A caller whose pages changed meanwhile
        waits for it (:func:`index_for`) rather than load or scan a second time."""
        with self._lock:
            if self.scanned and self.kept is None:
                return
            running = self._building
            if running is None:
                if self.kept is None:
                    self.update(kept_answers=False)  # (nothing to answer from meanwhile)
                    return
                kept, done = self.kept, threading.Event()
                self._building = done
        if running is not None:  # (a second caller: the build in progress is the one)
            running.wait()
            return
        try:
            fresh = DedupIndex(self.wiki)
            fresh.niceness, fresh._stop = self.niceness, self._stop  # (stop() stops it too)
            fresh.update(kept_answers=False)  # (from the basis, else a full scan)
            with self._lock:
                if self.kept == kept:  # (else this one scanned meanwhile: its own result stands)
                    self._adopt(fresh, kept)
        finally:
            with self._lock:
                self._building = None
            done.set()

    def _adopt(self, fresh: DedupIndex, kept: bytes) -> None:
        """Take the state of ``fresh`` (a full scan of the pages this index answered for from the
        result kept under state ``kept``, or of a later state). Call with the lock held."""
        for name, value in vars(fresh).items():
            if name not in _OWN:
                setattr(self, name, value)
        if self.unkept == kept:
            self.unkept = None  # (that result is kept already)

    def _await_build(self) -> None:
        """Wait for a build in progress (:meth:`build`) when the kept result no longer answers for
        the pages as they are: the build's features then follow the change page by page, where
        answering now would take a second full scan. (Call without the lock.)"""
        done = self._building
        if done is not None and self.kept is not None and self.wiki.store.current() != self.kept:
            done.wait()

    # --- the kept result (:mod:`curator.engine.dedup.cache`) ----------------------------------------------------
    def kept_key(self) -> bytes:
        return dedup_cache.key_of(self.wiki.store.attachments_key(), SETTINGS)

    def _load_kept(self) -> bool:
        """Answer from the result a full scan kept for the store's current state, if there is one."""
        store = self.wiki.store
        token = store.current()  # (refreshed on first use, nothing decoded)
        # (saved under this state, or an earlier one no page changed since: a racy page that
        # settled, the store's own bookkeeping)
        found = store.derived_since(dedup_cache.NAME) if token is not None else None
        blob = found[0] if found is not None and not found[1] else None
        # (its pairs as a table, filed as an answer asks: a patched families answer asks for a
        # few pages' pairs, where filing every pair cost 0.9 s at 300,000 pages)
        kept = (dedup_cache.decode(blob, self.kept_key(), self._kept_base_blob, lazy=True) if blob is not None
                else None)
        if blob is None or kept is None:
            return False
        self._reset()
        self._take_pairs(kept)
        self._scores = kept.scores
        self.kept_inbound = kept.inbound
        self.kept_base = kept.base
        self.kept = self.at_state = token
        self.kept_digest = self._pairs_named(blob)
        self.pair_edits = self._pair_edits_of(self.kept_digest)
        return True

    def _pair_edits_of(self, named: bytes) -> PairEdits | None:
        """The pairs changed from an earlier kept result's to those named ``named``, as saved with
        the result kept last (:data:`~curator.engine.dedup.cache.PAIR_EDITS_NAME`); None: none saved."""
        edits = dedup_cache.decode_pair_edits(self.wiki.store.derived_any(dedup_cache.PAIR_EDITS_NAME), named)
        return None if edits is None else PairEdits(*edits)

    def _pairs_named(self, blob: bytes) -> bytes:
        """What names the pairs of the kept result ``blob``: the name of the earlier result with
        the very same pairs when the store says so (:data:`~curator.engine.dedup.cache.PAIRS_NAME`),
        else its own digest (:attr:`kept_digest`)."""
        digest = dedup_cache.kept_digest(blob)
        found = self.wiki.store.derived_any(dedup_cache.PAIRS_NAME)
        if found is not None and len(found) == 2 * len(digest) and found[:len(digest)] == digest:
            return found[len(digest):]
        return digest

    def _kept_base_blob(self) -> bytes | None:
        """The result saved whole last (what one kept as changes is made whole with)."""
        return self.wiki.store.derived_any(dedup_cache.BASE_NAME)

    # --- the basis a later process follows from (:mod:`curator.engine.dedup.follow`) ------------
    def _save_basis(self, token: bytes) -> bool:
        """Save what a later process needs to follow changes from this scan (its listed shingles,
        names and blocking tables) under the scan's store state; whether it was saved."""
        listed = self._listed
        if listed is None or len(listed) != len(self.features):
            return False
        feats = list(self.features.values())  # (in the scan's order, as listed)
        paths = [f.path for f in feats]
        tables = [*self._bands, self._samples]
        if any(len(t.paths) != len(paths) or t.extra or t.dead.any() for t in tables):
            return False  # (the tables as the scan filed them are what the basis keeps: a page placed since, none)
        digests, link_names = self._digests, self._scan_names
        if digests is None or len(digests) != len(feats) or link_names is None or len(link_names) != len(feats):
            return False  # (not a lean scan's: see _scan_all)
        if not self._write_basis(token, feats, paths, listed, digests, link_names):
            return False
        if self._partial:
            self._follow_own_basis(token)
        return True

    def _count_inbound(self, paths: list[str]) -> None:
        """Every page's linking pages (what the basis keeps, and the families' inbound counts).
        A long-lived process reads them from the operator's link index, which it keeps. A one-shot
        command, which asks nothing of links after its scan (``health`` counts its link figures
        and lint first), resolves every page's links a chunk of pages at a time with the names
        the scan found (:meth:`_inbound_in_chunks`): the index of every page and link at once was
        most of a scan's peak at scale (2.7 GB at 300,000 pages)."""
        wiki = self.wiki
        key = self._links_key()
        names = self._scan_names
        if memory.runs_for_long() or wiki.links_built() or names is None or len(names) != len(paths):
            self._scan_sources = _inbound_sources(wiki.links, paths)
        else:
            self._scan_sources = self._inbound_in_chunks(paths, names)
        self._scan_inbound = key, dict(zip(paths, self._scan_sources[0].tolist(), strict=True))
        if not memory.runs_for_long():
            wiki.release_links()

    def _inbound_in_chunks(self, paths: list[str], names: list[tuple[str, ...]]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_inbound_sources` of the operator's link index, without it: each page's links
        resolved as it resolves them (:meth:`~curator.engine.corpus.links.LinkIndex.resolver`,
        from every page's path, title and aliases), its record decoded a chunk of pages at a
        time; only the (linked page, linking page) slots are kept."""
        from curator.engine.corpus.links import LinkIndex, folder_of

        store = self.wiki.store
        resolver = LinkIndex.resolver(dict(zip(paths, names, strict=True)), store.attachments)
        resolve = resolver.resolve_key
        slot = {p: i for i, p in enumerate(paths)}
        pairs = array("q")  # linked page's slot << 32 | linking page's slot
        for path, page in _pages_in_chunks(store, paths):
            source, folder = slot[path], folder_of(path)
            for link in page.links:
                target = resolve(link[1], folder).path
                if target is not None and target != path:
                    at = slot.get(target)
                    if at is not None:
                        pairs.append(at << 32 | source)
        return _grouped_sources(pairs, len(paths))

    def _listed_only(self, feats: list[Features]) -> None:
        """Every page keeps only its listed shingles (what loading the basis gives it) from here
        on, not all of them: those were most of a scan's memory (114 MB at 32,000 pages), and the
        scan's comparisons read only the bodies. A score that needs the rest reads the page
        (:meth:`_every_shingle`); once the basis is saved this index follows it as a later process
        would (:meth:`_follow_own_basis`). Only where the basis will be saved: an index without
        every shingle and without a basis scans again at a change."""
        listed = self._listed
        assert listed is not None and len(listed) == len(feats)
        for f, few in zip(feats, listed, strict=True):
            f.shingles = few
        self._partial = {f.path for f in feats}
        self._close_spill()  # (no page's shingles are views of it any more)
        memory.trim()  # (the shingles were freed in 230,000 blocks: given back, not left scattered)

    def _close_spill(self) -> None:
        """Let go of the scan's spill file (:mod:`curator.engine.dedup.spill`): its mapping stays
        while a page's shingles are views of it (a scan that kept every page whole)."""
        spill, self._spill, self._spill_order = self._spill, None, None
        if spill is not None:
            spill.release()
            spill.close()

    def _writable_state(self) -> bool:
        """Whether the wiki's state folder (where the basis is written) can be written to."""
        folder = self.wiki.state_dir
        return os.access(folder if folder.is_dir() else folder.parent, os.W_OK)

    def _follow_own_basis(self, token: bytes) -> None:
        """After a scan saved its basis: this index becomes what a later process loading that basis
        holds (features made from it when asked for, its tables mapped from the file, not resident),
        the scan's pairs and scores kept. Unless the file does not read back as it was written:
        then the next update scans again."""
        basis = self._read_basis(self.basis_id)
        if basis is None:
            self.scanned = False
            return
        slot = basis.slots()
        self._adopt_basis(basis, slot)
        self._basis_differs = token, set(), set()
        self._basis_head, self._basis_digests = basis.head, _BySlot(slot, basis.digests)
        self._basis_sizes = _BySlot(slot, basis.stamps[:, 1])
        self._follow_inbound(basis, slot, set(), self.wiki.store.stamps())
        basis.release()
        memory.trim()  # (the scan's features and tables, gone: given back, not kept free in the heap)

    def compact_basis(self) -> bool:
        """Write the basis a full scan of the pages as they are would save, from the basis this
        index follows and the pages re-examined since (:mod:`curator.engine.dedup.compact`), once
        they are :data:`~curator.engine.dedup.compact.COMPACT_AT` or more, as :attr:`staged_basis`:
        the result naming it (:meth:`result_basis`) is kept with it in one transaction
        (:meth:`publish_staged`), after which this index follows it, as after a scan. Saved apart,
        a page another process changed between the two left the cache naming the new basis and a
        result of the old one, and the next process scanned. Whether it was written: not while the index answers for another state
        than the store's, a page came or went, a changed page's earlier text is unknown, a
        changed page's title or aliases moved (its links' counts are not followed), or a big
        shingle may have fallen back under the listed limit. Call with the lock held."""
        basis, store, features = self._listed_basis, self.wiki.store, self.features
        token = store.state
        since = sorted(self._since_basis)
        if (basis is None or not self.from_basis or self._unknown or not isinstance(features, BasisFeatures)
                or len(since) < dedup_compact.COMPACT_AT or token is None or self.at_state != token
                or not len(basis.source_counts) or basis.attachments != store.attachments_key()
                or not self._writable_state()):
            return False
        pages = store.stamps()
        slot = basis.slots()
        if pages is None or len(pages) != len(basis.paths) or len(features) != len(basis.paths) or any(
                p not in slot or p not in pages for p in since):
            return False
        changed: list[dedup_compact.Changed] = []
        texts: list[str] = []
        for path in since:
            f, at = features[path], slot[path]
            text = None
            if path not in self._partial:
                page = store.page(path)
                if page is None or f.stamp != pages.get(path):
                    return False
                link = _link_names(page)
                if link != tuple(basis.names_of(at)[10]):
                    return False  # (a link elsewhere may name it now, or no longer)
                text = dedup_compact.Text(_names_of(f, link), f.title_text, f.shingles)
                texts.append(path)
            changed.append(dedup_compact.Changed(
                at, np.asarray(f.bands, dtype=np.uint64), _sample(f.rare), [f.title_key] if f.title_key else [],
                [(f.folder, tag) for tag in f.tags], text))
        counts = self._shingle_counts
        if not isinstance(counts, dedup_follow.FollowedCounts) or counts is not basis.counts:
            return False  # (not the basis's counts as followed)
        refused = self._refused
        if (memory.runs_for_long() and refused is not None and refused[0] == self.basis_id
                and len(since) < refused[1] + dedup_detached.RETRY_AFTER):
            # (one made for pages that moved on before it was kept, on a wiki written every few
            # seconds: made again once more pages changed, not at each keep, 5-6 s of a core at
            # 100,000 pages each time, in the station's worker or the MCP server)
            return False
        if dedup_detached.hands_off():
            # a one-shot command answers now; a process of its own makes the basis (and keeps
            # the result, see FamilyAnswers._keep)
            self.compacting_elsewhere = dedup_detached.start(self.wiki.root, self.wiki.state_dir, basis.id, len(since))
            return False
        try:
            made = dedup_compact.compacted(basis, changed, counts, self._counts_of,
                                           self._sources_now(basis, slot, texts), os.urandom(16), self._head())
        except dedup_follow.DamagedBasis:
            return False  # (the follow reading that part scans, which saves a new basis)
        if made is None:
            return False
        self.staged_basis = self._stage_basis(made, token, len(since))
        return self.staged_basis is not None

    def publish_staged(self, rows: list[tuple[str, bytes]]) -> bool:
        """Name the :attr:`staged_basis` in the page cache, move its file into place and save
        ``rows`` (the result naming it), all in one transaction, refused when another process
        changed pages since it was made; then follow it, as after a scan. Whether it was
        published (if not, its file is gone and this index follows the old basis still)."""
        staged, self.staged_basis = self.staged_basis, None
        assert staged is not None
        if not self._name_staged(staged, rows):
            self._refused = self.basis_id, staged.since
            return False  # (the pages moved on meanwhile: the follow goes on from the old basis)
        self.basis_id = staged.id
        # From here on the index follows the new basis, as after a scan: its counts are the new
        # basis's (the shingles only changed pages held are among its keys now), its pairs kept.
        self._extra_counts, self._extra_sorted = defaultdict(int), None
        self._follow_own_basis(staged.token)
        return True

    def drop_staged(self) -> None:
        """Let go of a :attr:`staged_basis` no result was kept with: its file is removed."""
        staged, self.staged_basis = self.staged_basis, None
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged.path)

    def _sources_now(self, basis: dedup_follow.Basis, slot: Mapping[str, int],
                     texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each page's linking pages now (:func:`_grouped_sources`): the basis's, less the links
        of the pages whose text changed (``texts``), plus those pages' links now. Only while no
        link resolves elsewhere than at the basis (see :meth:`_follow_inbound`)."""
        n = len(basis.paths)
        gone = np.zeros(n, dtype=bool)
        gone[[slot[p] for p in texts]] = True
        sources = np.asarray(basis.sources, dtype=np.int64)
        targets = np.repeat(np.arange(n, dtype=np.int64), np.asarray(basis.source_counts, dtype=np.int64))
        stays = ~gone[sources]
        pairs = [targets[stays] << 32 | sources[stays]]
        for path in texts:
            found = [slot[t] for t in self.wiki.links_out(path) if t in slot]
            pairs.append((np.array(found, dtype=np.int64) << 32) | slot[path])
        return _grouped_sources(np.concatenate(pairs), n)

    def _read_basis(self, saved: bytes) -> dedup_follow.Basis | None:
        """:func:`read_basis` of this wiki."""
        return read_basis(self.wiki.state_dir, saved)

    def _write_basis(self, token: bytes, feats: list[Features], paths: list[str], listed: list[np.ndarray],
                     digests: np.ndarray, link_names: list[tuple[str, ...]]) -> bool:
        """Write the basis of this scan (:meth:`_save_basis`); whether it was written."""
        keys, counts = self._shingle_keys, self._shingle_counts
        assert isinstance(counts, np.ndarray)  # (a scan's, counted whole: never a follow's)
        limit = self.boilerplate_pages + dedup_follow.FOLLOW_MARGIN
        slots = [i for i, f in enumerate(feats) if len(f.bands)]
        if self._scan_sources is None or len(self._scan_sources[0]) != len(paths):
            self._count_inbound(paths)
        sources = self._scan_sources
        assert sources is not None  # (counted above)
        self.basis_id = os.urandom(16)
        self._since_basis = set()
        slot = self._bands[0].slot
        names_at, names = _names_chunks(feats, link_names)
        lengths = np.fromiter((len(x) for x in listed), dtype=np.int64, count=len(listed))
        starts = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        steps = _listed_chunks(keys, listed, lengths)
        tables, rows, none = self._bands, len(slots), np.zeros((0, BANDS), dtype=np.uint64)

        def band_rows() -> Iterator[np.ndarray]:
            step = dedup_follow.CONVERT_ROWS
            for start in range(0, rows, step):
                yield np.array([feats[i].bands for i in slots[start:start + step]], dtype=np.uint64).reshape(-1, BANDS)

        # (the band rows and tables written a block, a band, at a time as the file is: stacked
        # first, they were copies of them all held at the scan's peak)
        streams = {"bands": dedup_follow.Streamed(np.dtype(np.uint64), (rows, BANDS), band_rows),
                   "band_keys": dedup_follow.Streamed(np.dtype(np.uint64), (BANDS, rows),
                                                      lambda: (np.asarray(t.keys) for t in tables)),
                   "band_owners": dedup_follow.Streamed(np.dtype(np.int32), (BANDS, rows),
                                                        lambda: (np.asarray(t.owners, dtype=np.int32) for t in tables))}
        basis = dedup_follow.Basis(
            self.basis_id, self.boilerplate_pages, paths,
            np.array([f.stamp for f in feats], dtype=np.int64).reshape(len(feats), 2), [f.title_text for f in feats],
            dedup_follow.Chunked(names_at, chunks=names), keys, counts, counts > limit,
            dedup_follow.Chunked(starts * 4, chunks=steps), lengths,
            np.array(slots, dtype=np.int64), none,
            self._slugs.keys, self._slugs.owners, none.T, none.T.astype(np.int32),
            self._samples.keys, self._samples.owners,
            dedup_follow.groups_of(self._title_groups, slot), dedup_follow.groups_of(self._tag_index, slot),
            self.wiki.store.attachments_key(),
            sources[0], sources[1], self._head(), digests, streams=streams)
        # The basis is a file beside the page cache (written in 0.05 s where the database took
        # 0.9 s at 32,000 pages); the cache holds its id under the scan's state, which says
        # what changed since and which file is current.
        self._publish_basis(basis, token)  # (not when the pages moved on: a later answer saves one)
        return True

    def _stage_basis(self, basis: dedup_follow.Basis, token: bytes, since: int = 0) -> StagedBasis | None:
        """``basis`` written beside the page cache under a temporary name, to be moved into place
        as the cache names it (None: it cannot be written, a read-only wiki)."""
        target = self.wiki.state_dir / dedup_follow.FILE
        try:
            tmp = staged_write(target, dedup_follow.encode_parts(basis, dedup_follow.key_of(SETTINGS)), fsync=False)
        except OSError:
            return None
        try:
            # (a rename keeps the size, mtime, inode and device the stamp is made of)
            return StagedBasis(basis.id, basis.id + dedup_follow.stamp_of(os.stat(tmp)), tmp, token, since)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return None

    def _publish_basis(self, basis: dedup_follow.Basis, token: bytes) -> bool:
        """Write ``basis`` beside the page cache and name it there under the state ``token`` it
        was made for, or neither: the file is moved into place inside the transaction that names
        it, which is refused when another process changed pages meanwhile. (Written first, then
        refused, the old file was gone and the cache still named it: the next process scanned,
        45 s at 100,000 pages, each time an agent appended during the 5-7 s a new basis takes.)
        Whether it was published."""
        staged = self._stage_basis(basis, token)
        if staged is None:
            return False  # (a read-only wiki: the next process scans)
        return self._name_staged(staged, [])

    def _name_staged(self, staged: StagedBasis, rows: list[tuple[str, bytes]]) -> bool:
        """Name ``staged`` in the page cache under the state it was made for, with ``rows``
        beside it, its file moved into place in that same transaction; or none of it (its file
        removed). Whether it was named."""
        target = self.wiki.state_dir / dedup_follow.FILE
        named = False
        try:
            named = self.wiki.store.save_derived_together([(dedup_follow.NAME, staged.saved), *rows],
                                                          state=staged.token,
                                                          then=lambda: os.replace(staged.path, target))
        except OSError:
            named = False
        finally:
            if not named:
                with contextlib.suppress(OSError):
                    os.unlink(staged.path)
        return named

    def _load_basis(self) -> set[str] | None:
        """Take the features and tables of the basis a scan saved (:mod:`curator.engine.dedup.follow`)
        when at most FOLLOW_MARGIN pages changed since; return those pages (None: no usable basis,
        scan). Scores the result kept since holds for two pages whose features are still the
        basis's are taken too (a family answer asks for thousands)."""
        store = self.wiki.store
        pages = store.stamps()
        found = store.derived_since(dedup_follow.NAME) if store.state is not None else None
        if found is None:
            return None
        basis = self._read_basis(found[0])
        if basis is None:
            return None  # (damaged, or a later scan's whose state is not saved)
        # The pages changed since the basis are those the store's log names (every page written,
        # added or removed by a state since: its contract, and what lint and link repair follow
        # too): only theirs are looked at, never every page's stamp (0.4 s at 300,000 pages).
        most = dedup_follow.follow_max(len(basis.paths))
        if len(found[1]) > 2 * most:
            return None  # (quick bound before the exact one below)
        slot = known = basis.slots()
        stale = {p for p in found[1] if p in known or p in pages}
        differs = {p for p in stale if p in known and pages.get(p) != basis.stamp(known[p])}
        added = {p for p in stale if p not in known}
        if len(stale) > most:
            return None
        digests, sizes = _BySlot(slot, basis.digests), _BySlot(slot, basis.stamps[:, 1])
        held = stale - added
        old = self._old_shingles(basis.head, digests, sorted(held), sizes)
        if len(held) - len(old) > dedup_follow.FOLLOW_MARGIN:
            return None
        found = store.derived_since(dedup_cache.NAME)
        kept = (dedup_cache.decode(found[0], self.kept_key(), self._kept_base_blob, lazy=True)
                if found is not None else None)
        if found is None or kept is None or kept.basis[0] != basis.id:
            return None  # (the pairs of the pages that did not change are a kept result's)
        self._reset()
        self._adopt_basis(basis, slot)
        self._basis_differs = store.state, differs, added
        self.kept_base = kept.base
        self._basis_head, self._basis_digests, self._basis_sizes = basis.head, digests, sizes
        for path, every in old.items():  # (their whole text at the basis: taken out exactly)
            self.features[path].shingles = every
            self._partial.discard(path)
        # The kept result already holds the pairs of the pages changed since the basis but not
        # since it (and of those it discounted anew): they are made current without being
        # examined again; only the pages changed since the kept result are (the update).
        # (a page changed since the basis that the kept result does not name as followed is
        # examined again too: its pairs there may be the basis's)
        since_kept = (stale & found[1]) | (stale - set(kept.basis[1]))
        then = kept.followed
        if then is None or any(p in then and p not in known for p in since_kept):
            # (a page added since the basis and changed again since the kept result: what it
            # held then is no basis page's features) every page since the basis examined again
            self._take_kept(kept, stale | set(kept.basis[1]))
            self._reexamine = set(kept.basis[1]) - stale
            self._follow_inbound(basis, slot, stale, pages)
            self._carry_from(kept, found, pages, slot)
            return stale
        out, back = [], []
        for path in sorted(since_kept & then.keys()):
            # the counts and tag groups as the kept result's pairs were verified with: these
            # pages' text then (their other names stay the basis's: the update forgets them)
            f = self.features[path]
            shingled, tags = then[path]
            if path in self._partial:
                self._unknown.add(path)  # (its big shingles at the basis stay in the counts)
            out.append(f.shingles)
            back.append(shingled)
            self._untag(f)
            f.shingles, f.tags = shingled, frozenset(tags)
            self._tag(f)
            self._partial.discard(path)
        self._add_counts_of(out, -1)
        self._add_counts_of(back, +1)
        if len(self._unknown) > dedup_follow.FOLLOW_MARGIN:
            return None
        self._take_kept(kept, since_kept)
        self._follow_inbound(basis, slot, stale, pages)
        if not self._settle(stale - since_kept, set(kept.basis[1]) - stale, pages, then):
            return None
        self._carry_from(kept, found, pages, slot)
        return since_kept

    def _carry_from(self, kept: dedup_cache.Kept, found: tuple[bytes, set[str]], pages: Mapping[str, object],
                    slot: Mapping[str, int]) -> None:
        """Carry over what the kept result ``found`` (its blob, the pages changed since) loaded
        as ``kept`` says, where it still holds (:meth:`_carried_from`): its count, the name of its
        pairs, and the pairs changed since the pairs an earlier result named, saved with it."""
        self.carried = self._carried_from(kept, found[1], pages, slot)
        if self.carried is None:
            self.kept_digest = self.followed_count = self.pair_edits = None
            return
        self.kept_digest = self._pairs_named(found[0])
        self.followed_count = FollowedCount(self.carried.count, {})
        self.pair_edits = self._pair_edits_of(self.kept_digest)

    @staticmethod
    def _carried_from(kept: dedup_cache.Kept, since: set[str], pages: Mapping[str, object],
                      slot: Mapping[str, int]) -> Carried | None:
        """What a followed result carries over while the pairs stay its own; None when it holds
        no count, or a page came or went since it (``since``: the pages changed since it was
        kept), which the pairs alone do not show: a deleted page's pairs stay where it was until
        it is asked for, and a family without it is a smaller one."""
        if kept.count[1] < 0:
            return None
        moved, then = set(kept.basis[1]), kept.followed or {}
        for path in since:  # (a page then: a basis page not changed before it, or one it followed)
            if path not in pages or not ((path in slot and path not in moved) or path in then):
                return None
        return Carried(kept.count, kept.scores, kept.changed_scored, kept.inbound)

    def _head(self) -> str:
        """The commit HEAD is at ("" outside git, or when it cannot be read)."""
        from curator.engine.write.actions import git_of

        try:
            return git_of(self.wiki).head() or ""
        except (CuratorError, OSError):
            return ""

    def _old_shingles(self, head: str, digests: Mapping[str, int], paths: list[str],
                      sizes: Mapping[str, int] | None = None) -> dict[str, np.ndarray]:
        """Every shingle of each of ``paths`` as the basis's scan read it (their ``digests``
        tell): for a page only appended to since, from its text now (:meth:`_appended_to`, its
        file's size then among ``sizes``); for the others, from the basis's commit ``head``'s
        text, where the page's is the basis's (one ``git cat-file`` for all)."""
        paths = [p for p in paths if p in digests]
        out: dict[str, np.ndarray] = {}
        sizes = self._basis_sizes if sizes is None else sizes
        for path in paths:
            found = self._appended_to(path, digests[path], sizes.get(path))
            if found is not None:
                out[path] = found
        paths = [p for p in paths if p not in out]
        if not head or not paths:
            return out
        from curator.engine.write.actions import git_of

        try:
            blobs = git_of(self.wiki).show_many([(head, p) for p in paths])
        except (CuratorError, OSError, ValueError):
            return out
        for path in paths:
            data = blobs.get((head, path))
            if data is None:
                continue
            every = shingles(body_of(data))
            if dedup_follow.digest_of(every) == digests[path]:
                out[path] = every
        return out

    def _appended_to(self, path: str, digest_then: int, size_then: int | None) -> np.ndarray | None:
        """Every shingle of ``path``'s text at the basis, found in its text now when it was only
        appended to since (an agent's fact: the body grows at its end; the frontmatter's date
        changes, not its length): the body cut where the file's size then puts its end, or at a
        line's end near there, whose shingles have the basis's digest. None otherwise (git has the
        text then). Read from git, the text of a page of a folder of 90,000 cost a process
        following an append 30-45 ms at 100,000 pages (git reads the folder's whole tree)."""
        if size_then is None or size_then <= 0:
            return None
        try:
            data = self._read_now[path] = read_bytes(self.wiki.root, path)
        except OSError:
            return None
        body = body_of(data).encode("utf-8", "surrogateescape")
        end = size_then - (len(data) - len(body))  # (where the body then ended, the head's length unchanged)
        if not 0 < end < len(body):
            return None
        ends = [end, *sorted((at + 1 for at in _line_ends(body, end - _APPEND_SLACK, end + _APPEND_SLACK)),
                             key=lambda at: abs(at - end))]
        for cut in dict.fromkeys(ends[:4]):
            try:
                every = shingles(body[:cut].decode("utf-8"))
            except UnicodeDecodeError:
                continue
            if dedup_follow.digest_of(every) == digest_then:
                return every
        return None

    def _read_back(self, paths: Iterable[str]) -> None:
        """Give the pages of ``paths`` still holding only their listed shingles (loaded from the
        basis) every shingle they had at the basis, where git has their text then: a change to
        them then leaves the counts exactly (see follow)."""
        partial = sorted(p for p in paths if p in self._partial)
        if not partial:
            return
        for path, every in self._old_shingles(self._basis_head, self._basis_digests, partial).items():
            self.features[path].shingles = every
            self._partial.discard(path)

    def page_set(self) -> AbstractSet[str]:
        """The pages the index holds features of, as a set (or the features' keys view)."""
        features = self.features
        return features.held() if isinstance(features, BasisFeatures) else features.keys()

    def _stamp_of(self, path: str) -> tuple[int, int] | None:
        """The (mtime_ns, size) ``path``'s features were computed from (None: it has none),
        without making a page's features from the basis (its names hold the stamp)."""
        features = self.features
        if isinstance(features, BasisFeatures):
            return features.stamp(path)
        f = features.get(path)
        return None if f is None else f.stamp

    def _holders(self, crossed: np.ndarray) -> set[str]:
        """The pages holding one of the ``crossed`` shingles: those still as the basis listed them
        found in one pass over the basis's listed shingles, the others page by page."""
        basis = self._listed_basis
        if not self.from_basis or basis is None:
            return {p for p, f in self.features.items() if len(f.shingles) and common(f.shingles, crossed)}
        places = np.searchsorted(basis.keys, crossed)  # (the crossed shingles' places: the rows hold places)
        places = places[(places < len(basis.keys)) & (basis.keys[np.minimum(places, len(basis.keys) - 1)] == crossed)]
        found = basis.holding(places)
        paths = basis.paths
        out = {paths[i] for i in found if paths[i] in self._partial}
        partial = self._partial
        made = self.features.made() if isinstance(self.features, BasisFeatures) else self.features.items()
        out.update(p for p, f in made  # (a page still partial is the basis's: found above)
                   if p not in partial and len(f.shingles) and common(f.shingles, crossed))
        return out

    def _big_crossing(self, crossed: np.ndarray) -> bool:
        """Whether a shingle no page of the basis lists (big) may have crossed a limit: one that
        did, or one whose count, less the changed pages that may still hold it uncounted, is no
        longer above the boilerplate limit."""
        big = self._big_at
        if not len(big):
            return False
        keys = self._shingle_keys
        if len(crossed):
            at = np.minimum(np.searchsorted(keys, crossed), len(keys) - 1)
            hit = keys[at] == crossed
            if hit.any() and np.isin(at[hit], big).any():
                return True
        return bool((self._shingle_counts[big] - len(self._unknown) <= self.boilerplate_pages).any())

    def _follow_inbound(self, basis: dedup_follow.Basis, slot: Mapping[str, int], stale: set[str],
                        pages: dict[str, tuple[int, int]]) -> None:
        """Every page's inbound count (what the families' keep rule and impact read) from the
        basis's linking pages (:func:`~curator.engine.dedup.follow.inbound_followed`), without
        building the link index (0.8 s at 32,000 pages): the changed pages' links counted as
        they are now. Only while no link can resolve differently than at the basis
        (:func:`_links_as_at_basis`); else the link index answers."""
        if not _links_as_at_basis(self.wiki.store, basis, slot, stale, len(pages), pages):
            return
        counts, _ = dedup_follow.inbound_followed(basis, slot, stale, self.wiki.links_out)  # (no page added: none other)
        # (the pages whose count is not the scan's: what a result kept as changes to the scan's holds)
        moved = np.flatnonzero(counts != basis.source_counts).tolist()
        self.inbound_moved = {basis.paths[i] for i in moved}
        frame = basis.id, {basis.paths[i]: int(counts[i]) for i in moved}
        self._scan_inbound = self._links_key(), _BySlot(slot, counts, frame)
        self._inbound_stale = set(stale)

    def _follow_inbound_again(self, stale: Iterable[str], pages: dict[str, tuple[int, int]]) -> None:
        """After an update of an index loaded from the basis: the inbound counts followed again
        (:meth:`_follow_inbound`, every page changed since the basis counted as it is now), so
        that the families' keep rule never builds the link index for them (decoding every page:
        1.4 s and 230 MB at 32,000 pages, in the station's dedup worker after each change).
        Each update reads the links of every page changed since the basis: past FOLLOW_MAX of
        them (a long day of agents' appends), the link index answers instead, once built."""
        followed, basis = self._inbound_stale, self._listed_basis
        self._inbound_stale = None
        if followed is not None and basis is not None:
            since = followed.union(stale)
            found = self._scan_inbound
            if since == followed and found is not None and found[0] == self._links_key():
                # (every one counted as it is now, for this very state: the load just followed them)
                self._inbound_stale = followed
                return
            if len(since) <= dedup_follow.FOLLOW_MAX:
                self._follow_inbound(basis, basis.slots(), since, pages)

    def _carry_inbound(self) -> None:
        """The store's state moved but no page did (a page written within its mtime tick
        settled, the same bytes; the store's own bookkeeping): the inbound counts of the state
        before hold for this one, so they are kept for it. Otherwise the families' keep rule
        built the whole link index again (decoding every page: 1.9 s and 200 MB in the station's
        dedup worker, whose store refreshes in full now and then). Counts for an older state
        than the index's last update never get here: an update that moves pages without
        following them drops them."""
        found, key = self._scan_inbound, self._links_key()
        if found is not None and found[0][0] is not None and key[0] is not None and found[0][1] == key[1]:
            self._scan_inbound = key, found[1]

    def _adopt_basis(self, basis: dedup_follow.Basis, slot: Mapping[str, int]) -> None:
        """Every page's features and the blocking tables as the basis's scan had them: the tables
        as saved, a page's features and the group of a title or a tag made when asked for."""
        self.boilerplate_pages = basis.boilerplate_pages
        keys, counts = self._shingle_keys, self._shingle_counts = basis.keys, basis.counts  # (decoded for this index alone)
        none = np.zeros(0, dtype=np.uint64)
        band_slots, band_rows = basis.band_slots, basis.bands  # (a page's row found when it is made)
        paths, boilerplate = basis.paths, self.boilerplate_pages

        def make(i: int) -> Features:
            """Page ``i``'s features as the scan had them (its body and rare text: its listed
            shingles less those on too many pages, as _discount leaves them)."""
            (stamp, folder, title_key, title_text, title_numbers, slug, slug_alnum, slug_words, slug_numbers, tags,
             _) = basis.names_of(i)
            rows = basis.rows_of(i)
            listed, on = keys[rows], counts[rows]
            body = listed[on <= boilerplate]
            f_body, f_rare, f_bands = none, none, list[int]()
            if len(body) >= MIN_SHINGLES:
                rare = listed[on <= CONTAINMENT_MAX_PAGES]
                row = int(np.searchsorted(band_slots, i))
                f_body, f_rare = body, (rare if len(rare) >= MIN_SHINGLES else none)
                f_bands = band_rows[row].tolist() if row < len(band_slots) and band_slots[row] == i else []
            return Features(paths[i], (stamp[0], stamp[1]), folder, title_key, title_text, tuple(title_numbers), slug,
                            slug_alnum, tuple(slug_words), tuple(slug_numbers), frozenset(tags), listed, f_body, f_rare,
                            f_bands)

        self._title_groups = _BasisGroups(basis.title_groups, paths)
        self._tag_index = _BasisGroups(basis.tag_groups, paths)
        self._titles = list(basis.titles)
        self._title_len = [len(t) for t in self._titles]
        self._lengths = None
        self._title_slot = _Slots(slot)
        self._title_paths = list(paths)
        self.features = BasisFeatures(paths, make, basis.stamp, slot, basis.stamps)
        self._slugs.build(paths, basis.slug_entries, basis.slug_owners, slot, ordered=True)
        for b, table in enumerate(self._bands):
            if len(band_slots):
                table.build(paths, basis.band_keys[b], basis.band_owners[b], slot, ordered=True)
            else:
                table.build(paths, none, np.zeros(0, dtype=np.int64), slot, ordered=True)
        self._samples.build(paths, basis.sample_keys, basis.sample_owners, slot, ordered=True)
        self.basis_id, self._since_basis = basis.id, set()
        self.from_basis, self._partial = True, set(paths)
        self._listed_basis = basis
        self._big_at = np.flatnonzero(basis.big)
        self.scanned = True

    def _take_kept(self, kept: dedup_cache.Kept, since: set[str]) -> None:
        """The pairs and scores of a result kept since the basis (under any later state): the
        pairs as they were, to be forgotten for the pages changed ``since`` it (the next
        update); the scores of two pages whose features are the same now as they were then
        (the others' features are made what they were then by :meth:`_settle`)."""
        self._take_pairs(kept)
        # (not filed in _scores pair by pair, 48,000 pairs at 100,000 pages: looked up there when asked)
        self._kept_scores, self._kept_void = kept.scores, set(since)

    def _settle(self, changed: set[str], redo: set[str], pages: dict[str, tuple[int, int]],
                followed: Mapping[str, tuple[np.ndarray, tuple[str, ...]]]) -> bool:
        """Make the features, counts and blocking keys of the pages the kept result followed
        what they were for it: those ``changed`` since the basis (their text is the kept
        result's) and those it discounted anew (``redo``: filed again under the counts as they
        now are), their pairs and scores kept as it holds them. A page's shingles are those the
        kept result keeps of it (``followed``), its file read again only where it keeps none or
        the racy-stamp guard still checks the page (read and shingled again, each of up to 64
        pages cost a process following an append 1-2 ms). False when too many of them have an
        earlier text git cannot give (see follow): the caller scans."""
        self._unknown.update(p for p in changed if p in self._partial)
        if len(self._unknown) > dedup_follow.FOLLOW_MARGIN:
            return False
        store, root = self.wiki.store, self.wiki.root
        fresh: dict[str, Features] = {}
        for path in sorted(changed):
            page = store.page(path) if path in pages else None
            if page is None:
                continue
            racy = store.racy_digest(path)
            kept = followed.get(path)
            if kept is not None and racy is None:
                fresh[path] = features_of(page, kept[0])
                continue
            data = read_bytes(root, path)
            fresh[path] = features_of(page, shingles(body_of(data)))
            self._settled_same = self._settled_same and (racy is None or racy == digest(data))
        again = [p for p in sorted(redo) if p in self.features]
        gone: list[np.ndarray] = []
        for path in sorted(changed):
            f = self.features.pop(path, None)
            if f is not None:
                self._unindex(f)
                self._samples.remove(path)
                gone.append(f.shingles)
            self._every.pop(path, None)
        self._add_counts_of(gone, -1)
        for path in again:
            f = self.features[path]
            self._unindex(f)
            self._samples.remove(path)
        self._partial.difference_update(changed)
        for f in fresh.values():
            self.features[f.path] = f
        self._add_counts_of((f.shingles for f in fresh.values()), +1)
        self._place_all([*fresh.values(), *(self.features[p] for p in again)])
        self._since_basis.update(changed)
        self._since_basis.update(again)
        return True

    def followed_shingles(self) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
        """What a kept result of this index keeps of the pages it followed from the basis: every
        shingle and the tags of each whose whole text is known (:attr:`dedup_cache.Kept.followed`)."""
        if self.staged_basis is not None:
            return {}  # (it is the pages as they are: none followed since)
        features, partial = self.features, self._partial
        return {p: (features[p].shingles, tuple(sorted(features[p].tags)))
                for p in sorted(self._since_basis) if p in features and p not in partial}

    def result_basis(self) -> tuple[bytes, tuple[str, ...]]:
        """What a kept result of this index names as its basis (:attr:`dedup_cache.Kept.basis`):
        the basis it made, while that is staged to be kept with the result (no page since)."""
        if self.staged_basis is not None:
            return self.staged_basis.id, ()
        return self.basis_id, tuple(sorted(self._since_basis))

    def _every_shingle(self, f: Features) -> np.ndarray:
        """All of ``f``'s shingles (a page loaded from a basis holds only its listed ones; the
        rest, boilerplate, are read again when a score asks for them)."""
        if f.path not in self._partial:
            return f.shingles
        found = self._every.get(f.path)
        if found is None:
            found = self._every[f.path] = shingles(body_of(read_bytes(self.wiki.root, f.path)))
        return found

    def _take_pairs(self, kept: dedup_cache.Kept) -> None:
        """Every verified pair of a kept result, filed with both pages' partners (one decoded
        as a table: filed as asked, :meth:`file_pairs`)."""
        if kept.table is not None:
            self._unfiled = kept.table
            return
        for signal in SIGNALS:
            pairs = self.pairs[signal] = kept.pairs.get(signal, {})
            partners = self.partners[signal]
            for a, b in pairs:
                partners[a].add(b)
                partners[b].add(a)

    @property
    def lock(self) -> threading.RLock:
        """Held while the index changes or answers (reentrant: an answer may scan)."""
        return self._lock

    # --- scores of a pair ------------------------------------------------------------------------
    def scores(self, a: str, b: str) -> dict[str, float]:
        """Every signal's score for the pair (whether it fired or not), computed once per version
        of the two pages (any pair: one a kept result does not hold takes a full scan first)."""
        with self._lock:
            try:
                return self.pair_scores(a, b)
            except (NeedScan, dedup_follow.DamagedBasis):
                self.scan()
                return self.pair_scores(a, b)

    def pair_scores(self, a: str, b: str) -> dict[str, float]:
        """:meth:`scores`; raises :class:`NeedScan` for a pair a kept result does not hold."""
        key = pair_key(a, b)
        cached = self._scores.get(key)
        if cached is None and key[0] not in self._kept_void and key[1] not in self._kept_void:
            cached = self._kept_scores.get(key)
        if cached is None:
            if self.kept is not None:
                raise NeedScan(key)
            cached = self._scores[key] = self._compute_scores(*key)
            self._scored[key[0]].add(key)
            self._scored[key[1]].add(key)
        return dict(cached)

    def _compute_scores(self, a: str, b: str) -> dict[str, float]:
        features = self.features
        fa, fb = (features.lend(a), features.lend(b)) if isinstance(features, BasisFeatures) else (features[a],
                                                                                                     features[b])
        title = 1.0 if fa.title_key and fa.title_key == fb.title_key else fuzz.ratio(fa.title_text, fb.title_text) / 100
        if len(fa.body) and len(fb.body):
            body, (sa, sb) = array_jaccard(fa.body, fb.body), (fa.body, fb.body)
        else:
            sa, sb = self._every_shingle(fa), self._every_shingle(fb)
            body = array_jaccard(sa, sb)
        contained = containment(fa.rare, fb.rare) if len(fa.rare) and len(fb.rare) else containment(sa, sb)
        return {"title": round(title, 3), "tags": round(jaccard(fa.tags, fb.tags), 3),
                "slug": round(similarity(fa.slug_feats, fb.slug_feats), 3), "body": round(body, 3),
                "containment": round(contained, 3)}


# --- the per-wiki index -------------------------------------------------------------------------

def held_index(wiki: Wiki) -> DedupIndex:
    """The wiki's dedup index, held by its session, as it is (:func:`index_for` brings it up to
    date)."""
    session = wiki.session
    with session.services_lock:
        return session.service(DedupIndex, lambda: DedupIndex(wiki))


def index_for(wiki: Wiki, niceness: int = 0, full: bool = False) -> DedupIndex:
    """The wiki's dedup index (held by its session), brought up to date: the first time, from the
    result a full scan kept for the pages as they are (:mod:`curator.engine.dedup.cache`), else by a full scan;
    with ``full``, always holding every page's features (:meth:`DedupIndex.build`), so that a
    change is followed page by page. ``niceness`` above 0: a scan's worker processes run at that
    lower CPU priority (the station's background work, docs/design.md §8)."""
    index = held_index(wiki)
    index._await_build()
    with index._lock:
        index.niceness = niceness
        index.update()
    if full:
        index.build()
    return index


def dismiss(wiki: Wiki, a: str, b: str, actor: Actor = OPERATOR) -> ActionResult:
    """Record "not duplicates" for pages ``a`` and ``b`` in :data:`DECISIONS_FILE` (one commit)."""
    return dismiss_pages(wiki, [a, b], actor)


def dismiss_pages(wiki: Wiki, refs: Iterable[str], actor: Actor = OPERATOR,
                  member: str | None = None) -> ActionResult:
    """Record in :data:`DECISIONS_FILE` (one commit, operator-only like every decision file) that
    no two of ``refs`` are duplicates (a pair, or a whole family); with ``member``, only that
    ``member`` is a duplicate of none of ``refs`` (one page taken out of its family)."""
    paths = list(dict.fromkeys(wiki.find(r, actor).path for r in refs))
    m = wiki.find(member, actor).path if member is not None else None
    if m is not None:
        paths = [p for p in paths if p != m]
        group = sorted([m, *paths])
        wanted = {pair_key(m, p) for p in paths}
        target = f"{m} apart from {' + '.join(paths)}"
    else:
        group = sorted(paths)
        wanted = {pair_key(a, b) for a, b in itertools.combinations(group, 2)}
        target = " + ".join(group)

    def apply(ctx: ActionContext) -> None:
        if not wanted:
            raise Invalid(message="a page is not a duplicate of itself; name two different pages")
        data = load_decisions(wiki)
        ctx.data["pages"] = group
        if m is not None:
            ctx.data["member"] = m
        names = (f"{m} and {', '.join(paths)}" if m is not None
                 else f"{group[0]} and {group[1]}" if len(group) == 2
                 else f"the {len(group)} pages {', '.join(group)}")
        if wanted <= dismissed_pairs(wiki):
            ctx.status = Status.UNCHANGED
            ctx.message = f"{names} are already marked as not duplicates"
            return
        entry: dict[str, Any] = {"pages": group, "by": str(actor), "date": _dt.date.today().isoformat()}
        if m is not None:
            entry["member"] = m
        data["not_duplicates"].append(entry)
        ctx.journal["pages"] = group
        ctx.write_text(DECISIONS_FILE, render_decisions(data))
        ctx.status = Status.DISMISSED
        ctx.message = (f"{m} marked as a duplicate of none of {', '.join(paths)}" if m is not None
                       else f"{names} marked as not duplicates")

    return run_action(wiki, actor, "dismiss", target, apply)
