"""Serving a wiki with ``curator mcp --http`` in a subprocess and reaching it with the MCP SDK's
own streamable-HTTP client, as a remote agent runtime would."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests import REPO


def curator(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", *args], cwd=REPO, capture_output=True,
                          text=True, check=check, env=dict(os.environ))


def add_agent(root: Path, agent: str, department: str | None = None) -> str:
    """A new token for ``agent`` (through ``curator agents add --json``)."""
    args = ["--wiki", str(root), "agents", "add", agent, "--json"]
    if department:
        args += ["--department", department]
    answer = json.loads(curator(*args).stdout)
    assert answer["agent"] == agent
    return str(answer["token"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(root: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``curator mcp --http 127.0.0.1:<free port> --wiki ROOT``, running until the block ends:
    (the /mcp URL, the process)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "curator.cli", "mcp", "--http", f"127.0.0.1:{port}", "--wiki", str(root), *extra],
        cwd=REPO, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # printed once the socket listens
        assert "serving MCP at" in line, line + proc.stderr.read()
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0)) as client, \
            streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    result = await session.call_tool(tool, arguments)
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return bool(result.is_error), text


def raw_post(url: str, token: str | None, message: dict[str, Any]) -> httpx2.Response:
    """One JSON-RPC message POSTed as a streamable-HTTP client would, with ``token`` as bearer."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, headers=headers, content=json.dumps(message), timeout=30.0)


def wait_until(predicate: Any, timeout: float) -> float:
    """Seconds until ``predicate()`` held (AssertionError after ``timeout``)."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, f"not within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - start
