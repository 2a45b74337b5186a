"""What a commit changed, as text for people (the station's history view, ``curator history``)."""

from __future__ import annotations

from curator.engine.errors import CuratorError
from curator.engine.wiki import Wiki
from curator.engine.write.actions import git_of

MAX_DIFF_CHARS = 400_000
#: Commits touching more files than this get a one-line summary instead of the per-file stat.
MAX_STAT_FILES = 500


def commit_diff(wiki: Wiki, commit: str) -> str:
    """The patch of ``commit`` (stat summary, then the diff), cut at a readable size."""
    if not commit or not all(c in "0123456789abcdef" for c in commit.lower()):
        raise CuratorError(f"{commit!r} is not a commit id")
    g = git_of(wiki)
    # The stat summary needs every file's diff before git prints a line: for an import commit of
    # a whole wiki (32,000 files) that alone took seconds. Count the files first (a tree diff,
    # cheap) and give such a commit a one-line summary instead.
    files = g.changed_count(commit)
    stat = files <= MAX_STAT_FILES
    text, more = g.patch(commit, stat=stat, limit=MAX_DIFF_CHARS)
    if not stat:
        head, sep, rest = text.partition("\ndiff --git ")
        text = f"{head}\n {files:,} files changed\n{sep}{rest}" if sep else f"{text}\n {files:,} files changed"
    if more or len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n… diff cut at {MAX_DIFF_CHARS:,} characters\n"
    return text
