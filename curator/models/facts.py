"""Table models of the Facts view's three queues (similar groups and their facts, conflicts, stale
facts); every text escaped as in every review queue (:class:`RecordTableModel`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from curator.engine.corpus.facts import Fact
from curator.engine.facts.conflicts import Conflict
from curator.engine.facts.similar import SimilarGroup
from curator.engine.facts.stale import StaleFact
from curator.models.records import RecordTableModel

COL_GROUP_TEXT = 3
COL_FACT_TEXT = 2
COL_CONFLICT_REASON = 0
COL_CONFLICT_FACTS = (1, 3)
COL_CONFLICT_PAGES = (2, 4)
COL_CONFLICT_JUDGE = 5
COL_STALE_PAGE = 0
COL_STALE_TEXT = 2
COL_STALE_WHY = 4


class SimilarGroupModel(RecordTableModel[SimilarGroup]):
    headers = ("Score", "Facts", "Pages", "First wording")

    def cell(self, record: SimilarGroup, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            pages = len({f.path for f in record.facts})
            # (quantised vectors score a pair of equal texts a hair above 1)
            return (f"{min(record.score, 1.0):.2f}", len(record.facts), pages, record.facts[0].text)[column]
        return None


class GroupFactModel(RecordTableModel[Fact]):
    headers = ("Page", "Line", "Wording")

    def cell(self, record: Fact, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.path, record.line, record.text)[column]
        if role == Qt.ItemDataRole.ToolTipRole and column == COL_FACT_TEXT:
            return record.text
        return None


class ConflictModel(RecordTableModel[Conflict]):
    headers = ("Why they disagree", "Fact 1", "Page 1", "Fact 2", "Page 2", "Judge")

    def cell(self, record: Conflict, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.reason, record.a.text, f"{record.a.path}:{record.a.line}",
                    record.b.text, f"{record.b.path}:{record.b.line}",
                    record.verdict["verdict"] if record.verdict else "")[column]
        if role == Qt.ItemDataRole.ToolTipRole and column in COL_CONFLICT_FACTS:
            return (record.a if column == COL_CONFLICT_FACTS[0] else record.b).text
        if role == Qt.ItemDataRole.ToolTipRole and column == COL_CONFLICT_JUDGE and record.verdict:
            return f"{record.verdict['model']}: {verdict_text(record)}"
        return None


def verdict_text(conflict: Conflict) -> str:
    """The judge's verdict on ``conflict`` in a few words (empty when it was not asked)."""
    v = conflict.verdict
    return f"{v['verdict']} — {v['why']}" if v and v.get("why") else v["verdict"] if v else ""


class StaleModel(RecordTableModel[StaleFact]):
    headers = ("Page", "Line", "Fact", "Due", "Why")

    def cell(self, record: StaleFact, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.path, record.line, record.text, record.due.isoformat(), record.why)[column]
        if role == Qt.ItemDataRole.ToolTipRole and column in (COL_STALE_TEXT, COL_STALE_WHY):
            return record.text if column == COL_STALE_TEXT else record.why
        return None
