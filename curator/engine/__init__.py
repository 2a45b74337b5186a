"""The headless Curator engine.

Everything the GUI, the command line and the MCP server do goes through here. Nothing below
this package imports Qt: the engine reports changes through plain-Python events
(:mod:`curator.engine.events`) that the ``_qt`` adapters forward to the GUI thread.

Importing this package is cheap on purpose; import the submodule you need.
"""
