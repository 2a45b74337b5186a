"""Who is acting: the operator, an agent (with an optional department) or a capability (docs/design.md §6)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from curator.engine.errors import UsageError

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
#: A department: letters (any script), digits, spaces, ``.``, ``_``, ``-``; no line breaks or
#: control characters (a name is printed in decisions and commit trailers: a newline in it forged
#: a ``Reviewed-by: operator`` line).
_DEPARTMENT = re.compile(r"[^\W_][\w .-]{0,63}")


@dataclass(slots=True, frozen=True)
class Actor:
    """Who acts: the operator, an agent or a capability."""

    kind: str  # "operator" | "agent" | "capability"
    id: str = ""
    department: str | None = None

    @property
    def is_operator(self) -> bool:
        return self.kind == "operator"

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    def __str__(self) -> str:
        return "operator" if self.is_operator else f"{self.kind}:{self.id}"

    @property
    def git_author(self) -> tuple[str, str]:
        """(name, email) for commits: ``agent:dudu <dudu@agents.invalid>``."""
        if self.is_operator:
            return "operator", "operator@curator.invalid"
        domain = "agents.invalid" if self.is_agent else "capabilities.invalid"
        return str(self), f"{self.id}@{domain}"


OPERATOR = Actor("operator")


def parse_actor(text: str | None, department: str | None = None) -> Actor:
    """Parse ``operator``, ``agent:<id>`` or ``capability:<name>``; raise a one-line usage error."""
    text = (text or "operator").strip()
    dept = department.strip() if department and department.strip() else None
    if dept is not None and not _DEPARTMENT.fullmatch(dept):
        raise UsageError(f"invalid department {dept[:40]!r}: use letters, digits, spaces, '.', '_' and '-' "
                         "(at most 64, no line breaks or control characters)")
    if text == "operator":
        return Actor("operator", department=dept)
    kind, sep, ident = text.partition(":")
    if sep and kind in ("agent", "capability") and _ID.fullmatch(ident):
        return Actor(kind, ident, dept)
    raise UsageError(
        f"invalid actor {text!r}: use 'operator', 'agent:<id>' or 'capability:<name>' "
        "(ids: letters, digits, '.', '_', '-', '@')"
    )
