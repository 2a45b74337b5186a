"""Link resolution benchmark (issue 18) on 32,000 pages: Obsidian's rule stays index-driven.

Run: ``.venv/bin/python -m pytest tests/perf/test_perf_links.py -s -p no:cacheprovider``.
Measured in one run, medians of three:

* ours: building the :class:`~curator.engine.corpus.links.LinkIndex` from the cached pages (every link of
  every page resolved from its own page: same folder, shortest path, attachments; backlinks);
* a naive baseline: the same rule applied by scanning every page path (and attachment) for each
  link, on a sample of links, extrapolated to all of them;
* a plain read of every page file (the floor any resolver that re-reads files pays).

Also the cost of the scans this issue added to parsing (headings, block ids, property links,
comments and indented code), as a share of the whole parse of the same pages.

The incremental link index (issue 19) on 32,000 real-shaped pages (``tests.corpus.generate(...,
profile="real-shaped")``, ``CURATOR_SCALE_PAGES`` picks another size), medians of :data:`RUNS`, each
figure beside a plain read of every page file and the rebuild every change cost before:

* the wiki's link index brought up to date after one page changed (a fact appended, a link added,
  a title changed, a page added or removed), target <= 0.1 s;
* :func:`~curator.engine.dedup.families.find_families` from the station's warm index after one page
  changed, the link index update inside the timing, target <= 1 s;
* the Links view's queue (every unresolved target, suggestions for the first 500 from a fresh
  suggester) after one page changed, the update inside, target <= 1 s;
* every unresolved target's suggestions from a fresh suggester, target <= 1 s (beside the
  one-target-at-a-time suggester it replaced, whose answers must be the same);
* ``curator links unresolved --json`` in a new process with no ``.curator/``, target <= 10 s.
"""

from __future__ import annotations

import os
import posixpath
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curator.engine.corpus import frontmatter, markdown_scan
from curator.engine.corpus.links import LinkIndex
from curator.engine.corpus.page import link_key, parse_page
from curator.engine.corpus.state import locate_state
from curator.engine.dedup import families as dedup_families
from curator.engine.review.linkrepair import SUGGESTERS, unresolved
from curator.engine.wiki import Wiki
from tests.corpus import CorpusInfo, generate, plain_read
from tests.engine.review.test_link_suggestions import Reference
from tests.perf.test_perf_graph import timed  # median of three runs
from tests.perf.test_perf_scale import _timed

PAGES = 32_000
ATTACHMENTS = 4_000
SAMPLE = 300
BUDGET = 5.0  # seconds for the whole index at 32,000 pages
REAL_PAGES = int(os.environ.get("CURATOR_SCALE_PAGES", "32000"))
RUNS = 5
CURATOR = str(Path(sys.executable).with_name("curator"))
ROWS: list[str] = []


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    root = tmp_path_factory.mktemp("perf-links") / "w"
    generate(root, PAGES, seed=18)
    w = Wiki(root)
    assert len(w.pages) >= PAGES
    return w


def naive_resolve(paths: list[str], files: list[str], source: str, key: str) -> str | None:
    """Obsidian's rule with no index: every candidate found by scanning every path."""
    pool = files if markdown_scan.is_attachment_target(key) else paths
    keys = [(p, link_key(p)) for p in pool]
    folder = link_key(posixpath.dirname(source))
    if "/" in key:
        for want in (key, posixpath.normpath(f"{folder}/{key}")):
            for p, k in keys:
                if k == want:
                    return p
        named = [p for p, k in keys if k.endswith("/" + key)]
    else:
        named = [p for p, k in keys if k.rsplit("/", 1)[-1] == key]
        for p in named:
            if link_key(posixpath.dirname(p)) == folder:
                return p
    return min(named, key=lambda p: (len(p), p)) if named else None


