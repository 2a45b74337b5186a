"""History: every action with its diff, undo and revert.

May import: :mod:`~curator.views.page`, :mod:`~curator.views.browser.browser`, the shared view modules,
models and the engine.
"""
