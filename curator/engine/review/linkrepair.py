"""Link repair (docs/design.md §12): the queue of unresolved link targets and the four fixes.

:func:`unresolved` lists every target that resolves to nothing (for the actor: a link to a page it
may not see is a link to a missing page, :meth:`~curator.engine.wiki.Wiki.links_for`), with its occurrences, the
pages that link to it and up to five suggested pages (:class:`Suggester`: the same name, a name the
target is a word-wise prefix of (``[[Nocturne Bg3 V4]]`` -> ``nocturne-bg3-v4-campaign.md``) or
that is a prefix of the target, and slugSim over titles, aliases and file names; only pages the
actor may see are ever suggested). Ignored targets (:data:`IGNORED_FILE`) are left out.

Each fix is one action, one commit, undoable:

* :func:`fix` ``by="alias"``: the target becomes an alias of the chosen page (one file changed;
  every occurrence resolves through it, the linking pages are untouched);
* :func:`fix` ``by="rewrite"``: every occurrence is re-pointed at the page with its display text
  kept (``[[Nocturne Bg3 V4]]`` -> ``[[nocturne-bg3-v4-campaign|Nocturne Bg3 V4]]``), through the
  one link rewriter (:mod:`curator.engine.write.relink`); exactly the linking pages change;
* :func:`fix_many`: several targets at once (the station's bulk mode), still one commit;
* :func:`create`: a page for the target (append's scaffold, no fact yet);
* :func:`ignore`: the target is recorded in :data:`IGNORED_FILE`, a tracked decision file (like
  "not duplicates"), so it stays out of the queue for everyone who clones the wiki.

Who may: the operator always. Another actor only where the scope policy lets it write every file
the fix touches, and never where the review policy (``[review]``) would hold its write for an
operator (a fix must not be a way around the inbox). :data:`IGNORED_FILE` configures the wiki, so
``ignore`` is the operator's alone.
"""

from __future__ import annotations

import datetime as _dt
import json
import operator
import posixpath
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.links import Edge, LinkIndex
from curator.engine.corpus.markdown_scan import RawLink, split_wikilink
from curator.engine.corpus.page import link_key, parse_page
from curator.engine.corpus.slugs import slugify
from curator.engine.corpus.store import gc_paused
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.link_queue import ACCEPT_CONFIDENCE
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, ActionResult, Denied, Invalid, run_action
from curator.engine.write.decision_files import load_decision_file
from curator.engine.write.merge import action_reader, encode_writes
from curator.engine.write.relink import LinkRewrite, Retarget, rewrite_page

if TYPE_CHECKING:  # (at run time from .suggest on first use: it imports numpy, the fixes need none)
    from curator.engine.review.link_queue import Suggestion, Target
    from curator.engine.review.link_suggest import Suggester


#: The tracked decision file of ignored targets (root-level ``.curator-*``: operator-only).
IGNORED_FILE = ".curator-ignored-links.json"
METHODS: tuple[str, ...] = ("alias", "rewrite")

#: The session's cache of suggesters (:meth:`~curator.engine.session.WikiSession.names_cache`).
SUGGESTERS = "suggesters"
#: suggesters a session keeps (the operator's and a few agents'), the oldest dropped first
KEPT_SUGGESTERS = 4


def suggester_for(wiki: Wiki, links: LinkIndex) -> Suggester:
    """The :class:`Suggester` over the pages of ``links`` (one of ``wiki``'s link indexes), held by
    the wiki's session as long as those pages' names are current: it depends on the pages' paths,
    titles and aliases only, and an index updated after a change that left every name as it was
    shares them (:attr:`~curator.engine.corpus.links.LinkIndex.names`), so an edit does not build it again."""
    from curator.engine.review.link_suggest import Suggester

    session = wiki.session
    names = links.names
    kept: dict[int, tuple[object, Suggester]] = session.names_cache(SUGGESTERS)
    with session.services_lock:
        cached = kept.get(id(names))
    if cached is not None and cached[0] is names:
        return cached[1]
    with gc_paused():  # ~100,000 small lists, none cyclic (see gc_paused)
        found = Suggester(links.pages)
    with session.services_lock:
        kept[id(names)] = (names, found)
        while len(kept) > KEPT_SUGGESTERS:
            del kept[next(iter(kept))]
    return found