def test_link_index_at_32000_pages(wiki: Wiki) -> None:
    pages = wiki.pages
    rng = random.Random(18)
    folders = sorted({posixpath.dirname(p) for p in pages} - {""})
    files = [f"{rng.choice(folders)}/Attachments/shot-{i}.png" for i in range(ATTACHMENTS)]
    index = LinkIndex(pages, files)
    links = sum(len(e) for e in index.outgoing.values())
    ours = timed(lambda: LinkIndex(pages, files))

    edges = [e for edges in index.outgoing.values() for e in edges]
    sample = rng.sample(edges, SAMPLE)
    paths = sorted(pages)
    start = time.perf_counter()
    for edge in sample:
        expected = naive_resolve(paths, files, edge.source, edge.link.key)
        if edge.link.kind != "markdown" and expected is not None and not edge.resolution.ambiguous:
            assert (edge.resolution.path or edge.resolution.attachment) == expected, edge
    naive = (time.perf_counter() - start) / SAMPLE * links

    def read_all() -> None:
        for path in pages:
            (wiki.root / path).read_bytes()

    plain = timed(read_all)
    print(f"\n[perf] link index, {len(pages)} pages, {links} links, {ATTACHMENTS} attachments: "
          f"median {ours:.3f} s (budget {BUDGET:g} s); naive per-link scan (extrapolated from "
          f"{SAMPLE} links) {naive:.1f} s -> {naive / ours:.0f}x faster; plain read of all files "
          f"{plain:.3f} s -> index = {ours / plain:.2f}x a plain read")
    assert ours <= BUDGET


def test_cost_of_the_new_parse_scans(wiki: Wiki) -> None:
    sample = sorted(wiki.pages)[:4000]
    data = {p: (wiki.root / p).read_bytes() for p in sample}
    whole = timed(lambda: [parse_page(p, b) for p, b in data.items()])
    bodies = []
    for b in data.values():
        parts = frontmatter.split(b.decode("utf-8", "replace"))
        meta = frontmatter.load(parts.raw)[0] if parts.raw is not None else {}
        bodies.append((parts.body, parts.raw, meta))

    def new_scans() -> None:
        for body, raw, meta in bodies:
            free = markdown_scan._strip_indented(body)
            if "%%" in free:
                markdown_scan._strip_comments(free)
            markdown_scan.headings(free)
            markdown_scan.block_ids(free)
            if raw is not None and meta:
                markdown_scan.scan_property_links(raw, meta)

    added = timed(new_scans)
    print(f"\n[perf] parse of {len(sample)} pages: median {whole:.3f} s; the scans issue 18 added "
          f"(indented code, comments, headings, block ids, property links) {added:.3f} s = "
          f"{100 * added / whole:.1f} % of it")
    assert added < whole


# --- the incremental link index (issue 19) ------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    root = tmp_path_factory.mktemp("perf-links-real") / "w"
    return generate(root, REAL_PAGES, profile="real-shaped", cjk=False, git=True)


@pytest.fixture(scope="module")
def plain(real: CorpusInfo) -> float:
    plain_read(real.root)  # the OS file cache warm, as for every variant
    return _timed(lambda: plain_read(real.root), RUNS)[0]


def _row(name: str, runs: tuple[float, float], plain: float, target: float | None = None, extra: str = "") -> None:
    seconds, cpu = runs
    verdict = "" if target is None else (" ok" if seconds <= target else " OVER")
    goal = f" (target <= {target:g} s{verdict})" if target is not None else ""
    ROWS.append(f"{name}: median {seconds:.3f} s, CPU {cpu:.3f} s{goal}; {seconds / plain:.2f}x a plain read"
                f"{extra}; load {os.getloadavg()[0]:.1f}")
    print(f"\n[perf] {ROWS[-1]}")


def _same(index: LinkIndex, fresh: LinkIndex) -> None:
    assert list(index.outgoing.items()) == list(fresh.outgoing.items())
    for name in ("incoming", "unresolved", "attachment_links", "missing_attachments"):
        mine = {k: v for k, v in getattr(index, name).items() if v}
        assert mine == {k: v for k, v in getattr(fresh, name).items() if v}, name


