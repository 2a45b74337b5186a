"""Search on a 30,000-page wiki: index build, queries in-process and from the CLI, refresh.

Budgets (issue 5): full build <= 30 s, search p50 <= 30 ms in-process and <= 250 ms from the CLI,
refresh after one page changed <= 200 ms. The naive baseline, measured in the same run, answers
the same queries by reading every file and checking that every query word occurs in it.

Corpus: ``tests/corpus.generate`` (30,000 pages). Its body text draws from 25 words, so each of
those words is on nearly every page; real text is not like that, so every page also gets a
paragraph drawn from a 20,000-word vocabulary with Zipf frequencies (seeded). The query mix is
rare, medium and common words, two-word AND queries, phrases, prefixes, CJK and filters, and the
25 corpus words themselves (which match every page: the worst case, reported on its own line).

Run: ``.venv/bin/pytest tests/perf/test_perf_search.py -s``
"""

from __future__ import annotations

import itertools
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from curator.engine.corpus.walker import walk
from curator.engine.wiki import Wiki
from tests.corpus import WORDS, generate

N_PAGES = 30_000
VOCABULARY = 20_000
BUDGET_BUILD_S = 30.0
BUDGET_SEARCH_MS = 30.0
BUDGET_CLI_MS = 250.0
BUDGET_REFRESH_MS = 200.0
CURATOR = str(Path(sys.executable).with_name("curator"))


def ms(seconds: float) -> float:
    return seconds * 1000.0


