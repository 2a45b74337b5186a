"""A synthetic Obsidian vault that rebuilds every compatibility case of docs/design.md §3, and an
independent implementation of Obsidian's documented link rule to compare Curator against.

Run ``python -m tests.obsidian_vault`` to print the comparison table (every link of the vault:
Curator's target vs the rule's) as Markdown; ``tests/engine/corpus/test_obsidian_compat.py`` asserts it.

The reference rule (:func:`obsidian_target`) is written from the documentation, not from
Curator's code: it works on the raw file list with plain loops and ``casefold``, and knows
nothing of slugs or indexes.
"""

from __future__ import annotations

import os
import posixpath
import struct
import sys
import unicodedata
import zlib
from pathlib import Path
from urllib.parse import unquote

NFD_NAME = unicodedata.normalize("NFD", "Café crème")  # as a macOS vault stores it

#: Obsidian's excluded folders plus Curator's (docs/design.md §2, §3).
EXCLUDED = {".git", ".obsidian", ".trash", ".curator", "graphify-out", "_proposed", "proposed",
            "imports", "raw", "_archive"}
ATTACHMENT_EXTS = {"png", "jpg", "jpeg", "gif", "svg", "webp", "pdf", "canvas", "mp3", "mp4", "webm"}


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A small valid PNG (a horizontal gradient of ``rgb``), without any imaging library."""
    rows = b"".join(
        b"\x00" + b"".join(bytes((rgb[0] * x // width, rgb[1], rgb[2] * (width - x) // width))
                           for x in range(width))
        for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + \
        chunk(b"IEND", b"")


PAGES: dict[str, str] = {
    # same-named pages in two folders (the Obsidian Help vault's case)
    "Obsidian Sync/Security and privacy.md": "# Security and privacy (Sync)\n\nEnd-to-end encryption.\n",
    "Obsidian Publish/Security and privacy.md": "# Security and privacy (Publish)\n\nPassword protection.\n",
    "Obsidian Sync/Headless Sync.md": (
        "---\naliases: [Sync FAQ]\n---\n# Headless Sync\n\n"
        "See [[Security and privacy]] first, and [[Obsidian Publish/Security and privacy|Publish's]].\n"
        "Relative: [[../Obsidian Publish/Security and privacy]]. Markdown: "
        "[publish](../Obsidian%20Publish/Security%20and%20privacy.md).\n"
        "Screenshot: ![[web-clipper-kde.png]] and the board [[Planning.canvas]].\n"
        "Qualified files: [[Attachments/Manual.pdf]], ![[../Attachments/diagram.png]], "
        "[the manual](../Attachments/Manual.pdf), ![a shot](../Attachments/web-clipper-kde.png), "
        "[gone](../Attachments/gone.pdf).\n"
    ),
    "Getting started/Start here.md": (
        "# Start here\n\n"
        "From a third folder [[Security and privacy]] is the shortest path. [[headless sync]] is "
        "case-insensitive; [[Sync FAQ]] is an alias; [[Deep/Leaf]] is a path suffix.\n"
        "Home here is [[Home]], beside this page.\n"
        "Read [[Manual.pdf]] and look at ![[diagram.png|240]]; ![[missing-shot.png]] is gone.\n"
    ),
    "Getting started/Home.md": "# Home (Getting started)\n",
    "Home.md": (
        "---\nup: \"[[Start here]]\"\nsee-also:\n  - \"[[Headless Sync]]\"\n  - \"[[Payments#^pay-rule|the rule]]\"\n"
        "# a YAML comment: [[Not a property link]]\n---\n"
        "# Home\n\n[[Home]] from the root is this page; [[Café crème]] was saved on a Mac.\n"
        "%% a comment: [[Hidden In Comment]] %%\n"
        "%%\nA block comment with [[Also Hidden]]\n%%\n\n"
        "    [[Inside Indented Code]]\n\n"
        "- a list\n\n    [[Under A List]] is list content, not code\n\n"
        "Tags: #project/alpha and #标签，then more and #デザイン。 #1984 is not a tag.\n"
        "No [[README]] (only in .obsidian) and no [[Deleted note]] (only in .trash).\n"
    ),
    "Archive/Deep/Leaf.md": "# Leaf\n",
    "Under A List.md": "# Under A List\n",
    f"Notes/{NFD_NAME}.md": "# Café crème\n\nMade on macOS.\n",
    "Guides/Payments.md": (
        "# Payments\n\n## 付款流程：概要\n\n发票核对后三天内付款。\n\n## Étape 2 — Vérifier (FR)\n\n"
        "Check the invoice against the **purchase order** before paying:\n\n"
        "- the amount and currency match\n- the supplier is on the approved list\n\n"
        "Pay within three days. ^pay-rule\n\n## Étape 3\n\n- a listed step ^step-3\n"
    ),
    "Guides/Anchors.md": (
        "# Anchors\n\n"
        "Translated headings: [[Payments#付款流程 概要]], [[Payments#étape 2 vérifier fr]]; block ids "
        "[[Payments#^pay-rule]], [[Payments#^step-3]]; a chain [[Payments#Payments#付款流程：概要]].\n"
        "Broken: [[Payments#No such heading]] and [[Payments#^no-such-block]].\n"
    ),
    "Guides/Transclusion demo.md": (
        "# Transclusion demo\n\n"
        "The web clipper, embedded from `Attachments/` (a folder away): ![[web-clipper-kde.png|320]]\n\n"
        "The second step of [[Payments]], transcluded from its French heading:\n\n"
        "![[Payments#Étape 2 — Vérifier (FR)]]\n\nAnd the rule by its block id: ![[Payments#^pay-rule]]\n"
    ),
    "Guides/Callouts.md": (
        "# Callouts\n\n"
        "> [!note]\n> A note, titled by its type.\n\n"
        "> [!abstract] Abstract\n> A summary.\n\n> [!tldr] Too long\n> An alias of abstract.\n\n"
        "> [!info] Where to pay\n> See [[Payments]], and **check** the amount.\n\n"
        "> [!todo] Todo\n> - [ ] file the invoice\n> - [x] read the order\n\n"
        "> [!tip]- A folded tip\n> Hidden until the title is clicked.\n\n"
        "> [!hint]+ An open hint\n> Foldable, shown open.\n\n"
        "> [!success] Done\n> It worked.\n\n"
        "> [!question] Question\n> Why?\n\n"
        "> [!WARNING] Warning\n> Types are case-insensitive.\n\n"
        "> [!failure] Failure\n> It did not.\n\n"
        "> [!danger] Danger\n> High voltage.\n\n"
        "> [!bug] Bug\n> A known bug.\n\n"
        "> [!example] Example\n> 1. one\n> 2. two\n\n"
        "> [!quote] Quote\n> Words worth keeping.\n\n"
        "> [!info]- Nested, folded\n> The outer body.\n>\n"
        "> > [!warning] Inner\n> > A callout inside a callout.\n\n"
        "> [!unknown-kind] Unknown\n> An unknown type looks like a note.\n\n"
        "> A plain quote stays a quote.\n"
    ),
    ".obsidian/plugins/some-plugin/README.md": "# README\n\n[[Home]]\n",
    ".obsidian/snippets.md": "[[Home]]\n",
    ".trash/Deleted note.md": "# Deleted note\n\n[[Home]]\n",
}

FILES: dict[str, bytes] = {
    "Attachments/web-clipper-kde.png": png(320, 120, (220, 90, 250)),
    "Attachments/diagram.png": png(160, 80, (40, 160, 240)),
    "Attachments/Manual.pdf": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n",
    "Planning.canvas": b'{"nodes":[],"edges":[]}\n',
    ".obsidian/app.json": b"{}\n",
}


def build(root: Path) -> Path:
    """Write the vault under ``root`` (file names exactly as given: the NFD one stays NFD)."""
    for rel, text in PAGES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return write_files(root)


def write_files(root: Path) -> Path:
    """Write the vault's attachments (and its ``.obsidian/`` settings file) under ``root``."""
    for rel, data in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


