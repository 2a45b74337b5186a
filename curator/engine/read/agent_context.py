"""Context injection: the wiki text an agent's system prompt receives (docs/design.md §7).

One pure builder serves the CLI (``curator context``), the station's preview and the MCP server
(``wiki_context``), so all three show byte-identical text.

Rules: pages of the ``identity`` layer, then of the ``core`` layer, that the agent may see,
leaving out pages marked ``do_not_inject`` and auto-filed pages (``auto/``). Each layer that
contributes starts with a ``### Wiki — <layer>`` header; each page is ``## <title>``, a blank line
and its body (frontmatter removed; a first ``# <title>`` heading repeating the title is dropped).
Blocks are separated by one blank line. Within a layer pages are ordered by trust (highest first),
then path; with a query, pages matching it come first, best match first. Pages are then taken
greedily while the UTF-8 size of the whole text stays within the byte budget: a page that does not
fit is skipped and smaller pages after it may still fill the rest.

A page whose ``valid_until:`` has passed (and that no ``verified:`` date on or after it vouches for,
:func:`~curator.engine.corpus.freshness.expired_on`) is left out too: an agent must not act on what
its author said stops being true. :attr:`ContextResult.notice` is the one line the answer adds to
say how many pages were left out for that reason (it is not part of the injected text, so the
injection record still rebuilds the text byte for byte).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.freshness import expired_on
from curator.engine.corpus.page import Page, decode
from curator.engine.policy.actor import Actor

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

DEFAULT_BUDGET = 8000
INJECTED_LAYERS: tuple[str, ...] = ("identity", "core")

SKIP_BUDGET = "over budget"
SKIP_DO_NOT_INJECT = "do_not_inject"
SKIP_AUTO = "auto-filed"
SKIP_EXPIRED = "past valid_until"


@dataclass(slots=True)
class ContextPage:
    path: str
    title: str
    layer: str
    bytes: int  # UTF-8 size of the page's block in the text (what it costs or would cost)
    reason: str = ""  # why a skipped page was left out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "title": self.title, "layer": self.layer,
                                "bytes": self.bytes}
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(slots=True)
class ContextResult:
    text: str
    budget: int
    included: list[ContextPage] = field(default_factory=list)
    skipped: list[ContextPage] = field(default_factory=list)
    #: The exact bytes each included page was built from (for the injection record, docs/design.md §14).
    sources: dict[str, bytes] = field(default_factory=dict)

    @property
    def bytes(self) -> int:
        return len(self.text.encode("utf-8", "surrogateescape"))

    @property
    def notice(self) -> str:
        """One line saying how many pages were left out because their ``valid_until`` passed
        ("" when none was)."""
        n = sum(1 for p in self.skipped if p.reason == SKIP_EXPIRED)
        if not n:
            return ""
        pages = "1 page was" if n == 1 else f"{n} pages were"
        return f"[{pages} left out: past valid_until, no longer vouched for (the operator's stale queue lists it)]"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"text": self.text, "bytes": self.bytes, "budget": self.budget,
                                "included": [p.to_json() for p in self.included],
                                "skipped": [p.to_json() for p in self.skipped]}
        if self.notice:
            data["notice"] = self.notice
        return data


def layer_header(layer: str) -> str:
    return f"### Wiki — {layer}\n"


def render_page(title: str, body: str) -> str:
    """One page's block: ``## <title>``, a blank line, the body."""
    body = body.replace("\r\n", "\n").strip()
    first, _, rest = body.partition("\n")
    if first.strip() == f"# {title}":
        body = rest.strip()
    return f"## {title}\n\n{body}\n" if body else f"## {title}\n"


def render_source(title: str, data: bytes) -> str:
    """One page's block from the page file's bytes (BOM removed, invalid bytes replaced)."""
    return render_page(title, frontmatter.split(decode(data).text).body)


def assemble(blocks: list[tuple[str, str]]) -> str:
    """The context text of (layer, block) pairs in order: each layer's header before its first
    block, everything joined by one newline (what :func:`build_context` produces)."""
    chunks: list[str] = []
    layer_now: str | None = None
    for layer, block in blocks:
        if layer != layer_now:
            chunks.append(layer_header(layer))
            layer_now = layer
        chunks.append(block)
    return "\n".join(chunks)


def _joined_size(used: int, placed: int, new: list[str]) -> int:
    """UTF-8 size of the text after appending ``new`` to ``placed`` chunks of ``used`` bytes
    (chunks are joined by one newline, which with their own final newline makes a blank line)."""
    return used + sum(len(c.encode("utf-8", "surrogateescape")) for c in new) + len(new) - (0 if placed else 1)


def build_context(wiki: Wiki, actor: Actor, *, budget: int = DEFAULT_BUDGET,
                  query: str | None = None, today: _dt.date | None = None) -> ContextResult:
    """The text injected into ``actor``'s prompt, with the pages included and skipped
    (``today`` decides which ``valid_until`` dates have passed)."""
    budget = max(0, int(budget))
    today = today or _dt.date.today()
    relevance = wiki.search.relevance(query, actor=actor) if query and query.strip() else {}
    by_layer: dict[str, list[Page]] = {layer: [] for layer in INJECTED_LAYERS}
    for page in wiki.visible_pages(actor):
        if page.layer in by_layer:
            by_layer[page.layer].append(page)
    result = ContextResult("", budget)
    chunks: list[str] = []
    used = 0
    for layer in INJECTED_LAYERS:
        pages = sorted(by_layer[layer], key=lambda p: (p.path not in relevance,
                                                       -relevance.get(p.path, 0.0), -p.trust, p.path))
        header = layer_header(layer)
        header_placed = False
        for page in pages:
            if page.do_not_inject or page.namespace == "auto":
                reason = SKIP_DO_NOT_INJECT if page.do_not_inject else SKIP_AUTO
                result.skipped.append(ContextPage(page.path, page.title, layer, 0, reason))
                continue
            if expired_on(page.meta, today) is not None:
                result.skipped.append(ContextPage(page.path, page.title, layer, 0, SKIP_EXPIRED))
                continue
            try:
                data = (wiki.root / page.path).read_bytes()
            except OSError:
                continue  # deleted since the cache saw it
            block = render_source(page.title, data)
            entry = ContextPage(page.path, page.title, layer, len(block.encode("utf-8", "surrogateescape")))
            new = [block] if header_placed else [header, block]
            size = _joined_size(used, len(chunks), new)
            if size > budget:
                entry.reason = SKIP_BUDGET
                result.skipped.append(entry)
                continue
            chunks += new
            used = size
            header_placed = True
            result.included.append(entry)
            result.sources[page.path] = data
    result.text = "\n".join(chunks)
    assert len(result.text.encode("utf-8", "surrogateescape")) == used  # the budget check measured the real text
    return result
