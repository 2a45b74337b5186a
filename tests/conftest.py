"""Shared test set-up: Qt runs offscreen and pyqtgraph uses PySide6 (docs/design.md §1)."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
# Tests never read or change the user's settings, recent wikis or demo copy (subprocesses too).
_STATE = tempfile.mkdtemp(prefix="curator-tests-")
for _var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
    os.environ[_var] = os.path.join(_STATE, _var.lower())
# Tests never depend on the machine's git identity or config.
os.environ["GIT_CONFIG_GLOBAL"] = os.devnull
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
