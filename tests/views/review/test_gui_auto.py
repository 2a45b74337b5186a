"""pytest-qt tests of the auto-filed panel (offscreen, the real engine on a home with two wikis)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from curator.engine.corpus.frontmatter import load, split
from curator.engine.filing.autofile import file_doc
from curator.engine.policy.actor import Actor
from curator.engine.wiki import Wiki
from curator.engine.write.bootstrap import init_wiki
from curator.views.review.auto_filed import AutoView, ConfirmDialog, RemoveDialog, ShareDialog
from curator.views.shell.main_window import MainWindow
from curator.views.workspace import Workspace
from tests.engine.filing.test_auto_grading import SOP, SPEC
from tests.gui_helpers import GIT_ID, make_wiki, temp_settings

DUDU = Actor("agent", "dudu", "ops")
SOP_PAGE = "auto/sop/incident-response-sop.md"
SPEC_PAGE = "auto/spec/export-spec.md"
HELD = "_review/reference/meeting-room-tips.md"
HELD_TEXT = """---
title: Meeting room tips
type: reference
author: auto-distill
filed_by: agent:dudu
layer: context
trust: 0.3
source_type: raw_dialogue
tags: [auto-distilled, reference]
source: office chat
score: 35
created: '2026-11-24'
updated: '2026-11-24'
review: true
---
# Meeting room tips

Book the big room a day ahead; the projector needs the grey adapter.

## Revision log

- 2026-11-24 first filing by agent:dudu (source: office chat)
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def meta(root: Path, path: str) -> dict:
    return load(split((root / path).read_text("utf-8")).raw or "")[0]


def commit_all(root: Path, message: str) -> None:
    subprocess.run(["git", *GIT_ID, "add", "--", "."], cwd=root, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-q", "-m", message], cwd=root, check=True)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    agent = tmp_path / "home" / "agents" / "dudu" / "wiki"
    shared = tmp_path / "home" / "shared" / "wiki"
    init_wiki(agent)
    init_wiki(shared)
    w = Wiki(agent)
    assert file_doc(w, SOP, title="Incident response SOP", actor=DUDU, source="ops chat").status == "filed"
    assert file_doc(w, SPEC, title="Export spec", actor=DUDU).status == "filed"
    w.close()
    (agent / HELD).parent.mkdir(parents=True)
    (agent / HELD).write_text(HELD_TEXT, "utf-8")
    commit_all(agent, "held page")
    return tmp_path / "home"


def open_panel(qtbot, folder: Path, tmp_path: Path, wiki_label: str | None = None) -> tuple[MainWindow, AutoView]:  # type: ignore[no-untyped-def]
    win = MainWindow(Workspace(folder, watch=True), temp_settings(tmp_path))
    view = AutoView(win)
    win.add_view("auto", view, "Auto-filed")
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.ready, timeout=15_000):
        win.start()
    win.show_view("auto")
    if wiki_label is not None:
        view.wiki_choice.setCurrentText(wiki_label)
        qtbot.waitUntil(lambda: view.count.text().endswith(f"in {wiki_label}"), timeout=10_000)
    qtbot.waitUntil(view.is_content_ready, timeout=15_000)
    return win, view


