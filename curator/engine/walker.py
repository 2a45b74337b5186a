"""The one walker that defines the corpus for every read and write path (SPEC §2)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

#: Folders that never hold pages, at any depth (``.obsidian`` and ``.trash`` are an Obsidian
#: vault's settings and deleted files: a vault opens unchanged, SPEC §3).
EXCLUDED_DIRS: frozenset[str] = frozenset(
    {".git", "graphify-out", "_proposed", "proposed", "imports", "raw", "_archive", ".curator",
     ".obsidian", ".trash"}
)


def utf8_name(path: str) -> bool:
    """Whether ``path`` is valid UTF-8 on disk. A file name that is not comes from the file system
    with its bad bytes as lone surrogates (Python's ``surrogateescape``): such a page is still a
    page (listed, linted, readable), but it can be stored in no UTF-8 database, file or answer."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_path(path: str) -> str:
    """``path`` as shown to people and agents: bytes that are not UTF-8 become U+FFFD."""
    if utf8_name(path):
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def json_line(data: object) -> str:
    """Compact JSON of ``data`` that always encodes as UTF-8: readable text when it can be, with a
    name that is not valid UTF-8 kept exactly as ``\\udcXX`` escapes (``json.loads`` restores it)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


def json_document(data: object) -> str:
    """``data`` as the one JSON document a command prints (the final newline included). A long
    list is written one compact item per line: still easy to read and to grep, and it uses the C
    encoder (``indent`` forces the slow pure-Python one, which cost more than everything else in
    a warm ``index --json`` of 10,000 pages). A budget in bytes (``neighbors --max-bytes``) is
    measured on exactly this text."""
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
    if isinstance(data, list) and len(data) > 50:
        return "[\n" + ",\n".join(dumps(item) for item in data) + "\n]\n"
    if isinstance(data, dict) and any(isinstance(v, list) and len(v) > 50 for v in data.values()):
        # e.g. the graph's node-link document (250,000 nodes and edges at 32,000 pages): one key
        # per line, each value in one call of the C encoder (per-item calls cost 4x more)
        items = [f"  {dumps(str(k))}: {dumps(v)}" for k, v in data.items()]
        return "{\n" + ",\n".join(items) + "\n}\n"
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


class PageFile(NamedTuple):
    """A page file as the walk saw it (a tuple: ten thousand of these are made per refresh)."""

    path: str  # posix, relative to the root
    mtime_ns: int
    size: int


def is_page_path(rel: str) -> bool:
    """Whether a root-relative posix path lies where pages live (ignores existence)."""
    parts = rel.split("/")
    return (
        rel.lower().endswith(".md")
        and ".." not in parts
        and not rel.startswith("/")
        and not any(p in EXCLUDED_DIRS for p in parts[:-1])
    )


def walk(root: Path, attachments: list[str] | None = None) -> Iterator[PageFile]:
    """Yield every page below ``root``, sorted by path within each folder.

    With ``attachments``, the root-relative paths of every other file in the same folders (images,
    PDFs, canvases: what ``[[diagram.png]]`` links to) are appended to it during the same scan;
    they are named, never stat'ed or read.

    Symlinks inside the tree are never followed: one that leaves the root is outside the wiki,
    and one that stays inside points at a page (or folder) the walk reaches at its real path, so
    following it would count pages twice or loop. Every page therefore appears exactly once.
    """
    stack: list[tuple[str, str]] = [(os.path.realpath(root), "")]
    by_name = attrgetter("name")
    excluded = EXCLUDED_DIRS
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        entries.sort(key=by_name)
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            try:
                # d_type answers these without a system call; symlinks are neither
                if entry.is_dir(follow_symlinks=False):
                    if name not in excluded:
                        subdirs.append((entry.path, f"{rel_dir}{name}/"))
                    continue
                if name[-3:].lower() != ".md" or entry.is_symlink():
                    if attachments is not None and not name.startswith(".") and not entry.is_symlink():
                        attachments.append(f"{rel_dir}{name}")
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield PageFile(f"{rel_dir}{name}", st.st_mtime_ns, st.st_size)
        stack.extend(reversed(subdirs))
