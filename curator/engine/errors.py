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


class DiskFull(CuratorError):
    """The disk (or the user's quota) is full; the message says what was written, if anything."""


#: What a full disk looks like: ``OSError`` ENOSPC / EDQUOT, or SQLite's ``SQLITE_FULL``.
_DISK_FULL_ERRNOS = frozenset({28, 122})  # ENOSPC, EDQUOT (Linux)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) means the disk or the quota is full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS:
            return True
        text = str(exc).lower()
        if type(exc).__name__ in ("OperationalError", "GitError") and (
                "disk is full" in text or "no space left" in text or "out of diskspace" in text
                or "disk quota exceeded" in text):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


#: The one line a full disk is reported with when nothing was written.
DISK_FULL_NOTHING_WRITTEN = "disk full: nothing was written; free some space and try again"
