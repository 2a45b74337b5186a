"""Ctrl-C in the terminal (SIGINT) or a SIGTERM closes the station cleanly: the windows closed as
the user closing them would, exit status 0, no traceback on the terminal (before, SIGINT raised
KeyboardInterrupt inside the next slot, printed a traceback, and the station went on)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.gui_helpers import make_wiki

PAGES = {"wiki/home.md": "---\ntitle: Home\n---\n# Home\n\nSee [[Other]].\n",
         "wiki/other.md": "# Other\n\nBack [[Home]].\n"}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_closes_the_station_without_a_traceback(tmp_path: Path, signum: int) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "curator.cli", "gui", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # The page cache is written by the window's load, which starts after the handlers are set.
        deadline = time.monotonic() + 120
        while not (root / ".curator" / "cache.sqlite").exists():
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the station never loaded the wiki"
            time.sleep(0.1)
        time.sleep(1.0)  # (the window shown, its event loop running)
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
