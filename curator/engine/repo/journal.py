"""The append-only action journal ``.curator/journal.jsonl`` (docs/design.md §4.8, §5).

One JSON object per line, appended with a single ``write`` on an ``O_APPEND`` descriptor, so
appending costs O(1) whatever the journal's size and concurrent writers never interleave inside a
line. The file is never rewritten. Readers tolerate a torn last line (a writer killed mid-write)
and skip it.

Append lines carry the keys ``t, slug, content, created, committed, actor`` (docs/design.md §4.8; plus ``id``,
``action``, ``page``, ``commit``, ``changed``); other actions write
``{"t", "id", "action", "target", "actor", "committed", "commit", "changed"}``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curator.engine.corpus.walker import json_line

JOURNAL_NAME = "journal.jsonl"


class Journal:
    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / JOURNAL_NAME

    def append(self, record: dict[str, Any]) -> None:
        line = json_line(record) + "\n"
        data = line.encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # A killed writer may have left a torn line without its newline: start a fresh line so
            # this record stays parseable (readers skip the torn fragment).
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as f:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":
                        data = b"\n" + data
            os.write(fd, data)
        finally:
            os.close(fd)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def read(self, offset: int = 0, *, mid_line: bool = False) -> Iterator[dict[str, Any]]:
        """Records from byte ``offset`` on (0: all), oldest first; torn or bad lines skipped.

        ``mid_line``: ``offset`` may fall inside a line, whose remainder is then skipped.
        """
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError:
            return
        with f:
            if offset:
                f.seek(offset)
                if mid_line:
                    f.seek(offset - 1)
                    f.readline()  # lands on the next line start (at offset if offset-1 is "\n")
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # a write still in progress, or torn by a kill
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(rec, dict):
                    yield rec

    def tail(self, max_bytes: int = 65536) -> list[dict[str, Any]]:
        """The last records (about ``max_bytes`` worth), oldest first."""
        size = self.size()
        start = max(0, size - max_bytes)
        return list(self.read(start, mid_line=True))

    def contains_id(self, action_id: str, max_bytes: int = 65536) -> bool:
        return self.find_id(action_id, max_bytes) is not None

    def find_id(self, action_id: str, max_bytes: int = 65536) -> dict[str, Any] | None:
        """The newest record with this ``id`` among the last records, or None."""
        hits = [r for r in self.tail(max_bytes) if r.get("id") == action_id]
        return hits[-1] if hits else None
