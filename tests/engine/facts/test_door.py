"""The write door by meaning (issue 41): the same-page threshold as measured on the planted set,
and the index an append uses only when it is at hand: never built by the append, the answer
saying why ``similar`` is empty while a long-lived process builds it on a thread of its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from curator.engine.facts import door
from curator.engine.facts.door import (
    BUILDING,
    NOT_BUILT,
    PARAPHRASE_MIN,
    append_with_similar,
    warm_in_background,
)
from curator.engine.facts.embed import WordLlamaEmbedder
from curator.engine.facts.index import FactIndex, fact_index_for, fact_index_on_disk
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from tests.engine.facts.planted import DISTRACTORS, PARAPHRASES
from tests.gui_helpers import make_wiki

BOB = Actor("agent", "bob")


def test_the_paraphrase_threshold_is_what_the_planted_set_measures() -> None:
    model = WordLlamaEmbedder()

    def score(a: str, b: str) -> float:
        rows = model.embed([a, b])
        return float(np.dot(rows[0], rows[1]))

    paraphrases = [score(a, b) for a, b in PARAPHRASES]
    # each distractor against both wordings of the fact on its subject
    distractors = [score(w, d) for pair, d in zip(PARAPHRASES, DISTRACTORS, strict=True) for w in pair]
    assert max(distractors) < PARAPHRASE_MIN <= max(distractors) + 0.03  # 0.784: no distinct fact is lost
    assert sum(s >= PARAPHRASE_MIN for s in paraphrases) == 14  # of 22: the looser ones are left to a person


def _wiki(tmp_path: Path) -> Wiki:
    root = make_wiki(tmp_path / "w", {
        "wiki/backups.md": f"# Backups\n\n- {PARAPHRASES[3][0]}\n",
        "wiki/ops.md": "# Ops\n\n- Deployments happen on Tuesdays.\n",
        "departments/hr/records.md": "# Records\n\n- Backups of the staff records database are kept for thirty days.\n",
    })
    return Wiki(root)


def test_while_the_index_is_built_in_the_background_appends_do_not_wait(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    try:
        wiki.session.service(door._Warming, door._Warming)  # a build under way, never finishing here
        result = append_with_similar(wiki, "ops", "The staging cluster is rebuilt on Sundays.", actor=BOB)
        assert result.status == "appended", result.message
        assert (result.data["similar"], result.data["similar_note"]) == ([], BUILDING)
        assert wiki.session.peek(FactIndex) is None and not fact_index_on_disk(wiki)
        # the same-page check by meaning still holds without it
        result = append_with_similar(wiki, "backups", PARAPHRASES[3][1], actor=BOB)
        assert (result.status, result.data["matched"]) == ("duplicate", PARAPHRASES[3][0])
    finally:
        wiki.close()


def test_a_background_build_makes_later_appends_answer_similar(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    try:
        first = append_with_similar(wiki, "ops", "The staging cluster is rebuilt on Sundays.", actor=BOB)
        assert first.data["similar_note"] == NOT_BUILT
        thread = warm_in_background(wiki)
        assert thread is not None and warm_in_background(wiki) is None  # once per session
        thread.join(120)
        assert fact_index_on_disk(wiki)
        result = append_with_similar(wiki, "ops", "Customer database backups are retained for one month.",
                                     actor=BOB)
        assert result.status == "appended" and "similar_note" not in result.data, result.data
        paths = [s["path"] for s in result.data["similar"]]
        assert paths[0] == "wiki/backups.md" and len(paths) == 3, result.data
        assert not any(p.startswith("departments/") for p in paths)
    finally:
        wiki.close()


def test_a_long_lived_session_scores_the_pages_it_wrote_without_updating_the_index(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    try:
        index = fact_index_for(wiki)  # held by the session, as the MCP server and the station hold it
        first = append_with_similar(wiki, "ops", "Customer database backups are retained for one month.",
                                    actor=BOB)
        assert first.status == "appended" and "similar_note" not in first.data
        live = wiki.session.peek(door._Live)
        assert live is not None and list(live.written) == ["wiki/ops.md"]
        assert "Customer database backups are retained for one month." not in [f.text for f in index.facts()]
        hr = append_with_similar(wiki, "departments/hr/records", "Staff record backups are kept for a month.")
        assert hr.status == "appended", hr.message
        # the fact just written on ops (no index update for it), never the HR page's, for bob
        result = append_with_similar(wiki, "ops", "The customer database backups are stored for a month.", actor=BOB)
        near = [(s["path"], s["line"], s["text"]) for s in result.data["similar"]]
        assert near[0] == ("wiki/ops.md", 7, "Customer database backups are retained for one month."), near
        assert not any(p.startswith("departments/") for p, _l, _t in near)
        assert [p for p, _l, _t in near].count("wiki/ops.md") == 2  # its rows in the index left out
        assert "departments/hr/records.md" in [s["path"] for s in append_with_similar(
            wiki, "ops", "Backups of staff records stay for one month.").data["similar"]]
        # a same-page paraphrase is a duplicate here too (the page's rows from the index)
        dup = append_with_similar(wiki, "backups", PARAPHRASES[3][1], actor=BOB)
        assert (dup.status, dup.data["matched"]) == ("duplicate", PARAPHRASES[3][0])
        # once due, the index is brought up to date on the session's thread and the pages let go
        live.refreshed -= door.REFRESH_S
        append_with_similar(wiki, "ops", "The release train leaves every second Wednesday.", actor=BOB)
        live.pool.submit(lambda: None).result()
        assert live.written == {}
        assert "Customer database backups are retained for one month." in [f.text for f in index.facts()]
    finally:
        wiki.close()


def test_the_same_frame_with_another_filler_is_another_fact(tmp_path: Path) -> None:
    """Close in meaning is not the same fact when one is the other with a name or a number put in
    another's place: such an append is written (a wrong duplicate would lose it), while a
    rewording of the page's fact is still a duplicate."""
    from curator.engine.facts.conflicts import another_fact_in_the_same_words

    assert not any(another_fact_in_the_same_words(a, b) for a, b in PARAPHRASES)
    root = make_wiki(tmp_path / "w", {"wiki/payments.md": "# Payments\n\n- bob recorded settlement fact number 0 today\n"})
    wiki = Wiki(root)
    try:
        for other in ("cyd recorded settlement fact number 0 today", "bob recorded settlement fact number 1 today"):
            result = append_with_similar(wiki, "payments", other, actor=BOB)
            assert result.status == "appended", result.message
        reworded = append_with_similar(wiki, "payments", "today bob recorded the settlement fact number 0", actor=BOB)
        assert reworded.status == "duplicate", reworded.message
    finally:
        wiki.close()


