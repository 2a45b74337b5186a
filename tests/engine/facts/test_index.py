"""The fact index: built once, kept current page by page, each fact text embedded once, rebuilt
when its file is missing or damaged, and answering only what a reader may see."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from curator.engine.facts.embed import WordLlamaEmbedder
from curator.engine.facts.index import INDEX_NAME, FactIndex, fact_index_for
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki


class CountingEmbedder(WordLlamaEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return super().embed(texts)


def _write(root: Path, name: str, body: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {name}\n---\n# {name}\n\n{body}")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new stamp even within one tick


def test_update_reembeds_only_new_fact_texts(tmp_path: Path) -> None:
    _write(tmp_path, "a.md", "- The build server restarts every night.\n- Ann leads the payments team.\n")
    _write(tmp_path, "b.md", "Backups of the database are kept for thirty days.\n")
    counting = CountingEmbedder()
    wiki = Wiki(tmp_path)
    index = fact_index_for(wiki, counting)
    assert sorted(f.text for f in index.facts()) == [
        "Ann leads the payments team.", "Backups of the database are kept for thirty days.",
        "The build server restarts every night."]
    assert len(counting.texts) == 3
    _write(tmp_path, "a.md", "- Ann leads the payments team.\n- The build server restarts every night.\n"
           "- The coffee machine is broken again.\n")
    wiki.refresh()
    assert index.update() == ["a.md"]
    assert counting.texts[3:] == ["The coffee machine is broken again."]  # moved lines: not embedded again
    _write(tmp_path, "c.md", "- Backups of the database are kept for thirty days.\n")  # a copied fact
    wiki.refresh()
    index.update()
    assert len(counting.texts) == 4
    (tmp_path / "b.md").unlink()
    wiki.refresh()
    assert index.update() == ["b.md"]
    assert {f.path for f in index.facts()} == {"a.md", "c.md"}
    assert index.update() == []


def test_index_is_kept_on_disk_and_rebuilt_when_missing_or_damaged(tmp_path: Path) -> None:
    _write(tmp_path, "a.md", "- The build server restarts every night.\n")
    wiki = Wiki(tmp_path)
    fact_index_for(wiki)
    stored = wiki.state_dir / INDEX_NAME
    assert stored.is_file()
    # Another process: answers from the file without embedding anything.
    counting = CountingEmbedder()
    again = FactIndex(Wiki(tmp_path), counting)
    again.update()
    assert [f.text for f in again.facts()] == ["The build server restarts every night."]
    assert counting.texts == []
    stored.unlink()
    rebuilt = FactIndex(Wiki(tmp_path), counting)
    rebuilt.update()
    assert counting.texts == ["The build server restarts every night."] and stored.is_file()
    stored.write_bytes(b"not a database at all" * 100)
    damaged = FactIndex(Wiki(tmp_path), CountingEmbedder())
    damaged.update()
    assert [f.text for f in damaged.facts()] == ["The build server restarts every night."]


def test_neighbours_nearest_text_and_pairs(tmp_path: Path) -> None:
    _write(tmp_path, "a.md", "- The build server restarts every night at two.\n- Paris is the capital of France.\n")
    _write(tmp_path, "hidden/b.md", "- Each night at two the build server is rebooted.\n")
    wiki = Wiki(tmp_path)
    index = fact_index_for(wiki)
    server, paris = index.page_facts("a.md")
    near = index.neighbours(server, k=2)
    assert near[0][0].path == "hidden/b.md" and near[0][1] > near[1][1]
    assert index.neighbours(server, k=5, visible=lambda p: not p.startswith("hidden/"))[0][0] == paris
    assert index.nearest_text("when does the build server reboot", k=1)[0][0].path == "hidden/b.md"
    pairs = list(index.pairs(0.6))
    assert [(a.path, b.path) for a, b, _ in pairs] == [("a.md", "hidden/b.md")]
    assert list(index.pairs(0.6, visible=lambda p: not p.startswith("hidden/"))) == []
    reverse = list(index.pairs(0.6, page="hidden/b.md"))
    assert reverse[0][0].path == "hidden/b.md"


def test_visible_pages_only_for_an_actor(tmp_path: Path) -> None:
    from curator.engine.facts.similar import find_similar
    from curator.engine.policy.actor import parse_actor

    class HideHidden:
        def can_read(self, actor: Actor, path: str) -> bool:
            return not path.startswith("hidden/")

    _write(tmp_path, "a.md", "- Backups of the customer database are kept for thirty days.\n")
    _write(tmp_path, "hidden/b.md", "- Customer database backups are retained for 30 days.\n")
    wiki = Wiki(tmp_path)
    wiki.policy = HideHidden()  # type: ignore[assignment]
    assert len(find_similar(wiki, parse_actor("operator"))) == 1
    assert find_similar(wiki, parse_actor("agent:bot")) == []
    assert find_similar(wiki, parse_actor("agent:bot"), page="a.md") == []


def test_template_lines_make_no_pairs(tmp_path: Path) -> None:
    from curator.engine.facts.index import TEMPLATE_PAGES
    from curator.engine.facts.similar import find_similar
    from curator.engine.policy.actor import OPERATOR

    subjects = ["The garden needs water twice a week.", "Paris is the capital city of France.",
                "The cat sleeps on the sofa all afternoon.", "Volcanic soil is fertile for grapes.",
                "The novel was translated into twelve languages.", "Trains to Berlin leave every hour.",
                "Copper conducts electricity very well."]
    for i in range(TEMPLATE_PAGES + 1):
        _write(tmp_path, f"p{i}.md", f"- Filed under the how-to shelf here.\n- {subjects[i]}\n")
    _write(tmp_path, "q.md", "- Backups of the customer database are kept for thirty days.\n")
    _write(tmp_path, "r.md", "- Customer database backups are retained for 30 days.\n")
    wiki = Wiki(tmp_path)
    index = fact_index_for(wiki)
    assert all("Filed under" not in a.text for a, _b, _s in index.pairs(0.65))
    assert [len(g.facts) for g in find_similar(wiki, OPERATOR)] == [2]
    assert find_similar(wiki, OPERATOR, page="p0") == []


def test_a_big_wikis_two_step_neighbours_answer_as_the_exact_ones(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Above EXACT_MAX distinct texts, neighbours come from a coarse pass on the vectors' first
    coordinates then exact scores, and whole-wiki pairs from an HNSW graph (usearch): on a wiki small
    enough to check, they answer what the exact path answers."""
    import curator.engine.facts.index as index_module
    from tests.engine.facts.test_similar import _planted_wiki

    wiki = _planted_wiki(tmp_path)
    exact = fact_index_for(wiki)
    facts = exact.facts()
    want_near = [[(f.key, round(s, 2)) for f, s in exact.neighbours(f, k=3)] for f in facts]
    want_pairs = {(a.key, b.key) for a, b, _s in exact.pairs(0.65)}
    assert want_pairs
    monkeypatch.setattr(index_module, "EXACT_MAX", 4)
    monkeypatch.setattr(index_module, "COARSE_KEEP", 8)  # fewer than the texts: the coarse pass picks
    monkeypatch.setattr(index_module, "GRAPH_MIN", 1)  # the whole wiki's pairs from the HNSW graph
    big = FactIndex(wiki)
    big.update()
    assert big._count > 8
    near = [[(f.key, round(s, 2)) for f, s in big.neighbours(f, k=3)] for f in facts]
    agree = sum(a == b for a, b in zip(near, want_near, strict=True))
    assert agree >= 0.9 * len(facts), (agree, len(facts))
    got_pairs = {(a.key, b.key) for a, b, _s in big.pairs(0.65)}
    assert len(got_pairs & want_pairs) >= 0.9 * len(want_pairs)
    assert len(got_pairs - want_pairs) <= 0.1 * len(want_pairs)
    assert not {(a.key, b.key) for a, b, s in big.pairs(0.65) if s < 0.65}


