"""The review queues: health (the landing view), link repair, duplicates, the inbox, auto-filed
pages and lint, on the common ground of :mod:`~curator.views.review.base`.

May import: :mod:`~curator.views.page`, :mod:`~curator.views.browser.browser`, the shared view modules,
models and the engine.
"""

#: The facts view's queues, in tab order: its tabs and ``curator gui --view facts:QUEUE`` (checked
#: while the arguments are parsed, so here, with nothing of Qt imported).
FACT_QUEUES: tuple[str, ...] = ("similar", "conflicts", "stale")