def zipf_text(root: Path, seed: int = 11) -> list[str]:
    """Append a Zipf-distributed paragraph to every page; return the vocabulary by rank."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = list(dict.fromkeys("".join(rng.choice(letters) for _ in range(rng.randint(4, 10)))
                               for _ in range(VOCABULARY)))
    weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocab))))
    for f in walk(root):
        words = rng.choices(vocab, cum_weights=weights, k=60)
        with open(root / f.path, "a", encoding="utf-8") as fh:
            fh.write("\n" + " ".join(words) + ".\n")
    return vocab


def query_mix(vocab: list[str], rng: random.Random) -> dict[str, list[str]]:
    rare = [vocab[rng.randrange(2000, len(vocab))] for _ in range(12)]
    medium = [vocab[rng.randrange(100, 2000)] for _ in range(10)]
    common = [vocab[rng.randrange(5, 100)] for _ in range(6)]
    return {
        "rare word": rare,
        "medium word": medium,
        "common word": common,
        "two words": [f"{vocab[rng.randrange(20, 500)]} {vocab[rng.randrange(20, 500)]}" for _ in range(6)],
        "phrase": ['"付款流程说明"', '"quarterly review"', f'"{vocab[3]} {vocab[7]}"'],
        "prefix": [f"{vocab[rng.randrange(200, 3000)][:4]}*" for _ in range(4)],
        "CJK": ["付款", "退款政策", "流程"],
        "filters": [f"{vocab[rng.randrange(100, 2000)]} layer:core", f"{vocab[rng.randrange(100, 2000)]} tag:finance",
                    f"{vocab[rng.randrange(100, 2000)]} trust:>=0.7 -{vocab[50]}"],
        "corpus word (every page)": list(WORDS[:6]),
    }


_TOKEN = re.compile(r"[^\W_]+")


def naive_search(root: Path, query: str) -> list[str]:
    """Read every page and keep those containing every query word (no ranking, no index)."""
    words = [w.lower() for w in _TOKEN.findall(query)]
    hits = []
    for f in walk(root):
        text = (root / f.path).read_text(encoding="utf-8", errors="replace").lower()
        if all(w in text for w in words):
            hits.append(f.path)
    return hits


def timed(fn, *args, **kwargs) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def test_search_perf(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    t_gen, _ = timed(generate, root, N_PAGES, seed=5)
    vocab = zipf_text(root)
    print(f"\ncorpus: {N_PAGES} pages generated in {t_gen:.1f} s (+ Zipf paragraphs)")

    # --- full build: page cache + FTS index from nothing ------------------------------------
    t0 = time.perf_counter()
    wiki = Wiki(root)
    wiki.search.refresh()
    t_build = time.perf_counter() - t0
    indexed = wiki.store.conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
    assert indexed == N_PAGES
    print(f"full build (parse + page cache + FTS): {t_build:.1f} s (budget {BUDGET_BUILD_S:.0f} s)")

    # --- in-process queries -------------------------------------------------------------------
    rng = random.Random(2)
    mix = query_mix(vocab, rng)
    wiki.search.search("warm up")
    per_class: dict[str, list[float]] = {}
    budgeted: list[float] = []
    for name, queries in mix.items():
        samples = []
        for q in queries:
            runs = [timed(wiki.search.search, q)[0] for _ in range(3)]
            samples.append(statistics.median(runs))
        per_class[name] = samples
        if name != "corpus word (every page)":
            budgeted += samples
    for name, samples in per_class.items():
        print(f"  search {name:<26} median {ms(statistics.median(samples)):6.1f} ms"
              f"  max {ms(max(samples)):6.1f} ms")
    p50 = ms(statistics.median(budgeted))
    everything = ms(statistics.median([s for v in per_class.values() for s in v]))
    print(f"search p50 in-process: {p50:.1f} ms (budget {BUDGET_SEARCH_MS:.0f} ms);"
          f" including the every-page corpus words: {everything:.1f} ms")

    # --- naive baseline for the same queries --------------------------------------------------
    sample = [mix["rare word"][0], mix["two words"][0], mix["CJK"][0]]
    naive = []
    for q in sample:
        t_naive, found = timed(naive_search, root, q)
        naive.append(t_naive)
        indexed_hits = {h.path for h in wiki.search.search(q, limit=100)}
        assert indexed_hits <= set(found)  # the index finds nothing the scan would not
    naive_ms = ms(statistics.median(naive))
    print(f"naive scan of every file: median {naive_ms:.0f} ms per query -> index is {naive_ms / p50:.0f}x faster")

    # --- from the CLI (a new process per query) ------------------------------------------------
    cli_queries = [*mix["rare word"][:4], *mix["medium word"][:3], *mix["CJK"][:2], mix["two words"][0]]
    cli = []
    for q in cli_queries:
        t_cli, proc = timed(subprocess.run, [CURATOR, "--wiki", str(root), "search", "--json", "--", q],
                            capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        cli.append(t_cli)
    cli_p50 = ms(statistics.median(cli))
    t_help, _ = timed(subprocess.run, [CURATOR, "--help"], capture_output=True, check=True)
    print(f"search p50 from the CLI: {cli_p50:.0f} ms (budget {BUDGET_CLI_MS:.0f} ms; `curator --help`"
          f" alone {ms(t_help):.0f} ms); naive scan is {naive_ms / cli_p50:.1f}x slower")

    # --- refresh after one page changed -------------------------------------------------------
    pages = wiki.pages  # a long-lived process (GUI, MCP server) has the cache loaded
    target = root / sorted(pages)[1234]
    in_place = []
    for i in range(3):
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(f"\nzzinplace{i}\n")
        t_ref, changes = timed(wiki.search.refresh, full=True)  # the sweep: stats every page
        assert changes.modified == [target.relative_to(root).as_posix()]
        in_place.append(t_ref)
        assert [h.path for h in wiki.search.search(f"zzinplace{i}", refresh=False)] == changes.modified
    renamed = []
    for i in range(3):
        tmp = target.with_name(f".tmp-save-{i}")
        tmp.write_text(target.read_text(encoding="utf-8") + f"\nzzrenamed{i}\n", encoding="utf-8")
        os.replace(tmp, target)  # an editor's atomic save: the folder's mtime moves
        t_ref, changes = timed(wiki.search.refresh)  # the per-search folder check
        assert changes.modified == [target.relative_to(root).as_posix()]
        renamed.append(t_ref)
    t_walk, _ = timed(wiki.refresh)  # the page cache's full (mtime, size) walk, for comparison
    t_quick = statistics.median([timed(wiki.search.refresh)[0] for _ in range(5)])
    refresh_ms = ms(statistics.median(in_place))
    print(f"refresh after one page changed in place (stat sweep): {refresh_ms:.0f} ms"
          f" (budget {BUDGET_REFRESH_MS:.0f} ms); after an atomic save (folder check):"
          f" {ms(statistics.median(renamed)):.1f} ms; nothing changed: {ms(t_quick):.1f} ms;"
          f" full walk refresh: {ms(t_walk):.0f} ms; full rebuild: {t_build:.1f} s"
          f" ({t_build * 1000 / refresh_ms:.0f}x the sweep)")
    wiki.close()

    assert t_build <= BUDGET_BUILD_S
    assert p50 <= BUDGET_SEARCH_MS
    assert cli_p50 <= BUDGET_CLI_MS
    assert refresh_ms <= BUDGET_REFRESH_MS
    assert naive_ms > p50 * 10


def test_agent_search_scores_over_visible_pages_cost(tmp_path: Path) -> None:
    """Issue 14: an agent with hidden pages gets bm25 over the pages it may see (as on a copy of
    the wiki without the others). Measured on the 32,000-page real-shaped corpus against the
    operator's plain FTS5 ranking in the same run, in-process and from the CLI."""
    from curator.engine.policy.actor import OPERATOR, parse_actor
    from tests.corpus import generate as generate_corpus
    from tests.corpus import plain_read

    root = tmp_path / "real"
    generate_corpus(root, profile="real-shaped")
    wiki = Wiki(root)
    t_build, _ = timed(wiki.search.refresh)
    agent = parse_actor("agent:s", "sales")  # departments/finance is hidden from it
    hidden = wiki.search._hidden(agent)
    assert hidden
    wiki.search.pages_sharing(["x"])  # creates the vocabulary view
    vocab = [t for (t,) in wiki.store.conn.execute(
        "SELECT term FROM temp.search_vocab WHERE length(term) > 4 AND term GLOB '[a-z]*' ORDER BY doc DESC")]
    n = len(vocab)  # terms by document frequency, most frequent first
    assert n > 100
    queries = {"common word": vocab[:4], "medium word": vocab[n // 20:n // 20 + 4],
               "rare word": vocab[n // 2:n // 2 + 4],
               "two words": [f"{a} {b}" for a, b in zip(vocab[n // 30:n // 30 + 3], vocab[n // 10:n // 10 + 3],
                                                          strict=True)],
               "phrase": [f'"{a} {b}"' for a, b in itertools.pairwise(vocab[5:8])],
               "prefix": [v[:4] + "*" for v in vocab[n // 8:n // 8 + 3]]}
    print(f"\n{n} indexed terms; queries: {queries}")
    t_read, _ = timed(plain_read, root)
    print(f"\nreal-shaped corpus: {wiki.store.conn.execute('SELECT count(*) FROM search_docs').fetchone()[0]} "
          f"pages indexed in {t_build:.1f} s; {len(hidden)} hidden from agent:s (sales); plain read "
          f"{ms(t_read):.0f} ms")
    samples: dict[str, list[float]] = {"operator": [], "agent": []}
    for name, qs in queries.items():
        line = []
        for who, actor in (("operator", OPERATOR), ("agent", agent)):
            runs = []
            for q in qs:
                wiki.search.search(q, actor, refresh=False)
                runs.append(statistics.median(timed(wiki.search.search, q, actor, refresh=False)[0]
                                              for _ in range(3)))
            samples[who] += runs
            line.append(f"{who} {ms(statistics.median(runs)):6.1f} ms")
        print(f"  search {name:<12} " + ", ".join(line))
    op, ag = (ms(statistics.median(samples[w])) for w in ("operator", "agent"))
    print(f"search p50 in-process: operator {op:.1f} ms, agent {ag:.1f} ms ({ag / op:.1f}x)")
    cli: dict[str, list[float]] = {"operator": [], "agent": []}
    for q in [*queries["medium word"][:2], *queries["rare word"][:2], queries["two words"][0]]:
        for who, extra in (("operator", []), ("agent", ["--as", "agent:s", "--department", "sales"])):
            t_cli, proc = timed(subprocess.run, [CURATOR, "--wiki", str(root), *extra, "search", "--json", "--", q],
                                capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stderr
            cli[who].append(t_cli)
    cli_op, cli_ag = (ms(statistics.median(cli[w])) for w in ("operator", "agent"))
    print(f"search p50 from the CLI: operator {cli_op:.0f} ms, agent {cli_ag:.0f} ms (budget {BUDGET_CLI_MS:.0f} ms)")
    wiki.close()
    # The operator's path is FTS5's own ranking, unchanged (and budgeted above); the agent's extra
    # work must stay a fraction of a CLI call, compared in the same run (the machine may be busy).
    assert cli_ag <= max(BUDGET_CLI_MS, 1.5 * cli_op), (cli_ag, cli_op)
