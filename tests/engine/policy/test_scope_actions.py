"""The scope policy is enforced by the action mechanism for every write (docs/design.md §5, §6)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, run_action
from curator.engine.write.append import append
from curator.engine.write.bootstrap import init_wiki
from tests.engine.policy.test_scope_policy import ACTORS, MATRIX, POLICY


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    root = tmp_path_factory.mktemp("acts")
    init_wiki(root)
    (root / ".scope.toml").write_text(POLICY, encoding="utf-8")
    for ns in MATRIX:
        (root / ns).mkdir()
        (root / ns / "existing.md").write_text("# Existing\n\n## Updates\n", encoding="utf-8")
        (root / ns / f"{ns}-notes.md").write_text(f"# {ns} notes\n\n## Updates\n", encoding="utf-8")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed"], cwd=root,
                   check=True)
    w = Wiki(root)
    yield w
    w.close()


@pytest.mark.parametrize("namespace", sorted(MATRIX))
@pytest.mark.parametrize("who", list(ACTORS))
def test_every_write_of_an_action_is_checked(wiki: Wiki, namespace: str, who: str) -> None:
    expected = MATRIX[namespace][list(ACTORS).index(who)]
    actor = ACTORS[who]
    slug = f"{who.replace(' ', '-')}"

    def create(ctx: ActionContext) -> None:
        ctx.write_text(f"{namespace}/{slug}.md", f"# {slug}\n")

    result = run_action(wiki, actor, "test_write", namespace, create)
    assert (result.status == "ok") is expected, result.message
    if not expected:
        assert result.status == "denied" and not (wiki.root / namespace / f"{slug}.md").exists()

    def move(ctx: ActionContext) -> None:  # both ends of a move are checked
        ctx.move(f"{namespace}/existing.md", f"open/{namespace}-{slug}.md")
        ctx.move(f"open/{namespace}-{slug}.md", f"{namespace}/existing.md")

    assert (run_action(wiki, actor, "test_move", namespace, move).status == "ok") is expected


@pytest.mark.parametrize("namespace", sorted(MATRIX))
def test_append_is_denied_where_the_agent_may_not_write(wiki: Wiki, namespace: str) -> None:
    agent = ACTORS["agent"]
    result = append(wiki, f"{namespace}-notes", f"A fact about {namespace} written by an agent", actor=agent)
    allowed = MATRIX[namespace][list(ACTORS).index("agent")]
    assert (result.status == "denied") is (not allowed), result.message
    text = (wiki.root / namespace / f"{namespace}-notes.md").read_text("utf-8")
    assert ("written by an agent" in text) is allowed


def test_hot_reload_between_two_actions(wiki: Wiki, tmp_path: Path) -> None:
    agent = ACTORS["agent"]
    scope = wiki.root / ".scope.toml"
    original = scope.read_text("utf-8")
    try:
        scope.write_text(original + '\n[namespaces."late"]\nmode = "operator_only"\n', encoding="utf-8")
        result = run_action(wiki, agent, "test_write", "late", lambda c: c.write_text("late/x.md", "# x\n"))
        assert result.status == "denied" and "operator_only" in result.message
        scope.write_text(original + "\n# late is open again\n", encoding="utf-8")
        result = run_action(wiki, agent, "test_write", "late", lambda c: c.write_text("late/x.md", "# x\n"))
        assert result.status == "ok"
    finally:
        scope.write_text(original, encoding="utf-8")
