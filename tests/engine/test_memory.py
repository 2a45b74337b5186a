"""A long-lived process gives back the memory its big temporaries freed (glibc's adaptive mapping
threshold otherwise keeps them in a heap a small allocation pins)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import REPO

PROBE = """
import sys
import numpy as np
if sys.argv[1] == "fixed":
    from curator.engine.memory import return_freed_memory
    assert return_freed_memory()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 1e6
big = np.ones(2_000_000)  # 16 MB freed: glibc would now serve anything smaller from its heap
del big
before = rss()
arrays = [np.ones(250_000) for _ in range(30)]  # a query's temporaries, 2 MB each
pinned = b"x" * 2000  # a small allocation made meanwhile, kept
del arrays
print(round(rss() - before))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator: Linux only")
def test_freed_temporaries_go_back_to_the_system() -> None:
    def grown(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", PROBE, mode], cwd=REPO, capture_output=True, text=True,
                             check=True, timeout=60)
        return int(out.stdout.strip())

    assert grown("adaptive") >= 20  # what the station kept before (the probe's 60 MB, a third kept)
    assert grown("fixed") <= 5


def test_the_station_and_the_mcp_server_set_it_at_start() -> None:
    for module in ("curator/views/shell/app.py", "curator/mcp_server.py"):
        assert "return_freed_memory()" in (REPO / module).read_text(), module


TRIM_PROBE = """
import sys
from curator.engine import memory
if sys.argv[1] == "long":
    memory.return_freed_memory()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 1e6
before = rss()
# a pass's many small blocks (bigger than Python's own allocator serves, below the mapping
# threshold: glibc's heap), one in a hundred still alive after it: the heap cannot shrink
blocks = [bytes(2000 + i % 7) for i in range(60_000)]
kept = blocks[::100]
del blocks
grown = rss() - before
trimmed = memory.trim_when_idle()
print(trimmed, round(grown), round(rss() - before))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator: Linux only")
def test_a_long_lived_process_gives_back_what_a_pass_freed_and_a_one_shot_leaves_it() -> None:
    def run(mode: str) -> tuple[bool, int, int]:
        out = subprocess.run([sys.executable, "-c", TRIM_PROBE, mode], cwd=REPO, capture_output=True, text=True,
                             check=True, timeout=60)
        trimmed, grown, after = out.stdout.split()
        return trimmed == "True", int(grown), int(after)

    trimmed, grown, after = run("long")
    assert trimmed and grown >= 100 and after <= 20  # (120 MB made, 1.2 MB kept)
    trimmed, grown, after = run("once")
    assert not trimmed and after >= 100  # (a one-shot gives it back when it ends)


def test_a_trim_waits_for_enough_free_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine import memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "_LONG_LIVED", True)
    monkeypatch.setattr(memory, "trim", lambda: trims.append(1) or True)
    for free, expected in (((memory.TRIM_FREE_MB << 20) - 1, False), (memory.TRIM_FREE_MB << 20, True),
                           (None, False)):
        monkeypatch.setattr(memory, "free_heap_bytes", lambda free=free: free)
        assert memory.trim_when_idle() is expected
    assert len(trims) == 1
    monkeypatch.setattr(memory, "_LONG_LIVED", False)  # (the dedup worker: not marked, still trimmed)
    monkeypatch.setattr(memory, "free_heap_bytes", lambda: memory.TRIM_FREE_MB << 20)
    assert not memory.trim_when_idle() and memory.trim_if_free() and len(trims) == 2
    if sys.platform.startswith("linux"):
        monkeypatch.undo()
        assert isinstance(memory.free_heap_bytes(), int)  # (glibc answers here)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator: Linux only")
def test_a_lean_heap_is_set_where_glibc_answers() -> None:
    code = ("from curator.engine import memory; import numpy as np, threading; assert memory.lean_heap(); "
            "t = threading.Thread(target=lambda: [np.ones(300_000) for _ in range(20)]); t.start(); t.join(); "
            "print(memory.runs_for_long())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"  # (lean, not marked long-lived: a scan keeps what a one-shot keeps)
