"""The optional judge of conflicts: an OpenAI-compatible chat endpoint the operator configures.

It is configured once per machine, in :data:`JUDGE_SETTINGS` in the wiki's local state (untracked,
so an API key never reaches the wiki's history): ``{"url": ..., "model": ..., "api_key": ...}``.
It is asked about the top candidates only and answers ``confirm`` or ``dismiss`` with a one-line
why. The verdict is shown next to the conflict and never applied: a dismissed conflict stays in
the list until the operator resolves it (:func:`~curator.engine.facts.decisions.resolve`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curator.engine.errors import CuratorError, UsageError
from curator.engine.facts.conflicts import Conflict
from curator.engine.facts.settings import read_settings

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

VERDICTS = ("confirm", "dismiss")
#: How many of the best candidates are sent to the judge unless told otherwise.
DEFAULT_TOP = 10
#: The judge's settings, in the wiki's local state (next to the embedder's ``facts-embedder.json``).
JUDGE_SETTINGS = "facts-judge.json"
_SETTING_KEYS = ("url", "model", "api_key")
_WHY_CHARS = 200
_PROMPT = (
    "Two statements were taken from the same knowledge base. A detector thinks they contradict "
    "each other ({reason}).\n\nStatement 1 ({path1}): {text1}\nStatement 2 ({path2}): {text2}\n\n"
    "Can both be true at the same time? Answer \"confirm\" if they really contradict each other, "
    "\"dismiss\" if both can be true (different subjects, different times, one refines the other). "
    "Reply with JSON only: {{\"verdict\": \"confirm\" or \"dismiss\", \"why\": \"one short sentence\"}}"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    verdict: str  # "confirm", "dismiss", or "unclear" when the answer said neither
    why: str
    model: str

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "why": self.why, "model": self.model}


def chat_url(url: str) -> str:
    """The chat completions address of an endpoint given as its base (``http://h:8000``, ``.../v1``)
    or in full."""
    base = url.strip().rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ChatJudge:
    """Asks ``model`` at ``url`` (OpenAI-compatible ``/v1/chat/completions``) about a conflict."""

    def __init__(self, url: str, model: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CuratorError(f"invalid judge url {url!r}: give an http(s) address such as "
                               "http://127.0.0.1:8000/v1")
        self.url = chat_url(url)
        self.model = model
        self._key = api_key
        self._timeout = timeout
        # a model on this machine is reached directly, whatever proxy the environment names
        proxies = urllib.request.ProxyHandler({}) if _loopback(parts.hostname) else urllib.request.ProxyHandler()
        self._opener = urllib.request.build_opener(proxies)

    def verdict(self, conflict: Conflict) -> Verdict:
        """The judge's verdict on ``conflict``; a :class:`CuratorError` (one line) when the endpoint
        cannot be reached or answers something that is not a chat completion."""
        prompt = _PROMPT.format(reason=conflict.reason, path1=conflict.a.path, text1=conflict.a.text,
                                path2=conflict.b.path, text2=conflict.b.text)
        body = json.dumps({"model": self.model, "temperature": 0,
                           "messages": [{"role": "system", "content": "You check facts for contradictions."},
                                        {"role": "user", "content": prompt}]}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self._timeout) as resp:
                answer = json.loads(resp.read().decode("utf-8"))
            content = answer["choices"][0]["message"]["content"]
        except urllib.error.HTTPError as exc:
            raise CuratorError(f"the judge at {self.url} answered HTTP {exc.code} ({exc.reason})") from None
        except urllib.error.URLError as exc:
            raise CuratorError(f"cannot reach the judge at {self.url}: {exc.reason}") from None
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise CuratorError(f"the judge at {self.url} gave no chat answer ({type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:120]})") from None
        return parse_verdict(str(content), self.model)


def parse_verdict(content: str, model: str) -> Verdict:
    """A chat answer read as a verdict: the JSON asked for (also inside a code fence or among
    words), else a reply that starts with the verdict; anything else is ``unclear``."""
    found = re.search(r"\{.*\}", content, re.DOTALL)
    if found:
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
        if isinstance(data, dict) and str(data.get("verdict", "")).strip().lower() in VERDICTS:
            return Verdict(str(data["verdict"]).strip().lower(), _one_line(str(data.get("why", ""))), model)
    first = re.match(r"\W*(confirm|dismiss)\w*\W*(.*)", content.strip(), re.IGNORECASE | re.DOTALL)
    if first:
        return Verdict(first.group(1).lower(), _one_line(first.group(2)), model)
    return Verdict("unclear", _one_line(content), model)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _WHY_CHARS else line[:_WHY_CHARS - 1] + "…"


def judge_conflicts(judge: ChatJudge, conflicts: Sequence[Conflict], top: int = DEFAULT_TOP) -> list[Conflict]:
    """``conflicts`` in the same order, the first ``top`` with the judge's verdict attached
    (:attr:`Conflict.verdict`); none is dropped, whatever the verdict."""
    return [dataclasses.replace(c, verdict=judge.verdict(c).to_json()) if i < top else c
            for i, c in enumerate(conflicts)]


def judge_settings(state_dir: Path) -> Path:
    """Where the judge of the wiki whose local state is ``state_dir`` is configured."""
    return state_dir / JUDGE_SETTINGS


def load_judge(state_dir: Path) -> ChatJudge | None:
    """The judge configured in ``state_dir`` (:data:`JUDGE_SETTINGS`), ``None`` when there is no
    such file; a :class:`UsageError` (one line) when the file is not what it should be."""
    path = judge_settings(state_dir)
    data = read_settings(path, '{"url": "http://127.0.0.1:8000/v1", "model": "..."}')
    if data is None:
        return None
    unknown = sorted(set(data) - set(_SETTING_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown setting {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(_SETTING_KEYS)})")
    for key in _SETTING_KEYS:
        value = data.get(key)
        if (key != "api_key" or value is not None) and (not isinstance(value, str) or not value.strip()):
            raise UsageError(f"{path}: {key!r} must be a non-empty string")
    try:
        return ChatJudge(data["url"], data["model"].strip(), data.get("api_key"))
    except CuratorError as exc:
        raise UsageError(f"{path}: {exc}") from None


def judge_for(wiki: Wiki) -> ChatJudge | None:
    """The judge configured for ``wiki`` on this machine (:func:`load_judge`)."""
    return load_judge(wiki.state_dir)
