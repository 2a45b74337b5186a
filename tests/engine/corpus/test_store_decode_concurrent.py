"""Decoding every page (the first use of ``PageStore.pages``: 1.7 s at 100,000 pages) does not hold
the store: other threads read a page or a saved answer meanwhile, and a write made meanwhile is in
the pages the decode gives."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import curator.engine.corpus.store as store_module
from curator.engine.wiki import Wiki
from tests.corpus import write_pages


def test_reads_go_on_while_every_page_is_decoded_and_a_write_meanwhile_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_pages(tmp_path / "w", {f"wiki/p{i:02d}.md": f"# P{i}\n\nbody\n" for i in range(20)})
    wiki = Wiki(root)
    store = wiki.store
    store.refresh()
    paused, release = threading.Event(), threading.Event()
    original = store_module.decode_record
    decoded: list[int] = []

    def slow(blob: bytes) -> list[Any]:
        decoded.append(1)
        if len(decoded) == 5:  # halfway through every page: wait
            paused.set()
            release.wait(10)
        return original(blob)

    monkeypatch.setattr(store_module, "decode_record", slow)
    got: dict[str, Any] = {}
    decoder = threading.Thread(target=lambda: got.update(pages=store.pages))
    decoder.start()
    assert paused.wait(10)

    reader = threading.Thread(target=lambda: got.update(page=store.page("wiki/p15.md"), state=store.state))
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "a page read waited for every page to be decoded"
    assert got["page"].title == "P15" and got["state"] is not None

    (root / "wiki/p03.md").write_text("# Changed meanwhile\n")
    (root / "wiki/p04.md").unlink()
    writer = threading.Thread(target=lambda: store.refresh(["wiki/p03.md", "wiki/p04.md"]))
    writer.start()
    writer.join(5)
    assert not writer.is_alive(), "a write waited for every page to be decoded"

    release.set()
    decoder.join(10)
    pages = got["pages"]
    assert pages["wiki/p03.md"].title == "Changed meanwhile" and "wiki/p04.md" not in pages
    assert sorted(pages) == sorted(Wiki(root).pages) and len(pages) == 19
    assert store.pages is pages  # (kept: decoded once)
    wiki.close()
