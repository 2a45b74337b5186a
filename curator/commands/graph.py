"""The link graph and curation: graph, path, explain, dedup, dismiss, merge, move, archive (docs/design.md §8, §9)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("graph", "path", "explain", "dedup", "dismiss", "merge", "move", "archive")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("graph", parents=[parent],
                       help="export the link graph as Mermaid or networkx node-link JSON")
    p.add_argument("--center", metavar="PAGE", help="start a breadth-first walk at this page")
    p.add_argument("--depth", type=int, default=2, help="steps from --center (default 2)")
    p.add_argument("--format", choices=("mermaid", "json"), default="mermaid",
                   help="mermaid (default) or json (networkx node-link); --json implies json")
    p.add_argument("--attachments", action="store_true",
                   help="include the attachment files pages link to (images, PDFs, canvases) as nodes")
    p.set_defaults(handler="curator.commands.graph:run_graph", walk_ahead=True)

    p = sub.add_parser("path", parents=[parent], help="the shortest chain of links between two pages")
    p.add_argument("source", metavar="PAGE")
    p.add_argument("target", metavar="PAGE")
    p.set_defaults(handler="curator.commands.graph:run_path", walk_ahead=True)

    p = sub.add_parser("explain", parents=[parent],
                       help="a page's metadata, degree and strongest connections")
    p.add_argument("page", metavar="PAGE")
    p.add_argument("--limit", type=int, default=10, help="connections shown (default 10)")
    p.set_defaults(handler="curator.commands.graph:run_explain", walk_ahead=True)

    p = sub.add_parser("dedup", parents=[parent],
                       help="duplicate candidates: [{keep, merge, reason, scores}], best first; "
                       "--groups: families [{pages, keep, reason, scores}], text copies before name-only "
                       "pairs, each highest impact first",
                       description="Pairs from four name and text signals (title, tags, slug, body) and "
                       "containment (>= 60% of the smaller page's text in the other). With --groups the "
                       "pairs are joined into families of pages whose text makes them copies of one "
                       "another (title-only look-alikes and numbered series never join), each with the "
                       "page to keep by the merge rule (more trust, then more inbound links, then older); "
                       "merge a family with 'curator merge KEEP OTHER...'.")
    p.add_argument("--page", metavar="PAGE", help="only the pairs (or families) this page is in")
    p.add_argument("--groups", action="store_true", help="duplicate families instead of pairs")
    p.add_argument("--folder", metavar="FOLDER", help="with --groups: only families with a page under FOLDER")
    p.add_argument("--signal", metavar="SIGNAL",
                   help="with --groups: only families where SIGNAL fired (title, tags, slug, body, containment, lookalike)")
    p.set_defaults(handler="curator.commands.graph:run_dedup", walk_ahead=True)

    p = sub.add_parser("dismiss", parents=[parent],
                       help="record that pages are not duplicates (a committed decision, operator only)",
                       description="With two pages: they are not duplicates. With more (a family): no two "
                       "of them are. With --member PAGE: PAGE is a duplicate of none of the others (it leaves "
                       "its family). Decisions follow pages through renames and moves.")
    p.add_argument("pages", metavar="PAGE", nargs="+")
    p.add_argument("--member", metavar="PAGE", help="take only this page out of the family of the others")
    p.set_defaults(handler="curator.commands.graph:run_dismiss")

    p = sub.add_parser("merge", parents=[parent],
                       help="merge duplicates into the page that stays, losing nothing (one commit; undo reverts it)",
                       description="Bullets go to KEEP's '## Updates' through fact dedup, everything else under "
                       "'## From <title>' (no empty heading; a table KEEP has gets only the rows it lacks); every "
                       "link to a merged page is re-pointed at KEEP showing the same text; merged pages move "
                       "to _archive/. Refused (nothing written) if any line would be lost.")
    p.add_argument("keep", metavar="KEEP")
    p.add_argument("merge", metavar="MERGE", nargs="+", help="one or more pages to merge into KEEP")
    p.add_argument("--preview", action="store_true",
                   help="show what would change (the resulting KEEP as a diff), write nothing")
    p.set_defaults(handler="curator.commands.graph:run_merge")

    p = sub.add_parser("move", parents=[parent],
                       help="move or rename a page; every link to it keeps its text (one commit)",
                       description="Every link to PAGE (by stem, title, alias or path; markdown links; embeds; "
                       "related:) is re-pointed at NEW_PATH with its display text kept; the old slug and title "
                       "become aliases. With --repair OLD NEW: re-point the links still naming OLD at the page "
                       "NEW, after a rename done outside Curator (git mv, an agent).")
    p.add_argument("page", metavar="PAGE", help="the page (or, with --repair, its old path)")
    p.add_argument("new_path", metavar="NEW_PATH", help="the new path (a folder keeps the file name; "
                   "'.md' is added) or, with --repair, the page as it is now")
    p.add_argument("--preview", action="store_true", help="show what would change, write nothing")
    p.add_argument("--repair", action="store_true",
                   help="repair links broken by a rename done outside Curator (PAGE is the old path)")
    p.set_defaults(handler="curator.commands.graph:run_move")

    p = sub.add_parser("archive", parents=[parent],
                       help="move a page to _archive/ (one commit; links to it then show as not yet written)")
    p.add_argument("page", metavar="PAGE")
    p.set_defaults(handler="curator.commands.graph:run_archive")


def _check_positive(value: int, name: str, minimum: int = 0) -> int:
    from curator.engine.errors import UsageError

    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum}, not {value}")
    return value


def run_graph(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.graph.link_graph import export

    depth = _check_positive(args.depth, "--depth")
    fmt = "json" if inv.json else args.format
    if fmt == "json" and not args.center and inv.actor.is_operator:
        # The operator's whole graph: its saved pieces joined, when they are current (or were
        # brought up to date from the pages edited since): no page record decoded for the rest.
        from curator.commands.invocation import write_json_bytes
        from curator.engine.graph.export import node_link_document

        document = node_link_document(inv.wiki, attachments=args.attachments)
        if document is not None:
            write_json_bytes(document)
            return 0
    result = export(inv.wiki, fmt, args.center, depth, inv.actor, attachments=args.attachments)
    if isinstance(result, str):
        inv.emit(result, result)
    else:
        inv.emit(result)
    return 0


def run_path(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.graph.link_graph import find_path

    result = find_path(inv.wiki, args.source, args.target, inv.actor)
    inv.emit(result.to_json(), result.render())
    return 0


def run_explain(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.graph.link_graph import explain

    result = explain(inv.wiki, args.page, inv.actor, _check_positive(args.limit, "--limit", 1))
    inv.emit(result.to_json(), result.render())
    return 0


def run_dedup(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.dedup.families import find_duplicates, find_families
    from curator.engine.errors import UsageError

    if args.groups:
        families = find_families(inv.wiki, inv.actor, args.folder, args.signal, args.page)
        out = []
        for f in families:
            out.append(f"family of {len(f.pages)} ({f.strength}, impact {f.impact:g}): keep {f.keep}")
            out += [f"    merge {p}" for p in f.merges]
            out.append(f"    {f.reason}")
        out.append(f"{len(families)} duplicate famil{'y' if len(families) == 1 else 'ies'}")
        inv.emit(lambda: [f.to_json() for f in families], "\n".join(out))
        return 0
    if args.folder or args.signal:
        raise UsageError("--folder and --signal filter families: add --groups")
    found = find_duplicates(inv.wiki, inv.actor, args.page)
    lines = [f"{c.keep}  <-  {c.merge}\n    {c.reason}" for c in found]
    lines.append(f"{len(found)} candidate pair(s)")
    inv.emit(lambda: [c.to_json() for c in found], "\n".join(lines))
    return 0


def run_dismiss(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.commands.write import finish
    from curator.engine.dedup.index import dismiss_pages
    from curator.engine.errors import UsageError

    if len(args.pages) < (1 if args.member else 2):
        raise UsageError("name two pages (or more: a family), or --member PAGE and the pages of its family")
    return finish(inv, dismiss_pages(inv.wiki, args.pages, inv.actor, args.member))


def run_merge(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.commands.write import finish
    from curator.engine.write.merge import merge_pages, preview_merge

    if args.preview:
        plan = preview_merge(inv.wiki, args.keep, args.merge, inv.actor)
        inv.emit({"status": "preview", **plan.to_json()}, plan.render())
        return 0
    return finish(inv, merge_pages(inv.wiki, args.keep, args.merge, inv.actor))


def run_move(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.commands.write import finish
    from curator.engine.errors import UsageError
    from curator.engine.write.move import move_page, preview_move, repair_move

    if args.repair:
        if args.preview:
            raise UsageError("--preview and --repair cannot be combined")
        return finish(inv, repair_move(inv.wiki, args.page, args.new_path, inv.actor))
    if args.preview:
        plan = preview_move(inv.wiki, args.page, args.new_path, inv.actor)
        inv.emit({"status": "preview", **plan.to_json()}, plan.render())
        return 0
    return finish(inv, move_page(inv.wiki, args.page, args.new_path, inv.actor))


def run_archive(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.commands.write import finish
    from curator.engine.write.move import archive_page

    return finish(inv, archive_page(inv.wiki, args.page, inv.actor))