# --- Obsidian's documented rule, independently ---------------------------------------------------

def vault_files(root: Path) -> list[str]:
    """Every file of the vault, outside the folders Obsidian (and Curator) skip."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in EXCLUDED]
        rel = Path(folder).relative_to(root).as_posix()
        found += [name if rel == "." else f"{rel}/{name}" for name in names]
    return found


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _title_and_aliases(root: Path, path: str) -> list[str]:
    text = (root / path).read_text(encoding="utf-8")
    names: list[str] = []
    if text.startswith("---\n"):
        block = text[4:text.index("\n---", 4)]
        for line in block.splitlines():
            if line.startswith("aliases:"):
                names += [a.strip() for a in line.split(":", 1)[1].strip(" []").split(",")]
    return names


def obsidian_target(root: Path, files: list[str], source: str, target: str, markdown: bool = False) -> str | None:
    """Where Obsidian's documented rule sends ``target`` written on ``source`` (docs/design.md §3).

    Path-qualified: from the vault root, then relative to the linking note, then the shortest
    path ending with it. Bare name: the file whose name (``.md`` optional for notes) matches,
    case-insensitively and Unicode-normalised; several: the one in the linking note's folder,
    else the shortest path, ties alphabetical. Then an alias. A name with another extension is
    a file (attachment) looked up the same way.
    """
    if markdown:  # a markdown link is a path relative to the linking note
        target = posixpath.normpath(posixpath.join(posixpath.dirname(source), unquote(target)))
    want = _fold(target.strip())
    ext = want.rsplit(".", 1)[-1] if "." in want.rsplit("/", 1)[-1] else ""
    is_file = bool(ext) and ext != "md"

    def name_of(path: str) -> str:  # what a link must say to mean ``path``
        folded = _fold(path)
        return folded[:-3] if folded.endswith(".md") and not is_file else folded

    pool = [f for f in files if f.lower().endswith(".md") != is_file]
    want = want[:-3] if want.endswith(".md") and not is_file else want
    folder = posixpath.dirname(source)
    if "/" in want:
        for candidate in (want, _fold(posixpath.normpath(posixpath.join(folder, want)))):
            exact = [f for f in pool if name_of(f) == candidate]
            if exact:
                return exact[0]
        matches = [f for f in pool if name_of(f).endswith("/" + want)]
    else:
        matches = [f for f in pool if name_of(f).rsplit("/", 1)[-1] == want]
        beside = [f for f in matches if posixpath.dirname(f) == folder]
        if beside:
            return beside[0]
    if matches:
        return sorted(matches, key=lambda f: (len(f), f))[0]
    if not is_file:
        for f in pool:
            if any(_fold(a) == want for a in _title_and_aliases(root, f)):
                return f
    return None


def comparison(root: Path) -> list[tuple[str, str, str, str | None, str | None]]:
    """(source, link as written, kind, Curator's target, the rule's target) for every link."""
    from curator.engine.wiki import Wiki

    wiki = Wiki(root)
    files = vault_files(root)
    rows = []
    for source in sorted(wiki.pages):
        for edge in wiki.links.outgoing[source]:
            link = edge.link
            ours = edge.resolution.path or edge.resolution.attachment
            rule = obsidian_target(root, files, source, link.target if link.kind != "markdown"
                                   else _markdown_href(root, source, link.line, link.target),
                                   link.kind == "markdown")
            written = link.target + (f"#{link.anchor}" if link.anchor else "")
            rows.append((source, written, link.kind, ours, rule))
    wiki.close()
    return rows


def _markdown_href(root: Path, source: str, line: int, target: str) -> str:
    """The href (as written in the file) of the markdown link on ``line`` of ``source`` that
    names ``target`` once joined to the page's folder."""
    text = (root / source).read_text(encoding="utf-8").splitlines()[line - 1]
    for chunk in text.split("](")[1:]:
        href = chunk.split(")", 1)[0].split("#", 1)[0]
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), unquote(href)))
        if _fold(joined) == _fold(target):
            return href
    raise AssertionError(f"no markdown link to {target} on {source}:{line}")


def table(rows: list[tuple[str, str, str, str | None, str | None]]) -> str:
    nfc = lambda s: unicodedata.normalize("NFC", s) if s else "—"  # noqa: E731
    out = ["| linking page | link | kind | Curator | Obsidian's rule | equal |",
           "|---|---|---|---|---|---|"]
    for source, written, kind, ours, rule in rows:
        out.append(f"| {nfc(source)} | `{nfc(written)}` | {kind} | {nfc(ours)} | {nfc(rule)} | "
                   f"{'yes' if ours == rule else '**NO**'} |")
    return "\n".join(out)


if __name__ == "__main__":
    import tempfile

    if len(sys.argv) == 3 and sys.argv[1] == "--write":  # build the vault somewhere to open it
        print(build(Path(sys.argv[2])))
        sys.exit(0)
    with tempfile.TemporaryDirectory() as tmp:
        vault = build(Path(tmp) / "vault")
        rows = comparison(vault)
        print(table(rows))
        print(f"\n{sum(r[3] == r[4] for r in rows)} of {len(rows)} links equal")
        sys.exit(0 if all(r[3] == r[4] for r in rows) else 1)
