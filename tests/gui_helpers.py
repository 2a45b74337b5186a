"""Helpers for the station's pytest-qt tests: a small wiki and a loaded main window."""

from __future__ import annotations

import subprocess
from pathlib import Path

from PySide6.QtCore import QSettings

GIT_ID = ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]

PAGES = {
    "wiki/home.md": "---\ntitle: Home\nlayer: identity\ntrust: 0.9\ntags: [start]\n---\n# Home\n\n"
                    "Welcome. See [[Payments]] and [[Nowhere Yet]].\n",
    "wiki/payments.md": "---\ntitle: Payments\nlayer: core\ntrust: 0.8\ntags: [finance]\n---\n# Payments\n\n"
                        "How payments flow. Back to [[Home]]. Refunds are in [[refunds#Rules|the rules]].\n",
    "wiki/refunds.md": "---\ntitle: Refunds\nlayer: context\ntrust: 0.4\ntags: [finance, policy]\n---\n"
                       "# Refunds\n\n## Rules\n\nRefunds within 30 days. Payments team owns this.\n",
    "notes/scratch.md": "---\ntitle: Scratch\nlayer: deep\ntrust: 0.2\n---\n# Scratch\n\nloose notes\n",
}


def make_wiki(root: Path, pages: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (pages or PAGES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".gitignore").write_text(".curator/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "add", "--", "."], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", "initial"], cwd=root, check=True)
    return root


def temp_settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    from curator.views.settings import Settings

    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


def loaded_window(qtbot, root: Path, tmp_path: Path, *, watch: bool = True,  # type: ignore[no-untyped-def]
                  station: bool = False, timeout: int = 15_000):
    """A station window on ``root`` with its settings under ``tmp_path``, loaded (``ready``);
    with ``station``, every view installed and the window shown at 1400x900 first, as the
    station's benchmarks open it."""
    from curator.views.shell.main_window import MainWindow
    from curator.views.workspace import Workspace

    win = MainWindow(Workspace(root, watch=watch), temp_settings(tmp_path))
    qtbot.addWidget(win)
    if station:
        from curator.views.shell.registry import install_views

        install_views(win)
        win.resize(1400, 900)
        win.show()
    with qtbot.waitSignal(win.ready, timeout=timeout):
        win.start()
    return win
