"""Which views the main window carries besides the page view.

Each view is a widget that gets the :class:`MainWindow` (for the workspace, the writer queues and
result reporting) and registers itself under the name ``--screenshot --view NAME`` uses. A view
that fills itself asynchronously has a ``content_ready`` signal and ``is_content_ready()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from curator.views.shell.main_window import MainWindow


def install_views(window: MainWindow) -> None:
    from curator.views.graph.graph_view import GraphView
    from curator.views.history.history_view import HistoryView
    from curator.views.policy.policy_view import PolicyView
    from curator.views.review.auto_filed import AutoView
    from curator.views.review.duplicates import DedupView
    from curator.views.review.facts import FactsView
    from curator.views.review.health import HealthView
    from curator.views.review.inbox import InboxView
    from curator.views.review.links import LinksView
    from curator.views.review.lint import LintView

    window.add_view("health", HealthView(window), "Health", first=True)  # the landing view
    window.add_view("graph", GraphView(window), "Graph")
    window.add_view("dedup", DedupView(window), "Duplicates")
    window.add_view("links", LinksView(window), "Links")
    window.add_view("lint", LintView(window), "Lint")
    window.add_view("facts", FactsView(window), "Facts")
    window.add_view("inbox", InboxView(window), "Inbox")
    window.add_view("auto", AutoView(window), "Auto-filed")
    window.add_view("policy", PolicyView(window), "Policy")
    window.add_view("history", HistoryView(window), "History")
