"""The one write door: append one clean, durable fact to the right page (docs/design.md §4).

``append(wiki, slug, content, links=(), create_new=False, actor=OPERATOR)`` answers with an
:class:`~curator.engine.write.actions.ActionResult` whose ``data`` holds ``created``, ``page``, ``candidates`` (list of
``{slug, path, score}``) and ``matched``; statuses ``appended | duplicate | candidates`` (successes)
and ``locked | denied | invalid`` (errors). It runs as the action ``wiki_append: <slug>``, so the
lock, the policy check, the exact-path commit and the journal line come from :mod:`curator.engine.write.actions`.

Routing stays cheap on big wikis: an exact slug is a dictionary lookup (or, in a one-shot
process, a substring search over cached folder listings: no walk, no parse). Only without an
exact match is every page scored, on slug features computed once per path and kept
(:func:`~curator.engine.corpus.slugs.similarity` with the 0.4 floor: the scores kept are exactly ``slugSim``'s).

Also here: :func:`ingest` (a raw source into ``raw/``, docs/design.md §11) and :func:`rebuild_from_journal`
(``curator recover``: facts the journal knows that the pages lost are written back).
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as _dt
import json
import math
import os
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, KeysView, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.engine.corpus.facts import (
    compose_bullet,
    find_duplicate,
    insert_bullet,
    refresh_updated,
    scaffold,
)
from curator.engine.corpus.lookalike import lookalike_key
from curator.engine.corpus.slugs import SlugFeatures, similarity, slug_features, slugify
from curator.engine.corpus.walker import EXCLUDED_DIRS, json_line
from curator.engine.memory import runs_for_long
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.status import Status
from curator.engine.write.actions import ActionContext, ActionResult, Denied, Invalid, journal_of, run_action
from curator.engine.write.held import Approval, hold

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

ROUTE_THRESHOLD = 0.4
MAX_CANDIDATES = 5
QUOTE_CHARS = 80
#: Namespaces append never routes to (docs/design.md §2): auto-filed pages and pages held for review.
UNROUTABLE = frozenset({"auto", "_review"})
MAX_INGEST_BYTES = 20 * 1024 * 1024
#: Limits on a fact written by anyone but the operator (docs/design.md §4.9): characters, and per line.
MAX_FACT_CHARS = 4000
MAX_FACT_LINE = 1000

_WORDS = re.compile(r"[^\W_]+")



@dataclass(slots=True, frozen=True)
class Candidate:
    slug: str
    path: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"slug": self.slug, "path": self.path, "score": round(self.score, 4)}


# --- routing --------------------------------------------------------------------------------

def _alnum(text: str) -> str:
    return "".join(_WORDS.findall(text.lower()))


def page_slug(path: str) -> str:
    """The append slug of a page: its file stem, slugified (``Ann Smith.md`` -> ``ann-smith``)."""
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    return slugify(unicodedata.normalize("NFC", stem))


class RouteCache:
    """Slugs and slug features by page path, kept for the life of a :class:`Wiki` and synced with
    its page cache by set difference (features depend on the path alone, so they never go stale)."""

    def __init__(self) -> None:
        self.feats: dict[str, SlugFeatures] = {}
        self.slugs: dict[str, str] = {}
        self.by_slug: dict[str, set[str]] = {}
        self.lock = threading.Lock()

    def sync(self, paths: Iterable[str]) -> None:
        current = paths if isinstance(paths, (Set, KeysView)) else set(paths)
        known = self.slugs.keys()
        for path in known - current:
            slug = self.slugs.pop(path)
            self.feats.pop(path, None)
            group = self.by_slug.get(slug)
            if group is not None:
                group.discard(path)
        for path in current - known:
            if _routable(path):
                self.add(path, page_slug(path))

    def add(self, path: str, slug: str) -> None:
        self.slugs[path] = slug
        self.by_slug.setdefault(slug, set()).add(path)

    def feature(self, path: str) -> SlugFeatures:
        feat = self.feats.get(path)
        if feat is None:
            feat = self.feats[path] = slug_features(self.slugs[path])
        return feat


def _routable(path: str) -> bool:
    head, sep, _ = path.partition("/")
    return not (sep and head in UNROUTABLE)


def _route_cache(wiki: Wiki) -> RouteCache:
    """The routing index of ``wiki``, synced with its loaded page cache (no walk, no parse)."""
    cache = wiki.session.service(RouteCache, RouteCache)
    store = wiki.store
    # (the paths only: a store loaded by another part of a one-shot append, the fact index, has
    # not decoded its pages, and decoding them for their names took 1.2 s at 32,000 pages)
    paths = store.pages.keys() if store.decoded else store.stamps().keys()
    with cache.lock:
        cache.sync(paths)
    return cache


def _routing_view(wiki: Wiki) -> tuple[Mapping[str, str], Callable[[str], list[str]], Callable[[str], SlugFeatures]]:
    """(slug by routable path, exact lookup, features) from the cheapest source at hand.

    A process with a decoded page cache (or a long-lived one) uses the kept :class:`RouteCache`; a one-shot process
    lists page names through :class:`_DirCache` and builds nothing it does not need (an exact
    match is one pass over the names; features are computed only when pages must be scored).
    """
    store = wiki.store
    # (a one-shot process whose store another part loaded without decoding it, the fact index
    # of ``append --json``, lists names too: the kept cache's slugs of 32,000 paths took 0.3 s)
    if store.decoded or (store.loaded and runs_for_long()):
        cache = _route_cache(wiki)
        return cache.slugs, lambda slug: list(cache.by_slug.get(slug, ())), cache.feature
    folders = _DirCache(wiki.root, wiki.state_dir).folders()
    listed: dict[str, str] = {}

    def all_slugs() -> dict[str, str]:
        if not listed:
            for prefix, names, slugs in folders:
                head = prefix.split("/", 1)[0]
                if head in UNROUTABLE:
                    continue
                keys = names.split("\0")
                if prefix:
                    keys = [prefix + n for n in keys]
                listed.update(zip(keys, slugs.split("\0"), strict=False))
        return listed

    def exact(slug: str) -> list[str]:
        return [p for p in _DirCache.find(folders, slug) if _routable(p)]

    return _LazyDict(all_slugs), exact, lambda path: slug_features(all_slugs()[path])


class _LazyDict(Mapping[str, str]):
    """A mapping built on first use: a one-shot exact match never pays for listing every slug."""

    def __init__(self, build: Callable[[], dict[str, str]]) -> None:
        self._build = build

    def __getitem__(self, key: str) -> str:
        return self._build()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())


def routable_paths(wiki: Wiki, actor: Actor) -> list[str]:
    """Pages append may route to for ``actor``: not under auto/ or _review/, and visible."""
    slugs, _exact, _feature = _routing_view(wiki)
    return [p for p in slugs if actor.is_operator or wiki.visible(actor, p)]


class _DirCache:
    """Page names and slugs of a wiki, listed folder by folder and reused while a folder's mtime
    is unchanged (adding, removing or renaming an entry changes its folder's mtime), kept in
    ``.curator/route-paths.json``. Follows :func:`~curator.engine.corpus.walker.walk`'s rules (excluded folders, no
    symlinks). A folder listed less than a clock tick after its last change is listed again next
    time (a change in the same tick would not move its mtime): 50 ms on file systems with
    sub-second timestamps, 2 s on those with whole seconds.

    Each folder is stored as ``[mtime_ns, listed_ns, names, slugs, subfolders]`` with the lists
    joined by NUL (no file name contains one): a few long strings decode and encode in well under
    a millisecond, where 10,000 small JSON lists took tens.
    """

    FILE = "route-paths.json"
    RACY_FINE_NS = 50_000_000
    RACY_COARSE_NS = 2_000_000_000

    def __init__(self, root: Path, state_dir: Path) -> None:
        self.root = root
        self.path = state_dir / self.FILE

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_bytes())
            return data["dirs"] if isinstance(data, dict) and data.get("v") == 2 else {}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def _trusted(self, entry: Any, mtime: int) -> bool:
        if not (isinstance(entry, list) and len(entry) == 5 and entry[0] == mtime):
            return False
        racy = self.RACY_FINE_NS if mtime % 1_000_000_000 else self.RACY_COARSE_NS
        return bool(entry[1] - mtime > racy)

    def folders(self) -> list[tuple[str, str, str]]:
        """``(prefix, names, slugs)`` per folder (NUL-joined), listing only changed folders."""
        cached = self._load()
        fresh: dict[str, Any] = {}
        dirty = False
        now = time.time_ns()
        out: list[tuple[str, str, str]] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else str(self.root)
            try:
                mtime = os.stat(full).st_mtime_ns
            except OSError:
                continue
            entry: Any = cached.get(rel)
            if not self._trusted(entry, mtime):
                known: dict[str, str] = {}
                if isinstance(entry, list) and len(entry) == 5 and entry[2]:
                    known = dict(zip(entry[2].split("\0"), entry[3].split("\0"), strict=False))
                entry = self._scan(full, mtime, now, known)
                dirty = True
                if entry is None:
                    continue
            fresh[rel] = entry
            prefix = f"{rel}/" if rel else ""
            if entry[2]:
                out.append((prefix, entry[2], entry[3]))
            if entry[4]:
                stack.extend(prefix + d for d in reversed(entry[4].split("\0")))
        if dirty or fresh.keys() != cached.keys():
            with contextlib.suppress(OSError):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_name(f".{self.FILE}.{os.getpid()}.tmp")
                tmp.write_text(json_line({"v": 2, "dirs": fresh}), encoding="utf-8")
                os.replace(tmp, self.path)
        return out

    def pages(self) -> dict[str, str]:
        """Slug by root-relative page path, for every page the walker would yield."""
        out: dict[str, str] = {}
        for prefix, names, slugs in self.folders():
            keys = names.split("\0")
            if prefix:
                keys = [prefix + n for n in keys]
            out.update(zip(keys, slugs.split("\0"), strict=False))
        return out

    @staticmethod
    def find(folders: list[tuple[str, str, str]], slug: str) -> list[str]:
        """Paths whose slug is ``slug``: a substring search per folder, no per-page work."""
        hits: list[str] = []
        needle = f"\0{slug}\0"
        for prefix, names, slugs in folders:
            if needle in f"\0{slugs}\0":
                for name, s in zip(names.split("\0"), slugs.split("\0"), strict=False):
                    if s == slug:
                        hits.append(prefix + name)
        return hits

    @staticmethod
    def _scan(full: str, mtime: int, now: int, known: dict[str, str]) -> list[Any] | None:
        names: list[str] = []
        dirs: list[str] = []
        try:
            with os.scandir(full) as it:
                for e in it:
                    try:
                        if e.is_symlink():
                            continue
                        if e.is_dir(follow_symlinks=False):
                            if e.name not in EXCLUDED_DIRS:
                                dirs.append(e.name)
                        elif e.name.lower().endswith(".md"):
                            names.append(e.name)
                    except OSError:
                        continue
        except OSError:
            return None
        names.sort()
        dirs.sort()
        slugs = [known.get(n) or page_slug(n) for n in names]
        return [mtime, now, "\0".join(names), "\0".join(slugs), "\0".join(dirs)]


def could_score(q: SlugFeatures, slugs: Sequence[str], floor: float) -> list[int]:
    """Indexes of ``slugs`` that may reach ``floor`` against ``q``; every other one provably
    scores below it, so only these need features and a :func:`~curator.engine.corpus.slugs.similarity` call.

    ``slugs`` are slugify() output (lowercase letters/digits and single inner hyphens). A pair
    reaches the floor only by containment of the letters-and-digits forms (checked directly), by
    sharing a word (word Jaccard > 0), or by sharing at least ``m = ceil(floor * |Tq|)`` of q's
    trigrams (tri Jaccard >= floor needs ``|Tq ∩ Tb| >= floor * |Tq ∪ Tb| >= floor * |Tq|``).
    By pigeonhole such a page contains one of any ``|Tq| - m + 1`` of q's trigrams: the rarest
    ones are searched in one joined string, so a wiki of 10,000 pages costs a few substring
    scans instead of 10,000 trigram sets.
    """
    # Both strings lay the slugs out alike: block i (pad, slug, pad) starts at blocks[i].
    joined = "\n " + " \n ".join(slugs) + " \n"  # " slug " as the trigrams pad it
    hyphened = "\n-" + "-\n-".join(slugs) + "-\n"  # "-slug-" so words match whole
    blocks: list[int] = []
    pos = 1
    for sl in slugs:
        blocks.append(pos)
        pos += len(sl) + 3
    hits: set[int] = set()

    def collect(text: str, needle: str) -> None:
        at = text.find(needle)
        while at >= 0:
            hits.add(bisect.bisect_right(blocks, at) - 1)
            at = text.find(needle, at + 1)

    qa = q.alnum
    if qa:
        for i, sl in enumerate(slugs):
            fa = sl.replace("-", "")
            if fa and (qa in fa or fa in qa):
                hits.add(i)
    for word in q.words:
        collect(hyphened, f"-{word}-")
    tri = sorted(q.tri, key=joined.count)
    need = max(1, math.ceil(floor * len(tri) - 1e-9))
    for t in tri[: len(tri) - need + 1]:
        collect(joined, t)
    return sorted(hits)


def route(wiki: Wiki, slug: str, actor: Actor = OPERATOR) -> tuple[str | None, list[Candidate]]:
    """(exact match path, candidates): docs/design.md §4.2 routing for an already slugified ``slug``.

    An exact match is a dictionary lookup; only without one is every routable page scored.
    Pages the actor may not see are neither targets nor candidates, and routing never guesses
    across a visibility boundary (docs/design.md §4.9): a name taken by a page the actor cannot see raises
    :class:`~curator.engine.write.actions.Denied`, a name shared by pages with different readers :class:`~curator.engine.write.actions.Invalid`
    (pass the page's path then, see :func:`page_by_path`).
    """
    slugs, exact_of, feature = _routing_view(wiki)

    def visible(path: str) -> bool:
        return actor.is_operator or wiki.visible(actor, path)

    named = exact_of(slug) or _lookalikes(slug, slugs, exact_of)
    exact = [p for p in named if visible(p)]
    if len(exact) < len(named):
        # The name is taken by a page this writer cannot see: creating (or picking) another page
        # of that name would route the next writer's facts across the visibility boundary.
        raise Denied(message=f"'{slug}' is the name of a page {actor} may not see; nothing written. "
                     "Append under another name")
    audience = getattr(wiki.policy, "audience", None)
    if len(exact) > 1 and audience is not None and len({audience(p) for p in exact}) > 1:
        exact.sort()
        raise Invalid(message=f"'{slug}' names {len(exact)} pages read by different people "
                      f"({', '.join(exact[:5])}); nothing written. Give the page's path instead of "
                      f"its slug (e.g. '{exact[0]}')")
    if exact:
        # Several pages share the name: prefer wiki/, then the shallowest, then by path.
        exact.sort(key=lambda p: (not p.startswith("wiki/"), p.count("/"), p))
        return exact[0], []
    q = slug_features(slug)
    scored: list[Candidate] = []
    paths = list(slugs)
    for i in could_score(q, [slugs[p] for p in paths], ROUTE_THRESHOLD):
        path = paths[i]
        f = feature(path)
        score = similarity(q, f, ROUTE_THRESHOLD)
        if score >= ROUTE_THRESHOLD and visible(path):
            scored.append(Candidate(f.slug, path, score))
    scored.sort(key=lambda c: (-c.score, c.path))
    return None, scored[:MAX_CANDIDATES]


def _lookalikes(slug: str, slugs: Mapping[str, str], exact_of: Callable[[str], list[str]]) -> list[str]:
    """Pages whose name is ``slug`` to a reader (``pаyments`` with a Cyrillic ``а`` is
    ``payments``): routing takes look-alike names as one, so no look-alike page is created beside
    a page and no fact goes to the look-alike instead (only reached when no name matched exactly)."""
    key = lookalike_key(slug)
    found = exact_of(key) if key != slug else []
    return found + [p for p, s in slugs.items() if not s.isascii() and s != slug and lookalike_key(s) == key
                    and p not in found]


# --- the door ----------------------------------------------------------------------------------

def _empty_data() -> dict[str, Any]:
    return {"created": False, "page": None, "candidates": [], "matched": None}


def page_by_path(wiki: Wiki, ref: str, actor: Actor = OPERATOR) -> str | None:
    """The routable page ``ref`` names by its path (``departments/hr/salaries`` or with ``.md``),
    when it exists and ``actor`` may see it; else None (a hidden page is like a missing one)."""
    cleaned = ref.strip().replace("\\", "/").removeprefix("./")
    if "/" not in cleaned:
        return None
    path = cleaned if cleaned.lower().endswith(".md") else cleaned + ".md"
    parts = path.split("/")
    if ".." in parts or "" in parts or any(p in EXCLUDED_DIRS for p in parts[:-1]) or not _routable(path):
        return None
    full = wiki.root / path
    if full.is_symlink() or not full.is_file():
        return None
    return path if actor.is_operator or wiki.visible(actor, path) else None


def check_agent_fact(content: str, links: Sequence[str], actor: Actor) -> str | None:
    """Why a fact from a non-operator is too large to be one (docs/design.md §4.9), else None.

    A fact is a sentence or a few: at most :data:`MAX_FACT_CHARS` characters (its links
    included) and no line over :data:`MAX_FACT_LINE`. The operator may write longer.
    """
    if actor.is_operator:
        return None
    total = len(content) + sum(len(link) for link in links)
    if total > MAX_FACT_CHARS:
        return (f"invalid fact: {total:,} characters is too long for one fact (at most "
                f"{MAX_FACT_CHARS:,}, links included); state one fact in a sentence or a few")
    longest = max((len(line) for text in (content, *links) for line in text.splitlines()), default=0)
    if longest > MAX_FACT_LINE:
        return (f"invalid fact: a line of {longest:,} characters is too long (at most "
                f"{MAX_FACT_LINE:,} per line)")
    return None


def slug_too_long(slug: str, actor: Actor) -> bool:
    """Whether ``slug`` from a non-operator is too long to be a page's name (:func:`append` refuses it)."""
    return not actor.is_operator and len(slug or "") > MAX_FACT_LINE


def refused_as_too_large(slug: str, content: str, links: Sequence[str], actor: Actor) -> bool:
    """Whether :func:`append` answers ``invalid`` for the size of ``slug``, ``content`` or
    ``links`` alone, before reading any page."""
    return slug_too_long(slug, actor) or check_agent_fact(content or "", [str(x) for x in links or ()],
                                                          actor) is not None


def append(wiki: Wiki, slug: str, content: str, links: Sequence[str] = (), create_new: bool = False,
           actor: Actor = OPERATOR, today: _dt.date | None = None, *,
           approval: Approval | None = None,
           same_meaning: Callable[[str, str, str], str | None] | None = None) -> ActionResult:
    """Append ``content`` as one bullet to the page ``slug`` routes to (docs/design.md §4).

    An agent's write the review policy holds is answered ``pending`` (queued in the review
    inbox, :mod:`curator.engine.review.inbox`) and a fact the operator rejected before ``rejected``. ``approval`` is
    how :func:`curator.engine.review.inbox.approve` applies a held item through this same door: never held again,
    the item checked and closed in the same commit. ``slug`` may also be a page's path
    (``departments/hr/salaries``): the way to pick one of several pages of one name that
    different people read (routing refuses to guess there). ``same_meaning(path, page_text,
    fact)``: the page's fact saying ``fact`` in other words, or None; asked under the write lock
    after the same-words check (the meaning check lives in a layer above this one, see
    :mod:`curator.engine.facts.door`).
    """
    if slug_too_long(slug, actor):
        return ActionResult(Status.INVALID, f"invalid slug: {len(slug):,} characters is too long for a page "
                            "name", data=_empty_data(), action="wiki_append")
    too_big = check_agent_fact(content or "", [str(x) for x in links or ()], actor)
    if too_big is not None:
        return ActionResult(Status.INVALID, too_big, data=_empty_data(), action="wiki_append",
                            target=slugify(slug or ""))
    by_path = page_by_path(wiki, slug or "", actor)
    s = page_slug(by_path) if by_path else slugify(slug or "")
    fact = " ".join((content or "").split())
    if not s:
        return ActionResult(Status.INVALID, f"invalid slug {slug!r}: it has no letters or digits; give the "
                            "page a name", data=_empty_data(), action="wiki_append")
    if not fact or not _WORDS.search(fact):
        return ActionResult(Status.INVALID, "invalid fact: the content is empty", data=_empty_data(),
                            action="wiki_append", target=s)
    links = [str(x) for x in links or () if str(x).strip()]
    day = today or _dt.date.today()

    def apply(ctx: ActionContext) -> None:
        ctx.data.update(_empty_data())
        if approval is not None:
            approval.check(ctx)  # still pending here, under the lock (else: already decided)
        target: str | None
        candidates: list[Candidate]
        if by_path is not None:
            target, candidates = by_path, []
        else:
            target, candidates = route(wiki, s, actor)
        bullet = compose_bullet(fact, links, day)
        if target is None:
            if candidates and not create_new:
                ctx.status = Status.CANDIDATES
                ctx.data["candidates"] = [c.to_json() for c in candidates]
                names = ", ".join(f"{c.slug} ({c.path}, {c.score:.2f})" for c in candidates)
                ctx.message = (f"no page is named '{s}'; similar pages: {names}. Append to one of "
                               f"them by its slug, or pass create_new to create '{s}'")
                return
            folder = "wiki/" if (wiki.root / "wiki").is_dir() else ""
            target = f"{folder}{s}.md"
        ctx.check_write(target)
        text, dec = ctx.read_text(target)
        created = text is None
        ctx.data.update(page=target, created=created)
        if text is not None and dec is not None:
            matched = find_duplicate(text, fact)
            if matched is None and same_meaning is not None:
                matched = same_meaning(target, text, fact)
            if matched is not None:
                quote = matched[:QUOTE_CHARS]
                ctx.status, ctx.data["matched"] = Status.DUPLICATE, quote
                ctx.message = f"not appended: {target} already says \"{quote}\""
                if approval is not None:
                    approval.close(ctx)  # the page states it by now: the item is decided
                return
            new_text = refresh_updated(insert_bullet(text, bullet), day)
            bom = dec.bom
        else:
            new_text, bom = scaffold(s, bullet, day), False
        # Review (docs/design.md §13): after the scope check and dedup, before anything is written.
        if approval is None and hold(ctx, slug=s, fact=fact, links=links, create_new=create_new, page=target,
                                     text=text):
            return
        ctx.journal.update(slug=s, content=fact, created=created, page=target, links=links)
        ctx.write_text(target, new_text, bom=bom)
        if approval is not None:
            approval.close(ctx)  # after the page: a crash in between leaves the item, not a loss
        ctx.status = Status.APPENDED
        ctx.message = f"created {target} with the fact" if created else f"appended to {target}"
        if approval is not None:
            ctx.message += f" (inbox item {approval.item_id} approved by {', '.join(approval.reviewers)})"

    result = run_action(wiki, actor, "wiki_append", s, apply)
    for key, value in _empty_data().items():
        result.data.setdefault(key, value)
    return result


def to_cli_json(result: ActionResult) -> dict[str, Any]:
    """The JSON shape of ``curator append --json`` (docs/design.md §11)."""
    d = result.data
    out = {"status": result.status, "created": bool(d.get("created")), "page": d.get("page"),
           "commit": result.commit, "candidates": d.get("candidates", []), "matched": d.get("matched"),
           "message": result.message}
    for key in ("id", "reason", "reviewed_by", "commit_error", "recovered", "similar", "similar_note"):
        if key in d:
            out[key] = d[key]
    return out


# --- recover: rebuild from the journal ----------------------------------------------------------

def rebuild_from_journal(wiki: Wiki, actor: Actor = OPERATOR) -> ActionResult:
    """Write back every journaled fact that its page no longer has (a lost or reverted-by-accident
    page is recreated); one action ``recover: journal``.

    Only facts no later action accounted for are replayed: a fact whose commit was reverted (an
    undo removed it on purpose) is skipped, and so is a fact whose page a *later* committed action
    removed (a merge archived it into the page it kept, a move or an archive took it away: the
    journal line of such an action lists it under ``removed``), unless that action was reverted
    itself."""
    from curator.engine.write.actions import git_of, history

    journal = list(journal_of(wiki).read())
    reverted = {e.reverts for e in history(wiki, 100_000) if e.reverts}
    records = [(i, r) for i, r in enumerate(journal)
               if r.get("action", "wiki_append") == "wiki_append" and r.get("committed", True)
               and isinstance(r.get("content"), str) and isinstance(r.get("slug"), str)
               and r.get("commit") not in reverted]
    removals: dict[str, list[int]] = {}  # page -> journal positions of committed actions removing it
    g = git_of(wiki)
    wanted = {r.get("page") for _, r in records}
    for i, r in enumerate(journal):
        if not r.get("committed") or not isinstance(r.get("commit"), str) or r["commit"] in reverted:
            continue
        gone = r.get("removed")
        if not isinstance(gone, list):  # an append, or a line from before "removed" was journaled
            if r.get("action", "wiki_append") == "wiki_append":
                continue
            gone = [p for p in r.get("changed") or [] if p in wanted and g.show(r["commit"], p) is None]
        for p in gone:
            if isinstance(p, str):
                removals.setdefault(p, []).append(i)
    kept = [r for i, r in records if not any(j > i for j in removals.get(str(r.get("page")), []))]

    def apply(ctx: ActionContext) -> None:
        restored: list[dict[str, Any]] = []
        texts: dict[str, str] = {}
        boms: dict[str, bool] = {}
        for rec in kept:
            s = slugify(rec["slug"])
            page = rec.get("page") if isinstance(rec.get("page"), str) else None
            if not s:
                continue
            if not page:
                folder = "wiki/" if (wiki.root / "wiki").is_dir() else ""
                page = f"{folder}{s}.md"
            page = ctx.safe_path(page)
            if page not in texts:
                text, dec = ctx.read_text(page)
                if text is not None and dec is not None:
                    texts[page], boms[page] = text, dec.bom
            day = _record_day(rec)
            links = [x for x in rec.get("links", []) if isinstance(x, str)]
            bullet = compose_bullet(rec["content"], links, day)
            if page in texts:
                if find_duplicate(texts[page], rec["content"]) is not None:
                    continue
                texts[page] = insert_bullet(texts[page], bullet)
            else:
                texts[page], boms[page] = scaffold(s, bullet, day), False
            restored.append({"page": page, "content": rec["content"]})
        for page in dict.fromkeys(r["page"] for r in restored):
            ctx.write_text(page, texts[page], bom=boms[page])
        ctx.status = Status.RECOVERED if restored else Status.OK
        ctx.data["restored"] = restored
        ctx.message = (f"restored {len(restored)} fact(s) from the journal" if restored
                       else "every journaled fact is on its page; nothing to restore")

    return run_action(wiki, actor, "recover", "journal", apply)


def _record_day(rec: dict[str, Any]) -> _dt.date:
    try:
        return _dt.date.fromisoformat(str(rec.get("t", ""))[:10])
    except ValueError:
        return _dt.date.today()


# --- ingest ---------------------------------------------------------------------------------------

def sanitize_name(name: str) -> str:
    """A raw source's file name reduced to ``[A-Za-z0-9._-]`` (no leading dots, <= 120 chars)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip())
    cleaned = re.sub(r"\.{2,}", ".", cleaned)  # no ".." left anywhere
    return cleaned.lstrip("._-")[:120].rstrip("_")


def public_address(host: str) -> bool:
    """Whether ``host`` (an IP address) is a public internet address: not loopback, private,
    link-local, multicast, reserved, unspecified or shared (CGNAT), also inside IPv4-mapped IPv6."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def fetch_url(url: str, timeout: float = 20.0) -> bytes:
    """Download ``url`` (http or https only) up to :data:`MAX_INGEST_BYTES`.

    Never reaches into this machine or its network: the address a connection actually reaches is
    checked (so a name that resolves to a private address, or re-resolves to one later, is refused
    too), a redirect may not change the scheme (http -> ftp, https -> http, ...) and every hop is
    checked again. No proxy is used: the check must see the real peer.
    """
    import http.client
    import urllib.error
    import urllib.parse
    import urllib.request  # 20 ms of imports that only ingest --url needs

    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise Invalid(message=f"invalid url {url!r}: only http and https are fetched")

    def checked(conn: http.client.HTTPConnection) -> None:
        assert conn.sock is not None
        peer = conn.sock.getpeername()[0]
        if not public_address(peer):
            conn.close()
            raise Invalid(message=f"refused to fetch {url}: {conn.host} is a loopback, private or "
                          f"reserved address ({peer}); only public internet addresses are fetched")

    class _HTTP(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            checked(self)

    class _HTTPS(http.client.HTTPSConnection):
        def connect(self) -> None:
            http.client.HTTPConnection.connect(self)  # plain TCP first: check the peer ...
            checked(self)
            # the private attributes HTTPSConnection.connect itself uses (not in typeshed)
            server = self._tunnel_host or self.host  # type: ignore[attr-defined]  # see above
            self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]  # see above
                self.sock, server_hostname=server)  # ... then TLS

    class _HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_HTTP, req)

    class _HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            # HTTPSHandler keeps its SSL context as the private ``_context`` (not in typeshed)
            return self.do_open(_HTTPS, req, context=self._context)  # type: ignore[attr-defined]  # see above

    class _Redirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
            new = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl)).scheme.lower()
            if new != urllib.parse.urlsplit(req.full_url).scheme.lower():
                raise Invalid(message=f"refused to fetch {url}: it redirects from "
                              f"{urllib.parse.urlsplit(req.full_url).scheme} to {new or 'another scheme'}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _HTTPHandler(), _HTTPSHandler(),
                                         _Redirects())
    try:
        with opener.open(url, timeout=timeout) as resp:
            data: bytes = resp.read(MAX_INGEST_BYTES + 1)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, Invalid):
            raise exc.reason from None
        raise Invalid(message=f"could not fetch {url}: {exc}") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise Invalid(message=f"could not fetch {url}: {exc}") from None
    if len(data) > MAX_INGEST_BYTES:
        raise Invalid(message=f"{url} is larger than {MAX_INGEST_BYTES // (1024 * 1024)} MB")
    return data