# --- ignored targets ---------------------------------------------------------------------------------

def load_ignored(wiki: Wiki) -> dict[str, Any]:
    """The ignore file (``{"version": 1, "ignored": [{"target", "key", "by", "date"}]}``)."""
    return load_decision_file(wiki, IGNORED_FILE, "ignored")


def ignored_keys(wiki: Wiki) -> set[str]:
    out: set[str] = set()
    for entry in load_ignored(wiki)["ignored"]:
        if isinstance(entry, dict) and isinstance(entry.get("target"), str):
            out.add(link_key(str(entry.get("key") or entry["target"])))
    return out


def _render_ignored(data: dict[str, Any]) -> str:
    entries = sorted(data["ignored"], key=lambda e: str(e.get("key", "")))
    return json.dumps({**data, "ignored": entries}, ensure_ascii=False, indent=2) + "\n"


# --- the queue ---------------------------------------------------------------------------------------

@dataclass(slots=True)
class Unresolved:
    target: str  # as most often written
    key: str  # normalised (what every occurrence shares)
    count: int  # occurrences
    pages: list[str]  # linking pages, sorted
    lines: list[tuple[str, int]] = field(default_factory=list)  # (page, line) of each occurrence
    suggestions: list[Suggestion] = field(default_factory=list)
    #: how sure the top suggestion is (:meth:`~curator.engine.review.link_suggest.Suggester.confidence`)
    confidence: float = 0.0

    @property
    def sure(self) -> bool:
        """Whether the top suggestion may be taken without a look (the bulk accept takes only these)."""
        return bool(self.suggestions) and self.confidence >= ACCEPT_CONFIDENCE

    @property
    def needs_look(self) -> bool:
        """A suggestion that is not :attr:`sure`: someone must look before it is taken."""
        return bool(self.suggestions) and not self.sure

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "key": self.key, "count": self.count, "pages": list(self.pages),
                "suggestions": [s.to_json() for s in self.suggestions], "confidence": self.confidence,
                "needs_look": self.needs_look}


def _targets(links: LinkIndex, ignored: set[str]) -> dict[str, list[Edge]]:
    return {k: edges for k, edges in links.unresolved.items() if edges and k not in ignored}


def unresolved(wiki: Wiki, actor: Actor = OPERATOR, *, suggest: bool | int = True,
               keys: Iterable[str] | None = None) -> list[Unresolved]:
    """Every unresolved target ``actor`` sees (ignored ones left out), most occurrences first.

    ``keys``: only these targets (normalised). ``suggest``: True for every target's suggestions,
    False for none, a number N for the first N targets' (the rest: :func:`add_suggestions`; the
    operator's saved queue, :mod:`curator.engine.review.link_queue`, gives every target its own).

    The operator's queue is saved per page-cache state and brought up to date after a change
    (:func:`saved_queue`); an agent's is computed over the pages it may read, never saved."""
    if actor.is_operator:
        targets = saved_queue(wiki, compute=suggest is not False)
        if targets is not None:
            return _queue(targets, ignored_keys(wiki), keys, suggest is not False)
    links = wiki.links_for(actor)
    found = _targets(links, ignored_keys(wiki))
    if keys is not None:
        wanted = {link_key(k) for k in keys}
        found = {k: v for k, v in found.items() if k in wanted}
    out: list[Unresolved] = []
    with gc_paused():  # ~20,000 rows next to a wiki's millions of objects: see gc_paused
        for key, edges in sorted(found.items(), key=operator.itemgetter(0)):  # (by key, then by count below)
            if len(edges) == 1:  # most targets (a Counter and a set each cost more than the rest)
                source, link, _res = edges[0]
                out.append(Unresolved(link.target, key, 1, [source], [(source, link.line)]))
                continue
            out.append(Unresolved(_written(edges), key, len(edges), sorted({e.source for e in edges}),
                                  [(e.source, e.link.line) for e in edges]))
        out.sort(key=operator.attrgetter("count"), reverse=True)  # most first (a stable sort: keys in order)
    if suggest is not False:
        add_suggestions(wiki, out if suggest is True else out[:int(suggest)], actor)
    return out


