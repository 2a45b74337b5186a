"""Review by meaning (issue 41, docs/design.md §15): the facts of the wiki's pages compared
by what they say (similar facts, conflicting facts) and by how old they are (the stale queue, with
its ``verify`` and ``retire`` actions).

May import: any engine package below it (corpus, repo, policy, search, wiki/session, write);
imported only by higher layers, the command line, the MCP server and the views.
"""
