"""Search (docs/design.md §7): CJK, ranking, operators, filters, options, expansion, visibility, freshness."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from curator.engine.corpus.state import locate_state
from curator.engine.errors import UsageError
from curator.engine.policy.actor import Actor
from curator.engine.search import index as search_mod
from curator.engine.wiki import Wiki

AGENT = Actor("agent", "bot", "sales")
FILLER_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                "juliet", "kilo", "lima"]


def _db(wiki: Wiki) -> sqlite3.Connection:
    """The store's connection, for a look at the tables (single-threaded tests)."""
    with wiki.store.connection() as conn:
        return conn


def write(root: Path, rel: str, body: str, **meta: object) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{k}: {v}" for k, v in meta.items()]
    front = "---\n" + "\n".join(lines) + "\n---\n" if lines else ""
    path.write_text(front + body, encoding="utf-8")
    return path


def filler(root: Path, n: int = 12) -> None:
    """Pages that share no query words, so that bm25's IDF is positive for the rare test terms."""
    for i in range(n):
        words = " ".join(FILLER_WORDS[(i + k) % len(FILLER_WORDS)] for k in range(30))
        write(root, f"filler/f{i:02d}.md", f"# Filler {i}\n\n{words}\n")


def paths(hits: list[search_mod.SearchHit]) -> list[str]:
    return [h.path for h in hits]


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    r = tmp_path / "w"
    r.mkdir()
    filler(r)
    return r


@pytest.fixture()
def wiki(root: Path) -> Wiki:
    w = Wiki(root)
    yield w
    w.close()


class HidePolicy:
    """A fake read policy: agents never see paths under ``secret/``."""

    def can_read(self, actor: Actor, path: str) -> bool:
        return not path.startswith("secret/")

    def check_write(self, actor: Actor, path: str) -> object:  # pragma: no cover - unused here
        raise AssertionError


# --- CJK and Latin text rules ---------------------------------------------------------------

def test_two_cjk_characters_find_a_longer_run(root: Path) -> None:
    write(root, "wiki/pay.md", "我们的付款流程很简单。\n", title="流程说明")
    write(root, "wiki/refund.md", "退款政策：三天内处理。\n", title="退款")
    w = Wiki(root)
    assert paths(w.search.search("付款")) == ["wiki/pay.md"]
    assert paths(w.search.search("付款流程")) == ["wiki/pay.md"]
    assert paths(w.search.search("款流程很")) == ["wiki/pay.md"]
    assert paths(w.search.search("程")) == ["wiki/pay.md"]  # one character, even a run's last
    assert paths(w.search.search("退款")) == ["wiki/refund.md"]
    assert w.search.search("款付") == []  # bigrams keep their order
    assert w.search.search("付款政策") == []  # both bigram sets must be adjacent in one run
    assert paths(w.search.search('"的付款"')) == ["wiki/pay.md"]
    hit = w.search.search("付款")[0]
    assert "«付款»" in hit.snippet
    w.close()


def test_cjk_next_to_latin_and_in_titles(root: Path) -> None:
    write(root, "wiki/api.md", "调用付款API时要带签名。\n", title="接口")
    write(root, "wiki/title.md", "nothing here\n", title="付款流程")
    w = Wiki(root)
    assert paths(w.search.search("api")) == ["wiki/api.md"]
    assert paths(w.search.search("付款API")) == ["wiki/api.md"]
    assert set(paths(w.search.search("付款"))) == {"wiki/api.md", "wiki/title.md"}
    w.close()


def test_latin_keeps_unicode61_with_diacritics_folded(root: Path) -> None:
    write(root, "wiki/cafe.md", "Le Café naïve et l'Élève.\n")
    w = Wiki(root)
    for q in ("cafe", "CAFÉ", "naive", "eleve", "Élève"):
        assert paths(w.search.search(q)) == ["wiki/cafe.md"], q
    assert "«Café»" in w.search.search("cafe")[0].snippet
    assert w.search.search("caf") == []  # whole tokens, not substrings
    w.close()


# --- ranking ------------------------------------------------------------------------------

def test_trust_outranks_somewhat_higher_relevance(root: Path) -> None:
    write(root, "wiki/low.md", "The zephyr ledger. zephyr notes. zephyr again.\n", trust=0.2)
    write(root, "wiki/high.md", "The zephyr ledger, reviewed and signed off by finance.\n", trust=0.9)
    w = Wiki(root)
    w.search.refresh()
    raw = dict(_db(w).execute(
        "SELECT d.path, -bm25(search_fts, 4, 1, 2) FROM search_fts JOIN search_docs d"
        " ON d.id = search_fts.rowid WHERE search_fts MATCH '\"zephyr\"'").fetchall())
    assert raw["wiki/low.md"] > raw["wiki/high.md"] > 0  # the low-trust page is more relevant
    hits = w.search.search("zephyr")
    assert paths(hits) == ["wiki/high.md", "wiki/low.md"]
    assert hits[0].score == pytest.approx(raw["wiki/high.md"] * 1.4 * 0.8)
    assert hits[1].score == pytest.approx(raw["wiki/low.md"] * 0.7 * 0.8)
    w.close()


