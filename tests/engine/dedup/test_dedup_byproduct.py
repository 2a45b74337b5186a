"""A cold first scan's shingles made in the page store's bulk parse workers (the store's
by-product, :attr:`~curator.engine.corpus.store.PageStore.byproduct`): the same families as a scan that
reads every page itself, only of the very bytes parsed, nothing of them kept after the scan."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from curator.engine.corpus import store as store_module
from curator.engine.corpus.page import parse_page
from curator.engine.dedup import families as dedup_families
from curator.engine.dedup import index as dedup
from curator.engine.dedup.families import FamilyAnswers
from curator.engine.wiki import Wiki
from tests.engine.dedup.test_dedup_families import COPY, ORIGINAL, count_shingled, facts, page, root  # noqa: F401


def families(wiki: Wiki) -> list[dict[str, Any]]:
    return [f.to_json() for f in dedup_families.find_families(wiki)]


@pytest.fixture
def bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every first load of a store is a bulk parse in worker processes (as at scale)."""
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 1)


def test_a_cold_scan_from_the_parse_workers_finds_what_a_warm_one_does(
        root: Path, bulk: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    shingled = count_shingled(monkeypatch)
    wiki = Wiki(root)
    cold = families(wiki)
    assert shingled == []  # every body shingled by the parse workers, none read again
    assert wiki.store.byproduct is None and wiki.store.byproducts == {}  # nothing kept after the scan
    wiki.close()
    warm = Wiki(root)  # the page cache kept: no bulk parse, a scan reads every page itself
    index = dedup.DedupIndex(warm)
    index.scan()
    assert sorted(shingled) == sorted(warm.pages)
    assert [f.to_json() for f in FamilyAnswers(index).families(dismissed=dedup.dismissed_pairs(warm))] == cold
    warm.close()
    shutil.rmtree(root / ".curator")
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 1 << 30)  # a cold load parsed here: no by-products
    assert families(Wiki(root)) == cold


def test_a_cold_health_shingles_in_the_parse_its_link_figures_start(
        root: Path, bulk: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """``health`` parses every page for its link figures before it asks the duplicate figure:
    that parse shingles the bodies too, so its scan reads no page again, and finds what a scan
    of its own does; nothing is kept after it."""
    from curator.engine.review.health import health

    shutil.copytree(root, root.parent / "copy")
    shingled = count_shingled(monkeypatch)
    wiki = Wiki(root)
    report = health(wiki)
    assert shingled == []  # every body shingled by the parse workers, none read again
    assert wiki.store.byproduct is None and wiki.store.byproducts == {}
    assert not [f for f in (root / ".curator").iterdir() if "spill" in f.name]
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 1 << 30)  # (a parse here: the scan reads every page)
    alone = dedup_families.family_count(Wiki(root.parent / "copy"))
    assert report.figure("duplicates").value == alone and shingled
    # warm (the page cache kept): nothing collected, nothing to collect
    again = Wiki(root)
    assert health(again).figure("duplicates").value == alone and again.store.byproducts == {}