def test_facts_read_back_from_the_file_equal_the_pages_facts(tmp_path: Path) -> None:
    """What a later process loads from the index file is the fact as the page states it, stamps
    included (a fact compared with the page's own must be equal to it)."""
    from curator.engine.corpus.facts import page_facts

    _write(tmp_path, "a.md", "- The lobby code is 4711. (added 2026-01-02) (verified 2026-03-04)\n"
           "- Paris is the capital of France.\n")
    fact_index_for(Wiki(tmp_path))
    wiki = Wiki(tmp_path)  # another process: the index comes from its file
    again = FactIndex(wiki)
    again.update()
    assert again.embedded == 0
    assert again.page_facts("a.md") == page_facts("a.md", wiki.read_text("a.md"))
    assert again.page_facts("a.md")[0].verified == "2026-03-04"


def test_each_texts_nearest_and_the_notes_are_worked_out_once(tmp_path: Path) -> None:
    """The whole wiki's pairs come from each text's nearest, worked out once and saved; a noted
    pair (the conflict queue's reasons) is asked about once ever, in this process or the next;
    after an append only the new text is asked about."""
    _write(tmp_path, "a.md", "- Backups of the customer database are kept for thirty days.\n"
           "- The build server restarts every night at two.\n")
    _write(tmp_path, "b.md", "- Customer database backups are retained for 14 days.\n")
    asked: list[tuple[str, str]] = []

    def note(a: str, b: str) -> str | None:
        asked.append((a, b))
        return "days differ" if "days" in a and "days" in b else None

    wiki = Wiki(tmp_path)
    index = fact_index_for(wiki)
    first = index.noted_pairs("test-1", 0.6, note)
    assert [(a.path, b.path, said) for a, b, _s, said in first] == [("a.md", "b.md", "days differ")]
    assert len(asked) == 2  # (each way round, for a pair it says something about)
    assert index.noted_pairs("test-1", 0.6, note) == first and len(asked) == 2

    later = FactIndex(Wiki(tmp_path))  # the next process: from the file
    later.update()
    worked_out: list[int] = []
    knn = later._knn

    def counted_knn(asking: np.ndarray, *rest: Any) -> tuple[np.ndarray, np.ndarray]:
        worked_out.append(len(asking))
        return knn(asking, *rest)

    later._knn = counted_knn  # type: ignore[method-assign,assignment]
    assert [(a.path, b.path) for a, b, _s, _t in later.noted_pairs("test-1", 0.6, note)] == [("a.md", "b.md")]
    assert len(asked) == 2 and worked_out == []  # the nearest and the notes came from the file
    _write(tmp_path, "c.md", "- The database backups of customers are kept for 90 days.\n")
    later.wiki.refresh()
    later.update()
    noted = later.noted_pairs("test-1", 0.6, note)
    assert {frozenset((a.path, b.path)) for a, b, _s, _t in noted} == {
        frozenset(("a.md", "b.md")), frozenset(("a.md", "c.md")), frozenset(("b.md", "c.md"))}
    assert all("90 days" in a + b for a, b in asked[2:]) and len(asked) == 6
    assert worked_out == [1]  # only the new text's nearest
    hidden = later.noted_pairs("test-1", 0.6, note, visible=lambda p: p != "c.md")
    assert {frozenset((a.path, b.path)) for a, b, _s, _t in hidden} == {frozenset(("a.md", "b.md"))}


