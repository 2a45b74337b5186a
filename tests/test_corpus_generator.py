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
