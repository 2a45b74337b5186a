"""A deterministic test corpus: N pages of a realistic wiki, plus an optional hostile set.

Every test and benchmark builds its wiki with :func:`generate`; the returned :class:`CorpusInfo`
says which file is which, so tests can assert on exact paths instead of re-deriving them.

Regular pages spread over ``wiki/``, ``concepts/``, ``entities/``, ``sources/`` and
``departments/<dept>/`` with every frontmatter shape the parser accepts (layer aliases, trust as
number or missing, tags as list or comma string, body ``#tags``, ``related:``), and every kind of
link (``[[t]]``, ``[[t#a]]``, ``[[t|alias]]``, ``[[t#a|alias]]``, ``![[embed]]``, relative
markdown links, unresolved targets, and links inside code that must not count). The same seed
always yields the same files.

With ``hostile=True`` it adds pages that try to break the parser (malformed, non-mapping and
exploding YAML, BOM, CRLF, NUL, invalid UTF-8, a 10 MB page), symlinks that loop or escape the
root, and ``.md`` files inside excluded folders that must never become pages.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

NAMESPACES: tuple[str, ...] = (
    "wiki", "concepts", "entities", "sources", "departments/sales", "departments/finance",
)
DEPARTMENTS: tuple[str, ...] = ("sales", "finance")
# (layer as written, layer as parsed)
LAYER_SPELLINGS: tuple[tuple[str | None, str], ...] = (
    ("identity", "identity"), ("core", "core"), ("context", "context"), ("deep", "deep"),
    ("L0", "identity"), ("l1", "core"), ("L2", "context"), ("l3", "deep"), ("Core", "core"),
    (None, "deep"),
)
WORDS: tuple[str, ...] = (
    "ledger", "invoice", "payment", "refund", "customer", "vendor", "contract", "policy", "audit",
    "budget", "forecast", "pipeline", "onboarding", "release", "incident", "roadmap", "pricing",
    "support", "escalation", "quota", "renewal", "warehouse", "shipping", "compliance", "privacy",
)
TAGS: tuple[str, ...] = ("finance", "ops", "sales", "legal", "people", "product", "howto", "faq")
CJK_TITLE = "付款流程"
CJK_PATH = f"wiki/{CJK_TITLE}.md"
CJK_LINKER = "concepts/退款政策.md"
AMBIGUOUS = ("wiki/overview.md", "concepts/overview.md")
AMBIGUOUS_LINKER = "wiki/start-here.md"
#: Excluded folders (SPEC §2) with a nested variant each; files under them are not pages.
EXCLUDED_FILES: tuple[str, ...] = (
    "departments/finance/.git/stray.md", ".curator/stray.md", "graphify-out/graph.md", "_proposed/idea.md",
    "proposed/idea.md", "imports/batch.md", "raw/transcript.md", "_archive/old.md",
    "departments/sales/_archive/old-deal.md", "wiki/raw/dump.md", "concepts/graphify-out/x.md",
)
TEN_MB = 10 * 1024 * 1024
IDENTITY = ["-c", "user.name=Corpus Generator", "-c", "user.email=corpus@example.invalid",
            "-c", "commit.gpgsign=false"]


@dataclass(slots=True)
class Expected:
    """What the parser must make of a regular page."""

    title: str
    layer: str
    trust: float
    tags: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CorpusInfo:
    root: Path
    #: every path (relative, posix) that must be a page: regular + hostile
    pages: list[str] = field(default_factory=list)
    #: regular pages and what parsing them must yield
    expected: dict[str, Expected] = field(default_factory=dict)
    cjk: list[str] = field(default_factory=list)
    #: hostile kind -> page path (every one of them is a page)
    hostile: dict[str, str] = field(default_factory=dict)
    #: hostile kinds whose page must get a ``frontmatter`` problem in lint
    frontmatter_problems: tuple[str, ...] = ()
    #: ``.md`` files that exist but must never be pages (excluded folders, symlinks)
    not_pages: list[str] = field(default_factory=list)
    #: symlink kind -> path of the link (relative to root)
    symlinks: dict[str, str] = field(default_factory=dict)
    #: folder outside the root that the escaping symlinks point into
    outside: Path | None = None
    #: link targets that resolve to no page ("not yet written")
    unresolved: set[str] = field(default_factory=set)
    #: link targets written only inside code spans/blocks: they must never become links
    code_only: set[str] = field(default_factory=set)
    #: (source page, target as written, page it must resolve to)
    sample_links: list[tuple[str, str, str]] = field(default_factory=list)
    ambiguous: tuple[str, ...] = ()
    ambiguous_linker: str = ""

    @property
    def regular(self) -> list[str]:
        return list(self.expected)


def _write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)


def write_pages(root: Path, pages: dict[str, str | bytes]) -> Path:
    """Write a small hand-made wiki: ``{relative path: text or bytes}``; returns ``root``."""
    for rel, data in pages.items():
        _write(root, rel, data)
    return root


def _title_of(stem: str) -> str:
    return " ".join(w.capitalize() for w in stem.split("-"))


def _regular_page(rng: random.Random, i: int, path: str, stems: list[tuple[str, str]],
                  info: CorpusInfo) -> str:
    """One regular page's text; records its expectations in ``info``."""
    stem = path.rsplit("/", 1)[-1][:-3]
    title = _title_of(stem)
    written_layer, layer = LAYER_SPELLINGS[i % len(LAYER_SPELLINGS)]
    trust_choice = i % 5
    trust = (0.5, 0.3, 0.75, 0.9, 0.5)[trust_choice]
    tags = rng.sample(TAGS, 2)
    body_tag = TAGS[(i + 3) % len(TAGS)]
    shape = i % 7  # 0..4 full frontmatter, 5 frontmatter without title, 6 no frontmatter
    fm: list[str] = []
    if shape <= 5:
        if shape <= 4:
            fm.append(f"title: {title}")
        if written_layer is not None:
            fm.append(f"layer: {written_layer}")
        if trust_choice != 4:
            fm.append(f"trust: {trust}")
        fm.append(f"tags: [{', '.join(tags)}]" if i % 2 else f"tags: {', '.join(tags)}")
        fm.append(f"author: agent:gen{i % 3}")
        fm.append("created: 2026-01-15")
        fm.append(f"x-custom-{i % 4}: keep me")
    else:
        layer, trust, tags = "deep", 0.5, []
    # Links: pick other pages; each form is used across the corpus.
    others = rng.sample(stems, min(5, len(stems)))
    others = [o for o in others if o[1] != path][:4]
    lines = [f"# {title}", "",
             f"{title} is about {' and '.join(rng.sample(WORDS, 3))}. It matters for #{body_tag} work "
             f"and is reviewed every quarter by the {rng.choice(DEPARTMENTS)} team.", ""]
    forms = ("[[{s}]]", "[[{s}#Details]]", "[[{s}|the {s} page]]", "[[{s}#Details|see details]]")
    for k, (ostem, opath) in enumerate(others):
        form = forms[(i + k) % len(forms)]
        lines.append(f"- Related: {form.format(s=ostem)}")
        if k == 0:
            info.sample_links.append((path, ostem, opath))
    if others:
        ostem, opath = others[-1]
        rel = os.path.relpath(opath, os.path.dirname(path)).replace(os.sep, "/")
        lines.append(f"- See also [{_title_of(ostem)}]({rel}) for background.")
    if i % 3 == 0:
        missing = f"missing-topic-{i % 50}"
        info.unresolved.add(missing)
        lines.append(f"- To write: [[{missing}]].")
    if i % 4 == 1 and others:
        lines.append(f"\n![[{others[0][0]}]]")
    code_target = f"code-only-{i % 20}"
    info.code_only.add(code_target)
    lines += ["", "## Details", "",
              f"Use `[[{code_target}]]` in templates; the shell form is below.", "",
              "```md", f"[[{code_target}]] and #not-a-tag-{i} stay code", "```", "",
              " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 160))) + ".", ""]
    if shape <= 5 and others and i % 2 == 0:
        fm.append(f"related: [{others[0][0]}]")
    text = "\n".join(lines)
    if shape <= 5:
        text = "---\n" + "\n".join(fm) + "\n---\n" + text
    expected_title = title  # frontmatter title, else the first heading (same words)
    all_tags = [*tags, body_tag] if shape <= 5 else [body_tag]
    info.expected[path] = Expected(expected_title, layer, trust, list(dict.fromkeys(all_tags)))
    return text


def _special_pages(root: Path, info: CorpusInfo) -> None:
    """Pages every corpus has: CJK names and one deliberately ambiguous link."""
    _write(root, CJK_PATH, "---\ntitle: 付款流程\nlayer: core\ntrust: 0.8\ntags: [财务, 流程]\n---\n"
           "# 付款流程\n\n付款流程说明：发票核对后三天内付款。参见 [[退款政策]]。 #财务\n")
    _write(root, CJK_LINKER, "---\ntitle: 退款政策\nlayer: context\n---\n# 退款政策\n\n"
           "退款需经财务审核，流程见 [[付款流程]] 与 [[付款流程#审批|审批步骤]]。\n")
    info.expected[CJK_PATH] = Expected(CJK_TITLE, "core", 0.8, ["财务", "流程"])
    info.expected[CJK_LINKER] = Expected("退款政策", "context", 0.5, [])
    info.cjk += [CJK_PATH, CJK_LINKER]
    info.sample_links += [(CJK_LINKER, CJK_TITLE, CJK_PATH), (CJK_PATH, "退款政策", CJK_LINKER)]
    for path in AMBIGUOUS:
        _write(root, path, f"---\ntitle: Overview of {path.split('/')[0]}\n---\nAn overview.\n")
        info.expected[path] = Expected(f"Overview of {path.split('/')[0]}", "deep", 0.5, [])
    _write(root, AMBIGUOUS_LINKER, "---\ntitle: Start Here\nlayer: identity\ntrust: 1\n---\n"
           "Begin with the [[overview]].\n")
    info.expected[AMBIGUOUS_LINKER] = Expected("Start Here", "identity", 1.0, [])
    info.ambiguous = AMBIGUOUS
    info.ambiguous_linker = AMBIGUOUS_LINKER


def _alias_bomb() -> str:
    """Billion laughs: 9 levels of 9 aliases (2.4e8 leaves if expanded)."""
    lines = ['lol0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"lol{level}: &a{level} [{refs}]")
    return "---\ntitle: Alias Bomb\n" + "\n".join(lines) + "\n---\nboom\n"


def _deep_alias_bomb() -> str:
    """64 aliases (not over the loader's alias cap) that still double 32 times: 2**33 leaves."""
    lines = ["d0: &d0 [x, y]"]
    for level in range(1, 33):
        lines.append(f"d{level}: &d{level} [*d{level - 1}, *d{level - 1}]")
    return "---\ntitle: Deep Alias Bomb\n" + "\n".join(lines) + "\n---\nstill boom\n"


def _ten_mb_page() -> bytes:
    chunk = ("Line of filler text about ledgers, [[ledger]] links and `code` spans, #bulk tag.\n"
             "A second line with a [markdown link](../wiki/overview.md) and *emphasis*.\n\n")
    head = "---\ntitle: Ten Megabytes\nlayer: deep\n---\n# Ten Megabytes\n\n"
    body = chunk * ((TEN_MB - len(head)) // len(chunk) + 1)
    return (head + body).encode("utf-8")[: TEN_MB + 10]


HOSTILE_PAGES: dict[str, tuple[str, bytes | str]] = {
    "unclosed_frontmatter": ("hostile/unclosed.md", "---\ntitle: Never Closed\nlayer: core\n\nBody text.\n"),
    "list_yaml": ("hostile/list-yaml.md", "---\n- one\n- two\n---\n# List Yaml\n\nbody\n"),
    "scalar_yaml": ("hostile/scalar-yaml.md", "---\njust a string\n---\n# Scalar Yaml\n\nbody\n"),
    "malformed_yaml": ("hostile/malformed.md", "---\ntitle: [unclosed\nlayer: : :\n---\n# Malformed\n\nbody\n"),
    "tab_yaml": ("hostile/tab-yaml.md", "---\ntitle: Tabs\n\tlayer: core\n---\nbody\n"),
    "alias_bomb": ("hostile/alias-bomb.md", _alias_bomb()),
    "deep_alias_bomb": ("hostile/deep-alias-bomb.md", _deep_alias_bomb()),
    "bom": ("hostile/bom.md", b"\xef\xbb\xbf---\ntitle: With BOM\nlayer: core\n---\nBody with a BOM.\n"),
    "crlf": ("hostile/crlf.md", b"---\r\ntitle: With CRLF\r\nlayer: context\r\ntrust: 0.8\r\n---\r\n"
             b"# Crlf\r\n\r\nLinks to [[overview]] over CRLF.\r\n"),
    "empty": ("hostile/empty.md", b""),
    "nul_bytes": ("hostile/nul.md", b"---\ntitle: Has NUL\n---\nbefore\x00after [[overview]]\n"),
    "invalid_utf8": ("hostile/invalid-utf8.md", b"---\ntitle: Bad Bytes\n---\nvalid then \xff\xfe\xc3 bad\n"),
    "bad_values": ("hostile/bad-values.md", "---\ntitle: [1, 2]\nlayer: l9\ntrust: very high\n"
                   "tags: {a: 1}\nrelated: 7\n---\nbody\n"),
    "only_fence": ("hostile/only-fence.md", "---"),
    "huge": ("hostile/ten-mb.md", b""),  # filled lazily (10 MB is built only when asked for)
}
#: hostile pages whose frontmatter lint must report as broken
FRONTMATTER_PROBLEMS: tuple[str, ...] = (
    "unclosed_frontmatter", "list_yaml", "scalar_yaml", "malformed_yaml", "tab_yaml", "alias_bomb",
    "deep_alias_bomb", "only_fence",
)


def _hostile(root: Path, info: CorpusInfo) -> None:
    for kind, (rel, data) in HOSTILE_PAGES.items():
        _write(root, rel, _ten_mb_page() if kind == "huge" else data)
        info.hostile[kind] = rel
    info.frontmatter_problems = FRONTMATTER_PROBLEMS
    # Files in excluded folders, and non-markdown files: never pages.
    for rel in EXCLUDED_FILES:
        _write(root, rel, f"---\ntitle: Excluded {rel}\n---\nmust not be indexed [[overview]]\n")
        info.not_pages.append(rel)
    _write(root, "wiki/notes.txt", "not markdown")
    _write(root, "wiki/diagram.png", b"\x89PNG\r\n\x1a\n")
    # Symlinks: a loop, a dangling self-loop, escapes to a folder and a file outside the root,
    # and a link inside the root (not followed: the target is reached at its real path).
    outside = root.parent / f"{root.name}-outside"
    (outside / "secret-dir").mkdir(parents=True, exist_ok=True)
    (outside / "secret.md").write_text("---\ntitle: Secret\n---\noutside the wiki\n", encoding="utf-8")
    (outside / "secret-dir" / "inner.md").write_text("# Inner secret\n", encoding="utf-8")
    info.outside = outside
    links = {
        "loop_dir": ("wiki/loop", ".."),
        "self_loop": ("wiki/self-loop.md", "self-loop.md"),
        "escape_dir": ("wiki/outside-dir", str(outside / "secret-dir")),
        "escape_file": ("wiki/secret-link.md", str(outside / "secret.md")),
        "internal_file": ("concepts/overview-link.md", "overview.md"),
        "dangling": ("wiki/dangling.md", "does-not-exist.md"),
    }
    for kind, (rel, target) in links.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
        info.symlinks[kind] = rel
    info.not_pages += ["wiki/self-loop.md", "wiki/secret-link.md", "wiki/outside-dir/inner.md",
                       "wiki/loop/wiki/overview.md", "concepts/overview-link.md", "wiki/dangling.md"]


def _git_commit(root: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".curator/\n", encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", "corpus")


def generate(root: Path, n_pages: int, seed: int = 0, *, hostile: bool = False, cjk: bool = True,
             git: bool = False) -> CorpusInfo:
    """Write a wiki of ``n_pages`` regular pages (plus the hostile set) under ``root``.

    ``n_pages`` counts the regular pages, the CJK and ambiguity pages included when ``cjk`` (5 of
    them, so ``n_pages`` must be at least 5 then). With ``git`` the root is a repository with one
    commit whose identity is passed on the command line.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    info = CorpusInfo(root=root)
    special = 5 if cjk else 0
    if n_pages < special:
        raise ValueError(f"n_pages must be at least {special}")
    if cjk:
        _special_pages(root, info)
    count = n_pages - special
    paths: list[tuple[str, str]] = []
    for i in range(count):
        ns = NAMESPACES[i % len(NAMESPACES)]
        stem = f"{WORDS[i % len(WORDS)]}-{WORDS[(i * 7 + 3) % len(WORDS)]}-{i:05d}"
        paths.append((stem, f"{ns}/{stem}.md"))
    for i, (_stem, path) in enumerate(paths):
        _write(root, path, _regular_page(rng, i, path, paths, info))
    if hostile:
        _hostile(root, info)
    info.pages = sorted([*info.expected, *info.hostile.values()])
    if git:
        _git_commit(root)
    return info
