"""A line on the MCP stdio stream that is not a JSON-RPC message gets JSON-RPC's answer (issue 45):
``-32700`` for text that is not JSON, ``-32600`` for JSON of another shape, both with ``id: null``;
the session goes on and the next request is answered."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.gui_helpers import make_wiki

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_malformed_lines_are_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    root = make_wiki(tmp_path / "w")
    lines = [json.dumps(INIT), "{not json", "", '{"foo": 1}',
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    proc = subprocess.Popen([sys.executable, "-m", "curator.cli", "mcp", "--wiki", str(root), "--agent", "bob"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    answers: list[dict] = []
    deadline = time.monotonic() + 60
    while not any(a.get("id") == 2 for a in answers) and time.monotonic() < deadline:
        line = proc.stdout.readline()  # (the server answers every line; id 2 comes last)
        if not line:
            break
        answers.append(json.loads(line))
    proc.stdin.close()
    stderr = proc.stderr.read()
    proc.wait(timeout=30)
    errors = [a["error"]["code"] for a in answers if "error" in a]
    assert -32700 in errors and -32600 in errors, answers
    assert all(a["id"] is None for a in answers if "error" in a)
    assert any(a.get("id") == 2 and "tools" in a.get("result", {}) for a in answers), answers
    assert "Traceback" not in stderr
