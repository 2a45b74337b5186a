"""The auto-filed panel: pages agents filed under ``auto/`` and those held in ``_review/``.

The operator reads a page (preview here, or in the page view) and decides: **Confirm as curated**
(target folder, layer, trust), **Share** to the shared wiki (namespace; the shared wiki's policy
may refuse, which is shown as a message), or **Remove** (moved to ``_archive/``). Decisions apply
to the whole selection, each page its own engine action and commit.

The shared wiki: in a home, the workspace's ``shared`` wiki; for a single agent wiki inside a home,
the home's ``shared/wiki`` (:func:`~curator.engine.corpus.home.shared_wiki_for`); otherwise there is none
and Share is disabled with the reason in its tooltip.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from curator.engine.corpus.page import LAYERS, link_key
from curator.engine.filing.autofile import AUTO_DIR, REVIEW_DIR
from curator.engine.filing.curation import CURATED_TRUST, DEFAULT_SHARE_NAMESPACE
from curator.engine.policy.actor import OPERATOR
from curator.engine.policy.scope import namespace_of
from curator.models.auto import (
    COL_PATH,
    COL_SOURCE,
    COL_TITLE,
    AutoListing,
    AutoModel,
    AutoRow,
    details_html,
)
from curator.views.page.page_view import SafeBrowser
from curator.views.page.render import STYLE, render_message, render_page
from curator.views.plain_tips import set_tip
from curator.views.review.base import ReviewView, record_table

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki
    from curator.engine.write.actions import ActionResult
    from curator.views.host import ViewHost

ROOT_LABEL = "(wiki root)"
#: The title column's width (about 35 characters), whatever the width of the pane.
TITLE_WIDTH = 260


def _pages_label(rows: list[AutoRow]) -> str:
    names = ", ".join(r.path for r in rows[:3]) + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")
    return f"{len(rows)} page{'s' if len(rows) != 1 else ''}: {names}"


def _dialog_buttons(dialog: QDialog, ok_text: str) -> QDialogButtonBox:
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    dialog.ok_button = buttons.addButton(ok_text, QDialogButtonBox.ButtonRole.AcceptRole)  # type: ignore[attr-defined]
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


def _fit(dialog: QDialog, width: int) -> None:
    """Size ``dialog`` to ``width`` and the height its wrapped text needs at that width (a dialog
    sized before its labels wrap lets them overlap the fields below)."""
    dialog.setMinimumWidth(width)
    layout = dialog.layout()
    assert layout is not None  # every dialog here has its layout set before it is sized
    layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
    dialog.resize(width, layout.heightForWidth(width) if layout.hasHeightForWidth() else layout.sizeHint().height())


class ConfirmDialog(QDialog):
    """Confirm as curated: where the page goes, its layer and its trust."""

    def __init__(self, rows: list[AutoRow], folders: list[str], default_folder: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Confirm as curated")
        self.rows = rows
        self.folder = QComboBox()
        self.folder.setEditable(True)
        self.folder.addItems([f or ROOT_LABEL for f in folders])
        self.folder.setCurrentText(default_folder or ROOT_LABEL)
        self.layer = QComboBox()
        self.layer.addItems(list(LAYERS))
        self.layer.setCurrentText(rows[0].layer if rows and rows[0].layer in LAYERS else "context")
        self.trust = QDoubleSpinBox()
        self.trust.setRange(0.0, 1.0)
        self.trust.setSingleStep(0.05)
        self.trust.setDecimals(2)
        self.trust.setValue(CURATED_TRUST)
        self.target = QLabel()
        self.target.setWordWrap(True)
        intro = QLabel(f"Move {html.escape(_pages_label(rows))} out of auto/ as curated pages "
                       "(author operator, tag <i>curated</i>, source_type user_statement). One commit per page.")
        intro.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Folder", self.folder)
        form.addRow("Layer", self.layer)
        form.addRow("Trust", self.trust)
        form.addRow("", self.target)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(_dialog_buttons(self, "Confirm"))
        self.folder.currentTextChanged.connect(self._update_target)
        self._update_target()
        _fit(self, 520)

    def folder_value(self) -> str:
        text = self.folder.currentText().strip()
        return "" if text == ROOT_LABEL else text.strip("/")

    def _update_target(self) -> None:
        if len(self.rows) == 1:
            name = self.rows[0].path.rsplit("/", 1)[-1]
            folder = self.folder_value()
            self.target.setText(f"→ {folder}/{name}" if folder else f"→ {name}")


class ShareDialog(QDialog):
    """Share to the shared wiki: which namespace the copy goes to."""

    def __init__(self, rows: list[AutoRow], destination: str, namespaces: list[str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Share to the shared wiki")
        self.rows = rows
        self.namespace = QComboBox()
        self.namespace.setEditable(True)
        self.namespace.addItems(sorted({DEFAULT_SHARE_NAMESPACE, *namespaces}))
        self.namespace.setCurrentText(DEFAULT_SHARE_NAMESPACE)
        self.target = QLabel()
        self.target.setWordWrap(True)
        intro = QLabel(f"Copy {html.escape(_pages_label(rows))} to {html.escape(destination)}. The shared "
                       "wiki's policy and department rules apply to the agent that filed each page; "
                       "a refusal leaves everything as it is.")
        intro.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Namespace", self.namespace)
        form.addRow("", self.target)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(_dialog_buttons(self, "Share"))
        self.namespace.currentTextChanged.connect(self._update_target)
        self._update_target()
        _fit(self, 520)

    def namespace_value(self) -> str:
        return self.namespace.currentText().strip().strip("/")

    def _update_target(self) -> None:
        ns = self.namespace_value()
        names = [r.share_name for r in self.rows[:3] if r.share_name]
        self.target.setText("\n".join(f"→ {ns}/{n}" if ns else f"→ {n}" for n in names))


class RemoveDialog(QDialog):
    """Remove (archive) the selection, after saying what happens."""

    def __init__(self, rows: list[AutoRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Remove auto-filed pages")
        self.rows = rows
        text = QLabel(f"Move {html.escape(_pages_label(rows))} to _archive/? Nothing is deleted; each page "
                      "is one commit that Edit ▸ Undo or the History view can revert.")
        text.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(_dialog_buttons(self, "Remove"))
        _fit(self, 480)


class AutoView(ReviewView):
    def __init__(self, host: ViewHost) -> None:
        super().__init__(host)
        self.model = AutoModel()
        self.listing: AutoListing | None = None
        self._preview_path: str | None = None

        self.count = QLabel("Reading auto-filed pages…")
        self.count.setWordWrap(True)  # never widens the window (a home adds the wiki selector)
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Open the page in the page view (or double-click it)")
        self.confirm_button = QPushButton("Confirm as curated…")
        self.share_button = QPushButton("Share…")
        self.remove_button = QPushButton("Remove…")
        self.confirm_button.setToolTip("Move the selected pages out of auto/ as curated pages (one commit each)")
        self.remove_button.setToolTip("Move the selected pages to _archive/ (one commit each)")
        top = QHBoxLayout()
        top.addWidget(self.wiki_choice)
        top.addWidget(self.count, 1)
        actions = QHBoxLayout()
        for button in (self.open_button, self.confirm_button, self.share_button, self.remove_button):
            actions.addWidget(button)
        self.share_note = QLabel()
        self.share_note.setStyleSheet("color: #777777;")
        self.share_note.setMinimumWidth(0)
        self.share_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        actions.addWidget(self.share_note, 1)  # takes the rest of the row; never widens it

        self.table = record_table(self.model, multi=True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The title keeps its width (it was stretched into what the other columns left: ~6
        # characters in a narrow pane); the source text takes the rest, and scrolls past it.
        header.setSectionResizeMode(COL_TITLE, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(COL_TITLE, TITLE_WIDTH)
        header.setSectionResizeMode(COL_SOURCE, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(60)
        self.table.setColumnHidden(COL_PATH, True)  # shown in the tooltip and the preview
        self.preview = SafeBrowser()
        self.preview.document().setDefaultStyleSheet(STYLE)  # render_page leaves styling to the view

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.preview)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([260, 520])
        self.lay_out(top, actions, split)

        self.open_button.clicked.connect(self.open_selected)
        self.confirm_button.clicked.connect(self.confirm_selected)
        self.share_button.clicked.connect(self.share_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.table.doubleClicked.connect(lambda _i: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self.preview.anchorClicked.connect(self.open_page_url)
        self._destination: int | Path | None = None
        self._destination_text = ""
        self.wiki_changed()
        self._selection_changed()
        self.preview.setHtml(render_message("Auto-filed pages", "Reading the wiki…"))

    # --- the list -------------------------------------------------------------------------------
    def relevant(self, path: str, came_or_went: bool) -> bool:
        # the auto-filed and held pages, and the folders a page may be confirmed into
        return came_or_went or path.startswith((f"{AUTO_DIR}/", f"{REVIEW_DIR}/"))

    def compute(self, wiki: Wiki) -> AutoListing:
        from curator.models.auto import gather_auto

        return gather_auto(wiki)

    def show_content(self, listing: AutoListing) -> None:
        selected = {r.path for r in self.selected_rows()}
        current = self.current_row()
        row_hint = self.table.currentIndex().row()
        self.listing = listing
        self.model.set_records(listing.rows)
        held = sum(1 for r in listing.rows if r.entry.review)
        n = len(listing.rows) - held
        self.count.setText(f"{n} auto-filed page{'s' if n != 1 else ''}"
                           + (f", {held} held for review" if held else "") + f" in {self.wiki_label}")
        if not listing.rows:
            self._preview_path = None
            self.preview.setHtml(render_message(
                "No auto-filed pages", f"Agents have not filed any page under auto/ in {self.wiki_label}, "
                "and nothing is held for review in _review/."))
            self._selection_changed()
            self.mark_ready()
            return
        rows = [i for i, r in enumerate(listing.rows) if r.path in selected]
        if not rows:
            rows = [min(max(row_hint, 0), len(listing.rows) - 1)]
        keep_current = self.model.row_of(current.path) if current is not None else None
        self._select_rows(rows, keep_current if keep_current is not None else rows[0])

    def _select_rows(self, rows: list[int], current: int) -> None:
        self.select_table_rows(self.table, rows, current)
        self._selection_changed(force=True)

    def selected_rows(self) -> list[AutoRow]:
        return self.selected_records(self.table)

    def current_row(self) -> AutoRow | None:
        value = self.current_record(self.table)
        return value if isinstance(value, AutoRow) else None

    def select_paths(self, paths: list[str]) -> None:
        """Select these pages (the first becomes current); for the operator's code and for tests."""
        rows = [r for r in (self.model.row_of(p) for p in paths) if r is not None]
        if rows:
            self._select_rows(rows, rows[0])

    # --- the shared wiki --------------------------------------------------------------------------
    def wiki_changed(self) -> None:
        self._destination, self._destination_text = self._share_destination()
        self._selection_changed()

    def _share_destination(self) -> tuple[int | Path | None, str]:
        """Where Share copies to (a workspace wiki index or a folder), or None and the reason."""
        from curator.engine.corpus.home import shared_wiki_for
        from curator.engine.errors import CuratorError

        ws = self.host.workspace
        handle = ws.handles[self.wiki_index]
        if ws.is_home:
            shared = next((h for h in ws.handles if h.label == "shared"), None)
            if shared is None:
                return None, "This home has no shared wiki (shared/wiki), so there is nowhere to share to."
            if shared.index == handle.index:
                return None, "This is the shared wiki: share pages from an agent's wiki."
            return shared.index, "the shared wiki"
        try:
            return shared_wiki_for(handle.root), "the shared wiki"
        except CuratorError as exc:
            return None, f"No shared wiki to share to: {exc}"

    def _shared_namespaces(self) -> list[str]:
        ws = self.host.workspace
        if isinstance(self._destination, int) and ws.handles[self._destination].wiki is not None:
            wiki = ws.wiki(self._destination)
            # (from the paths: decoding every page for their first folders held 1.5 GB at 300,000 pages)
            return sorted({namespace_of(p) for p in wiki.paths} - {""})
        return []

    # --- selection and preview -------------------------------------------------------------------
    def _selection_changed(self, force: bool = False) -> None:
        rows = self.selected_rows()
        any_rows = bool(rows)
        self.open_button.setEnabled(len(rows) == 1)
        self.confirm_button.setEnabled(any_rows)
        self.remove_button.setEnabled(any_rows)
        held = [r for r in rows if r.entry.review]
        note = "this is the shared wiki" if self._destination_text.startswith("This is") else "no shared wiki"
        self.share_note.setText(note if self._destination is None else "")
        set_tip(self.share_note, self._destination_text if self._destination is None else "")
        if self._destination is None:
            self.share_button.setEnabled(False)
            set_tip(self.share_button, self._destination_text)
        elif held:
            self.share_button.setEnabled(False)
            self.share_button.setToolTip("Pages held for review (_review/) cannot be shared: confirm or "
                                         "remove them first.")
        else:
            self.share_button.setEnabled(any_rows)
            self.share_button.setToolTip("Copy the selected pages to the shared wiki (one commit in each wiki "
                                         "per page)")
        current = self.current_row() or (rows[0] if rows else None)
        if current is None:
            return
        if force or current.path != self._preview_path:
            self._show_preview(current)

    def _show_preview(self, row: AutoRow) -> None:
        self._preview_path = row.path
        path = row.path

        def build(wiki: Wiki) -> str:
            # the page's own links from the index around it (every page decoded and every link
            # resolved for one preview: 1.5 GB held at 300,000 pages), others from the whole one
            around = wiki.built_links() or wiki.links_around(path)
            page = wiki.page(path)
            own = {link.key for link in page.links} if page is not None else set()

            def resolve(target: str, source: str) -> str | None:
                return (around if link_key(target) in own else wiki.links).resolve(target, source).path

            body = render_page(wiki.read_text(path), resolve, path=path, foldable=False)
            return body.replace("<body>", "<body>" + details_html(row), 1)

        def show(text: str) -> None:
            if self._preview_path == path:
                self.preview.setHtml(text)
                self.mark_ready()

        def failed(exc: BaseException) -> None:
            if self._preview_path == path:
                self.preview.setHtml(render_message(f"Cannot read {path}", str(exc)))
                self.mark_ready()

        self.preview.base_dir = self.host.workspace.handles[self.wiki_index].root / Path(path).parent
        self.host.workspace.read(self.wiki_index, build, show, failed)

    def open_selected(self) -> None:
        row = self.current_row()
        if row is not None:
            self.host.open_page((self.wiki_index, row.path))
            self.host.show_view("page")

    # --- decisions ---------------------------------------------------------------------------------
    def confirm_selected(self) -> None:
        rows = self.selected_rows()
        if not rows or self.listing is None:
            return
        dialog = ConfirmDialog(rows, self.listing.folders, self.listing.default_folder, self)
        if not self.exec_dialog(dialog):
            return
        from curator.engine.filing.curation import confirm

        folder, layer, trust = dialog.folder_value(), dialog.layer.currentText(), round(dialog.trust.value(), 2)

        def action(path: str) -> Callable[[Wiki], ActionResult]:
            return lambda wiki: confirm(wiki, path, actor=OPERATOR, folder=folder, layer=layer, trust=trust)

        self.decide([(f"Confirming {r.path}", action(r.path)) for r in rows])

    def share_selected(self) -> None:
        rows = [r for r in self.selected_rows() if not r.entry.review]
        destination = self._destination
        if not rows or destination is None:
            return
        where = (self.host.workspace.handles[destination].root if isinstance(destination, int)
                 else destination)
        dialog = ShareDialog(rows, f"the shared wiki ({where})", self._shared_namespaces(), self)
        if not self.exec_dialog(dialog):
            return
        from curator.engine.filing.curation import share

        namespace = dialog.namespace_value() or None
        shared_wiki = self.host.workspace.wiki(destination) if isinstance(destination, int) else None

        def action(path: str) -> Callable[[Wiki], ActionResult]:
            def run(wiki: Wiki) -> ActionResult:
                if shared_wiki is not None:
                    return share(wiki, shared_wiki, path, actor=OPERATOR, namespace=namespace)
                from curator.engine.wiki import Wiki as _Wiki

                assert isinstance(destination, Path)
                other = _Wiki(destination)  # outside the workspace: open it for this action only
                try:
                    return share(wiki, other, path, actor=OPERATOR, namespace=namespace)
                finally:
                    other.close()
            return run

        self.decide([(f"Sharing {r.path}", action(r.path)) for r in rows])

    def remove_selected(self) -> None:
        rows = self.selected_rows()
        if not rows or not self.exec_dialog(RemoveDialog(rows, self)):
            return
        from curator.engine.filing.curation import remove

        def action(path: str) -> Callable[[Wiki], ActionResult]:
            return lambda wiki: remove(wiki, path, actor=OPERATOR)

        self.decide([(f"Removing {r.path}", action(r.path)) for r in rows])
