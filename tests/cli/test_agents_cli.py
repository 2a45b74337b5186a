"""``curator agents add|list|revoke``: the HTTP agents' tokens, managed by the operator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from curator.engine.write.bootstrap import init_wiki
from tests import REPO


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def test_add_prints_the_token_once_list_never_shows_it_and_revoke_removes_it(tmp_path: Path) -> None:
    root = tmp_path / "w"
    init_wiki(root)
    added = cli(root, "agents", "add", "hanna", "--department", "hr", "--json")
    assert added.returncode == 0, added.stderr
    answer = json.loads(added.stdout)
    assert set(answer) == {"agent", "token"} and answer["agent"] == "hanna"
    token = answer["token"]
    plain = cli(root, "agents", "add", "olli")
    assert plain.returncode == 0 and "shown only this once" in plain.stdout
    listed = cli(root, "agents", "list", "--json")
    assert [(a["agent"], a["department"]) for a in json.loads(listed.stdout)] == [("hanna", "hr"), ("olli", None)]
    assert token not in listed.stdout and token not in cli(root, "agents", "list").stdout
    # nothing of it in git, nor anywhere in the wiki's files in plain text
    assert subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                          text=True).stdout == ""
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert token.encode() not in path.read_bytes(), path
    revoked = cli(root, "agents", "revoke", "hanna")
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    assert [a["agent"] for a in json.loads(cli(root, "agents", "list", "--json").stdout)] == ["olli"]


def test_errors_are_one_line_and_only_the_operator_manages_tokens(tmp_path: Path) -> None:
    root = tmp_path / "w"
    init_wiki(root)
    cli(root, "agents", "add", "hanna")
    for args, code in ((("agents", "add", "hanna"), 2), (("agents", "revoke", "ghost"), 2),
                       (("agents", "add", "bad id"), 2), (("--as", "agent:x", "agents", "add", "y"), 1)):
        done = cli(root, *args)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        text = (done.stderr or done.stdout).strip()
        assert len(text.splitlines()) == 1 and "Traceback" not in text, text
