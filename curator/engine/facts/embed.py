"""Embedders: text in, one L2-normalised float32 row per text out.

The default is :class:`WordLlamaEmbedder`: static word embeddings whose weights and tokenizer ship
inside the ``wordllama`` wheel, so it runs on a small CPU and never reaches the network (its own
lookup misses the bundled tokenizer and would try to download one: it is loaded from the package's
folder with downloads disabled). :class:`EndpointEmbedder` asks an OpenAI-compatible
``/v1/embeddings`` endpoint (llama.cpp, Ollama, vLLM) for a stronger model.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from curator.engine.errors import UsageError

#: Texts sent to an endpoint in one request (servers cap their batch size).
ENDPOINT_BATCH = 64
#: Texts pooled at a time by the local model (each batch padded to its longest text; the
#: embedder hands them over by length).
POOL_BATCH = 256


class Embedder(Protocol):
    """Turns texts into vectors comparable by dot product."""

    name: str  # names the model and its settings: vectors of different names are never mixed
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """One float32 row per text, each of unit length (a zero row for an empty text)."""
        ...


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` as float32, each of unit length (a zero row stays zero)."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: np.ndarray = rows / norms
    return out


#: The bundled model's files inside the ``wordllama`` package (wordllama 0.4's layout).
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")


class _StaticModel:
    """WordLlama's inference, read straight from the files its wheel ships: a text's tokens (the
    bundled tokenizer, no special tokens, never truncated) and the mean of their rows of the
    weights. What ``WordLlama.load(...).embed(texts, norm=False)`` answers, without importing
    ``wordllama``: its import (pydantic, requests, its configurations) and load took 0.45 s of a
    one-shot ``curator append``, these two files 0.09 s."""

    def __init__(self, weights: np.ndarray, tokenizer: Any) -> None:
        self.weights = weights  # (vocabulary, dim), float16 as shipped: every mean is summed in float32
        self.tokenizer = tokenizer
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def embed(self, texts: list[str], norm: bool = False) -> np.ndarray:
        """The unnormalised mean rows of ``texts`` (``norm`` is WordLlama's signature; unused)."""
        out = np.zeros((len(texts), self.weights.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), POOL_BATCH):
            encodings = self.tokenizer.encode_batch(texts[start:start + POOL_BATCH], add_special_tokens=False)
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
            width = int(lengths.max()) if len(lengths) else 0
            if not width:
                continue
            ids = np.zeros((len(encodings), width), dtype=np.int64)
            mask = np.arange(width)[None, :] < lengths[:, None]
            ids[mask] = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum()))
            np.clip(ids, 0, len(self.weights) - 1, out=ids)
            # (WordLlama's own pooling, padded batch and all: the same sums to the last bit)
            weights = mask.astype(np.float32)
            sums = np.sum(self.weights[ids] * weights[..., None], axis=1, dtype=np.float32)
            out[start:start + len(encodings)] = sums / np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
        return out


def _bundled_model(dim: int) -> _StaticModel | None:
    """The model from the ``wordllama`` package's own files (found, not imported), or None when
    they are not where this version of it keeps them."""
    import importlib.util

    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = folder.joinpath(*_WEIGHTS), folder.joinpath(*_TOKENIZER)
    if not (weights.is_file() and tokenizer.is_file()):
        return None
    from safetensors import safe_open
    from tokenizers import Tokenizer

    with safe_open(str(weights), framework="np") as f:
        matrix = f.get_tensor("embedding.weight")
    return _StaticModel(np.ascontiguousarray(matrix[:, :dim].astype(np.float16)), Tokenizer.from_file(str(tokenizer)))