def test_a_one_shot_append_with_the_index_on_disk_decodes_no_page(tmp_path: Path) -> None:
    """A fresh process (``curator append --json``) with the index on disk: the index compares its
    pages' stamps with the store's and routing lists names, neither decodes the store's pages
    (decoding 32,000 of them took 1.1 s, half of such an append), and the answer is the same."""
    wiki = _wiki(tmp_path)
    fact_index_for(wiki)
    wiki.close()
    fresh = Wiki(wiki.root)
    try:
        result = append_with_similar(fresh, "ops", "Customer database backups are retained for one month.",
                                     actor=BOB)
        assert result.status == "appended" and "similar_note" not in result.data, result.data
        assert result.data["similar"][0]["path"] == "wiki/backups.md"
        # nor walks the tree: the pages as the cache holds them (0.6 s of walking at 32,000 pages)
        assert not fresh.store.decoded and not fresh.store.loaded
    finally:
        fresh.close()


def test_a_one_shot_append_never_lists_its_own_fact_among_the_similar(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A process that does not hold the index loads it beside the append: when the page appended
    to changed since the index was saved, the loading reads it again, and the append waits for
    that before it writes (else the loading could read the new fact and answer it as similar)."""
    import time

    from curator.engine.write.append import append

    wiki = _wiki(tmp_path)
    fact_index_for(wiki)
    assert append(wiki, "backups", "Restores are tested every quarter.", [], False, BOB).status == "appended"
    wiki.close()
    slow = FactIndex._embed_pages

    def slowly(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(0.5)  # (the append would write meanwhile)
        return slow(self, *args, **kwargs)

    monkeypatch.setattr(FactIndex, "_embed_pages", slowly)
    fresh = Wiki(wiki.root)
    try:
        new = "Backup copies are shipped offsite to the Lyon vault weekly."
        result = append_with_similar(fresh, "backups", new, actor=BOB)
        assert result.status == "appended", result.message
        texts = [s["text"] for s in result.data["similar"]]
        assert "Restores are tested every quarter." in texts and new not in texts, texts
    finally:
        fresh.close()


def test_a_one_shot_append_after_the_page_cache_was_deleted_keeps_the_fact_index(tmp_path: Path) -> None:
    """With the page cache gone (deleted, or never made by this copy) and the fact index kept, a
    one-shot append looks at the pages themselves: the cache's empty database is not read as a
    wiki without pages (which would drop every page from the fact index)."""
    wiki = _wiki(tmp_path)
    fact_index_for(wiki)
    state = wiki.state_dir
    wiki.close()
    for leftover in state.glob("cache.sqlite*"):
        leftover.unlink()
    fresh = Wiki(wiki.root)
    try:
        result = append_with_similar(fresh, "ops", "Customer database backups are retained for one month.",
                                     actor=BOB)
        assert result.status == "appended" and result.data["similar"][0]["path"] == "wiki/backups.md", result.data
    finally:
        fresh.close()
    again = FactIndex(Wiki(wiki.root))
    again.update()
    assert {f.path for f in again.facts()} >= {"wiki/backups.md", "wiki/ops.md"}
