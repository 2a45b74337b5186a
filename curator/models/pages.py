"""The page browser's table model and its filter proxy.

Rows are :class:`PageRow` records (which wiki, which page). The model sorts itself in Python with
precomputed keys, because a ``QSortFilterProxyModel`` sorting through ``data()`` makes ~1M Python
calls at 30,000 pages; the proxy only filters, with a per-row check that reads plain attributes.
"""

from __future__ import annotations

import heapq
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor

from curator.engine.corpus.page import LAYER_RANK
from curator.engine.corpus.summaries import Listed

COL_TITLE, COL_PATH, COL_LAYER, COL_TRUST, COL_TAGS, COL_INBOUND, COL_UPDATED, COL_WIKI = range(8)
HEADERS = ("Title", "Path", "Layer", "Trust", "Tags", "Inbound", "Updated", "Wiki")

#: Returns the :class:`PageRow` behind an index (Vorta's custom record role).
RecordRole = Qt.ItemDataRole.UserRole + 1
#: For a title other pages share: the part of its path that tells it apart ("" for a unique title).
DistinctRole = Qt.ItemDataRole.UserRole + 2

LAYER_COLORS = {"identity": "#8e44ad", "core": "#2471a3", "context": "#229954", "deep": "#7f8c8d"}

_Index = QModelIndex | QPersistentModelIndex

#: Rows sorted per call into C by :meth:`PageTableModel.presort` (then merged).
SORT_RUN = 2048


@dataclass(slots=True)
class PageRow:
    wiki: int  # index of the wiki in the workspace (0 for a single wiki)
    wiki_label: str
    #: what the list shows of the page: its summary as loaded (the pages are not all decoded
    #: when a big wiki opens), or the page itself after a change
    page: Listed
    inbound: int = 0

    @property
    def key(self) -> tuple[int, str]:
        return (self.wiki, self.page.path)


