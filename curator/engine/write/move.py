"""Moving, renaming and archiving pages without breaking a link (docs/design.md §9).

``move_page(wiki, page, new_path, actor)``: one action (``move: <old> -> <new>``). Every link to the
page anywhere (wikilinks by stem, title, alias or path, embeds, markdown links made relative to
each linking page, ``related:`` and frontmatter property links) is re-pointed with its display text
kept (:mod:`curator.engine.write.relink`); the page's own relative markdown links are re-based from its new folder; its
old slug (and its old title, when the title changes) become aliases. One commit; undo restores
every file byte for byte.

``archive_page(wiki, page, actor)``: the page moves to ``_archive/`` (links to it then show as not
yet written; the result lists the pages that link to it).

``repair_move(wiki, old, new, actor)``: for a rename done outside Curator (an agent, ``git mv``):
the links that still name ``old`` (now unresolved) are re-pointed at ``new`` as a move would have.
:func:`broken_by_renames` finds such renames in recent history (git's rename detection) for lint.
"""

from __future__ import annotations

import contextlib
import marshal
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curator.engine.corpus import frontmatter
from curator.engine.corpus.links import LinkIndex
from curator.engine.corpus.markdown_scan import RawLink
from curator.engine.corpus.page import Page, link_key, parse_page, path_key
from curator.engine.corpus.walker import is_page_path
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.repo.git import GitError
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ARCHIVE_DIR, ActionContext, ActionResult, Invalid, git_of, run_action
from curator.engine.write.merge import Reader, action_reader, encode_writes, plain_reader
from curator.engine.write.relink import LinkRewrite, Retarget, frontmatter_links, rewrite_page


@dataclass(slots=True)
class MovePlan:
    old: str
    new: str
    rewrites: list[LinkRewrite] = field(default_factory=list)
    aliases_added: list[str] = field(default_factory=list)
    moved_text: str = ""
    moved_bom: bool = False
    writes: dict[str, tuple[str, bool]] = field(default_factory=dict)  # other pages that change

    @property
    def pages_rewritten(self) -> list[str]:
        return sorted({r.page for r in self.rewrites})

    def to_json(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "rewrites": [r.to_json() for r in self.rewrites],
                "pages_rewritten": self.pages_rewritten, "aliases_added": self.aliases_added}

    def render(self) -> str:
        lines = [f"move {self.old} -> {self.new}"]
        if self.aliases_added:
            lines.append(f"  aliases added: {', '.join(self.aliases_added)}")
        lines.append(f"  {len(self.rewrites)} link(s) rewritten in {len(self.pages_rewritten)} page(s)")
        lines += [f"    {r.render()}" for r in self.rewrites]
        return "\n".join(lines)


def normalize_destination(wiki: Wiki, page: Page, new_path: str) -> str:
    """``new_path`` as a root-relative page path (``.md`` added; a folder keeps the file name)."""
    raw = str(new_path).strip().replace("\\", "/")
    if not raw:
        raise Invalid(message="give the new path of the page, e.g. wiki/projects/new-name.md")
    if raw.endswith("/") or (wiki.root / raw).is_dir():
        raw = raw.rstrip("/") + "/" + posixpath.basename(page.path)
    if raw.startswith("/") or ".." in raw.split("/"):
        raise Invalid(message=f"invalid path {new_path!r}: must be relative to the wiki root, without '..'")
    raw = posixpath.normpath(raw)
    if not raw.lower().endswith(".md"):
        raw += ".md"
    if not is_page_path(raw) or raw.split("/")[0] in (ARCHIVE_DIR, ".curator", ".git"):
        raise Invalid(message=f"{raw} is not where pages live (an excluded folder); use 'curator archive' "
                      "to archive a page")
    if raw == page.path:
        raise Invalid(message=f"{page.path} is already there: nothing to move")
    if (wiki.root / raw).exists() and raw.casefold() != page.path.casefold():
        raise Invalid(message=f"cannot move {page.path} to {raw}: {raw} exists")
    return raw


def _aliases(text: str, page: Page, new: str) -> tuple[str, list[str]]:
    """``text`` with the page's old slug (and old title, if it changes) added as aliases."""
    moved, _ = parse_page(new, text.encode("utf-8"))
    names = [page.stem] if link_key(page.stem) != link_key(posixpath.splitext(posixpath.basename(new))[0]) else []
    if moved.title != page.title:
        names.append(page.title)
    have = {a.casefold() for a in moved.aliases} | {moved.title.casefold()}
    names = [n for n in dict.fromkeys(names) if n.casefold() not in have]
    if not names:
        return text, []
    parts = frontmatter.split(text)
    if parts.problem or (parts.raw is not None and frontmatter.load(parts.raw)[1]):
        raise Invalid(message=f"{page.path} has malformed frontmatter; fix it first so its old name can "
                      "be kept as an alias")
    return frontmatter.update(text, {"aliases": [*moved.aliases, *names]}), names


