"""The optional judge, against a fake OpenAI-compatible chat server on 127.0.0.1: the verdict is
attached to the top candidates and never applied (a dismissed conflict stays listed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.engine.corpus.facts import Fact
from curator.engine.errors import CuratorError, UsageError
from curator.engine.facts.conflicts import Conflict, find_conflicts
from curator.engine.facts.judge import (
    JUDGE_SETTINGS,
    ChatJudge,
    chat_url,
    judge_conflicts,
    load_judge,
    parse_verdict,
)
from tests.engine.facts.fake_chat import FakeChat, configure, serving


@pytest.fixture
def fake() -> Iterator[FakeChat]:
    with serving() as chat:
        yield chat


def conflicts() -> list[Conflict]:
    a = Fact("wiki/refunds.md", 3, "Refunds are accepted within 30 days of purchase.")
    b = Fact("wiki/policy.md", 5, "Refunds are accepted within 14 days of purchase.")
    c = Fact("wiki/build.md", 2, "Telemetry is enabled in the desktop build.")
    d = Fact("wiki/build.md", 8, "Telemetry is disabled in the desktop build.")
    return find_conflicts([(a, b, 0.95), (c, d, 0.9)])


def test_judge_verdicts_are_shown_never_applied(fake: FakeChat) -> None:
    found = conflicts()
    judge = ChatJudge(fake.url, "tiny-model", api_key="sk-test")
    judged = judge_conflicts(judge, found, top=2)
    assert [c.id for c in judged] == [c.id for c in found]  # none dropped, order kept
    assert judged[0].verdict == {"verdict": "confirm", "why": "a refund window cannot be both",
                                 "model": "tiny-model"}
    assert judged[1].verdict is not None and judged[1].verdict["verdict"] == "dismiss"
    assert judged[1].to_json()["judge"]["why"] == "different builds"
    assert found[1].verdict is None  # the candidates themselves are left as they were
    assert [r["path"] for r in fake.requests] == ["/v1/chat/completions"] * 2
    assert fake.requests[0]["auth"] == "Bearer sk-test"
    first = fake.requests[0]["body"]
    assert first["model"] == "tiny-model"
    assert "30 days vs 14 days" in first["messages"][-1]["content"]


def test_only_the_top_candidates_are_asked(fake: FakeChat) -> None:
    judged = judge_conflicts(ChatJudge(fake.url, "m"), conflicts(), top=1)
    assert len(fake.requests) == 1 and fake.requests[0]["auth"] is None
    assert judged[0].verdict is not None and judged[1].verdict is None
    assert "judge" not in judged[1].to_json()


def test_a_failing_or_missing_judge_is_one_clear_line(fake: FakeChat) -> None:
    fake.status = 500
    with pytest.raises(CuratorError) as err:
        ChatJudge(fake.url, "m").verdict(conflicts()[0])
    assert "answered HTTP 500" in str(err.value) and "\n" not in str(err.value)
    port = fake.server.server_address[1]
    fake.server.shutdown()
    fake.server.server_close()
    with pytest.raises(CuratorError) as err:
        ChatJudge(f"http://127.0.0.1:{port}", "m", timeout=5).verdict(conflicts()[0])
    assert str(err.value).startswith(f"cannot reach the judge at http://127.0.0.1:{port}/v1/chat/completions")
    with pytest.raises(CuratorError, match="invalid judge url"):
        ChatJudge("ftp://example.org", "m")


def test_answers_read_as_verdicts() -> None:
    assert parse_verdict('{"verdict": "Dismiss", "why": "two\\nlines"}', "m").to_json() == {
        "verdict": "dismiss", "why": "two lines", "model": "m"}
    assert parse_verdict("Confirm. The dates differ.", "m").verdict == "confirm"
    assert parse_verdict("I am not sure about this one.", "m").verdict == "unclear"
    assert chat_url("http://h:1/") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1/v1/chat/completions") == "http://h:1/v1/chat/completions"


def test_the_judge_is_configured_in_the_local_state(fake: FakeChat, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert load_judge(state) is None  # not configured: no judge, not an error
    configure(state, fake)
    judge = load_judge(state)
    assert judge is not None and (judge.url, judge.model) == (f"{fake.url}/chat/completions", "tiny-model")
    judge.verdict(conflicts()[0])
    assert fake.requests[-1]["auth"] == "Bearer sk-test"
    path = state / JUDGE_SETTINGS
    path.write_text(json.dumps({"url": fake.url, "model": "m"}), encoding="utf-8")
    keyless = load_judge(state)
    assert keyless is not None
    keyless.verdict(conflicts()[0])
    assert fake.requests[-1]["auth"] is None


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "not valid JSON"),
    ('["http://127.0.0.1:1"]', "expected an object"),
    ('{"url": "http://127.0.0.1:1"}', "'model' must be a non-empty string"),
    ('{"url": "http://127.0.0.1:1", "model": "m", "api_key": 7}', "'api_key' must be a non-empty string"),
    ('{"url": "http://127.0.0.1:1", "model": "m", "key": "x"}', "unknown setting 'key'"),
    ('{"url": "ftp://example.org", "model": "m"}', "invalid judge url"),
])
def test_a_bad_settings_file_is_one_line(tmp_path: Path, content: str, says: str) -> None:
    (tmp_path / JUDGE_SETTINGS).write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_judge(tmp_path)
    message = str(err.value)
    assert says in message and message.startswith(str(tmp_path / JUDGE_SETTINGS)) and "\n" not in message
