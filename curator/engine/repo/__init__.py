"""The wiki's git repository and what keeps writes to it safe.

Owns the one git backend (every git process Curator starts is started in
:mod:`curator.engine.repo.git`), the per-wiki exclusive write lock and the action journal
``.curator/journal.jsonl``.

May import: the shared modules and :mod:`curator.engine.corpus`.
"""