def test_the_saved_nearest_read_back_and_a_damaged_row_asked_again(tmp_path: Path) -> None:
    """Each text's nearest read back from the file equal what was worked out; a saved row that does
    not fit (cut short, or naming a text the table lacks) is left out and worked out again."""
    import sqlite3

    for i in range(4):
        _write(tmp_path, f"p{i}.md", f"- Customer database backups are retained for {10 + i} days.\n"
               f"- The refund window is {20 + i} days for online orders.\n- Ann Smith leads the payments team.\n")
    index = fact_index_for(Wiki(tmp_path))
    every = np.arange(index._count)
    worked = index._nearest_rows(every)
    assert worked.known[every].all() and (worked.rows[every] >= 0).any()
    later = FactIndex(Wiki(tmp_path))
    later.update()
    read = later._load_near()
    assert np.array_equal(read.known[every], worked.known[every])
    assert np.array_equal(read.rows[every], worked.rows[every]) and np.array_equal(read.steps[every], worked.steps[every])
    conn = sqlite3.connect(later.path)
    conn.execute("UPDATE near SET near = substr(near, 1, 3) WHERE id = 0")
    conn.execute("UPDATE near SET near = ? WHERE id = 1", (np.array([999], dtype=np.int32).tobytes(),))
    conn.execute("UPDATE near SET scores = ? WHERE id = 1", (bytes([200]),))
    conn.commit()
    conn.close()
    damaged = FactIndex(Wiki(tmp_path))
    damaged.update()
    table = damaged._load_near()
    assert not table.has(np.array([0, 1])).any() and table.has(every[2:]).all()
    assert np.array_equal(table.rows[every[2:]], worked.rows[every[2:]])
    assert damaged._nearest_rows(every).known[[0, 1]].all()  # worked out again


