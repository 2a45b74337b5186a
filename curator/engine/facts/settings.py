"""The local settings files of facts by meaning (``facts-embedder.json``, ``facts-judge.json``): kept
in the wiki's local state, never committed (an endpoint's API key must not travel with the wiki)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curator.engine.errors import UsageError


def read_settings(path: Path, example: str) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when there is no such file; a one-line
    :class:`UsageError` naming the file when it is not a JSON object (``example`` shows one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not valid JSON ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected an object such as {example}")
    return data
