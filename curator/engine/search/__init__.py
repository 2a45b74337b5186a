"""Full-text search: the query language and the SQLite FTS5 index kept in step with the
page store.

May import: the shared modules, :mod:`~curator.engine.corpus`, :mod:`~curator.engine.repo` and
:mod:`~curator.engine.policy` (results honour the reader's visibility).
"""