def test_source_type_factor_and_deterministic_ties(root: Path) -> None:
    body = "The quokka report.\n"
    write(root, "wiki/b.md", body, source_type="raw_dialogue")
    write(root, "wiki/a.md", body, source_type="verified_fact")
    for name in ("d", "c", "e"):
        write(root, f"wiki/{name}.md", body)
    w = Wiki(root)
    hits = w.search.search("quokka")
    assert paths(hits) == ["wiki/a.md", "wiki/c.md", "wiki/d.md", "wiki/e.md", "wiki/b.md"]
    assert hits[0].score / hits[1].score == pytest.approx(1.2 / 0.8)
    assert hits[1].score == hits[2].score == hits[3].score  # ties: by path
    assert paths(w.search.search("quokka")) == paths(hits)
    w.close()


def test_title_weighs_more_than_body(root: Path) -> None:
    write(root, "wiki/in-body.md", "# Something\n\nwombat once.\n")
    write(root, "wiki/in-title.md", "# Wombat\n\nother words.\n")
    w = Wiki(root)
    assert paths(w.search.search("wombat")) == ["wiki/in-title.md", "wiki/in-body.md"]
    w.close()


# --- operators, filters and options -------------------------------------------------------------

@pytest.fixture()
def ops(root: Path) -> Wiki:
    write(root, "wiki/one.md", "apple banana cherry\n", layer="core", trust=0.8, tags="[fruit, food/sweet]")
    write(root, "wiki/two.md", "apple durian\n", layer="context", trust=0.4, tags="[fruit]")
    write(root, "ops/three.md", "banana cherry apple\n", layer="deep", trust=0.2)
    write(root, "ops/four.md", "cherry banana split\n", trust=0.6, tags="[dessert]")
    w = Wiki(root)
    yield w
    w.close()


@pytest.mark.parametrize(("query", "expected"), [
    ("apple", {"wiki/one.md", "wiki/two.md", "ops/three.md"}),
    ("apple cherry", {"wiki/one.md", "ops/three.md"}),  # AND
    ('"banana cherry"', {"wiki/one.md", "ops/three.md"}),  # phrase: adjacent, in order
    ('"cherry banana"', {"ops/four.md"}),
    ("durian OR split", {"wiki/two.md", "ops/four.md"}),
    ("apple durian OR split", {"wiki/two.md"}),  # AND binds the OR group
    ("apple -banana", {"wiki/two.md"}),
    ('cherry -"banana split"', {"wiki/one.md", "ops/three.md"}),
    ("ban*", {"wiki/one.md", "ops/three.md", "ops/four.md"}),
    ("cher*", {"wiki/one.md", "ops/three.md", "ops/four.md"}),
    ("apple layer:core", {"wiki/one.md"}),
    ("apple layer:l2", {"wiki/two.md"}),
    ("apple layer:core layer:context", {"wiki/one.md", "wiki/two.md"}),
    ("apple -layer:core", {"wiki/two.md", "ops/three.md"}),
    ("apple tag:fruit", {"wiki/one.md", "wiki/two.md"}),
    ("tag:food", {"wiki/one.md"}),  # nested tag food/sweet
    ("tag:#FRUIT -tag:food", {"wiki/two.md"}),
    ("banana path:ops/", {"ops/three.md", "ops/four.md"}),
    ("banana path:ops/f*", {"ops/four.md"}),
    ("banana -path:ops", {"wiki/one.md"}),
    ("apple trust:>=0.4", {"wiki/one.md", "wiki/two.md"}),
    ("apple trust:>0.4", {"wiki/one.md"}),
    ("apple trust:<0.4", {"ops/three.md"}),
    ("apple trust:<=0.4", {"wiki/two.md", "ops/three.md"}),
    ("apple trust:=0.4", {"wiki/two.md"}),
    ("apple trust:0.8", {"wiki/one.md"}),  # a bare number means at least
    ("-apple", {"ops/four.md"} | {f"filler/f{i:02d}.md" for i in range(12)}),
    ("layer:core", {"wiki/one.md"}),
])
def test_operators_and_filters(ops: Wiki, query: str, expected: set[str]) -> None:
    assert set(paths(ops.search.search(query, limit=100))) == expected


