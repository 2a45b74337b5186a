"""What arrives by sync is checked against this clone's policy before it is merged (issue 45).

Two real clones and a bare remote; clone ``b`` plays a compromised machine and commits with plain
git. ``a``'s ``curator sync`` holds what b may not do (relax the policy, write an operator-only
namespace, delete a page, add a symbolic link, claim to be the operator), merges what it may (an
agent's appends), refuses a rewritten remote history, and takes a commit signed by a key on the
wiki's operator allow-list. The operator accepts or drops what is held."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.sync.remote import decide_held, held_changes, sync
from curator.engine.write.append import append
from tests.sync_helpers import AGENT, GIT_ID, PAGE, Net, git, make_net, read

SCOPE = '[namespaces.policies]\nmode = "operator_only"\n'
RELAXED = '[namespaces.policies]\nmode = "agent_writable"\n'
PAGES = {"wiki/ann-smith.md": PAGE, ".scope.toml": SCOPE,
         "policies/rules.md": "# Rules\n\n## Updates\n\n- Only the operator writes here\n"}


@pytest.fixture
def net(tmp_path: Path) -> Net:
    net = make_net(tmp_path, PAGES)
    yield net
    net.close()


def b_commits(net: Net, files: dict[str, str | None], *, author: str = "agent:mallory",
              sign_with: Path | None = None, symlink: tuple[str, str] | None = None) -> str:
    root = net.tmp / "b"
    for rel, text in files.items():
        if text is None:
            git(root, "rm", "-q", rel)
        else:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
            git(root, "add", rel)
    if symlink is not None:
        os.symlink(symlink[1], root / symlink[0])
        git(root, "add", symlink[0])
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={sign_with}", "commit", "-S"] if sign_with else ["commit"]
    subprocess.run(["git", *GIT_ID, "-c", f"user.name={author}", *sign, "-qm", f"b: {sorted(files)}"],
                   cwd=root, check=True, capture_output=True)
    git(root, "push", "-q", "origin", "main")
    return git(root, "rev-parse", "HEAD").strip()


def test_a_relaxed_policy_from_another_clone_is_held_then_dropped(net: Net) -> None:
    sha = b_commits(net, {".scope.toml": RELAXED})
    before = git(net.a.root, "rev-parse", "HEAD").strip()
    result = sync(net.a, OPERATOR)
    assert result.status == "held" and not result.is_error, result.message
    assert "changes .scope.toml" in result.message and sha[:12] in result.message
    assert read(net.a, ".scope.toml") == SCOPE and git(net.a.root, "rev-parse", "HEAD").strip() == before
    assert net.a.check_write(AGENT, "policies/rules.md").allowed is False  # still in force
    held = held_changes(net.a)
    assert held is not None and [c["sha"] for c in held["held"]] == [sha]
    # an agent cannot decide it
    assert decide_held(net.a, AGENT, keep=True).status == "denied"
    dropped = decide_held(net.a, OPERATOR, keep=False)
    assert dropped.status in ("merged", "pushed") or "merged" in dropped.message, dropped.message
    assert read(net.a, ".scope.toml") == SCOPE
    assert git(net.tmp / "remote.git", "show", "main:.scope.toml") == SCOPE  # the drop reached the remote
    assert held_changes(net.a) is None or not held_changes(net.a)["held"]


def test_accept_merges_what_was_held(net: Net) -> None:
    b_commits(net, {".scope.toml": RELAXED})
    assert sync(net.a, OPERATOR).status == "held"
    accepted = decide_held(net.a, OPERATOR, keep=True)
    assert not accepted.is_error and read(net.a, ".scope.toml") == RELAXED, accepted.message


@pytest.mark.parametrize(("files", "author", "why"), [
    ({"policies/rules.md": "# Rules\n\nAnyone may write here now\n"}, "agent:mallory", "writes policies/rules.md"),
    ({"wiki/ann-smith.md": None}, "agent:mallory", "deletes the page wiki/ann-smith.md"),
    ({"wiki/ann-smith.md": PAGE + "\nA line from the operator.\n"}, "operator", "claims to be the operator"),
    ({".curator-decisions.json": "{}\n"}, "agent:mallory", "changes .curator-decisions.json"),
    ({".gitattributes": "*.md merge=evil\n"}, "agent:mallory", "changes .gitattributes"),
])
def test_each_class_is_held(net: Net, files: dict[str, str | None], author: str, why: str) -> None:
    b_commits(net, files, author=author)
    result = sync(net.a, OPERATOR)
    assert result.status == "held" and why in result.message, result.message
    assert read(net.a, "policies/rules.md") == PAGES["policies/rules.md"]
    assert (net.a.root / "wiki/ann-smith.md").exists()


def test_a_symbolic_link_from_another_clone_is_held(net: Net) -> None:
    b_commits(net, {}, symlink=("wiki/pol", "../policies"))
    result = sync(net.a, OPERATOR)
    assert result.status == "held" and "symbolic link wiki/pol" in result.message, result.message
    assert not os.path.lexists(net.a.root / "wiki/pol")


def test_an_agents_appends_from_another_clone_merge_unsigned(net: Net) -> None:
    from curator.engine.wiki import Wiki

    wb = Wiki(net.tmp / "b")
    try:
        assert append(wb, "ann-smith", "Ann speaks Polish", actor=AGENT).status == "appended"
        assert sync(wb, AGENT).status == "pushed"
    finally:
        wb.close()
    result = sync(net.a, OPERATOR)
    assert result.status in ("pulled", "merged"), result.message
    assert "Ann speaks Polish" in read(net.a)


def test_a_rewritten_remote_history_is_refused(net: Net) -> None:
    b_commits(net, {"wiki/notes.md": "# Notes\n"})
    assert sync(net.a, OPERATOR).status in ("pulled", "merged")
    root = net.tmp / "b"
    git(root, "reset", "-q", "--hard", "HEAD~1")
    (root / "wiki/other.md").write_text("# Other\n")
    git(root, "add", "wiki/other.md")
    git(root, "commit", "-qm", "rewritten")
    git(root, "push", "-q", "--force", "origin", "main")
    result = sync(net.a, OPERATOR)
    assert result.is_error and "rewritten" in result.message, result.message
    assert (net.a.root / "wiki/notes.md").exists() and not (net.a.root / "wiki/other.md").exists()


def test_a_commit_signed_by_an_allow_listed_operator_passes(net: Net, tmp_path: Path) -> None:
    key = tmp_path / "alice"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True)
    public = key.with_suffix(".pub").read_text().split()
    allowed = f"alice namespaces=\"git\" {public[0]} {public[1]}\n"
    # the allow-list is on a's side before the merge (it came through a's own history)
    (net.a.root / ".curator-operators").write_text(allowed)
    git(net.a.root, "add", ".curator-operators")
    git(net.a.root, "commit", "-qm", "operators")
    assert sync(net.a, OPERATOR).status == "pushed"
    git(net.tmp / "b", "pull", "-q", "--ff-only", "origin", "main")
    b_commits(net, {".scope.toml": RELAXED}, author="operator", sign_with=key)
    result = sync(net.a, OPERATOR)
    assert result.status in ("pulled", "merged"), result.message
    assert read(net.a, ".scope.toml") == RELAXED
    # the same change signed by a key not on the list is held
    other = tmp_path / "eve"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "eve", "-f", str(other)], check=True)
    b_commits(net, {".scope.toml": SCOPE + "# eve\n"}, author="operator", sign_with=other)
    assert sync(net.a, OPERATOR).status == "held"


def test_the_cli_lists_held_commits(net: Net) -> None:
    b_commits(net, {".scope.toml": RELAXED})
    sync(net.a, OPERATOR)
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(net.a.root), "sync", "--held"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "changes .scope.toml" in proc.stdout and "--accept" in proc.stdout, proc.stdout


def test_curators_own_operator_commits_are_signed_and_taken(net: Net) -> None:
    """b's operator changes the policy in b's station (an action): signed with the operator's key
    (``curator operators sign``, set for the tests in tests/conftest.py), so a takes it; the same
    change unsigned is held."""
    from curator.engine.repo.signing import set_signing_key, signing_key
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import run_action

    key = signing_key()
    assert key is not None
    git(net.tmp / "b", "pull", "-q", "--ff-only", "origin", "main")
    wb = Wiki(net.tmp / "b")
    try:
        def relax(ctx) -> None:  # type: ignore[no-untyped-def]
            ctx.write_text(".scope.toml", RELAXED)

        assert run_action(wb, OPERATOR, "edit", ".scope.toml", relax).commit
        assert sync(wb, OPERATOR).status == "pushed"
        assert sync(net.a, OPERATOR).status in ("pulled", "merged")
        assert read(net.a, ".scope.toml") == RELAXED
        set_signing_key(None)
        try:
            def tighten(ctx) -> None:  # type: ignore[no-untyped-def]
                ctx.write_text(".scope.toml", SCOPE)

            assert run_action(wb, OPERATOR, "edit", ".scope.toml", tighten).commit
            assert sync(wb, OPERATOR).status == "pushed"
        finally:
            set_signing_key(key)
        held = sync(net.a, OPERATOR)
        assert held.status == "held" and "claims to be the operator" in held.message, held.message
    finally:
        wb.close()


def test_the_operators_list_is_kept_with_the_cli(net: Net, tmp_path: Path) -> None:
    key = tmp_path / "bob"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bob", "-f", str(key)], check=True)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(net.a.root), *args],
                              capture_output=True, text=True, timeout=60)

    assert cli("operators", "add", "bob", str(key) + ".pub").returncode == 0
    def names() -> list[str]:  # (a key's text may hold "bob" by chance: compare the names)
        return [line.split()[0] for line in cli("operators", "list").stdout.splitlines() if line.strip()]

    assert "bob" in names()
    refused = cli("--as", "agent:eve", "operators", "add", "eve", str(key) + ".pub")
    assert refused.returncode == 1 and "only the operator" in refused.stdout + refused.stderr
    assert cli("operators", "remove", "bob").returncode == 0
    assert "bob" not in names()
