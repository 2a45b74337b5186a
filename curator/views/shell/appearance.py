"""Light and dark: the station follows the desktop's palette, or a theme the operator chose.

``system`` leaves the platform's palette and style alone (and so follows it when it changes);
``light`` and ``dark`` set a Fusion palette of that kind on the whole application. The rendered
page follows too: :func:`is_dark` picks the page style sheet (:func:`~curator.views.page.render.page_style`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from curator.views import plain_tips

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
