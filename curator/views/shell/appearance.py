"""Light and dark: the station follows the desktop's palette, or a theme the operator chose.

``system`` leaves the platform's palette and style alone (and so follows it when it changes);
``light`` and ``dark`` set a Fusion palette of that kind on the whole application. The rendered
page follows too: :func:`is_dark` picks the page style sheet (:func:`~curator.views.page.render.page_style`),
and :class:`PageAppearance` keeps a window's page at the operator's zoom (View ▸ Zoom) and theme.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from curator.views import plain_tips
from curator.views.page.render import page_style
from curator.views.settings import ZOOM_DEFAULT, ZOOM_MAX, ZOOM_MIN, ZOOM_STEP

if TYPE_CHECKING:
    from curator.views.shell.main_window import MainWindow

THEME_LABELS = {"system": "&System", "light": "&Light", "dark": "&Dark"}

_original: dict[str, object] = {}


def _dark_palette() -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    window, base, text = QColor("#2b2d30"), QColor("#1e1f22"), QColor("#dfe1e5")
    for r, c in ((role.Window, window), (role.WindowText, text), (role.Base, base),
                 (role.AlternateBase, QColor("#26282b")), (role.ToolTipBase, QColor("#3c3f41")),
                 (role.ToolTipText, text), (role.Text, text), (role.Button, QColor("#393b40")),
                 (role.ButtonText, text), (role.BrightText, QColor("#ff6b68")),
                 (role.Link, QColor("#6cb6ff")), (role.LinkVisited, QColor("#b392f0")),
                 (role.Highlight, QColor("#2f65ca")), (role.HighlightedText, QColor("#ffffff")),
                 (role.PlaceholderText, QColor("#8c8f94")), (role.Mid, QColor("#4e5157")),
                 (role.Light, QColor("#4e5157")), (role.Dark, QColor("#17181a")),
                 (role.Midlight, QColor("#3c3f41")), (role.Shadow, QColor("#000000"))):
        p.setColor(r, c)
    disabled = QPalette.ColorGroup.Disabled
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(disabled, r, QColor("#6f737a"))
    return p


def _light_palette() -> QPalette:
    from PySide6.QtWidgets import QStyleFactory

    style = QStyleFactory.create("Fusion")
    return style.standardPalette() if style is not None else QPalette()


def _set_style(app: QApplication, name: str) -> None:
    """Set the style ``name``; kept under the station's tooltip guard if it is installed."""
    if isinstance(app.style(), plain_tips.PlainTipStyle):
        plain_tips.set_style(app, name)
    else:
        app.setStyle(name)


def apply_theme(theme: str) -> None:
    """Set the application's palette for ``theme`` (``system``, ``light`` or ``dark``)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    if theme == "system" and not _original:
        return  # never overridden: the platform's palette and style are in place
    if not _original:
        _original["palette"] = QPalette(app.palette())
        _original["style"] = plain_tips.base_style_name(app)
    hints = QGuiApplication.styleHints()
    if theme == "system":
        hints.unsetColorScheme()
        _set_style(app, str(_original["style"]))
        app.setPalette(_original["palette"])  # type: ignore[arg-type]
        return
    _set_style(app, "Fusion")  # a palette applies the same on every platform with Fusion
    hints.setColorScheme(Qt.ColorScheme.Dark if theme == "dark" else Qt.ColorScheme.Light)
    app.setPalette(_dark_palette() if theme == "dark" else _light_palette())


def is_dark() -> bool:
    """Whether the application's palette is a dark one (the page style follows it)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return False
    palette = app.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < palette.color(
        QPalette.ColorRole.WindowText).lightness()


class PageAppearance:
    """View ▸ Zoom and View ▸ Theme for one window: the rendered page's style sheet and the source
    editor's font follow the zoom and the palette (both remembered in the settings)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self._styled_dark: bool | None = None
        self._source_points: float | None = None

    def zoom_in(self) -> None:
        self.set_zoom(self.window.settings.zoom + ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self.window.settings.zoom - ZOOM_STEP)

    def zoom_reset(self) -> None:
        self.set_zoom(ZOOM_DEFAULT)

    def set_zoom(self, percent: int) -> None:
        """Page text at ``percent`` of the normal size (remembered in the settings)."""
        percent = max(ZOOM_MIN, min(ZOOM_MAX, percent))
        settings = self.window.settings
        if percent == settings.zoom:
            return
        settings.zoom = percent
        self.apply_page_style(rerender=True)
        self.window.status(f"Zoom {percent} %")

    def set_theme(self, theme: str) -> None:
        """``system`` (follow the desktop), ``light`` or ``dark`` (remembered)."""
        self.window.settings.theme = theme
        self.window.menus.check_theme(theme)
        apply_theme(theme)
        self.apply_page_style(rerender=True)

    def system_scheme_changed(self, *_args: object) -> None:
        if self.window.settings.theme == "system":
            self.apply_page_style(rerender=True)

    def palette_changed(self) -> None:
        """The desktop's palette changed (light to dark) without a colour-scheme signal."""
        if self.window.settings.theme == "system" and self._styled_dark is not None \
                and is_dark() != self._styled_dark:
            self.apply_page_style(rerender=True)

    def apply_page_style(self, rerender: bool = False) -> None:
        """The rendered page's style sheet for the zoom and the palette; the source's font size."""
        window = self.window
        zoom, dark = window.settings.zoom, is_dark()
        self._styled_dark = dark
        window.page_view.browser.document().setDefaultStyleSheet(page_style(zoom, dark))
        source = window.page_view.source
        font = source.font()
        if self._source_points is None:
            self._source_points = font.pointSizeF() if font.pointSizeF() > 0 else 10.0
        font.setPointSizeF(self._source_points * zoom / 100)
        source.setFont(font)
        if rerender:
            window.rerender_page()
