"""A fake OpenAI-compatible chat endpoint on 127.0.0.1 for the judge's tests (engine, CLI and
station): it confirms a conflict over durations, dismisses any other, and keeps every request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from curator.engine.facts.judge import JUDGE_SETTINGS


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


@contextmanager
def serving() -> Iterator[FakeChat]:
    chat = FakeChat()
    thread = threading.Thread(target=chat.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        chat.server.shutdown()
        chat.server.server_close()
        thread.join(5)


def configure(state_dir: Path, chat: FakeChat, model: str = "tiny-model") -> Path:
    """Point the wiki whose local state is ``state_dir`` at ``chat``; the settings file."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / JUDGE_SETTINGS
    path.write_text(json.dumps({"url": chat.url, "model": model, "api_key": "sk-test"}), encoding="utf-8")
    return path
