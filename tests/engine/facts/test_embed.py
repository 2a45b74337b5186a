"""Embedders: the local default never touches the network; the endpoint speaks the OpenAI
embeddings API (tested against a fake server on loopback)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from curator.engine.errors import UsageError
from curator.engine.facts import embed
from curator.engine.facts.embed import EndpointEmbedder, WordLlamaEmbedder, embedder_from


def test_wordllama_loads_and_embeds_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the local embedder reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(WordLlamaEmbedder, "_models", {})  # a cold load, not one a test before made
    vectors = WordLlamaEmbedder().embed(["The server restarts at night.", "服务器每晚重启。"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


class _FakeEmbeddings(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []  # noqa: RUF012 (the test reads what the server was sent)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        # Vectors that are not unit length, answered in reverse order (the API allows it).
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _FakeEmbeddings.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_endpoint_embeds_in_order_normalised_batched_and_with_the_key(server: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "ENDPOINT_BATCH", 2)
    embedder = embedder_from({"embedder": "endpoint", "url": server + "/v1", "model": "nomic", "api_key": "k1"})
    vectors = embedder.embed(["a", "bbb", "cc"])
    assert vectors.shape == (3, 3) and embedder.dim == 3
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    assert np.allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True))
    assert [s["input"] for s in _FakeEmbeddings.seen] == [["a", "bbb"], ["cc"]]
    assert {s["path"] for s in _FakeEmbeddings.seen} == {"/v1/embeddings"}
    assert {s["auth"] for s in _FakeEmbeddings.seen} == {"Bearer k1"}


def test_endpoint_failures_are_one_line_errors(server: str) -> None:
    with pytest.raises(UsageError, match="answered HTTP 500"):
        EndpointEmbedder(server, "broken").embed(["x"])
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(UsageError, match="unreachable"):
        EndpointEmbedder(f"http://127.0.0.1:{closed}", "m", timeout=2).embed(["x"])
    with pytest.raises(UsageError, match="not an http"):
        EndpointEmbedder("ftp://host", "m")
    with pytest.raises(UsageError, match="needs 'url' and 'model'"):
        embedder_from({"embedder": "endpoint"})
    with pytest.raises(UsageError, match="unknown embedder"):
        embedder_from({"embedder": "bert"})


def test_wordllama_rows_follow_the_texts_order_whatever_their_lengths() -> None:
    texts = ["A much longer sentence about the nightly backups of the customer database.", "Short one.",
             "Medium length sentence here.", "x"]
    embedder = WordLlamaEmbedder()
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_wordllama_fewer_dimensions_from_the_bundled_weights() -> None:
    assert WordLlamaEmbedder(64).embed(["The server restarts at night."]).shape == (1, 64)
    with pytest.raises(UsageError, match="not 100"):
        embedder_from({"dim": 100})


def test_loading_the_local_model_leaves_the_processs_logging_alone() -> None:
    """wordllama configures the root logger when imported (INFO to stderr): after the local model
    loads, the process logs as it did before (no library's INFO line on a user's stderr, or before
    the MCP server's address line)."""
    import subprocess
    import sys

    code = ("import logging\n"
            "from curator.engine.facts.embed import WordLlamaEmbedder\n"
            "WordLlamaEmbedder().embed(['one fact'])\n"
            "logging.getLogger('anything').info('should not be shown')\n"
            "print(logging.getLogger().handlers, logging.getLogger().level)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] 30" and "should not be shown" not in proc.stderr, proc.stderr


TEXTS = ["The server restarts at night.", "服务器每晚重启。", "", "   ", "x",
         "A much longer sentence about the nightly backups of the customer database. " * 40,
         "Ünïcödé façade: 3 × 4 = 12 — ok?", "Max retries: 3", "[[Ann Lee]] leads payments since 2024-03-01."]


@pytest.mark.parametrize("dim", WordLlamaEmbedder.DIMS)
def test_the_bundled_model_read_directly_embeds_as_wordllama_does(dim: int) -> None:
    """The model is read from the files the wordllama wheel ships (its import and load took 0.45 s
    of a one-shot append): the same vectors as WordLlama's own inference, to the last bit."""
    ours = embed._bundled_model(dim)
    assert ours is not None
    theirs = embed._wordllama_model(dim)
    many = TEXTS + [f"Fact {i}: the depot ships {i * 7} crates." for i in range(300)]
    assert np.array_equal(ours.embed(many), theirs.embed(many, norm=False))


def test_the_local_model_loads_without_importing_wordllama() -> None:
    import subprocess
    import sys

    code = ("import sys\n"
            "from curator.engine.facts.embed import WordLlamaEmbedder\n"
            "WordLlamaEmbedder().embed(['one fact'])\n"
            "print('wordllama' in sys.modules, 'pydantic' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"], proc.stdout


def test_without_the_files_where_they_are_looked_for_wordllama_loads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "_WEIGHTS", ("weights", "no-such-file.safetensors"))
    monkeypatch.setattr(WordLlamaEmbedder, "_models", {})
    assert embed._bundled_model(256) is None
    vectors = WordLlamaEmbedder().embed(TEXTS)
    monkeypatch.setattr(WordLlamaEmbedder, "_models", {})
    monkeypatch.undo()
    assert np.allclose(vectors, WordLlamaEmbedder().embed(TEXTS), atol=1e-6)
