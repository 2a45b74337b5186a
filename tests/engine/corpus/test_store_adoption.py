"""The page cache's chain of states across processes (:meth:`PageStore._adopt`): a process that
finds the database one or more known steps ahead of its own state takes that state up (reads
the pages those steps wrote) instead of parsing them again and writing a state of its own.

Before: the station changed a page (state S1), the dedup worker's refresh of that page wrote its
own state (predecessor unknown: the database's was the station's, not the worker's), and from
then on the station's saves of its lint and graph results were refused until it wrote again,
and the next open recomputed them from every page."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from curator.engine.corpus.page import Page
from curator.engine.corpus.state import locate_state
from curator.engine.wiki import Wiki
from tests.corpus import write_pages


def _token(root: Path) -> bytes:
    with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
        token: bytes = conn.execute("SELECT data FROM snapshot WHERE part='token'").fetchone()[0]
    conn.close()
    return token


def _wiki(tmp_path: Path) -> tuple[Path, Wiki, Wiki]:
    root = write_pages(tmp_path / "w", {f"p{i}.md": f"# Page {i}\n\nSee [[p{i + 1}]].\n" for i in range(6)})
    old = os.stat(root / "p0.md").st_mtime_ns - 100 * 10**9  # (not racy: safely older than any look)
    for page in root.glob("*.md"):
        os.utime(page, ns=(old, old))
    station, worker = Wiki(root), Wiki(root)
    for wiki in (station, worker):
        wiki.refresh()
        assert len(wiki.pages) == 6 and wiki.store.racy_digest("p3.md") is None
    return root, station, worker


def test_the_workers_refresh_takes_up_the_stations_state(tmp_path: Path, parse_counter: list[str]) -> None:
    root, station, worker = _wiki(tmp_path)
    try:
        (root / "p1.md").write_text("# Page one, edited\n\nSee [[p9]].\n")
        (root / "new.md").write_text("# New\n")
        (root / "p5.md").unlink()
        assert sorted(station.refresh().paths) == ["new.md", "p1.md", "p5.md"]
        state = station.store.state
        station.store.save_derived("lint", b"computed at S1", state)
        parse_counter.clear()
        changes = worker.refresh(["p1.md"])  # (what the station told the worker it saw change)
        assert parse_counter == []  # read from the database, not parsed again
        assert (changes.added, changes.modified, changes.removed) == (["new.md"], ["p1.md"], ["p5.md"])
        assert worker.store.state == state == _token(root)  # nothing written: the chain goes on
        assert worker.pages["p1.md"].title == "Page one, edited" and "p5.md" not in worker.pages
        assert worker.pages["new.md"].title == "New" and sorted(worker.pages) == sorted(station.pages)
        assert worker.store.derived("lint") == b"computed at S1"
        assert worker.refresh().paths == []  # its stamps are the files' again
        # the station's next results are saved, and a new process finds them for these pages
        station.store.save_derived("graph", b"computed at S1 too", state)
        assert station.store.derived("graph") == b"computed at S1 too"
        fresh = Wiki(root)
        fresh.refresh()
        assert fresh.store.derived("lint") == b"computed at S1" and fresh.store.derived("graph") is not None
        fresh.close()
        # and the other way round: the worker writes what it sees first, the station takes it up
        (root / "p2.md").write_text("# Page two, edited\n")
        worker.refresh(["p2.md"])
        parse_counter.clear()
        assert station.refresh(["p2.md"]).modified == ["p2.md"] and parse_counter == []
        assert station.store.state == worker.store.state and station.pages["p2.md"].title == "Page two, edited"
        assert station.store.derived_since("lint") == (b"computed at S1", {"p2.md"})
    finally:
        station.close()
        worker.close()


def test_a_page_rewritten_in_place_after_the_other_write_is_read_again(tmp_path: Path) -> None:
    """The racy-stamp rule holds for a state taken up: the digest of the bytes the other process
    parsed comes with it, and a same-size rewrite keeping the mtime is still seen."""
    root, station, worker = _wiki(tmp_path)
    try:
        page = root / "p3.md"
        page.write_text("# Page three, first\n")
        station.refresh(["p3.md"])  # (written a moment ago: racy)
        digest = station.store.racy_digest("p3.md")
        assert digest is not None
        st = page.stat()
        page.write_text("# Page three, other\n")  # same size, same mtime: the stamp hides it
        os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert worker.refresh(["p3.md"]).modified == ["p3.md"]
        assert worker.pages["p3.md"].title == "Page three, other"  # never the stale one as fresh
    finally:
        station.close()
        worker.close()


class _Fed:
    """An extension that is fed every page (as the built search index is)."""

    def __init__(self) -> None:
        self.fed: list[str] = []

    def setup(self, conn: sqlite3.Connection) -> None: ...

    def active(self) -> bool:
        return True

    def upsert(self, conn: sqlite3.Connection, page: Page, body: str) -> None:
        self.fed.append(page.path)

    def delete(self, conn: sqlite3.Connection, path: str) -> None:
        self.fed.append(f"-{path}")


def test_a_store_feeding_an_extension_parses_and_its_write_follows_the_other(tmp_path: Path,
                                                                           parse_counter: list[str]) -> None:
    root, station, worker = _wiki(tmp_path)
    fed = _Fed()
    station.store.add_extension(fed)
    try:
        station.store.save_derived("lint", b"computed", station.store.state)
        (root / "p4.md").write_text("# Page four, edited\n")
        worker.refresh(["p4.md"])  # another process writes first
        parse_counter.clear()
        assert station.refresh(["p4.md"]).modified == ["p4.md"]
        assert parse_counter == ["p4.md"] and fed.fed == ["p4.md"]  # the extension has the page's text
        # its own state, whose step follows the other's: what it saved earlier is found again
        assert station.store.state == _token(root) != worker.store.state
        assert station.store.derived_since("lint") == (b"computed", {"p4.md"})
        again = Wiki(root)
        again.refresh()
        assert again.store.derived_since("lint") == (b"computed", {"p4.md"})
        again.close()
    finally:
        station.close()
        worker.close()




def test_a_state_written_as_delta_is_taken_up_with_its_delta(tmp_path: Path, parse_counter: list[str]) -> None:
    """The station's edit is recorded in the snapshot's delta (not saved whole): the worker takes
    up the base with the delta applied, so its stamps are the files' (not the base's)."""
    root, station, worker = _wiki(tmp_path)
    try:
        (root / "p2.md").write_text("# Page two, edited\n\nSee [[p3]].\n")
        assert station.refresh(["p2.md"]).modified == ["p2.md"]
        with sqlite3.connect(locate_state(root) / "cache.sqlite") as conn:
            assert conn.execute("SELECT count(*) FROM snapshot WHERE part='delta'").fetchone()[0] == 1
        conn.close()
        parse_counter.clear()
        assert worker.refresh(["p2.md"]).modified == ["p2.md"]
        assert parse_counter == [] and worker.store.state == station.store.state
        assert worker.refresh().paths == []  # its stamps are the files' again
        assert worker.pages["p2.md"].title == "Page two, edited"
        assert worker.store.summaries() == station.store.summaries()
    finally:
        station.close()
        worker.close()
