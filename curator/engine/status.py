"""The answer of every action and write door: one status, decided here whether it is an error.

A :class:`Status` is a ``str`` (``Status.INVALID == "invalid"``), so JSON answers, the sync state
file and comparisons with plain strings keep working unchanged.

Two questions every door asks, answered only here:

* :attr:`Status.is_error`: the request failed (``locked``, ``denied``, ``invalid``, ``error``):
  exit status 1 on the command line, an error for the MCP client, nothing written
  (docs/design.md §4). Every other status is a successful answer, even when it wrote nothing
  (``duplicate``, ``candidates``, ``pending``, ...).
* :attr:`Status.refused`: nothing was written because a rule stopped it: an error, or an
  auto-filing gate (``blocked``: a secret/injection scan hit or the burst guard; ``over_quota``:
  the daily quota). Those two are answers, not failures, for an agent (the text says why), but
  the station shows them to the operator as a refusal.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    # every action
    OK = "ok"
    LOCKED = "locked"
    DENIED = "denied"
    INVALID = "invalid"
    ERROR = "error"
    UNCHANGED = "unchanged"
    # append and the review inbox
    APPENDED = "appended"
    DUPLICATE = "duplicate"
    CANDIDATES = "candidates"
    PENDING = "pending"
    REJECTED = "rejected"
    INGESTED = "ingested"
    # curation
    MERGED = "merged"
    MOVED = "moved"
    ARCHIVED = "archived"
    REPAIRED = "repaired"
    DISMISSED = "dismissed"
    CONFIRMED = "confirmed"
    REMOVED = "removed"
    SHARED = "shared"
    # editing
    SAVED = "saved"
    # link repair
    FIXED = "fixed"
    CREATED = "created"
    IGNORED = "ignored"
    # auto-filing
    FILED = "filed"
    REVIEW = "review"
    NOT_KNOWLEDGE = "not_knowledge"
    BLOCKED = "blocked"
    OVER_QUOTA = "over_quota"
    # history and recovery
    REVERTED = "reverted"
    REDONE = "redone"
    RECOVERED = "recovered"
    ROLLED_BACK = "rolled_back"
    # sync
    UP_TO_DATE = "up_to_date"
    PULLED = "pulled"
    PUSHED = "pushed"
    CONFLICT = "conflict"
    HELD = "held"  # incoming commits wait for an operator (curator sync --held)
    OFFLINE = "offline"
    RECORDED = "recorded"
    RESOLVED = "resolved"

    @property
    def is_error(self) -> bool:
        """The request failed (exit status 1, an MCP error); every other status is an answer."""
        return self in ERRORS

    @property
    def refused(self) -> bool:
        """Nothing was written because a rule stopped it (an error, or an auto-filing gate)."""
        return self in ERRORS or self in GATES


#: The statuses that are errors (docs/design.md §4: locked, denied, invalid; plus ``error``
#: for a failure of the engine itself).
ERRORS: frozenset[Status] = frozenset({Status.LOCKED, Status.DENIED, Status.INVALID, Status.ERROR})
#: Auto-filing gates: a successful answer that filed nothing because a rule said no.
GATES: frozenset[Status] = frozenset({Status.BLOCKED, Status.OVER_QUOTA})
