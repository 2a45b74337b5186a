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
