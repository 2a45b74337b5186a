"""`curator mcp --sync-every N`: an agent's appends reach the git remote without anyone syncing."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests import REPO
from tests.sync_helpers import make_net

REPO = REPO


def remote_subjects(remote: Path) -> list[str]:
    return subprocess.run(["git", "--git-dir", str(remote), "log", "--format=%s", "main"],
                          capture_output=True, text=True, check=True).stdout.splitlines()


def test_appends_are_pushed_by_the_auto_sync(tmp_path: Path) -> None:
    net = make_net(tmp_path)
    root = net.a.root
    net.close()
    params = StdioServerParameters(
        command=sys.executable, cwd=str(REPO),
        args=["-m", "curator.cli", "mcp", "--wiki", str(root), "--agent", "dudu", "--sync-every", "1"])

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("wiki_append", {"slug": "ann-smith",
                                                             "content": "Ann now leads the Lantern project"})
            assert not result.is_error
            deadline = time.monotonic() + 20
            while "wiki_append: ann-smith" not in remote_subjects(net.remote):
                assert time.monotonic() < deadline, remote_subjects(net.remote)
                await anyio.sleep(0.3)

    anyio.run(main)
    assert remote_subjects(net.remote)[0] == "wiki_append: ann-smith"


def test_appends_over_http_are_pushed_by_the_auto_sync(tmp_path: Path) -> None:
    from tests.mcp.http_helpers import add_agent, call, http_server, http_session

    net = make_net(tmp_path)
    root = net.a.root
    net.close()
    token = add_agent(root, "dudu")
    with http_server(root, "--sync-every", "1") as (url, _):

        async def main() -> None:
            async with http_session(url, token) as session:
                err, text = await call(session, "wiki_append", slug="ann-smith",
                                       content="Ann now chairs the Lantern steering group")
                assert not err, text
                deadline = time.monotonic() + 20
                while "wiki_append: ann-smith" not in remote_subjects(net.remote):
                    assert time.monotonic() < deadline, remote_subjects(net.remote)
                    await anyio.sleep(0.3)

        anyio.run(main)
    author = subprocess.run(["git", "--git-dir", str(net.remote), "log", "-1", "--format=%an", "main"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert author == "agent:dudu"
