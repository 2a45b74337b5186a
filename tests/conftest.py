"""Shared test set-up: Qt runs offscreen and pyqtgraph uses PySide6 (docs/design.md §1)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")


def _ram_disk(path: str = "/dev/shm", need: int = 4 << 30) -> str | None:
    """``path`` when it is a RAM file system the tests may use (writable, programs may run from
    it: the tests' git hooks must really be runnable) with ``need`` bytes free, in memory too."""
    try:
        st = os.statvfs(path)
        if not os.access(path, os.W_OK | os.X_OK) or st.f_flag & (os.ST_NOEXEC | os.ST_RDONLY):
            return None
        if st.f_bavail * st.f_frsize < need:
            return None
        with open("/proc/meminfo", encoding="ascii") as f:
            avail = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:"))
        return path if avail >= need else None
    except (OSError, ValueError, StopIteration):
        return None


# Test files (tmp_path, and every temporary file of the tests and their subprocesses) go to a RAM
# disk where there is one: the suite writes tens of thousands of small files and git objects, and
# Curator syncs what it commits to disk; on a busy disk that was most of the slowest tests' time
# (the killed-merge test 30 s -> 10 s, 3,000 pages written and git-added 4 s -> 1 s). A TMPDIR
# set by whoever runs the tests wins.
if "TMPDIR" not in os.environ and (_RAM := _ram_disk()) is not None:
    os.environ["TMPDIR"] = _RAM
    tempfile.tempdir = None  # (read again from TMPDIR)
# Tests never read or change the user's settings, recent wikis or demo copy (subprocesses too).
_STATE = tempfile.mkdtemp(prefix="curator-tests-")
# (removed when the run ends: the foreign wikis' state the tests make there is 120 MB a run, and on
# a RAM disk a leftover folder holds memory until the machine restarts)
atexit.register(shutil.rmtree, _STATE, True)
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