def _wordllama_model(dim: int) -> Any:
    """The model as ``wordllama`` loads it (when its files are not where :func:`_bundled_model`
    looks): from the package's folder with downloads disabled."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import wordllama
    from wordllama import WordLlama

    # wordllama configures the root logger when imported (basicConfig at INFO): every library's
    # INFO lines would then reach the user's stderr (and the MCP server's first line, which a
    # client reads for its address). Not a library's to set.
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True,
                           dim=256, trunc_dim=dim if dim < 256 else None)
    # The weights ship in float16 and are widened to float32 on load (33 MB held for the life of
    # a station): kept in float16, every vector comes out the same (the pooling sums in float32).
    if getattr(model, "embedding", None) is not None and model.embedding.dtype == np.float32:
        model.embedding = model.embedding.astype(np.float16)
    return model


class WordLlamaEmbedder:
    """The local default: WordLlama's ``l2_supercat`` model, loaded once per process."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _models: ClassVar[dict[int, Any]] = {}

    #: The wheel holds the 256-dimension weights; fewer dimensions are their first ones (the model
    #: is trained so that a prefix still embeds).
    DIMS = (64, 128, 256)

    def __init__(self, dim: int = 256) -> None:
        if dim not in self.DIMS:
            raise UsageError(f"the local embedder has {', '.join(map(str, self.DIMS))} dimensions, not {dim}")
        self.dim = dim
        self.name = f"wordllama-l2_supercat-{dim}"
        #: The first coordinates alone still embed (the model is trained for it): the fact
        #: index's coarse pass scores these first on a big wiki.
        self.prefix_dims = 64

    def _model(self) -> Any:
        with self._lock:
            model = self._models.get(self.dim)
            if model is None:
                model = _bundled_model(self.dim) or _wordllama_model(self.dim)
                self._models[self.dim] = model
            return model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Each batch is padded to its longest text: batches of like lengths embedded a
        # real-shaped wiki's facts 3x faster than the texts in page order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows = self._model().embed([texts[i] for i in order], norm=False)
        out = np.empty_like(rows)
        out[order] = rows
        return unit_rows(out)


class EndpointEmbedder:
    """An OpenAI-compatible ``POST <url>/v1/embeddings`` (``url`` with or without ``/v1``)."""

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise UsageError(f"embedding endpoint {url!r} is not an http(s) URL")
        self.url = base + ("/embeddings" if base.endswith("/v1") else "/v1/embeddings")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"endpoint-{model}"
        self.dim = 0  # known after the first answer

    def _post(self, texts: list[str]) -> list[list[float]]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise UsageError(f"embedding endpoint {self.url} answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise UsageError(f"embedding endpoint {self.url} unreachable: {exc}") from None
        except ValueError:
            raise UsageError(f"embedding endpoint {self.url} did not answer JSON") from None
        try:
            # The API may answer out of order: each row says which input it embeds.
            rows = sorted(answer["data"], key=lambda row: row["index"])
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError):
            raise UsageError(f"embedding endpoint {self.url} answered without data[].embedding") from None
        if len(vectors) != len(texts):
            raise UsageError(f"embedding endpoint {self.url} answered {len(vectors)} vectors for {len(texts)} texts")
        return vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), ENDPOINT_BATCH):
            rows += self._post(texts[start:start + ENDPOINT_BATCH])
        out = unit_rows(np.array(rows, dtype=np.float32))
        self.dim = out.shape[1]
        return out


def embedder_from(settings: dict[str, Any] | None) -> Embedder:
    """The embedder ``settings`` choose: ``{"embedder": "endpoint", "url", "model", "api_key"?}``
    or nothing (the local default)."""
    settings = settings or {}
    kind = settings.get("embedder", "wordllama")
    if kind == "wordllama":
        return WordLlamaEmbedder(int(settings.get("dim", 256)))
    if kind == "endpoint":
        if not settings.get("url") or not settings.get("model"):
            raise UsageError("an endpoint embedder needs 'url' and 'model'")
        return EndpointEmbedder(str(settings["url"]), str(settings["model"]), settings.get("api_key"))
    raise UsageError(f"unknown embedder {kind!r} (wordllama or endpoint)")
