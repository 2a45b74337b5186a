"""Per-agent tokens for the HTTP door: only a hash is kept, a token names one agent, revoking is immediate."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from curator.engine.errors import CuratorError, UsageError
from curator.engine.policy.actor import Actor
from curator.engine.policy.tokens import TokenStore


def test_a_token_names_its_agent_and_department_and_only_its_hash_is_kept(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    hr = store.add("hanna", "hr")
    ops = store.add("olli")
    assert len(hr) >= 43 and hr != ops
    assert store.lookup(hr) == Actor("agent", "hanna", "hr")
    assert store.lookup(ops) == Actor("agent", "olli", None)
    saved = store.path.read_text("utf-8")
    assert hr not in saved and ops not in saved
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    # another process's view of the same file (the server's store, say) agrees
    assert TokenStore(tmp_path).lookup(hr) == Actor("agent", "hanna", "hr")
    assert [(a.id, a.department) for a in store.agents()] == [("hanna", "hr"), ("olli", None)]


@pytest.mark.parametrize("guess", ["", "x", "hanna", "Bearer x"])
def test_anything_but_a_registered_token_names_nobody(tmp_path: Path, guess: str) -> None:
    store = TokenStore(tmp_path)
    token = store.add("hanna", "hr")
    assert store.lookup(guess) is None
    assert store.lookup(token[:-1]) is None
    assert TokenStore(tmp_path / "none").lookup(token) is None


def test_revoking_takes_effect_for_a_store_already_open_elsewhere(tmp_path: Path) -> None:
    server_side = TokenStore(tmp_path)
    token = TokenStore(tmp_path).add("hanna")
    assert server_side.lookup(token) == Actor("agent", "hanna")
    TokenStore(tmp_path).revoke("hanna")
    assert server_side.lookup(token) is None
    again = TokenStore(tmp_path).add("hanna")  # a new token after a revocation; the old stays dead
    assert server_side.lookup(token) is None and server_side.lookup(again) == Actor("agent", "hanna")


def test_bad_requests_are_one_line_errors(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.add("hanna")
    with pytest.raises(UsageError, match="already has a token"):
        store.add("hanna")
    with pytest.raises(UsageError, match="no agent 'nobody'"):
        store.revoke("nobody")
    with pytest.raises(UsageError, match="invalid actor"):
        store.add("bad id\n")
    with pytest.raises(UsageError, match="invalid department"):
        store.add("bob", "hr\nReviewed-by: operator")


def test_an_unreadable_store_lets_nobody_in(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    token = store.add("hanna")
    store.path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CuratorError, match="cannot be read"):
        store.lookup(token)