class Edits:
    """One page changed per call, each a different edit of the same kind (the text written back
    at the end)."""

    def __init__(self, wiki: Wiki, path: str) -> None:
        self.wiki, self.path, self.n = wiki, path, 0
        self.removed: list[tuple[str, bytes]] = []
        self.texts: dict[str, str] = {}  # the pages many() changed, as they were
        self.full = wiki.root / path
        self.original = self.full.read_text("utf-8")

    def _write(self, text: str, paths: list[str] | None = None) -> None:
        self.full.write_text(text, "utf-8")
        self.wiki.refresh(paths or [self.path])  # the paths an action wrote (the station's watcher alike)

    def fact(self) -> None:
        self.n += 1
        self._write(self.original + f"\n- One more note {self.n}.\n")

    def link(self) -> None:
        self.n += 1
        self._write(self.original + f"\n- See [[Nocturne Bg3 V{self.n}]] and [[a target never written {self.n}]].\n")

    def title(self) -> None:
        self.n += 1
        self._write(f"---\ntitle: A Title Nobody Had {self.n}\naliases: [Another Name {self.n}]\n---\n"
                    + self.original)

    @property
    def new(self) -> str:
        return posixpath.join(posixpath.dirname(self.path), "a-new-page-for-the-benchmark.md")

    def page(self) -> None:
        """A page added beside the page, or (every other call) removed again."""
        self.n += 1
        full = self.wiki.root / self.new
        if full.exists():
            full.unlink()
        else:
            full.write_text(f"# New {self.n}\n\n[[{Path(self.path).stem}]]\n", "utf-8")
        self.wiki.refresh([self.new])

    def many(self, count: int = 2000) -> None:
        """``count`` pages changed at once, each given a link (as a merge re-points its linking
        pages), and one page removed (the merged one)."""
        self.n += 1
        paths = sorted(self.wiki.pages)[: count]
        for path in paths:
            full = self.wiki.root / path
            text = self.texts.setdefault(path, full.read_text("utf-8"))
            full.write_text(text + f"\n- See [[Merged Survivor {self.n}]].\n", "utf-8")
        gone = sorted(self.wiki.pages)[-1]
        self.removed.append((gone, (self.wiki.root / gone).read_bytes()))
        (self.wiki.root / gone).unlink()
        self.wiki.refresh([*paths, gone])

    def restore(self) -> None:
        self._write(self.original)
        if (self.wiki.root / self.new).exists():
            self.page()
        for path, data in self.removed:
            (self.wiki.root / path).write_bytes(data)
        for path, text in self.texts.items():
            (self.wiki.root / path).write_text(text, "utf-8")
        if self.removed or self.texts:
            self.wiki.refresh([*(p for p, _ in self.removed), *self.texts])
            self.removed.clear()
            self.texts.clear()


def test_link_index_after_one_change(real: CorpusInfo, plain: float) -> None:
    from curator.views.review.links import SUGGEST_ROWS

    assert real.real is not None
    wiki = Wiki(real.root)
    pages = wiki.pages
    n = len(pages)
    rebuild = _timed(lambda: LinkIndex(wiki.pages, wiki.store.attachments), RUNS)
    _row(f"link index built from scratch ({n:,} pages: what every change cost before)", rebuild, plain)
    assert wiki.links is not None  # built, as the station has it
    edits = Edits(wiki, real.real.families[0][1])
    for kind, edit in (("a fact appended", edits.fact), ("a link added", edits.link),
                       ("the title and an alias changed", edits.title), ("a page added or removed", edits.page)):
        runs = _timed(lambda: wiki.links, RUNS, before=edit)
        _same(wiki.links, LinkIndex(wiki.pages, wiki.store.attachments))  # exactly a fresh build's
        _row(f"link index brought up to date after one page changed: {kind}", runs, plain, 0.1,
             f"; {rebuild[0] / runs[0]:.0f}x faster than the rebuild")
        edits.restore()
    many = _timed(lambda: wiki.links, RUNS, before=edits.many)
    _same(wiki.links, LinkIndex(wiki.pages, wiki.store.attachments))
    _row("link index brought up to date after 2,000 pages changed and one removed (a merge's relink)", many,
         plain, None, f"; {rebuild[0] / many[0]:.1f}x faster than the rebuild")
    edits.restore()

    # families from the station's warm dedup index after one change, the update inside
    start = time.perf_counter()
    dedup_families.find_families(wiki)
    first = time.perf_counter() - start
    families = _timed(lambda: dedup_families.find_families(wiki), RUNS, before=edits.fact)

    def rebuilt() -> None:  # the way it was: every change dropped the link index
        edits.fact()
        wiki._drop_links()

    before = _timed(lambda: dedup_families.find_families(wiki), RUNS, before=rebuilt)
    assert set(real.real.families[0]) in [set(f.pages) for f in dedup_families.find_families(wiki)]
    _row("families from the warm index after one page changed, link index update inside", families, plain,
         1.0, f"; with the link index rebuilt (before) {before[0]:.3f} s; first call (index built) {first:.1f} s")

    # the Links view's queue after one change (a fresh suggester, as the Links view has after a change)
    def changed() -> None:
        edits.fact()
        wiki.session.names_cache(SUGGESTERS).clear()

    queue = _timed(lambda: unresolved(wiki, suggest=SUGGEST_ROWS), RUNS, before=changed)
    items = unresolved(wiki, suggest=False)
    _row(f"the Links view's queue after one page changed ({len(items):,} targets, suggestions for the first "
         f"{SUGGEST_ROWS}, a fresh suggester), link index update inside", queue, plain, 1.0)
    unresolved(wiki, suggest=SUGGEST_ROWS)
    kept = _timed(lambda: unresolved(wiki, suggest=SUGGEST_ROWS), RUNS, before=edits.fact)
    _row("  the same, the suggester kept (the edit changed no page's name: what the station has)", kept, plain, 1.0)
    edits.restore()
    wiki.close()


