"""The tracked decision files an operator's choices are kept in (``.curator-decisions.json``,
``.curator-ignored-links.json``): ``{"version": 1, "<list>": [...]}``, committed like pages, so a
fresh clone remembers them. One loader, so a missing file, an unreadable one and a damaged one
read the same way everywhere."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from curator.engine.errors import CuratorError

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki


def load_decision_file(wiki: Wiki, name: str, list_key: str) -> dict[str, Any]:
    """The decision file ``name`` at the wiki root, with its ``list_key`` list (empty when the
    file is absent). Unreadable or damaged: a one-line :class:`CuratorError` naming the file."""
    try:
        raw = (wiki.root / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"version": 1, list_key: []}
    except OSError as exc:
        raise CuratorError(f"cannot read {name}: {exc.strerror}") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get(list_key, []), list):
            raise ValueError(f"not a mapping with a {list_key} list")
    except ValueError as exc:
        raise CuratorError(f"{name} is damaged ({exc}); fix it or restore it with git") from None
    data.setdefault("version", 1)
    data.setdefault(list_key, [])
    return data