class PageTableModel(QAbstractTableModel):
    def __init__(self, show_wiki_column: bool = False) -> None:
        super().__init__()
        self._rows: list[PageRow] = []
        self._row_of: dict[tuple[int, str], int] = {}
        self.show_wiki_column = show_wiki_column
        self._sort: tuple[int, Qt.SortOrder] = (COL_TITLE, Qt.SortOrder.AscendingOrder)
        self.hidden: set[tuple[int, str]] = set()  # pages hidden from a previewed agent
        #: the inbound link counts, once the links are resolved (see :meth:`set_inbound`)
        self._inbound: dict[tuple[int, str], int] | None = None
        #: the rows' inbound counts are the ones kept when the wiki was last open, until
        #: :meth:`set_inbound` (the column's header says so)
        self._inbound_kept = False
        #: the rows of each title, kept as rows come and go (one dict append a row)
        self._by_title: dict[str, list[PageRow]] = {}
        #: each colliding title's differing path parts, worked out when a row of it is shown
        self._tells: dict[str, dict[tuple[int, str], str]] = {}

    # --- structure --------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else (8 if self.show_wiki_column else 7)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section] if 0 <= section < len(HEADERS) else None
        if section == COL_INBOUND and self._inbound_kept:  # (in italics: the text fits the column as it is)
            if role == Qt.ItemDataRole.ToolTipRole:
                return "As counted when the wiki was last open; being counted again"
            if role == Qt.ItemDataRole.FontRole:
                from PySide6.QtGui import QFont

                font = QFont()
                font.setItalic(True)
                return font
        return None

    def show_kept_inbound(self, kept: bool) -> None:
        """Whether the rows' inbound counts are the ones kept at the last open (until :meth:`set_inbound`)."""
        if kept != self._inbound_kept:
            self._inbound_kept = kept
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_INBOUND, COL_INBOUND)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        page = row.page
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_TITLE:
                return page.title
            if col == COL_PATH:
                return page.path
            if col == COL_LAYER:
                return page.layer
            if col == COL_TRUST:
                return f"{page.trust:.2f}"
            if col == COL_TAGS:
                return ", ".join(page.tags)
            if col == COL_INBOUND:
                return self.inbound(row)
            if col == COL_UPDATED:
                return page.updated or ""
            if col == COL_WIKI:
                return row.wiki_label
            return None
        if role == RecordRole:
            return row
        if role == DistinctRole:
            return self.distinct_part(row) if col == COL_TITLE else ""
        if role == Qt.ItemDataRole.ToolTipRole and col == COL_TITLE:
            return page.snippet or page.path
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.key in self.hidden:
                return QBrush(QColor("#999999"))
            if col == COL_LAYER:
                return QBrush(QColor(LAYER_COLORS.get(page.layer, "#7f8c8d")))
        if role == Qt.ItemDataRole.FontRole and row.key in self.hidden:
            from PySide6.QtGui import QFont

            font = QFont()
            font.setStrikeOut(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_TRUST, COL_INBOUND):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    # --- content ----------------------------------------------------------------------
    @property
    def rows(self) -> Sequence[PageRow]:
        return self._rows

    def row_for(self, key: tuple[int, str]) -> int | None:
        return self._row_of.get(key)

    def set_rows(self, rows: Iterable[PageRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self._inbound = None  # the rows carry their own counts
        self._index_titles()
        self._sort_rows()
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self._rows = []
        self._row_of = {}
        self._inbound = None
        self._index_titles()
        self.endResetModel()

    def append_sorted(self, rows: Sequence[PageRow]) -> None:
        """Append rows already in the model's sort order (see :meth:`presort`), e.g. in batches
        while a large wiki loads, so no single step blocks the GUI thread for long."""
        if not rows:
            return
        n = len(self._rows)
        self.beginInsertRows(QModelIndex(), n, n + len(rows) - 1)
        self._rows.extend(rows)
        collided = False
        for i, row in enumerate(rows, n):
            self._row_of[row.key] = i
            collided = self._add_title(row) or collided
        self.endInsertRows()
        if collided and n:  # rows shown before this batch may now share their title
            self.dataChanged.emit(self.index(0, COL_TITLE), self.index(n - 1, COL_TITLE), [DistinctRole])

    def presort(self, rows: list[PageRow]) -> list[PageRow]:
        """Sort ``rows`` in the model's current order without touching the model (thread-safe).

        In runs of :data:`SORT_RUN` rows, then merged: one ``sorted`` of 32,000 keys is one call
        into C that holds the interpreter lock ~100 ms (in the load's background task, it kept the
        GUI thread waiting as long); a run holds it a few milliseconds.
        """
        column, order = self._sort
        inbound = self.inbound
        reverse = order == Qt.SortOrder.DescendingOrder
        # (each key ends with the row's own (wiki, path): no two are equal, the position never decides)
        keyed = [((inbound(r) if column == COL_INBOUND else _sort_key(column, r), r.key), i)
                 for i, r in enumerate(rows)]
        runs = [sorted(keyed[i:i + SORT_RUN], reverse=reverse) for i in range(0, len(keyed), SORT_RUN)]
        merged = runs[0] if len(runs) == 1 else heapq.merge(*runs, reverse=reverse) if runs else []
        return [rows[i] for _key, i in merged]

    def update_rows(self, changed: Iterable[PageRow], removed: Iterable[tuple[int, str]]) -> None:
        """Apply an incremental change: replace or add ``changed``, drop ``removed``."""
        changed = list(changed)
        touched: set[str] = set()
        if self._inbound is not None and changed:  # each changed row brings its own count
            self._inbound = self._inbound | {row.key: row.inbound for row in changed}
        for key in removed:
            r = self._row_of.get(key)
            if r is None:
                continue
            self.beginRemoveRows(QModelIndex(), r, r)
            touched.add(self._drop_title(self._rows[r]))
            del self._rows[r]
            self._reindex()
            self.endRemoveRows()
        for row in changed:
            r = self._row_of.get(row.key)
            if r is None:
                n = len(self._rows)
                self.beginInsertRows(QModelIndex(), n, n)
                self._rows.append(row)
                self._row_of[row.key] = n
                self._add_title(row)
                touched.add(row.page.title)
                self.endInsertRows()
            else:
                touched.add(self._drop_title(self._rows[r]))
                self._rows[r] = row
                self._add_title(row)
                touched.add(row.page.title)
                self.dataChanged.emit(self.index(r, 0), self.index(r, self.columnCount() - 1))
        for title in touched:
            self._refresh_title(title)

    # --- titles several pages share ----------------------------------------------------------
    def distinct_part(self, row: PageRow) -> str:
        """What tells ``row`` apart from the other pages of its title: the part of its path the
        others' paths do not share (the wiki's name when the paths are the same); "" when no
        other page has its title."""
        title = row.page.title
        group = self._by_title.get(title)
        if group is None or len(group) < 2:
            return ""
        tells = self._tells.get(title)
        if tells is None:
            tells = self._tells[title] = differing_parts(group)
        return tells.get(row.key, "")

    def _index_titles(self) -> None:
        by_title: dict[str, list[PageRow]] = {}
        for row in self._rows:
            by_title.setdefault(row.page.title, []).append(row)
        self._by_title = by_title
        self._tells = {}

    def _add_title(self, row: PageRow) -> bool:
        """Count ``row`` under its title; whether another row has that title too."""
        title = row.page.title
        group = self._by_title.setdefault(title, [])
        group.append(row)
        self._tells.pop(title, None)
        return len(group) > 1

    def _drop_title(self, row: PageRow) -> str:
        title = row.page.title
        group = self._by_title.get(title)
        if group is not None:
            group[:] = [r for r in group if r.key != row.key]
            if not group:
                del self._by_title[title]
            self._tells.pop(title, None)
        return title

    def _refresh_title(self, title: str) -> None:
        """The title cells of ``title``'s other rows show a new differing part (or none now)."""
        for other in self._by_title.get(title, ()):
            r = self._row_of.get(other.key)
            if r is not None:
                cell = self.index(r, COL_TITLE)
                self.dataChanged.emit(cell, cell, [DistinctRole])

    def inbound(self, row: PageRow) -> int:
        """How many pages link to ``row``'s page (its load's count until :meth:`set_inbound`)."""
        counts = self._inbound
        return row.inbound if counts is None else counts.get(row.key, 0)

    def set_inbound(self, counts: dict[tuple[int, str], int]) -> None:
        """Every page's inbound link count (pages missing from ``counts`` have none). Kept as
        given and read per row when shown or sorted: no pass over 32,000 rows here."""
        self._inbound = counts
        self.show_kept_inbound(False)
        if self._rows:
            self.dataChanged.emit(self.index(0, COL_INBOUND), self.index(len(self._rows) - 1, COL_INBOUND))
        if self._sort[0] == COL_INBOUND:  # the counts arrived after the rows (a big workspace)
            self.sort(*self._sort)

    def update_inbound(self, changed: dict[tuple[int, str], int]) -> None:
        """The inbound link counts that changed (after an edit: a few pages' counts, not all)."""
        if not changed or not self._rows:
            return
        counts = self._inbound
        if counts is None:  # the rows carry their own counts
            for key, n in changed.items():
                r = self._row_of.get(key)
                if r is not None:
                    self._rows[r].inbound = n
        else:
            self._inbound = counts | changed
        if self._sort[0] == COL_INBOUND:
            self.sort(*self._sort)
            return
        if len(changed) > 64:  # (the first counts after a load: the whole column at once)
            self.dataChanged.emit(self.index(0, COL_INBOUND), self.index(len(self._rows) - 1, COL_INBOUND))
            return
        for key in changed:
            r = self._row_of.get(key)
            if r is not None:
                cell = self.index(r, COL_INBOUND)
                self.dataChanged.emit(cell, cell)

    def set_hidden(self, hidden: set[tuple[int, str]]) -> None:
        self.hidden = hidden
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, self.columnCount() - 1))

    # --- sorting (in Python, with precomputed keys) -------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort = (column, order)
        self.layoutAboutToBeChanged.emit()
        old = {id(r): i for i, r in enumerate(self._rows)}
        persistent = self.persistentIndexList()
        self._sort_rows()
        new_pos = {old[id(r)]: i for i, r in enumerate(self._rows)}
        self.changePersistentIndexList(
            persistent, [self.index(new_pos.get(p.row(), p.row()), p.column()) for p in persistent]
        )
        self.layoutChanged.emit()

    def _sort_rows(self) -> None:
        self._rows = self.presort(self._rows)
        self._reindex()

    def _reindex(self) -> None:
        self._row_of = {r.key: i for i, r in enumerate(self._rows)}


