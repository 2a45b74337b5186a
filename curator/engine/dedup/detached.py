"""A new dedup basis made in a process of its own, so a one-shot command never waits for it.

Once a follow has re-examined ``COMPACT_AT`` pages since its basis, a new basis is due
(:mod:`curator.engine.dedup.compact`): 5-6 s at 100,000 pages, 11-12 s at 300,000. Made by the
command that found it due, that command (a ``curator health`` after an agent's 64th append) took
that long more than the one before it, for a basis only later processes use. A one-shot command
(:func:`one_shot_process`, set by the console script) hands it instead to a child started here
in a session of its own (``python -P -m curator.engine.dedup.detached ROOT``), and answers at once
from the follow it already has; the station's duplicate finder and the MCP server, which run for
long, keep making it themselves, off the operator's way.

The child answers the families as ``curator dedup --groups`` would (which makes the basis and
keeps the result that names it, exactly as the command did), its output thrown away. One child
at a time per wiki: it holds a lock on :data:`LOCK_FILE` for its life (the system lets go of it
however the child ends), and a command finding it held starts none. When the child finds the
basis cannot be made (a page came or went since, a changed page's earlier text unknown: see
``DedupIndex.compact_basis``) it writes that basis's id and how many pages had changed since it
in the lock file, and commands start another child for that basis only once :data:`RETRY_AFTER`
more pages changed (some reasons pass: a page still being written, another state answered).
A basis made for pages that other processes changed meanwhile is not written, nor the result
naming it (the two are saved as one, see ``DedupIndex.publish_staged``): the child makes them
again from the pages as they are, up to :data:`ATTEMPTS` times.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The lock a compacting child holds (in the wiki's state folder); it also names the basis whose
#: compaction was found impossible, if any.
LOCK_FILE = "dedup-compact.lock"

#: How many more pages changed since a basis a child could not compact before another tries.
RETRY_AFTER = 16
#: How many times a child makes the basis again when other processes changed pages while it
#: made it (the basis of pages no longer as they are is not written, see DedupIndex._publish_basis)
ATTEMPTS = 3

_ONE_SHOT = False


def one_shot_process() -> None:
    """Say this process answers one command and ends: a due compaction is handed to a child."""
    global _ONE_SHOT
    _ONE_SHOT = True


def hands_off() -> bool:
    """Whether a due compaction goes to a child: in a one-shot process, where a lock can be
    held (not on Windows) and the program can be started again as a module (not a frozen build)."""
    return _ONE_SHOT and _can_lock() and not getattr(sys, "frozen", False)


def _can_lock() -> bool:
    try:
        import fcntl  # noqa: F401  (POSIX only)
    except ImportError:
        return False
    return True


def _lock(state_dir: Path) -> int | None:
    """The lock file's descriptor, locked by this process; None when another holds it (or it
    cannot be opened)."""
    import fcntl

    try:
        fd = os.open(state_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def compacting(state_dir: Path) -> bool:
    """Whether a child holds the wiki's lock now (makes a basis)."""
    fd = _lock(state_dir)
    if fd is None:
        return (state_dir / LOCK_FILE).exists()  # (held by a child, or no lock can be opened)
    os.close(fd)
    return False


def _declined(state_dir: Path) -> tuple[bytes, int]:
    """The id of the basis a child last found it could not compact, and how many pages had
    changed since it then ((b"", 0): none)."""
    try:
        basis_id, since = (state_dir / LOCK_FILE).read_text(encoding="ascii").split()
        return bytes.fromhex(basis_id), int(since)
    except (OSError, ValueError):
        return b"", 0


def start(root: Path, state_dir: Path, basis_id: bytes, since: int) -> bool:
    """Start the child that compacts the basis ``basis_id`` of the wiki at ``root``, ``since``
    pages changed since it, unless one runs already or a child found it could not compact that
    basis fewer than :data:`RETRY_AFTER` pages ago. Whether a child compacts now (started
    here, or already running): then it keeps the result, not the caller."""
    declined, then = _declined(state_dir)
    if declined == basis_id and since < then + RETRY_AFTER:
        return False
    if compacting(state_dir):
        return True
    import subprocess

    # (the child takes the lock; two started at once: the second finds it held and ends)

    try:
        # -P: the working folder (the wiki's) is not searched for modules: a wiki holding a
        # folder named ``curator`` must not run as the program
        subprocess.Popen([sys.executable, "-P", "-m", __name__, os.fspath(root)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         cwd=os.fspath(root))
    except OSError:
        return False
    return True


def compact(root: Path) -> int:
    """The child: follow the wiki's changes, make the new basis and keep the result naming it,
    holding the lock. 0 when a basis was made (or another child holds the lock), 1 when none
    could be."""
    from curator.engine.dedup import cache as dedup_cache
    from curator.engine.dedup import follow as dedup_follow
    from curator.engine.dedup.families import answers_for
    from curator.engine.wiki import Wiki

    wiki = Wiki(root)
    state_dir = wiki.state_dir
    fd = _lock(state_dir)
    if fd is None:
        return 0
    try:
        store = wiki.store
        before, published = None, False
        for _attempt in range(ATTEMPTS):
            store.refresh()
            before = store.derived_since(dedup_follow.NAME)
            answers = answers_for(wiki)  # (the follow, as the command that started this one made it)
            index = answers.index
            with index.lock:
                state = store.state
                if index.at_state is not None and index.at_state == state:
                    # its result is the pages' as they are: kept as a command keeps it, the new
                    # basis made first (FamilyAnswers._keep), whether or not the result for
                    # this state was kept already
                    index.unkept, index.unkept_update = state, False
            answers.keep()
            after = store.derived_since(dedup_follow.NAME)
            published = published or before is None or (after is not None and after[0] != before[0])
            if published and store.derived(dedup_cache.NAME) is not None:
                os.ftruncate(fd, 0)  # (the basis, and the result naming it for the pages as they are)
                return 0
            store.refresh()
            if store.state == state and not published:
                break  # (the pages did not move on: it cannot be made from this basis)
            # (another process changed pages meanwhile: the basis made for the pages as they
            # were was not written, nor the result naming it; again, from the pages as they are
            # now, following the new basis if another process wrote one)
        if published:
            os.ftruncate(fd, 0)
            return 0
        # no new basis (the saved value: the basis's id, then the stamp of its file): the next
        # child for it only after RETRY_AFTER more pages (see the module's docstring)
        assert before is not None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{bytes(before[0][:16]).hex()} {len(before[1])}".encode("ascii"), 0)
        return 1
    finally:
        os.close(fd)


if __name__ == "__main__":
    from curator.engine.memory import lean_heap

    lean_heap()  # (beside the commands that keep running: big blocks given back when freed)
    sys.exit(compact(Path(sys.argv[1])))
