"""Setting up and reading a wiki: init, index, read, neighbors, read-all, lint."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.commands.invocation import Invocation
    from curator.engine.corpus.store import PageStore
    from curator.engine.review.lint import Row
    from curator.engine.wiki import Wiki


#: The commands :func:`register` adds (lets the CLI build only the parser it needs).
COMMANDS: tuple[str, ...] = ("init", "trust", "index", "read", "neighbors", "read-all", "lint")

def register(sub: Any, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser("init", parents=[parent], help="make a folder a wiki (git repository, .gitignore)")
    p.add_argument("dir", nargs="?", help="the folder (default: --wiki, else the current folder)")
    p.set_defaults(handler="curator.commands.read:run_init")

    p = sub.add_parser("trust", parents=[parent],
                       help="let git run the programs a wiki's own git configuration names (hooks, "
                            "filters, fsmonitor, ...): off until you trust the wiki")
    p.add_argument("dir", nargs="?", help="the wiki (default: --wiki, else the current folder)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--remove", action="store_true", help="stop trusting the wiki")
    how.add_argument("--show", action="store_true", help="only list what its configuration would run")
    how.add_argument("--list", action="store_true", help="list the wikis you trust")
    p.set_defaults(handler="curator.commands.read:run_trust")

    p = sub.add_parser("index", parents=[parent], help="list every page with its layer and trust")
    p.set_defaults(handler="curator.commands.read:run_index", walk_ahead=True)

    p = sub.add_parser("read", parents=[parent], help="print a page")
    p.add_argument("page", metavar="PAGE")
    p.set_defaults(handler="curator.commands.read:run_read", walk_ahead=True)

    p = sub.add_parser("neighbors", parents=[parent],
                       help="a page in full with its outgoing and inbound links")
    p.add_argument("page", metavar="PAGE")
    p.add_argument("--max-bytes", type=int, default=30_000,
                   help="output budget in bytes, for the whole output (the --json document too; default 30000)")
    p.add_argument("--snippet-chars", type=int, default=280, help="snippet length (default 280)")
    p.set_defaults(handler="curator.commands.read:run_neighbors", walk_ahead=True)

    p = sub.add_parser("read-all", parents=[parent], help="every page, identity layer first")
    p.add_argument("--max-bytes", type=int, default=200_000, help="output budget (default 200000)")
    p.set_defaults(handler="curator.commands.read:run_read_all", walk_ahead=True)

    p = sub.add_parser("lint", parents=[parent],
                       help="report malformed frontmatter, bad values, broken and ambiguous links, orphans, "
                       "file names that are not UTF-8, folders differing only in case, unreadable pages; "
                       "exits 1 when a problem of error severity is found",
                       description="Report the wiki's problems. Exit status: 0 when no problem of error severity "
                       "is found (warnings alone), 1 when one is (as linters do), 2 on a usage error.")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when problems of error severity are found")
    p.set_defaults(handler="curator.commands.read:run_lint", walk_ahead=True)


def _positive(value: int, name: str) -> int:
    from curator.engine.errors import UsageError

    if value <= 0:
        raise UsageError(f"{name} must be a positive number, not {value}")
    return value


def run_init(inv: Invocation, args: argparse.Namespace) -> int:
    from pathlib import Path

    from curator.engine.write.bootstrap import init_wiki

    result = init_wiki(Path(args.dir) if args.dir else inv.wiki_dir)
    inv.emit({"status": "ok", "root": str(result.root), "created_repo": result.created_repo,
              "commit": result.commit, "message": result.message}, result.message)
    return 0


def run_trust(inv: Invocation, args: argparse.Namespace) -> int:
    from pathlib import Path

    from curator.engine.corpus.state import STATE_DIR, foreign_state
    from curator.engine.repo import trust
    from curator.engine.repo.git import Git

    if not inv.actor.is_operator:
        inv.emit({"status": "denied", "message": "only the operator trusts a wiki"},
                 "denied: only the operator trusts a wiki")
        return 1
    if args.list:
        roots = trust.trusted_roots()
        inv.emit({"status": "ok", "trusted": roots}, "\n".join(roots) if roots else "(no wiki is trusted)")
        return 0
    root = (Path(args.dir) if args.dir else inv.wiki_dir).resolve()
    if not (root / ".git").exists():
        inv.emit({"status": "invalid", "message": f"{root} is not a git repository"},
                 f"invalid: {root} is not a git repository")
        return 1
    programs = Git(root, trusted=False).programs()
    if args.show:
        state = "trusted" if trust.is_trusted(root) else "not trusted"
        lines = [f"{root} is {state}; its git configuration names:", *(f"  {p}" for p in programs)] \
            if programs else [f"{root} is {state}; its git configuration names no program"]
        if foreign_state(root):
            lines.append(f"its {STATE_DIR}/ was not made by Curator for you on this machine (Curator reads "
                         "nothing in it): trusting the wiki adopts it")
        inv.emit({"status": "ok", "root": str(root), "trusted": trust.is_trusted(root), "programs": programs},
                 "\n".join(lines))
        return 0
    foreign = adopted = False
    if args.remove:
        changed = trust.distrust(root)
        message = f"no longer trusting {root}" if changed else f"{root} was not trusted"
    else:
        foreign = foreign_state(root)
        changed = trust.trust(root)
        message = (f"trusting {root}" if changed else f"{root} is trusted already") + (
            ": git may now run " + "; ".join(programs) if programs else ": its git configuration names no program")
        if foreign:
            # (the operator's word that the folder is theirs: its tokens and settings count from now on)
            adopted = not foreign_state(root)
            message += (f"\nadopted {root / STATE_DIR} as this wiki's local state (its agents' tokens and "
                        "judge settings are used from now on)" if adopted else
                        f"\n{root / STATE_DIR} cannot be adopted (a symbolic link, or the secret in the user's configuration "
                        "folder is unreadable): "
                        "the wiki's local state stays in the user's cache folder")
    inv.emit({"status": "ok", "root": str(root), "trusted": not args.remove, "changed": changed,
              "programs": programs, **({"adopted_state": adopted} if foreign else {})}, message)
    return 0


def _display_width(text: str) -> int:
    """Terminal columns of ``text``: CJK characters take two, so columns line up after them."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


