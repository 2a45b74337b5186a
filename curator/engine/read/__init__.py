"""What readers are shown: the read paths (read, neighbours, read-all) the CLI, the MCP server
and the station share, the context injected into an agent's prompt, and the record of every
injection (written as an action).

May import: the wiki and everything below it, and :mod:`~curator.engine.write`.
"""
