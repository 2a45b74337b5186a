"""A kept result decoded lazily (issue 44): its score rows are made when asked for and its pairs
found by bisection, and it answers exactly what the dicts it replaced answered, through every
change a follow makes to it (rows set, deleted, a page's pairs dropped), and through a result kept
as changes to a base."""

from __future__ import annotations

import random

import numpy as np
import pytest

from curator.engine.dedup import cache as dedup_cache
from curator.engine.dedup.cache import SCORE_KEYS, Kept, KeptBase, ScoreRows

KEY = b"k" * 16


def _row(rng: random.Random) -> dict[str, float]:
    return {k: rng.randrange(0, 1001) / 1000 for k in SCORE_KEYS}


def _kept(rng: random.Random, pages: list[str], pairs: int) -> Kept:
    scored: dict[tuple[str, str], dict[str, float]] = {}
    while len(scored) < pairs:
        a, b = sorted(rng.sample(pages, 2))
        scored[(a, b)] = _row(rng)
    body = {pair: rng.randrange(5000, 10001) / 10_000 for pair in list(scored)[: pairs // 2]}
    inbound = {p: rng.randrange(0, 9) for p in pages if rng.random() < 0.7}
    return Kept({"body": body}, scored, inbound, (b"d" * 16, 3, 1), (b"b" * 16, ()))


def test_score_rows_answer_as_the_dict_of_every_row_through_every_change() -> None:
    rng = random.Random(44)
    pages = [f"wiki/p{i:03}.md" for i in range(60)]
    whole = _kept(rng, pages, 300)
    decoded = dedup_cache.decode(dedup_cache.encode(whole, KEY), KEY, lazy=True)
    assert decoded is not None and isinstance(decoded.scores, ScoreRows)
    rows, mirror = decoded.scores, dict(whole.scores)
    assert list(rows) == list(mirror) and len(rows) == len(mirror)
    for step in range(600):
        pair = tuple(sorted(rng.sample(pages, 2)))
        assert (pair in rows) == (pair in mirror), step
        assert rows.get(pair) == mirror.get(pair), step  # type: ignore[arg-type]
        roll = rng.random()
        if roll < 0.3:
            value = _row(rng)
            rows[pair] = mirror[pair] = value  # type: ignore[index]
        elif roll < 0.55 and pair in mirror:
            del rows[pair]  # type: ignore[arg-type]
            del mirror[pair]  # type: ignore[arg-type]
        elif roll < 0.6:
            gone = set(rng.sample(pages, 2))
            assert sorted(rows.touching(gone)) == sorted(p for p in mirror if p[0] in gone or p[1] in gone)
            rows.drop_touching(gone)
            mirror = {p: v for p, v in mirror.items() if p[0] not in gone and p[1] not in gone}
        elif roll < 0.62:
            with pytest.raises(KeyError):
                del rows[("wiki/none.md", pages[0])]
        assert len(rows) == len(mirror), step
        if step % 50 == 0:
            assert list(rows) == list(mirror), step  # (the same order: the blob written from them is the same)
    assert list(rows.items()) == list(mirror.items())
    # the pairs as decoded stay what the base held, whatever was changed since
    decoded_pairs = rows.decoded()
    assert set(decoded_pairs) == set(whole.scores) and len(decoded_pairs) == len(whole.scores)
    assert all(pair in decoded_pairs for pair in whole.scores)
    assert ("wiki/none.md", pages[0]) not in decoded_pairs


def test_a_result_kept_as_changes_decodes_to_what_the_whole_result_holds() -> None:
    rng = random.Random(45)
    pages = [f"wiki/p{i:03}.md" for i in range(80)]
    base = _kept(rng, pages, 400)
    base_blob = dedup_cache.encode(base, KEY, own=b"o" * 16)
    under = dedup_cache.decode(base_blob, KEY, lazy=True)
    assert under is not None and under.base is not None
    moved = set(rng.sample(pages, 6))
    now = dict(base.scores)
    now = {p: v for p, v in now.items() if p[0] not in moved and p[1] not in moved}
    for page in sorted(moved):  # each moved page's pairs now, some of them new pages
        for other in rng.sample([*pages, "wiki/new.md"], 4):
            if other != page:
                now[tuple(sorted((page, other)))] = _row(rng)  # type: ignore[index]
    later = Kept({"body": {}}, now, dict(base.inbound), base.count, base.basis)
    kept_base = KeptBase(b"o" * 16, base.basis[0], under.base.scored, under.base.inbound)
    delta = dedup_cache.encode_delta(later, KEY, kept_base, moved)
    for lazy in (True, False):
        merged = dedup_cache.decode(delta, KEY, lambda: base_blob, lazy=lazy)
        assert merged is not None
        assert dict(merged.scores.items()) == now
        assert sorted(merged.scores) == sorted(now)
        assert all(merged.scores[pair] == value for pair, value in now.items())


def test_a_damaged_score_table_is_refused() -> None:
    rng = random.Random(46)
    pages = [f"wiki/p{i:03}.md" for i in range(20)]
    kept = _kept(rng, pages, 40)
    import marshal
    import zlib

    parts = list(marshal.loads(zlib.decompress(dedup_cache.encode(kept, KEY))))
    sa, sb = parts[8]
    far = np.frombuffer(sa, dtype=np.int32).copy()
    far[0] = 10_000  # (a page beyond the paths)
    parts[8] = (far.tobytes(), sb)
    assert dedup_cache.decode(zlib.compress(marshal.dumps(tuple(parts))), KEY, lazy=True) is None
