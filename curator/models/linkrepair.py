"""Table models of the link repair queue and the lint queue (docs/design.md §12)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from curator.engine.review.linkrepair import Unresolved
from curator.engine.review.lint import LintIssue
from curator.models.records import RecordRole, RecordTableModel

__all__ = ["LintModel", "RecordRole", "UnresolvedModel"]

COL_TARGET, COL_LINKS, COL_PAGES, COL_SUGGESTION = range(4)


class UnresolvedModel(RecordTableModel[Unresolved]):
    headers = ("Target", "Links", "Pages", "Top suggestion")

    def cell(self, record: Unresolved, column: int, role: int) -> Any:
        best = record.suggestions[0] if record.suggestions else None
        if role == Qt.ItemDataRole.DisplayRole:
            if column == COL_TARGET:
                return f"[[{record.target}]]"
            if column == COL_LINKS:
                return record.count
            if column == COL_PAGES:
                return len(record.pages)
            if column == COL_SUGGESTION:
                if best is None:
                    return "—"
                return f"needs a look: {best.path}  ({best.score:.2f})" if record.needs_look \
                    else f"{best.path}  ({best.score:.2f})"
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == COL_SUGGESTION and best is not None:
                why = (" — a guess, not accepted in bulk: choose the page yourself" if record.needs_look
                       else " — sure: accepted in bulk")
                return f"{best.path}: {best.reason} (score {best.score:.2f}, confidence {record.confidence:.2f}){why}"
            if column == COL_PAGES:
                return "\n".join(record.pages[:20]) + ("\n…" if len(record.pages) > 20 else "")
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (COL_LINKS, COL_PAGES):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


COL_PATH, COL_LINE, COL_CODE, COL_MESSAGE = range(4)


class LintModel(RecordTableModel[LintIssue]):
    headers = ("Page", "Line", "Kind", "Problem")

    def cell(self, record: LintIssue, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return (record.path, record.line or "", record.code, record.message)[column]
        if role == Qt.ItemDataRole.ToolTipRole and column in (COL_PATH, COL_MESSAGE):
            return record.path if column == COL_PATH else record.message  # (a long path is elided)
        return None
