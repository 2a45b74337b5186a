"""A full disk (issue 45): ``curator mcp`` exited at start with ``OperationalError: cannot
rollback``, errors read ``internal error: OSError: [Errno 28]``, and an append answered with an
error was later committed by ``recover``. On a small file system filled to every level from
nothing to a few pages' worth, each append's answer is one line, an error says "disk full", and an
agent told "failed" never finds its fact written afterwards (a success may still be committed by
the next action, as its answer says). The MCP server starts and answers with ~70 KB free."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gui_helpers import make_wiki
from tests.mcp.test_mcp_server import call, run

FREE_KB = (0, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96)
PAGE = "# Payments\n\n## Updates\n\n- Cards settle in two days\n"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small file system here ({proc.stderr.decode().strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)


def fill(disk: Path, leave_kb: int) -> Path:
    filler = disk / f"filler-{uuid.uuid4().hex}"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(filler, "wb") as f:
        try:
            f.write(b"\0" * max(0, free - leave_kb * 1024))
            f.flush()
        except OSError:
            pass
    return filler


def git_log(root: Path) -> str:
    return subprocess.run(["git", "log", "-p", "--all"], cwd=root, capture_output=True, text=True).stdout


@pytest.mark.parametrize("leave_kb", FREE_KB)
def test_an_append_told_failed_is_never_written_later(small_disk: Path, leave_kb: int) -> None:
    root = make_wiki(small_disk / "w", {"wiki/payments.md": PAGE})
    assert cli(root, "index").returncode == 0
    fact = f"Refunds take five days ({leave_kb} KB left)"
    filler = fill(small_disk, leave_kb)
    proc = cli(root, "--as", "agent:bob", "append", "payments", fact, "--json")
    filler.unlink()
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    failed = proc.returncode != 0
    if failed:
        assert proc.stderr.count("\n") <= 1 and "disk full" in proc.stderr + proc.stdout, proc.stderr
    else:
        assert json.loads(proc.stdout)["status"] == "appended", proc.stdout
    # space again: recovery, then another action (which commits what a success left pending)
    cli(root, "recover")
    assert cli(root, "append", "payments", "Chargebacks take ten days").returncode == 0
    written = fact in (root / "wiki/payments.md").read_text() or fact in git_log(root)
    assert written != failed, (failed, proc.stdout, proc.stderr)


def test_the_mcp_server_starts_and_answers_with_little_disk_left(small_disk: Path) -> None:
    root = make_wiki(small_disk / "w", {"wiki/payments.md": PAGE})
    filler = fill(small_disk, 70)

    async def body(s) -> None:  # type: ignore[no-untyped-def]
        err, text = await call(s, "wiki_read", page_name="payments")
        assert not err and "Cards settle" in text, text
        err, text = await call(s, "wiki_append", slug="payments", content="Disputes close within a month")
        assert "internal error" not in text and (not err or "disk full" in text), text

    try:
        run(root, body, agent="bob")
    finally:
        filler.unlink()