def saved_queue(wiki: Wiki, *, compute: bool = True) -> dict[str, Target] | None:
    """The operator's unresolved targets (ignored ones too) with their suggestions, by key: the
    saved queue of the store's state, or one saved before brought up to date with the pages
    changed since, or (``compute``) computed from every page and saved. None: none saved and not
    ``compute``, or the store has no state to save under (see :mod:`curator.engine.review.link_queue`)."""
    from curator.engine.review import link_queue

    store = wiki.store
    store.count()  # (refreshed once: the state and the attachment files are current; nothing decoded)
    state = store.state
    if state is None:
        return None
    files = store.attachments_key()
    found = store.derived_since(link_queue.SAVED_NAME)
    read = link_queue.read_targets(found[0], files) if found is not None else None
    if found is not None and read is not None:
        targets, pages_blob = read
        if not found[1]:
            return targets
        done = link_queue.updated(wiki, targets, pages_blob, found[1])
        if done is not None:
            if done[2]:  # (as saved: the same bytes hold for this state, not encoded again)
                store.carry_derived(link_queue.SAVED_NAME, found, state=state)
            else:
                store.save_derived(link_queue.SAVED_NAME, link_queue.saved_blob(files, targets, done[0]), state=state)
            return targets
    elif not compute:
        return None
    links = wiki.links_for(OPERATOR)
    targets, pages = link_queue.computed(links, suggester_for(wiki, links))
    store.save_derived(link_queue.SAVED_NAME, link_queue.saved_blob(files, targets, pages), state=state)
    return targets


def _saved_counts(wiki: Wiki) -> dict[str, int] | None:
    """Each key's number of links in the operator's queue saved for the store's very state (read
    apart from the targets: at 100,000 pages decoding every target was 0.4 s of Health's first
    figures); None when none is saved for it (:func:`saved_queue` brings one up to date)."""
    from curator.engine.review import link_queue

    store = wiki.store
    store.count()  # (refreshed once, as saved_queue)
    blob = store.derived(link_queue.SAVED_NAME)
    return link_queue.read_counts(blob, store.attachments_key()) if blob is not None else None


def _queue(targets: dict[str, Target], ignored: set[str], keys: Iterable[str] | None,
           suggest: bool) -> list[Unresolved]:
    """:func:`unresolved`'s rows from the saved targets (the same rows, in the same order)."""
    from curator.engine.review.link_queue import Suggestion

    wanted = {link_key(k) for k in keys} if keys is not None else None
    out: list[Unresolved] = []
    new = tuple.__new__
    with gc_paused():
        for key in sorted(targets):
            if key in ignored or (wanted is not None and key not in wanted):
                continue
            t = targets[key]
            found = t.occurrences
            if len(found) == 1:
                source, _written_as, line = found[0]
                item = Unresolved(t.written, key, 1, [source], [(source, line)])
            else:
                item = Unresolved(t.written, key, len(found), sorted({o[0] for o in found}),
                                  [(o[0], o[2]) for o in found])
            if suggest and t.suggestions:
                item.suggestions = [new(Suggestion, s) for s in t.suggestions]
                item.confidence = t.confidence
            out.append(item)
        out.sort(key=operator.attrgetter("count"), reverse=True)
    return out


def add_suggestions(wiki: Wiki, items: Iterable[Unresolved], actor: Actor = OPERATOR) -> None:
    """Fill in the suggestions of ``items`` (pages ``actor`` may see only)."""
    suggester = suggester_for(wiki, wiki.links_for(actor))
    items = list(items)
    with gc_paused():
        for item, found in zip(items, suggester.suggest_many([item.target for item in items]), strict=True):
            item.suggestions = found
            item.confidence = suggester.confidence(item.target, found) if found else 0.0


def _written(edges: Sequence[Edge]) -> str:
    """The target as its links most often write it (equal counts: the first written)."""
    written = [e.link.target for e in edges]
    if written.count(written[0]) == len(written):  # (most targets are written one way)
        return written[0]
    return Counter(written).most_common(1)[0][0]