@pytest.mark.parametrize(("query", "said"), [
    ("apple layer:nonsense", "unknown layer 'nonsense' in layer:nonsense"),
    ("apple -layer:nonsense", "unknown layer 'nonsense' in -layer:nonsense"),
    ("apple trust:high", "trust:high: trust is a number from 0 to 1"),
    ("apple trust:>=abc", "trust:>=abc: trust is a number from 0 to 1"),
    ("apple trust:>=7", "trust:>=7: trust is a number from 0 to 1, so 7 matches no page"),
    ("apple -trust:0.5", "-trust:0.5 cannot be negated"),
])
def test_filters_that_cannot_match_are_usage_errors(ops: Wiki, query: str, said: str) -> None:
    """As ``layer="bogus"``: a filter that could never match is refused in one line, not
    answered with no hits for a reason nobody sees (search and relevance alike)."""
    for ask in (lambda: ops.search.search(query), lambda: ops.search.relevance(query)):
        with pytest.raises(UsageError) as caught:
            ask()
        assert said in str(caught.value) and "\n" not in str(caught.value)


def test_options_min_trust_layer_limit(ops: Wiki, root: Path) -> None:
    assert set(paths(ops.search.search("apple", min_trust=0.4))) == {"wiki/one.md", "wiki/two.md"}
    assert paths(ops.search.search("apple", layer="core")) == ["wiki/one.md"]
    assert paths(ops.search.search("apple", layer="L3")) == ["ops/three.md"]
    assert ops.search.search("apple layer:core", layer="deep") == []
    with pytest.raises(UsageError):
        ops.search.search("apple", layer="bogus")
    for i in range(120):
        write(root, f"many/m{i:03d}.md", "gnu gnu\n")
    ops.search.refresh(full=True)
    assert len(ops.search.search("gnu")) == 10  # default
    assert len(ops.search.search("gnu", limit=3)) == 3
    assert len(ops.search.search("gnu", limit=500)) == 100  # max
    assert len(ops.search.search("gnu", limit=0)) == 1


def test_filters_only_rank_by_trust_and_factor(ops: Wiki) -> None:
    hits = ops.search.search("tag:fruit")
    assert paths(hits) == ["wiki/one.md", "wiki/two.md"]
    assert hits[0].score == pytest.approx((0.5 + 0.8) * 0.8)


def test_empty_query_is_answered_with_nothing(ops: Wiki) -> None:
    assert ops.search.search("") == []
    assert ops.search.search("   ") == []
    assert ops.search.search("OR") == []


