"""Inline files a page names are read only when they are regular files inside the wiki, under a
size cap (curator.engine.read.attachments; issue 45: ``![c](/dev/zero)`` ate the station's memory)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from curator.engine.read.attachments import read_inline


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki-root"
    (root / "wiki" / "img").mkdir(parents=True)
    (root / "wiki" / "img" / "a.png").write_bytes(b"picture")
    (tmp_path / "outside.png").write_bytes(b"secret")
    return root


def test_a_regular_file_inside_the_wiki_is_read(wiki: Path) -> None:
    base = wiki / "wiki"
    assert read_inline(wiki, base, "img/a.png").data == b"picture"
    assert read_inline(wiki, base, "img/a%2Epng").data == b"picture"  # (URL-encoded, as Qt hands it)
    os.symlink("a.png", base / "img" / "alias.png")  # a link that stays inside: shown
    assert read_inline(wiki, base, "img/alias.png").data == b"picture"


@pytest.mark.parametrize("ref", ["/dev/zero", "../../../../../../../../../../dev/zero", "file:///dev/zero",
                                 "https://example.com/t.png", "//example.com/t.png", "../../outside.png"])
def test_what_lies_outside_the_wiki_is_never_opened(wiki: Path, ref: str) -> None:
    found = read_inline(wiki, wiki / "wiki", ref)
    assert found.data is None and ("outside" in found.reason or "remote" in found.reason), found


def test_devices_fifos_and_links_to_them_are_refused_without_blocking(wiki: Path) -> None:
    base = wiki / "wiki"
    os.mkfifo(base / "pipe.png")
    os.symlink("/dev/zero", base / "zero.png")
    os.symlink("pipe.png", base / "to-pipe.png")
    answers: dict[str, object] = {}

    def read_all() -> None:
        for name in ("pipe.png", "zero.png", "to-pipe.png"):
            answers[name] = read_inline(wiki, base, name)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "a FIFO blocked the read"
    assert "not a regular file" in answers["pipe.png"].reason  # type: ignore[attr-defined]
    assert "outside" in answers["zero.png"].reason  # type: ignore[attr-defined]
    assert "not a regular file" in answers["to-pipe.png"].reason  # type: ignore[attr-defined]


def test_a_file_over_the_cap_is_not_read(wiki: Path) -> None:
    (wiki / "wiki" / "big.png").write_bytes(b"x" * 2048)
    found = read_inline(wiki, wiki / "wiki", "big.png", max_bytes=1024)
    assert found.data is None and "larger" in found.reason
    assert read_inline(wiki, wiki / "wiki", "big.png", max_bytes=2048).data == b"x" * 2048
