"""Small widgets several views share."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QToolButton

from curator.engine.page import LAYERS
from curator.models.pages import LAYER_COLORS


def layer_toggles(row: QHBoxLayout, on_toggle: Callable[..., None]) -> dict[str, QToolButton]:
    """One checkable button per layer, in the layer's colour when on; added to ``row``."""
    buttons: dict[str, QToolButton] = {}
    for layer in LAYERS:
        button = QToolButton()
        button.setText(layer)
        button.setCheckable(True)
        button.setChecked(True)
        button.setToolTip(f"Show {layer} pages")
        button.setStyleSheet(f"QToolButton:checked {{ color: white; background: {LAYER_COLORS[layer]}; "
                             "border-radius: 3px; padding: 2px 6px; }")
        button.toggled.connect(on_toggle)
        buttons[layer] = button
        row.addWidget(button)
    return buttons
