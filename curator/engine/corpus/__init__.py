"""The corpus: what a wiki's pages are, read from disk.

Owns the one walker that says which files are pages, frontmatter and the markdown scanner, slugs,
the :class:`~curator.engine.corpus.page.Page`, link resolution and the backlink index, the
persistent page store in ``.curator/``, the file watcher, homes (several wiki roots opened
together) and the worker processes that parse a cold corpus in bulk.

May import: the engine's shared modules (``errors``, ``events``, ``status``, ``memory``). Nothing here knows
who is asking (policy) or writes to git.
"""