def ingest(wiki: Wiki, name: str, data: bytes | None = None, url: str | None = None,
           actor: Actor = OPERATOR) -> ActionResult:
    """Store a raw source as ``raw/<sanitised name>`` (never indexed as a page); action ``ingest``."""
    clean = sanitize_name(name)
    if not clean:
        return ActionResult(Status.INVALID, f"invalid name {name!r}: use letters, digits, '.', '_' or '-'",
                            action="ingest")
    if (data is None) == (url is None):
        return ActionResult(Status.INVALID, "give exactly one of a file or a url", action="ingest")
    if url is not None:
        try:
            data = fetch_url(url)
        except Invalid as exc:
            return ActionResult(Status.INVALID, exc.message, action="ingest")
    assert data is not None
    if len(data) > MAX_INGEST_BYTES:
        return ActionResult(Status.INVALID, f"the source is larger than {MAX_INGEST_BYTES // (1024 * 1024)} MB",
                            action="ingest")
    path = f"raw/{clean}"

    def apply(ctx: ActionContext) -> None:
        existing = ctx.read_bytes(path)
        ctx.data.update(path=path, bytes=len(data))
        if existing is not None and existing != data:
            raise Invalid(message=f"{path} exists with other content; ingest under another name",
                          data={"path": path})
        ctx.journal.update(path=path, url=url)
        ctx.write_bytes(path, data)
        ctx.status = Status.INGESTED
        ctx.message = f"stored {path} ({len(data)} bytes)" if existing is None else f"{path} is already stored"

    return run_action(wiki, actor, "ingest", path, apply)