#: Where a path's differing part may begin or end (a folder, a word of a slug).
_BOUNDARY = frozenset("/-_ .")


def differing_parts(rows: Sequence[PageRow]) -> dict[tuple[int, str], str]:
    """For rows of one title: each row's path with what all the paths share at its start and its
    end left out (cut at a folder or word boundary, the cut marked "…"), as Obsidian tells files
    of one name apart. ``a/x/scene-01.md`` and ``a/x/scene-02.md`` give ``…01`` and ``…02``;
    ``a/b/index.md`` and ``a/c/index.md`` give ``…/b/…`` and ``…/c/…``."""
    stems = [posixpath.splitext(r.page.path)[0] for r in rows]
    if len(set(stems)) == 1:  # the same path in each wiki: the wikis' names tell them apart
        return {r.key: r.wiki_label for r in rows}
    shortest = min(map(len, stems))
    first = stems[0]
    start = 0
    while start < shortest and all(s[start] == first[start] for s in stems):
        start += 1
    while start > 0 and first[start - 1] not in _BOUNDARY:
        start -= 1
    end = 0  # characters all the paths share at their end
    while end < shortest - start and all(s[-1 - end] == first[-1 - end] for s in stems):
        end += 1
    while end > 0 and first[-end] not in _BOUNDARY:
        end -= 1
    parts: dict[tuple[int, str], str] = {}
    for row, stem in zip(rows, stems, strict=True):
        middle = stem[start:len(stem) - end].strip("/") or row.wiki_label
        lead = "" if not start else "…/" if stem[start - 1] == "/" else "…"
        tail = "" if not end else "/…" if stem[-end] == "/" else "…"
        parts[row.key] = f"{lead}{middle}{tail}"
    return parts


