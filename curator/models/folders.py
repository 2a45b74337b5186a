"""The page browser's folder tree: the wiki's folders with their pages, as Obsidian's file explorer
shows them (folders first, then files, by name).

Built in one pass over the page list's rows into plain Python nodes, and only while the tree is
shown: no Qt item per page (32,000 ``QStandardItem`` cost seconds), and Qt asks for the rows of a
folder only when it is expanded.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from curator.models.pages import PageRow, RecordRole

_Index = QModelIndex | QPersistentModelIndex


class Node:
    __slots__ = ("children", "count", "name", "parent", "path", "record", "row")

    def __init__(self, name: str, path: str, parent: Node | None, record: PageRow | None = None) -> None:
        self.name = name
        self.path = path  # a folder's path ("" for the top), a page's file path
        self.parent = parent
        self.record = record
        self.children: list[Node] = []
        self.row = 0  # its place among its parent's children
        self.count = 0  # pages in it and below (a folder)


class FolderTreeModel(QAbstractItemModel):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("", "", None)
        self._pages: dict[tuple[int, str], Node] = {}
        self._folders: dict[str, Node] = {}

    # --- content ----------------------------------------------------------------------
    def set_rows(self, rows: Iterable[PageRow]) -> None:
        """The tree of ``rows``' paths (the wiki's label leads the path when rows come from
        several wikis)."""
        rows = list(rows)
        several = len({r.wiki for r in rows}) > 1
        root = Node("", "", None)
        folders: dict[str, Node] = {"": root}
        pages: dict[tuple[int, str], Node] = {}
        for record in rows:
            path = f"{record.wiki_label}/{record.page.path}" if several else record.page.path
            folder_path, file_name = posixpath.split(path)
            parent = folders.get(folder_path)
            if parent is None:
                parent = self._folder(folders, folder_path)
            leaf = Node(posixpath.splitext(file_name)[0], record.page.path, parent, record)
            parent.children.append(leaf)
            pages[record.key] = leaf
        for node in folders.values():
            node.children.sort(key=lambda n: (n.record is not None, n.name.casefold(), n.name))
            for i, child in enumerate(node.children):
                child.row = i
        for node in sorted(folders.values(), key=lambda n: -n.path.count("/") - (n is not root)):
            node.count = sum(1 if c.record is not None else c.count for c in node.children)
        self.beginResetModel()
        self.root, self._folders, self._pages = root, folders, pages
        self.endResetModel()

    @staticmethod
    def _folder(folders: dict[str, Node], path: str) -> Node:
        # (a loop, not recursion: a hostile path can be folders thousands deep)
        node = folders[""]
        sofar = ""
        for name in path.split("/"):
            sofar = f"{sofar}/{name}" if sofar else name
            child = folders.get(sofar)
            if child is None:
                child = folders[sofar] = Node(name, sofar, node)
                node.children.append(child)
            node = child
        return node

    def index_of(self, key: tuple[int, str]) -> QModelIndex:
        """The index of the page ``key`` (invalid when the tree does not hold it)."""
        node = self._pages.get(key)
        return QModelIndex() if node is None else self.createIndex(node.row, 0, node)

    def folder_paths(self) -> list[str]:
        """Every folder's path (not the top's)."""
        return [path for path in self._folders if path]

    def folder_index(self, path: str) -> QModelIndex:
        node = self._folders.get(path)
        return QModelIndex() if node is None or node is self.root else self.createIndex(node.row, 0, node)

    @staticmethod
    def node(index: _Index) -> Node | None:
        node = index.internalPointer() if index.isValid() else None
        return node if isinstance(node, Node) else None

    # --- structure --------------------------------------------------------------------
    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        node = self.node(parent) or self.root
        if column != 0 or not 0 <= row < len(node.children):
            return QModelIndex()
        return self.createIndex(row, 0, node.children[row])

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        node = self.node(index)
        up = node.parent if node is not None else None
        if up is None or up is self.root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        node = self.node(parent) or self.root
        return len(node.children)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 1

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008
        node = self.node(parent) or self.root
        return bool(node.children)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self.node(index)
        if node is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return node.name if node.record is not None else f"{node.name}  ({node.count:,})"
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{node.record.page.title}\n{node.path}" if node.record is not None else node.path + "/"
        if role == RecordRole:
            return node.record
        return None

