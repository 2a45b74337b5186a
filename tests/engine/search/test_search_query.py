"""The query language parser and the FTS5 MATCH strings it builds (docs/design.md §7)."""

from __future__ import annotations

import random
import sqlite3

import pytest

from curator.engine.search.query import MAX_TERMS, cjk_tokens, index_text, parse_query


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, extra, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES (?, ?, ?)", (index_text("付款流程"), index_text("hello wörld"), ""))
    return conn


def test_cjk_runs_become_bigrams_in_text_and_queries() -> None:
    assert cjk_tokens("付款流程") == ["付款", "款流", "流程", "程"]
    assert cjk_tokens("付") == ["付"]
    assert index_text("用付款API") == " 用付 付款 款 API"
    assert parse_query("付款").match() == '"付款"'
    assert parse_query("付款流程").match() == '"付款 款流 流程"'
    assert parse_query("付").match() == '"付"*'
    assert parse_query("付款API").match() == '"付款 款 API"'  # the run must end where API starts
    assert parse_query("한국어").match() == '"한국 국어"'
    assert parse_query("カタカナ").match() == '"カタ タカ カナ"'


def test_structure_of_a_full_query() -> None:
    q = parse_query('pay* "net 30" invoice OR receipt -draft -"old plan" layer:core tag:#Billing '
                    'path:Finance/ trust:>=0.5 -tag:x weird:thing')
    assert q.match() == ('("pay"* AND "net 30" AND ("invoice" OR "receipt") AND "weird thing")'
                         ' NOT ("draft" OR "old plan")')
    assert q.layers == {"core"}
    assert q.tags == ["billing"] and q.not_tags == ["x"]
    assert q.paths == ["finance/"]
    assert q.trust == [(">=", 0.5)]
    assert q.accepts("finance/a.md", "core", 0.7, ["Billing/2024"])
    assert not q.accepts("finance/a.md", "core", 0.4, ["billing"])
    assert not q.accepts("finance/a.md", "core", 0.7, ["billing", "x"])
    assert not q.accepts("ops/a.md", "core", 0.7, ["billing"])
    assert not q.accepts("finance/a.md", "deep", 0.7, ["billing"])


def test_only_exclusions_or_filters() -> None:
    q = parse_query("-draft layer:deep")
    assert q.match() is None and q.excluded_match() == '"draft"'
    assert not q.is_empty
    assert parse_query("").is_empty and parse_query('" * - ^ ( )').is_empty


def test_lowercase_or_is_a_word_and_lone_or_is_dropped() -> None:
    assert parse_query("cats or dogs").match() == '"cats" AND "or" AND "dogs"'
    assert parse_query("OR cats OR").match() == '"cats"'
    assert parse_query("cats OR -dogs").match() == '("cats") NOT ("dogs")'


def test_filters_that_cannot_match_are_problems_and_others_are_not() -> None:
    assert parse_query("pay layer:L1 -layer:deep trust:<=1 trust:0 tag:x path:y").problem is None
    assert parse_query("layer:").problem is None  # (half typed: nothing to judge yet)
    assert parse_query("layer:bogus trust:9").problems == [
        "unknown layer 'bogus' in layer:bogus: use identity, core, context or deep (or l0..l3)",
        "trust:9: trust is a number from 0 to 1, so 9 matches no page"]


def test_term_count_and_length_are_bounded() -> None:
    q = parse_query(" ".join(f"w{i}" for i in range(100)))
    assert sum(len(g) for g in q.groups) == MAX_TERMS
    assert len(q.ignored) == 100 - MAX_TERMS


ALPHABET = [*'"\'*-^():{}[]+,.;\\/ \t\nORANDNOTNEAR', "OR", "AND", "NOT", "NEAR", "付", "款", "é",
                                                         "layer:", "tag:", "trust:>=", "path:", "\x00",
                                                         "a", "b", "x1", "_"]


def test_random_hostile_strings_never_raise_fts_errors(fts: sqlite3.Connection) -> None:
    rng = random.Random(5)
    for i in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 25)))
        q = parse_query(text)
        for expr in (q.match(), q.excluded_match()):
            if expr:
                fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()
        # The highlighter's pattern, built the same way around either class of letters: the full
        # one every tenth string (its Unicode class takes ~4 ms to compile, and every random
        # string is a new pattern: 3,000 of them took 40 s of the suite), the ASCII one for all.
        q.highlighter(ascii_text=True)
        if i % 10 == 0:
            q.highlighter()


def test_matches_against_real_fts(fts: sqlite3.Connection) -> None:
    def hits(text: str) -> int:
        expr = parse_query(text).match()
        return len(fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall())

    assert hits("付款") == 1
    assert hits("流程") == 1
    assert hits("程") == 1
    assert hits("world") == 1
    assert hits("HELLO wor*") == 1
    assert hits("hello -world") == 0
    assert hits("款付") == 0