def held_queue(wiki: Wiki) -> bytes | None:
    """The bytes of the operator's queue saved for the store's state, or for an earlier one the
    pages changed since leave as it is (:func:`~curator.engine.review.link_queue.unchanged`: an
    agent's append of a fact without a new unresolved link), which is then carried to this state;
    None otherwise, or when it was saved with other attachment files (:func:`saved_queue` brings
    it up to date). No target is decoded."""
    from curator.engine.review import link_queue

    store = wiki.store
    store.count()  # (refreshed once, as saved_queue)
    state, files = store.state, store.attachments_key()
    found = store.derived_since(link_queue.SAVED_NAME) if state is not None else None
    if found is None or not link_queue.holds(found[0], files):
        return None
    if found[1]:
        if not link_queue.unchanged(wiki, found[0], files, found[1]):
            return None
        store.carry_derived(link_queue.SAVED_NAME, found, state=state)
    return found[0]


def _carried_counts(wiki: Wiki) -> dict[str, int] | None:
    """:func:`_saved_counts` of the queue saved for an earlier state when the pages changed since
    leave it as it is (:func:`held_queue`)."""
    from curator.engine.review import link_queue

    blob = held_queue(wiki)
    return link_queue.read_counts(blob, wiki.store.attachments_key()) if blob is not None else None


def unresolved_totals(wiki: Wiki, actor: Actor = OPERATOR) -> tuple[int, int]:
    """(unresolved targets, unresolved links) ``actor`` sees, ignored targets left out (the
    operator's from the saved queue, :func:`saved_queue`)."""
    if actor.is_operator:
        counts = _saved_counts(wiki)
        if counts is None:
            counts = _carried_counts(wiki)
        if counts is None:
            targets = saved_queue(wiki)
            if targets is not None:
                counts = {k: len(t.occurrences) for k, t in targets.items()}
        if counts is not None:
            ignored = ignored_keys(wiki)
            kept = [n for k, n in counts.items() if k not in ignored]
            return len(kept), sum(kept)
    found = _targets(wiki.links_for(actor), ignored_keys(wiki))
    return len(found), sum(len(v) for v in found.values())


def _one(wiki: Wiki, target: str, actor: Actor) -> tuple[str, list[Edge]]:
    """The key and occurrences of an unresolved ``target``; :class:`Invalid` when it is none."""
    inner = str(target).strip().removeprefix("![[").removeprefix("[[").removesuffix("]]")
    key = link_key(split_wikilink(inner)[0])  # as written in a page too: [[Target#Sec|text]]
    edges = wiki.links_for(actor).unresolved.get(key) if key else None
    if not edges:
        raise Invalid(message=f"no link to {target!r} is unresolved (see 'curator links unresolved')")
    return key, list(edges)


# --- policy ---------------------------------------------------------------------------------------------

def _check(ctx: ActionContext, path: str, *, creates: bool, text: str | None = None) -> str:
    """``path`` checked for the actor: the scope policy, and (for an agent) the review policy,
    which a fix must not get around."""
    path = ctx.check_write(path)
    actor = ctx.actor
    if actor.is_agent:
        policy = ctx.wiki.policy
        review_reason = getattr(policy, "review_reason", None)
        if review_reason is not None:
            layer = parse_page(path, text.encode("utf-8"))[0].layer if text is not None else None
            why = review_reason(actor, path, creates=creates, layer=layer)
            if why is not None:
                raise Denied(message=f"{actor} may not repair links here: {why}; an operator does it "
                             "(or write the fact through append, which queues it for review)")
    return path


# --- fixes ----------------------------------------------------------------------------------------------

def _sentinel(key: str) -> str:
    return f"\0unresolved\0{key}"  # never a path: the "page" an unresolved key points at now


def _resolver(links: LinkIndex, keys: set[str]) -> Any:
    def resolve(link: RawLink, source: str) -> str | None:
        res = links.resolve(link.target, source)
        if res.resolved:
            return res.path
        key = link_key(link.target)
        return _sentinel(key) if key in keys else None

    return resolve


def _add_alias(text: str, path: str, names: Sequence[str]) -> tuple[str, list[str]]:
    page, _ = parse_page(path, text.encode("utf-8"))
    have = {a.casefold() for a in page.aliases}
    new = [n for n in dict.fromkeys(names) if n.casefold() not in have]
    if not new:
        return text, []
    parts = frontmatter.split(text)
    if parts.problem or (parts.raw is not None and frontmatter.load(parts.raw)[1]):
        raise Invalid(message=f"{path} has malformed frontmatter; fix it first so the alias can be added")
    return frontmatter.update(text, {"aliases": [*page.aliases, *new]}), new


