"""Merging a duplicate into the page that stays (SPEC §9), and a preview of what it will do.

``merge_pages(wiki, keep, merge, actor)`` runs as ONE action (``merge: <merge> into <keep>``):

* every ``- `` bullet of ``merge`` is added to ``keep``'s ``## Updates`` section unless append's
  fact dedup (:func:`~.append.find_duplicate`) finds it already there;
* ``tags``, ``related`` and ``aliases`` are united; ``merge``'s slug and title become aliases of
  ``keep`` (so a link written later by its old name still resolves);
* every link to ``merge`` anywhere in the wiki (wikilinks, embeds, markdown links, ``related:``)
  is rewritten to ``keep``, anchors and display text kept: ``[[merged#Sec|text]]`` ->
  ``[[kept#Sec|text]]``. Links are found with the same code-aware scanner that indexes them
  (:func:`~.markdown_scan.strip_code` keeps offsets), so code spans and blocks are never touched
  and no regular expression is built from a page name;
* ``merge`` moves to ``_archive/`` (nothing is deleted);
* one commit, so ``curator undo`` restores every file.

``preview_merge`` computes the same plan without writing: which links in which pages change, which
bullets are added or skipped as duplicates, which tags/related/aliases are added.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from . import frontmatter, markdown_scan
from .actions import ARCHIVE_DIR, ActionContext, ActionResult, Invalid, require_write, run_action
from .actor import OPERATOR, Actor
from .append import find_duplicate, insert_bullet
from .links import LinkIndex
from .page import Page
from .wiki import Wiki

Reader = Callable[[str], tuple[str, bool]]  # path -> (text without BOM, had BOM)


@dataclass(slots=True)
class LinkRewrite:
    page: str  # the page the link is in
    line: int  # 1-based line in that file (the frontmatter line for related:)
    kind: str  # wikilink | embed | markdown | related | property
    old: str  # the link as written
    new: str  # the link after the merge

    def to_json(self) -> dict[str, Any]:
        return {"page": self.page, "line": self.line, "kind": self.kind, "old": self.old, "new": self.new}


@dataclass(slots=True)
class MergePlan:
    keep: str
    merge: str
    archive: str
    rewrites: list[LinkRewrite] = field(default_factory=list)
    bullets_added: list[str] = field(default_factory=list)
    bullets_skipped: list[dict[str, str]] = field(default_factory=list)  # {bullet, matched}
    tags_added: list[str] = field(default_factory=list)
    related_added: list[str] = field(default_factory=list)
    aliases_added: list[str] = field(default_factory=list)
    #: new text (and BOM flag) for every page that changes, keep included
    writes: dict[str, tuple[str, bool]] = field(default_factory=dict)

    @property
    def pages_rewritten(self) -> list[str]:
        return sorted({r.page for r in self.rewrites})

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "merge": self.merge, "archive": self.archive,
                "rewrites": [r.to_json() for r in self.rewrites], "pages_rewritten": self.pages_rewritten,
                "bullets_added": self.bullets_added, "bullets_skipped": self.bullets_skipped,
                "tags_added": self.tags_added, "related_added": self.related_added,
                "aliases_added": self.aliases_added}

    def render(self) -> str:
        lines = [f"merge {self.merge} into {self.keep} (then move it to {self.archive})",
                 f"  {len(self.bullets_added)} bullet(s) added, {len(self.bullets_skipped)} already there"]
        for label, items in (("tags", self.tags_added), ("related", self.related_added),
                             ("aliases", self.aliases_added)):
            if items:
                lines.append(f"  {label} added: {', '.join(items)}")
        lines.append(f"  {len(self.rewrites)} link(s) rewritten in {len(self.pages_rewritten)} page(s)")
        lines += [f"    {r.page}:{r.line}  {r.old}  ->  {r.new}" for r in self.rewrites]
        return "\n".join(lines)


# --- link rewriting ----------------------------------------------------------------------------

def _wikilink_target(keep: Page, links: LinkIndex, as_written: str, page_path: str) -> str:
    """How a wikilink on ``page_path`` names ``keep``: its slug when that resolves to it from
    there, else its path."""
    bare = keep.path[:-3] if keep.path.lower().endswith(".md") else keep.path
    if "/" in as_written:
        return bare
    res = links.resolve(keep.stem, page_path)
    return keep.stem if res.path == keep.path and not res.ambiguous else bare


def _markdown_href(keep: Page, from_page: str, anchor: str) -> str:
    rel = posixpath.relpath(keep.path, posixpath.dirname(from_page) or ".")
    return quote(rel, safe="/._-~") + (f"#{anchor}" if anchor else "")


def rewrite_links(text: str, page_path: str, merge: str, keep: Page,
                  links: LinkIndex) -> tuple[str, list[LinkRewrite]]:
    """``text`` with every link to ``merge`` pointing at ``keep`` (code untouched)."""
    parts = frontmatter.split(text)
    offset = len(text) - len(parts.body)
    body = parts.body
    code_free = markdown_scan.strip_code(body)
    # (start, end, replacement, kind, link start, link end), offsets in body
    edits: list[tuple[int, int, str, str, int, int]] = []
    if "[[" in code_free:
        for m in markdown_scan.WIKILINK.finditer(code_free):
            inner = body[m.start(2):m.end(2)]
            target, _anchor, _alias = markdown_scan.split_wikilink(inner)
            if not target or links.resolve(target, page_path).path != merge:
                continue
            cut = min((i for i in (inner.find("#"), inner.find("|")) if i >= 0), default=len(inner))
            head = inner[:cut]
            if head.endswith("\\"):  # ``[[merged\|text]]`` inside a table keeps its escape
                cut -= 1
            new_inner = _wikilink_target(keep, links, target, page_path) + inner[cut:]
            kind = "embed" if m.group(1) else "wikilink"
            edits.append((m.start(2), m.end(2), new_inner, kind, m.start(), m.end()))
    if "](" in code_free:
        base = posixpath.dirname(page_path)
        for m in markdown_scan.MDLINK.finditer(code_free):
            href = body[m.start(3):m.end(3)]
            if markdown_scan._SCHEME.match(href) or href.startswith(("#", "/")):
                continue
            path, _, anchor = href.partition("#")
            path = unquote(path.split("?", 1)[0])
            if not path.lower().endswith(".md"):
                continue
            target = posixpath.normpath(posixpath.join(base, path))
            if links.resolve(target, page_path).path != merge:
                continue
            edits.append((m.start(3), m.end(3), _markdown_href(keep, page_path, anchor), "markdown",
                          m.start(), m.end()))
    rewrites: list[LinkRewrite] = []
    out: list[str] = []
    last = 0
    for start, end, new, kind, lstart, lend in sorted(edits):
        out.append(body[last:start])
        out.append(new)
        last = end
        line = parts.body_line + body.count("\n", 0, start)
        rewrites.append(LinkRewrite(page_path, line, kind, body[lstart:lend],
                                    body[lstart:start] + new + body[end:lend]))
    out.append(body[last:])
    head, properties = _rewrite_properties(text[:offset], parts, page_path, merge, keep, links)
    new_text = head + "".join(out)
    new_text, related = _rewrite_related(new_text, page_path, merge, keep, links)
    return new_text, properties + rewrites + related


def _rewrite_properties(head: str, parts: frontmatter.Split, page_path: str, merge: str, keep: Page,
                        links: LinkIndex) -> tuple[str, list[LinkRewrite]]:
    """``head`` (the frontmatter block) with every property wikilink to ``merge`` re-pointed
    (``up: "[[merged]]"`` -> ``up: "[[kept]]"``), anchors, display text and formatting kept."""
    raw = parts.raw
    if raw is None or parts.problem or "[[" not in raw:
        return head, []
    meta, problem = frontmatter.load(raw)
    if problem:
        return head, []
    raw_start = head.find("\n") + 1
    out: list[str] = []
    rewrites: list[LinkRewrite] = []
    last = 0
    for start, end in markdown_scan.property_link_spans(raw, meta):
        inner = raw[start:end]
        target, _anchor, _alias = markdown_scan.split_wikilink(inner)
        if not target or links.resolve(target, page_path).path != merge:
            continue
        cut = min((i for i in (inner.find("#"), inner.find("|")) if i >= 0), default=len(inner))
        new_inner = _wikilink_target(keep, links, target, page_path) + inner[cut:]
        out.append(raw[last:start])
        out.append(new_inner)
        last = end
        rewrites.append(LinkRewrite(page_path, 2 + raw.count("\n", 0, start), "property",
                                    f"[[{inner}]]", f"[[{new_inner}]]"))
    if not rewrites:
        return head, []
    out.append(raw[last:])
    return head[:raw_start] + "".join(out) + head[raw_start + len(raw):], rewrites


def _related_entries(meta: dict[str, Any]) -> list[str] | None:
    value = meta.get("related")
    if value is None:
        return None
    if isinstance(value, str):
        return [s.strip() for s in value.split(",") if s.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    return None


def _entry_target(entry: str) -> str:
    target, _a, _b = markdown_scan.split_wikilink(entry.strip().strip("[]"))
    return target


def _rewrite_related(text: str, page_path: str, merge: str, keep: Page,
                     links: LinkIndex) -> tuple[str, list[LinkRewrite]]:
    parts = frontmatter.split(text)
    if parts.raw is None or parts.problem:
        return text, []
    meta, problem = frontmatter.load(parts.raw)
    entries = _related_entries(meta) if not problem else None
    if not entries:
        return text, []
    changed: list[LinkRewrite] = []
    new_entries: list[str] = []
    for entry in entries:
        target = _entry_target(entry)
        if target and links.resolve(target, page_path).path == merge:
            name = _wikilink_target(keep, links, target, page_path)
            new = entry.replace(target, name, 1)
            changed.append(LinkRewrite(page_path, _frontmatter_line(parts.raw, entry), "related", entry, new))
            new_entries.append(new)
        else:
            new_entries.append(entry)
    if not changed:
        return text, []
    return frontmatter.update(text, {"related": list(dict.fromkeys(new_entries))}), changed


def _frontmatter_line(raw: str, needle: str) -> int:
    pos = raw.find(needle)
    return 2 + raw.count("\n", 0, pos) if pos >= 0 else 1


# --- the plan -----------------------------------------------------------------------------------

def _bullets(body: str) -> list[str]:
    """Top-level ``- `` bullets of a body, outside code."""
    code_free = markdown_scan.strip_code(body).split("\n")
    original = body.split("\n")
    return [orig.rstrip("\r").rstrip() for free, orig in zip(code_free, original, strict=True)
            if free.startswith("- ") and orig.strip() != "-"]


def _unite(existing: list[str], extra: list[str], exclude: set[str]) -> list[str]:
    """Items of ``extra`` not yet in ``existing`` (case-insensitive), in order."""
    seen = {x.casefold() for x in existing} | exclude
    out: list[str] = []
    for item in extra:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def plan_merge(wiki: Wiki, keep: Page, merge: Page, read: Reader, today: _dt.date | None = None) -> MergePlan:
    """Everything the merge will change, computed from the files as ``read`` returns them."""
    if keep.path == merge.path:
        raise Invalid(message="cannot merge a page into itself")
    today = today or _dt.date.today()
    links = wiki.links
    plan = MergePlan(keep.path, merge.path, f"{ARCHIVE_DIR}/{merge.path}")
    keep_text, keep_bom = read(keep.path)
    merge_text, _ = read(merge.path)
    keep_parts = frontmatter.split(keep_text)
    if keep_parts.problem or (keep_parts.raw is not None and frontmatter.load(keep_parts.raw)[1]):
        raise Invalid(message=f"{keep.path} has malformed frontmatter; fix it before merging into it")

    # bullets through append's fact dedup, one by one (a bullet added counts for the next)
    for bullet in _bullets(frontmatter.split(merge_text).body):
        matched = find_duplicate(keep_text, bullet)
        if matched is not None:
            plan.bullets_skipped.append({"bullet": bullet, "matched": matched[:80]})
            continue
        keep_text = insert_bullet(keep_text, bullet)
        plan.bullets_added.append(bullet)

    # tags, related, aliases united; merge's slug and title become aliases of keep
    meta = frontmatter.load(keep_parts.raw)[0] if keep_parts.raw is not None else {}
    keep_tags = [str(t) for t in meta.get("tags", [])] if isinstance(meta.get("tags"), list) else \
        [t.strip() for t in str(meta.get("tags") or "").split(",") if t.strip()]
    plan.tags_added = _unite(keep_tags, list(merge.tags), set())
    keep_related_all = _related_entries(meta) or []
    # keep's own related entries naming merge (or itself) would become self-references: dropped
    keep_related = [r for r in keep_related_all
                    if links.resolve(_entry_target(r), keep.path).path not in (keep.path, merge.path)]
    self_names = {keep.path.casefold(), keep.slug, keep.stem.casefold(), merge.path.casefold(), merge.slug,
                  merge.stem.casefold()}
    plan.related_added = [r for r in _unite(keep_related, list(merge.related), set())
                          if links.resolve(_entry_target(r), keep.path).path not in (keep.path, merge.path)
                          and _entry_target(r).casefold() not in self_names]
    keep_aliases = [str(a) for a in meta.get("aliases", [])] if isinstance(meta.get("aliases"), list) else \
        [a.strip() for a in str(meta.get("aliases") or "").split(",") if a.strip()]
    plan.aliases_added = _unite(keep_aliases, [merge.stem, merge.title, *merge.aliases],
                                {keep.title.casefold(), keep.stem.casefold()})
    changes: dict[str, Any] = {}
    if plan.tags_added:
        changes["tags"] = keep_tags + plan.tags_added
    if plan.related_added or keep_related != keep_related_all:
        changes["related"] = keep_related + plan.related_added
    if plan.aliases_added:
        changes["aliases"] = keep_aliases + plan.aliases_added
    if changes or plan.bullets_added:
        changes["updated"] = today
        keep_text = frontmatter.update(keep_text, changes)

    # links to merge, everywhere (keep included: its own links to merge become self-links)
    sources = {e.source for e in links.backlinks(merge.path)} | {keep.path}
    sources.discard(merge.path)
    for path in sorted(sources):
        text, bom = (keep_text, keep_bom) if path == keep.path else read(path)
        new_text, rewrites = rewrite_links(text, path, merge.path, keep, links)
        plan.rewrites.extend(rewrites)
        if path == keep.path:
            keep_text = new_text
        elif new_text != text:
            plan.writes[path] = (new_text, bom)
    plan.writes[keep.path] = (keep_text, keep_bom)
    return plan


def _plain_reader(wiki: Wiki) -> Reader:
    from .page import decode

    def read(path: str) -> tuple[str, bool]:
        dec = decode((wiki.root / path).read_bytes())
        if dec.invalid_utf8:
            raise Invalid(message=f"{path} is not valid UTF-8; fix its encoding before merging")
        return dec.text, dec.bom

    return read


def preview_merge(wiki: Wiki, keep: str, merge: str, actor: Actor = OPERATOR) -> MergePlan:
    """What :func:`merge_pages` would do, without writing anything."""
    keep_page, merge_page = wiki.find(keep, actor), wiki.find(merge, actor)
    plan = plan_merge(wiki, keep_page, merge_page, _plain_reader(wiki))
    # The preview answers as the merge would: a merge the actor may not make is refused here
    # too, with the same words (never listing a rewrite in a page the actor cannot see).
    for path in [*plan.writes, merge_page.path, plan.archive]:
        require_write(wiki, actor, path)
    return plan


def merge_pages(wiki: Wiki, keep: str, merge: str, actor: Actor = OPERATOR) -> ActionResult:
    """Merge ``merge`` into ``keep`` as one action (one commit); ``curator undo`` reverts it."""
    keep_page, merge_page = wiki.find(keep, actor), wiki.find(merge, actor)

    def apply(ctx: ActionContext) -> None:
        def read(path: str) -> tuple[str, bool]:
            text, dec = ctx.read_text(path)
            if text is None or dec is None:
                raise Invalid(message=f"{path} disappeared while merging")
            return text, dec.bom

        pages = wiki.pages
        k, m = pages.get(keep_page.path), pages.get(merge_page.path)
        if k is None or m is None:
            raise Invalid(message="a page of the merge no longer exists")
        plan = plan_merge(wiki, k, m, read)
        for path, (text, bom) in plan.writes.items():
            ctx.write_text(path, text, bom=bom)
        archived = ctx.delete(m.path, archive=True)
        plan.archive = archived or plan.archive
        ctx.status = "merged"
        ctx.message = (f"merged {m.path} into {k.path}: {len(plan.bullets_added)} bullet(s) added, "
                       f"{len(plan.rewrites)} link(s) rewritten in {len(plan.pages_rewritten)} page(s), "
                       f"{m.path} moved to {plan.archive}")
        ctx.data.update(plan.to_json())
        ctx.journal.update({"keep": k.path, "merge": m.path})

    return run_action(wiki, actor, "merge", f"{merge_page.path} into {keep_page.path}", apply)
