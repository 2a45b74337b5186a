"""The link graph: nodes and edges per reader, its exports, the force-directed layout the
station draws and the communities of a big wiki's overview.

May import: the wiki and everything below it, :mod:`~curator.engine.write`,
:mod:`~curator.engine.read` and :mod:`~curator.engine.filing`.
"""