def plan_move(wiki: Wiki, page: Page, new: str, read: Reader) -> MovePlan:
    """Everything the move will change, from the files as ``read`` returns them."""
    links = wiki.links
    old = page.path
    plan = MovePlan(old, new)
    retarget = Retarget(links, {old: new}, frozenset(), frozenset({old}))
    sources = {e.source for e in links.backlinks(old)} - {old}
    for path in sorted(sources):
        text, bom = read(path)
        new_text, rewrites = rewrite_page(text, path, retarget, check_frontmatter=frontmatter_links(
            links.pages.get(path), retarget))
        plan.rewrites += rewrites
        if new_text != text:
            plan.writes[path] = (new_text, bom)
    text, plan.moved_bom = read(old)
    moved, rewrites = rewrite_page(text, old, retarget, new_path=new)
    plan.rewrites += [LinkRewrite(new, r.line, r.kind, r.old, r.new) for r in rewrites]
    plan.moved_text, plan.aliases_added = _aliases(moved, page, new)
    return plan


def preview_move(wiki: Wiki, ref: str, new_path: str, actor: Actor = OPERATOR) -> MovePlan:
    page = wiki.find(ref, actor)
    return plan_move(wiki, page, normalize_destination(wiki, page, new_path), plain_reader(wiki))


def move_page(wiki: Wiki, ref: str, new_path: str, actor: Actor = OPERATOR) -> ActionResult:
    """Move or rename a page (one action, one commit); every link to it keeps working."""
    page = wiki.find(ref, actor)
    try:
        new = normalize_destination(wiki, page, new_path)
    except Invalid as exc:
        return ActionResult(Status.INVALID, exc.message, action="move", target=page.path)

    def apply(ctx: ActionContext) -> None:
        current = wiki.pages.get(page.path)
        if current is None:
            raise Invalid(message=f"{page.path} no longer exists")
        ctx.journal.update({"old": page.path, "new": new})
        plan = plan_move(wiki, current, new, action_reader(ctx))
        ctx.write_many(encode_writes(plan.writes))
        ctx.move(page.path, new)
        ctx.write_text(new, plan.moved_text, bom=plan.moved_bom)
        ctx.status = Status.MOVED
        ctx.message = (f"moved {page.path} to {new}: {len(plan.rewrites)} link(s) rewritten in "
                       f"{len(plan.pages_rewritten)} page(s)"
                       + (f"; aliases kept: {', '.join(plan.aliases_added)}" if plan.aliases_added else ""))
        ctx.data.update(plan.to_json())

    return run_action(wiki, actor, "move", f"{page.path} -> {new}", apply)


def archive_page(wiki: Wiki, ref: str, actor: Actor = OPERATOR) -> ActionResult:
    """Move a page to ``_archive/`` (one action); links to it then show as not yet written."""
    page = wiki.find(ref, actor)

    def apply(ctx: ActionContext) -> None:
        if page.path not in wiki.pages:
            raise Invalid(message=f"{page.path} no longer exists")
        linking = sorted({e.source for e in wiki.links.backlinks(page.path)} - {page.path})
        kept = ctx.delete(page.path, archive=True)
        ctx.status = Status.ARCHIVED
        ctx.message = (f"archived {page.path} to {kept}"
                       + (f"; {len(linking)} page(s) link to it and now show it as not yet written"
                          if linking else ""))
        ctx.data.update({"page": page.path, "archive": kept, "linking": linking})

    return run_action(wiki, actor, "archive", page.path, apply)


# --- renames done outside Curator ---------------------------------------------------------------

def _old_path(old: str) -> str:
    raw = posixpath.normpath(str(old).strip().replace("\\", "/"))
    return raw if raw.lower().endswith(".md") else raw + ".md"


def _names_old(old: str) -> Callable[[str], bool]:
    """Whether a link key names the page that was at ``old`` (by path, path suffix or stem)."""
    key = path_key(old)
    stem = link_key(posixpath.splitext(posixpath.basename(old))[0])
    return lambda k: k in (key, stem) or key.endswith("/" + k)


def _still_linking(links: LinkIndex, old: str) -> set[str]:
    """Pages with an unresolved link that names ``old``."""
    names = _names_old(old)
    return {e.source for k, edges in links.unresolved.items() if names(k) for e in edges}


def _old_resolver(links: LinkIndex, old: str) -> Callable[[RawLink, str], str | None]:
    """A resolver that says a link points at ``old`` when it names it and resolves to nothing now
    (the page is gone from there)."""
    names = _names_old(old)

    def resolve(link: RawLink, source: str) -> str | None:
        now = links.resolve(link.target, source)
        if now.path is not None:
            return now.path
        return old if names(link_key(link.target)) else None

    return resolve


