"""The dedup scan's building blocks: stable key hashes, the sorted key tables that block slugs and
MinHash bands, the bulk word hashes of bodies, each pinned against the plain computation
it replaces."""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

from curator.engine.dedup import index as dedup

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # the words of a lowercased ASCII text


def _reference_shingles(text: str) -> np.ndarray:
    """Shingles as the regex tokeniser and :func:`dedup.word_id` give them, word by word (the
    definition the bulk word hashing must keep)."""
    low = text.lower()
    words = _ASCII_TOKEN.findall(low) if low.isascii() else dedup._TOKEN.findall(low)
    ids = np.array([dedup.word_id(w) for w in words], dtype=np.uint64)
    if len(ids) >= dedup.SHINGLE_WORDS:
        return dedup._sorted_unique(dedup._hashes(ids, dedup.SHINGLE_WORDS))
    return dedup._hashes(ids, len(ids)) if len(ids) else ids[:0]


def test_bulk_word_hashes_are_each_words_own_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every word of many texts hashed at once from prefix sums (ASCII texts by bit tests on their
    bytes, the others' regex words joined by spaces) = :func:`dedup.word_id` of each word: random
    mixed text, non-ASCII letters, CJK, a Kelvin sign that lowercases to ASCII, lone surrogates,
    empty texts, long words, texts spread over several blocks and a text bigger than a block."""
    rng = random.Random(7)
    alphabet = "abcXYZ019 _-\t\n.,;:'\"()[]#*@`{K\u212a\u00e9\u00df\u4e00\u0130"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    texts += ["".join(chr(rng.randint(0, 127)) for _ in range(rng.randint(0, 200))) for _ in range(500)]
    texts += ["", " ", "a", "A b C d E", "x" * 300 + " y", "caf\u00e9 \ud800 na\u00efve \u4e00\u4e8c",
              "\u212a" * 3 + " kelvin", " ".join(f"w{i}" for i in range(5000))]
    for text, got in zip(texts, dedup.shingles_many(texts), strict=True):
        assert np.array_equal(got, _reference_shingles(text)), text
    monkeypatch.setattr(dedup, "_WORD_BLOCK", 64)  # (blocks of a few texts, one text bigger than a block)
    monkeypatch.setattr(dedup, "_powers", [np.ones(1, dtype=np.uint64)] * 2)
    for text, got in zip(texts, dedup.shingles_many(texts), strict=True):
        assert np.array_equal(got, _reference_shingles(text)), text
    # a text bigger than a block has its words found a block at a time (cut at spaces): the
    # power tables, 16 bytes a byte, grow to a block, not to the biggest page's size (28 KB here)
    monkeypatch.setattr(dedup, "_powers", [np.ones(1, dtype=np.uint64)] * 2)
    assert np.array_equal(dedup.shingles_many([texts[-1]])[0], _reference_shingles(texts[-1]))
    assert len(dedup._powers[0]) <= 64
    no_space = "\n".join(f"w{i}" for i in range(100))  # (no space to cut at: one piece, still right)
    assert np.array_equal(dedup.shingles_many([no_space])[0], _reference_shingles(no_space))
    assert dedup.word_id("Word".lower()) == dedup.word_id("word") != dedup.word_id("words")
    ids, starts = dedup._word_ids(b"ab  CD9 e", True)
    assert starts.tolist() == [0, 4, 8]
    assert ids.tolist() == [dedup.word_id(w) for w in ("ab", "cd9", "e")]


def test_string_hashes_are_stable_across_processes_and_equal_for_equal_strings() -> None:
    rng = random.Random(3)
    strings = ["".join(rng.choice("abc -\u00e9") for _ in range(rng.randint(0, 150))) for _ in range(4000)]
    strings += ["", "a", "a\u00e9", "x" * 64, "x" * 65, "x" * 200]
    hashes = dedup.str_hashes(strings)
    one_by_one = np.array([dedup.str_hashes([s])[0] for s in strings], dtype=np.uint64)
    assert np.array_equal(hashes, one_by_one)  # (a long string in the batch or not: the same)
    by_string = dict(zip(strings, hashes.tolist(), strict=True))
    assert len(set(by_string.values())) == len(by_string)  # distinct strings, distinct hashes here
    assert dedup.str_hashes(["ab", "ab\x00"])[0] != dedup.str_hashes(["ab\x00"])[0]  # (the length counts)
    code = ("from curator.engine.dedup import index as dedup; import sys; "
            "print(' '.join(map(str, dedup.str_hashes(sys.argv[1:]).tolist())))")
    sample = strings[:50]
    other = subprocess.run([sys.executable, "-c", code, *sample], capture_output=True, text=True, check=True)
    assert [int(x) for x in other.stdout.split()] == [by_string[s] for s in sample]  # another hash seed


def _random_table(rng: random.Random, pages: int, universe: int) -> tuple[list[str], list[list[int]]]:
    paths = [f"p{i:03d}.md" for i in range(pages)]
    keys = [[rng.randrange(universe) for _ in range(rng.randint(0, 6))] for _ in paths]
    return paths, keys


def _build(paths: list[str], keys: list[list[int]]) -> dedup._KeyTable:
    table = dedup._KeyTable()
    flat = np.array([k for ks in keys for k in ks], dtype=np.uint64)
    owners = np.repeat(np.arange(len(paths), dtype=np.int64), [len(ks) for ks in keys])
    table.build(paths, flat, owners)
    return table


def test_a_key_table_finds_what_a_dict_of_sets_finds_through_changes() -> None:
    rng = random.Random(11)
    for _ in range(30):
        paths, keys = _random_table(rng, 60, 40)
        table = _build(paths, keys)
        filed: dict[str, set[int]] = {p: set(ks) for p, ks in zip(paths, keys, strict=True)}
        for _step in range(40):
            path = rng.choice([*paths, "new-a.md", "new-b.md"])
            if path in filed and rng.random() < 0.5:
                table.remove(path)
                del filed[path]
            else:
                fresh = {rng.randrange(40) for _ in range(rng.randint(0, 5))}
                if path in filed:
                    table.remove(path)
                table.add(path, sorted(fresh))
                filed[path] = fresh
            query = np.array(sorted({rng.randrange(40) for _ in range(5)}), dtype=np.uint64)
            expected = {p for p, ks in filed.items() if ks & set(query.tolist())}
            assert table.find(query) == expected


def test_a_key_table_joins_and_runs_every_pair_a_brute_force_finds() -> None:
    rng = random.Random(5)
    for _ in range(30):
        paths, keys = _random_table(rng, 50, 30)
        table = _build(paths, keys)
        by_key: dict[int, set[int]] = defaultdict(set)
        for slot, ks in enumerate(keys):
            for k in ks:
                by_key[k].add(slot)
        runs = {(a, b) for members in by_key.values() for a, b in itertools.combinations(sorted(members), 2)}
        a, b = table.runs()
        assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == sorted(runs)
        queries = [[rng.randrange(30) for _ in range(rng.randint(0, 4))] for _ in paths]
        qkeys = np.array([k for ks in queries for k in ks], dtype=np.uint64)
        qowners = np.repeat(np.arange(len(paths), dtype=np.int64), [len(ks) for ks in queries])
        a, b = table.meets(qkeys, qowners)
        expected = sorted({(q, e) for q, ks in enumerate(queries) for k in ks for e in by_key.get(k, ()) if e > q})
        assert list(zip(a.tolist(), b.tolist(), strict=True)) == expected


def test_band_keys_many_equals_band_keys_of_each() -> None:
    rng = np.random.default_rng(1)
    sigs = [rng.integers(0, 2**32, dedup.NUM_PERM, dtype=np.uint64).astype(np.uint32) for _ in range(50)]
    assert dedup.band_keys_many(sigs).tolist() == [dedup.band_keys(s) for s in sigs]
    assert dedup.band_keys_many([]).shape == (0, dedup.BANDS)


def test_shingle_counts_by_ranges_and_hash_table_equal_plain_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan's shingle counts (blocks of pages sorted and reduced to their distinct values, a
    thread each, the blocks' answers merged by ranges of values; the values above the limit
    found again in a linear-probing hash table, a block of pages at a time) = ``np.unique``'s
    counts, on random values, values crowding one slot (probe chains, keys taking each other's
    slots), and none, as pages of every size, in blocks of one page or of many."""
    rng = np.random.default_rng(5)
    pool = rng.integers(0, 2**64 - 1, 3000, dtype=np.uint64, endpoint=True)
    crowd = (np.uint64(0xABCD) << np.uint64(48)) + np.arange(200, dtype=np.uint64)  # (one top-bits slot)
    cases = [pool[rng.zipf(1.3, 50_000) % len(pool)], np.concatenate([np.repeat(crowd, 9), crowd[:50], pool]),
             np.zeros(0, dtype=np.uint64), np.full(20, 7, dtype=np.uint64)]
    for cores in (1, 2, 3):
        monkeypatch.setattr(dedup.parallel, "workers", lambda cores=cores: cores)
        for values in cases:
            want_keys, inverse, want_counts = np.unique(values, return_inverse=True, return_counts=True)
            cuts = np.sort(rng.integers(0, len(values) + 1, 40))
            for block in (1 << 21, 5000, 1):  # (one block; several; a block per page)
                monkeypatch.setattr(dedup, "_DISTINCT_BLOCK", block)
                for pages in ([values], np.split(values, cuts)):
                    original = [p.copy() for p in pages]
                    keys, counts = dedup._distinct_counts(list(pages))
                    assert np.array_equal(keys, want_keys) and np.array_equal(counts, want_counts), (cores, block)
                    assert all(np.array_equal(p, o) for p, o in zip(pages, original, strict=True))  # (not sorted)
            monkeypatch.setattr(dedup, "_COUNT_BLOCK", 1000)  # (blocks of several pages, a page over one)
            for parts in ([values], np.split(values, cuts), [values[:0], values, values[:0]]):
                for limit in (0, 6, 16):
                    got = dedup._counts_above(list(parts), keys, counts, limit)
                    each = want_counts[inverse]
                    assert np.array_equal(got, np.where(each > limit, each, 1)), (cores, limit)


def test_a_basis_keeps_each_pages_rows_as_steps_that_come_back_exactly() -> None:
    """The basis keeps each page's places in the distinct shingles as its first and the steps
    after it (small numbers, which compress), made in place as uint32: undone, the same places,
    for pages of no place, one, many, and places far apart."""
    from curator.engine.dedup import follow

    rng = np.random.default_rng(9)
    for _ in range(300):
        lengths = rng.integers(0, 7, rng.integers(1, 40))
        rows = (np.concatenate([np.sort(rng.choice(3_000_000, n, replace=False)) for n in lengths])
                if lengths.sum() else np.zeros(0, dtype=np.int64)).astype(np.int64)
        steps = follow.deltas(rows, lengths)
        assert steps.dtype == np.uint32
        assert np.array_equal(follow.undeltas(steps, lengths), rows)
