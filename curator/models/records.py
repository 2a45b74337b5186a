"""A read-only table of records (one row per record, fixed column headers) for the review views.

Subclasses say what a cell shows (:meth:`RecordTableModel.cell`); the record itself is returned
under :data:`RecordRole`, as in the page browser's model. Every text a review queue shows is shown
with its control and format characters escaped (``<U+202E>``): what the operator decides on reads
as stored, never reordered by a bidirectional override (docs/design.md §13).
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from curator.engine.corpus.lookalike import escape_controls

RecordRole = Qt.ItemDataRole.UserRole + 1
_TEXT_ROLES = frozenset({Qt.ItemDataRole.DisplayRole})  # (tooltips keep the line breaks they are made of)
_Index = QModelIndex | QPersistentModelIndex
T = TypeVar("T")


class RecordTableModel(QAbstractTableModel, Generic[T]):
    headers: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.records: list[T] = []

    def set_records(self, records: list[T]) -> None:
        self.beginResetModel()
        self.records = records
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section] if 0 <= section < len(self.headers) else None
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.records):
            return None
        record = self.records[index.row()]
        if role == RecordRole:
            return record
        value = self.cell(record, index.column(), role)
        if isinstance(value, str) and role in _TEXT_ROLES:
            return escape_controls(value)
        return value

    def cell(self, record: T, column: int, role: int) -> Any:
        """What ``record`` shows in ``column`` for ``role`` (None for nothing)."""
        raise NotImplementedError
