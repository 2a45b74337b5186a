"""The page view loads no file itself (issue 45): an agent's ``![c](/dev/zero)`` took 1.5 GB/s of
the station's memory, a FIFO froze it. Pictures inside the wiki are read by the engine and handed
to Qt as data; anything else is a placeholder, never ``None`` (QTextDocument would then load it)."""

from __future__ import annotations

import os
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument

from curator.views.page.page_view import PLACEHOLDER_KEY, SafeBrowser
from tests.gui_helpers import loaded_window, make_wiki

IMAGE = int(QTextDocument.ResourceType.ImageResource)


def huge_png(path: Path, side: int = 20_000) -> None:
    """A valid 1-bit PNG of ``side`` x ``side`` pixels (1.6 GB as 32-bit pixels; ~50 KB on disk)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\0" * (1 + side // 8)
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", body) + chunk(b"IEND", b""))


def placeholder(found: object) -> str | None:
    assert isinstance(found, QImage), f"not data: {found!r}"  # never None: Qt would load it itself
    return found.text(PLACEHOLDER_KEY) or None


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture
def browser(qtbot, tmp_path: Path) -> SafeBrowser:  # type: ignore[no-untyped-def]
    root = tmp_path / "wiki-root"
    (root / "wiki").mkdir(parents=True)
    view = SafeBrowser()
    qtbot.addWidget(view)
    view.root, view.base_dir = root, root / "wiki"
    return view


def test_a_picture_inside_the_wiki_is_shown(browser: SafeBrowser) -> None:
    assert browser.base_dir is not None
    picture = QImage(4, 3, QImage.Format.Format_RGB32)
    picture.fill(0x336699)
    assert picture.save(str(browser.base_dir / "pic.png"))
    found = browser.loadResource(IMAGE, QUrl("pic.png"))
    assert placeholder(found) is None and isinstance(found, QImage) and found.size().width() == 4


def test_devices_fifos_links_and_huge_pictures_become_placeholders(browser: SafeBrowser) -> None:
    base = browser.base_dir
    assert base is not None
    os.mkfifo(base / "pipe.png")
    os.symlink("/dev/zero", base / "zero.png")
    os.symlink("pipe.png", base / "to-pipe.png")
    huge_png(base / "huge.png")
    before = peak_mb()
    reasons = {ref: placeholder(browser.loadResource(IMAGE, QUrl(ref)))
               for ref in ("/dev/zero", "../../../../../../../../dev/zero", "zero.png", "pipe.png",
                           "to-pipe.png", "huge.png", "https://example.com/tracker.png", "missing.png")}
    assert all(reasons.values()), reasons
    assert "too large" in str(reasons["huge.png"]) and "20000 x 20000" in str(reasons["huge.png"])
    assert peak_mb() - before < 200  # nothing was decoded or read in bulk
    assert browser.loadResource(int(QTextDocument.ResourceType.StyleSheetResource),
                                QUrl("/dev/zero")).isEmpty()  # other kinds: empty data, never None


def test_an_agents_dev_zero_picture_opens_as_a_placeholder_in_the_station(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Through the door and the station, as the issue found it."""
    root = make_wiki(tmp_path / "wiki")
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "--as", "agent:bob",
                           "append", "payments", "Chart ![c](/dev/zero) and ![p](../../../../../../dev/zero)",
                           "--create-new"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = next(p.relative_to(root).as_posix() for p in root.rglob("payments.md"))
    win = loaded_window(qtbot, root, tmp_path)
    before = peak_mb()
    win.open_page((0, page))
    qtbot.waitUntil(lambda: "Chart" in win.page_view.browser.toPlainText(), timeout=15_000)
    qtbot.wait(200)  # (the document lays its images out)
    assert peak_mb() - before < 200
    win.close()
