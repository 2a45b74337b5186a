"""Helpers for the sync tests: a bare repository on this machine and clones of it (no network)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.sync.remote import sync
from curator.engine.wiki import Wiki
from curator.engine.write.bootstrap import init_wiki

GIT_ID = ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]

PAGE = """---
title: Ann Smith
layer: core
trust: 0.5
tags: [people]
created: 2024-01-01
updated: 2024-01-01
---
# Ann Smith

Ann runs the payments team in Oslo.

## Updates

- Ann joined in 2019 (added 2024-01-01)

## Notes

Nothing else yet.
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


@dataclass
class Net:
    """A bare ``remote.git`` and clones ``a`` and ``b`` whose wikis are open."""

    tmp: Path
    remote: Path
    wikis: dict[str, Wiki] = field(default_factory=dict)

    @property
    def a(self) -> Wiki:
        return self.wikis["a"]

    @property
    def b(self) -> Wiki:
        return self.wikis["b"]

    def clone(self, name: str) -> Wiki:
        git(self.tmp, "clone", "-q", str(self.remote), name)
        wiki = Wiki(self.tmp / name)
        self.wikis[name] = wiki
        return wiki

    def close(self) -> None:
        for wiki in self.wikis.values():
            wiki.close()


def signed(*args: str) -> list[str]:
    """``git`` arguments that make a ``commit`` signed with the tests' operator key (as an operator
    committing with plain git and ``commit.gpgsign`` would)."""
    from curator.engine.repo.signing import signing_key

    key = signing_key()
    assert key is not None, "the tests' operator key (tests/conftest.py) is missing"
    return [*key.git_config(), *args, "-S"]


def operator_allow_list() -> str:
    """The operator allow-list line of the tests' signing key (tests/conftest.py), or ""."""
    from curator.engine.repo.signing import signing_key

    key = signing_key()
    public = Path(key.key + ".pub") if key is not None else None
    if public is None or not public.exists():
        return ""
    kind, blob = public.read_text().split()[:2]
    return f'operator namespaces="git" {kind} {blob}\n'


def make_net(tmp: Path, pages: dict[str, str] | None = None, clones: tuple[str, ...] = ("b",)) -> Net:
    """``a`` is made with ``curator init`` and pushed; the other clones are ``git clone``s of it."""
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    root = tmp / "a"
    init_wiki(root)
    allowed = operator_allow_list()
    if allowed and ".curator-operators" not in (pages or {}):
        (root / ".curator-operators").write_text(allowed, encoding="utf-8")
    for rel, text in (pages if pages is not None else {"wiki/ann-smith.md": PAGE}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "--", ".")
    git(root, "commit", "-q", "-m", "pages")
    git(root, "remote", "add", "origin", str(remote))
    net = Net(tmp, remote, {"a": Wiki(root)})
    first = sync(net.a, OPERATOR)
    assert first.status == "pushed", first.message
    for name in clones:
        net.clone(name)
    return net


def read(wiki: Wiki, rel: str = "wiki/ann-smith.md") -> str:
    return (wiki.root / rel).read_text(encoding="utf-8")


def bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def head(wiki: Wiki) -> str:
    return git(wiki.root, "rev-parse", "HEAD").strip()


def parents(wiki: Wiki, rev: str = "HEAD") -> list[str]:
    return git(wiki.root, "rev-list", "--parents", "-n1", rev).split()[1:]


def log_subjects(wiki: Wiki, rng: str) -> Iterator[str]:
    yield from git(wiki.root, "log", "--format=%s", rng).splitlines()


AGENT = Actor("agent", "dudu")
