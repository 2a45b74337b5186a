"""Typed access to the station's QSettings (Picard-style options instead of string keys everywhere)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 10


class Settings:
    def __init__(self, settings: QSettings | None = None) -> None:
        self.q = settings or QSettings("Curator", "Curator")

    # recent wikis ---------------------------------------------------------------------
    @property
    def recent_wikis(self) -> list[str]:
        value = self.q.value("recent/wikis", [])
        if isinstance(value, str):
            return [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> None:
        items = [path, *(p for p in self.recent_wikis if p != path)][:MAX_RECENT]
        self.q.setValue("recent/wikis", items)

    # window state ---------------------------------------------------------------------
    def _bytes(self, key: str) -> QByteArray | None:
        value = self.q.value(key)
        return value if isinstance(value, QByteArray) else None

    @property
    def geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    @geometry.setter
    def geometry(self, value: QByteArray) -> None:
        self.q.setValue("window/geometry", value)

    @property
    def window_state(self) -> QByteArray | None:
        return self._bytes("window/state")

    @window_state.setter
    def window_state(self, value: QByteArray) -> None:
        self.q.setValue("window/state", value)

    def splitter_state(self, name: str) -> QByteArray | None:
        return self._bytes(f"splitters/{name}")

    def set_splitter_state(self, name: str, value: QByteArray) -> None:
        self.q.setValue(f"splitters/{name}", value)

    def sync(self) -> None:
        self.q.sync()
