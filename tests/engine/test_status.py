"""Action statuses: one enum, and "is this an error" decided in one place (curator.engine.status)."""

from __future__ import annotations

import json

from curator.engine.filing.autofile import FileDocResult
from curator.engine.status import ERRORS, Status
from curator.engine.write.actions import ActionResult


def test_only_locked_denied_invalid_and_error_are_errors() -> None:
    assert {s.value for s in Status if s.is_error} == {"locked", "denied", "invalid", "error"}
    assert {s for s in Status if s.is_error} == ERRORS
    for answer in ("duplicate", "candidates", "pending", "rejected", "blocked", "over_quota", "offline"):
        assert not Status(answer).is_error, answer


def test_auto_filing_gates_are_refusals_but_not_errors() -> None:
    assert {s.value for s in Status if s.refused and not s.is_error} == {"blocked", "over_quota"}
    assert all(s.refused for s in ERRORS)
    assert not Status.FILED.refused and not Status.DUPLICATE.refused


def test_results_agree_with_the_enum_and_answer_plain_strings() -> None:
    for status in Status:
        res = ActionResult(status, "m")
        doc = FileDocResult(status, None, 0, "sop", "m")
        assert res.is_error is status.is_error is doc.is_error
        assert res.ok is not status.is_error
        out = json.loads(json.dumps(res.to_json()))
        assert out["status"] == status.value and type(res.to_json()["status"]) is str
        assert type(doc.to_json()["status"]) is str
    assert Status.INVALID == "invalid"  # a str: comparisons with plain strings keep working