def test_an_index_of_another_model_is_started_over_in_a_new_file(tmp_path: Path) -> None:
    """Vectors of two models do not compare: another model's (or an older layout's) index is
    thrown away with its file, not kept around inside a new one."""
    for i in range(40):
        _write(tmp_path, f"p{i}.md", "".join(f"- Fact number {i * 100 + j} about the warehouse.\n" for j in range(20)))
    wiki = Wiki(tmp_path)
    fact_index_for(wiki)
    big = (wiki.state_dir / INDEX_NAME).stat().st_size
    small = FactIndex(Wiki(tmp_path), WordLlamaEmbedder(64))
    small.update()
    assert small.embedded == 800 and len(small.facts()) == 800
    assert (wiki.state_dir / INDEX_NAME).stat().st_size < 0.7 * big


def _conflicting_wiki(root: Path) -> Wiki:
    for i in range(6):
        _write(root, f"p{i}.md", f"- Customer database backups are retained for {10 + i} days.\n"
               f"- The refund window is {20 + i} days for online orders.\n- Ann Smith leads the payments team.\n")
    return Wiki(root)


def test_many_pairs_are_read_in_a_process_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first whole-wiki run reads its many pairs in a child process (the memory of the texts it
    read goes with it): the same notes as read here, and nothing of the texts left in this one."""
    from curator.engine.facts import conflicts
    from curator.engine.facts import index as index_module

    here = fact_index_for(_conflicting_wiki(tmp_path / "here")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    conflicts.forget_texts()
    monkeypatch.setattr(index_module, "CHILD_PAIRS", 1)
    monkeypatch.setattr(index_module, "runs_for_long", lambda: True)  # (a station's process)
    away = fact_index_for(_conflicting_wiki(tmp_path / "away")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    assert here and [(a.path, a.line, b.path, b.line, s, t) for a, b, s, t in away] == [
        (a.path, a.line, b.path, b.line, s, t) for a, b, s, t in here]
    assert not conflicts._TEXTS  # read in the child


def test_many_pairs_are_read_by_a_process_per_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On two cores a first whole-wiki run of a one-shot command reads its pairs in two child
    processes at once, each with a part of them: the same notes as one process reads, nothing read
    in this one."""
    from curator.engine.facts import conflicts
    from curator.engine.facts import index as index_module

    here = fact_index_for(_conflicting_wiki(tmp_path / "here")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    conflicts.forget_texts()
    parts: list[int] = []
    real_child = index_module._notes_in_a_child

    def counted_child(note: index_module.NoteFn, texts: list[str], pairs: np.ndarray) -> list[tuple[int, int, str]]:
        parts.append(len(pairs))
        return real_child(note, texts, pairs)

    monkeypatch.setattr(index_module, "CHILD_PAIRS", 1)
    monkeypatch.setattr(index_module, "runs_for_long", lambda: False)  # (a one-shot command)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(index_module, "_notes_in_a_child", counted_child)
    away = fact_index_for(_conflicting_wiki(tmp_path / "away")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    assert here and [(a.path, a.line, b.path, b.line, s, t) for a, b, s, t in away] == [
        (a.path, a.line, b.path, b.line, s, t) for a, b, s, t in here]
    assert len(parts) == 2 and all(parts)
    assert not conflicts._TEXTS


def test_a_frozen_build_reads_the_pairs_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In the desktop build the executable is the station, not a Python to start: no child."""
    from curator.engine.facts import conflicts
    from curator.engine.facts import index as index_module

    def no_child(*_args: object) -> list[tuple[int, int, str]]:
        raise AssertionError("a child process was started")

    monkeypatch.setattr(index_module, "CHILD_PAIRS", 1)
    monkeypatch.setattr(index_module, "runs_for_long", lambda: True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(index_module, "_notes_in_a_child", no_child)
    found = fact_index_for(_conflicting_wiki(tmp_path / "w")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    assert any("days vs" in t for _a, _b, _s, t in found)


def test_the_pairs_are_cut_by_meaning_each_once() -> None:
    """The parts of a first run's pairs: every pair in exactly one part, the parts about equal, and
    fewer texts read in two parts than when each pair went with its first text's stretch."""
    from curator.engine.facts.index import _cut

    rng = np.random.default_rng(7)
    places = rng.normal(size=4000)
    by_place = np.argsort(places)
    # (each text paired with texts near it in meaning, as the nearest texts are)
    at = rng.integers(0, 4000, 30000)
    near = np.clip(at + rng.integers(-40, 41, 30000), 0, 3999)
    pairs = np.stack([by_place[at], by_place[near]], axis=1).astype(np.int32)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    parts = _cut(pairs, places, 2)
    assert len(parts) == 2
    assert sorted(map(tuple, np.concatenate(parts).tolist())) == sorted(map(tuple, pairs.tolist()))
    assert all(0.4 * len(pairs) <= len(part) <= 0.6 * len(pairs) for part in parts)
    twice = len(np.intersect1d(np.unique(parts[0]), np.unique(parts[1])))
    half = places[pairs[:, 0]] > np.median(places)
    naive = len(np.intersect1d(np.unique(pairs[half]), np.unique(pairs[~half])))
    assert twice < 0.75 * naive
    assert _cut(pairs, None, 2) == [pairs] and len(_cut(pairs, places, 1)) == 1


def test_pairs_are_read_here_when_the_process_of_their_own_fails(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.facts import conflicts
    from curator.engine.facts import index as index_module

    monkeypatch.setattr(index_module, "CHILD_PAIRS", 1)
    monkeypatch.setattr(index_module, "runs_for_long", lambda: True)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    found = fact_index_for(_conflicting_wiki(tmp_path / "w")).noted_pairs("c", 0.6, conflicts.conflict_reason)
    assert any("days vs" in t for _a, _b, _s, t in found)


def test_the_process_of_their_own_never_runs_the_callers_main_module(tmp_path: Path) -> None:
    """A script calling the engine without a main guard is not run again by the child (a spawned
    multiprocessing worker imports its parent's main module)."""
    import subprocess

    from tests import REPO

    script = tmp_path / "caller.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "from curator.engine.facts import conflicts, index\n"
        "from curator.engine.memory import return_freed_memory\n"
        "from curator.engine.wiki import Wiki\n"
        "print('main module ran')\n"
        "return_freed_memory()\n"
        "index.CHILD_PAIRS = 1\n"
        "found = index.fact_index_for(Wiki(Path(sys.argv[1]))).noted_pairs('c', 0.6, conflicts.conflict_reason)\n"
        "print(len(found), 'notes', 'here' if conflicts._TEXTS else 'away')\n")
    _conflicting_wiki(tmp_path / "w")
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "w")], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("main module ran") == 1 and done.stdout.strip().endswith("notes away"), done.stdout


