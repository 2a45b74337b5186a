"""The station's merge preview shows the engine's de-noised plan: the table rows added to a
table the kept page has and the paragraphs already there (issue 43)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel

from curator.engine.wiki import Wiki
from curator.engine.write.merge import preview_merge
from curator.views.review.duplicates import MergePreviewDialog
from tests.engine.write.test_merge_noise import KEEP, make_wiki, member


def test_preview_dialog_lists_united_rows_and_blocks_already_there(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    table = "| Who | Age |\n| --- | --- |\n| Bob | 42 |\n| Dee | 19 |\n"
    root = make_wiki(tmp_path, {"night.md": KEEP, "night-copy.md": member("Night Copy", f"## Ages\n\n{table}")})
    plan = preview_merge(Wiki(root), "night", "night-copy")
    dialog = MergePreviewDialog(plan)
    qtbot.addWidget(dialog)
    summary = dialog.findChildren(QLabel)[0].text()
    assert "2 table rows added to tables it has" in summary and "0 sections added" in summary
    already = [dialog.skipped.topLevelItem(i).text(0) for i in range(dialog.skipped.topLevelItemCount())]
    assert already == ["The night story opens in the harbour."]
    assert dialog.tabs.tabText(2) == "Already there (1)"
    assert "| Bob | 42 |" in dialog.diff.toPlainText()
