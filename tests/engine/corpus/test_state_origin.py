"""A wiki's ``.curator/`` is used only if Curator made it on this machine for this user
(docs/design.md §2, ``engine/corpus/state.py``): a state folder that came with the wiki (a clone of
a repository tracking ``.curator/agents.json``, a copied-in folder) is never read, so its agent
tokens are not accepted and its judge settings not used; ``curator trust DIR`` adopts it."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.corpus import state as state_mod
from curator.engine.corpus.state import ORIGIN_NAME, SECRET_NAME, STATE_DIR, config_dir, locate_state
from curator.engine.facts.judge import JUDGE_SETTINGS, judge_for
from curator.engine.policy.actor import Actor
from curator.engine.policy.tokens import TokenStore
from curator.engine.repo import trust
from curator.engine.wiki import Wiki
from curator.mcp_server import AgentTokens
from tests.engine.corpus.test_state_location import git, repository


def accepted(wiki: Wiki, token: str) -> object:
    """What the HTTP server's token check (``serve_http``: AgentTokens over the wiki's TokenStore)
    makes of ``token``: the agent it names, or None."""
    answer = asyncio.run(AgentTokens(TokenStore(wiki.state_dir)).verify_token(token))
    return None if answer is None else answer.client_id


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def other_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Another user's (or machine's) configuration folder, hence another secret."""
    home = tmp_path / "other-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_mod, "_warned", set())


def test_a_clone_tracking_the_agents_token_file_does_not_let_its_token_in(tmp_path: Path) -> None:
    # The attacker's wiki: an agent with a token they know, its hash file committed.
    theirs = repository(tmp_path / "theirs")
    token = TokenStore(Wiki(theirs).state_dir).add("mallory", "finance")
    git(theirs, "add", "-f", f"{STATE_DIR}/agents.json")
    git(theirs, "commit", "-qm", "agents")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(theirs), str(clone)], check=True, capture_output=True)
    assert (clone / STATE_DIR / "agents.json").is_file()  # (git clone checked it out)
    wiki = Wiki(clone)
    assert wiki.state_dir != clone / STATE_DIR
    assert accepted(wiki, token) is None
    assert TokenStore(locate_state(clone)).lookup(token) is None
    # the foreign folder is left as it came
    assert sorted(p.name for p in (clone / STATE_DIR).iterdir()) == ["agents.json"]
    # ...whereas on the machine that made it, the token is accepted
    assert accepted(Wiki(theirs), token) == "mallory"


def test_a_copied_in_state_folder_with_judge_settings_gets_no_judge(tmp_path: Path) -> None:
    wiki_root = repository(tmp_path / "wiki")
    (wiki_root / STATE_DIR).mkdir()
    (wiki_root / STATE_DIR / JUDGE_SETTINGS).write_text(
        json.dumps({"url": "http://attacker.example/v1", "model": "m"}), encoding="utf-8")
    assert judge_for(Wiki(wiki_root)) is None


def test_a_forged_or_linked_stamp_does_not_verify(tmp_path: Path) -> None:
    mine = repository(tmp_path / "mine")
    assert Wiki(mine).state_dir == mine / STATE_DIR
    wiki_root = repository(tmp_path / "wiki")
    (wiki_root / STATE_DIR).mkdir()
    (wiki_root / STATE_DIR / ORIGIN_NAME).write_text("curator-state-origin-1 00 " + "0" * 64 + "\n")
    assert Wiki(wiki_root).state_dir != wiki_root / STATE_DIR
    # a stamp (or the whole folder) linked to one of the user's own wikis' is not theirs either
    (wiki_root / STATE_DIR / ORIGIN_NAME).unlink()
    (wiki_root / STATE_DIR / ORIGIN_NAME).symlink_to(mine / STATE_DIR / ORIGIN_NAME)
    assert Wiki(wiki_root).state_dir != wiki_root / STATE_DIR
    shutil.rmtree(wiki_root / STATE_DIR)
    (wiki_root / STATE_DIR).symlink_to(mine / STATE_DIR)
    assert Wiki(wiki_root).state_dir != wiki_root / STATE_DIR