def _sort_key(column: int, r: PageRow) -> Any:
    page = r.page
    if column == COL_PATH:
        return page.path
    if column == COL_LAYER:
        return (LAYER_RANK.get(page.layer, 3), page.title.casefold())
    if column == COL_TRUST:
        return page.trust
    if column == COL_TAGS:
        return ", ".join(page.tags).casefold()
    if column == COL_UPDATED:
        return page.updated or ""
    if column == COL_WIKI:
        return r.wiki_label
    return page.title.casefold()


@dataclass(slots=True)
class PageFilter:
    layers: frozenset[str] = frozenset(LAYER_RANK)
    min_trust: float = 0.0
    max_trust: float = 1.0
    namespace: str | None = None  # None = all
    tag: str | None = None
    #: keys of pages matching the search box, or None when no search is active
    matches: frozenset[tuple[int, str]] | None = None

    def accepts(self, row: PageRow) -> bool:
        page = row.page
        if page.layer not in self.layers:
            return False
        if not self.min_trust <= page.trust <= self.max_trust:
            return False
        if self.namespace is not None and page.namespace != self.namespace:
            return False
        if self.tag is not None and self.tag not in {t.casefold() for t in page.tags}:
            return False
        return self.matches is None or row.key in self.matches

    def accepted(self, rows: Sequence[PageRow]) -> list[bool]:
        """:meth:`accepts` of every row, one pass per criterion in force (a new filter at 32,000
        pages: the list the proxy answers from, made on the GUI thread)."""
        layers, lo, hi = self.layers, self.min_trust, self.max_trust
        chosen = [r for r in rows if r.page.layer in layers and lo <= r.page.trust <= hi]
        namespace = self.namespace
        if namespace is not None:
            if "/" in namespace:  # (no page's first folder)
                chosen = []
            elif namespace:
                prefix = namespace + "/"
                chosen = [r for r in chosen if r.page.path.startswith(prefix)]
            else:
                chosen = [r for r in chosen if "/" not in r.page.path]
        if self.tag is not None:
            tag = self.tag
            chosen = [r for r in chosen if tag in {t.casefold() for t in r.page.tags}]
        if self.matches is not None:
            matches = self.matches
            chosen = [r for r in chosen if (r.wiki, r.page.path) in matches]
        if len(chosen) == len(rows):
            return [True] * len(rows)
        kept = set(map(id, chosen))
        return [id(r) in kept for r in rows]


