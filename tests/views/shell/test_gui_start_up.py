"""How a new station process starts (issue 17, warm open to a usable window): the named wiki's
walk is made ahead in a forked child while the program imports, the cyclic collector is paused
while the window is built and running again before the load starts; a home is not walked ahead.

Each case runs the station in a new process (``curator.views.shell.app.run`` with ``--screenshot``): a walk
ahead forks, which only a small, single-threaded process may do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curator.engine.corpus.walker import CAN_WALK_AHEAD
from tests.gui_helpers import make_wiki

PAGES = {
    "wiki/home.md": "---\ntitle: Home\nlayer: identity\ntrust: 0.9\n---\n# Home\n\nSee [[Payments]].\n",
    "wiki/payments.md": "---\ntitle: Payments\nlayer: core\n---\n# Payments\n\nBack to [[Home]].\n",
    "notes/scratch.md": "# Scratch\n\nsee [[Home]]\n",
}

#: Runs the station on argv[1] with a screenshot, recording what the start-up did; prints JSON.
PROBE = r"""
import gc, json, sys
from curator.engine.corpus import walker
import curator.views.shell.app as app

seen = {"collections": 0, "taken": [], "gc_at_start": None, "pages": None}
take = walker.take_ahead

def take_ahead(root):
    answer = take(root)
    seen["taken"].append(answer is not None)
    return answer

walker.take_ahead = take_ahead
gc.callbacks.append(lambda phase, _info: seen.update(collections=seen["collections"] + (phase == "start")))

import curator.engine.corpus.store as store
store.take_ahead = take_ahead  # (the store's own name for it)
# (an older station built and started its window in one call: measured around that call)
name = "_start_up" if hasattr(app, "_start_up") else "open_workspace_window"
build = getattr(app, name)

def start_up(*args, **kwargs):
    before = seen["collections"]
    out = build(*args, **kwargs)
    if not isinstance(out, tuple):
        seen["during"] = seen["collections"] - before
        return out
    seen["during"] = seen["collections"] - before  # collections while importing Qt, building the window
    start = out[1].start

    def started():
        seen["gc_at_start"] = gc.isenabled()
        start()

    out[1].start = started
    out[1].ready.connect(lambda: seen.update(pages=out[1].model.rowCount()))
    return out

setattr(app, name, start_up)
code = app.run(sys.argv[1], screenshot=sys.argv[2])
seen["code"] = code
seen["gc_after"] = gc.isenabled()
seen["pending"] = len(walker._AHEAD)
sys.stderr.write("PROBE " + json.dumps(seen) + "\n")
"""


def _station(root: Path, tmp_path: Path) -> dict[str, Any]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path / "home"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(root), str(tmp_path / "shot.png")],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(lines[-1].removeprefix("PROBE "))
    return out


@pytest.mark.skipif(not CAN_WALK_AHEAD, reason="no fork on this platform (the store walks itself)")
def test_the_station_loads_from_a_walk_made_while_it_started(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    seen = _station(root, tmp_path)
    assert seen["code"] == 0
    assert seen["taken"] == [True]  # the load's first refresh took the walk made ahead
    assert seen["pending"] == 0
    assert seen["pages"] == len(PAGES)


def test_the_collector_rests_while_the_window_is_built_and_runs_for_the_load(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w", PAGES)
    seen = _station(root, tmp_path)
    assert seen["during"] == 0  # no collection while importing Qt and the views, building the window
    assert seen["gc_at_start"] is True  # (the load pauses it itself, and resumes it after)
    assert seen["gc_after"] is True
    assert seen["collections"] > 0  # the station collects as before once it runs


def test_a_home_is_not_walked_ahead(tmp_path: Path) -> None:
    home = tmp_path / "home-root"
    make_wiki(home / "shared" / "wiki", PAGES)
    seen = _station(home, tmp_path)
    assert seen["code"] == 0
    assert True not in seen["taken"]  # each wiki of the home walked by its own store
    assert seen["pending"] == 0
