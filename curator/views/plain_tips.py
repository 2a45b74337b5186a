"""Tooltips are plain text, everywhere in the station.

Qt shows a tooltip as rich text whenever the text *might* be HTML, and its rich text loads the
images it names through the default loader (``<img src="file:///dev/zero">`` reads without end,
a FIFO blocks the GUI thread, any local image is shown). Tooltips here carry page text (titles,
snippets, paths, commit subjects), which agents write, so the text Qt is given is escaped first:

- an item view's tooltip (a model's ``ToolTipRole``, a table or tree item) is shown by its
  delegate: every item view gets :class:`PlainTipDelegate` (or a delegate derived from it), whose
  ``helpEvent`` shows the text escaped;
- a graphics view's tooltip (an item's, the graph's node tips) is shown through a filter on that
  view's viewport only;
- a widget's own tooltip is set escaped by :func:`set_tip` wherever it carries text from a page.

:func:`install` makes the application's style a :class:`PlainTipStyle`, whose ``polish`` (once
per widget, when Qt first shows it) gives item views the delegate and graphics views the filter:
no Python runs per event anywhere else (an application-wide filter would run Python for every
event of every object, and under background load each such call waits for the interpreter).
Only the page view renders page text as rich text, through its guarded resource loader.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6 import QtGui
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QGraphicsView,
    QProxyStyle,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

#: Longer tooltip text is cut (a snippet is 280 characters; a tooltip is never a page).
MAX_TIP_CHARS = 2000


def plain_tip(text: str) -> str:
    """``text`` as tooltip markup that shows exactly those characters: escaped, lines kept."""
    if len(text) > MAX_TIP_CHARS:
        text = text[:MAX_TIP_CHARS] + "…"
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def safe_tip(text: str) -> str:
    """``text`` as Qt should be given it: unchanged when Qt would show it as plain text anyway,
    else escaped (:func:`plain_tip`)."""
    return plain_tip(text) if text and QtGui.Qt.mightBeRichText(text) else text


def set_tip(widget: QWidget, text: str) -> None:
    """``widget.setToolTip(text)`` for text that may come from a page: never shown as markup."""
    widget.setToolTip(safe_tip(text))


def _show(event: QHelpEvent, text: str, widget: QWidget) -> bool:
    """Show ``text`` escaped if it might be rich text; False to leave a plain one to Qt."""
    if not text or not QtGui.Qt.mightBeRichText(text):
        return False
    QToolTip.showText(event.globalPos(), plain_tip(text), widget)
    return True


class PlainTipDelegate(QStyledItemDelegate):
    """The item views' delegate: draws like Qt's own, shows an item's tooltip escaped. A view's
    own delegate derives from it (``helpEvent`` runs only for help events: nothing per paint)."""

    def helpEvent(self, event: QHelpEvent, view: QAbstractItemView,
                  option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> bool:
        if event is not None and event.type() == QEvent.Type.ToolTip and index.isValid():
            value = index.data(Qt.ItemDataRole.ToolTipRole)
            if value is not None and _show(event, str(value), view):
                return True
        return super().helpEvent(event, view, option, index)


class GraphicsTips(QObject):
    """The filter on a graphics view's viewport: the item under the mouse (or its nearest
    ancestor with a tooltip) has its tooltip shown escaped."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
            return False
        view = obj.parent()
        if not isinstance(view, QGraphicsView):
            return False
        item = view.itemAt(event.pos())
        while item is not None and not item.toolTip():
            item = item.parentItem()
        return item is not None and _show(event, item.toolTip(), view)


_GRAPHICS_TIPS = GraphicsTips()


def guard(widget: QObject) -> None:
    """Make ``widget``'s tooltips plain, if it is an item view or a graphics view; idempotent."""
    if isinstance(widget, QAbstractItemView):
        delegate = widget.itemDelegate()
        if (type(delegate) is QStyledItemDelegate
                and delegate.metaObject().className() == "QStyledItemDelegate"):
            widget.setItemDelegate(PlainTipDelegate(widget))  # Qt's default: ours draws the same
    elif isinstance(widget, QGraphicsView) and not widget.property("curator_plain_tips"):
        widget.setProperty("curator_plain_tips", True)
        widget.viewport().installEventFilter(_GRAPHICS_TIPS)


class PlainTipStyle(QProxyStyle):
    """The application's style (a proxy of the platform's or Fusion): ``polish`` guards each
    widget once (:func:`guard`); everything else is the base style's."""

    def polish(self, arg: Any) -> Any:
        result = super().polish(arg)
        if isinstance(arg, QWidget):
            guard(arg)
        return result


_STYLES: list[PlainTipStyle] = []  # referenced here: the application does not keep Python's


def set_style(app: QApplication, name: str | None = None) -> None:
    """Make ``app``'s style a :class:`PlainTipStyle` over the style ``name`` (default: the current)."""
    base = name or base_style_name(app)
    style = PlainTipStyle(base)
    _STYLES[:] = [style]
    app.setStyle(style)


def base_style_name(app: QApplication) -> str:
    """The name of ``app``'s style (the base style's when it is a :class:`PlainTipStyle`)."""
    style: QStyle = app.style()
    if isinstance(style, QProxyStyle) and style.baseStyle() is not None:
        style = style.baseStyle()
    return style.name()


def install(app: QApplication | None = None) -> None:
    """Make every tooltip of ``app`` (default: the running application) plain text; idempotent.
    Widgets already shown are guarded too."""
    app = app or QApplication.instance()  # type: ignore[assignment]
    if app is None or isinstance(app.style(), PlainTipStyle):
        return
    set_style(app)
    for widget in app.allWidgets():
        guard(widget)