def repair_move(wiki: Wiki, old: str, new: str, actor: Actor = OPERATOR) -> ActionResult:
    """Re-point the links that still name ``old`` at the page ``new`` (a rename done outside)."""
    old_path = _old_path(old)
    if old_path in wiki.pages:
        return ActionResult(Status.INVALID, f"{old_path} still exists: use 'curator move {old_path} NEW_PATH' "
                            "to move it", action="move")
    page = wiki.find(new, actor)
    links = wiki.links
    resolve = _old_resolver(links, old_path)
    sources = _still_linking(links, old_path) | {page.path}

    def apply(ctx: ActionContext) -> None:
        read = action_reader(ctx)
        retarget = Retarget(links, {old_path: page.path}, resolve=resolve)
        plan = MovePlan(old_path, page.path)
        for path in sorted(sources):
            text, bom = read(path)
            new_text, rewrites = rewrite_page(text, path, retarget)
            plan.rewrites += rewrites
            if path == page.path and rewrites:  # the old slug stays a name of the page
                new_text, plan.aliases_added = _aliases(new_text, Page(old_path, 0, 0, title=page.title),
                                                        page.path)
            if new_text != text:
                ctx.write_text(path, new_text, bom=bom)
        ctx.status = Status.REPAIRED if plan.rewrites else Status.UNCHANGED
        ctx.message = (f"{len(plan.rewrites)} link(s) to {old_path} re-pointed at {page.path} in "
                       f"{len(plan.pages_rewritten)} page(s)" if plan.rewrites else
                       f"no link names {old_path}: nothing to repair")
        ctx.data.update(plan.to_json())

    return run_action(wiki, actor, "move", f"{old_path} -> {page.path} (repair)", apply)


@dataclass(slots=True, frozen=True)
class BrokenRename:
    old: str
    new: str
    commit: str
    sources: tuple[str, ...]  # pages whose links still name the old path


#: The name git's rename log is kept under in the page cache (:func:`_renames_log`).
RENAMES_NAME = "git-renames"
#: A commit id (SHA-1 or SHA-256): all the kept log's commit may be before it is handed to git.
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _renames_log(wiki: Wiki, limit: int) -> str | None:
    """``git log`` of the last ``limit`` commits with a rename (:meth:`~curator.engine.repo.git.Git.renames`),
    kept in the page cache with the commit HEAD was at: asked again at the same HEAD, it is
    read there; after commits on top of it without a merge, only theirs are asked of git and
    put before it. git finds the last ``limit`` commits with a rename by diffing every commit
    back until it has them (in a wiki with few renames, its whole history): 0.4 s of every
    lint and health at 300,000 pages, whose folders' trees each diff reads whole.
    Raises GitError, OSError."""
    git = git_of(wiki)
    head = git.head()
    if not head:
        return git.renames(limit)
    store = wiki.store
    if not store.loaded:
        wiki.refresh()  # (what it is kept under; the caller reads which pages there are next)
    saved: tuple[str, int, str] | None = None
    with contextlib.suppress(ValueError, TypeError, EOFError):
        found = marshal.loads(store.derived_any(RENAMES_NAME) or b"\0")
        if (isinstance(found, tuple) and len(found) == 3 and isinstance(found[0], str)
                and _COMMIT.fullmatch(found[0]) and found[1] == limit and isinstance(found[2], str)):
            saved = found
    if saved is not None and saved[0] == head:
        return saved[2]
    newer = git.renames(limit, since=saved[0]) if saved is not None else None
    if saved is not None and newer is not None:
        chunks = [c for c in (newer + saved[2]).split("\0") if c.strip()]
        log: str | None = "".join("\0" + c for c in chunks[:limit])
    else:
        log = git.renames(limit)
    if log is not None:
        store.save_derived(RENAMES_NAME, marshal.dumps((head, limit, log)))
    return log


def broken_by_renames(wiki: Wiki, limit: int = 50) -> list[BrokenRename]:
    """Renames git's rename detection saw in the last ``limit`` commits whose old name is still
    linked (unresolved) from some page, newest first."""
    try:
        log = _renames_log(wiki, limit)
    except (GitError, OSError):
        return []
    if log is None:
        return []
    store = wiki.store  # (which pages exist, without decoding them: most logs name no rename)
    out: list[BrokenRename] = []
    seen: set[str] = set()
    for chunk in log.split("\0"):
        lines = chunk.strip().split("\n")
        commit = lines[0].strip()
        for line in lines[1:]:
            parts = line.split("\t")
            if len(parts) != 3 or not parts[0].startswith("R"):
                continue
            old, new = parts[1], parts[2]
            if old in seen or store.has(old) or not store.has(new) or not old.lower().endswith(".md"):
                continue
            seen.add(old)
            sources = sorted(_still_linking(wiki.links, old))
            if sources:
                out.append(BrokenRename(old, new, commit, tuple(sources)))
    return out
