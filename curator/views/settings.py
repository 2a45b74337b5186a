"""Typed access to the station's QSettings (Picard-style options instead of string keys everywhere)."""

from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 10
#: Folders whose last open page is kept (the oldest forgotten first).
MAX_LAST_PAGES = 50
#: Page text zoom, in percent of the normal size: Ctrl+= / Ctrl+- step by ZOOM_STEP, Ctrl+0 resets.
ZOOM_DEFAULT, ZOOM_MIN, ZOOM_MAX, ZOOM_STEP = 100, 50, 300, 10
THEMES = ("system", "light", "dark")


class Settings:
    def __init__(self, settings: QSettings | None = None) -> None:
        self.q = settings or QSettings("Curator", "Curator")

    # recent wikis ---------------------------------------------------------------------
    @property
    def recent_wikis(self) -> list[str]:
        value = self.q.value("recent/wikis", [])
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def add_recent(self, path: str) -> None:
        items = [path, *(p for p in self.recent_wikis if p != path)][:MAX_RECENT]
        self.q.setValue("recent/wikis", items)

    # the page open when a wiki was closed --------------------------------------------------
    def _last_pages(self) -> dict[str, list[str]]:
        try:
            value = json.loads(str(self.q.value("recent/last_pages", "{}")))
        except ValueError:
            return {}
        if not isinstance(value, dict):
            return {}
        return {str(k): [str(x) for x in v] for k, v in value.items()
                if isinstance(v, list) and len(v) == 2}

    def last_page(self, folder: str) -> tuple[str, str] | None:
        """(wiki root, page path) open when ``folder`` (a wiki or a home) was last closed."""
        entry = self._last_pages().get(folder)
        return (entry[0], entry[1]) if entry else None

    def set_last_page(self, folder: str, page: tuple[str, str] | None) -> None:
        """Remember ``page`` (wiki root, page path) for ``folder``; None forgets it."""
        pages = self._last_pages()
        pages.pop(folder, None)  # re-inserted last: the most recent survive the cap
        if page is not None:
            pages[folder] = [page[0], page[1]]
        kept = dict(list(pages.items())[-MAX_LAST_PAGES:])
        self.q.setValue("recent/last_pages", json.dumps(kept))

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

    # appearance ---------------------------------------------------------------------
    @property
    def zoom(self) -> int:
        """Page text size in percent (clamped to ZOOM_MIN..ZOOM_MAX; anything unreadable = 100)."""
        try:
            value = int(str(self.q.value("view/zoom", ZOOM_DEFAULT)))
        except ValueError:
            return ZOOM_DEFAULT
        return max(ZOOM_MIN, min(ZOOM_MAX, value))

    @zoom.setter
    def zoom(self, value: int) -> None:
        self.q.setValue("view/zoom", max(ZOOM_MIN, min(ZOOM_MAX, int(value))))

    @property
    def theme(self) -> str:
        """``system`` (follow the desktop's light/dark palette), ``light`` or ``dark``."""
        value = str(self.q.value("view/theme", "system")).lower()
        return value if value in THEMES else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        if value not in THEMES:
            raise ValueError(f"unknown theme {value!r} (one of {', '.join(THEMES)})")
        self.q.setValue("view/theme", value)

    # hints ----------------------------------------------------------------------------
    @property
    def first_run_hint_seen(self) -> bool:
        return str(self.q.value("hints/first_run", "false")).lower() == "true"

    @first_run_hint_seen.setter
    def first_run_hint_seen(self, value: bool) -> None:
        self.q.setValue("hints/first_run", "true" if value else "false")

    def sync(self) -> None:
        self.q.sync()
