"""GUI start-up: the QApplication, the main window, ``--screenshot``."""

from __future__ import annotations

import os
import sys


def run(target: str | None, screenshot: str | None = None, view: str = "main") -> int:
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QMainWindow, QTableWidget, QTableWidgetItem

    from curator.engine.wiki import Wiki
    from curator.paths import resources_dir

    app = QApplication.instance() or QApplication(sys.argv[:1])
    wiki = Wiki(target or resources_dir() / "demo-wiki")
    pages = wiki.visible_pages()
    window = QMainWindow()
    window.setWindowTitle(f"Curator — {wiki.root.name}")
    table = QTableWidget(len(pages), 4)
    table.setHorizontalHeaderLabels(["Title", "Path", "Layer", "Trust"])
    for row, page in enumerate(pages):
        for col, value in enumerate((page.title, page.path, page.layer, f"{page.trust:.2f}")):
            table.setItem(row, col, QTableWidgetItem(value))
    window.setCentralWidget(table)
    window.resize(1400, 900)
    window.show()
    if screenshot:
        app.processEvents()
        window.grab().save(screenshot)
        return 0
    return app.exec()
