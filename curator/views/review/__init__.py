"""The review queues: health (the landing view), link repair, duplicates, the inbox, auto-filed
pages and lint, on the common ground of :mod:`~curator.views.review.base`.

May import: :mod:`~curator.views.page`, :mod:`~curator.views.browser.browser`, the shared view modules,
models and the engine.
"""
