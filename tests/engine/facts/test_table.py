"""The fact index's table of distinct texts: what it stores reads back the same (texts exactly,
vectors within what ranking needs), a damaged file is refused rather than misread, and the index
it serves stays small on disk."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest

from curator.engine.facts.conflicts import conflict_reason
from curator.engine.facts.embed import WordLlamaEmbedder
from curator.engine.facts.index import INDEX_NAME, FactIndex, fact_index_for
from curator.engine.facts.table import BLOCK, DamagedTable, TextTable, text_hashes
from curator.engine.wiki import Wiki
from tests.corpus import generate
from tests.engine.facts.planted import PARAPHRASES

TEXTS = [f"Fact number {i}: the warehouse in Lyon closes at {i % 12} pm." for i in range(2 * BLOCK + 37)] + [
    "服务器每天凌晨两点自动重启。", "Ann Smith leads the payments team since March.", "a\nline with \"quotes\" and \\ back"]


def _table(texts: list[str]) -> tuple[TextTable, np.ndarray]:
    table = TextTable()
    vectors = WordLlamaEmbedder().embed(texts)
    table.add(text_hashes(texts), texts, vectors)
    return table, vectors


def test_texts_and_vectors_read_back_from_the_stored_blocks() -> None:
    table, vectors = _table(TEXTS)
    blocks = table.take_changed()
    assert [b[0] for b in blocks] == [0, 1, 2]  # two full blocks and the last, partial one
    again = TextTable()
    again.load(blocks, table.dim)
    assert again.count == len(TEXTS)
    assert again.all_texts() == TEXTS and [again.text(r) for r in (0, BLOCK, len(TEXTS) - 1)] == [
        TEXTS[0], TEXTS[BLOCK], TEXTS[-1]]
    with again.bulk():
        assert again.texts(range(len(TEXTS))) == TEXTS
    assert again.find(text_hashes([TEXTS[5], "never added", TEXTS[-2]])).tolist() == [5, -1, len(TEXTS) - 2]
    stored = again.vectors(slice(0, again.count))
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=2e-3)  # read back as unit rows
    exact, close = vectors @ vectors.T, stored @ stored.T
    near = exact > 0.5
    assert np.abs(close - exact)[near].mean() < 0.01 and np.abs(close - exact).max() < 0.06


def test_a_paraphrase_scores_as_the_model_says_within_a_hundredth() -> None:
    texts = [t for pair in PARAPHRASES for t in pair]
    table, vectors = _table(texts)
    stored = table.vectors(slice(0, table.count))
    for i in range(0, len(texts), 2):
        assert abs(float(stored[i] @ stored[i + 1]) - float(vectors[i] @ vectors[i + 1])) < 0.02


def test_rows_added_later_join_the_last_block_and_are_found() -> None:
    table, _ = _table(TEXTS[:10])
    table.take_changed()
    more = ["The coffee machine is broken again.", "Backups are kept for 30 days."]
    first = table.add(text_hashes(more), more, WordLlamaEmbedder().embed(more))
    assert first == 10 and [b[0] for b in table.take_changed()] == [0]  # the partial block, again
    assert table.find(text_hashes(more)).tolist() == [10, 11] and table.text(11) == more[1]


@pytest.mark.parametrize("damage", ["gap", "last texts", "codes"])
def test_a_damaged_table_is_refused(damage: str) -> None:
    table, _ = _table(TEXTS)
    blocks = table.take_changed()
    at = 2 if damage == "last texts" else 1
    number, hashes, texts, codes, scales = blocks[at]
    if damage == "gap":
        blocks = [blocks[0], blocks[2]]
    elif damage == "last texts":
        blocks[at] = (number, hashes, b"not zlib at all", codes, scales)
    else:
        blocks[at] = (number, hashes, texts, codes[:-3], scales)
    with pytest.raises(ValueError):
        TextTable().load(blocks, table.dim)


@pytest.mark.parametrize("damage", [b"not zlib at all", zlib.compress(b'["one text"]')])
def test_a_damaged_full_block_of_texts_is_told_when_read(damage: bytes) -> None:
    """A full block's texts are decompressed when first read, not when the table is read back (a
    one-shot append reads a few of them): a damaged one is a one-line error then, and marks the
    table damaged (the fact index builds itself again on its next update)."""
    table, _ = _table(TEXTS)
    blocks = table.take_changed()
    number, hashes, _texts, codes, scales = blocks[1]
    blocks[1] = (number, hashes, damage, codes, scales)
    again = TextTable()
    again.load(blocks, table.dim)
    assert again.text(0) == TEXTS[0] and not again.damaged  # (another block reads on)
    with pytest.raises(DamagedTable, match="built again"):
        again.text(BLOCK + 1)
    assert again.damaged
    with pytest.raises(DamagedTable):
        again.all_texts()


def test_an_index_with_a_damaged_block_is_built_again(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n- The build server restarts every night.\n- Ann leads payments.\n")
    wiki = Wiki(tmp_path)
    fact_index_for(wiki)
    conn = sqlite3.connect(wiki.state_dir / INDEX_NAME)
    conn.execute("UPDATE blocks SET texts = ?", (b"\x00garbage",))
    conn.commit()
    conn.close()
    again = FactIndex(Wiki(tmp_path))
    again.update()
    assert sorted(f.text for f in again.facts()) == ["Ann leads payments.", "The build server restarts every night."]


def test_an_index_whose_full_block_is_damaged_says_so_once_then_is_built_again(tmp_path: Path) -> None:
    lines = "".join(f"- Fact {i}: the depot in Lyon ships {i} crates on day {i % 7}.\n" for i in range(2 * BLOCK))
    (tmp_path / "a.md").write_text("# A\n\n" + lines)
    wiki = Wiki(tmp_path)
    fact_index_for(wiki)
    conn = sqlite3.connect(wiki.state_dir / INDEX_NAME)
    conn.execute("UPDATE blocks SET texts = ? WHERE id = 0", (b"\x00garbage",))
    conn.commit()
    conn.close()
    again = FactIndex(Wiki(tmp_path))
    again.update()
    with pytest.raises(DamagedTable):
        again.facts()
    again.update()  # (nothing changed on the pages: the damage alone makes it build again)
    assert [f.text for f in again.facts()][:2] == ["Fact 0: the depot in Lyon ships 0 crates on day 0.",
                                                  "Fact 1: the depot in Lyon ships 1 crates on day 1."]
    assert len(again.facts()) == 2 * BLOCK


def test_the_index_of_a_real_shaped_wiki_stays_small_per_text(tmp_path: Path) -> None:
    """What the index costs on disk per distinct text (vector, text, nearest, page entries, notes),
    on 150 pages of the real-shaped profile with the conflict queue's notes worked out: 417 bytes
    measured (int8 vectors, plain texts and a row per note took 812). The issue's bound, half the
    pages' bytes, is measured at 32,000 pages by the facts benchmark of tests/perf."""
    root = tmp_path / "wiki"
    pages = generate(root, 150, profile="real-shaped").pages
    # (the generated pages' own near-twins are label numbers and lines of links, not conflicts:
    # some facts that disagree, for notes to keep)
    for i, path in enumerate(pages[:40]):
        with (root / path).open("a", encoding="utf-8") as f:
            f.write(f"\n- The refund window for online orders is {10 + i} days.\n")
    index = fact_index_for(Wiki(root))
    assert index.noted_pairs("conflict-test", 0.6, conflict_reason)
    assert index.size_on_disk() <= 450 * index._count, (index.size_on_disk(), index._count)
