"""The test-corpus generator itself: deterministic, the promised mix, a clean git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.corpus import CJK_PATH, NAMESPACES, generate


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if p.is_file() and not p.is_symlink()}


def test_same_seed_same_files_other_seed_other_files(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", 50, seed=4)
    b = generate(tmp_path / "b", 50, seed=4)
    c = generate(tmp_path / "c", 50, seed=5)
    assert snapshot(a.root) == snapshot(b.root)
    assert snapshot(a.root) != snapshot(c.root)
    assert a.pages == b.pages


def test_the_mix_of_pages(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 120)
    assert len(info.pages) == 120 and info.pages == sorted(info.expected)
    spaces = {p.rsplit("/", 1)[0] for p in info.pages}
    assert set(NAMESPACES) <= spaces
    assert CJK_PATH in info.cjk
    layers = {e.layer for e in info.expected.values()}
    assert layers == {"identity", "core", "context", "deep"}
    texts = [(info.root / p).read_text(encoding="utf-8") for p in info.pages]
    assert sum(t.startswith("---\n") for t in texts) < len(texts)  # some pages have no frontmatter
    for needle in ("layer: L0", "layer: l3", "tags: [", "related: [", "![[", "](../", "#Details|",
                   "```", "x-custom-"):
        assert any(needle in t for t in texts), needle
    assert info.unresolved and info.code_only and info.sample_links


def test_without_cjk_and_with_few_pages(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 3, cjk=False)
    assert len(info.pages) == 3 and not info.cjk and not info.ambiguous
    with pytest.raises(ValueError):
        generate(tmp_path / "x", 2)


def test_git_corpus_is_committed_and_clean(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 20, hostile=True, git=True)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=info.root, capture_output=True, text=True,
                              check=True).stdout

    assert git("log", "--format=%an <%ae>").strip() == "Corpus Generator <corpus@example.invalid>"
    assert git("status", "--porcelain") == ""
    tracked = set(git("-c", "core.quotePath=false", "ls-files").splitlines())
    assert set(info.pages) <= tracked
    assert ".gitignore" in tracked


def test_real_shaped_profile_has_the_measured_shape(tmp_path: Path) -> None:
    import statistics

    from tests.corpus import REAL_BIG_FOLDER, REAL_SHAPED

    info = generate(tmp_path / "w", 4000, seed=3, profile=REAL_SHAPED, cjk=False)
    real = info.real
    assert real is not None and len(info.pages) == 4000
    sizes = sorted((info.root / p).stat().st_size for p in info.pages)
    assert 2400 <= statistics.median(sizes) <= 3400  # median ~2.9 KB
    assert 12_000 <= sizes[int(len(sizes) * 0.99)] <= 21_000  # p99 ~16 KB
    assert len(real.over_1m) == 2 and all(s > 1_000_000 for s in sizes[-2:])
    assert sum(s > 100_000 for s in sizes) == len(real.over_100k) == round(165 * 4000 / 32000)
    assert sum(sizes) == real.total_bytes
    in_big = sum(p.startswith(REAL_BIG_FOLDER + "/") for p in info.pages)
    assert 0.85 <= in_big / len(info.pages) <= 0.9
    texts = {p: (info.root / p).read_text(encoding="utf-8") for p in info.pages}
    with_fm = sum(t.startswith("---\n") for t in texts.values())
    assert 0.99 <= with_fm / len(texts) < 1.0
    assert set(real.no_frontmatter) == {p for p, t in texts.items() if not t.startswith("---\n")}
    # families of 2-6 copies: `x-entry-N`, `x-copy-entry-N`, `x-fixed-v2-entry-N`, ...
    assert real.families and {len(f) for f in real.families} <= set(range(2, 7))
    for family in real.families:
        first = family[0].rsplit("/", 1)[1]
        base, _, number = first[:-3].rpartition("-entry-")
        assert all(p.rsplit("/", 1)[1].startswith(base) and p.endswith(f"-entry-{number}.md")
                   for p in family)
    assert any(f[1].endswith(f"-copy-entry-{f[0].rsplit('-', 1)[1]}") for f in real.families)
    assert any("-fixed-v2-entry-" in p for f in real.families for p in f)
    # links by title ([[Nocturne Bg3 V4 Campaign]]) and by a title prefix ([[Nocturne Bg3 V4]])
    source, written, target = real.title_prefix_links[0]
    assert f"[[{written}]]" in texts[source]
    assert target.rsplit("/", 1)[1].startswith(written.lower().replace(" ", "-") + "-")
    source, written, target = info.sample_links[0]
    assert f"[[{written}]]" in texts[source] and " " in written
    # every shape of frontmatter PyYAML must see is there, and the flat shapes
    blob = "\n".join(texts.values())
    for needle in ("tags:\n  - ", "tags: [", "title: \"", "title: '", "draft: false", "metadata:\n  ",
                   ">-\n", "T10:00:00Z"):
        assert needle in blob, needle


def test_real_shaped_is_deterministic_and_parses_as_expected(tmp_path: Path) -> None:
    from curator.engine.corpus.page import parse_page

    a = generate(tmp_path / "a", 300, seed=7, profile="real-shaped", cjk=False)
    b = generate(tmp_path / "b", 300, seed=7, profile="real-shaped", cjk=False)
    c = generate(tmp_path / "c", 300, seed=8, profile="real-shaped", cjk=False)
    assert snapshot(a.root) == snapshot(b.root) and snapshot(a.root) != snapshot(c.root)
    for path, want in a.expected.items():
        page, _body = parse_page(path, (a.root / path).read_bytes())
        assert (page.title, page.layer, page.trust) == (want.title, want.layer, want.trust), path
        assert [t.lower() for t in page.tags] == [t.lower() for t in want.tags], path
        assert not [p for p in page.problems if p.code == "frontmatter"], path


def test_real_shaped_adds_hostile_and_cjk_pages_on_request(tmp_path: Path) -> None:
    info = generate(tmp_path / "w", 200, profile="real-shaped", hostile=True)
    assert CJK_PATH in info.pages and info.hostile and set(info.hostile.values()) <= set(info.pages)
    with pytest.raises(ValueError):
        generate(tmp_path / "x", 10, profile="nonsense")


def test_real_shaped_generation_is_fast(tmp_path: Path) -> None:
    import time

    start = time.process_time()
    info = generate(tmp_path / "w", 3200, profile="real-shaped", cjk=False)
    # CPU time, not wall time (the disk is shared): 32,000 pages take about ten times this
    assert time.process_time() - start < 3.0 and len(info.pages) == 3200
