"""Homes: a folder with one wiki per agent and one shared wiki (docs/design.md §2, DuDuClaw layout)::

    <home>/agents/<agent-id>/wiki/    each agent's own wiki root
    <home>/shared/wiki/               the organisation's shared wiki root

A command run on an agent wiki inside a home finds the shared wiki itself; ``--shared DIR``
overrides that (and is the only way to name a shared wiki for a wiki outside a home).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from curator.engine.errors import CuratorError

AGENTS_DIR = "agents"
SHARED_DIR = "shared"
WIKI_DIR = "wiki"


@dataclass(slots=True, frozen=True)
class Home:
    root: Path

    @property
    def shared_wiki(self) -> Path:
        return self.root / SHARED_DIR / WIKI_DIR

    def agent_wiki(self, agent_id: str) -> Path:
        return self.root / AGENTS_DIR / agent_id / WIKI_DIR

    def agents(self) -> list[str]:
        """Ids of the agents that have a wiki folder, sorted."""
        base = self.root / AGENTS_DIR
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if (p / WIKI_DIR).is_dir())

    def wikis(self) -> list[tuple[str, Path]]:
        """Every wiki of the home as ``(label, root)``: ``shared`` first, then ``agent:<id>``."""
        found: list[tuple[str, Path]] = []
        if self.shared_wiki.is_dir():
            found.append(("shared", self.shared_wiki))
        found.extend((f"agent:{a}", self.agent_wiki(a)) for a in self.agents())
        return found


def is_home(path: Path | str) -> bool:
    """Whether ``path`` is laid out as a home (it has ``shared/wiki/`` or ``agents/*/wiki/``)."""
    p = Path(path)
    return (p / SHARED_DIR / WIKI_DIR).is_dir() or bool(Home(p).agents())


def agent_of(wiki_root: Path | str) -> str | None:
    """The agent id when ``wiki_root`` is ``<home>/agents/<id>/wiki``, else None."""
    p = Path(wiki_root).resolve()
    if p.name == WIKI_DIR and p.parent.parent.name == AGENTS_DIR:
        return p.parent.name
    return None


def home_of(wiki_root: Path | str) -> Home | None:
    """The home enclosing an agent wiki or the shared wiki, else None."""
    p = Path(wiki_root).resolve()
    if agent_of(p) is not None:
        return Home(p.parent.parent.parent)
    if p.name == WIKI_DIR and p.parent.name == SHARED_DIR:
        return Home(p.parent.parent)
    return None


def is_shared_wiki(wiki_root: Path | str) -> bool:
    home = home_of(wiki_root)
    return home is not None and home.shared_wiki.resolve() == Path(wiki_root).resolve()


def shared_wiki_for(wiki_root: Path | str, override: Path | str | None = None) -> Path:
    """The shared wiki for commands on ``wiki_root``: ``override`` (``--shared``), else the
    enclosing home's ``shared/wiki``. Raises a one-line error when there is none."""
    if override:
        target = Path(override).expanduser()
        if not target.is_dir():
            raise CuratorError(f"shared wiki {target} does not exist")
        return target.resolve()
    home = home_of(wiki_root)
    if home is None:
        raise CuratorError(f"{wiki_root} is not an agent wiki inside a home (agents/<id>/wiki); "
                           "name the shared wiki with --shared DIR")
    if not home.shared_wiki.is_dir():
        raise CuratorError(f"the home {home.root} has no shared wiki at shared/wiki; "
                           "create it with 'curator init' or pass --shared DIR")
    return home.shared_wiki.resolve()
