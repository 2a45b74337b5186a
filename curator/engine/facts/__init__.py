"""Review by meaning: facts that say the same thing, facts that disagree, facts gone stale.

Built on :func:`curator.engine.corpus.facts.page_facts` (what a fact is); owns the fact index and
its embedders, the similar/conflict/stale queues, the "both are true" decision file and the
optional judge. Only higher layers, the command line, the MCP server and the views import it.
"""
