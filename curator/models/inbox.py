"""The Inbox view's model: agent writes held for an operator's review (docs/design.md §13).

:func:`gather_inbox` (off the GUI thread) lists the pending items through the engine;
:func:`item_html` shows one item as :func:`~curator.engine.review.inbox.item_view` describes it: who,
when, where, why it was held, the target page with the fact in place as a diff, and the three
facts anywhere in the wiki closest in meaning, or sharing most words until those are known (each
linking to its page).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from PySide6.QtCore import Qt

from curator.engine.corpus.lookalike import escape_controls
from curator.engine.review.inbox import list_items
from curator.engine.write.held import InboxItem
from curator.models.records import RecordRole, RecordTableModel

if TYPE_CHECKING:
    from curator.engine.wiki import Wiki

COL_AGENT, COL_DEPARTMENT, COL_TIME, COL_TARGET, COL_FACT = range(5)
HEADERS = ("Agent", "Department", "Time (UTC)", "Target page", "Fact")
__all__ = ["InboxModel", "RecordRole", "gather_inbox", "item_html"]


def gather_inbox(wiki: Wiki) -> list[InboxItem]:
    """Every pending item, oldest first (runs off the GUI thread)."""
    return list_items(wiki)


def _when(item: InboxItem) -> str:
    return item.time[:16].replace("T", " ")


class InboxModel(RecordTableModel[InboxItem]):
    headers = HEADERS

    @property
    def rows(self) -> list[InboxItem]:
        return self.records

    def row_of(self, item_id: str) -> int | None:
        return next((i for i, r in enumerate(self.records) if r.id == item_id), None)

    def cell(self, item: InboxItem, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            target = item.target + ("  (new page)" if item.create else "")
            return (item.actor, item.department or "—", _when(item), target, item.content)[col]  # (escaped by RecordTableModel)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{escape_controls(item.content)}\n\nHeld because {escape_controls(item.reason)}"
        return None


_DIFF_COLOURS = {"+": ("#1e6b3a", "#e8f6ec"), "-": ("#922b21", "#fdecea"), "@": ("#555555", "#f4f6f7")}


def diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            colour, background = "#555555", "#ffffff"
        else:
            colour, background = _DIFF_COLOURS.get(line[:1], ("#222222", "#ffffff"))
        lines.append(f'<span style="color:{colour}; background-color:{background};">'
                     f"{html.escape(escape_controls(line)) or '&nbsp;'}</span>")
    return ('<pre style="font-family: monospace; white-space: pre-wrap; background-color:#ffffff;">'
            + "<br>".join(lines) + "</pre>")


def item_html(view: dict[str, Any]) -> str:
    """The detail pane of one item (``view`` is :func:`~curator.engine.review.inbox.item_view`'s answer)."""
    plain = "border-style: none; padding: 1px 10px 1px 0px;"
    fields = [("Agent", view["actor"]), ("Department", view.get("department") or "—"),
              ("Time", str(view["time"]).replace("T", " ").removesuffix("Z") + " UTC"),
              ("Target page", view["target"] + ("  (a new page)" if view.get("create") else "")),
              ("Held because", view.get("reason") or "—"), ("Item", view["id"])]
    if view.get("approval_status"):
        fields.append(("Approvals", f"{view['approval_status']} (waits for another operator)"))
    cells = "".join(f'<tr><td style="color:#555555; {plain}">{name}</td>'
                    f'<td style="{plain}">{html.escape(escape_controls(str(value)))}</td></tr>'
                    for name, value in fields)
    similar = view.get("similar") or []
    rows = "".join(
        f'<li><a href="curator:{quote(s["page"])}">{html.escape(escape_controls(s["page"]))}</a> '
        f'<span style="color:#555555;">({s["score"]:.2f})</span>: {html.escape(escape_controls(s["fact"]))}</li>'
        for s in similar) or "<li><i>no similar fact anywhere in the wiki</i></li>"
    heading = ("Closest facts in meaning in the wiki" if view.get("similar_by") == "meaning"
               else "Most similar facts in the wiki (shared words)")
    decided = view.get("decided")
    banner = ""
    if decided:
        when = str(decided.get("time") or "")[:16].replace("T", " ")
        said = (f"Already {decided['decision']} by {decided['by']}" + (f" at {when}" if when else "")
                + f" on {decided['where']}: sync to bring the decision here.")
        banner = (f'<p style="background-color:#fdf2e9; color:#7e5109; padding:6px;"><b>'
                  f"{html.escape(escape_controls(said))}</b></p>")
    return (f"<html><body>{banner}<h3>{html.escape(escape_controls(view['content']))}</h3>"
            f'<div style="background-color:#f4f6f7; padding:6px;"><table cellspacing="0">{cells}</table></div>'
            f"<p><b>The page with the fact in place</b></p>{diff_html(view.get('diff') or '')}"
            f"<p><b>{heading}</b></p><ul>{rows}</ul></body></html>")