def test_a_state_folder_curator_made_is_used_across_processes_and_after_a_move(tmp_path: Path) -> None:
    root = repository(tmp_path / "wiki")
    token = TokenStore(Wiki(root).state_dir).add("hanna", "hr")
    assert (root / STATE_DIR / ORIGIN_NAME).is_file()
    secret = config_dir() / SECRET_NAME
    assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_bytes()) == 32
    # the stamp names no path of this machine
    assert str(tmp_path).encode() not in (root / STATE_DIR / ORIGIN_NAME).read_bytes()
    moved = tmp_path / "renamed"
    root.rename(moved)
    assert accepted(Wiki(moved), token) == "hanna"
    # another process (the stamp is checked against the secret on disk, nothing kept in memory)
    code = f"""
import asyncio, sys
from curator.engine.wiki import Wiki
from curator.engine.policy.tokens import TokenStore
from curator.mcp_server import AgentTokens
w = Wiki(sys.argv[1])
a = asyncio.run(AgentTokens(TokenStore(w.state_dir)).verify_token({token!r}))
print(w.state_dir, a.client_id if a else None)
"""
    done = subprocess.run([sys.executable, "-c", code, str(moved)], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout.split() == [str(moved / STATE_DIR), "hanna"], done.stderr
    assert done.stderr == ""


def test_a_stamp_made_with_another_secret_is_foreign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repository(tmp_path / "wiki")
    token = TokenStore(Wiki(root).state_dir).add("hanna", "hr")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))
    wiki = Wiki(root)
    assert wiki.state_dir != root / STATE_DIR and accepted(wiki, token) is None


def test_the_config_folder_is_platformdirs_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from platformdirs import user_config_path

    assert config_dir() == user_config_path("curator", appauthor=False)
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_dir() == user_config_path("curator", appauthor=False)


def test_curator_trust_adopts_a_foreign_state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repository(tmp_path / "wiki")
    token = TokenStore(Wiki(root).state_dir).add("hanna", "hr")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))
    assert accepted(Wiki(root), token) is None
    code, out, _ = cli("trust", str(root))
    assert code == 0 and f"adopted {root / STATE_DIR}" in out
    assert trust.is_trusted(root)
    assert accepted(Wiki(root), token) == "hanna"
    assert TokenStore(Wiki(root).state_dir).lookup(token) == Actor("agent", "hanna", "hr")


def test_the_warning_is_one_line_once_per_process_and_no_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = repository(tmp_path / "wiki")
    (root / STATE_DIR).mkdir()
    # a real command line: one line on stderr, however often the wiki's state is asked for
    done = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "search", "refunds"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0 and "Refunds" in done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"curator trust {root}" in lines[0] and str(root / STATE_DIR) in lines[0]
    # in one process, said once (another command on the same wiki says nothing more)
    with caplog.at_level("WARNING"):
        assert cli("--wiki", str(root), "index")[0] == 0
        assert cli("--wiki", str(root), "search", "refunds")[0] == 0
    said = [r.getMessage() for r in caplog.records if "curator trust" in r.getMessage()]
    assert len(said) == 1 and said[0] == lines[0]
    # nor do the processes it starts (the station's workers would each say it again)
    child = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "search", "refunds"],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 0 and child.stderr == ""


def test_an_unstamped_folder_of_a_trusted_wiki_is_adopted_silently(tmp_path: Path) -> None:
    # (made by a Curator from before the stamp, in a wiki the operator trusts already)
    root = repository(tmp_path / "wiki")
    TokenStore(root / STATE_DIR).add("hanna", "hr")
    assert Wiki(root).state_dir != root / STATE_DIR  # untrusted: foreign
    trust._save([*trust.trusted_roots(), str(root.resolve())])  # (trusted before this Curator)
    state_mod._warned.clear()
    code, _, err = cli("--wiki", str(root), "index")
    assert code == 0 and err == ""
    assert Wiki(root).state_dir == root / STATE_DIR and state_mod.is_ours(root / STATE_DIR)
