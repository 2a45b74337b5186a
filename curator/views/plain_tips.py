"""Tooltips are plain text, everywhere in the station.

Qt shows a tooltip as rich text whenever the text *might* be HTML, and its rich text loads the
images it names through the default loader (``<img src="file:///dev/zero">`` reads without end,
a FIFO blocks the GUI thread, any local image is shown). Tooltips here carry page text (titles,
snippets, paths, commit subjects), which agents write. So one application-wide event filter
answers every tooltip request itself, with the text escaped: no widget's tooltip is ever parsed
as markup, whatever its source (``setToolTip``, a model's ``ToolTipRole``, a tree item). Only the
page view renders page text as rich text, through its guarded resource loader.
"""

from __future__ import annotations

import html

from PySide6 import QtGui
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QGraphicsView, QToolTip, QWidget

#: Longer tooltip text is cut (a snippet is 280 characters; a tooltip is never a page).
MAX_TIP_CHARS = 2000


def plain_tip(text: str) -> str:
    """``text`` as tooltip markup that shows exactly those characters: escaped, lines kept."""
    if len(text) > MAX_TIP_CHARS:
        text = text[:MAX_TIP_CHARS] + "…"
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def _tip_text(obj: QObject, event: QHelpEvent) -> tuple[QWidget, str] | None:
    """(widget, the tooltip Qt would show) for the widgets whose tooltip we can know: item views
    (the model's ``ToolTipRole``), graphics views (the item under the mouse or its nearest
    ancestor with a tooltip: the graph's node tips), any other widget's own ``toolTip()``."""
    parent = obj.parent() if isinstance(obj, QWidget) else None
    if isinstance(parent, QAbstractItemView) and obj is parent.viewport():
        index = parent.indexAt(event.pos())
        value = index.data(Qt.ItemDataRole.ToolTipRole) if index.isValid() else None
        return parent, "" if value is None else str(value)
    if isinstance(parent, QGraphicsView) and obj is parent.viewport():
        item = parent.itemAt(event.pos())
        while item is not None and not item.toolTip():
            item = item.parentItem()
        return parent, item.toolTip() if item is not None else ""
    if isinstance(obj, QWidget):
        return obj, obj.toolTip()
    return None


class PlainToolTips(QObject):
    """The application-wide filter; :func:`install` adds it once per application.

    Text that could not be rich text is left to Qt (it shows it as plain text anyway), and so is
    a widget whose tooltip it computes itself (tab bars, headers); text that might be rich is
    shown escaped.
    """

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
            return False
        found = _tip_text(obj, event)
        if found is None:
            return False
        widget, text = found
        if not text or not QtGui.Qt.mightBeRichText(text):
            return False
        QToolTip.showText(event.globalPos(), plain_tip(text), widget)
        return True


_FILTER = PlainToolTips()
_INSTALLED: set[int] = set()


def install(app: QApplication | None = None) -> PlainToolTips:
    """Make every tooltip of ``app`` (default: the running application) plain text; idempotent."""
    app = app or QApplication.instance()  # type: ignore[assignment]
    if app is not None and id(app) not in _INSTALLED:
        app.installEventFilter(_FILTER)
        _INSTALLED.add(id(app))
    return _FILTER
