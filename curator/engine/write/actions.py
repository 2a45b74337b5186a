"""Actions: the one mechanism behind every mutation of a wiki (docs/design.md §5).

Append, property edits, merge, "not duplicates" decisions, confirm/share/remove of auto-filed
pages, revert, sync: each is an *action*, whatever door it came through (GUI, CLI, MCP). An action

1. takes the wiki's exclusive write lock (:mod:`curator.engine.repo.lock`, 3.75 s patience, else ``locked``) and
   pauses the cyclic garbage collector until it is done (:func:`~curator.engine.corpus.store.gc_paused`: nothing an
   action builds is cyclic, and a collection mid-merge re-scans the whole cached wiki);
2. first finishes an *interrupted earlier action* from its pending record (see "Atomicity"
   below: rolled wholly forward or wholly back, never committed half-done), and picks up pages
   other processes changed (via the journal);
3. runs your ``apply(ctx)``, which reads and writes files only through the
   :class:`ActionContext` (paths checked against the wiki root and the write policy, writes atomic:
   temp file + fsync + rename; any exception rolls every write of the action back);
4. commits exactly the touched paths with subject ``<action>: <target>``, authored by the actor
   (a file that had uncommitted edits before the action gets HEAD's version plus the action's
   own change committed; the edits stay in the file, unstaged: see "Someone else's edits");
5. appends one journal line, refreshes the page cache for the changed paths (which updates store
   extensions such as the search index and emits ``wiki.changed``) and returns an
   :class:`ActionResult`.

Atomicity (docs/design.md §5)
-------------------
A multi-file action (a merge rewriting links on hundreds of pages, a move, an archive) must never
be committed half-done. The pending record ``.curator/pending.jsonl`` makes every action all or
nothing, whatever ``apply`` does, by appending (O(1) each, never rewriting) in this order:

1. a header (action, target, actor, the HEAD it started from) and, for each path, *before that
   file changes*, ``{"path", "orig"}``: the blob sha of its previous bytes, written into git's
   object database first (``null`` when the file did not exist);
2. once ``apply`` has returned and every file is written, ``{"phase": "commit", "changed",
   "body", "journal", "contents"}``, then the commit is made;
3. after a commit whose index update failed, ``{"phase": "committed", "commit"}``;
4. after the journal line, the record is deleted.

Recovery (:func:`recover_pending`, run by the next action, ``undo`` and ``curator recover``)
reads the record: without the commit line the action was stopped while applying and is **rolled
back** (each path gets its ``orig`` bytes again, or is removed; nothing is committed, answer
``rolled_back``); with it, the action is **rolled forward**: if HEAD already has its commit (or
the journal has the action) only the journal and git's index are brought in line, else the
recorded paths are committed as ``recover: <action>: <target>``, which ``undo`` treats as that
action. A kill at any point therefore leaves, after recovery, the whole action or none of it
(``tests/engine/write/test_action_atomicity.py`` SIGKILLs a 200-page merge 50 times and checks the tree).

Someone else's edits
--------------------
A file that differs from HEAD before the action first touches it holds edits nobody committed
(an operator's editor, say). They are never swept into the action's commit: the commit gets
HEAD's version with the action's own change (``original -> new``) merged in by ``git
merge-file``, and the file keeps both (so ``git status`` still shows the edits as unstaged). If
the two overlap, or the action removes such a file, the action is refused (``invalid``, a message
naming the page); an untracked file has no committed version to keep apart and is committed as
written.

API
---
``run_action(wiki, actor, name, target, apply, *, body="") -> ActionResult``
    ``name`` is lowercase ``[a-z][a-z0-9_]*`` (``wiki_append``, ``merge``, ``dismiss``, ...);
    ``target`` a short human string (a slug, ``a + b``, a path). ``apply(ctx)`` may return
    nothing; it sets ``ctx.status`` / ``ctx.message`` / ``ctx.data`` for the answer, or raises
    :class:`Denied` / :class:`Invalid` / :class:`ActionFailed` for an error answer (nothing is
    kept). An apply that writes nothing (a ``duplicate`` answer, say) makes no commit.

``ActionContext`` (what ``apply`` gets): ``wiki``, ``actor``, ``name``, ``target``, ``status``
    (default ``Status.OK``), ``message``, ``data`` (dict merged into the JSON answer), ``journal``
    (extra fields for the journal line; set them *before* writing, they are also kept in the
    pending marker), ``body`` (commit message body). Methods: ``safe_path(rel)`` (normalised
    root-relative posix path or :class:`Invalid`), ``check_write(rel)`` (policy, raises
    :class:`Denied`), ``read_bytes(rel)``, ``read_text(rel)`` (:class:`Invalid` on invalid UTF-8;
    returns the decoded text and its :class:`~curator.engine.corpus.page.Decoded` flags), ``write_bytes(rel, data)``,
    ``write_text(rel, text, bom=False)``, ``write_many({rel: data})`` (thousands of files at once:
    one marker save, in-place writes of the changed bytes, an fsync of exactly those files), ``move(src, dst)``, ``delete(rel, archive=True)``
    (moves to ``_archive/<rel>``; returns the archive path), ``touched`` (paths in order).

``ActionResult``: ``status`` (a :class:`~curator.engine.status.Status`), ``message``, ``commit`` (sha or
    None), ``changed`` (paths), ``data``; ``ok`` / ``is_error`` (decided by
    :attr:`Status.is_error <.status.Status.is_error>`: ``locked``, ``denied``, ``invalid``,
    ``error``); ``to_json()`` -> ``{"status", "message", "commit", "changed", **data}``.
    A failed git commit is reported, not fatal: the status stays (the files are written), commit
    is None, ``data["commit_error"]`` says why, and the next action's recovery commits the paths.
    A commit made whose git index could not be updated is a commit (``commit`` set,
    ``data["index_error"]``); the next action repairs the index.

Policy: every path an action writes, moves or deletes (both ends of a move, and the archive
    copy) goes through ``wiki.check_write(actor, path)`` (a :class:`~curator.engine.policy.scope.Decision`; the
    operator is always allowed, others per ``wiki.policy.check_write``, i.e. the scope policy,
    re-read when ``.scope.toml`` changed). A refusal is a ``denied`` answer quoting its reason.

``undo(wiki, actor)`` reverts the newest action not yet reverted; ``redo(wiki, actor)`` reverts
    the last undo (until a new action is made); ``revert(wiki, actor, commit)`` reverts a given one.
    Undo and revert are actions named ``revert`` (subject ``revert: <original subject>``), redo
    one named ``redo`` (subject ``redo: <the subject the undo took back>``); all have the body
    ``This reverts commit <sha>.`` and are applied file by file with a three-way merge, so later
    unrelated changes survive; a conflict is an ``invalid`` answer, nothing written.
``history(wiki, limit=50)``: :class:`HistoryEntry` list, newest first, from one ``git log``.
``git_of(wiki)`` / ``journal_of(wiki)``: the wiki's :class:`~curator.engine.repo.git.Git` and :class:`~curator.engine.repo.journal.Journal`.
``atomic_write(path, data)``: temp + fsync + rename, for state files outside an action.
``recover_pending(wiki)``: run step 2 on its own (``curator recover`` does, then rebuilds from
    the journal, see :mod:`curator.engine.write.append`); ``undo`` runs it first too, so it reverts what the wiki holds.

Two repositories (share to the shared wiki): nest the actions. Inside ``apply`` of the action on
the source wiki, run the action on the shared wiki first; mark the source only when it succeeded::

    def share(ctx):
        text = ctx.read_text(path)[0]
        res = run_action(shared, ctx.actor, "share", path, lambda c: c.write_text(path, text))
        if res.is_error:
            raise ActionFailed(res.status, res.message)   # nothing written in the source
        ctx.write_text(path, mark_shared(text))           # committed after the shared copy

Locks nest per thread (different wikis); running an action on the same wiki inside its own
``apply`` raises ``RuntimeError``.

Example::

    from curator.engine.write.actions import run_action
    def apply(ctx):
        text, _ = ctx.read_text("wiki/ann.md")
        ctx.write_text("wiki/ann.md", text.replace("Ann", "Anne"))
        ctx.message = "renamed"
    result = run_action(wiki, actor, "edit", "wiki/ann", apply)
    if result.is_error: print(result.message)
    else: print(result.commit, result.changed)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import difflib
import json
import os
import posixpath
import re
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.engine.corpus.page import Decoded, decode
from curator.engine.corpus.store import gc_paused
from curator.engine.corpus.walker import json_line
from curator.engine.errors import DISK_FULL_NOTHING_WRITTEN, CuratorError, DiskFull, is_disk_full
from curator.engine.policy.actor import OPERATOR, Actor, parse_actor
from curator.engine.repo.git import Git, GitError, IndexNotUpdated, LogEntry, fsync_path, merge_file_raw
from curator.engine.repo.journal import Journal
from curator.engine.repo.lock import Locked
from curator.engine.session import PENDING_NAME, WikiSession
from curator.engine.status import Status

if TYPE_CHECKING:
    from curator.engine.repo.signing import SigningKey
    from curator.engine.wiki import Wiki

STATE_HINT = ".curator"  # where PENDING_NAME lives, for messages
ARCHIVE_DIR = "_archive"
TMP_MARK = ".curator-tmp-"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
#: Folders an action may never write into (git's and Curator's own state).
_FORBIDDEN_TOP = frozenset({".git", ".curator"})


# --- answers and errors ---------------------------------------------------------------

@dataclass(slots=True)
class ActionResult:
    status: Status
    message: str = ""
    commit: str | None = None
    changed: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    action: str = ""
    target: str = ""

    def __post_init__(self) -> None:
        # A plain string (an untyped caller, a test) is taken as the Status it names; an
        # unknown one is a ValueError here, not a wrong answer later.
        self.status = Status(self.status)

    @property
    def is_error(self) -> bool:
        return self.status.is_error

    @property
    def ok(self) -> bool:
        return not self.is_error

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status.value, "message": self.message, "commit": self.commit,
                               "changed": list(self.changed)}
        out.update(self.data)
        return out


class ActionFailed(CuratorError):
    """Raised inside ``apply`` to end the action with an error answer; every write is undone."""

    status = Status.ERROR

    def __init__(self, status: Status | None = None, message: str = "",
                 data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message
        self.data = data or {}


class Denied(ActionFailed):
    status = Status.DENIED


class Invalid(ActionFailed):
    status = Status.INVALID


def require_write(wiki: Wiki, actor: Actor, path: str) -> None:
    """:class:`Denied` unless ``actor`` may write ``path``; the message never names a path the
    actor cannot see (the same words for every hidden page, so a refusal confirms none)."""
    decision = wiki.check_write(actor, path)
    if decision.allowed:
        return
    reason = decision.reason or "the scope policy does not allow it"
    if not wiki.visible(actor, path):
        raise Denied(message=f"{actor} may not do this: {reason}")
    raise Denied(message=f"{actor} may not write {path}: {reason}")


# --- per-wiki state -----------------------------------------------------------------------

def _state(wiki: Wiki) -> WikiSession:
    return wiki.session


def git_of(wiki: Wiki) -> Git:
    """The :class:`~curator.engine.repo.git.Git` of a wiki (shared with the action machinery)."""
    return _state(wiki).git


def head_commit(wiki: Wiki) -> str | None:
    """The commit the wiki's HEAD points at (None before the first), read without a process:
    a view shows the history anew only when it moved."""
    return _state(wiki).git.head()


def journal_of(wiki: Wiki) -> Journal:
    return _state(wiki).journal


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --- the context ------------------------------------------------------------------------------

class ActionContext:
    """What ``apply`` works through: checked, atomic, undoable file operations."""

    def __init__(self, wiki: Wiki, actor: Actor, name: str, target: str, state: WikiSession,
                 action_id: str, head: str | None) -> None:
        self.wiki = wiki
        self.actor = actor
        self.name = name
        self.target = target
        self.status: Status = Status.OK
        self.message = ""
        self.data: dict[str, Any] = {}
        self.journal: dict[str, Any] = {}
        self.body = ""
        #: The commit is the operator's decision though another actor authors it (an approved
        #: inbox item is committed as its agent): signed with the operator's key all the same.
        self.operator_signs = False
        self._state = state
        self._id = action_id
        self._head = head
        self._root_s = str(wiki.root)
        self._safe_folders: set[str] = set()  # folders whose real path was checked to lie in the root
        self._originals: dict[str, bytes | None] = {}  # path -> bytes before the action (None: absent)
        self._keep_apart: dict[str, str] = {}  # path with uncommitted edits -> its HEAD blob
        self._unsaved: list[dict[str, Any]] = []  # pending-record lines not written yet
        self._order: list[str] = []

    # --- paths and policy ----------------------------------------------------------------
    def safe_path(self, rel: str) -> str:
        """``rel`` as a normalised root-relative posix path; :class:`Invalid` if it could escape."""
        # A backslash separates folders only on Windows; elsewhere it is a character of the name
        # (a page "back\\slash.md" is that file, never "back/slash.md").
        raw = str(rel).replace("\\", "/") if os.sep == "\\" else str(rel)
        if not raw or "\0" in raw or raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
            raise Invalid(message=f"invalid path {rel!r}: must be relative to the wiki root")
        parts = raw.split("/")
        if ".." in parts:
            raise Invalid(message=f"invalid path {rel!r}: '..' is not allowed")
        norm = posixpath.normpath(raw)
        if norm in (".", "") or norm.split("/")[0] in _FORBIDDEN_TOP:
            raise Invalid(message=f"invalid path {rel!r}")
        # No write (or read inside an action) follows a symbolic link at any level of the path:
        # through ``wiki/pol -> ../policies`` a write to ``wiki/pol/rules.md`` would land in
        # ``policies/`` while the policy was asked about ``wiki/``. So every folder of the path
        # is a real folder, and the policy decides on the path as it is on disk (checked once per
        # folder and action: a merge touches thousands of pages in few folders).
        folder = posixpath.dirname(norm)
        if folder and folder not in self._safe_folders:
            walked = ""
            for part in folder.split("/"):
                walked = f"{walked}/{part}" if walked else part
                if walked in self._safe_folders:
                    continue
                if os.path.islink(os.path.join(self._root_s, walked)):
                    raise Invalid(message=f"invalid path {rel!r}: {walked} is a symbolic link; Curator "
                                  "does not write through links (write to the folder it points to)")
                self._safe_folders.add(walked)
        if os.path.islink(os.path.join(self._root_s, norm)):  # (strings: thousands per merge)
            raise Invalid(message=f"invalid path {rel!r}: is a symbolic link; Curator does not write "
                          "through links")
        return norm

    def check_write(self, rel: str) -> str:
        """``rel`` made safe and checked against the write policy; :class:`Denied` if refused."""
        path = self.safe_path(rel)
        require_write(self.wiki, self.actor, path)
        return path

    # --- reading -------------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes | None:
        path = self.safe_path(rel)
        try:
            with open(os.path.join(self._root_s, path), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise Invalid(message=f"{path} is a folder, not a file") from None
        except PermissionError:
            raise Invalid(message=f"{path} cannot be read (permission denied); fix its permissions "
                          "(e.g. chmod u+rw) and try again") from None

    def read_text(self, rel: str) -> tuple[str, Decoded] | tuple[None, None]:
        """(text without BOM, decode flags), or (None, None) when absent.

        A file with invalid UTF-8 raises :class:`Invalid`: it is never rewritten blindly.
        """
        data = self.read_bytes(rel)
        if data is None:
            return None, None
        dec = decode(data)
        if dec.invalid_utf8:
            raise Invalid(message=f"{self.safe_path(rel)} is not valid UTF-8; fix its encoding before "
                          "writing to it (Curator never rewrites such a file blindly)")
        return dec.text, dec

    # --- writing -------------------------------------------------------------------------------
    def _remember(self, path: str, *, save: bool = True, plain: bool | None = None,
                  durable: bool = False) -> None:
        """Record ``path`` and its original bytes in the pending record, before it changes.

        ``save=False`` (for a batch of files) only buffers the record's lines; :meth:`_save_marker`
        writes them, and must run before the first of those files changes. ``plain``: the batch's
        :meth:`~curator.engine.repo.git.Git.plain_blobs` answer; ``durable``: a roll-back copy not yet in git's
        objects is fsynced (the batch rewrites files in place, see :meth:`write_many`).
        """
        if path in self._originals:
            return
        try:
            with open(os.path.join(self._root_s, path), "rb") as f:
                original: bytes | None = f.read()
        except FileNotFoundError:
            original = None
        except IsADirectoryError:
            raise Invalid(message=f"{path} is a folder, not a file") from None
        except PermissionError:
            raise Invalid(message=f"{path} cannot be read (permission denied); fix its permissions "
                          "(e.g. chmod u+rw) and try again") from None
        # Never sweep someone's unsaved work into an action's commit (docs/design.md §5). A tracked file
        # with uncommitted edits keeps them uncommitted: the commit gets HEAD's version with only
        # this action's change applied (see _finish); the working file has both.
        git = self._state.git
        differs, kept = git.differs_from_head(path, original, plain)
        if differs:
            head_sha = git.head_blob(path)
            if original is None:
                raise Invalid(message=f"{path} was removed but the removal is not committed; commit or "
                              f"restore it first (git rm / git checkout -- {path}), then try again")
            if head_sha is not None:  # (an untracked file has no committed version to keep apart)
                if not git.can_commit_bytes(path):
                    raise Invalid(message=f"{path} has uncommitted changes that were not made through "
                                  f"Curator; commit or discard them first (git commit / git checkout -- "
                                  f"{path}), then try again")
                self._keep_apart[path] = head_sha
        # The pending record names the path and keeps its original bytes (as a git blob) BEFORE
        # the file changes: recovery can put it back whatever happens next.
        blob = None if original is None else kept or git.store_blob(original, durable=durable)
        self._originals[path] = original
        self._order.append(path)
        if len(self._order) == 1:
            self._unsaved.append(self._header())
        self._unsaved.append({"path": path, "orig": blob})
        if save:
            self._save_marker()

    def _save_marker(self, *, durable: bool = False) -> None:
        """Append the buffered lines to the pending record (the header starts a new record;
        ``durable``: fsynced before this returns)."""
        lines, self._unsaved = self._unsaved, []
        if lines:
            first = lines[0].get("phase") == "apply"
            start, rest = (lines[:1], lines[1:]) if first else ([], lines)
            _pending_append(self._state, start, *rest, fsync=durable)

    def write_bytes(self, rel: str, data: bytes) -> str:
        path = self.check_write(rel)
        self._remember(path)
        atomic_write(self.wiki.root / path, data)
        return path

    def write_record(self, rel: str, data: bytes | None) -> str:
        """Write (``data``) or remove (``None``) one of the engine's own tracked records on the
        actor's behalf, *without* the actor's write check: the review inbox's item files, which
        no agent may write directly (:func:`~curator.engine.policy.scope.is_inbox_path`) but which its held append
        creates (docs/design.md §13). Atomic and rolled back like every other write of the action."""
        from curator.engine.policy.scope import is_inbox_path

        path = self.safe_path(rel)
        if not is_inbox_path(path):
            raise ValueError(f"{path} is not an engine record; use write_bytes")
        self._remember(path)
        if data is None:
            with contextlib.suppress(FileNotFoundError):
                (self.wiki.root / path).unlink()
        else:
            atomic_write(self.wiki.root / path, data)
        return path

    def write_many(self, files: dict[str, bytes]) -> list[str]:
        """Write several files as one step (a merge or a move rewriting thousands of pages).

        Every path is checked first (nothing is written when one is refused) and all are recorded
        in the pending record at once (one save, fsynced, with any roll-back copy that git did not
        hold yet). Because that record can put every file back (:func:`recover_pending` rolls an
        unfinished action back), an existing file is then rewritten *in place*, from its first
        changed byte: a rename per file costs a directory update and an inode each (seconds for
        2,000 pages on a busy disk), an in-place write costs the changed bytes. A new file (or one
        this process may not open for writing) still goes through temp file + rename. Finally
        exactly the written files are fsynced, side by side (the disk batches them), instead of
        a global ``os.sync`` that would wait for every other process's writes too.
        """
        if not files:
            return []
        paths = [self.check_write(rel) for rel in files]
        git = self._state.git
        plain = git.plain_blobs(paths)  # one attributes check for the whole batch
        with git.same_head():
            for path in paths:
                self._remember(path, save=False, plain=plain, durable=True)
        self._save_marker(durable=True)
        root = str(self.wiki.root)
        written: list[str] = []
        for path, data in zip(paths, files.values(), strict=True):
            full = os.path.join(root, path)
            original = self._originals[path]
            if original == data:
                continue
            if original is None or not _rewrite_in_place(full, original, data):
                atomic_write(Path(full), data, fsync=False)
            written.append(full)
        fsync_files(written)
        return paths

    def write_text(self, rel: str, text: str, *, bom: bool = False) -> str:
        """Write ``text`` as UTF-8 exactly as given (line endings are the caller's)."""
        return self.write_bytes(rel, (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))

    def move(self, src: str, dst: str) -> str:
        s, d = self.check_write(src), self.check_write(dst)
        data = self.read_bytes(s)
        if data is None:
            raise Invalid(message=f"cannot move {s}: it does not exist")
        if os.path.lexists(self.wiki.root / d):
            raise Invalid(message=f"cannot move {s} to {d}: {d} exists")
        self.write_bytes(d, data)
        self._remove(s)
        return d

    def delete(self, rel: str, *, archive: bool = True) -> str | None:
        """Remove a file; with ``archive`` keep a copy under ``_archive/`` (returned)."""
        path = self.check_write(rel)
        data = self.read_bytes(path)
        if data is None:
            raise Invalid(message=f"cannot remove {path}: it does not exist")
        kept = None
        if archive:
            kept = f"{ARCHIVE_DIR}/{path}"
            if os.path.lexists(self.wiki.root / kept):
                stem, ext = posixpath.splitext(kept)
                kept = f"{stem}.{_dt.datetime.now():%Y%m%d-%H%M%S-%f}{ext}"
            self.write_bytes(kept, data)
        self._remove(path)
        return kept

    def _remove(self, path: str) -> None:
        self.check_write(path)
        self._remember(path)
        with contextlib.suppress(FileNotFoundError):
            (self.wiki.root / path).unlink()

    @property
    def touched(self) -> list[str]:
        return list(self._order)

    # --- bookkeeping ----------------------------------------------------------------------------
    def _changed(self) -> list[str]:
        out = []
        for path in self._order:
            try:
                with open(os.path.join(self._root_s, path), "rb") as f:
                    now: bytes | None = f.read()
            except FileNotFoundError:
                now = None
            if now != self._originals[path]:
                out.append(path)
        return out

    def _rollback(self) -> None:
        root = self.wiki.root
        for path in reversed(self._order):
            original = self._originals[path]
            full = root / path
            try:
                if original is None:
                    with contextlib.suppress(FileNotFoundError):
                        full.unlink()
                    _prune_empty_dirs(root, full.parent)
                elif not full.exists() or full.read_bytes() != original:
                    try:
                        atomic_write(full, original)
                    except OSError as exc:
                        if not is_disk_full(exc) or not full.exists():
                            raise
                        _overwrite_in_place(full, original)  # (no room for a temporary copy)
            except OSError:
                continue  # best effort; the marker stays so recovery can roll back what remains
        self._clear_marker_if_clean()

    def _header(self) -> dict[str, Any]:
        return {"v": 2, "phase": "apply", "id": self._id, "action": self.name, "target": self.target,
                "actor": str(self.actor), "department": self.actor.department, "head": self._head,
                "t": now_iso()}

    def _clear_marker_if_clean(self) -> None:
        if not self._order or not self._changed():
            _clear_marker(self._state)

    def _journal_record(self, commit: str | None, *, committed: bool,
                        changed: list[str] | None = None) -> dict[str, Any]:
        rec: dict[str, Any] = {"t": now_iso(), "id": self._id, "action": self.name, "target": self.target,
                               "actor": str(self.actor)}
        rec.update(self.journal)
        paths = list(self._order if changed is None else changed)
        rec.update(committed=committed, commit=commit, changed=paths)
        # Pages the action removed (merged, moved, archived away): ``recover`` never brings back a
        # fact that such a later action accounted for.
        removed = [p for p in paths if self._originals.get(p) is not None
                   and not os.path.lexists(self.wiki.root / p)]
        if removed or self.name != "wiki_append":  # (appends never remove: keep their lines short)
            rec["removed"] = removed
        return rec


# --- low-level file helpers --------------------------------------------------------------

def atomic_write(full: Path, data: bytes | Iterable[bytes | memoryview], *, fsync: bool = True) -> None:
    """Write ``data`` (bytes, or parts written one after another) to ``full`` via a temp file in
    the same folder, fsync, rename.

    For files outside an action (state under ``.curator/``); inside one use the context's
    ``write_bytes``/``write_text``, which also checks the policy and can roll back.
    """
    tmp = staged_write(full, data, fsync=fsync)
    try:
        os.replace(tmp, full)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def staged_write(full: Path, data: bytes | Iterable[bytes | memoryview], *, fsync: bool = True) -> str:
    """:func:`atomic_write` but for its rename: the temp file beside ``full`` holding ``data``,
    with ``full``'s permissions, for the caller to move into place (or unlink) when it chooses.
    Nothing is left behind when this raises."""
    full.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{full.name[:40]}{TMP_MARK}", dir=full.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                for part in data:
                    f.write(part)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            # keep the file's permissions (a page may be group-writable, say)
            os.chmod(tmp, full.stat().st_mode & 0o7777 if full.exists() else 0o644)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp




def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (slice compares, no byte loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _rewrite_in_place(full: str, old: bytes, new: bytes) -> bool:
    """Turn the file ``full`` (holding ``old``) into ``new`` by writing only from the first byte
    that differs, then truncating; False (nothing written) when it cannot be opened for writing."""
    try:
        f = open(full, "r+b")  # noqa: SIM115 - closed below, after the write and the truncate
    except (PermissionError, IsADirectoryError, FileNotFoundError):
        return False
    with f:
        start = _common_prefix(old, new)
        f.seek(start)
        f.write(new[start:])
        if len(new) < len(old):
            f.truncate(len(new))
    return True


#: Threads that fsync a batch of files side by side (the disk batches their flushes).
FSYNC_THREADS = 4


def fsync_files(paths: Sequence[str]) -> None:
    """fsync each of ``paths``: a few threads side by side (the disk batches the flushes), each
    taking an equal share of the paths. One task per thread, not one per file: 2,000 futures cost
    more interpreter time than the flushes, and a thread per file kept waking for the GIL."""
    if not paths:
        return
    if len(paths) < 8:
        for p in paths:
            fsync_path(p)
        return
    threads = min(FSYNC_THREADS, len(paths))

    def flush(share: Sequence[str]) -> None:
        for p in share:
            fsync_path(p)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for done in [pool.submit(flush, paths[i::threads]) for i in range(threads)]:
            done.result()


def _prune_empty_dirs(root: Path, folder: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _clear_marker(state: WikiSession) -> None:
    with contextlib.suppress(FileNotFoundError):
        state.pending.unlink()


def _pending_append(state: WikiSession, start: list[dict[str, Any]], *lines: dict[str, Any],
                    fsync: bool = False) -> None:
    """Append ``lines`` to the pending record (``start``: the header, which begins a new record)."""
    data = "".join(json_line(x) + "\n"
                   for x in [*start, *lines]).encode("utf-8")
    state.pending.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if start else os.O_APPEND)
    fd = os.open(state.pending, flags, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(slots=True)
class _Pending:
    """A pending record as read back: its header, the touched paths (with the blob of each
    original, None for a file that did not exist) and, once ``apply`` finished, the commit step."""

    header: dict[str, Any]
    entries: list[tuple[str, str | None]]
    commit: dict[str, Any] | None = None  # {"phase": "commit", "changed", "journal"}
    committed: str | None = None  # the sha, when the commit was made but the index not updated


def _read_pending(state: WikiSession) -> _Pending | None:
    legacy = state.pending.with_name("pending.json")  # the one-object marker of older versions
    if legacy.exists():
        try:
            old = json.loads(legacy.read_text("utf-8"))
        except (OSError, ValueError):
            old = None
        with contextlib.suppress(OSError):
            legacy.unlink()
        if isinstance(old, dict):  # it kept no originals: it can only be completed, as it was then
            paths = [p for p in old.get("paths", []) if isinstance(p, str)]
            journal = old.get("journal") if isinstance(old.get("journal"), dict) else None
            return _Pending(old, [(p, None) for p in paths],
                            {"phase": "commit", "changed": paths, "journal": journal})
    try:
        raw = state.pending.read_bytes()
    except FileNotFoundError:
        return None
    lines = []
    for chunk in raw.split(b"\n"):
        try:
            obj = json.loads(chunk)
        except ValueError:
            continue  # the torn last line of a killed writer (its file was not touched yet)
        if isinstance(obj, dict):
            lines.append(obj)
    if not lines or lines[0].get("phase") != "apply":
        return None  # a torn header: the action never got to change a file
    rec = _Pending(lines[0], [])
    for obj in lines[1:]:
        if isinstance(obj.get("path"), str):
            orig = obj.get("orig")
            rec.entries.append((obj["path"], orig if isinstance(orig, str) else None))
        elif obj.get("phase") == "commit":
            rec.commit = obj
        elif obj.get("phase") == "committed" and isinstance(obj.get("commit"), str):
            rec.committed = obj["commit"]
    return rec


def _clean_temp_files(root: Path, paths: Iterable[str]) -> None:
    for folder in {(root / p).parent for p in paths}:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if TMP_MARK in name and name.startswith("."):
                with contextlib.suppress(OSError):
                    (folder / name).unlink()


# --- recovery -------------------------------------------------------------------------------

def recover_pending(wiki: Wiki) -> ActionResult | None:
    """Finish or undo what an interrupted action left (call with the lock held, or alone).

    The pending record (``.curator/pending.jsonl``) decides, and only the paths it names are
    touched, so an operator's unrelated edits never enter a recovery commit:

    * the action was stopped while applying (no ``commit`` line): **roll back**. Every touched
      path gets its original bytes back (kept as git blobs) or is removed if it did not exist;
      nothing is committed (answer ``rolled_back``).
    * it had finished applying (the ``commit`` line, written before ``git commit`` starts): **roll
      forward**. If the commit exists (HEAD moved past the record's head with the action's
      subject, or the journal has the action) only the journal and the git index are brought in
      line; otherwise the recorded paths are committed as ``recover: <action>: <target>``, which
      ``undo`` treats as the action itself (answer ``recovered``).

    Returns the recovery's result, or None when there was nothing to recover.
    """
    st = _state(wiki)
    if not st.lock.held:
        try:
            with st.lock:
                return recover_pending(wiki)
        except Locked as exc:
            return ActionResult(Status.LOCKED, str(exc), action="recover")
    rec = _read_pending(st)
    if rec is None:
        _clear_marker(st)
        return None
    paths = [p for p, _ in rec.entries]
    _clean_temp_files(wiki.root, paths)
    marker = rec.header
    try:
        actor = parse_actor(str(marker.get("actor") or "operator"), marker.get("department"))
    except CuratorError:
        actor = parse_actor("operator")
    action_id = str(marker.get("id") or "")
    subject = f"{marker.get('action', 'action')}: {marker.get('target', '')}"
    if rec.commit is None:
        result = _roll_back(wiki, st, rec, actor, action_id, subject)
    else:
        result = _roll_forward(wiki, st, rec, actor, action_id, subject)
    st.journal_seen = st.journal.size()
    return result


def _roll_back(wiki: Wiki, st: WikiSession, rec: _Pending, actor: Actor, action_id: str,
               subject: str) -> ActionResult | None:
    root = wiki.root
    restored: list[str] = []
    for path, orig in reversed(rec.entries):
        full = root / path
        if orig is None:
            if os.path.lexists(full):
                full.unlink()
                restored.append(path)
            _prune_empty_dirs(root, full.parent)
            continue
        data = st.git.blob(orig)
        if data is None:
            return ActionResult(Status.ERROR, f"cannot roll back the interrupted '{subject}': the original "
                                f"of {path} is missing from git's objects (restore the files by hand, then "
                                f"remove {STATE_HINT}/{PENDING_NAME})", action="recover", target=subject)
        try:
            current = full.read_bytes()
        except FileNotFoundError:
            current = None
        if current != data:
            atomic_write(full, data)
            restored.append(path)
    _clear_marker(st)
    if not restored:
        return None  # stopped before its first write took effect: nothing to say
    restored.reverse()
    st.journal.append({"t": now_iso(), "id": uuid.uuid4().hex, "action": "recover", "target": subject,
                       "actor": str(actor), "of": action_id, "rolled_back": True, "committed": False,
                       "commit": None, "changed": restored})
    wiki.refresh_loaded(restored)
    return ActionResult(Status.ROLLED_BACK, f"rolled back the interrupted '{subject}': it was stopped before "
                        f"it had written everything, so its {len(restored)} changed path(s) have their "
                        "previous content again and nothing of it was committed", None, restored,
                        action="recover", target=subject)


def _landed_commit(st: WikiSession, rec: _Pending, subject: str, changed: list[str]) -> str | None:
    """The commit the interrupted action made after all (its subject, touching its paths, on top
    of the HEAD it started from), if any."""
    head = rec.header.get("head")
    try:
        entries = st.git.log(20, rev=f"{head}..HEAD" if head else None)
    except GitError:
        return None
    hit = next((e for e in entries if e.subject == subject and set(e.paths) & set(changed)), None)
    return hit.commit if hit is not None else None


def _committed_already(st: WikiSession, record: dict[str, Any] | None, sha: str | None, changed: list[str],
                       subject: str) -> ActionResult | None:
    """The interrupted action was committed: bring the journal (``record``: its line, when it did
    not get to write it) and the git index in line, commit nothing."""
    if sha is not None and record is not None:
        st.journal.append({**record, "committed": True, "commit": sha, "changed": changed})
    try:
        st.git.repair_index(changed)
    except GitError as exc:
        return ActionResult(Status.ERROR, f"the git index still lags behind HEAD for {len(changed)} path(s) "
                            f"of '{subject}': {exc}", changed=changed, action="recover", target=subject)
    _clear_marker(st)
    return None


def _roll_forward(wiki: Wiki, st: WikiSession, rec: _Pending, actor: Actor, action_id: str,
                  subject: str) -> ActionResult | None:
    assert rec.commit is not None
    changed = [p for p in rec.commit.get("changed", []) if isinstance(p, str)]
    record = rec.commit.get("journal") if isinstance(rec.commit.get("journal"), dict) else None
    found = st.journal.find_id(action_id) if action_id else None
    journaled = found is not None  # the action got to journal itself (its commit may have failed)
    if found is not None and not found.get("committed"):
        journaled = False
        record = None  # journaled already, as not committed: the recover line below says the rest
    sha = rec.committed
    if sha is None and not journaled:
        sha = _landed_commit(st, rec, subject, changed)
    if sha is not None or journaled:
        return _committed_already(st, record if found is None else None, sha, changed, subject)
    try:
        dirty = st.git.dirty(changed)
    except GitError as exc:
        return ActionResult(Status.ERROR, f"recovery could not read git status: {exc}", action="recover")
    if not dirty:
        _clear_marker(st)
        return None
    contents: dict[str, bytes] = {}
    for p, blob in (rec.commit.get("contents") or {}).items():
        data = st.git.blob(str(blob)) if p in dirty else None
        if data is not None:
            contents[p] = data
    try:
        body = str(rec.commit.get("body") or "").strip()  # the action's own (trailers such as Reviewed-by)
        sha = st.git.commit_paths(dirty, with_actor_trailer(f"recover: {subject}\n\nCommitted by Curator's recovery: an "
                                  "interrupted action had written all of these changes but not committed "
                                  "them." + (f"\n\n{body}" if body else ""), actor),
                                  commit_author(actor, st.git),
                                  contents=contents or None, sign=operator_key(actor))
    except IndexNotUpdated as exc:
        sha = exc.commit
        with contextlib.suppress(GitError):
            st.git.repair_index(dirty)
    except GitError as exc:
        # A process killed while committing may leave its git children running: the commit can
        # land while we look (our roll-forward then finds nothing to commit). Look once more.
        late = _landed_commit(st, rec, subject, changed)
        if late is not None:
            return _committed_already(st, record if found is None else None, late, changed, subject)
        return ActionResult(Status.ERROR, f"recovery commit failed: {exc}", changed=dirty,
                            action="recover", target=subject)
    if record is not None:
        st.journal.append({**record, "t": now_iso(), "committed": True, "commit": sha, "changed": dirty})
    st.journal.append({"t": now_iso(), "id": uuid.uuid4().hex, "action": "recover", "target": subject,
                       "actor": str(actor), "of": action_id, "committed": True, "commit": sha,
                       "changed": dirty})
    _clear_marker(st)
    wiki.refresh_loaded(dirty)
    return ActionResult(Status.RECOVERED, f"committed {len(dirty)} path(s) left by an interrupted "
                        f"'{subject}'", sha, dirty, action="recover", target=subject)


def _catch_up(wiki: Wiki, st: WikiSession) -> None:
    """Refresh pages that other processes' actions changed since this process last looked."""
    size = st.journal.size()
    if size == st.journal_seen:
        return
    if size < st.journal_seen:  # journal replaced (deleted .curator): nothing precise to go on
        st.journal_seen = size
        return
    changed: list[str] = []
    for rec in st.journal.read(st.journal_seen):
        paths = rec.get("changed")
        if isinstance(paths, list):
            changed.extend(p for p in paths if isinstance(p, str))
    st.journal_seen = size
    if changed:
        wiki.refresh_loaded(changed)


# --- running an action --------------------------------------------------------------------------

def run_action(wiki: Wiki, actor: Actor, name: str, target: str,
               apply: Callable[[ActionContext], object], *, body: str = "") -> ActionResult:
    """Run one action; see the module docstring. Never raises for ``locked``/``denied``/``invalid``."""
    if not _NAME.match(name):
        raise ValueError(f"bad action name {name!r}: use lowercase letters, digits and '_'")
    target = " ".join(str(target).split())  # one line: it is part of the commit subject
    st = _state(wiki)
    if getattr(st.active, "on", False):
        raise RuntimeError(f"action {name!r} started inside another action on the same wiki")
    if not st.git.is_repo():
        return ActionResult(Status.INVALID, f"{wiki.root} is not a git repository; run 'curator init "
                            f"{wiki.root}' to make it a wiki", action=name, target=target)
    try:
        st.lock.acquire()
    except Locked as exc:
        return ActionResult(Status.LOCKED, str(exc), action=name, target=target)
    st.active.on = True
    try:
        # An action builds its plan, its rewritten texts and the re-parsed pages in bulk (a merge
        # rewriting 2,000 pages makes ~10^5 small objects), none of them cyclic: with the collector
        # running, those allocations set off collections that re-scan the whole long-lived heap
        # (every cached page and the link index: 0.4-0.7 s at 30,000 pages). Paused as for any
        # bulk build (see gc_paused); reference counting frees what the action drops.
        with gc_paused():
            result = _run_locked(wiki, st, actor, name, target, apply, body)
    finally:
        st.active.on = False
        st.lock.release()
    if result.commit:
        st.git.maintain_if_due()  # git's own auto-gc, outside the lock (see Git.maintain_if_due)
    return result


def _run_locked(wiki: Wiki, st: WikiSession, actor: Actor, name: str, target: str,
                apply: Callable[[ActionContext], object], body: str) -> ActionResult:
    """:func:`run_action` once the lock is held: recovery, ``apply``, the commit."""
    recovered = recover_pending(wiki)
    if recovered is not None and recovered.is_error:
        # Starting anyway would replace the pending record of the action not yet finished.
        return ActionResult(recovered.status, f"not started: an interrupted action could not be "
                            f"finished first ({recovered.message})", action=name, target=target)
    _catch_up(wiki, st)
    ctx = ActionContext(wiki, actor, name, target, st, uuid.uuid4().hex, st.git.head())
    ctx.body = body
    try:
        apply(ctx)
    except ActionFailed as exc:
        ctx._rollback()
        data = {**ctx.data, **exc.data}
        return ActionResult(exc.status, exc.message, data=data, action=name, target=target)
    except BaseException as exc:
        if not is_disk_full(exc):
            ctx._rollback()
            raise
        try:
            ctx._rollback()
        except BaseException:
            raise DiskFull("disk full: the action stopped half-way and could not be undone; free some "
                           "space, then run 'curator recover'") from exc
        raise DiskFull(DISK_FULL_NOTHING_WRITTEN) from exc
    result = _finish(wiki, st, ctx)
    if recovered is not None and recovered.commit:
        result.data.setdefault("recovered", recovered.commit)
    return result


def _finish(wiki: Wiki, st: WikiSession, ctx: ActionContext) -> ActionResult:
    ctx._save_marker()  # (a batch remembered but never written leaves nothing to say)
    changed = ctx._changed()
    if not changed:
        _clear_marker(st)
        return ActionResult(ctx.status, ctx.message, None, [], dict(ctx.data), ctx.name, ctx.target)
    subject = f"{ctx.name}: {ctx.target}"
    message = subject + (f"\n\n{ctx.body.strip()}" if ctx.body.strip() else "")
    sha: str | None
    data = dict(ctx.data)
    text = ctx.message
    try:
        contents = _apart_contents(st.git, ctx, changed)
    except Invalid as exc:
        ctx._rollback()
        return ActionResult(exc.status, exc.message, data={**ctx.data, **exc.data}, action=ctx.name,
                            target=ctx.target)
    # Every file is written: from here on recovery rolls the action forward, never back.
    try:
        _pending_append(st, [], {"phase": "commit", "changed": changed, "body": ctx.body.strip(),
                                 "contents": {p: st.git.store_blob(b) for p, b in contents.items()},
                                 "journal": ctx._journal_record(None, committed=False, changed=changed)})
    except BaseException as exc:
        # Not recorded as done: undo the writes, so that an action answered with an error is never
        # committed later by recovery (the pending record still says "roll back").
        ctx._rollback()
        if is_disk_full(exc):
            raise DiskFull(DISK_FULL_NOTHING_WRITTEN if not ctx._changed() else
                           "disk full: the action stopped half-way; free some space, then run "
                           "'curator recover' (it undoes the rest)") from exc
        raise
    index_ok = True
    try:
        sha = st.git.commit_paths(changed, with_actor_trailer(message, ctx.actor),
                                  commit_author(ctx.actor, st.git), contents=contents or None,
                                  sign=operator_key(OPERATOR if ctx.operator_signs else ctx.actor))
    except IndexNotUpdated as exc:
        sha, index_ok = exc.commit, False
        _pending_append(st, [], {"phase": "committed", "commit": sha})
        data["index_error"] = str(exc)
        text = f"{text} (committed {sha[:12]}; the git index could not be updated, the next action " \
               "repairs it)".strip()
    except GitError as exc:
        sha = None
        data["commit_error"] = str(exc)
        text = f"{text} (not committed: {exc}; the next action will commit it)".strip()
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        # Written and recorded: recovery rolls it forward, so the answer says it is done.
        sha = None
        data["commit_error"] = "disk full"
        text = f"{text} (not committed yet: the disk is full; the next action will commit it)".strip()
    try:
        st.journal.append(ctx._journal_record(sha, committed=sha is not None, changed=changed))
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        data["journal_error"] = "disk full"  # (done and committed or pending: the answer stays a success)
    st.journal_seen = st.journal.size()
    if sha is not None and index_ok:
        _clear_marker(st)  # else keep it: the next action's recovery commits (or repairs) these paths
    wiki.refresh_loaded(changed)
    return ActionResult(ctx.status, text, sha, changed, data, ctx.name, ctx.target)


#: The trailer every operator commit carries (``Curator-Actor: operator``): the author is the
#: operator's own git identity, so the trailer (and, on other clones, the signature) is what says
#: the commit is the operator's.
ACTOR_TRAILER = "Curator-Actor"


def _one_line(text: str) -> str:
    # A configured name is printed in commit headers and trailers: no line breaks (a forged
    # trailer line), no angle brackets (git strips them from identities).
    return " ".join(re.sub(r"[<>\x00-\x1f\x7f]", " ", text).split())


def operator_identity(g: Git) -> tuple[str, str]:
    """(name, email) the operator commits as: ``git config user.name``/``user.email`` of the
    wiki (its own config, else the user's); unset, the neutral ``operator <operator@curator.invalid>``."""
    name, email = g.identity()
    fallback = OPERATOR.git_author
    name = _one_line(name or "")
    if not name:
        return fallback
    return name, _one_line(email or "") or fallback[1]


def commit_author(actor: Actor, g: Git) -> tuple[str, str]:
    """The git author of ``actor``'s commits: the operator's own identity, anyone else's name."""
    return operator_identity(g) if actor.is_operator else actor.git_author


def operator_person(wiki: Wiki) -> str:
    """Who the operator of this clone is, as decisions name them: ``Name <email>``, or
    ``operator`` when no git identity is configured."""
    name, email = operator_identity(git_of(wiki))
    return "operator" if (name, email) == OPERATOR.git_author else f"{name} <{email}>"


def with_actor_trailer(message: str, actor: Actor) -> str:
    """``message`` with ``Curator-Actor: operator`` as its last trailer when ``actor`` is the
    operator (joined to a trailer block already there, else a paragraph of its own)."""
    if not actor.is_operator:
        return message
    message = message.rstrip("\n")
    trailer = f"{ACTOR_TRAILER}: operator"
    _before, sep, last = message.rpartition("\n\n")
    in_block = bool(sep) and all(re.match(r"^[A-Za-z][A-Za-z0-9-]*: \S", line) for line in last.splitlines())
    return f"{message}\n{trailer}" if in_block else f"{message}\n\n{trailer}"


def operator_key(actor: Actor) -> SigningKey | None:
    """The key an action's commit is signed with: the operator's (when this user set one,
    ``curator operators sign``), so that other clones take what only an operator may change."""
    if not actor.is_operator:
        return None
    from curator.engine.repo.signing import signing_key

    return signing_key()


def _overwrite_in_place(path: Path, data: bytes) -> None:
    """Put ``data`` back into ``path`` without a temporary copy (a rollback on a full disk: the
    original is not longer than what the action wrote, so it fits in the file's own blocks)."""
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()
        f.flush()
        os.fsync(f.fileno())


def _apart_contents(g: Git, ctx: ActionContext, changed: list[str]) -> dict[str, bytes]:
    """What to commit for the changed paths that had uncommitted edits before the action: HEAD's
    version with the action's own change (original -> now) merged in; :class:`Invalid` when the
    two overlap or the action removed such a file."""
    out: dict[str, bytes] = {}
    for path in changed:
        head_sha = ctx._keep_apart.get(path)
        if head_sha is None:
            continue
        now = ctx.read_bytes(path)
        committed = g.blob(head_sha)
        if now is None or committed is None:
            raise Invalid(message=f"{path} has uncommitted changes that were not made through Curator; "
                          f"commit or discard them first (git commit / git checkout -- {path}), then try again")
        try:
            out[path] = _merge3(g, committed, ctx._originals[path], now, path)  # type: ignore[assignment]
        except Invalid:
            raise Invalid(message=f"{path} has uncommitted changes next to the lines this action "
                          f"changes; commit or discard them first (git commit / git checkout -- {path}), "
                          "then try again: Curator never commits someone else's unsaved edits") from None
    return out


# --- history, undo, revert ------------------------------------------------------------------------

_SUBJECT = re.compile(r"^([a-z][a-z0-9_]*): (.*)$")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{40})")


@dataclass(slots=True)
class HistoryEntry:
    commit: str
    action: str | None  # None for a commit that was not made by an action
    target: str
    subject: str
    actor: str  # the author name (``agent:dudu``, ``operator``, or a person's git name)
    email: str
    time: str  # ISO 8601, UTC
    paths: list[str]
    reverts: str | None = None  # for revert actions: the commit they revert (the first one)
    #: every commit a revert reverts (an agent-range undo reverts many in one commit)
    reverts_all: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "action": self.action, "target": self.target,
                "subject": self.subject, "actor": self.actor, "email": self.email, "time": self.time,
                "paths": list(self.paths), "reverts": self.reverts}


def history(wiki: Wiki, limit: int = 50, actor: Actor = OPERATOR,
            options: Iterable[str] = ()) -> list[HistoryEntry]:
    """The wiki's commits, newest first, with their action, actor, time and paths (``options``:
    further ``git log`` options such as ``--since=...``).

    A non-operator sees only the commits that touch nothing it may not see (a commit's subject
    and paths would otherwise name hidden pages).
    """
    out: list[HistoryEntry] = []
    # A non-operator's ``limit`` counts the commits it may see: look further back to fill it.
    scan = limit if actor.is_operator else limit * 10
    for e in git_of(wiki).log(scan, options=tuple(options)):
        if not actor.is_operator and not all(wiki.visible(actor, p) for p in e.paths):
            continue
        if len(out) >= limit:
            break
        out.append(history_entry(e))
    return out


def history_entry(e: LogEntry) -> HistoryEntry:
    m = _SUBJECT.match(e.subject)
    reverts = _REVERTS.findall(e.body)
    when = _dt.datetime.fromtimestamp(e.time, _dt.UTC).isoformat().replace("+00:00", "Z")
    return HistoryEntry(e.commit, m.group(1) if m else None, m.group(2) if m else "", e.subject,
                        e.author_name, e.author_email, when, e.paths, reverts[0] if reverts else None,
                        reverts)


def last_undoable(wiki: Wiki, scan: int = 200) -> HistoryEntry | None:
    """The newest action commit whose change is in effect: not a revert, not reverted.

    Walking newest first, a revert that was itself reverted (a redo) no longer counts, so after
    ``undo`` + redo the re-applied action is the one ``undo`` reverts again. A ``recover:``
    commit that completed an interrupted action (``recover: <action>: <target>``) is that action.
    """
    reverted: set[str] = set()
    for entry in history(wiki, scan):
        if entry.commit in reverted:
            continue  # its effect was cancelled (for a revert: the change it undid is back)
        if entry.reverts:
            reverted.update(entry.reverts_all)
            continue
        if entry.action is None:
            continue
        if entry.action == "recover" and _SUBJECT.match(entry.target):
            return entry  # an interrupted action, completed by recovery
        if entry.action in ("revert", "redo", "recover", "sync", "resolve"):  # merges of remote work: not undone
            continue
        return entry
    return None


def undo(wiki: Wiki, actor: Actor) -> ActionResult:
    """Revert the newest action that has not been reverted yet (an action itself).

    An interrupted action is recovered first (rolled forward or back), so ``undo`` reverts what
    the wiki really holds, never the action before a half-finished one.
    """
    found = _recover_then(wiki, last_undoable, "nothing to undo: no action in the recent history")
    return found if isinstance(found, ActionResult) else revert(wiki, actor, found.commit)


def _recover_then(wiki: Wiki, pick: Callable[[Wiki], HistoryEntry | None],
                  nothing: str) -> HistoryEntry | ActionResult:
    """Recover an interrupted action, then the entry ``pick`` finds (an answer when there is none)."""
    recovered = recover_pending(wiki)
    if recovered is not None and recovered.status == "locked":
        return ActionResult(Status.LOCKED, recovered.message, action="revert")
    entry = pick(wiki)
    return entry if entry is not None else ActionResult(Status.INVALID, nothing, action="revert")


def last_redoable(wiki: Wiki, scan: int = 200) -> HistoryEntry | None:
    """The newest undo whose effect is in effect and that no new action followed, or None.

    Like an editor's redo stack: ``undo`` pushes (a revert of an action), redo pops (a revert of
    that revert), and any new action empties it. Walking newest first, a redo (a revert of a
    revert) cancels the undo it reverted, so undo, undo, redo, redo re-applies both, newest undo
    first. Merges of remote work (``sync``, ``resolve``) and commits not made by an action neither
    count nor clear the stack.
    """
    reverted: set[str] = set()
    kinds = {e.commit: e for e in history(wiki, scan)}
    for entry in kinds.values():  # newest first (dicts keep insertion order)
        if entry.commit in reverted:
            continue
        if entry.reverts:
            targets = [kinds.get(sha) for sha in entry.reverts_all]
            if all(t is not None and t.reverts for t in targets):
                reverted.update(entry.reverts_all)  # a redo: the undo it reverted is cancelled
                continue
            return entry  # an undo still in effect: the next redo reverts it
        if entry.action is None or entry.action in ("sync", "resolve"):
            continue
        if entry.action == "recover" and not _SUBJECT.match(entry.target):
            continue
        return None  # a new action since the last undo: nothing to redo
    return None


def redo(wiki: Wiki, actor: Actor) -> ActionResult:
    """Re-apply the change the last ``undo`` took back: a revert of that undo (an action itself,
    checked against the policy for every path it touches, like any revert)."""
    entry = _recover_then(wiki, last_redoable, "nothing to redo: no undo since the last action")
    if isinstance(entry, ActionResult):
        return entry
    original = entry.target if entry.action == "revert" else entry.subject
    result = revert(wiki, actor, entry.commit)
    if result.ok:
        result.status = Status.REDONE
        result.message = f"redid {original} (reverted the undo {entry.commit[:12]})"
        result.data["redone"] = entry.reverts
    return result


def revert(wiki: Wiki, actor: Actor, commit: str) -> ActionResult:
    """``git revert`` of one commit, as the action ``revert: <its subject>``.

    Applied file by file: a file unchanged since the commit gets its previous content back; a file
    changed since gets a three-way merge (``git merge-file``); a conflict answers ``invalid``.
    A revert of a revert (``revert: X``, as :func:`redo` makes) is the action ``redo: X``.
    """
    name = "revert"
    g = git_of(wiki)
    sha = g.resolve(commit) if re.fullmatch(r"[0-9A-Za-z_./^~@{}-]{1,200}", commit) else None
    if sha is None:
        return ActionResult(Status.INVALID, f"no commit {commit!r} in this wiki", action=name)
    entries = g.log(1, rev=sha)
    subject = entries[0].subject if entries else sha[:12]
    if entries and subject.startswith("revert: ") and _REVERTS.search(entries[0].body):
        # named for what it does: "revert: revert: edit: x" read as an undo of an undo in History
        name, subject = "redo", subject.removeprefix("revert: ")
    parent = g.parent(sha)
    paths = g.changed_paths(sha)
    if not paths:
        return ActionResult(Status.INVALID, f"commit {sha[:12]} changes no file; nothing to revert",
                            action=name)

    def apply(ctx: ActionContext) -> None:
        # A revert is a write of every path the commit touched: all are checked before any is
        # changed (the policy file, a hidden page, ...), whether or not its content still differs.
        for path in paths:
            try:
                ctx.check_write(path)
            except Denied as exc:
                raise Denied(message=f"may not revert {sha[:12]}: {exc.message}") from None
        # every version in one git call (a merge or move may have touched thousands of files)
        blobs = g.show_many([(sha, p) for p in paths] + ([(parent, p) for p in paths] if parent else []))
        writes: dict[str, bytes] = {}
        for path in paths:
            before = blobs[(parent, path)] if parent else None
            after = blobs[(sha, path)]
            current = ctx.read_bytes(path)
            if current == before:
                continue  # already as it was
            if current == after:
                new = before
            else:
                try:
                    new = _merge3(g, current, after, before, path)
                except Invalid:
                    # a pure addition (a fact) next to later lines: remove exactly what it added
                    new = _remove_additions(current, after, before)
                    if new is None:
                        raise
            if new is None:
                if current is not None:
                    ctx.delete(path, archive=False)
            else:
                writes[path] = new
        ctx.write_many(writes)
        ctx.status = Status.REVERTED
        ctx.message = f"reverted {sha[:12]} ({subject})"
        ctx.data["reverted"] = sha
        ctx.journal["reverted"] = sha

    return run_action(wiki, actor, name, subject, apply, body=f"This reverts commit {sha}.")


_STAMP_LINE = re.compile(r"^updated:[ \t]")


def _remove_additions(current: bytes | None, after: bytes | None, before: bytes | None) -> bytes | None:
    """Revert a change that only added lines (and refreshed the ``updated:`` stamp, which stays as it
    is now) by removing exactly those lines from ``current``; None when the change was anything
    else or a line is not found exactly once."""
    if current is None or after is None or before is None:
        return None
    try:
        b, a, c = (x.decode("utf-8").splitlines(keepends=True) for x in (before, after, current))
    except UnicodeDecodeError:
        return None
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, b, a, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":
            added.extend(a[j1:j2])
        elif not (tag == "replace" and all(_STAMP_LINE.match(x) for x in b[i1:i2] + a[j1:j2])):
            return None
    if not added or any(not line.strip() for line in added):
        return None
    out = list(c)
    for line in added:
        hits = [k for k, x in enumerate(out) if x == line]
        if len(hits) != 1:
            return None
        del out[hits[0]]
    return "".join(out).encode("utf-8")


def _merge3(g: Git, current: bytes | None, base: bytes | None, other: bytes | None,
            path: str) -> bytes | None:
    """Three-way merge ``base -> other`` into ``current``; :class:`Invalid` on conflict."""
    if current is None or other is None:
        raise Invalid(message=f"cannot revert {path}: it was changed (or removed) later; revert "
                      "those later actions first")
    proc = merge_file_raw(current, base or b"", other)
    if proc.returncode != 0:
        raise Invalid(message=f"cannot revert {path}: later changes to it conflict with the revert")
    return proc.stdout