def test_damaged_page_rows_are_read_again_and_the_others_kept(tmp_path: Path) -> None:
    """The pages' rows are checked all at once when the file is read back: a row naming a text
    the table lacks, one cut short and one with unreadable dates are left out (their pages read
    again), every other page is kept as stored (nothing embedded for it)."""
    for name in "abcde":
        _write(tmp_path, f"{name}.md", f"- Depot {name} ships crates on Mondays.\n- Depot {name} closes at six.\n")
    fact_index_for(Wiki(tmp_path))
    conn = sqlite3.connect(Wiki(tmp_path).state_dir / INDEX_NAME)
    conn.execute("UPDATE pages SET ids = ? WHERE path = 'a.md'", (np.array([0, 10**6], dtype=np.int32).tobytes(),))
    conn.execute("UPDATE pages SET ids = ? WHERE path = 'b.md'", (b"\x00\x00",))
    conn.execute("UPDATE pages SET stamps = ? WHERE path = 'c.md'", ("{not json",))
    conn.commit()
    conn.close()
    counting = CountingEmbedder()
    again = FactIndex(Wiki(tmp_path), counting)
    assert sorted(again.update()) == ["a.md", "b.md", "c.md"]
    assert counting.texts == []  # (their texts are in the table already)
    assert sorted(f.text for f in again.facts()) == sorted(
        f"Depot {n} {what}" for n in "abcde" for what in ("ships crates on Mondays.", "closes at six."))
