"""Errors the engine raises towards its callers.

A :class:`CuratorError` carries one clear line meant for a person; the CLI prints it without a
traceback, the GUI shows it in a message, the MCP server returns it as a tool error.
"""

from __future__ import annotations


class CuratorError(Exception):
    """A failure that is the user's to fix (bad input, missing wiki, ...): one readable line."""

    #: Process exit status the CLI uses for this error.
    exit_code = 1


class UsageError(CuratorError):
    """The command was called the wrong way (exit status 2)."""

    exit_code = 2


class PageNotFound(CuratorError):
    """A page reference matched no page."""


class NotAWiki(CuratorError):
    """The folder is missing or is not a wiki root."""
