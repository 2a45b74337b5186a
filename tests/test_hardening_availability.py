"""Hardening, availability (issue 14): one hostile input must not take the wiki down. A file name
that is not UTF-8, a fact too large to be one, page text that asks a widget to load resources,
and pages too large to render at once; each tested as a class, through the CLI, a real MCP stdio
client and the station."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from curator.engine.actor import OPERATOR
from curator.engine.setup import init_wiki
from curator.engine.sync import sync

from .sync_helpers import make_net
from .test_mcp_server import call, run

IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
BAD = os.fsencode("wiki/") + b"caf\xe9 \xff menu.md"  # Latin-1 bytes: not a UTF-8 name
SHOWN = "wiki/caf\ufffd \ufffd menu.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def cli(root: Path, *args: str, timeout: float = 120) -> tuple[int, Any, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, timeout=timeout)
    out: Any = proc.stdout.decode("utf-8")  # strict: every byte printed must be UTF-8
    err = proc.stderr.decode("utf-8")
    if "--json" in args and out.strip():
        out = json.loads(out)
    return proc.returncode, out, err


def put_bad_page(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), BAD), "wb") as f:
        f.write(b"# Menu\n\nThe lunch menu. See [[welcome]].\n\n## Updates\n\n- Soup on Monday\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki/welcome.md").write_text("# Welcome\n\nStart here.\n\n## Updates\n\n- Doors open at 9\n")
    put_bad_page(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    return root


# --- 5. a file name that is not UTF-8 never stops a command ---------------------------------------

def assert_no_internal_error(rc: int, err: str) -> None:
    assert "internal error" not in err and "Traceback" not in err, err
    assert rc == 0, err


def test_a_non_utf8_file_name_stops_no_command(root: Path) -> None:
    rc, out, err = cli(root, "index", "--json")
    assert_no_internal_error(rc, err)
    assert SHOWN in [p["path"] for p in out] and "wiki/welcome.md" in [p["path"] for p in out]
    rc, out, err = cli(root, "lint", "--json")
    assert_no_internal_error(rc, err)
    assert any(i["path"] == SHOWN and i["code"] == "file-name" and i["severity"] == "error" for i in out), out
    rc, out, err = cli(root, "lint")
    assert rc == 0 and f"{SHOWN}: error: [file-name]" in out, out
    rc, out, err = cli(root, "append", "welcome", "Lunch is at noon", "--json")
    assert_no_internal_error(rc, err)
    assert out["status"] == "appended"
    rc, out, err = cli(root, "--as", "agent:dudu", "append", "cafe-menu", "Fish on Friday", "--json")
    assert_no_internal_error(rc, err)
    for args in (["recover"], ["history", "--json"], ["neighbors", "welcome", "--json"], ["read-all"],
                 ["graph", "--format", "json"], ["graph"], ["search", "lunch", "--json"], ["context"],
                 ["dedup", "--json"], ["undo"]):
        rc, out, err = cli(root, *args)
        assert "internal error" not in err and "Traceback" not in err, (args, err)
        assert rc == 0, (args, err)
    assert git(root, "status", "--porcelain") == ""
    assert "Lunch is at noon" not in (root / "wiki/welcome.md").read_text("utf-8")  # undone


def test_mcp_starts_and_lists_the_page(root: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_index")
        assert not err and SHOWN in text and "wiki/welcome.md" in text, text
        err, text = await call(s, "wiki_append", slug="welcome", content="The lift is on the left")
        assert not err and text.startswith("appended"), text
        err, text = await call(s, "files_neighbors", slug="welcome")
        assert not err, text

    run(root, body)


def test_sync_pulling_such_a_file_breaks_nothing_afterwards(tmp_path: Path) -> None:
    net = make_net(tmp_path)
    try:
        put_bad_page(net.a.root)
        git(net.a.root, "add", "-A")
        git(net.a.root, "commit", "-qm", "collaborator adds a Latin-1 name")
        assert sync(net.a, OPERATOR).status == "pushed"
        result = sync(net.b, OPERATOR)
        assert not result.is_error, result.message
        assert os.path.exists(os.path.join(os.fsencode(net.b.root), BAD))
        for args in (["index", "--json"], ["lint", "--json"], ["append", "ann-smith", "Ann moved to Bergen"],
                     ["recover"], ["history"]):
            rc, _out, err = cli(net.b.root, *args)
            assert "internal error" not in err, (args, err)
            assert rc == 0, (args, err)
    finally:
        net.close()


def test_station_loads_a_wiki_with_such_a_file(qtbot, root: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.views.main_window import MainWindow
    from curator.views.workspace import Workspace

    from .gui_helpers import temp_settings

    win = MainWindow(Workspace(root, watch=False), temp_settings(tmp_path))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=20_000):
        win.start()
    proxy = win.browser.proxy
    paths = {proxy.index(r, 0).data() for r in range(proxy.rowCount())}
    titles = {proxy.index(r, c).data() for r in range(proxy.rowCount()) for c in range(proxy.columnCount())}
    assert "Menu" in titles and "Welcome" in titles, (paths, titles)
    win.close()