@dataclass(slots=True)
class FixPlan:
    by: str
    fixes: list[tuple[str, str, str]]  # (target as written, key, page)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # page -> aliases added
    rewrites: list[LinkRewrite] = field(default_factory=list)
    writes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    links: int = 0  # occurrences repaired

    @property
    def changed(self) -> list[str]:
        return sorted(self.writes)

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "fixes": [{"target": t, "key": k, "page": p} for t, k, p in self.fixes],
                "links": self.links,
                "aliases_added": self.aliases, "rewrites": [r.to_json() for r in self.rewrites],
                "pages_changed": self.changed}

    def render(self) -> str:
        lines = []
        for t, _k, p in self.fixes:
            lines.append(f"[[{t}]] -> {p} (by {self.by})")
        for page, names in self.aliases.items():
            lines.append(f"  {page}: aliases + {', '.join(names)}")
        lines += [f"  {r.render()}" for r in self.rewrites]
        lines.append(f"{len(self.changed)} file(s) change")
        return "\n".join(lines)


def _plan(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor,
          read: Any, ctx: ActionContext | None) -> FixPlan:
    if by not in METHODS:
        raise Invalid(message=f"--by must be alias or rewrite, not {by!r}")
    if not pairs:
        raise Invalid(message="nothing to fix: name at least one target")
    links = wiki.links_for(actor)
    plan = FixPlan(by, [])
    occurrences: dict[str, list[Edge]] = {}
    dest: dict[str, str] = {}
    for target, to in pairs:
        key, edges = _one(wiki, target, actor)
        page = wiki.find(to, actor).path
        written = _written(edges)
        plan.fixes.append((written, key, page))
        occurrences[key] = edges
        plan.links += len(edges)
        dest[_sentinel(key)] = page
    texts: dict[str, tuple[str, bool]] = {}

    def text_of(path: str) -> tuple[str, bool]:
        if path not in texts:
            texts[path] = read(path)
        return texts[path]

    if by == "alias":
        for written, key, page in plan.fixes:
            text, bom = plan.writes.get(page) or text_of(page)
            if ctx is not None:
                _check(ctx, page, creates=False, text=text)
            new, added = _add_alias(text, page, [written])
            if link_key(written) != key:  # the alias must normalise to the key every occurrence has
                raise Invalid(message=f"{written!r} cannot be an alias that resolves {key!r}")
            if added:
                plan.aliases.setdefault(page, []).extend(added)
                plan.writes[page] = (new, bom)
        return plan
    retarget = Retarget(links, dest, resolve=_resolver(links, set(occurrences)))
    sources = sorted({e.source for edges in occurrences.values() for e in edges})
    for path in sources:
        text, bom = text_of(path)
        if ctx is not None:
            _check(ctx, path, creates=False, text=text)
        new, rewrites = rewrite_page(text, path, retarget)
        plan.rewrites += rewrites
        if new != text:
            plan.writes[path] = (new, bom)
    return plan


def _plain_read(wiki: Wiki) -> Any:
    from curator.engine.write.merge import plain_reader

    return plain_reader(wiki)


def preview_fix(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor = OPERATOR) -> FixPlan:
    """What :func:`fix_many` would change (nothing written)."""
    return _plan(wiki, pairs, by, actor, _plain_read(wiki), None)


def fix(wiki: Wiki, target: str, to: str, by: str, actor: Actor = OPERATOR) -> ActionResult:
    """Repair every occurrence of ``target`` by pointing it at the page ``to`` (one commit)."""
    return fix_many(wiki, [(target, to)], by, actor)


