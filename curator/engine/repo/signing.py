"""The operator's commit signature (docs/design.md §5): Curator signs the commits an operator's
actions make with the operator's key, SSH or OpenPGP, as ``git commit -S`` with ``gpg.format``
``ssh`` or ``openpgp`` would, so that other clones take them (:mod:`curator.engine.sync.incoming`).

Which key signs is this user's choice, kept in the user's configuration folder (never in a
repository: a wiki cannot choose the key that signs for it): ``curator operators sign KEYFILE``
or ``curator operators sign --gpg KEYID``. Without one, operator commits are unsigned, and other
clones hold what only an operator may change until their operator accepts it.

The programs are named here, never taken from git's configuration (``gpg.program`` of a
downloaded wiki could name anything): ``ssh-keygen`` and ``gpg`` from the PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from curator.engine.errors import CuratorError

SIGNING_FILE = "signing.json"
SSH: Final = "ssh"
OPENPGP: Final = "openpgp"
#: The OpenPGP program Curator runs to sign and verify (git's default ``gpg.program``).
GPG = "gpg"


@dataclass(frozen=True, slots=True)
class SigningKey:
    """An operator's signing key: an SSH key file (``format`` ssh), or an OpenPGP key id or
    fingerprint of the user's own keyring (``format`` openpgp)."""

    format: Literal["ssh", "openpgp"]
    key: str

    def git_config(self) -> list[str]:
        """The configuration git's own signing (``commit -S``, ``commit-tree -S``) needs."""
        if self.format == SSH:
            return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={self.key}", "-c", "gpg.ssh.program=ssh-keygen"]
        return ["-c", "gpg.format=openpgp", "-c", f"user.signingkey={self.key}", "-c", f"gpg.program={GPG}"]

    def sign(self, payload: bytes) -> str:
        """The armored detached signature of ``payload``, as git makes it for a commit."""
        if self.format == SSH:
            cmd, marker = ["ssh-keygen", "-Y", "sign", "-n", "git", "-f", self.key], b"BEGIN SSH SIGNATURE"
        else:
            cmd, marker = [GPG, "--batch", "--status-fd=2", "-bsau", self.key], b"BEGIN PGP SIGNATURE"
        try:
            proc = subprocess.run(cmd, input=payload, capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CuratorError(f"cannot sign the commit with {self}: {exc}") from None
        if proc.returncode != 0 or marker not in proc.stdout:
            lines = [ln for ln in proc.stderr.decode("utf-8", "replace").strip().splitlines()
                     if not ln.startswith("[GNUPG:]")]
            raise CuratorError(f"cannot sign the commit with {self}: {(lines[-1:] or ['no signature'])[0]}")
        return proc.stdout.decode("ascii").strip()

    def __str__(self) -> str:
        return self.key if self.format == SSH else f"OpenPGP key {self.key}"

    def to_json(self) -> dict[str, str]:
        return {"format": self.format, "key": self.key}


def _settings_file() -> Path:
    from platformdirs import user_config_path

    return user_config_path("curator", appauthor=False) / SIGNING_FILE


def signing_key() -> SigningKey | None:
    """The key this user's operator commits are signed with, if one is set (an SSH key file must
    still be there: a private key file, or a public key whose private half ssh-agent holds)."""
    try:
        data = json.loads(_settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get("key") if isinstance(data, dict) else None
    if not isinstance(key, str) or not key:
        return None
    if data.get("format") == OPENPGP:
        return SigningKey(OPENPGP, key)
    return SigningKey(SSH, key) if os.path.isfile(key) else None


def set_signing_key(key: SigningKey | Path | None) -> None:
    """Sign this user's operator commits with ``key`` (a path: an SSH key file; None: stop)."""
    if isinstance(key, Path):
        key = SigningKey(SSH, str(key.resolve()))
    path = _settings_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(key.to_json() if key else {"key": None}) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CuratorError(f"cannot record the signing key in {path}: {exc.strerror or exc}") from None


def gpg_secret_key(key_id: str) -> str:
    """The fingerprint of the signing-capable secret key ``key_id`` names in the user's own
    keyring (one line of error when there is none, or more than one)."""
    try:
        proc = subprocess.run([GPG, "--batch", "--with-colons", "--list-secret-keys", "--", key_id],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CuratorError(f"cannot run {GPG}: {exc}") from None
    fingerprints = primary_fingerprints(proc.stdout.decode("utf-8", "replace"), "sec")
    if proc.returncode != 0 or not fingerprints:
        raise CuratorError(f"no OpenPGP secret key {key_id!r} in your keyring (gpg --list-secret-keys)")
    if len(fingerprints) > 1:
        raise CuratorError(f"{key_id!r} names {len(fingerprints)} secret keys; give the fingerprint")
    return fingerprints[0]


def primary_fingerprints(colons: str, kind: str = "pub") -> list[str]:
    """The primary keys' fingerprints of gpg's ``--with-colons`` listing (``kind``: pub or sec)."""
    out, want = [], False
    for line in colons.splitlines():
        fields = line.split(":")
        if fields[0] in ("pub", "sec", "sub", "ssb"):
            want = fields[0] == kind
        elif fields[0] == "fpr" and want and len(fields) > 9:
            out.append(fields[9].upper())
            want = False
    return out


class OpenPGPKeyring:
    """A throwaway OpenPGP keyring holding only the keys it is given (``with`` closes it): the
    allow-list's keys are checked in it, never in the user's own keyring, where any key the
    user ever imported would count. Every key in it is taken as valid (``trust-model always``):
    being on the allow-list is what trusts a key here, not the web of trust."""

    def __init__(self) -> None:
        import tempfile

        # Short and private: gpg puts its sockets here (a socket path has ~100 bytes at most).
        self.home = Path(tempfile.mkdtemp(prefix="curator-gpg-"))
        (self.home / "gpg.conf").write_text("trust-model always\nno-autostart\n", encoding="utf-8")

    def __enter__(self) -> OpenPGPKeyring:
        return self

    def __exit__(self, *exc: object) -> None:
        import shutil

        shutil.rmtree(self.home, ignore_errors=True)

    def _gpg(self, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run([GPG, "--batch", "--homedir", str(self.home), *args], input=data,
                                  capture_output=True, timeout=60, env={**os.environ, "GNUPGHOME": str(self.home)})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CuratorError(f"cannot run {GPG}: {exc}") from None

    def add(self, data: bytes) -> list[str]:
        """Import the public keys of ``data`` (armored or binary); their primary fingerprints."""
        self._gpg("--import", data=data)
        return self.fingerprints()

    def fingerprints(self) -> list[str]:
        return primary_fingerprints(self._gpg("--with-colons", "--list-keys").stdout.decode("utf-8", "replace"))

    def export(self, fingerprints: list[str]) -> bytes:
        """The armored public keys of ``fingerprints`` (nothing but the keys and their ids)."""
        if not fingerprints:
            return b""
        return self._gpg("--armor", "--export-options", "export-minimal", "--export", *fingerprints).stdout


def public_openpgp_key(data: bytes) -> tuple[str, bytes] | None:
    """(primary fingerprint, armored minimal key) of an OpenPGP public key file's one key; None
    when ``data`` is not an OpenPGP key (one line of error when it holds several)."""
    if b"BEGIN PGP PRIVATE KEY" in data:
        raise CuratorError("that is a private key: give the public key (gpg --export --armor KEYID)")
    if b"BEGIN PGP PUBLIC KEY BLOCK" not in data and not (data[:1] and data[0] & 0x80):
        return None
    with OpenPGPKeyring() as ring:
        found = ring.add(data)
        if not found:
            return None
        if len(found) > 1:
            raise CuratorError(f"the file holds {len(found)} OpenPGP keys; give one operator's key")
        return found[0], ring.export(found)
