"""Health counts the fact queues itself only on a small wiki (exact search compares every fact with
every other: minutes at 4,000 pages, and the station's reads would wait behind it); a bigger wiki's
queues are counted when opened, and no fact index is built for Health."""

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
        counted = health.fact_figures(wiki, force=True)
        assert counted is not None and [f.value for f in counted][1] == 1  # the 30 vs 14 days conflict
        monkeypatch.setattr(health, "FACT_COUNT_MAX_PAGES", 500)
        assert health.fact_figures(wiki) is not None
    finally:
        wiki.close()
