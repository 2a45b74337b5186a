"""Operators who sign with OpenPGP (gpg) rather than SSH (issue 45): the allow-list takes their
public keys, commits signed with those keys pass sync, commits signed by any other OpenPGP key
(whatever name its user id claims) are held, and Curator signs its own operator commits with the
user's gpg key (``curator operators sign --gpg KEYID``).

Two real clones and a bare remote (tests/sync_helpers.py); clone ``b`` commits with plain git.
Every key lives in a throwaway GNUPGHOME: the user's own keyring is never touched."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR
from curator.engine.repo.signing import OPENPGP, SigningKey, set_signing_key, signing_key
from curator.engine.sync.remote import decide_held, sync
from curator.engine.wiki import Wiki
from curator.engine.write.actions import run_action
from tests.sync_helpers import GIT_ID, PAGE, Net, git, make_net, read

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="needs GnuPG (gpg) installed")

SCOPE = '[namespaces.policies]\nmode = "operator_only"\n'
RELAXED = '[namespaces.policies]\nmode = "agent_writable"\n'
PAGES = {"wiki/ann-smith.md": PAGE, ".scope.toml": SCOPE,
         "policies/rules.md": "# Rules\n\n## Updates\n\n- Only the operator writes here\n"}


def _gpg(home: Path, *args: str) -> str:
    return subprocess.run(["gpg", "--batch", "--homedir", str(home), *args], check=True, capture_output=True,
                          text=True, timeout=120).stdout


def _new_key(home: Path, uid: str) -> str:
    """A new passphrase-less signing key in ``home``; its fingerprint."""
    _gpg(home, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
    listing = _gpg(home, "--with-colons", "--list-secret-keys", uid)
    return next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))


@pytest.fixture
def gnupg(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A throwaway GNUPGHOME (short: gpg-agent's socket lives in it) as the user's keyring."""
    home = Path(tempfile.mkdtemp(prefix="gpgt-"))
    home.chmod(0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    yield home
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def net(tmp_path: Path) -> Iterator[Net]:
    net = make_net(tmp_path, PAGES)
    yield net
    net.close()


def cli(wiki: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(wiki), *args],
                          capture_output=True, text=True, timeout=120)


def b_commits_signed(net: Net, text: str, fingerprint: str, author: str) -> None:
    root = net.tmp / "b"
    git(root, "pull", "-q", "--ff-only", "origin", "main")
    (root / ".scope.toml").write_text(text, encoding="utf-8")
    git(root, "add", ".scope.toml")
    subprocess.run(["git", *GIT_ID, "-c", f"user.name={author}", "-c", "gpg.format=openpgp",
                    "-c", f"user.signingkey={fingerprint}", "commit", "-S", "-qm", "b: policy"],
                   cwd=root, check=True, capture_output=True)
    git(root, "push", "-q", "origin", "main")


def test_an_openpgp_operator_on_the_list_may_change_the_policy_and_no_other_key_may(
        net: Net, gnupg: Path, tmp_path: Path) -> None:
    alice = _new_key(gnupg, "Alice <alice@example.invalid>")
    # Mallory's key claims Alice's name: the allow-list's fingerprint decides, not the user id.
    mallory = _new_key(gnupg, "Alice <alice@example.invalid> (not really)")
    public = tmp_path / "alice.asc"
    public.write_text(_gpg(gnupg, "--armor", "--export", alice), encoding="utf-8")

    added = cli(net.a.root, "operators", "add", "alice", str(public))
    assert added.returncode == 0, added.stdout + added.stderr
    listed = cli(net.a.root, "operators", "list")
    assert "alice" in listed.stdout and "openpgp" in listed.stdout
    assert alice in (net.a.root / ".curator-operators").read_text()
    assert "BEGIN PGP PUBLIC KEY BLOCK" in (net.a.root / ".curator-operators.asc").read_text()
    assert sync(net.a, OPERATOR).status == "pushed"

    b_commits_signed(net, RELAXED, mallory, "operator")
    held = sync(net.a, OPERATOR)
    assert held.status == "held" and "claims to be the operator" in held.message, held.message
    assert read(net.a, ".scope.toml") == SCOPE

    assert decide_held(net.a, OPERATOR, keep=False).status == "merged"
    b_commits_signed(net, RELAXED, alice, "operator")
    taken = sync(net.a, OPERATOR)
    assert taken.status in ("pulled", "merged"), taken.message
    assert read(net.a, ".scope.toml") == RELAXED


def test_curator_signs_operator_commits_with_the_users_gpg_key(net: Net, gnupg: Path, tmp_path: Path) -> None:
    ssh_key = signing_key()
    alice = _new_key(gnupg, "Alice <alice@example.invalid>")
    public = tmp_path / "alice.asc"
    public.write_text(_gpg(gnupg, "--armor", "--export", alice), encoding="utf-8")
    assert cli(net.a.root, "operators", "add", "alice", str(public)).returncode == 0
    assert sync(net.a, OPERATOR).status == "pushed"

    chosen = cli(net.a.root, "operators", "sign", "--gpg", "alice@example.invalid")
    try:
        assert chosen.returncode == 0, chosen.stdout + chosen.stderr
        assert signing_key() == SigningKey(OPENPGP, alice)
        git(net.tmp / "b", "pull", "-q", "--ff-only", "origin", "main")
        wb = Wiki(net.tmp / "b")
        try:
            def relax(ctx) -> None:  # type: ignore[no-untyped-def]
                ctx.write_text(".scope.toml", RELAXED)

            assert run_action(wb, OPERATOR, "edit", ".scope.toml", relax).commit
            assert git(wb.root, "log", "-1", "--format=%G?%x00%GP", "HEAD").split("\0")[1].strip() == alice
            assert sync(wb, OPERATOR).status == "pushed"
        finally:
            wb.close()
    finally:
        set_signing_key(ssh_key)
    taken = sync(net.a, OPERATOR)
    assert taken.status in ("pulled", "merged"), taken.message
    assert read(net.a, ".scope.toml") == RELAXED


def test_an_unusable_gpg_key_is_one_line_of_error(net: Net, gnupg: Path, tmp_path: Path) -> None:
    missing = cli(net.a.root, "operators", "sign", "--gpg", "nobody@example.invalid")
    assert missing.returncode == 1 and "no OpenPGP secret key" in missing.stdout
    alice = _new_key(gnupg, "Alice <alice@example.invalid>")
    secret = tmp_path / "alice-secret.asc"
    secret.write_text(_gpg(gnupg, "--armor", "--pinentry-mode", "loopback", "--passphrase", "",
                           "--export-secret-keys", alice), encoding="utf-8")
    refused = cli(net.a.root, "operators", "add", "alice", str(secret))
    assert refused.returncode != 0 and "private key" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    assert not (net.a.root / ".curator-operators.asc").exists()
