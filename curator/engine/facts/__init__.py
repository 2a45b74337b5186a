"""Review by meaning (issue 41, docs/design.md §15): the facts of the wiki's pages compared by what
they say (similar facts, conflicting facts) and by how old they are (the stale queue, with its
``verify`` and ``retire`` actions).

Built on :func:`curator.engine.corpus.facts.page_facts` (what a fact is); owns the fact index and
its embedders, the similar/conflict/stale queues, the "both are true" decision file and the
optional judge.

May import: any engine package below it (corpus, repo, policy, search, wiki/session, write);
imported only by higher layers, the command line, the MCP server and the views.
"""
