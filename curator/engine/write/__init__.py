"""Every mutation of a wiki: the action machinery and the writes built on it.

Owns :mod:`~curator.engine.write.actions` (lock, policy check per path, atomic writes, one
commit, the journal, undo), the agents' one write door (:mod:`~curator.engine.write.append`),
the writes that hold a fact for review (:mod:`~curator.engine.write.held`), the operator's edits,
property edits, move/rename/archive, merging pages, re-pointing links, the tracked decision files
and ``curator init`` (:mod:`~curator.engine.write.bootstrap`).

May import: everything below :class:`~curator.engine.wiki.Wiki` and the wiki itself.
"""
