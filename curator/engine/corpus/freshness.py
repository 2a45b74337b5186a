"""How long a page or a fact stays true (docs/design.md §15): durations and page dates.

Text and values in, answers out: the scope policy parses its ``[freshness]`` durations here, the
stale queue (:mod:`curator.engine.facts.stale`) and the agents' context injection
(:mod:`curator.engine.read.agent_context`) read a page's ``valid_until:`` and ``verified:`` here,
so all three agree on when a page has expired.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

_DURATION = re.compile(r"^\s*(\d{1,5})\s*([dwmy])\s*$", re.IGNORECASE)
#: Days per unit: a month is 30 days and a year 365 (a freshness rule is a rough horizon, not a calendar).
UNIT_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}
#: Values of a freshness rule that switch it off.
NEVER = ("never", "off")


def parse_duration(value: object) -> int | None:
    """Days of a duration like ``"30d"``, ``"12w"``, ``"6m"``, ``"1y"``; None for ``"never"``.

    Raises :class:`ValueError` with a message fit for a warning for anything else."""
    if isinstance(value, str) and value.strip().lower() in NEVER:
        return None
    m = _DURATION.match(value) if isinstance(value, str) else None
    if m is None or int(m.group(1)) == 0:
        raise ValueError(f"{value!r} is not a duration (use a number and d, w, m or y: \"30d\", "
                         "\"12w\", \"6m\", \"1y\"; or \"never\")")
    return int(m.group(1)) * UNIT_DAYS[m.group(2).lower()]


def as_date(value: Any) -> _dt.date | None:
    """A frontmatter value as a date (YAML dates, ``YYYY-MM-DD`` strings), else None."""
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def expired_on(meta: Mapping[str, Any], today: _dt.date) -> _dt.date | None:
    """The page's ``valid_until`` when it has passed (``today`` is after it) and no ``verified:``
    date on or after it says an operator checked the page since; else None."""
    until = as_date(meta.get("valid_until"))
    if until is None or today <= until:
        return None
    verified = as_date(meta.get("verified"))
    if verified is not None and verified >= until:
        return None
    return until