@pytest.fixture
def panel(qtbot, home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    win, view = open_panel(qtbot, home, tmp_path, "agent:dudu")
    yield home / "agents" / "dudu" / "wiki", home / "shared" / "wiki", view
    win.close()


def paths(view: AutoView) -> list[str]:
    return [r.path for r in view.model.rows]


def test_panel_lists_auto_and_held_pages_with_their_details(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    _agent, _shared, view = panel
    assert paths(view) == [SOP_PAGE, SPEC_PAGE, HELD]
    assert view.count.text() == "2 auto-filed pages, 1 held for review in agent:dudu"
    row = [view.model.index(0, c).data() for c in range(7)]
    assert row[:2] == ["Incident response SOP", "sop"] and row[2] >= 65
    assert row[3:6] == ["filed", "ops chat", 1]
    assert view.model.index(2, 3).data() == "held for review"
    view.select_paths([SOP_PAGE])
    qtbot.waitUntil(lambda: "Revision log" in view.preview.toPlainText(), timeout=5000)
    text = view.preview.toPlainText()
    assert "first filing by agent:dudu (source: ops chat)" in text
    assert "Grade score" in text and "filed: ≥ 65" in text
    assert "Incident response SOP" in text  # the rendered page under the details
    # pages held for review cannot be shared; the button says why
    view.select_paths([HELD])
    assert not view.share_button.isEnabled() and "review" in view.share_button.toolTip()
    view.select_paths([SOP_PAGE])
    assert view.share_button.isEnabled()


def test_confirm_as_curated_moves_the_page_in_one_commit(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    agent, shared, view = panel
    n, n_shared = commits(agent), commits(shared)
    view.select_paths([SOP_PAGE])

    def fill(dialog: QDialog) -> bool:
        assert isinstance(dialog, ConfirmDialog)
        assert dialog.trust.value() == 0.8  # docs/design.md §10 default
        dialog.folder.setCurrentText("procedures")
        dialog.layer.setCurrentText("core")
        dialog.trust.setValue(0.9)
        assert dialog.target.text() == "→ procedures/incident-response-sop.md"
        return True

    view.exec_dialog = fill
    view.confirm_button.click()
    qtbot.waitUntil(lambda: commits(agent) == n + 1, timeout=10_000)
    assert git(agent, "log", "-1", "--format=%s") == f"auto_confirm: {SOP_PAGE}"
    assert set(git(agent, "show", "--no-renames", "--name-only", "--format=", "HEAD").splitlines()) == {
        SOP_PAGE, "procedures/incident-response-sop.md"}
    assert not (agent / SOP_PAGE).exists()
    m = meta(agent, "procedures/incident-response-sop.md")
    assert (m["trust"], m["layer"], m["author"], m["source_type"]) == (0.9, "core", "operator", "user_statement")
    assert "curated" in m["tags"] and "auto-distilled" not in m["tags"]
    assert commits(shared) == n_shared
    qtbot.waitUntil(lambda: paths(view) == [SPEC_PAGE, HELD], timeout=10_000)
    assert "confirmed" in view.banner.text()


def test_share_copies_to_the_shared_wiki(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    agent, shared, view = panel
    n, n_shared = commits(agent), commits(shared)
    view.select_paths([SPEC_PAGE])

    def fill(dialog: QDialog) -> bool:
        assert isinstance(dialog, ShareDialog)
        assert dialog.namespace_value() == "sources"
        assert dialog.target.text() == "→ sources/dudu--export-spec.md"
        return True

    view.exec_dialog = fill
    view.share_button.click()
    qtbot.waitUntil(lambda: commits(agent) == n + 1 and commits(shared) == n_shared + 1, timeout=10_000)
    target = "sources/dudu--export-spec.md"
    assert git(shared, "show", "--name-only", "--format=", "HEAD") == target
    assert git(agent, "show", "--name-only", "--format=", "HEAD") == SPEC_PAGE
    assert meta(shared, target)["shared_from"] == f"agent:dudu:{SPEC_PAGE}"
    assert meta(agent, SPEC_PAGE)["shared_to"] == target
    qtbot.waitUntil(lambda: view.model.index(1, 3).data() == f"shared → {target}", timeout=10_000)
    assert "shared" in view.banner.text()


def test_a_forbidden_share_is_refused_with_a_message_and_nothing_committed(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    agent, shared, view = panel
    (shared / ".scope.toml").write_text('[namespaces.sources]\nmode = "operator_only"\n', "utf-8")
    commit_all(shared, "policy")
    n, n_shared = commits(agent), commits(shared)
    view.select_paths([SPEC_PAGE])
    view.exec_dialog = lambda d: True
    view.share_button.click()
    qtbot.waitUntil(lambda: view.banner.isVisible() and "not shared" in view.banner.text(), timeout=10_000)
    assert "operator_only" in view.banner.text()
    assert "#922b21" in view.banner.styleSheet()  # shown as a refusal (red), not a success
    qtbot.wait(300)
    assert (commits(agent), commits(shared)) == (n, n_shared)
    assert not (shared / "sources").exists()
    assert "shared_to" not in meta(agent, SPEC_PAGE)
    assert git(agent, "status", "--porcelain") == "" and git(shared, "status", "--porcelain") == ""


def test_bulk_remove_archives_each_page_in_its_own_commit(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    agent, _shared, view = panel
    n = commits(agent)
    view.select_paths([SOP_PAGE, HELD])
    assert len(view.selected_rows()) == 2
    asked: list[QDialog] = []
    view.exec_dialog = lambda d: asked.append(d) or True  # type: ignore[func-returns-value]
    view.remove_button.click()
    qtbot.waitUntil(lambda: commits(agent) == n + 2, timeout=10_000)
    assert isinstance(asked[0], RemoveDialog) and len(asked[0].rows) == 2
    subjects = git(agent, "log", "-2", "--format=%s").splitlines()
    assert sorted(subjects) == sorted([f"auto_remove: {SOP_PAGE}", f"auto_remove: {HELD}"])
    assert (agent / "_archive" / SOP_PAGE).exists() and (agent / "_archive" / HELD).exists()
    assert not (agent / SOP_PAGE).exists() and not (agent / HELD).exists()
    qtbot.waitUntil(lambda: paths(view) == [SPEC_PAGE], timeout=10_000)


def test_cancelled_dialog_writes_nothing(qtbot, panel) -> None:  # type: ignore[no-untyped-def]
    agent, _shared, view = panel
    n = commits(agent)
    view.select_paths([SOP_PAGE])
    view.exec_dialog = lambda d: False
    view.remove_button.click()
    view.confirm_button.click()
    qtbot.wait(300)
    assert commits(agent) == n and (agent / SOP_PAGE).exists()


def test_an_agent_wiki_opened_alone_shares_to_its_home(qtbot, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    agent, shared = home / "agents" / "dudu" / "wiki", home / "shared" / "wiki"
    win, view = open_panel(qtbot, agent, tmp_path)
    try:
        assert not view.wiki_choice.isVisible()
        n_shared = commits(shared)
        view.select_paths([SOP_PAGE])
        assert view.share_button.isEnabled()
        view.exec_dialog = lambda d: True
        view.share_button.click()
        qtbot.waitUntil(lambda: commits(shared) == n_shared + 1, timeout=10_000)
        assert (shared / "sources" / "dudu--incident-response-sop.md").exists()
    finally:
        win.close()


def test_no_shared_wiki_disables_share_and_says_why(qtbot, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    win, view = open_panel(qtbot, home, tmp_path, "shared")
    try:
        assert view.model.rowCount() == 0 and "No auto-filed pages" in view.preview.toPlainText()
        assert "This is the shared wiki" in view.share_button.toolTip()
    finally:
        win.close()
    alone = make_wiki(tmp_path / "alone", {"auto/sop/x.md": HELD_TEXT.replace("review: true\n", "")})
    win, view = open_panel(qtbot, alone, tmp_path / "s2")
    try:
        view.select_paths(["auto/sop/x.md"])
        assert not view.share_button.isEnabled()
        assert "No shared wiki" in view.share_button.toolTip() and view.share_note.text() == "no shared wiki"
        assert view.confirm_button.isEnabled() and view.remove_button.isEnabled()
    finally:
        win.close()


def test_auto_model_passes_qtmodeltester(qtmodeltester, panel) -> None:  # type: ignore[no-untyped-def]
    qtmodeltester.check(panel[2].model)


def test_a_preview_and_the_share_dialogs_folders_decode_no_other_page(qtbot, panel,  # type: ignore[no-untyped-def]
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's preview resolves its links from the index around it and the share dialog's
    folders come from the paths: neither builds the whole link index nor decodes every page
    (1.5 GB held at 300,000 pages, for one preview)."""
    _agent, shared, view = panel
    wikis = [h.wiki for h in view.host.workspace.handles if h.wiki is not None]
    for wiki in wikis:
        wiki.release_links()  # (as a big wiki's station holds none: docs/design.md §8)
    built: list[int] = []
    real = Wiki.links.fget  # type: ignore[attr-defined]
    monkeypatch.setattr(Wiki, "links", property(lambda wiki: built.append(1) or real(wiki)))
    view.select_paths([SPEC_PAGE])
    qtbot.waitUntil(lambda: "Export spec" in view.preview.toPlainText(), timeout=5000)
    view.select_paths([SOP_PAGE])
    qtbot.waitUntil(lambda: "Incident response SOP" in view.preview.toPlainText(), timeout=5000)
    assert built == []
    assert view._shared_namespaces() == sorted({p.partition("/")[0] for p in Wiki(shared).paths if "/" in p})
    assert built == []
