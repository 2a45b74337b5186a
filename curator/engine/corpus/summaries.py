"""What a page list shows of every page, kept with the store so a big wiki opens without decoding
every page (docs/design.md §12).

A station opening 100,000 pages needs each page's title, layer, trust, tags, aliases, date and
snippet, not its links, headings or frontmatter: decoding every page's record for them was 1.7 s of
a warm open. The summaries are saved as one derived entry of the store (:meth:`PageStore.save_derived`)
and read back with the pages changed since (:meth:`PageStore.derived_since`): only those pages'
records are decoded, so a warm open costs what changed since the last one, not the wiki.
"""

from __future__ import annotations

import marshal
import zlib
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from curator.engine.corpus.page import Page
    from curator.engine.corpus.store import PageStore

#: The name the summaries are saved under in the store's derived data, and their encoding's tag.
NAME = "summaries"
FORMAT = 1
#: The name the inbound link counts last counted are saved under (:func:`keep_inbound`).
INBOUND_NAME = "inbound"
#: More pages changed since the kept summaries than this: every page is decoded instead (as fast
#: as that many single records, and it leaves the pages decoded for what follows).
MAX_CHANGED = 5000


@dataclass(slots=True)
class PageSummary:
    """A page as a list shows it (the fields of :class:`Page` of the same names, and its namespace)."""

    path: str
    size: int
    title: str
    layer: str
    trust: float
    tags: list[str]
    aliases: list[str]
    updated: str | None
    snippet: str

    @property
    def namespace(self) -> str:
        """First path segment (``""`` for a page at the root), as :attr:`Page.namespace`."""
        head, sep, _ = self.path.partition("/")
        return head if sep else ""

    @classmethod
    def of(cls, page: Page) -> PageSummary:
        return cls(page.path, page.size, page.title, page.layer, page.trust, page.tags, page.aliases,
                   page.updated, page.snippet)


#: What a page list reads of a page: its :class:`PageSummary`, or the :class:`Page` itself (the
#: attributes of the summary, which the page has under the same names).
Listed: TypeAlias = "PageSummary | Page"


@dataclass(slots=True)
class Summaries:
    """Every page's summary, sorted by path, as of the store's ``state``; ``saved``: whether the
    store holds them as they are (else :func:`keep_summaries` saves them)."""

    pages: list[PageSummary]
    state: bytes | None
    saved: bool


def load_summaries(store: PageStore) -> Summaries:
    """Every page's summary: the kept ones with the pages changed since decoded again, else every
    page decoded (the first open after an index, or more than :data:`MAX_CHANGED` changed)."""
    if not store.loaded:
        store.refresh()
    state = store.state
    kept = store.derived_since(NAME)
    if kept is not None:
        data, changed = kept
        held = decode(data)
        if held is not None and len(changed) <= MAX_CHANGED:
            if not changed:
                return Summaries(held, state, True)
            return Summaries(_patched(held, store.pages_at(sorted(changed)), changed), state, False)
    listed = store.take_listing()  # (a first open's, parsed by the workers: no page decoded)
    if listed is not None:
        return Summaries([listed[p] for p in sorted(listed)], state, False)
    pages = store.pages
    return Summaries([PageSummary.of(pages[p]) for p in sorted(pages)], state, False)


def keep_summaries(store: PageStore, summaries: Summaries) -> None:
    """Save ``summaries`` with the store (unless it holds them already, or the pages changed since
    they were made: the next load then decodes what changed)."""
    if not summaries.saved and summaries.state is not None:
        store.save_derived(NAME, encode(summaries.pages), summaries.state)
        summaries.saved = True


def _patched(held: list[PageSummary], fresh: dict[str, Page], changed: set[str]) -> list[PageSummary]:
    """``held`` with each of the ``changed`` pages replaced by its ``fresh`` page (gone when it has none)."""
    by_path = {s.path: s for s in held}
    added = False
    for path in changed:
        page = fresh.get(path)
        if page is None:
            by_path.pop(path, None)
        else:
            added = added or path not in by_path
            by_path[path] = PageSummary.of(page)
    return [by_path[p] for p in sorted(by_path)] if added else list(by_path.values())


def encode(summaries: list[PageSummary]) -> bytes:
    """The summaries as columns (one list of titles, one of layers, ...), marshalled and compressed."""
    columns = (FORMAT, "\0".join(s.path for s in summaries), array("q", [s.size for s in summaries]).tobytes(),
               [s.title for s in summaries], [s.layer for s in summaries], [s.trust for s in summaries],
               [s.tags for s in summaries], [s.aliases for s in summaries], [s.updated for s in summaries],
               [s.snippet for s in summaries])
    return zlib.compress(marshal.dumps(columns), 1)


def decode(data: bytes) -> list[PageSummary] | None:
    """The summaries :func:`encode` made (None when ``data`` is not that: they are made again)."""
    try:
        tag, joined, sizes, *columns = marshal.loads(zlib.decompress(data))
        if tag != FORMAT or type(joined) is not str or type(sizes) is not bytes or len(columns) != 7:
            return None
        paths = joined.split("\0") if joined else []
        counts = array("q", sizes).tolist()
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    if any(type(c) is not list or len(c) != len(paths) for c in (counts, *columns)):
        return None
    return list(map(PageSummary, paths, counts, *columns))


def keep_inbound(store: PageStore, counts: Mapping[str, int], state: bytes | None = None) -> bool:
    """Save every page's inbound link count as just counted (pages missing have none): what a
    page list shows at the next open until the links are resolved again (:func:`kept_inbound`),
    or instead of resolving them while no page changed since (:func:`current_inbound`). ``state``:
    the store's state the links were counted at (not saved when the store moved on since: the
    counts would be taken as those of pages they were not counted from). Whether they were saved."""
    paths = sorted(counts)
    blob = zlib.compress(marshal.dumps((FORMAT, paths, [counts[p] for p in paths])), 1)
    return store.save_derived(INBOUND_NAME, blob, state)


def kept_inbound(store: PageStore) -> dict[str, int] | None:
    """The inbound link counts :func:`keep_inbound` saved last, whichever state they were counted
    at (the pages may have changed since: a list shows them only until it has the new ones);
    None when there are none that decode."""
    blob = store.derived_any(INBOUND_NAME)
    return None if blob is None else _inbound_of(blob)


def current_inbound(store: PageStore) -> dict[str, int] | None:
    """The inbound link counts :func:`keep_inbound` saved, when no page changed since they were
    counted (the store's log says so): what resolving every link again would count. None when
    none are kept, or pages changed since, or what changed is not known."""
    found = store.derived_since(INBOUND_NAME)
    if found is None or found[1]:
        return None
    return _inbound_of(found[0])


def _inbound_of(blob: bytes) -> dict[str, int] | None:
    try:
        tag, paths, counts = marshal.loads(zlib.decompress(blob))
    except (ValueError, TypeError, EOFError, zlib.error):
        return None
    if tag != FORMAT or type(paths) is not list or type(counts) is not list or len(paths) != len(counts):
        return None
    return dict(zip(paths, counts, strict=True))
