"""Which views the main window carries besides the page view.

Each view is a widget that gets the :class:`MainWindow` (for the workspace, the writer queues and
result reporting) and registers itself under the name ``--screenshot --view NAME`` uses. A view
that fills itself asynchronously has a ``content_ready`` signal and ``is_content_ready()``.

:data:`VIEWS` is the one list of them: the window is built from it, and ``curator gui --view`` is
checked against it (:func:`check_view`) before anything of Qt is imported, so this module imports
no view at its top (the facts view's queues, ``--view facts:QUEUE``, are
:data:`~curator.views.review.FACT_QUEUES`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from curator.views.review import FACT_QUEUES

if TYPE_CHECKING:
    from curator.views.shell.main_window import MainWindow

#: The views, in tab order, the first the landing view: (the name :meth:`MainWindow.show_view` and
#: ``--view`` know it by, its class as ``"module:Class"``, imported when a window is made, tab title).
VIEWS: tuple[tuple[str, str, str], ...] = (
    ("health", "curator.views.review.health:HealthView", "Health"),
    ("graph", "curator.views.graph.graph_view:GraphView", "Graph"),
    ("dedup", "curator.views.review.duplicates:DedupView", "Duplicates"),
    ("links", "curator.views.review.links:LinksView", "Links"),
    ("lint", "curator.views.review.lint:LintView", "Lint"),
    ("facts", "curator.views.review.facts:FactsView", "Facts"),
    ("inbox", "curator.views.review.inbox:InboxView", "Inbox"),
    ("auto", "curator.views.review.auto_filed:AutoView", "Auto-filed"),
    ("policy", "curator.views.policy.policy_view:PolicyView", "Policy"),
    ("history", "curator.views.history.history_view:HistoryView", "History"),
)
#: What ``--view`` takes besides :data:`VIEWS`' names: the window as it opens (its landing view)
#: and the page view (``page``: the page the wiki opened on; ``page:SLUG``: that page).
SPECIAL_VIEWS: tuple[str, ...] = ("main", "page")


def view_names() -> tuple[str, ...]:
    """Every name ``--view`` takes (without an argument)."""
    return (*SPECIAL_VIEWS, *(name for name, _, _ in VIEWS))


def check_view(value: str) -> str:
    """``value`` when ``curator gui --view`` takes it: one of :func:`view_names`, ``page:SLUG`` or
    ``facts:QUEUE``; else a ValueError whose one-line message lists them."""
    name, colon, arg = value.partition(":")
    if name in view_names() and (not colon or name == "page" or (name == "facts" and arg in FACT_QUEUES)):
        return value
    if name == "facts" and colon:
        raise ValueError(f"unknown facts queue {arg!r} (one of {', '.join(FACT_QUEUES)})")
    raise ValueError(f"unknown view {value!r} (one of {', '.join(view_names())}, page:SLUG, facts:QUEUE)")


def install_views(window: MainWindow) -> None:
    for i, (name, where, title) in enumerate(VIEWS):
        module, _, cls = where.partition(":")
        view = getattr(importlib.import_module(module), cls)
        window.add_view(name, view(window), title, first=i == 0)
