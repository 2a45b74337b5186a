"""The wiki's operators and this user's signing key: ``operators add NAME KEYFILE | list |
remove NAME | sign KEYFILE`` (docs/design.md §5, guide: "Trust between machines")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.commands.write import finish

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("operators",)


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("operators", parents=[parent],
                       help="the operators whose signed commits other clones take, and your signing key")
    what = p.add_subparsers(dest="what", metavar="<add|list|remove|sign>", required=True)
    q = what.add_parser("add", parents=[parent], help="put an operator's public key (SSH or OpenPGP) on the wiki's list")
    q.add_argument("name")
    q.add_argument("keyfile", help="the public key file: SSH (e.g. ~/.ssh/id_ed25519.pub) or OpenPGP "
                   "(from 'gpg --export --armor KEYID > me.asc')")
    q = what.add_parser("list", parents=[parent], help="the operators on the wiki's list")
    q = what.add_parser("remove", parents=[parent], help="take an operator's keys off the list")
    q.add_argument("name")
    q = what.add_parser("sign", parents=[parent],
                        help="sign your operator commits with this key (kept in your user configuration)")
    q.add_argument("keyfile", nargs="?", help="the SSH private key file (e.g. ~/.ssh/id_ed25519); none: stop signing")
    q.add_argument("--gpg", metavar="KEYID", help="sign with this OpenPGP secret key of your gpg keyring instead")
    p.set_defaults(handler="curator.commands.operators:run_operators")


def run_operators(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import CuratorError
    from curator.engine.repo.signing import OPENPGP, SigningKey, gpg_secret_key, set_signing_key, signing_key
    from curator.engine.sync.operators import add_operator, list_operators, remove_operator

    if args.what == "sign":
        if not inv.actor.is_operator:
            inv.emit({"status": "denied"}, "denied: only the operator signs operator commits")
            return 1
        key: SigningKey | Path | None = Path(args.keyfile).expanduser() if args.keyfile else None
        if args.gpg and args.keyfile:
            inv.emit({"status": "invalid"}, "invalid: give an SSH key file or --gpg KEYID, not both")
            return 1
        if args.gpg:
            try:
                key = SigningKey(OPENPGP, gpg_secret_key(args.gpg))
            except CuratorError as exc:
                inv.emit({"status": "invalid"}, f"invalid: {exc}")
                return 1
        elif isinstance(key, Path) and not key.is_file():
            inv.emit({"status": "invalid"}, f"invalid: {key} is not a file")
            return 1
        set_signing_key(key)
        now = signing_key()
        inv.emit({"status": "ok", "key": now.key if now else None, "format": now.format if now else None},
                 f"operator commits are signed with {now}" if now else "operator commits are not signed")
        return 0
    if args.what == "list":
        ops = list_operators(inv.wiki)
        inv.emit([{"name": o.name, "type": o.key_type, "key": o.key} for o in ops],
                 "\n".join(f"{o.name}  {o.key_type} ...{o.key[-16:]}" for o in ops) or "no operator is listed")
        return 0
    result = (add_operator(inv.wiki, inv.actor, args.name, Path(args.keyfile).expanduser()) if args.what == "add"
              else remove_operator(inv.wiki, inv.actor, args.name))
    return finish(inv, result)
