"""What a commit changed, as text for people (the station's history view, ``curator history``)."""

from __future__ import annotations

from .actions import git_of
from .errors import CuratorError
from .wiki import Wiki

MAX_DIFF_CHARS = 400_000


def commit_diff(wiki: Wiki, commit: str) -> str:
    """The patch of ``commit`` (stat summary, then the diff), cut at a readable size."""
    if not commit or not all(c in "0123456789abcdef" for c in commit.lower()):
        raise CuratorError(f"{commit!r} is not a commit id")
    text, more = git_of(wiki).out_head("show", "--no-color", "--stat", "--patch",
                                       "--format=%H%n%an <%ae>%n%aI%n%n%B", commit, limit=MAX_DIFF_CHARS)
    if more or len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n… diff cut at {MAX_DIFF_CHARS:,} characters\n"
    return text
