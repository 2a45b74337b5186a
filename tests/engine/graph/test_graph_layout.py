"""Graph layout: main component in the middle, small components and orphans around it, cached
positions reused so an update moves little, no Qt needed."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from curator.engine.graph.layout import LayoutEngine, LayoutProcess, engine_for, layout_graph
from curator.engine.graph.link_graph import graph_for
from curator.engine.wiki import Wiki


def ring_graph() -> tuple[list[str], list[tuple[str, str]]]:
    """A 60-node main component, five 3-node chains and twenty orphans."""
    nodes = [f"m{i}" for i in range(60)]
    edges = [(f"m{i}", f"m{(i + 1) % 60}") for i in range(60)] + [(f"m{i}", f"m{(i * 7) % 60}") for i in range(60)]
    for c in range(5):
        chain = [f"c{c}-{j}" for j in range(3)]
        nodes += chain
        edges += [(chain[0], chain[1]), (chain[1], chain[2])]
    nodes += [f"o{i}" for i in range(20)]
    return nodes, edges


def radius(pos: dict[str, tuple[float, float]], names: list[str], center: tuple[float, float]) -> list[float]:
    return [math.dist(pos[n], center) for n in names]


def test_main_component_in_the_middle_others_around_it() -> None:
    nodes, edges = ring_graph()
    pos = LayoutEngine().layout(nodes, edges)
    assert set(pos) == set(nodes)
    main = [n for n in nodes if n.startswith("m")]
    cx = sum(pos[n][0] for n in main) / len(main)
    cy = sum(pos[n][1] for n in main) / len(main)
    main_r = max(radius(pos, main, (cx, cy)))
    others = [n for n in nodes if not n.startswith("m")]
    assert min(radius(pos, others, (cx, cy))) > main_r  # nothing overlaps the main component
    # the main component is spread out, not collapsed onto a point
    xs = sorted(pos[n][0] for n in main)
    assert xs[-1] - xs[0] > 3
    # members of one small component stay together
    chain = [pos[f"c0-{j}"] for j in range(3)]
    assert math.dist(chain[0], chain[1]) < 3 and math.dist(chain[1], chain[2]) < 3
    # no two orphans share a place
    orphan_pos = {(round(pos[n][0], 3), round(pos[n][1], 3)) for n in nodes if n.startswith("o")}
    assert len(orphan_pos) == 20


def test_update_moves_little_and_new_nodes_start_near_neighbours() -> None:
    nodes, edges = ring_graph()
    engine = LayoutEngine()
    before = engine.layout(nodes, edges)
    after = engine.layout([*nodes, "new", "o-new"], [*edges, ("new", "m3")])
    assert all(after[n] == before[n] for n in nodes)  # cached positions are kept
    step = max(math.dist(before[a], before[b]) for a, b in edges if a.startswith("m"))
    assert math.dist(after["new"], after["m3"]) <= step + 1e-6
    assert "o-new" in after
    # a removed node simply disappears; a full re-layout ignores the cache
    again = engine.layout(nodes[1:], [e for e in edges if nodes[0] not in e])
    assert nodes[0] not in again
    fresh = engine.layout(nodes, edges, full=True)
    assert set(fresh) == set(nodes)


def test_positions_survive_a_restart_through_the_cache_file(tmp_path: Path) -> None:
    nodes, edges = ring_graph()
    engine = engine_for(tmp_path / ".curator")
    first = engine.layout(nodes, edges)
    engine.save()
    again = engine_for(tmp_path / ".curator").layout(nodes, edges)
    assert all(math.dist(first[n], again[n]) < 0.01 for n in nodes)
    (tmp_path / ".curator" / "layout.json").write_text("{broken", encoding="utf-8")
    assert set(engine_for(tmp_path / ".curator").layout(nodes, edges)) == set(nodes)


def test_layout_of_a_wiki_graph_and_empty_graph(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n[[b]] [[ghost]]\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("# C\n", encoding="utf-8")
    pos = layout_graph(graph_for(Wiki(tmp_path)))
    assert set(pos) == {"a.md", "b.md", "c.md", "unresolved:ghost"}
    assert LayoutEngine().layout([], []) == {}
    only_orphans = LayoutEngine().layout(["x", "y", "z"], [])
    assert len({p for p in only_orphans.values()}) == 3


def test_engine_modules_do_not_import_qt() -> None:
    code = ("import sys, curator.engine.graph.layout, curator.engine.graph.link_graph; "
            "sys.exit(1 if any(m.startswith(('PySide6', 'pyqtgraph')) for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_a_big_main_component_is_laid_out_in_a_worker_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """igraph holds the interpreter lock through a whole layout (seconds at 30,000 nodes, the
    station's GUI thread frozen meanwhile), so a big one runs in a worker process, and comes back
    as the same kind of picture (igraph's own random steps differ from run to run anyway)."""
    from curator.engine.graph import layout

    nodes = [f"n{i:03d}" for i in range(120)]
    edges = [(nodes[i], nodes[(i * 7 + 3) % 120]) for i in range(120)] + [(nodes[i], nodes[i + 1]) for i in range(119)]
    answers: list[object] = []
    real = layout._fr_in_a_process

    def recording(*args: object) -> object:
        answers.append(real(*args))  # type: ignore[arg-type]
        return answers[-1]

    monkeypatch.setattr(layout, "FR_ELSEWHERE_ABOVE", 50)
    monkeypatch.setattr(layout, "_fr_in_a_process", recording)
    pos = LayoutEngine().layout(nodes, edges)
    assert len(answers) == 1 and answers[0] is not None  # laid out in the worker
    assert set(pos) == set(nodes)
    radii = sorted(math.hypot(x, y) for x, y in pos.values())
    r95 = radii[int(0.95 * (len(radii) - 1))]
    assert all(math.isfinite(r) for r in radii)
    assert r95 == pytest.approx(layout.MAIN_SPREAD * math.sqrt(len(nodes)), rel=0.05)  # spread as in place


def _index_pairs(nodes: list[str], edges: list[tuple[str, str]]) -> np.ndarray:
    index = {n: i for i, n in enumerate(nodes)}
    return np.array([(index[a], index[b]) for a, b in edges], dtype=np.int64)


def test_a_layout_process_lays_out_in_another_process_and_shares_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The station's big global layout runs in a worker process (igraph's C calls there hold no
    lock of the station's): nothing is laid out in this process, and the positions it saved are
    the ones an engine here then keeps."""
    nodes, edges = ring_graph()

    def here(*_a: object, **_k: object) -> None:
        raise AssertionError("laid out in this process")

    monkeypatch.setattr(LayoutEngine, "layout_pairs", here)
    with LayoutProcess(tmp_path / ".curator" / "layout.json") as process:
        coords = process.layout(nodes, _index_pairs(nodes, edges), save=True)
        assert coords is not None and coords.shape == (len(nodes), 2) and np.isfinite(coords).all()
        more = [*nodes, "new"]
        moved = process.layout(more, _index_pairs(more, [*edges, ("new", "m3")]), save=True)
    assert moved is not None and np.abs(moved[:-1] - coords).max() < 1e-9  # (its engine kept its cache)
    monkeypatch.undo()
    again = engine_for(tmp_path / ".curator").layout(nodes, edges)
    assert all(math.dist(again[n], tuple(coords[i])) < 0.001 for i, n in enumerate(nodes))


def test_a_layout_process_that_cannot_start_answers_none(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    def no_processes(*_a: object) -> None:
        raise OSError("no processes here")

    monkeypatch.setattr(multiprocessing, "get_context", no_processes)
    nodes, edges = ring_graph()
    with LayoutProcess(None) as process:
        assert process.layout(nodes, _index_pairs(nodes, edges)) is None


def test_an_engine_reads_its_cache_at_its_first_layout_and_again_after_forget(tmp_path: Path) -> None:
    nodes, edges = ring_graph()
    first = engine_for(tmp_path / ".curator")
    placed = first.layout(nodes, edges)
    first.save()
    engine = engine_for(tmp_path / ".curator")
    assert engine.positions == {}  # (not read yet: a station reads it off the GUI thread, or never)
    engine.save()  # nothing laid out here: the file stays as it is
    assert engine_for(tmp_path / ".curator").layout(nodes, edges).keys() == placed.keys()
    assert all(math.dist(engine.layout(nodes, edges)[n], placed[n]) < 0.001 for n in nodes)
    with LayoutProcess(tmp_path / ".curator" / "layout.json") as process:
        elsewhere = process.layout([*nodes, "far"], _index_pairs(nodes, edges), save=True)
    assert elsewhere is not None
    engine.forget()
    assert "far" in engine.layout([*nodes, "far"], edges)  # the process's cache, read again
    assert math.dist(engine.positions["far"], tuple(elsewhere[-1])) < 0.001
