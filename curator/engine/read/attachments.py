"""Files a page shows inline (``![chart](chart.png)``, ``![[diagram.png]]``), read for the station
under limits (docs/design.md §11).

A page is agent-written text: whatever it names must not reach outside the wiki or take the
station down. A reference is shown only when it names a regular file inside the wiki root (after
following symlinks), of at most :data:`MAX_INLINE_BYTES`; the bytes are read here, never by the
widget, so a device (``/dev/zero``), a FIFO, a symlink to either, a path outside the wiki or a
remote URL is never opened by anything. Opening is non-blocking, so a FIFO cannot stall the read.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: The largest file shown inline (bigger ones are a placeholder that says so).
MAX_INLINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Inline:
    """The bytes of an inline file, or why there are none (``reason``, for the placeholder)."""

    data: bytes | None
    reason: str = ""


def read_inline(root: Path, base: Path, ref: str, max_bytes: int = MAX_INLINE_BYTES) -> Inline:
    """The file ``ref`` names, relative to the page's folder ``base``, if it is a regular file
    inside the wiki ``root`` of at most ``max_bytes``; else why not."""
    parts = urlsplit(ref)
    if parts.scheme not in ("", "file") or parts.netloc:
        return Inline(None, "remote content is never loaded")
    rel = unquote(parts.path)
    if not rel:
        return Inline(None, "no file named")
    if rel.startswith("/") or parts.scheme == "file":
        return Inline(None, f"{rel} is outside the wiki")
    try:
        real_root = root.resolve(strict=True)
        target = (base / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return Inline(None, f"{rel} is not there")
    if target != real_root and real_root not in target.parents:
        return Inline(None, f"{rel} is outside the wiki")
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        why = "a link" if exc.errno == errno.ELOOP else exc.strerror or "unreadable"
        return Inline(None, f"{rel}: {why}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Inline(None, f"{rel} is not a regular file")
        if info.st_size > max_bytes:
            return Inline(None, f"{rel} is larger than {max_bytes // (1024 * 1024)} MiB")
        chunks: list[bytes] = []
        left = max_bytes + 1  # (a file that grew since the stat is still cut at the cap)
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        return Inline(None, f"{rel}: {exc.strerror or 'unreadable'}")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        return Inline(None, f"{rel} is larger than {max_bytes // (1024 * 1024)} MiB")
    return Inline(data)
