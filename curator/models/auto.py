"""The auto-filed panel's model: pages under ``auto/`` and those held in ``_review/`` (docs/design.md §10).

:func:`gather_auto` runs off the GUI thread: the engine's :func:`~curator.engine.filing.curation.list_auto`
rows plus what the panel shows beside them (source, department, revision log, the name a share
would give the copy) and the folders a confirmed page can move to. :func:`details_html` shows one
page's filing details for the preview pane.
"""

from __future__ import annotations

import html
import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from curator.engine.filing.autofile import AUTO_DIR, REVIEW_DIR, revisions_of
from curator.engine.filing.curation import AutoEntry, list_auto, share_target
from curator.engine.filing.grading import FILE_THRESHOLD, REVIEW_THRESHOLD
from curator.models.records import RecordRole, RecordTableModel

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

COL_TITLE, COL_TYPE, COL_SCORE, COL_STATUS, COL_SOURCE, COL_REVISIONS, COL_UPDATED, COL_PATH = range(8)
HEADERS = ("Title", "Type", "Score", "Status", "Source", "Revisions", "Updated", "Path")
__all__ = ["AutoListing", "AutoModel", "AutoRow", "RecordRole", "details_html", "gather_auto"]

#: Folders a page is never confirmed into (the engine refuses them too).
NOT_TARGETS = (AUTO_DIR, REVIEW_DIR, "_archive")


@dataclass(slots=True)
class AutoRow:
    entry: AutoEntry
    source: str = ""
    department: str = ""
    layer: str = ""
    created: str = ""
    revisions: list[str] = field(default_factory=list)
    share_name: str = ""  # the copy's file name in the shared wiki (``<agent>--<stem>.md``)

    @property
    def path(self) -> str:
        return self.entry.path

    @property
    def status(self) -> str:
        if self.entry.review:
            return "held for review"
        if self.entry.shared_to:
            return f"shared → {self.entry.shared_to}"
        return "filed"


@dataclass(slots=True)
class AutoListing:
    rows: list[AutoRow]
    folders: list[str]  # where a confirmed page can go ("" = the wiki root)
    default_folder: str


def gather_auto(wiki: Wiki) -> AutoListing:
    """Every auto-filed and held page with its details (runs off the GUI thread)."""
    rows = []
    pages = wiki.pages
    for entry in list_auto(wiki):
        page = pages.get(entry.path)
        meta: dict[str, Any] = page.meta if page is not None else {}
        text = wiki.read_text(entry.path)
        try:
            share_name = posixpath.basename(share_target(wiki, entry.path, meta))
        except ValueError:
            share_name = ""
        rows.append(AutoRow(entry, source=str(meta.get("source") or ""),
                            department=str(meta.get("department") or ""),
                            layer=page.layer if page is not None else "", created=str(meta.get("created") or ""),
                            revisions=revisions_of(text), share_name=share_name))
    folders = sorted({posixpath.dirname(p) for p in pages if p.split("/")[0] not in NOT_TARGETS})
    default = "wiki" if (wiki.root / "wiki").is_dir() else ""
    if default not in folders:
        folders.insert(0, default)
    return AutoListing(rows, folders, default)


def band(score: int | None) -> str:
    """What the grade score meant when the page was filed (docs/design.md §10)."""
    if score is None:
        return "not recorded"
    if score >= FILE_THRESHOLD:
        return f"{score} (filed: ≥ {FILE_THRESHOLD})"
    if score >= REVIEW_THRESHOLD:
        return f"{score} (grey band {REVIEW_THRESHOLD}–{FILE_THRESHOLD - 1}: held for review)"
    return f"{score} (below {REVIEW_THRESHOLD})"


def details_html(row: AutoRow) -> str:
    e = row.entry
    fields = [("Path", e.path), ("Type", e.type or "—"), ("Grade score", band(e.score)), ("Status", row.status),
              ("Filed by", e.filed_by or e.author or "—"), ("Department", row.department or "—"),
              ("Source", row.source or "—"), ("Layer / trust", f"{row.layer} / {e.trust:.2f}"),
              ("Created", row.created or "—"), ("Updated", e.updated or "—")]
    # the page style draws cell borders (for tables in pages); this is a form, not a table
    plain = "border-style: none; padding: 1px 10px 1px 0px;"
    cells = "".join(f'<tr><td style="color:#555555; {plain}">{name}</td>'
                    f'<td style="{plain}">{html.escape(value)}</td></tr>' for name, value in fields)
    log = "".join(f"<li>{html.escape(line.removeprefix('- '))}</li>" for line in row.revisions) or \
        "<li><i>no revision log</i></li>"
    return (f'<div style="background-color:#f4f6f7; padding:6px;">'
            f'<table cellspacing="0" cellpadding="1">{cells}</table>'
            f"<p><b>Revision log</b> ({len(row.revisions)})</p><ul>{log}</ul></div><hr>")


class AutoModel(RecordTableModel[AutoRow]):
    headers = HEADERS

    @property
    def rows(self) -> list[AutoRow]:
        return self.records

    def row_of(self, path: str) -> int | None:
        return next((i for i, r in enumerate(self.records) if r.path == path), None)

    def cell(self, row: AutoRow, col: int, role: int) -> Any:
        e = row.entry
        if role == Qt.ItemDataRole.DisplayRole:
            return (e.title, e.type, "" if e.score is None else e.score, row.status, row.source,
                    len(row.revisions), e.updated or "", e.path)[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return e.path if col != COL_SOURCE else row.source
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_STATUS:
            if e.review:
                return QBrush(QColor("#b9770e"))
            if e.shared:
                return QBrush(QColor("#1f618d"))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_SCORE, COL_REVISIONS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
