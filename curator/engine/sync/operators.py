"""The wiki's operators and their signing keys (docs/design.md §5): ``curator operators``.

``.curator-operators`` at the wiki root is git's SSH allowed-signers file: one line per key,
``NAME namespaces="git" KEYTYPE KEY``; an OpenPGP key is a line ``NAME openpgp FINGERPRINT``
(left out of what ``ssh-keygen`` reads) with the key itself in ``.curator-operators.asc``. A commit signed by one of these keys may change what only
an operator may change when it reaches another clone by sync (:mod:`curator.engine.sync.incoming`);
the list itself is such a file, so a new key is taken by the other clones only from a commit
signed by a key already on the list (the first list comes with the clone: trust on first use).
Changing it here is an operator action and one commit, signed when this user signs
(:func:`curator.engine.repo.signing.set_signing_key`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curator.engine.errors import CuratorError
from curator.engine.policy.actor import Actor
from curator.engine.repo.signing import OPENPGP, OpenPGPKeyring, public_openpgp_key
from curator.engine.status import Status
from curator.engine.sync.incoming import OPENPGP_KEYS_FILE, OPERATORS_FILE
from curator.engine.write.actions import ActionContext, ActionResult, Invalid, run_action

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
              "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")


@dataclass(frozen=True, slots=True)
class Operator:
    name: str
    key_type: str
    key: str

    def line(self) -> str:
        if self.key_type == OPENPGP:
            return f"{self.name} {OPENPGP} {self.key}"
        return f'{self.name} namespaces="git" {self.key_type} {self.key}'


def read_operators(text: str) -> list[Operator]:
    out = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        keys = [i for i, w in enumerate(words) if w in _KEY_TYPES or w == OPENPGP]
        if keys and keys[0] + 1 < len(words):
            out.append(Operator(words[0], words[keys[0]], words[keys[0] + 1]))
    return out


def list_operators(wiki: Wiki) -> list[Operator]:
    try:
        return read_operators((wiki.root / OPERATORS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []


def public_key(keyfile: Path) -> tuple[str, str, bytes]:
    """(key type, key, OpenPGP key block) of a public key file: an SSH public key
    (``~/.ssh/id_ed25519.pub``; a private key file's ``.pub`` beside it is read instead), or an
    OpenPGP public key (``gpg --export --armor KEYID > me.asc``: type ``openpgp``, its
    fingerprint, the key block)."""
    path = keyfile if keyfile.suffix == ".pub" or not keyfile.with_name(keyfile.name + ".pub").exists() \
        else keyfile.with_name(keyfile.name + ".pub")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CuratorError(f"cannot read the public key {path}: {exc.strerror or exc}") from None
    openpgp = public_openpgp_key(data)
    if openpgp is not None:
        return OPENPGP, openpgp[0], openpgp[1]
    words = data.decode("utf-8", "replace").split()
    if len(words) < 2 or words[0] not in _KEY_TYPES:
        raise CuratorError(f"{path} is not a public key (expected an SSH key such as 'ssh-ed25519 AAAA...' "
                           "or an OpenPGP key from 'gpg --export --armor')")
    return words[0], words[1], b""


def _render(operators: list[Operator]) -> str:
    head = ("# The wiki's operators: commits signed by these keys may change what only an operator may\n"
            "# change when they arrive by sync (curator operators add|remove; git allowed-signers format)\n")
    return head + "".join(o.line() + "\n" for o in operators)


def add_operator(wiki: Wiki, actor: Actor, name: str, keyfile: Path) -> ActionResult:
    if not _NAME.fullmatch(name):
        return ActionResult(Status.INVALID, f"invalid operator name {name[:40]!r}: letters, digits, '.', '_', "
                            "'-', '@'", action="operators_add")
    kind, key, block = public_key(keyfile)

    def apply(ctx: ActionContext) -> None:
        current = [o for o in list_operators(ctx.wiki) if not (o.key_type == kind and o.key == key)]
        operators = [*current, Operator(name, kind, key)]
        ctx.write_text(OPERATORS_FILE, _render(operators))
        if kind == OPENPGP:
            _write_openpgp_keys(ctx, operators, block)
        ctx.message = f"{name} may sign operator commits ({kind} ...{key[-12:]})"

    return run_action(wiki, actor, "operators_add", name, apply)


def remove_operator(wiki: Wiki, actor: Actor, name: str) -> ActionResult:
    def apply(ctx: ActionContext) -> None:
        current = list_operators(ctx.wiki)
        kept = [o for o in current if o.name != name]
        if len(kept) == len(current):
            raise Invalid(message=f"no operator named {name!r} in {OPERATORS_FILE}")
        ctx.write_text(OPERATORS_FILE, _render(kept))
        if any(o.key_type == OPENPGP for o in current if o.name == name):
            _write_openpgp_keys(ctx, kept)
        ctx.message = f"{name}'s keys no longer sign operator commits"

    return run_action(wiki, actor, "operators_remove", name, apply)


def _write_openpgp_keys(ctx: ActionContext, operators: list[Operator], new: bytes = b"") -> None:
    """``.curator-operators.asc``: exactly the OpenPGP keys ``operators`` lists (with ``new``)."""
    wanted = [o.key for o in operators if o.key_type == OPENPGP]
    with OpenPGPKeyring() as ring:
        with contextlib.suppress(FileNotFoundError):
            ring.add((ctx.wiki.root / OPENPGP_KEYS_FILE).read_bytes())
        if new:
            ring.add(new)
        ctx.write_text(OPENPGP_KEYS_FILE, ring.export(wanted).decode("ascii"))
