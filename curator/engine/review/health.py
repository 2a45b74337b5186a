"""Health (docs/design.md §12): one summary of a wiki's state, each figure naming the queue that fixes it.

:func:`health` counts, for what ``actor`` may see: pages, unresolved targets and links (ignored
targets left out, :mod:`curator.engine.review.linkrepair`), duplicate families (:func:`duplicate_figure`), orphans,
lint problems by kind, auto-filed pages awaiting a decision, inbox items pending and agent writes
in the last 24 hours. Every :class:`Figure` carries ``queue``: the station view that lists those
items (``links``, ``dedup``, ``lint:<kind>``, ``auto``, ``inbox``, ``history``), and the CLI names
the command that lists them.

The duplicate figure needs the dedup index, whose first scan reads every page body (many seconds
at 30,000 pages), and lint resolves every link and checks every page (about a second): :func:`health`
takes ``duplicates=False`` and ``lint=False`` to leave them out, and the station fills them in
afterwards (:func:`add_lint`, :func:`duplicate_figure` counted by its dedup worker process), so the
other figures are not kept waiting.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki

DAY_SECONDS = 24 * 3600


@dataclass(slots=True)
class Figure:
    key: str  # stable name (``unresolved_links``, ``lint:orphan``, ...)
    label: str
    value: int | None  # None: not counted (yet)
    queue: str  # the station view that lists these items ("" for none)
    command: str = ""  # the CLI command that lists them
    severity: str = "info"  # info | warning | error: how the station colours a non-zero figure
    #: ``value`` is the count for an earlier state of the pages (saved with the store), shown while
    #: the current one is counted (the station's Health; never in an agent's answer)
    stale: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "value": self.value, "queue": self.queue,
                "command": self.command, "severity": self.severity}


@dataclass(slots=True)
class Health:
    figures: list[Figure] = field(default_factory=list)
    lint: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0

    def figure(self, key: str) -> Figure | None:
        return next((f for f in self.figures if f.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {"figures": [f.to_json() for f in self.figures], "lint": dict(self.lint),
                **{f.key: f.value for f in self.figures if ":" not in f.key}}

    def render(self) -> str:
        width = max((len(f.label) for f in self.figures), default=0)
        lines = []
        for f in self.figures:
            value = "…" if f.value is None else f"{f.value:,}"
            hint = f"   ({f.command})" if f.command and f.value else ""
            lines.append(f"{f.label:<{width}}  {value:>8}{hint}")
        return "\n".join(lines)


def duplicate_figure(wiki: Wiki, actor: Actor = OPERATOR, niceness: int = 0, *, apart: bool = False) -> Figure:
    """How many duplicates wait for review: the duplicate families ``actor`` may see (dismissed
    ones left out), each reviewed once in the Duplicates view. ``niceness``: the CPU priority drop
    of a first scan's worker processes (:func:`~curator.engine.dedup.index.index_for`). ``apart`` (the station, for
    the operator only): counted by the wiki's dedup worker process (:mod:`curator.engine.dedup.worker`), so
    that no scan runs in this one."""
    if apart:
        if not actor.is_operator:
            raise ValueError("the dedup worker answers for the operator only")
        from curator.engine.dedup.families import kept_family_count
        from curator.engine.dedup.worker import worker_for

        # (the count the last full scan kept for these very pages is read here in a moment, as
        # the CLI reads it: no index is loaded for it; the worker answers anything else)
        kept = kept_family_count(wiki)
        value = kept if kept is not None else worker_for(wiki, niceness).count()
    else:
        from curator.engine.dedup.families import family_count

        value = family_count(wiki, actor, niceness=niceness)
    return Figure("duplicates", "Duplicate families", value, "dedup", "curator dedup --groups", "warning")


def saved_duplicate_figure(wiki: Wiki) -> Figure | None:
    """The operator's duplicate figure as the result the last full dedup scan kept holds it, read in
    a moment without the dedup worker; ``stale`` when the pages changed since it was kept (then the
    station shows it as being counted until :func:`duplicate_figure` answers). None: none kept."""
    from curator.engine.dedup.families import saved_family_count

    saved = saved_family_count(wiki)
    if saved is None:
        return None
    value, stale = saved
    return Figure("duplicates", "Duplicate families", value, "dedup", "curator dedup --groups", "warning",
                  stale=stale)


#: The three fact queues (issue 41): key, label, the Facts view's tab, the CLI command.
FACT_QUEUES = (("facts_similar", "Groups of similar facts", "facts:similar", "curator facts similar"),
               ("facts_conflicts", "Facts that disagree", "facts:conflicts", "curator facts conflicts"),
               ("facts_stale", "Stale facts", "facts:stale", "curator facts stale"))


def uncounted_fact_figures() -> list[Figure]:
    """The three fact queues' figures before they are counted (what the station shows meanwhile)."""
    return [Figure(key, label, None, queue, command, "warning") for key, label, queue, command in FACT_QUEUES]


