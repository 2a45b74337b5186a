"""Facts by meaning (issue 41): every fact of every page embedded and kept in a local index,
the facts that say the same thing, the facts that disagree and the facts gone stale.

Owns the embedders (:mod:`.embed`: the local default and an OpenAI-compatible endpoint), the
fact index under the wiki's local state (:mod:`.index`), the groups of similar facts
(:mod:`.similar`) and the conflict and staleness queues built on them.

May import: corpus, repo, policy, search, wiki/session, write (the level of dedup). Only the CLI,
the MCP server, the views and packages above this level import it.
"""
