"""The operator's own writing: saving a page edited in the station, creating an empty page.

``save_page(wiki, actor, page, text, base=...)``: one action (``edit: <path>``) writing the
operator's text of a page. ``base`` is the text the editor opened; when the file on disk no longer
holds it (an agent appended meanwhile, an editor saved), nothing is written: the answer is
``conflict`` with the three versions and their three-way merge (:func:`merge_edit`, the page merge
of the sync driver: facts either side added to ``## Updates`` are kept from both, frontmatter is
merged key by key, the rest goes through ``git merge-file``). The station shows them; saving the
merged text with the disk version as the new ``base`` keeps both sides. So an edit never
overwrites what someone else wrote since it was opened, whatever the timing: the comparison runs
inside the action, under the wiki's write lock.

``create_page(wiki, actor, target, folder=None)``: one action (``create: <path>``) writing append's
scaffold (frontmatter, ``# Title``, ``## Updates``) for a page not yet written, in ``wiki/`` (when it
exists, else the root) or in ``folder``. The title is the link's text as written, so the link that
asked for the page resolves to it (by file name, else by title).

Both are the operator's doors: an agent writes through append (fact limits, fact dedup, the review
inbox), so for any other actor both answer ``denied`` and write nothing. Lines end and a BOM stays
as the file had them (the editor works in ``\\n``).
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import re

from curator.engine.corpus import frontmatter
from curator.engine.corpus.facts import find_duplicate, insert_bullet, scaffold, title_of
from curator.engine.corpus.slugs import slugify
from curator.engine.errors import CuratorError
from curator.engine.policy.actor import Actor
from curator.engine.status import Status
from curator.engine.wiki import Wiki
from curator.engine.write.actions import ActionContext, ActionResult, Invalid, run_action
from curator.engine.write.three_way import lift_facts, merge_texts

__all__ = ["create_page", "merge_edit", "new_page_path", "save_page"]

CONFLICT = Status.CONFLICT
SAVED = Status.SAVED
UNCHANGED = Status.UNCHANGED
CREATED = Status.CREATED
_UPDATED = re.compile(r"^updated:[^\n]*(?:\n|$)", re.MULTILINE)


def _operator_only(actor: Actor, what: str, action: str) -> ActionResult | None:
    if actor.is_operator:
        return None
    return ActionResult(Status.DENIED, f"{actor} may not {what}: agents write through append "
                        "(wiki_append), which checks facts and the review policy", action=action)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def merge_edit(base: str, mine: str, theirs: str) -> tuple[str, bool]:
    """Three-way merge of an edited page: (result, clean). ``mine`` is the operator's side; where
    both changed the same lines the result holds git's conflict markers (``<<<<<<< ours`` ...).

    When the text merge meets lines changed on both sides but the change on disk is nothing but
    facts appended through the append door (the first of which may have added the ``## Updates``
    section right below the paragraph the operator edited), those facts are appended to the
    operator's text the same way instead: a clean merge.
    """
    base, mine, theirs = _lf(base), _lf(mine), _lf(theirs)
    merged, clean = merge_texts(base, mine, theirs, operator_side="ours")
    if clean:
        return merged, True
    replayed = _replay_appends(base, mine, theirs)
    return (replayed, True) if replayed is not None else (merged, False)


def _stamp(text: str) -> str | None:
    m = _UPDATED.search(text)
    return m.group(0).rstrip("\n") if m else None


def _replay_appends(base: str, mine: str, theirs: str) -> str | None:
    """``mine`` with the facts ``theirs`` appended to ``base``, when that is all ``theirs`` did
    (append's own insertion, replayed on ``base``, gives ``theirs`` but for the ``updated`` stamp)."""
    _rest, facts = lift_facts(base, theirs)
    if not facts:
        return None
    replay = base
    for fact in facts:
        replay = insert_bullet(replay, fact)
    if _UPDATED.sub("", replay) != _UPDATED.sub("", theirs):
        return None
    out = mine
    for fact in facts:
        if find_duplicate(out, fact) is None:
            out = insert_bullet(out, fact)
    old, new, own = _stamp(base), _stamp(theirs), _stamp(mine)
    if new is not None and own == old and new != old:
        # the page's updated date moves on with the facts (append refreshed or added it)
        value = new.partition(":")[2].strip()
        try:
            stamp: object = _dt.date.fromisoformat(value)
        except ValueError:
            stamp = value
        out = frontmatter.update(out, {"updated": stamp})
    return out


def save_page(wiki: Wiki, actor: Actor, ref: str, text: str, *, base: str | None = None) -> ActionResult:
    """Write ``text`` as page ``ref`` (a path or slug): the action ``edit: <path>``.

    Answers: ``saved`` (one commit), ``unchanged`` (the file already holds it; no commit),
    ``conflict`` (the file changed since ``base``: nothing written; ``data`` has ``page``,
    ``base``, ``mine``, ``theirs``, ``merged`` and ``clean``), or an error (``denied``,
    ``invalid``: the page is gone, not valid UTF-8, ``locked``).
    """
    refused = _operator_only(actor, "edit pages", "edit")
    if refused is not None:
        return refused
    try:
        path = wiki.find(ref, actor).path
    except CuratorError as exc:
        return ActionResult(Status.INVALID, str(exc), action="edit", target=ref)
    mine = _lf(text)

    def apply(ctx: ActionContext) -> None:
        ctx.check_write(path)
        current, decoded = ctx.read_text(path)
        if current is None or decoded is None:
            raise Invalid(message=f"{path} no longer exists (moved or archived?); nothing was written",
                          data={"page": path})
        theirs = _lf(current)
        ctx.data["page"] = path
        if base is not None and _lf(base) != theirs and theirs != mine:
            merged, clean = merge_edit(base, mine, theirs)
            ctx.status = CONFLICT
            ctx.data.update(base=_lf(base), mine=mine, theirs=theirs, merged=merged, clean=clean)
            ctx.message = (f"{path} changed on disk since you opened it; nothing was written: "
                           + ("both versions merge cleanly" if clean else "some lines changed on both sides"))
            return
        if theirs == mine:
            ctx.status, ctx.message = UNCHANGED, f"{path} already holds this text; nothing to save"
            return
        out = mine.replace("\n", "\r\n") if decoded.crlf else mine
        ctx.write_text(path, out, bom=decoded.bom)
        ctx.status, ctx.message = SAVED, f"saved {path}"

    return run_action(wiki, actor, "edit", path, apply)


def new_page_path(wiki: Wiki, target: str, folder: str | None = None) -> str:
    """Where :func:`create_page` writes the page ``target`` names: ``<folder>/<slug>.md``, the
    folder being ``wiki/`` when it exists (else the root) unless one is given."""
    name = target.split("|", 1)[0].split("#", 1)[0].strip()
    if name.lower().endswith(".md"):
        name = name[:-3]
    head, _, stem = name.rpartition("/")
    slug = slugify(stem)
    if not slug:
        raise Invalid(message=f"cannot name a page after {target!r}: it has no letters or digits")
    if folder is None:
        folder = head if head else ("wiki" if (wiki.root / "wiki").is_dir() else "")
    folder = folder.strip().strip("/")
    return posixpath.join(folder, f"{slug}.md") if folder else f"{slug}.md"


def create_page(wiki: Wiki, actor: Actor, target: str, folder: str | None = None,
                today: _dt.date | None = None) -> ActionResult:
    """Create the page ``target`` (a link's text) with append's scaffold: ``create: <path>``.

    ``data["page"]`` is the new page's path. A page already at that path is ``invalid``.
    """
    refused = _operator_only(actor, "create empty pages", "create")
    if refused is not None:
        return refused
    try:
        path = new_page_path(wiki, target, folder)
    except Invalid as exc:
        return ActionResult(Status.INVALID, exc.message, action="create", target=target)
    name = target.split("|", 1)[0].split("#", 1)[0].strip().rpartition("/")[2].removesuffix(".md")
    slug = posixpath.splitext(posixpath.basename(path))[0]
    title = title_of(slug) if name == slug else " ".join(name.split())
    day = today or _dt.date.today()

    def apply(ctx: ActionContext) -> None:
        safe = ctx.check_write(path)
        if ctx.read_bytes(safe) is not None:
            raise Invalid(message=f"{safe} already exists", data={"page": safe})
        ctx.write_text(safe, scaffold(slug, "", day, title=title))
        ctx.status, ctx.message = CREATED, f"created {safe}"
        ctx.data["page"] = safe

    return run_action(wiki, actor, "create", path, apply)