def fix_many(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor = OPERATOR) -> ActionResult:
    """Repair several targets, each at its page, in ONE action and commit (the bulk mode)."""
    label = (f"{pairs[0][0]} -> {pairs[0][1]}" if len(pairs) == 1 else f"{len(pairs)} targets") if pairs else ""

    def apply(ctx: ActionContext) -> None:
        plan = _plan(wiki, pairs, by, actor, action_reader(ctx), ctx)
        ctx.journal.update(by=by, targets=[k for _t, k, _p in plan.fixes])
        ctx.write_many(encode_writes(plan.writes))
        n = plan.links
        ctx.status = Status.FIXED
        what = (f"alias added to {len(plan.writes)} page(s)" if by == "alias"
                else f"{len(plan.rewrites)} link(s) rewritten in {len(plan.writes)} page(s)")
        ctx.message = f"{len(plan.fixes)} target(s), {n} link(s) repaired: {what}"
        ctx.data.update(plan.to_json())
        ctx.data["links"] = n

    return run_action(wiki, actor, "link_fix", f"{label} (by {by})", apply)


def _create_path(wiki: Wiki, written: str) -> tuple[str, str]:
    """(page path, title) for a page the target names."""
    raw = written.strip().replace("\\", "/")
    if raw.lower().endswith(".md"):
        raw = raw[:-3]
    if "/" in raw:
        folder, _, name = raw.rpartition("/")
        parts = [p for p in folder.split("/") if p]
        if any(p in ("..", ".") for p in parts):
            raise Invalid(message=f"cannot create a page for {written!r}: '..' is not allowed")
        slug = slugify(name)
        if not slug:
            raise Invalid(message=f"cannot create a page for {written!r}: it has no letters or digits")
        return f"{'/'.join(parts)}/{slug}.md", name.strip()
    slug = slugify(raw)
    if not slug:
        raise Invalid(message=f"cannot create a page for {written!r}: it has no letters or digits")
    folder = "wiki/" if (wiki.root / "wiki").is_dir() else ""
    return f"{folder}{slug}.md", raw


def create(wiki: Wiki, target: str, actor: Actor = OPERATOR, today: _dt.date | None = None) -> ActionResult:
    """Create the page an unresolved ``target`` names (append's scaffold, no fact): one commit."""
    day = today or _dt.date.today()

    def apply(ctx: ActionContext) -> None:
        from curator.engine.corpus.facts import scaffold
        from curator.engine.write.append import route

        key, edges = _one(wiki, target, actor)
        written = _written(edges)
        path, title = _create_path(wiki, written)
        slug = posixpath.splitext(posixpath.basename(path))[0]
        if "/" not in written:
            route(wiki, slug, actor)  # a name taken by a page the actor may not see: Denied
        path = _check(ctx, path, creates=True)
        if ctx.read_bytes(path) is not None:
            raise Invalid(message=f"{path} exists already; fix the link with 'curator links fix'")
        text = scaffold(slug, "", day, title=title)
        if key not in (link_key(title), link_key(path), link_key(slug)):  # e.g. [[C++ Guide]]: c-guide.md
            text = frontmatter.update(text, {"aliases": [written]})
        ctx.journal.update(page=path, key=key)
        ctx.write_text(path, text)
        ctx.status = Status.CREATED
        ctx.message = f"created {path}: {len(edges)} link(s) to [[{written}]] now resolve"
        ctx.data.update(page=path, target=written, key=key, links=len(edges))

    return run_action(wiki, actor, "link_create", str(target), apply)


def ignore(wiki: Wiki, target: str, actor: Actor = OPERATOR) -> ActionResult:
    """Leave ``target`` out of the queue for good: a committed entry in :data:`IGNORED_FILE`."""

    def apply(ctx: ActionContext) -> None:
        ctx.check_write(IGNORED_FILE)  # operator-only (a decision file), before anything is read
        key, edges = _one(wiki, target, actor)
        written = _written(edges)
        data = load_ignored(wiki)
        ctx.data.update(target=written, key=key)
        if key in ignored_keys(wiki):
            ctx.status = Status.UNCHANGED
            ctx.message = f"[[{written}]] is already ignored"
            return
        data["ignored"].append({"target": written, "key": key, "by": str(actor),
                                "date": _dt.date.today().isoformat()})
        ctx.write_text(IGNORED_FILE, _render_ignored(data))
        ctx.status = Status.IGNORED
        ctx.message = f"[[{written}]] ignored ({len(edges)} link(s)); it no longer shows in the queue"

    return run_action(wiki, actor, "link_ignore", str(target), apply)