def test_every_targets_suggestions(real: CorpusInfo, plain: float) -> None:
    wiki = Wiki(real.root)
    assert wiki.links is not None  # built, as the station has it

    def fresh() -> None:
        wiki.session.names_cache(SUGGESTERS).clear()  # nothing remembered

    bare = _timed(lambda: unresolved(wiki, suggest=False), RUNS)
    every = _timed(lambda: unresolved(wiki), RUNS, before=fresh)
    found: dict[str, Any] = {u.target: u for u in unresolved(wiki)}
    # the naive baseline: the one-target-at-a-time suggester the batch replaced (the same answers)
    items = unresolved(wiki, suggest=False)
    start = time.perf_counter()
    reference = Reference(wiki.links.pages)
    one_by_one = [reference.suggest(u.target) for u in items]
    naive = time.perf_counter() - start
    assert one_by_one == [found[u.target].suggestions for u in items]
    assert real.real is not None
    hits = checked = 0
    for _source, written, path in real.real.title_prefix_links[:300]:
        u = found.get(written)
        if u is not None:
            checked += 1
            hits += any(s.path == path for s in u.suggestions)
    assert checked > 100 and hits / checked > 0.9, (hits, checked)
    _row(f"every unresolved target's suggestions, fresh suggester ({len(found):,} targets)", every, plain, 1.0,
         f"; the queue without suggestions {bare[0]:.3f} s; the one-target-at-a-time suggester {naive:.3f} s "
         f"({naive / every[0]:.1f}x); title-prefix links suggesting their page {hits}/{checked}")
    wiki.close()


def test_links_unresolved_cli_without_state(real: CorpusInfo, plain: float) -> None:
    state = locate_state(real.root)
    argv = [CURATOR, "--wiki", str(real.root), "links", "unresolved", "--json"]

    def run() -> None:
        out = subprocess.run(argv, capture_output=True, timeout=900)
        assert out.returncode == 0, out.stderr
        assert out.stdout.count(b'"target"') > 1000

    saved = real.root.parent / "state-kept"
    if state.exists():
        shutil.copytree(state, saved, dirs_exist_ok=True)
    clear: Callable[[], None] = lambda: shutil.rmtree(state, ignore_errors=True)  # noqa: E731
    try:
        cold = _timed(run, RUNS, before=clear)
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if saved.exists():
            shutil.copytree(saved, state)
    _row("links unresolved --json, new process, no .curator/", cold, plain, 10.0, " (aim <= 7 s)")


def test_zz_table() -> None:
    print("\n" + "\n".join(ROWS))
