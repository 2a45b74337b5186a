"""Shared test set-up: Qt runs offscreen and pyqtgraph uses PySide6 (docs/design.md §1)."""

from __future__ import annotations

import json
import os
import subprocess
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
# The operator signs: every operator commit a test makes is signed with this session's SSH key
# (curator.engine.repo.signing), as a team syncing clones sets up (`curator operators sign`);
# tests.sync_helpers puts its public half on the wiki's operator allow-list.
OPERATOR_KEY = os.path.join(_STATE, "operator-key")
if subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "operator", "-f", OPERATOR_KEY],
                  capture_output=True).returncode == 0:
    os.makedirs(os.path.join(os.environ["XDG_CONFIG_HOME"], "curator"), exist_ok=True)
    with open(os.path.join(os.environ["XDG_CONFIG_HOME"], "curator", "signing.json"), "w") as _f:
        _f.write(json.dumps({"key": OPERATOR_KEY}) + "\n")