#: Above this many pages Health counts the fact queues itself only once a whole-wiki queue has run
#: (the fact index then keeps each text's nearest and the pairs read, and a count costs what
#: changed since): a first run on a big wiki reads every pair of close texts (minutes at 32,000
#: pages), which the operator starts by opening a queue.
FACT_COUNT_MAX_PAGES = 500


def fact_figures(wiki: Wiki, actor: Actor = OPERATOR, force: bool = False) -> list[Figure] | None:
    """The three fact queues' sizes for what ``actor`` may see; None (not counted) on a wiki of
    more than :data:`FACT_COUNT_MAX_PAGES` pages whose queues never ran, unless ``force``. Building the fact index embeds
    every fact (seconds on a large wiki): the station counts them on a worker thread, showing
    :func:`uncounted_fact_figures` meanwhile."""
    if not force and wiki.store.count() > FACT_COUNT_MAX_PAGES:  # (counted, not decoded: see PageStore.count)
        from curator.engine.facts.index import whole_wiki_kept

        if not whole_wiki_kept(wiki):
            return None
    from curator.engine.facts.conflict_queue import fact_conflicts
    from curator.engine.facts.similar import find_similar
    from curator.engine.facts.stale import stale_facts

    values = (len(find_similar(wiki, actor)), len(fact_conflicts(wiki, actor)), len(stale_facts(wiki, actor)))
    return [dataclasses.replace(f, value=v) for f, v in zip(uncounted_fact_figures(), values, strict=True)]


def agent_writes_since(wiki: Wiki, seconds: float, actor: Actor = OPERATOR) -> int:
    """Commits authored by agents in the last ``seconds`` that ``actor`` may see."""
    from curator.engine.write.actions import history

    since = int(time.time() - seconds)
    entries = history(wiki, 100_000, actor, options=(f"--since={since}", "--author=agent:"))
    return sum(1 for e in entries if e.actor.startswith("agent:"))


def _auto_pending(wiki: Wiki, actor: Actor) -> int:
    from curator.engine.filing.autofile import AUTO_DIR, REVIEW_DIR

    n = 0
    for path in wiki.store.paths_under(AUTO_DIR, REVIEW_DIR):  # (paths first: only the filed pages are decoded)
        if not wiki.visible(actor, path):
            continue
        page = wiki.store.page(path)
        if page is not None and (path.startswith(REVIEW_DIR + "/") or not page.meta.get("shared_to")):
            n += 1
    return n


def _inbox_pending(wiki: Wiki, actor: Actor) -> int:
    from curator.engine.review.inbox import list_items, pending_count

    return pending_count(wiki) if actor.is_operator else len(list_items(wiki, actor))


#: Lint kinds shown as their own figures, in this order; other kinds follow alphabetically.
LINT_ORDER: tuple[str, ...] = ("unresolved-link", "orphan", "ambiguous-link", "broken-anchor",
                               "missing-attachment", "frontmatter", "layer", "trust", "duplicate-basename")