def test_a_page_changed_between_the_parse_and_the_scan_is_shingled_from_its_bytes_now(
        root: Path, bulk: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    shingled = count_shingled(monkeypatch)
    load_kept = dedup.DedupIndex._load_kept
    new_text = page("Aizen Bg3 V2 Entry 155", facts(7, 9001))  # other facts: no longer a copy

    def then_edit(self: dedup.DedupIndex) -> bool:
        answered = load_kept(self)  # (the bulk parse: every body shingled in its workers)
        assert set(self.wiki.store.byproducts) == set(self.wiki.pages)
        (root / COPY).write_text(new_text, encoding="utf-8")
        self.wiki.refresh()  # (the store sees the edit before the scan starts)
        return answered

    monkeypatch.setattr(dedup.DedupIndex, "_load_kept", then_edit)
    wiki = Wiki(root)
    cold = families(wiki)
    assert shingled == [COPY]  # only the edited page read again, from its current bytes
    [fam] = [f for f in cold if ORIGINAL in f["pages"]]
    assert COPY not in fam["pages"]
    monkeypatch.setattr(dedup.DedupIndex, "_load_kept", load_kept)
    wiki.close()
    shutil.rmtree(root / ".curator")
    monkeypatch.setattr(store_module, "PARALLEL_MIN", 1 << 30)
    assert families(Wiki(root)) == cold  # what a scan reading every page finds


def test_a_stopped_cold_scan_keeps_no_by_products(root: Path, bulk: None) -> None:  # noqa: F811
    wiki = Wiki(root)
    index = dedup.DedupIndex(wiki)
    index.stop()  # (the station closing while the first load parses)
    with pytest.raises(dedup.ScanStopped):
        index.update()
    assert wiki.store.loaded and wiki.store.byproduct is None and wiki.store.byproducts == {}


def test_the_parse_workers_shingle_as_the_scan_does() -> None:
    """The body a parse worker hands the by-product is the one :func:`dedup.body_of` reads."""
    texts = [
        page("Crlf", facts(4, 1)).replace("\n", "\r\n"),
        "\ufeff" + page("Bom", facts(4, 2)),
        "no frontmatter at all, " + " ".join(facts(3, 3)),
        "---\ntitle: [broken\n---\n" + " ".join(facts(3, 4)),
        "",
    ]
    paths = [f"wiki/p-{i}.md" for i in range(len(texts))]
    data = [t.encode("utf-8") for t in texts] + [b"bad \xff\xfe bytes " + " ".join(facts(3, 5)).encode()]
    paths.append("wiki/p-bad.md")
    parsed = [parse_page(p, d)[1] for p, d in zip(paths, data, strict=True)]
    assert dedup.shingle_texts(paths, parsed) == dedup.shingle_texts(paths, [dedup.body_of(d) for d in data])


def _spilled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every page's shingles written to a scan's spill file from now on."""
    from curator.engine.dedup import spill as dedup_spill

    written: list[int] = []
    real = dedup_spill.Spill.put

    def put(self: dedup_spill.Spill, blob: bytes) -> dedup_spill.Spilled:
        written.append(len(blob))
        return real(self, blob)

    monkeypatch.setattr(dedup_spill.Spill, "put", put)
    return written


def test_a_scan_holds_every_pages_shingles_in_a_spill_file_not_in_memory(
        root: Path, bulk: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Cold (the parse workers shingle) and warm (the scan's own shingling): every page's shingles
    are written to the scan's spill file as they come and read back from it, the answer a scan's
    holding them in memory; nothing of it is left in the state folder or held by the index."""
    from tests.engine.dedup.test_dedup_families import full_scan

    written = _spilled(monkeypatch)
    wiki = Wiki(root)
    cold = families(wiki)
    assert len(written) == len(wiki.pages) and sum(written) > 0
    index = dedup.index_for(wiki)
    assert index._spill is None and not list(wiki.state_dir.glob(".dedup-spill-*"))
    assert cold == full_scan(root)
    wiki.close()
    written.clear()
    warm = Wiki(root)
    fresh = dedup.DedupIndex(warm)
    fresh.scan()
    assert len(written) == len(warm.pages)
    assert [f.to_json() for f in FamilyAnswers(fresh).families(dismissed=dedup.dismissed_pairs(warm))] == cold
    warm.close()


def test_where_the_state_cannot_be_written_the_shingles_stay_in_memory(
        root: Path, bulk: None, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from tests.engine.dedup.test_dedup_families import full_scan

    written = _spilled(monkeypatch)
    monkeypatch.setattr(dedup.DedupIndex, "_writable_state", lambda self: False)
    assert families(Wiki(root)) == full_scan(root)
    assert written == []


def test_a_spill_gives_back_what_was_written_after_its_pages_are_released(tmp_path: Path) -> None:
    """Views of the spill read what was put, an empty page's too, after the mapping's pages are
    dropped and after more was written (mapped again); closing leaves the views readable."""
    import numpy as np

    from curator.engine.dedup import spill as dedup_spill

    spill = dedup_spill.open_spill(tmp_path / "state")
    assert spill is not None
    arrays = [np.arange(n, dtype=np.uint64) * np.uint64(2**40 + 7) for n in (3, 0, 1000)]
    places = [spill.put(a.tobytes()) for a in arrays]
    views = [spill.view(p) for p in places]
    spill.release()
    later = np.arange(5, dtype=np.uint64)
    views.append(spill.view(spill.put(later.tobytes())))
    spill.release()
    spill.close()
    for view, want in zip(views, [*arrays, later], strict=True):
        assert np.array_equal(view, want)
    assert not list((tmp_path / "state").iterdir())  # (unlinked from the start)
    (tmp_path / "a-file").write_text("not a folder")
    assert dedup_spill.open_spill(tmp_path / "a-file" / "state") is None  # (no file there: in memory)
