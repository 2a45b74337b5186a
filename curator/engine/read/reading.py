"""Read paths shared by the CLI, the MCP server and the station: read, neighbors, read-all.

Each returns a structured result (for ``--json`` and the GUI) that also renders to the plain text
an agent receives. Every function takes the reading actor and shows only what it may see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curator.engine.corpus import frontmatter, markdown_scan
from curator.engine.corpus.links import Resolution
from curator.engine.corpus.page import LAYER_RANK, Page
from curator.engine.corpus.walker import json_document
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki

DEFAULT_MAX_BYTES = 30_000
DEFAULT_SNIPPET_CHARS = 280


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def page_summary(page: Page) -> dict[str, Any]:
    return {"path": page.path, "bytes": page.size, "title": page.title, "layer": page.layer,
            "trust": page.trust}


@dataclass(slots=True, frozen=True)
class Embedded:
    """What ``![[target#anchor]]`` on a page shows (docs/design.md §3 embeds)."""

    path: str  # the page or attachment file embedded, relative to the root
    title: str  # the page title (with the anchor), or the file name
    text: str | None  # the embedded markdown: the page body or its section; None for a file or
    #: a section that is not there
    image: bool = False  # an image file, shown inline

    @property
    def file(self) -> bool:
        return self.text is None and not self.path.lower().endswith(".md")


def embedded(wiki: Wiki, target: str, anchor: str | None, source: str,
             actor: Actor = OPERATOR, resolve: Callable[[str, str], Resolution] | None = None) -> Embedded | None:
    """What an embed of ``target`` (and ``anchor``) written on ``source`` shows, as ``actor`` may
    see it; None when it resolves to nothing the actor can see. A page embed is the page body
    without frontmatter, or the heading section / block the anchor names. ``resolve``: how a
    link written on a page resolves, as the link index does (by default, the link index built)."""
    res = (resolve or wiki.links.resolve)(target, source)
    if res.attachment is not None:
        if not wiki.visible(actor, res.attachment):
            return None
        name = res.attachment.rpartition("/")[2]
        return Embedded(res.attachment, name, None,
                        markdown_scan.extension(name) in markdown_scan.IMAGE_EXTENSIONS)
    if res.path is None or not wiki.visible(actor, res.path):
        return None
    page = wiki.page(res.path)  # (the page alone: not every page decoded for one embed)
    if page is None:
        return None
    body = frontmatter.split(wiki.read_text(res.path)).body
    title = page.title + (f" › {anchor}" if anchor else "")
    return Embedded(res.path, title, markdown_scan.find_section(body, anchor))


@dataclass(slots=True)
class ReadResult:
    page: Page
    text: str

    def to_json(self) -> dict[str, Any]:
        p = self.page
        return {**page_summary(p), "tags": p.tags, "aliases": p.aliases, "source_type": p.source_type,
                "meta": p.meta, "content": self.text}


def read(wiki: Wiki, ref: str, actor: Actor = OPERATOR) -> ReadResult:
    page = wiki.find(ref, actor)
    return ReadResult(page, wiki.read_text(page.path))


@dataclass(slots=True)
class Neighbor:
    direction: str  # "out" | "in"
    target: str  # link target as written (out) or the linking page's path (in)
    path: str | None
    title: str | None
    snippet: str

    @property
    def resolved(self) -> bool:
        return self.path is not None

    def render(self) -> str:
        if self.direction == "out" and self.path is None:
            return f"- [[{self.target}]] — not yet written"
        head = f"- {self.title} ({self.path})"
        return f"{head}: {self.snippet}" if self.snippet else head


def json_size(data: Any) -> int:
    """Bytes of ``data`` as the CLI prints it (:func:`~curator.engine.corpus.walker.json_document`)."""
    return len(json_document(data).encode("utf-8", "surrogateescape"))


def _utf8_prefix(text: str, size: int) -> str:
    return text.encode("utf-8", "surrogateescape")[: max(0, size)].decode("utf-8", "ignore")


@dataclass(slots=True)
class NeighborsResult:
    page: Page
    content: str
    outgoing: list[Neighbor] = field(default_factory=list)
    inbound: list[Neighbor] = field(default_factory=list)
    text: str = ""
    omitted: int = 0  # neighbours not shown because of max_bytes
    truncated: bool = False
    page_cut: bool = False  # the page itself did not fit: ``text`` holds only its start
    shown: tuple[int, int] | None = None  # (outgoing, inbound) neighbours that fit in max_bytes
    max_bytes: int = DEFAULT_MAX_BYTES

    def to_json(self) -> dict[str, Any]:
        """The answer as one JSON document of at most ``max_bytes`` bytes (as the CLI prints it):
        the page summary, then as much of the page as fits, then the outgoing and then the inbound
        neighbours in order while they fit. When anything is left out, ``truncated`` is true,
        ``omitted`` counts the neighbours not listed, ``page_cut`` says the content is cut short
        and ``note`` says so in words. :class:`UsageError` when not even that skeleton fits."""
        def nb(n: Neighbor) -> dict[str, Any]:
            return {"target": n.target, "path": n.path, "title": n.title, "snippet": n.snippet,
                    "resolved": n.resolved}

        items = [nb(n) for n in self.outgoing] + [nb(n) for n in self.inbound]
        n_out = len(self.outgoing)
        total = len(items)
        budget = self.max_bytes

        def doc(content: str, shown: int, cut: bool) -> dict[str, Any]:
            omitted = total - shown
            truncated = cut or omitted > 0
            out = {"page": page_summary(self.page), "content": content,
                   "outgoing": items[:min(shown, n_out)], "inbound": items[n_out:shown],
                   "truncated": truncated, "page_cut": cut, "omitted": omitted}
            if truncated:
                out["note"] = (f"[truncated at {budget} bytes: {'the page is cut short and ' if cut else ''}"
                               f"{omitted} of {total} neighbours not listed; read a page with `read <path>` "
                               "or raise max_bytes to see more]")
            return out

        def fits(d: dict[str, Any]) -> bool:
            return json_size(d) <= budget

        full = doc(self.content, total, False)
        if fits(full):
            return full
        if fits(doc(self.content, 0, False)):
            lo, hi = 0, total  # the most neighbours that fit after the whole page
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if fits(doc(self.content, mid, False)):
                    lo = mid
                else:
                    hi = mid - 1
            return doc(self.content, lo, False)
        data = self.content.encode("utf-8", "surrogateescape")
        lo, hi = 0, len(data)  # the longest start of the page that fits, with no neighbour
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(doc(_utf8_prefix(self.content, mid), 0, True)):
                lo = mid
            else:
                hi = mid - 1
        best = doc(_utf8_prefix(self.content, lo), 0, True)
        if not fits(best):
            from curator.engine.errors import UsageError

            raise UsageError(f"max_bytes {budget} is too small for a JSON answer about {self.page.path}: "
                             f"it needs at least {json_size(doc('', 0, True))} bytes")
        return best


def neighbors(wiki: Wiki, ref: str, actor: Actor = OPERATOR, max_bytes: int = DEFAULT_MAX_BYTES,
              snippet_chars: int = DEFAULT_SNIPPET_CHARS) -> NeighborsResult:
    """The page in full, then its outgoing links, then the pages linking to it (docs/design.md §8), in at
    most ``max_bytes`` bytes of text (the truncation line included, unless ``max_bytes`` is
    smaller than that line itself); :meth:`NeighborsResult.to_json` keeps to it as well."""
    page = wiki.find(ref, actor)
    content = wiki.read_text(page.path)
    links = wiki.links_around(page.path, actor)  # a hidden page looks exactly like a missing one
    pages = links.pages  # every page its links name (only those, when built around the page)
    result = NeighborsResult(page, content, max_bytes=max_bytes)
    seen: set[str] = set()
    for edge in links.outgoing.get(page.path, []):
        target = edge.target
        if target is not None and (target == page.path or not wiki.visible(actor, target)):
            continue
        if target is None and edge.resolution.names_file:
            continue  # an attachment (diagram.png) is a file, not a neighbouring page
        key = target or f"?{edge.link.key}"
        if key in seen:
            continue
        seen.add(key)
        if target is None:
            result.outgoing.append(Neighbor("out", edge.link.target, None, None, ""))
        else:
            other = pages[target]
            result.outgoing.append(Neighbor("out", edge.link.target, target, other.title,
                                            _clip(other.snippet, snippet_chars)))
    seen_in: set[str] = set()
    for edge in links.backlinks(page.path):
        if edge.source in seen_in or not wiki.visible(actor, edge.source):
            continue
        seen_in.add(edge.source)
        other = pages[edge.source]
        result.inbound.append(Neighbor("in", edge.source, edge.source, other.title,
                                       _clip(other.snippet, snippet_chars)))

    total = len(result.outgoing) + len(result.inbound)

    def note(omitted: int, cut: bool) -> str:
        return (f"[truncated at {max_bytes} bytes: {'the page is cut short and ' if cut else ''}{omitted} "
                f"of {total} neighbours not shown; read a page with `read <path>` or raise max_bytes to see more]")

    def size(chunk: str) -> int:
        return len(chunk.encode("utf-8", "surrogateescape")) + 1

    # Room for the truncation line is kept back from the start: the text with it stays in budget.
    budget = max_bytes - size(note(total, True))
    parts: list[str] = []

    def take(chunk: str) -> bool:
        nonlocal budget
        if size(chunk) > budget:
            return False
        parts.append(chunk)
        budget -= size(chunk)
        return True

    header = f"# {page.title} ({page.path}) — layer {page.layer}, trust {page.trust:g}"
    body = content.rstrip("\n")
    if size(header) + size(body) + sum(size(n.render()) for n in [*result.outgoing, *result.inbound]) + \
            size(f"\n## Links from this page ({len(result.outgoing)})") + \
            size(f"\n## Pages linking here ({len(result.inbound)})") <= max_bytes:
        budget = max_bytes  # everything fits: no truncation line is needed
    if not take(header) or not take(body):
        # Even the page itself does not fit: show as much as fits, on a character boundary.
        if budget > 1:  # (after the header, when that fitted)
            parts.append(_utf8_prefix(body, budget - 1))
        result.truncated = result.page_cut = True
    sections = [(f"\n## Links from this page ({len(result.outgoing)})", result.outgoing),
                (f"\n## Pages linking here ({len(result.inbound)})", result.inbound)]
    shown = 0
    counts = [0, 0]
    for k, (title, items) in enumerate(sections):
        if result.truncated or not take(title):
            result.truncated = True
            break
        for n in items:
            if not take(n.render()):
                result.truncated = True
                break
            shown += 1
            counts[k] += 1
    result.shown = (counts[0], counts[1])
    if result.truncated:
        result.omitted = total - shown
        parts.append(note(result.omitted, result.page_cut))
    result.text = "\n".join(parts) + "\n"
    return result


@dataclass(slots=True)
class ReadAllResult:
    text: str
    included: list[str]
    not_reached: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"included": self.included, "not_reached": len(self.not_reached),
                "not_reached_paths": self.not_reached, "text": self.text}


def read_all(wiki: Wiki, actor: Actor = OPERATOR, max_bytes: int = 200_000) -> ReadAllResult:
    """Every visible page, identity first then core, context, deep, until ``max_bytes``."""
    pages = sorted(wiki.visible_pages(actor), key=lambda p: (LAYER_RANK.get(p.layer, 3), p.path))
    parts: list[str] = []
    included: list[str] = []
    not_reached: list[str] = []
    used = 0
    for page in pages:
        if not_reached:
            not_reached.append(page.path)
            continue
        chunk = f"=== {page.path} ({page.layer}, trust {page.trust:g}) ===\n{wiki.read_text(page.path).rstrip()}\n"
        size = len(chunk.encode("utf-8", "surrogateescape")) + 1
        if used + size > max_bytes:
            not_reached.append(page.path)
            continue
        parts.append(chunk)
        included.append(page.path)
        used += size
    if not_reached:
        parts.append(f"[{len(not_reached)} of {len(pages)} pages not reached within {max_bytes} bytes; "
                     "raise max_bytes or read pages one by one]\n")
    return ReadAllResult("\n".join(parts), included, not_reached)