class PageFilterProxy(QSortFilterProxyModel):
    """Filters rows by :class:`PageFilter`; sorting is delegated to the source model."""

    def __init__(self) -> None:
        super().__init__()
        self.filter = PageFilter()
        self.setDynamicSortFilter(False)
        #: while a new filter is applied: every source row's answer, computed in one pass
        self._accepted: list[bool] | None = None
        #: the filter lets every row through (no answer to compute: the rows a wiki's load
        #: appends, 2,500 at a time, are each asked for from C++)
        self._everything = True
        #: a filter was set with ``defer``: the rows are those of the filter before it
        self.stale = False
        self._source: PageTableModel | None = None

    def setSourceModel(self, model: QAbstractItemModel) -> None:
        self._source = model if isinstance(model, PageTableModel) else None
        super().setSourceModel(model)

    def set_filter(self, page_filter: PageFilter, *, defer: bool = False) -> None:
        """Filter the rows by ``page_filter``. With ``defer`` (no view shows these rows now),
        only note it: :meth:`catch_up` filters them when they are about to be seen."""
        self.filter = page_filter
        self._everything = page_filter == PageFilter()
        if defer:
            self.stale = True
            return
        self._apply()

    def catch_up(self) -> None:
        """Filter the rows by the filter :meth:`set_filter` deferred, if one was."""
        if self.stale:
            self._apply()

    def _apply(self) -> None:
        self.stale = False
        model = self.sourceModel()
        # Qt asks filterAcceptsRow once per row (32,000 calls from C++ at 32,000 pages): the
        # answers are computed here in one list comprehension, and each call only looks its row
        # up. The proxy's rows are then rebuilt in one layout change, not filtered in place: that
        # announces every run of rows that came or went (thousands of runs after a search of 32,000
        # pages, each one re-laid out by the table: half a second when a search is cleared).
        if isinstance(model, PageTableModel) and not self._everything:  # (else every answer is yes)
            self._accepted = self.filter.accepted(model.rows)
        try:
            self.invalidate()  # the mapping is rebuilt (and filterAcceptsRow asked) right here
            self.rowCount()
        finally:
            self._accepted = None

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        accepted = self._accepted
        if accepted is not None:
            return accepted[source_row]
        if self._everything:
            return True
        model = self._source
        assert model is not None
        return self.filter.accepts(model.rows[source_row])

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        model = self.sourceModel()
        if isinstance(model, PageTableModel):
            model.sort(column, order)

    def record(self, index: QModelIndex) -> PageRow | None:
        value = index.data(RecordRole) if index.isValid() else None
        return value if isinstance(value, PageRow) else None
