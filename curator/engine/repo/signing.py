"""The operator's commit signature (docs/design.md §5): Curator signs the commits an operator's
actions make with the operator's SSH key, as ``git commit -S`` with ``gpg.format=ssh`` would, so
that other clones take them (:mod:`curator.engine.sync.incoming`).

Which key signs is this user's choice, kept in the user's configuration folder (never in a
repository: a wiki cannot choose the key that signs for it): ``curator operators sign KEYFILE``.
Without one, operator commits are unsigned, and other clones hold what only an operator may
change until their operator accepts it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from curator.engine.errors import CuratorError

SIGNING_FILE = "signing.json"


def _settings_file() -> Path:
    from platformdirs import user_config_path

    return user_config_path("curator", appauthor=False) / SIGNING_FILE


def signing_key() -> Path | None:
    """The SSH key (private key file, or a public key whose private half ssh-agent holds) this
    user's operator commits are signed with, if one is set and still there."""
    try:
        data = json.loads(_settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get("key") if isinstance(data, dict) else None
    return Path(key) if isinstance(key, str) and os.path.isfile(key) else None


def set_signing_key(key: Path | None) -> None:
    """Sign this user's operator commits with ``key`` (None: stop signing)."""
    path = _settings_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": str(key.resolve()) if key else None}) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CuratorError(f"cannot record the signing key in {path}: {exc.strerror or exc}") from None
