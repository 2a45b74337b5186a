"""Property edits: set one frontmatter field of a page, as one action and one commit.

The station's properties panel (and ``curator set``) use this. Only the edited key and ``updated``
change in the file; every other key, comment and the body stay byte for byte.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import LAYERS, parse_layer
from curator.engine.policy.actor import Actor
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, ActionResult, Invalid, run_action

EDITABLE: tuple[str, ...] = ("layer", "trust", "tags", "do_not_inject")
_TAG = re.compile(r"^[\w][\w/-]*$")


def validate(name: str, value: Any) -> Any:
    """The value to store for property ``name``, or :class:`Invalid` with a one-line reason."""
    if name == "layer":
        layer, problem = parse_layer(value)
        if problem or value is None:
            raise Invalid(message=f"layer must be one of {', '.join(LAYERS)}, not {value!r}")
        return layer
    if name == "trust":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise Invalid(message=f"trust must be a number between 0 and 1, not {value!r}") from None
        if isinstance(value, bool) or not math.isfinite(number) or not 0 <= number <= 1:
            raise Invalid(message=f"trust must be a number between 0 and 1, not {value!r}")
        return round(number, 4)
    if name == "tags":
        items = value.split(",") if isinstance(value, str) else list(value or [])
        tags: list[str] = []
        for item in items:
            tag = str(item).strip().lstrip("#")
            if not tag:
                continue
            if not _TAG.match(tag):
                raise Invalid(message=f"{item!r} is not a valid tag (letters, digits, '_', '-', '/')")
            if tag.casefold() not in {t.casefold() for t in tags}:
                tags.append(tag)
        return tags
    if name == "do_not_inject":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "yes", "1", "on"):
            return True
        if str(value).lower() in ("false", "no", "0", "off"):
            return False
        raise Invalid(message=f"do_not_inject must be true or false, not {value!r}")
    raise Invalid(message=f"{name!r} cannot be edited here (editable: {', '.join(EDITABLE)})")


def set_property(wiki: Wiki, actor: Actor, ref: str, name: str, value: Any) -> ActionResult:
    """Set ``name`` of page ``ref`` (path or slug) to ``value``: action ``set_<name>: <path>``."""
    try:
        path = wiki.find(ref, actor).path
        clean = validate(name, value)
    except Invalid as exc:
        return ActionResult(Status.INVALID, str(exc.message or exc), None, [], {})
    today = _dt.datetime.now(_dt.UTC).date()  # a date: YAML writes it unquoted, like the rest

    def apply(ctx: ActionContext) -> None:
        text, decoded = ctx.read_text(path)
        if text is None or decoded is None:
            raise Invalid(message=f"{path} no longer exists")
        changes: dict[str, Any] = {name: clean, "updated": today}
        ctx.write_text(path, frontmatter.update(text, changes), bom=decoded.bom)
        ctx.message = f"{name} of {path} set to {_show(clean)}"
        ctx.data = {"page": path, "property": name, "value": clean}

    return run_action(wiki, actor, f"set_{name}", path, apply)


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "(none)"
    return str(value).lower() if isinstance(value, bool) else str(value)
