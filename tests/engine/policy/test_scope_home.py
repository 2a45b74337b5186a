"""Homes (docs/design.md §2): agents/<id>/wiki and shared/wiki; finding the shared wiki; --shared."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.corpus.home import Home, agent_of, home_of, is_home, is_shared_wiki, shared_wiki_for
from curator.engine.errors import CuratorError


@pytest.fixture
def home(tmp_path: Path) -> Path:
    for d in ("agents/dudu/wiki", "agents/kiki/wiki", "agents/empty", "shared/wiki"):
        (tmp_path / d).mkdir(parents=True)
    return tmp_path


def test_layout(home: Path) -> None:
    h = Home(home)
    assert h.agents() == ["dudu", "kiki"]
    assert [label for label, _ in h.wikis()] == ["shared", "agent:dudu", "agent:kiki"]
    assert is_home(home) and not is_home(home / "agents")


def test_agent_wiki_finds_its_home_and_shared_wiki(home: Path) -> None:
    agent_wiki = home / "agents" / "dudu" / "wiki"
    assert agent_of(agent_wiki) == "dudu"
    assert home_of(agent_wiki) == Home(home.resolve())
    assert shared_wiki_for(agent_wiki) == (home / "shared" / "wiki").resolve()
    assert is_shared_wiki(home / "shared" / "wiki") and not is_shared_wiki(agent_wiki)
    assert agent_of(home / "shared" / "wiki") is None


def test_shared_override(home: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("elsewhere")
    assert shared_wiki_for(home / "agents" / "dudu" / "wiki", other) == other.resolve()
    with pytest.raises(CuratorError, match="does not exist"):
        shared_wiki_for(home / "agents" / "dudu" / "wiki", other / "missing")


def test_outside_a_home_needs_shared(tmp_path: Path) -> None:
    assert home_of(tmp_path) is None
    with pytest.raises(CuratorError, match="--shared"):
        shared_wiki_for(tmp_path)


def test_home_without_shared_wiki(tmp_path: Path) -> None:
    (tmp_path / "agents" / "dudu" / "wiki").mkdir(parents=True)
    with pytest.raises(CuratorError, match="no shared wiki"):
        shared_wiki_for(tmp_path / "agents" / "dudu" / "wiki")