def health(wiki: Wiki, actor: Actor = OPERATOR, *, duplicates: bool = True, lint: bool = True) -> Health:
    """The wiki's figures as ``actor`` sees them (see the module docstring). ``lint=False`` or
    ``duplicates=False`` leave those figures uncounted (``None``) for :func:`add_lint` and
    :func:`duplicate_figure` to fill in later."""
    start = time.perf_counter()
    collecting: AbstractContextManager[bool] = nullcontext(False)
    if duplicates:
        from curator.engine.dedup.index import held_index

        # (a parse of every page for the link figures shingles them too, for the duplicate scan)
        collecting = held_index(wiki).shingles_from_parse()
    with collecting:
        out = _figures(wiki, actor, duplicates=duplicates, lint=lint)
    out.elapsed = time.perf_counter() - start
    return out


def _figures(wiki: Wiki, actor: Actor, *, duplicates: bool, lint: bool) -> Health:
    """:func:`health`'s figures, the duplicate figure counted last."""
    from curator.engine.review.linkrepair import unresolved_totals

    out = Health()
    # (nothing decoded; the operator sees every page)
    pages = wiki.store.count() if actor.is_operator else sum(1 for p in wiki.store.paths if wiki.visible(actor, p))
    targets, links = unresolved_totals(wiki, actor)
    figs = out.figures
    figs.append(Figure("pages", "Pages", pages, "page"))
    figs.append(Figure("unresolved_targets", "Unresolved link targets", targets, "links",
                       "curator links unresolved", "warning"))
    figs.append(Figure("unresolved_links", "Unresolved links", links, "links", "curator links unresolved",
                       "warning"))
    figs.append(Figure("duplicates", "Duplicate families", None, "dedup", "curator dedup --groups", "warning"))
    figs.append(Figure("orphans", "Orphan pages", None, "lint:orphan", "curator lint"))
    figs.append(Figure("lint_problems", "Lint problems", None, "lint:", "curator lint", "warning"))
    figs.append(Figure("auto_pending", "Auto-filed pages awaiting a decision", _auto_pending(wiki, actor),
                       "auto", "curator auto list", "warning"))
    figs.append(Figure("inbox_pending", "Inbox items pending", _inbox_pending(wiki, actor), "inbox",
                       "curator inbox list", "warning"))
    figs.append(Figure("agent_writes_24h", "Agent writes in the last 24 h",
                       agent_writes_since(wiki, DAY_SECONDS, actor), "history", "curator history"))
    if lint:
        add_lint(out, wiki, actor)
    if duplicates:
        # (counted last: the figures above are all the link index answers, and a one-shot
        # command's duplicate scan lets go of it once it has counted every page's linking pages,
        # 57 MB at 32,000 pages it would otherwise hold through the scan)
        counted = duplicate_figure(wiki, actor)
        out.figures = [counted if f.key == counted.key else f for f in out.figures]
    return out


def add_lint(report: Health, wiki: Wiki, actor: Actor = OPERATOR) -> Health:
    """Count lint problems (in all, orphans, and one figure per kind) into ``report``."""
    from curator.engine.review.lint import SEVERITY, lint_counts

    by_kind = lint_counts(wiki, actor)
    report.lint = dict(sorted(by_kind.items(), key=lambda kv: (-kv[1], kv[0])))
    values = {"orphans": by_kind.get("orphan", 0), "lint_problems": by_kind.total()}
    report.figures = [dataclasses.replace(f, value=values[f.key]) if f.key in values else f
                      for f in report.figures if not f.key.startswith("lint:")]
    kinds = [k for k in LINT_ORDER if k in by_kind] + sorted(k for k in by_kind if k not in LINT_ORDER)
    for kind in kinds:
        # ("problems": lint reports a page's repeated link to one target once, so the unresolved-
        # link problems can be fewer than the unresolved links counted beside them)
        report.figures.append(Figure(f"lint:{kind}", f"Lint problems: {kind}", by_kind[kind], f"lint:{kind}",
                                     "curator lint", SEVERITY.get(kind, "warning")))
    return report