#: The operator's listing as ``index`` prints it (the JSON document's bytes, or the text), saved in
#: the page cache under the store's state (:meth:`~curator.engine.corpus.store.PageStore.save_derived`, as
#: lint's answer is): a warm ``index`` of unchanged pages prints it again without building a row.
SAVED_LISTING = {True: "index-json", False: "index-text"}
#: Tags of the saved listings' formats (a saved one of another format is computed again).
_LISTING_FORMAT = b"listing-3\0"  # (JSON; 2: the text saved terminal-safe; 3: and valid UTF-8, see output_bytes)
_TEXT_FORMAT = b"listing-text-4\0"  # (the text, after the path column's width: see _carried_listing)
#: At most this many pages changed since the text listing was saved are looked at to carry it over.
CARRY_MAX = 64


def run_index(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.commands.invocation import packed_answer, unpacked_answer, write_bytes

    # The summary columns of the page cache: a warm index decodes no page record.
    wiki, actor = inv.wiki, inv.actor
    store = wiki.store
    if not actor.is_operator:  # (the operator sees every page, and its listing is saved)
        pages = [s for s in store.summaries() if wiki.visible(actor, s[0])]
        _emit_index(inv, pages)
        return 0
    store.count()  # (refreshed once: the state is current; nothing decoded)
    name, state = SAVED_LISTING[inv.json], store.state
    tag = _LISTING_FORMAT if inv.json else _TEXT_FORMAT
    saved = unpacked_answer(store.derived(name), tag)
    if saved is None and not inv.json:
        saved = _carried_listing(store)
    if saved is None:
        out, width = _emit_index(inv, store.summaries())
        if state is not None:  # (not when another thread's refresh wrote meanwhile)
            store.save_derived(name, packed_answer(tag, out if inv.json else width.to_bytes(4, "little") + out),
                               state=state)
    elif inv.json:
        write_bytes(saved)
    else:  # (the text as made terminal-safe when it was saved, after its width)
        write_bytes(saved[4:] + b"\n")
    return 0


def _carried_listing(store: PageStore) -> bytes | None:
    """The text listing saved under an earlier state (its width first), when the pages changed
    since leave it as it is, which it is then carried to this state: each is still listed, by
    the same line (an agent's append changes a page's size, never its line). None otherwise: a
    page came or went, a line changed, more than :data:`CARRY_MAX` changed, or a changed page's
    path is not printable as it is (two such paths may print alike)."""
    from curator.commands.invocation import output_bytes, unpacked_answer

    found = store.derived_since(SAVED_LISTING[False])
    if found is None or not found[1] or len(found[1]) > CARRY_MAX:
        return None
    data = unpacked_answer(found[0], _TEXT_FORMAT)
    if data is None or len(data) < 4:
        return None
    width, text = int.from_bytes(data[:4], "little"), data[4:]
    for path in sorted(found[1]):
        page = store.page(path) if path.isprintable() else None
        if page is None or page.size < 0:
            return None
        line = output_bytes(_listing_lines([(path, page.size, page.title, page.layer, page.trust)], width)[0][0])
        if not text.startswith(line + b"\n") and text.find(b"\n" + line + b"\n") < 0:
            return None
    store.carry_derived(SAVED_LISTING[False], found, state=store.state)
    return data


def _safe(text: str) -> str:
    """``text`` for a terminal (:func:`~curator.commands.invocation.terminal_safe`): for a path or
    title that is not printable as it is (looked at first, in line: nearly all are)."""
    from curator.commands.invocation import terminal_safe

    return terminal_safe(text)


def _listing_lines(pages: list[tuple[str, int, str, str, float]], width: int | None = None) -> tuple[list[str], int]:
    """The text listing's line of each of ``pages`` (their paths in a column of ``width``, by
    default the widest path's), and that width."""
    # Each path and title is made terminal-safe by itself (nearly all are printable as they
    # are), so the listing needs no pass over its whole text (0.7 s at 300,000 pages), and is
    # saved safe: a warm listing is printed as its bytes.
    paths = [p[0] if p[0].isprintable() else _safe(p[0]) for p in pages]
    widths = [_display_width(p) for p in paths]
    if width is None:
        width = max(widths, default=4)
    # (an unreadable page is listed with size -1; lint says why)
    lines = [f"{path}{' ' * (width - w)}  {layer if layer.isprintable() else _safe(layer):<8}  {trust:4.2f}  "
             f"{title if title.isprintable() else _safe(title)}"
             + ("  [unreadable: permission denied]" if size < 0 else "")
             for (_, size, title, layer, trust), path, w in zip(pages, paths, widths, strict=True)]
    return lines, width


def _emit_index(inv: Invocation, pages: list[tuple[str, int, str, str, float]]) -> tuple[bytes, int]:
    """Print the listing of ``pages``; return what was printed (the JSON document's bytes, or
    the text in UTF-8: see :func:`~curator.commands.invocation.output_bytes`) and the text's
    path column width (0 for JSON)."""
    from curator.commands.invocation import output_bytes, write_bytes, write_json_bytes
    from curator.engine.corpus.walker import json_document_bytes

    if inv.json:
        out = json_document_bytes([{"path": path, "bytes": size, "title": title, "layer": layer, "trust": trust}
                                   for path, size, title, layer, trust in pages])
        write_json_bytes(out)
        return out, 0
    lines, width = _listing_lines(pages)
    unreadable = sum(1 for p in pages if p[1] < 0)
    lines.append(f"{len(pages)} pages" + (f", {unreadable} unreadable (see 'curator lint')" if unreadable else ""))
    out = output_bytes("\n".join(lines))
    write_bytes(out + b"\n")
    return out, width


def run_read(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.read.reading import read

    result = read(inv.wiki, args.page, inv.actor)
    inv.emit(result.to_json(), result.text)
    return 0


def run_neighbors(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.read.reading import neighbors

    result = neighbors(inv.wiki, args.page, inv.actor, _positive(args.max_bytes, "--max-bytes"),
                       _positive(args.snippet_chars, "--snippet-chars"))
    inv.emit(result.to_json(), result.text)
    return 0


def run_read_all(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.read.reading import read_all

    result = read_all(inv.wiki, inv.actor, _positive(args.max_bytes, "--max-bytes"))
    inv.emit(result.to_json(), result.text)
    return 0


#: The operator's ``lint`` text as printed, saved part by part (the saved answer's parts: see
#: :func:`~curator.engine.review.lint.operators_parts`): each part's lines, terminal-safe and
#: compressed, by the digest of the part, with its number of problems and of errors. An answer
#: prints the parts it holds as they are and renders only the others (a change renders the parts
#: of the pages it touched: at 300,000 pages making and rendering 240,000 issues was 0.7 s).
SAVED_LINT_TEXT = "lint-text"
_LINT_TEXT_FORMAT = 1


def run_lint(inv: Invocation, args: argparse.Namespace) -> int:
    from curator.engine.review.lint import ERROR, issues_of, lint, operators_parts

    if inv.actor.is_operator and not inv.json:
        parts, moved = operators_parts(inv.wiki)
        if not moved:  # (renamed targets, looked up anew each time, are sorted in among the rest)
            problems, errors = _print_lint_parts(inv.wiki, parts)
            _print_lint_summary(problems, errors, inv.wiki.store.count())
            return 1 if errors and not args.exit_zero else 0
        issues = issues_of(parts, moved)
    else:
        issues = lint(inv.wiki, inv.actor)
    errors = sum(1 for i in issues if i.severity == ERROR)
    # (a script or CI step checks the status, as with ruff or eslint; warnings alone pass)
    status = 1 if errors and not args.exit_zero else 0
    if inv.json:
        inv.emit([i.to_json() for i in issues])
        return status
    # (an agent is told how many pages it was shown, never how many there are)
    pages = inv.wiki.store.count() if inv.actor.is_operator else len(inv.wiki.visible_pages(inv.actor))
    inv.emit(None, "\n".join([*(i.render() for i in issues), _lint_summary(len(issues), errors, pages)]))
    return status


def _lint_summary(problems: int, errors: int, pages: int) -> str:
    return f"{problems} problems ({errors} errors) in {pages} pages"


def _print_lint_summary(problems: int, errors: int, pages: int) -> None:
    from curator.commands.invocation import output_bytes, terminal_safe, write_bytes

    write_bytes(output_bytes(terminal_safe(_lint_summary(problems, errors, pages) + "\n")))


def _print_lint_parts(wiki: Wiki, parts: list[tuple[bytes, list[Row]]]) -> tuple[int, int]:
    """Print the operator's problems part by part (from the saved text where it holds the part,
    else rendered, and the text saved again when a part was); (problems, errors)."""
    import marshal
    import zlib

    from curator.commands.invocation import output_bytes, terminal_safe, write_bytes
    from curator.engine.review.lint import ERROR, render_rows

    store = wiki.store
    state = store.state
    held = _held_lint_text(store.derived_any(SAVED_LINT_TEXT))
    kept: dict[bytes, tuple[bytes, int, int]] = {}
    problems = errors = 0
    for digest, rows in parts:
        found = held.get(digest)
        text = _part_text(found)
        if found is None or text is None:  # (rendered: the part changed, or none was saved)
            text = output_bytes(terminal_safe("\n".join(render_rows(rows)) + "\n"))
            found = (zlib.compress(text, 1), len(rows), sum(1 for row in rows if row[2] == ERROR))
        write_bytes(text)
        kept[digest] = found
        problems += found[1]
        errors += found[2]
    if kept.keys() != held.keys() and state is not None:
        store.save_derived(SAVED_LINT_TEXT, marshal.dumps((_LINT_TEXT_FORMAT, kept)), state=state)
    return problems, errors


def _held_lint_text(blob: bytes | None) -> dict[bytes, tuple[bytes, int, int]]:
    """The saved parts' text (:data:`SAVED_LINT_TEXT`) by digest; empty for none, a damaged one
    or one of another format."""
    import marshal

    try:
        version, found = marshal.loads(blob) if blob is not None else (None, None)
    except (ValueError, TypeError, EOFError):
        return {}
    if version != _LINT_TEXT_FORMAT or type(found) is not dict:
        return {}
    return {digest: entry for digest, entry in found.items()
            if type(digest) is bytes and type(entry) is tuple and len(entry) == 3 and type(entry[0]) is bytes
            and type(entry[1]) is int and type(entry[2]) is int}


def _part_text(entry: tuple[bytes, int, int] | None) -> bytes | None:
    import zlib

    if entry is None:
        return None
    try:
        return zlib.decompress(entry[0])
    except zlib.error:
        return None
