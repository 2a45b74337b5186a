"""Curator: a curation station for LLM-maintained markdown knowledge wikis.

Layout (docs/design.md §1):
- ``curator.engine``   the headless engine (no Qt anywhere below it)
- ``curator.commands`` the command-line handlers, one module per command group
- ``curator.models``   Qt item models that adapt engine data for views
- ``curator.views``    widgets, windows and dialogs
- ``curator.cli``      the ``curator`` command line, ``curator.views.shell.app`` the GUI start-up
"""

__version__ = "0.1.0"
