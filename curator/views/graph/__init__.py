"""The graph view: the link graph drawn with pyqtgraph, its edges and nodes drawn off the GUI
thread.

May import: :mod:`~curator.views.page`, :mod:`~curator.views.browser.browser`, the shared view modules,
models and the engine.
"""
