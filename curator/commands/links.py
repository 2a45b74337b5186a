"""Link repair and the wiki's health (docs/design.md §12): ``links unresolved|fix|create|ignore``, ``health``.

Each fix is one engine action (one commit, undone with ``curator undo``). An agent may fix only
where the scope policy lets it write every file the fix touches (and no ``[review]`` rule would
hold the write); ``links ignore`` writes a decision file and is the operator's alone.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation
    from curator.engine.wiki import Wiki


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("links", "health")


def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    links = sub.add_parser(
        "links", parents=[parent], help="repair unresolved links: unresolved, fix, create, ignore",
        description="Every link target that resolves to nothing, with its occurrences, the pages "
        "linking to it and up to five suggested pages (same name, a name the target begins, similar "
        "titles, aliases and file names). Fix one by adding it as an alias of a page (one file "
        "changes) or by rewriting every occurrence to the page with its text kept; create the page; "
        "or ignore the target (a committed decision in .curator-ignored-links.json). One commit each.")
    lsub = links.add_subparsers(dest="links_command", metavar="<action>", required=True,
                                parser_class=type(links))
    p = lsub.add_parser("unresolved", parents=[parent],
                        help="unresolved targets, most links first: [{target, count, pages, suggestions, confidence, "
                        "needs_look}]",
                        description="Each target with up to five suggested pages, best first, and how sure "
                        "the top one is (confidence, 0-1): one below 0.9 is marked 'needs a look' "
                        "(needs_look in --json) and is left out of the station's bulk accept.")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="at most N targets (default: all)")
    p.add_argument("--no-suggestions", action="store_true", help="leave the suggestions out (faster)")
    p.set_defaults(handler="curator.commands.links:run_unresolved", walk_ahead=True)

    p = lsub.add_parser("fix", parents=[parent],
                        help="point every link to TARGET at PAGE (one commit)",
                        description="--by alias adds TARGET to PAGE's aliases (only PAGE changes); "
                        "--by rewrite rewrites each linking page, keeping what the link shows: "
                        "[[Nocturne Bg3 V4]] -> [[nocturne-bg3-v4-campaign|Nocturne Bg3 V4]].")
    p.add_argument("target", metavar="TARGET", help="the unresolved target as written, e.g. 'Nocturne Bg3 V4'")
    p.add_argument("--to", required=True, metavar="PAGE", help="the page the links mean (path or slug)")
    p.add_argument("--by", required=True, choices=("alias", "rewrite"), help="how to repair (see above)")
    p.add_argument("--preview", action="store_true", help="show what would change, write nothing")
    p.set_defaults(handler="curator.commands.links:run_fix")

    p = lsub.add_parser("create", parents=[parent],
                        help="create the page TARGET names (append's scaffold, one commit)")
    p.add_argument("target", metavar="TARGET")
    p.set_defaults(handler="curator.commands.links:run_create")

    p = lsub.add_parser("ignore", parents=[parent],
                        help="leave TARGET out of the queue for good (a committed decision, operator only)")
    p.add_argument("target", metavar="TARGET")
    p.set_defaults(handler="curator.commands.links:run_ignore")

    p = sub.add_parser("health", parents=[parent],
                       help="the wiki's state in figures: unresolved links, duplicates, lint, inbox, ...",
                       description="Pages, unresolved targets and links, duplicate families, orphans, lint "
                       "problems (in all and by kind), auto-filed pages awaiting a decision, inbox items "
                       "pending, agent writes in the last 24 h; each names the command that lists them.")
    p.add_argument("--no-duplicates", action="store_true",
                   help="leave the duplicate count out (it reads every page body the first time)")
    p.set_defaults(handler="curator.commands.links:run_health", walk_ahead=True)


def _finish(inv: Invocation, result: Any) -> int:
    inv.emit(result.to_json(), f"{result.status}: {result.message}")
    return 1 if result.is_error else 0


#: The operator's whole list of unresolved targets as ``links unresolved`` prints it (the text,
#: terminal-safe, every target with its best suggestion), saved with what it was made from: the
#: digests of the saved queue (:func:`~curator.engine.review.linkrepair.held_queue`) and of the
#: ignored targets. While both are the same it is printed as its bytes (at 300,000 pages its
#: 160,000 rows were made again by every answer: 3.4 s), after an agent's append too.
SAVED_UNRESOLVED = "links-unresolved-text"
#: Tag of the saved list's format (a saved one of another format is made again).
_UNRESOLVED_FORMAT = b"unresolved-2\0"  # (2: valid UTF-8, see output_bytes)


def run_unresolved(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.errors import UsageError
    from curator.engine.review.linkrepair import unresolved

    if args.limit < 0:
        raise UsageError(f"--limit must be 0 (all) or more, not {args.limit}")
    # (the operator's whole list, as text: the one answer saved)
    whole = inv.actor.is_operator and not inv.json and not args.limit and not args.no_suggestions
    if whole:
        from curator.commands.invocation import write_bytes

        saved = _saved_unresolved(inv.wiki)
        if saved is not None:
            write_bytes(saved + b"\n")
            return 0
    items = unresolved(inv.wiki, inv.actor, suggest=False if args.no_suggestions else (args.limit or True))
    total = len(items)
    if args.limit:
        items = items[:args.limit]
    lines = []
    for u in items:
        best = u.suggestions[0] if u.suggestions else None
        hint = f"  -> {best.path} ({best.score:.2f})" if best else ""
        if u.needs_look:
            hint += f"  needs a look (confidence {u.confidence:.2f})"
        lines.append(f"{u.count:>6}  [[{u.target}]] in {len(u.pages)} page(s){hint}")
    lines.append(f"{total} unresolved target(s), {sum(u.count for u in items)} link(s) shown")
    if whole:
        _print_and_save_unresolved(inv.wiki, "\n".join(lines))
        return 0
    inv.emit(lambda: [u.to_json() for u in items], "\n".join(lines))
    return 0


def _unresolved_key(wiki: Wiki) -> bytes | None:
    """What the whole list is made from: the digests of the saved queue holding for the pages as
    they are and of the ignored targets (None: no such queue)."""
    import hashlib

    from curator.engine.review.linkrepair import held_queue, ignored_keys

    queue = held_queue(wiki)
    if queue is None:
        return None
    ignored = "\0".join(sorted(ignored_keys(wiki))).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(queue, digest_size=16).digest() + hashlib.blake2b(ignored, digest_size=16).digest()


def _saved_unresolved(wiki: Wiki) -> bytes | None:
    """The whole list as saved, when it was made from what the list is made from now."""
    from curator.commands.invocation import unpacked_answer

    data = unpacked_answer(wiki.store.derived_any(SAVED_UNRESOLVED), _UNRESOLVED_FORMAT)
    if data is None:
        return None
    key = _unresolved_key(wiki)
    return data[len(key):] if key is not None and data[:len(key)] == key else None


def _print_and_save_unresolved(wiki: Wiki, text: str) -> None:
    """Print the whole list (terminal-safe) and save it with what it was made from."""
    from curator.commands.invocation import output_bytes, packed_answer, terminal_safe, write_bytes

    out = output_bytes(terminal_safe(text))
    write_bytes(out + b"\n")
    key = _unresolved_key(wiki)  # (the queue as the answer saved or carried it)
    if key is not None:
        wiki.store.save_derived(SAVED_UNRESOLVED, packed_answer(_UNRESOLVED_FORMAT, key + out))


def run_fix(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.linkrepair import fix, preview_fix

    if args.preview:
        plan = preview_fix(inv.wiki, [(args.target, args.to)], args.by, inv.actor)
        inv.emit({"status": "preview", **plan.to_json()}, plan.render())
        return 0
    return _finish(inv, fix(inv.wiki, args.target, args.to, args.by, inv.actor))


def run_create(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.linkrepair import create

    return _finish(inv, create(inv.wiki, args.target, inv.actor))


def run_ignore(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.linkrepair import ignore

    return _finish(inv, ignore(inv.wiki, args.target, inv.actor))


def run_health(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.health import health

    report = health(inv.wiki, inv.actor, duplicates=not args.no_duplicates)
    inv.emit(report.to_json(), report.render())
    return 0
