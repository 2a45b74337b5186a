"""Health counts the fact queues itself on a small wiki, and on a bigger one only once a whole-wiki
queue has run (a first run reads every pair of close texts: minutes at 32,000 pages); until then a
bigger wiki's queues are counted when opened, and no fact index is built for Health."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.review import health
from curator.engine.wiki import Wiki
from tests.gui_helpers import make_wiki

PAGES = {"wiki/a.md": "# A\n\n- Backups are kept for thirty days.\n",
         "wiki/b.md": "# B\n\n- Backups are kept for 14 days.\n",
         "wiki/c.md": "# C\n\n- The office opens at nine every morning.\n"}


def test_a_big_wiki_is_not_counted_by_health(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wiki = Wiki(make_wiki(tmp_path / "w", PAGES))
    try:
        monkeypatch.setattr(health, "FACT_COUNT_MAX_PAGES", 2)
        assert health.fact_figures(wiki) is None
        assert not (wiki.state_dir / "facts.sqlite").exists()
        assert not wiki.store.decoded  # (the pages counted, not every one decoded to count them)
        counted = health.fact_figures(wiki, force=True)
        assert counted is not None and [f.value for f in counted][1] == 1  # the 30 vs 14 days conflict
        monkeypatch.setattr(health, "FACT_COUNT_MAX_PAGES", 500)
        assert health.fact_figures(wiki) is not None
    finally:
        wiki.close()


def test_a_big_wiki_is_counted_once_its_queues_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a whole-wiki queue ran (in any process), the index keeps what a count needs: Health
    counts a big wiki then, in a new process too."""
    from curator.engine.facts.conflict_queue import fact_conflicts
    from curator.engine.policy.actor import OPERATOR

    root = make_wiki(tmp_path / "w", PAGES)
    monkeypatch.setattr(health, "FACT_COUNT_MAX_PAGES", 2)
    wiki = Wiki(root)
    try:
        fact_conflicts(wiki, OPERATOR, page="wiki/a.md")  # an index, but no whole-wiki run yet
        assert health.fact_figures(wiki) is None
        assert len(fact_conflicts(wiki, OPERATOR)) == 1
    finally:
        wiki.close()
    again = Wiki(root)
    try:
        counted = health.fact_figures(again)
        assert counted is not None and [f.value for f in counted][1] == 1
    finally:
        again.close()