HOSTILE = [
    '"', '""', '"""', '"unbalanced', 'unbalanced"', "AND(", "AND", "OR", "NOT", "NEAR(", "NEAR(a b)",
    "NEAR", "*", "**", "a*b*", "-", "--", "-*", "^", "^apple", "apple^", "(", ")", "()", "(apple",
    "apple)", "{", "}", "{title}: apple", "title:apple", "body:apple", "col:x", ":", "::", "apple:",
    ":apple", "+", "+apple", "apple OR", "OR apple", "OR OR OR", "apple AND OR NOT banana",
    "'; DROP TABLE search_docs; --", "1=1; SELECT * FROM pages", "\\", "\\\"", "%", "_", "apple\x00banana",
    "\x00", "\t\n\r", "layer:", "tag:", "path:", "trust:", "trust:>=", "trust:>=abc", "trust:1e9",
    'path:"', 'tag:"a b"', "-layer:", "\u200b", "🙂", "付", "「」", "a" * 5000, "apple " * 400,
    '"apple" "banana" ' * 50, "x:" * 300, "-" * 1000, '"' * 999,
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_answered(ops: Wiki, query: str) -> None:
    if query in ("trust:>=", "trust:>=abc", "trust:1e9"):  # a trust filter that can never match
        with pytest.raises(UsageError, match=r"^trust:[^\n]*trust is a number from 0 to 1"):
            ops.search.search(query, expand=True)
        return
    hits = ops.search.search(query, expand=True)
    assert isinstance(hits, list)
    assert all(isinstance(h, search_mod.SearchHit) for h in hits)


def test_hostile_queries_keep_their_words(ops: Wiki) -> None:
    assert paths(ops.search.search("apple\x00durian")) == ["wiki/two.md"]
    assert set(paths(ops.search.search("(apple"))) == {"wiki/one.md", "wiki/two.md", "ops/three.md"}
    assert paths(ops.search.search("NEAR(durian")) == []  # 'near' is just a word here
    assert paths(ops.search.search('"durian')) == ["wiki/two.md"]  # unbalanced quote: to the end


# --- snippets -------------------------------------------------------------------------------------

def test_snippet_highlights_matched_words_around_the_match(root: Path) -> None:
    words = " ".join(FILLER_WORDS * 10)
    write(root, "wiki/long.md", f"# Long\n\n{words} the platypus payment arrived. {words}\n")
    w = Wiki(root)
    hit = w.search.search("platypus pay*")[0]
    assert "«platypus» «payment»" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < search_mod.SNIPPET_CHARS + 40
    assert search_mod.HIGHLIGHT == ("«", "»")
    w.close()


def test_make_snippet_and_highlight_helpers() -> None:
    from curator.engine.search.query import parse_query

    pattern = parse_query("cafe 付款 pre*").highlighter()
    assert search_mod.highlight_text("Un CAFÉ, prepaid 付款流程", pattern) == "Un «CAFÉ», «prepaid» «付款»流程"
    assert search_mod.make_snippet("", pattern) == ""
    assert search_mod.make_snippet("no match here", pattern) == "no match here"
    assert search_mod.highlight_text("café", None) == "café"


# --- expansion and visibility -------------------------------------------------------------------

@pytest.fixture()
def graph(root: Path) -> Wiki:
    write(root, "wiki/hit.md", "The narwhal page links [[out-page]].\n", related="[rel-page]")
    write(root, "wiki/out-page.md", "Outgoing neighbour.\n")
    write(root, "wiki/in-page.md", "Links to [[hit]].\n")
    write(root, "wiki/rel-page.md", "Related target.\n")
    write(root, "wiki/rel-back.md", "Names hit as related.\n", related="[hit]")
    write(root, "wiki/far.md", "Two hops: [[in-page]].\n")
    write(root, "secret/spy.md", "Links to [[hit]] and mentions narwhal.\n")
    write(root, "wiki/lowtrust.md", "Links to [[hit]].\n", trust=0.1)
    w = Wiki(root)
    yield w
    w.close()


def test_expansion_adds_one_hop_neighbours_after_the_hits(graph: Wiki) -> None:
    hits = graph.search.search("narwhal", expand=True)
    direct = [h for h in hits if not h.expanded]
    expanded = [h for h in hits if h.expanded]
    assert paths(direct) == sorted(paths(direct), key=lambda p: paths(direct).index(p))
    assert set(paths(direct)) == {"wiki/hit.md", "secret/spy.md"}
    assert hits[: len(direct)] == direct  # expanded pages come after every direct hit
    assert set(paths(expanded)) == {"wiki/out-page.md", "wiki/in-page.md", "wiki/rel-page.md",
                                    "wiki/rel-back.md", "wiki/lowtrust.md"}
    assert "wiki/far.md" not in paths(hits)  # one hop only
    assert all(h.score == 0.0 for h in expanded)
    assert all(h.to_json()["expanded"] for h in expanded)
    assert not graph.search.search("narwhal", expand=False)[-1].expanded


def test_expansion_obeys_filters_and_visibility(graph: Wiki) -> None:
    graph.policy = HidePolicy()
    agent_hits = graph.search.search("narwhal", AGENT, expand=True)
    assert "secret/spy.md" not in paths(agent_hits)
    assert all(not p.startswith("secret/") for p in paths(agent_hits))
    assert "wiki/in-page.md" in paths(agent_hits)
    op_hits = graph.search.search("narwhal", expand=True)
    assert "secret/spy.md" in paths(op_hits)
    # the only link from spy -> hit: when the agent searches for spy's own words, nothing leaks
    assert graph.search.search("mentions", AGENT, expand=True) == []
    filtered = graph.search.search("narwhal", AGENT, expand=True, min_trust=0.3)
    assert "wiki/lowtrust.md" not in paths(filtered)
    assert "wiki/lowtrust.md" not in paths(graph.search.search("narwhal trust:>=0.3", expand=True))


def test_visibility_filters_direct_hits_and_fills_the_limit(root: Path) -> None:
    for i in range(15):
        write(root, f"secret/s{i:02d}.md", "ocelot ocelot ocelot\n", trust=1.0)
    for i in range(5):
        write(root, f"wiki/p{i}.md", "ocelot\n")
    w = Wiki(root)
    w.policy = HidePolicy()
    hits = w.search.search("ocelot", AGENT, limit=5)
    assert paths(hits) == [f"wiki/p{i}.md" for i in range(5)]
    assert all(p.startswith("secret/") for p in paths(w.search.search("ocelot", limit=5)))
    assert w.search.relevance("ocelot").keys() >= {"secret/s00.md", "wiki/p0.md"}
    w.close()


# --- keeping in step ---------------------------------------------------------------------------------

def test_engine_refresh_keeps_the_index_in_step(wiki: Wiki, root: Path) -> None:
    page = write(root, "wiki/new.md", "A kiwi page.\n")
    wiki.refresh(["wiki/new.md"])
    assert paths(wiki.search.search("kiwi", refresh=False)) == ["wiki/new.md"]
    page.write_text("Now about a kumquat.\n", encoding="utf-8")
    os.utime(page, ns=(1, 1))
    wiki.refresh(["wiki/new.md"])
    assert wiki.search.search("kiwi", refresh=False) == []
    assert paths(wiki.search.search("kumquat", refresh=False)) == ["wiki/new.md"]
    page.unlink()
    wiki.refresh(["wiki/new.md"])
    assert wiki.search.search("kumquat", refresh=False) == []
    # the FTS table is contentless: a replaced or removed page leaves a tombstone that no query
    # sees (results join the live documents), counted for the rebuild that clears them
    conn = _db(wiki)
    docs = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
    live = conn.execute("SELECT count(*) FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid"
                        ).fetchone()[0]
    dead = int(conn.execute("SELECT value FROM search_meta WHERE key='dead'").fetchone()[0])
    assert docs == live == len(wiki.pages) and dead == 2
    assert wiki.search.rebuild() == len(wiki.pages)
    assert conn.execute("SELECT count(*) FROM search_fts").fetchone()[0] == len(wiki.pages)


def test_many_tombstones_make_the_next_search_rebuild(wiki: Wiki, root: Path) -> None:
    from curator.engine.search import index as search

    page = write(root, "wiki/churn.md", "churn zero\n")
    wiki.search.refresh()  # built (the first search builds it)
    live = _db(wiki).execute("SELECT count(*) FROM search_docs").fetchone()[0]
    rounds = max(70, int(search.MAX_DEAD_SHARE * live) + 2)
    for i in range(rounds):
        page.write_text(f"churn round{i}\n", encoding="utf-8")
        os.utime(page, ns=(i + 10, i + 10))
        wiki.refresh(["wiki/churn.md"])
    conn = _db(wiki)
    assert conn.execute("SELECT count(*) FROM search_fts").fetchone()[0] == live + rounds
    assert paths(wiki.search.search(f"round{rounds - 1}")) == ["wiki/churn.md"]
    assert wiki.search.search("round0") == []
    assert conn.execute("SELECT count(*) FROM search_fts").fetchone()[0] == live  # rebuilt


def test_outside_creations_deletions_and_renames_are_found_at_once(wiki: Wiki, root: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert wiki.search.search("mango") == []
    wiki.search.sweep_interval = 3600  # no sweep: only the folder check runs
    write(root, "wiki/a.md", "mango\n")
    assert paths(wiki.search.search("mango")) == ["wiki/a.md"]
    write(root, "wiki/deep/er/b.md", "mango\n")  # new folders
    assert set(paths(wiki.search.search("mango"))) == {"wiki/a.md", "wiki/deep/er/b.md"}
    write(root, "wiki/deep/er/c.md", "mango\n")  # inside the new folder
    assert len(wiki.search.search("mango")) == 3
    tmp = write(root, "wiki/.a.md.tmp", "papaya\n")  # an editor's atomic save
    os.replace(tmp, root / "wiki/a.md")
    assert paths(wiki.search.search("papaya")) == ["wiki/a.md"]
    (root / "wiki/deep/er/b.md").rename(root / "wiki/deep/er/renamed.md")
    assert "wiki/deep/er/renamed.md" in paths(wiki.search.search("mango"))
    import shutil

    shutil.rmtree(root / "wiki/deep")
    assert wiki.search.search("mango") == []
    write(root, "top.md", "mango at the root\n")
    assert paths(wiki.search.search("mango")) == ["top.md"]


def test_in_place_edits_are_found_by_the_sweep(wiki: Wiki, root: Path) -> None:
    page = write(root, "wiki/a.md", "guava\n")
    assert paths(wiki.search.search("guava")) == ["wiki/a.md"]
    page.write_text("lychee now\n", encoding="utf-8")  # in place: no folder changes
    os.utime(page, ns=(10**18, 10**18))
    wiki.search.sweep_interval = 3600
    assert paths(wiki.search.search("guava")) == ["wiki/a.md"]  # not yet: the sweep is not due
    wiki.search.sweep_interval = 0.0
    assert paths(wiki.search.search("lychee")) == ["wiki/a.md"]
    assert wiki.search.search("guava") == []


def test_another_process_sees_changes_and_shares_the_sweep_time(root: Path) -> None:
    first = Wiki(root)
    assert first.search.search("fig") == []
    write(root, "wiki/fig.md", "fig\n")
    second = Wiki(root)
    assert paths(second.search.search("fig")) == ["wiki/fig.md"]
    assert paths(first.search.search("fig")) == ["wiki/fig.md"]
    last = _db(second).execute("SELECT value FROM search_meta WHERE key='last_sweep'").fetchone()
    assert last is not None
    first.close()
    second.close()


def test_reopen_uses_the_stored_index(root: Path) -> None:
    write(root, "wiki/a.md", "persimmon\n")
    first = Wiki(root)
    first.search.refresh()
    first.close()
    w = Wiki(root)
    assert w.search.active()  # built by the first Wiki: nothing to build again
    assert paths(w.search.search("persimmon", refresh=False)) == ["wiki/a.md"]
    w.close()


def test_rebuild_recovers_a_damaged_index(wiki: Wiki, root: Path) -> None:
    write(root, "wiki/a.md", "quince\n")
    assert paths(wiki.search.search("quince")) == ["wiki/a.md"]
    _db(wiki).execute("INSERT INTO search_fts (search_fts) VALUES ('delete-all')")
    assert wiki.search.search("quince", refresh=False) == []
    assert wiki.search.rebuild() == len(wiki.pages)
    assert paths(wiki.search.search("quince")) == ["wiki/a.md"]


def test_schema_change_and_dropped_page_cache_reindex(root: Path) -> None:
    write(root, "wiki/a.md", "rambutan\n")
    first = Wiki(root)
    first.search.refresh()
    first.close()
    db = locate_state(root) / "cache.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("UPDATE search_meta SET value='old' WHERE key='schema'")
    conn.commit()
    conn.close()
    w = Wiki(root)
    assert paths(w.search.search("rambutan")) == ["wiki/a.md"]
    w.close()
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM pages")  # as after a page-cache schema change
    conn.commit()
    conn.close()
    write(root, "wiki/b.md", "rambutan too\n")
    w = Wiki(root)
    assert set(paths(w.search.search("rambutan"))) == {"wiki/a.md", "wiki/b.md"}
    docs = _db(w).execute("SELECT count(*) FROM search_docs").fetchone()[0]
    assert docs == len(w.pages)
    w.close()


def _docs(root: Path) -> tuple[int, int]:
    conn = sqlite3.connect(locate_state(root) / "cache.sqlite")
    try:
        count, last = conn.execute("SELECT count(*), max(id) FROM search_docs").fetchone()
        return int(count), int(last)
    finally:
        conn.close()


def test_the_page_cache_filled_after_a_cold_search_indexes_nothing_again(root: Path) -> None:
    # A cold first search builds the index from the files, without the page cache; the next
    # process fills the page cache, and every page it parses is fed to the index. Pages the build
    # indexed from the same bytes must not be indexed again (session 5: every page was, leaving a
    # tombstone each and the index twice its size until the next rebuild).
    write(root, "wiki/a.md", "tamarind\n")
    old = time.time() - 60
    for page in root.rglob("*.md"):
        os.utime(page, (old, old))
    first = Wiki(root)
    assert paths(first.search.search("tamarind")) == ["wiki/a.md"]
    first.close()
    built = _docs(root)
    second = Wiki(root)
    assert len(second.pages) == built[0]  # the page cache filled now, with the index active
    assert paths(second.search.search("tamarind")) == ["wiki/a.md"]
    second.close()
    assert _docs(root) == built  # no document written again


def test_a_page_rewritten_in_its_stamp_after_the_build_is_indexed_again(root: Path) -> None:
    # The build read a page written a moment before (its stamp is racy); the same-size rewrite in
    # the same tick keeps the stamp, so only the page cache's parse can bring the new text in.
    page = write(root, "wiki/a.md", "tamarind\n")
    stamp = page.stat().st_mtime_ns
    first = Wiki(root)
    assert paths(first.search.search("tamarind")) == ["wiki/a.md"]
    first.close()
    page.write_text("mangoes!\n", encoding="utf-8")
    os.utime(page, ns=(stamp, stamp))
    second = Wiki(root)
    assert "wiki/a.md" in second.pages
    assert paths(second.search.search("mangoes", refresh=False)) == ["wiki/a.md"]
    second.close()


# --- the one-shot sweep: a walk started ahead ----------------------------------------------------

def test_a_sweep_started_ahead_is_the_one_shot_check_and_the_query_runs_meanwhile(
        wiki: Wiki, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.corpus import walker

    monkeypatch.setattr(walker, "SHARE_MIN", 4)  # (the sweep's second half stat'ed by a helper)
    page = write(root, "wiki/a.md", "guava\n")
    assert paths(wiki.search.search("guava")) == ["wiki/a.md"]  # built
    # nothing changed: the child's answer is taken, the query answered once (while it ran)
    queries: list[str] = []
    rows = search_mod.SearchIndex._rows
    monkeypatch.setattr(search_mod.SearchIndex, "_rows", lambda self, q: queries.append(q.text) or rows(self, q))
    assert walker.sweep_ahead(root) and walker.sweep_pending(root)
    assert paths(wiki.search.search("guava")) == ["wiki/a.md"]
    assert not walker.sweep_pending(root) and queries == ["guava"]
    # an edit in place (no folder changes), found by the child's sweep: the query answered again
    page.write_text("lychee now\n", encoding="utf-8")
    os.utime(page, ns=(10**18, 10**18))
    assert walker.sweep_ahead(root)
    monkeypatch.setattr(search_mod, "changed_in_index", None)  # (this process sweeps nothing itself)
    assert paths(wiki.search.search("lychee")) == ["wiki/a.md"] and queries[1:] == ["lychee", "lychee"]
    monkeypatch.undo()
    assert wiki.search.search("guava") == []
    # gone: found by the child's sweep too
    page.unlink()
    assert walker.sweep_ahead(root)
    assert wiki.search.search("lychee") == []


def test_after_an_engine_write_a_one_shot_search_refreshes_before_its_query(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The query runs beside the sweep only while the engine wrote nothing since the index's
    last refresh (its action journal as that refresh saw it): after an agent's append, which
    the refresh takes in, the query answered first was answered again (0.35 s at 300,000
    pages). Then it runs once, after the refresh, and finds the fact appended; an outside edit
    (no journal line) is still answered beside the sweep, and again."""
    from curator.engine.corpus import walker
    from curator.engine.write.append import append
    from tests.gui_helpers import make_wiki

    root = make_wiki(tmp_path / "w", {"wiki/kiwi.md": "---\ntitle: Kiwi\n---\n# Kiwi\n\nA fruit.\n",
                                      "wiki/fig.md": "---\ntitle: Fig\n---\n# Fig\n\nAnother fruit.\n"})
    first = Wiki(root)
    assert sorted(paths(first.search.search("fruit"))) == ["wiki/fig.md", "wiki/kiwi.md"]  # (built)
    first.close()
    writer = Wiki(root)
    assert append(writer, "kiwi", "Kiwis ripen beside a quince in three days.").status == "appended"
    writer.close()
    order: list[str] = []
    rows, refresh = search_mod.SearchIndex._rows, search_mod.SearchIndex.refresh
    monkeypatch.setattr(search_mod.SearchIndex, "_rows", lambda self, q: order.append("query") or rows(self, q))
    monkeypatch.setattr(search_mod.SearchIndex, "refresh",
                        lambda self, **kw: order.append("refresh") or refresh(self, **kw))
    wiki = Wiki(root)
    assert walker.sweep_ahead(root)
    assert paths(wiki.search.search("quince")) == ["wiki/kiwi.md"]
    assert order == ["refresh", "query"]  # (once, after the refresh that took the append in)
    wiki.close()
    order.clear()
    wiki = Wiki(root)
    assert walker.sweep_ahead(root)
    assert paths(wiki.search.search("quince")) == ["wiki/kiwi.md"]
    assert order == ["query", "refresh"]  # (nothing written since: beside the sweep, once)
    wiki.close()
    order.clear()
    page = root / "wiki/fig.md"
    page.write_text("---\ntitle: Fig\n---\n# Fig\n\nA quince too.\n", encoding="utf-8")
    os.utime(page, ns=(10**18, 10**18))
    wiki = Wiki(root)
    assert walker.sweep_ahead(root)
    assert sorted(paths(wiki.search.search("quince"))) == ["wiki/fig.md", "wiki/kiwi.md"]
    assert order == ["query", "refresh", "query"]  # (an outside edit: answered again after the sweep)
    wiki.close()


def test_with_a_sweep_a_changed_folder_is_listed_not_stated_page_by_page(
        wiki: Wiki, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder whose mtime moved (a page added, one saved by rename) is listed for its new
    pages; its other pages' stamps are the sweep's to compare, not stat'ed again (262,000 of
    them were 0.4 s of a search after one append at 300,000 pages). Without a sweep (a file
    watcher's process between its sweeps) the folder's pages are stat'ed as before."""
    assert paths(wiki.search.search("filler")) != []  # built
    stated: list[str] = []
    scandir = os.scandir

    class Entry:
        def __init__(self, entry: os.DirEntry[str]) -> None:
            self._entry = entry

        def __getattr__(self, name: str) -> object:
            return getattr(self._entry, name)

        def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
            stated.append(self._entry.name)
            return self._entry.stat(follow_symlinks=follow_symlinks)

    class Listing:
        def __init__(self, it: object) -> None:
            self._it = it

        def __enter__(self) -> Listing:
            return self

        def __exit__(self, *exc: object) -> None:
            self._it.close()  # type: ignore[attr-defined]

        def __iter__(self):  # type: ignore[no-untyped-def]
            return (Entry(e) for e in self._it)  # type: ignore[attr-defined]

    class OsHere:  # (the index module's os alone: the walker's listings are its own)
        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        @staticmethod
        def scandir(path: object) -> Listing:
            return Listing(scandir(path))  # type: ignore[arg-type]

    monkeypatch.setattr(search_mod, "os", OsHere())
    write(root, "filler/new.md", "starfruit fresh\n")
    saved = root / "filler/.f03.tmp"
    saved.write_text("# Filler 3\n\nstarfruit saved by rename\n", encoding="utf-8")
    os.replace(saved, root / "filler/f03.md")
    assert sorted(paths(wiki.search.search("starfruit"))) == ["filler/f03.md", "filler/new.md"]
    assert not [n for n in stated if n.endswith(".md")]  # (the sweep compared their stamps)
    # a page renamed within the folder and one deleted: found as the listing and the index differ
    write(root, "filler/f05.md", "# Filler 5\n\npersimmon\n")
    write(root, "filler/f06.md", "# Filler 6\n\nmedlar\n")
    assert paths(wiki.search.search("persimmon")) == ["filler/f05.md"]
    assert paths(wiki.search.search("medlar")) == ["filler/f06.md"]
    os.rename(root / "filler/f05.md", root / "filler/f05-moved.md")
    (root / "filler/f06.md").unlink()
    assert paths(wiki.search.search("persimmon")) == ["filler/f05-moved.md"]
    assert wiki.search.search("medlar") == []
    # a new sub-folder with a page in it, a link named like a page: the folder found, the link not
    write(root, "filler/sub/deep.md", "# Deep\n\nquandong\n")
    os.symlink(root / "filler/f07.md", root / "filler/link.md")
    assert paths(wiki.search.search("quandong")) == ["filler/sub/deep.md"]
    assert "filler/link.md" not in paths(wiki.search.search("filler"))
    assert not [n for n in stated if n.endswith(".md")]
    wiki.search.sweep_interval = None  # (no sweep: the folder's pages are stat'ed)
    write(root, "filler/newer.md", "starfruit again\n")
    assert sorted(paths(wiki.search.search("starfruit"))) == ["filler/f03.md", "filler/new.md", "filler/newer.md"]
    assert len([n for n in stated if n.endswith(".md")]) >= 12


def test_a_failed_sweep_ahead_leaves_the_sweep_to_the_process(tmp_path: Path) -> None:
    from curator.engine.corpus import walker

    root = tmp_path / "w"
    write(root, "wiki/a.md", "guava\n")
    first = Wiki(root)
    assert paths(first.search.search("guava")) == ["wiki/a.md"]  # built
    first.close()
    locate_state(root).rename(tmp_path / "away")
    assert walker.sweep_ahead(root)  # no database: the child fails
    pid = walker._SWEEPS[os.path.realpath(root)][0]
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # (its end awaited, then the database put back)
    (tmp_path / "away").rename(locate_state(root))
    (root / "wiki/a.md").write_text("lychee\n", encoding="utf-8")
    os.utime(root / "wiki/a.md", ns=(10**18, 10**18))
    w = Wiki(root)
    try:
        assert paths(w.search.search("lychee")) == ["wiki/a.md"]  # swept by this process
        assert not walker.sweep_pending(root)
    finally:
        w.close()


def test_a_page_the_bulk_build_indexed_is_forgotten_when_deleted_before_the_cache_saw_it(
        wiki: Wiki, root: Path) -> None:
    write(root, "wiki/a.md", "guava\n")
    write(root, "wiki/b.md", "quince\n")
    assert paths(wiki.search.search("quince")) == ["wiki/b.md"]  # the bulk build; the page cache is empty
    (root / "wiki/b.md").unlink()
    assert wiki.search.search("quince") == []
    second = Wiki(root)
    try:
        assert second.search.search("quince") == []
    finally:
        second.close()
