"""Review by meaning (issue 41, docs/design.md §15): every fact of every page embedded and kept in
a local index, and the queues built on it: facts that say the same thing (:mod:`.similar`), facts
that disagree (:mod:`.conflicts`, the "both are true" decisions in :mod:`.decisions`, the optional
judge in :mod:`.judge`) and facts gone stale (:mod:`.stale`, with its ``verify`` and ``retire``).

Built on :func:`curator.engine.corpus.facts.page_facts` (what a fact is). Owns the embedders
(:mod:`.embed`: the local default and an OpenAI-compatible endpoint) and the fact index under the
wiki's local state (:mod:`.index`).

May import: corpus, repo, policy, search, wiki/session, write (the level of dedup). Only the CLI,
the MCP server, the views and packages above this level import it.
"""
