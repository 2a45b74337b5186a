"""Scope policy and the auto/ lifecycle: scope, file-doc, auto list|confirm|share|remove."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation

_DOC_TYPES = ("charter", "sop", "spec", "policy", "reference")
_LAYERS = ("identity", "core", "context", "deep")


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("scope", "file-doc", "auto")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("scope", parents=[parent],
                       help="show the effective scope policy per namespace (and any .scope.toml error)")
    p.set_defaults(handler="curator.commands.scope:run_scope")

    p = sub.add_parser("file-doc", parents=[parent],
                       help="grade pasted text and file it under auto/<type>/ when it is a document")
    p.add_argument("--title", required=True, help="the document's title")
    p.add_argument("--type", dest="doc_type", choices=_DOC_TYPES, help="doc type (default: detected)")
    p.add_argument("--source", help="where the text came from (kept in the revision log)")
    p.add_argument("--slug", help="page slug ([a-z0-9][a-z0-9-]{0,63}); default from the title")
    p.add_argument("--file", metavar="F", help="read the text from F (default: standard input)")
    p.add_argument("--arbiter", metavar="CMD",
                   help="command deciding grey-band texts (text on stdin; exit 0 files, 1 declines); "
                        "default: $CURATOR_ARBITER, else hold them in _review/")
    p.set_defaults(handler="curator.commands.scope:run_file_doc")

    auto = sub.add_parser("auto", parents=[parent], help="curate auto-filed pages: list, confirm, share, remove")
    asub = auto.add_subparsers(dest="auto_command", metavar="<action>", required=True,
                               parser_class=type(auto))
    p = asub.add_parser("list", parents=[parent], help="auto-filed pages (and those held in _review/)")
    p.set_defaults(handler="curator.commands.scope:run_auto_list")

    p = asub.add_parser("confirm", parents=[parent], help="confirm an auto-filed page as curated")
    p.add_argument("page", metavar="PAGE")
    p.add_argument("--to", metavar="FOLDER", help="target folder (default: wiki/ when it exists, else the root)")
    p.add_argument("--layer", choices=_LAYERS, help="layer of the curated page (default: unchanged)")
    p.add_argument("--trust", type=float, default=0.8, help="trust of the curated page (default 0.8)")
    p.set_defaults(handler="curator.commands.scope:run_auto_confirm")

    p = asub.add_parser("share", parents=[parent], help="copy an auto-filed page into the shared wiki")
    p.add_argument("page", metavar="PAGE")
    p.add_argument("--namespace", metavar="NS", help="target folder in the shared wiki (default: sources)")
    p.set_defaults(handler="curator.commands.scope:run_auto_share")

    p = asub.add_parser("remove", parents=[parent], help="move an auto-filed page to _archive/")
    p.add_argument("page", metavar="PAGE")
    p.set_defaults(handler="curator.commands.scope:run_auto_remove")


def run_scope(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.policy.scope import policy_summary

    # An actor asking for itself gets the summary of what it may see (no hidden folder counted).
    summary = policy_summary(inv.wiki, None if inv.actor.is_operator else inv.actor, own_view=True)
    lines = [f"{summary['wiki']}: {summary['file']} "
             + ("present" if summary["exists"] else "absent (no policy: everything agent_writable)")]
    if summary["error"]:
        lines.append(f"ERROR: {summary['error']} -- no policy in force")
    lines += [f"warning: {w}" for w in summary["warnings"]]
    review = summary["review"]
    held = (["new pages"] if review["create"] else []) + [f"{x} pages" for x in review["layers"]]
    held += [f"{r['namespace'] or '(root)'}/" for r in summary["namespaces"] if r.get("review")]
    lines.append("review inbox: agent writes to " + ", ".join(held) + " are held for an operator"
                 if held else "review inbox: no agent write is held ([review] absent)")
    for row in summary["namespaces"]:
        extra = []
        if row.get("review"):
            extra.append("review=held")
        if row["agents"]:
            extra.append("agents=" + ",".join(row["agents"]))
        if row["synced_from"]:
            extra.append(f"synced_from={row['synced_from']}")
        if row["visible_to_departments"] is not None:
            extra.append("departments=" + (",".join(row["visible_to_departments"]) or "(nobody)"))
        if "can_write" in row:
            extra.append(f"you: read={'yes' if row['can_read'] else 'no'} write={'yes' if row['can_write'] else 'no'}"
                         f" visible={row['visible_pages']}/{row['pages']}")
        name = row["namespace"] or "(root)"
        lines.append(f"{name:<24} {row['mode']:<16} {row['pages']:>5} pages  {' '.join(extra)}".rstrip())
    inv.emit(summary, "\n".join(lines))
    return 0


def _answer(inv: Invocation, result: Any) -> int:
    data = result.to_json()
    inv.emit(data, data.get("message", ""))
    return 1 if data.get("status") in ("denied", "locked", "invalid") else 0


def run_file_doc(inv: Invocation, args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from curator.engine.errors import UsageError
    from curator.engine.filing.autofile import file_doc

    if args.file:
        try:
            text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror}") from None
    else:
        if sys.stdin.isatty():
            raise UsageError("file-doc reads the text from standard input or --file F")
        text = sys.stdin.read()
    arbiter = args.arbiter or os.environ.get("CURATOR_ARBITER") or None
    result = file_doc(inv.wiki, text, title=args.title, actor=inv.actor, doc_type=args.doc_type,
                      source=args.source, slug=args.slug, arbiter=arbiter)
    return _answer(inv, result)


def run_auto_list(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.filing.curation import list_auto

    rows = [e.to_json() for e in list_auto(inv.wiki, inv.actor)]
    lines = [f"{r['path']:<48} {r['type']:<9} score {r['score'] if r['score'] is not None else '-':>3}  "
             f"rev {r['revisions']}  {'shared' if r['shared'] else ''}".rstrip() for r in rows]
    lines.append(f"{len(rows)} auto-filed pages")
    inv.emit(rows, "\n".join(lines))
    return 0


def run_auto_confirm(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.filing.curation import confirm

    return _answer(inv, confirm(inv.wiki, args.page, actor=inv.actor, folder=args.to, layer=args.layer,
                                trust=args.trust))


def run_auto_share(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.corpus.home import shared_wiki_for
    from curator.engine.filing.curation import share
    from curator.engine.wiki import Wiki

    shared = Wiki(shared_wiki_for(inv.wiki.root, getattr(args, "shared", None)))
    try:
        return _answer(inv, share(inv.wiki, shared, args.page, actor=inv.actor, namespace=args.namespace))
    finally:
        shared.close()


def run_auto_remove(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.filing.curation import remove

    return _answer(inv, remove(inv.wiki, args.page, actor=inv.actor))
