"""The optional judge, against a fake OpenAI-compatible chat server on 127.0.0.1: the verdict is
attached to the top candidates and never applied (a dismissed conflict stays listed)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from curator.engine.corpus.facts import Fact
from curator.engine.errors import CuratorError
from curator.engine.facts.conflicts import Conflict, find_conflicts
from curator.engine.facts.judge import ChatJudge, chat_url, judge_conflicts, parse_verdict


class FakeChat:
    """A chat endpoint that confirms a conflict over durations and dismisses any other, and keeps
    every request it got."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                       "body": body})
                prompt = body["messages"][-1]["content"]
                verdict = ("confirm", "a refund window cannot be both") if "days" in prompt else (
                    "dismiss", "different builds")
                content = "```json\n" + json.dumps({"verdict": verdict[0], "why": verdict[1]}) + "\n```"
                data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def fake() -> Iterator[FakeChat]:
    chat = FakeChat()
    thread = threading.Thread(target=chat.server.serve_forever, daemon=True)
    thread.start()
    yield chat
    chat.server.shutdown()
    chat.server.server_close()
    thread.join(5)


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
