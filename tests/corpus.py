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

import itertools
import os
import random
import subprocess
from collections import defaultdict
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
#: Excluded folders (docs/design.md §2) with a nested variant each; files under them are not pages.
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
    #: the real-shaped profile's extras (families, title-prefix links, big pages); else None
    real: RealShapedExtras | None = None

    @property
    def regular(self) -> list[str]:
        return list(self.expected)


def plain_read(root: Path | str) -> int:
    """The benchmarks' floor: read every ``.md`` file once (outside ``.git``/``.curator``), no
    parsing; returns the bytes read."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".curator")]
        for name in filenames:
            if name.endswith(".md"):
                with open(os.path.join(dirpath, name), "rb") as f:
                    total += len(f.read())
    return total


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


def generate(root: Path, n_pages: int | None = None, seed: int = 0, *, hostile: bool = False,
             cjk: bool = True, git: bool = False, profile: str = "default") -> CorpusInfo:
    """Write a wiki of ``n_pages`` regular pages (plus the hostile set) under ``root``.

    ``n_pages`` counts the regular pages, the CJK and ambiguity pages included when ``cjk`` (5 of
    them, so ``n_pages`` must be at least 5 then). With ``git`` the root is a repository with one
    commit whose identity is passed on the command line.

    ``profile="real-shaped"`` writes the shape of a real LLM wiki instead (see
    :func:`generate_real_shaped`; ``n_pages`` defaults to 32,000 there); ``hostile`` and ``cjk``
    then add the hostile set and the CJK/ambiguity pages on top.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown corpus profile {profile!r} (use one of {', '.join(PROFILES)})")
    if profile == REAL_SHAPED:
        info = generate_real_shaped(root, REAL_N_PAGES if n_pages is None else n_pages, seed)
        if cjk:
            _special_pages(info.root, info)
        if hostile:
            _hostile(info.root, info)
        info.pages = sorted([*info.expected, *info.hostile.values()])
        if git:
            _git_commit(info.root)
        return info
    if n_pages is None:
        raise TypeError("generate() needs n_pages for the default profile")
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


# --- the real-shaped profile ------------------------------------------------------------------
#
# ``generate(root, profile="real-shaped")`` (or :func:`generate_real_shaped`) writes a wiki with
# the shape of a real LLM-maintained wiki (issue 17: 32,480 pages, 115 MB): one folder holding
# most pages, a long-tailed page-size distribution, frontmatter on almost every page in the
# flat shapes LLMs write (plus a few the fast frontmatter path must hand to PyYAML), links
# written by title as often as by slug, and families of copies. Generation is a few seconds
# for 32,000 pages: bodies are slices of one seeded text pool, not word-by-word draws.

REAL_SHAPED = "real-shaped"
PROFILES: tuple[str, ...] = ("default", REAL_SHAPED)
REAL_N_PAGES = 32_000
#: the one big folder and its share of the pages (28,304 of 32,480 in the measured wiki)
REAL_BIG_FOLDER = "wiki/entities"
REAL_BIG_SHARE = 0.875
REAL_OTHER_FOLDERS: tuple[str, ...] = (
    "wiki/concepts", "wiki/sources", "wiki/projects", "wiki/people", "wiki/topics/games",
    "wiki/topics/music", "departments/sales", "departments/finance", "journal",
)
#: page body sizes in bytes at these quantiles (inverse CDF, linear in between): median 2.9 KB,
#: p99 16 KB. The tail beyond (pages over 100 KB, the two over 1 MB) is placed explicitly.
REAL_SIZE_QUANTILES: tuple[tuple[float, int], ...] = (
    (0.0, 200), (0.05, 500), (0.15, 1100), (0.30, 1900), (0.50, 2900), (0.70, 3200),
    (0.85, 3700), (0.93, 4600), (0.97, 7000), (0.99, 11_000), (0.995, 16_000), (0.999, 26_000),
    (1.0, 50_000),
)
REAL_OVER_100K = 165  # pages over 100 KB (at 32,000 pages; scaled with n_pages)
REAL_OVER_1M = 2  # the index and the log: over 1 MB
REAL_FRONTMATTER_SHARE = 0.995
REAL_FAMILY_SHARE = 0.03  # share of pages that are a family's original (each has 1-5 copies)
FAMILY_COPY_MARKERS: tuple[str, ...] = ("copy", "fixed-v2", "v3", "final", "old")
#: share of pages that are the original of a two-thirds copy: a page under a new name and title
#: holding 5 of the original's 6 facts and one of its own (issue 19: body Jaccard < 0.8)
REAL_TWO_THIRDS_SHARE = 0.005
#: facts (bullets of fresh words, written nowhere else) on a two-thirds original
TWO_THIRDS_FACTS = 6
_SYLLABLES: tuple[str, ...] = (
    "ka", "lo", "ve", "ri", "mon", "ta", "sel", "dra", "quin", "bo", "ne", "tur", "ax", "li",
    "por", "shi", "gen", "mar", "vo", "cel", "da", "fin", "ro", "zu", "ham", "pe", "tro", "wen",
)
_NAME_WORDS: tuple[str, ...] = (
    "nocturne", "bg3", "v4", "campaign", "ledger", "atlas", "orbit", "harbor", "ember", "summit",
    "cobalt", "meridian", "quartz", "lumen", "vector", "sable", "aurora", "delta", "zephyr", "onyx",
    "pilot", "relay", "beacon", "canyon", "falcon", "glacier", "horizon", "juniper", "kestrel",
    "lattice", "mosaic", "nimbus", "opal", "prism", "quill", "raven", "sierra", "tundra", "umbra",
    "vertex", "willow", "xenon", "yarrow", "zenith", "alpha", "beta", "gamma", "omega", "sigma",
    "notes", "plan", "review", "draft", "spec", "guide", "log", "report", "summary", "timeline",
    "2024", "2025", "q1", "q2", "q3", "q4", "ii", "iii", "mk2", "x7", "api", "sdk", "ui", "db",
)


#: Unresolved links of the shapes that fool a name-similarity suggester, each with its right answer
#: (issue 43): wrong ones (a first name inside or at the start of long titles, an acronym that
#: begins a slug, one word of a CamelCase name) and right near-misses (a plural, CamelCase written
#: as words, punctuation, a page renamed with a word added). Their pages' names use words of their
#: own, none of :data:`_NAME_WORDS`, so no drawn name competes.
LABELLED_MIN_PAGES = 1000
_FIRST_NAMES: tuple[str, ...] = (
    "julian", "marcus", "helena", "livia", "octavia", "claudia", "felix", "aurelia", "cassius",
    "flavia", "lucius", "priscilla", "quintus", "severus", "tullia",
)
_PLACES: tuple[str, ...] = ("rome-the-aventine-hill", "ostia-harbour-quarter", "capua-old-forum",
                            "ravenna-marsh-road", "verona-river-bend")
_ACRONYMS: tuple[str, ...] = ("pr", "qa", "ci", "hr", "kpi", "okr", "sla", "etl", "cdn", "vpn", "rfc",
                              "mvp", "poc", "crm", "erp")
_ACRONYM_TAILS: tuple[str, ...] = ("1-add-rpgclaw-design-doc", "7-fix-flaky-upload", "checklist-for-launch",
                                   "12-rework", "budget-draft")
_CAMEL: tuple[tuple[str, str], ...] = (
    ("Validation", "Failure"), ("Retry", "Policy"), ("Cache", "Invalidation"), ("Token", "Bucket"),
    ("Rate", "Limiter"), ("Session", "Store"), ("Event", "Queue"), ("Schema", "Registry"),
    ("Payment", "Gateway"), ("Config", "Loader"), ("Shard", "Builder"), ("Query", "Planner"),
    ("Stream", "Reader"), ("Task", "Scheduler"), ("Auth", "Provider"),
)
_THINGS: tuple[str, ...] = (
    "lantern", "compass", "anvil", "chisel", "kettle", "mortar", "saddle", "barrel", "ladder",
    "trowel", "hammer", "lathe", "quiver", "satchel", "spindle",
)
_PAIRS: tuple[tuple[str, str], ...] = (
    ("copper", "kettle"), ("granite", "quarry"), ("willow", "basket"), ("amber", "lamp"),
    ("iron", "gate"), ("salt", "marsh"), ("pine", "ridge"), ("stone", "bridge"), ("wool", "market"),
    ("clay", "oven"), ("glass", "works"), ("river", "mill"), ("hill", "fort"), ("oak", "barn"),
    ("moss", "garden"),
)
_METALS: tuple[str, ...] = ("brass", "tin", "silver", "bronze", "pewter")
LABELLED_SHAPES: tuple[str, ...] = ("first-name", "acronym", "camel-word", "plural", "camel-as-words",
                                    "punctuation", "renamed")


def _labelled_pages() -> tuple[list[tuple[str, str]], list[tuple[str, str | None, str]]]:
    """The pages of the labelled links ((file stem, title) each) and the links ((target as
    written, file stem of the right page or None, shape) each)."""
    pages: list[tuple[str, str]] = []
    links: list[tuple[str, str | None, str]] = []

    def page(stem: str, title: str | None = None) -> str:
        pages.append((stem, title or _title_of(stem)))
        return stem

    for k, name in enumerate(_FIRST_NAMES):  # [[Julian]]: no page is Julian's
        page(f"{_PLACES[k % len(_PLACES)]}-private-{name}-townhouse")
        page(f"{name}-{('calendar', 'letters', 'estate', 'portrait', 'tomb')[k % 5]}-notes-and-sources")
        links.append((name.capitalize(), None, "first-name"))
    for k, acronym in enumerate(_ACRONYMS):  # [[PR]]: many things begin with "pr"
        page(f"{acronym}-{_ACRONYM_TAILS[k % len(_ACRONYM_TAILS)]}")
        links.append((acronym.upper(), None, "acronym"))
    for k, (head, tail) in enumerate(_CAMEL):
        # [[Validation]] -> ValidationFailure is wrong; [[Token Bucket]] -> TokenBucket is right.
        # Some files are named by the CamelCase, some by its words (validation-failure.md)
        stem = page(head + tail if k % 2 else f"{head}-{tail}".lower(), head + tail)
        links.append((head, None, "camel-word"))
        if k % 3 == 0:
            links.append((tail, None, "camel-word"))
        if k % 2:  # (validation-failure.md: [[Validation Failure]] resolves)
            links.append((f"{head} {tail}", stem, "camel-as-words"))
    for thing in _THINGS:  # [[Lanterns]] -> lantern, [[Compasses]] -> compass
        links.append((thing.capitalize() + ("es" if thing.endswith("s") else "s"), page(thing), "plural"))
    for k, (first, second) in enumerate(_PAIRS):  # [[Copper Kettle: Notes]] -> copper-kettle-notes
        notes = page(f"{first}-{second}-notes")
        mark = (": ", " – ", "'s ", ", ", " / ")[k % 5]
        links.append((f"{first.capitalize()} {second.capitalize()}{mark}Notes", notes, "punctuation"))
    for k, thing in enumerate(_THINGS):  # [[Brass Lantern]] -> brass-lantern-survey (renamed, a word added)
        renamed = page(f"{_METALS[k % len(_METALS)]}-{thing}-{('survey', 'archive', 'records')[k % 3]}")
        links.append((f"{_METALS[k % len(_METALS)].capitalize()} {thing.capitalize()}", renamed, "renamed"))
    return pages, links


@dataclass(slots=True)
class RealShapedExtras:
    """What a real-shaped corpus holds beyond :class:`CorpusInfo`'s regular pages."""

    big_folder: str = REAL_BIG_FOLDER
    #: families of copies: the original first, then its copies (2-6 pages each); every member
    #: carries the family's own prose (text no other page has) and a line of its own
    families: list[list[str]] = field(default_factory=list)
    #: (original, copy): the copy, under another name and title, holds 5 of the original's 6 facts
    two_thirds: list[tuple[str, str]] = field(default_factory=list)
    #: (source page, target as written, page it names): links written by a title prefix
    #: (``[[Nocturne Bg3 V4]]`` -> ``nocturne-bg3-v4-campaign.md``) resolve to nothing by name;
    #: link repair suggests the page
    title_prefix_links: list[tuple[str, str, str]] = field(default_factory=list)
    #: unresolved links labelled with the page they mean (None: no page is right), one per line
    #: of :data:`LABELLED_SHAPES`' kinds: (source page, target as written, right page or None,
    #: shape); written only from :data:`LABELLED_MIN_PAGES` pages on
    labelled_links: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    #: pages over 100 KB, and those over 1 MB
    over_100k: list[str] = field(default_factory=list)
    over_1m: list[str] = field(default_factory=list)
    #: pages without frontmatter, and those whose frontmatter is not the flat kind
    no_frontmatter: list[str] = field(default_factory=list)
    complex_frontmatter: list[str] = field(default_factory=list)
    total_bytes: int = 0


def _real_size(rng: random.Random) -> int:
    u = rng.random()
    for (q0, s0), (q1, s1) in itertools.pairwise(REAL_SIZE_QUANTILES):
        if u <= q1:
            return int(s0 + (s1 - s0) * (u - q0) / (q1 - q0))
    return REAL_SIZE_QUANTILES[-1][1]


def _text_pool(rng: random.Random, chars: int) -> tuple[str, list[int]]:
    """About ``chars`` characters of prose (paragraphs of sentences of pseudo-words) and the
    offset where each paragraph starts. Bodies are slices of it."""
    vocab = sorted({"".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3))) for _ in range(3000)})
    vocab += list(WORDS) * 4  # common words recur, like real prose
    words = rng.choices(vocab, k=chars // 7)
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    i = 0
    while i < len(words):
        n_sentences = rng.randint(2, 6)
        sentences = []
        for _ in range(n_sentences):
            k = rng.randint(6, 18)
            chunk = words[i:i + k]
            i += k
            if not chunk:
                break
            sentences.append(chunk[0].capitalize() + " " + " ".join(chunk[1:]) + ".")
        para = " ".join(sentences) + "\n\n"
        starts.append(pos)
        parts.append(para)
        pos += len(para)
    return "".join(parts), starts


def _real_names(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct slugs of 2-4 name words (a number is added only on a collision)."""
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        stem = "-".join(rng.sample(_NAME_WORDS, rng.randint(2, 4)))
        if stem in seen:
            stem = f"{stem}-{len(out)}"
        seen.add(stem)
        out.append(stem)
    return out


def _real_frontmatter(rng: random.Random, i: int, title: str, tags: list[str], layer: str | None,
                      trust: float | None) -> tuple[str, bool]:
    """A frontmatter block (with fences) in one of the shapes LLM wikis write; and whether it is
    a non-flat shape (nested mapping, folded text, timestamp, comment) for PyYAML."""
    lines: list[str] = []
    kind = i % 20
    if ":" in title or kind == 7:
        lines.append(f'title: "{title}"')
    elif kind == 11:
        lines.append("title: '" + title.replace("'", "''") + "'")
    elif kind != 13:
        lines.append(f"title: {title}")
    lines.append(f"type: {('entity', 'concept', 'source', 'note', 'project')[i % 5]}")
    if kind % 3 == 0:
        lines.append("tags:")
        lines += [f"  - {t}" for t in tags]
    elif kind == 5:
        lines.append(f"tags: {', '.join(tags)}")
    else:
        lines.append(f"tags: [{', '.join(tags)}]")
    if layer is not None:
        lines.append(f"layer: {layer}")
    if trust is not None:
        lines.append(f"trust: {trust}")
    lines.append(f"created: 2025-{1 + i % 12:02d}-{1 + i % 28:02d}")
    lines.append(f"updated: 2026-{1 + (i * 7) % 12:02d}-{1 + (i * 3) % 28:02d}")
    if kind == 2:
        lines.append(f"sources: [\"raw/chat-{i:05d}.md\", 'raw/notes.md']")
    if kind == 4:
        lines.append(f"confidence: {('high', 'medium', 'low')[i % 3]}")
        lines.append("draft: false")
        lines.append(f"version: {1 + i % 9}")
    if kind == 9:
        lines.append("aliases: []")
        lines.append("status:")
    complex_shape = False
    roll = rng.random()
    if roll < 0.004:
        lines.append("metadata:\n  origin: agent\n  score: 3")
        complex_shape = True
    elif roll < 0.008:
        lines.append("summary: >-\n  A folded summary\n  over two lines.")
        complex_shape = True
    elif roll < 0.010:
        lines.append("reviewed: 2026-02-01T10:00:00Z")
        complex_shape = True
    elif roll < 0.012:
        lines.append("# a comment the agent left")
        complex_shape = True
    return "---\n" + "\n".join(lines) + "\n---\n", complex_shape


def generate_real_shaped(root: Path, n_pages: int = REAL_N_PAGES, seed: int = 0, *,
                         git: bool = False) -> CorpusInfo:
    """Write a wiki of ``n_pages`` pages shaped like a real LLM-maintained wiki under ``root``.

    The returned :class:`CorpusInfo` lists every page and what parsing it must yield
    (``expected``), the links whose target resolves (``sample_links``: full titles and slugs) and
    unresolved targets; ``info.real`` (:class:`RealShapedExtras`) adds the families of copies,
    the title-prefix links, the big pages and the frontmatter mix. Same seed, same bytes.
    At the default 32,000 pages it writes about 115 MB in a few seconds.
    """
    if n_pages < 20:
        raise ValueError("the real-shaped profile needs at least 20 pages")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    info = CorpusInfo(root=root)
    extras = RealShapedExtras()
    info.real = extras
    scale = n_pages / REAL_N_PAGES
    n_1m = REAL_OVER_1M if n_pages >= 200 else 0
    n_100k = max(1, round(REAL_OVER_100K * scale) - n_1m) if n_pages >= 200 else 0
    hubs = ["index.md", "log.md"][:n_1m]
    n_regular = n_pages - len(hubs)
    n_big = round(n_regular * REAL_BIG_SHARE)
    # Family originals get 1-5 copies each; copies count towards n_regular.
    stems: list[str] = []
    family_of: dict[int, int] = {}  # page index -> family id (originals and copies)
    families: list[list[int]] = []
    two_thirds: dict[int, tuple[int, int]] = {}  # page index -> (pair id, 0 original | 1 copy)
    pair_rng = random.Random(seed * 7919 + 1)  # its own stream: the other draws stay as they were
    names = _real_names(rng, n_regular)
    k = 0
    while len(stems) < n_regular:
        base = names[k]
        k += 1
        if rng.random() < REAL_FAMILY_SHARE and len(stems) + 2 <= n_regular:
            n_copies = min(rng.randint(1, 5), n_regular - len(stems) - 1)
            number = len(families) + 1
            members = [len(stems)]
            stems.append(f"{base}-entry-{number}")
            for marker in FAMILY_COPY_MARKERS[:n_copies]:
                members.append(len(stems))
                stems.append(f"{base}-{marker}-entry-{number}")
            for m in members:
                family_of[m] = len(families)
            families.append(members)
        else:
            stems.append(base)
    # Two-thirds copies: two neighbouring single pages become an original and its copy (the copy
    # keeps its own name and title); chosen from their own stream, so every other draw is as before.
    j = 0
    while j + 1 < n_regular:
        if (j not in family_of and j + 1 not in family_of and pair_rng.random() < 2 * REAL_TWO_THIRDS_SHARE):
            pair = len(two_thirds) // 2
            two_thirds[j], two_thirds[j + 1] = (pair, 0), (pair, 1)
            j += 2
        else:
            j += 1
    folders = [REAL_BIG_FOLDER if j < n_big else REAL_OTHER_FOLDERS[j % len(REAL_OTHER_FOLDERS)]
               for j in range(n_regular)]
    rng.shuffle(folders)
    for members in families:  # a family lives in one folder, like copies made next to the original
        for m in members[1:]:
            folders[m] = folders[members[0]]
    pair_pages: dict[int, list[int]] = defaultdict(list)
    for j, (pair, _) in two_thirds.items():
        pair_pages[pair].append(j)
    titles = [_title_of(s) for s in stems]
    # The labelled links' pages take the names of evenly spread single pages (no draw changes),
    # and each link is written on another single page.
    labelled_lines: dict[int, list[str]] = defaultdict(list)
    labelled: list[tuple[int, str, int | None, str]] = []
    if n_pages >= LABELLED_MIN_PAGES:
        own_pages, own_links = _labelled_pages()
        free = [j for j in range(n_regular) if j not in family_of and j not in two_thirds]
        step = len(free) // (len(own_pages) + len(own_links))
        hosts = free[::step]
        place: dict[str, int] = {}
        for j, (stem, title) in zip(hosts, own_pages, strict=False):
            stems[j], titles[j] = stem, title
            place[stem] = j
        for j, (written, right, shape) in zip(hosts[len(own_pages):], own_links, strict=False):
            labelled_lines[j].append(f"- Also [[{written}]].")
            labelled.append((j, written, None if right is None else place[right], shape))
    paths = [f"{folder}/{stem}.md" for folder, stem in zip(folders, stems, strict=True)]
    sizes = [_real_size(rng) for _ in range(n_regular)]
    singles = [j for j in range(n_regular) if j not in family_of and j not in two_thirds]
    for j in rng.sample(singles, n_100k):
        sizes[j] = int(100_500 * 1.6 ** rng.random())  # 100-160 KB
        extras.over_100k.append(paths[j])
    pool, starts = _text_pool(rng, 2_500_000)
    private_vocab = sorted({"".join(pair_rng.choices(_SYLLABLES, k=3)) for _ in range(6000)})

    def private_text(key: int, chars: int) -> str:
        """Prose only the pages of one family carry (the shared pool is boilerplate at scale)."""
        r = random.Random(key)
        words: list[str] = []
        n = 0
        while n < chars:
            words.append(r.choice(private_vocab))
            n += len(words[-1]) + 1
        return ". ".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12)) + ".\n"

    def pair_facts(pair: int) -> list[str]:
        r = random.Random(seed * 1_000_003 + pair)
        return [" ".join(r.choice(private_vocab) for _ in range(r.randint(16, 22))).capitalize() + "."
                for _ in range(TWO_THIRDS_FACTS + 1)]
    pool_len = len(pool)
    made_dirs: set[str] = set()
    family_links: dict[int, list[str]] = {}
    total = 0
    root_s = str(root)

    def write(rel: str, text: str) -> None:
        nonlocal total
        d = rel.rpartition("/")[0]
        if d and d not in made_dirs:
            (root / d).mkdir(parents=True, exist_ok=True)
            made_dirs.add(d)
        data = text.encode("utf-8")
        total += len(data)
        fd = os.open(f"{root_s}/{rel}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    layers = (("core", "core"), ("context", "context"), ("deep", "deep"), ("L1", "core"),
              ("identity", "identity"))
    for j, (path, title) in enumerate(zip(paths, titles, strict=True)):
        tags = rng.sample(TAGS, rng.randint(1, 3))
        written_layer, layer = layers[j % 5] if j % 4 == 0 else (None, "deep")
        trust = (0.3, 0.6, 0.8, 0.9)[j % 4] if j % 3 == 0 else None
        has_fm = rng.random() < REAL_FRONTMATTER_SHARE
        head = ""
        if has_fm:
            head, complex_shape = _real_frontmatter(rng, j, title, tags, written_layer, trust)
            if complex_shape:
                extras.complex_frontmatter.append(path)
        else:
            extras.no_frontmatter.append(path)
            tags, layer, trust = [], "deep", None
        lines = [f"# {title}", ""]
        # Links: by full title, by slug, by title prefix (to repair), to a family member.
        for _ in range(rng.randint(2, 8)):
            o = rng.randrange(n_regular)
            if o == j:
                continue
            form = rng.random()
            if j in two_thirds:
                continue
            if form < 0.40:
                lines.append(f"- See [[{titles[o]}]].")
                if len(info.sample_links) < 2000:
                    info.sample_links.append((path, titles[o], paths[o]))
            elif form < 0.75:
                lines.append(f"- Related: [[{stems[o]}|{titles[o]}]]")
            elif form < 0.90 and len(titles[o].split()) > 2:
                prefix = titles[o].rsplit(" ", 1)[0]
                lines.append(f"- Mentioned in [[{prefix}]].")
                if len(extras.title_prefix_links) < 2000:
                    extras.title_prefix_links.append((path, prefix, paths[o]))
            else:
                missing = f"todo-{stems[o]}-notes"
                lines.append(f"- To write: [[{missing}]].")
                info.unresolved.add(missing)
        lines += labelled_lines.get(j, [])
        fam = family_of.get(j)
        if fam is not None:
            # a copy carries the original's links (a copy of the page, not of its topic)
            lines = [*lines[:2], *family_links.setdefault(fam, lines[2:])]
        body_tag = None
        if j % 5 == 0:
            body_tag = TAGS[(j + 3) % len(TAGS)]
            lines.append(f"\nFiled under #{body_tag}.")
        pair_of = two_thirds.get(j)
        if pair_of is not None:
            # a two-thirds copy: 5 of the original's 6 facts (in order) and one of its own; the
            # pair's pages hold their facts only (their links are drawn, not written)
            pair, role = pair_of
            told = pair_facts(pair)
            chosen = told[:TWO_THIRDS_FACTS] if role == 0 else [*told[:2], *told[3:TWO_THIRDS_FACTS], told[-1]]
            lines.append("\n## Facts\n")
            lines += [f"- {fact}" for fact in chosen]
        lines.append("\n## Notes\n")
        text = head + "\n".join(lines) + "\n"
        want = sizes[j]
        need = max(0, want - len(text))
        chunks: list[str] = []
        if fam is not None:
            # Every member of a family carries the same prose, its own (near-duplicate bodies);
            # each adds a line of its own below.
            need = max(0, sizes[families[fam][0]] - len(text))
            chunks.append(private_text(seed * 1_000_003 + 500_000 + fam, need))
            need = 0
        at = starts[rng.randrange(len(starts))] if fam is None else 0
        if pair_of is not None:
            need = 0
        while need > 0:
            piece = pool[at:at + need]
            chunks.append(piece)
            need -= len(piece)
            at = 0 if at + len(piece) >= pool_len else at + len(piece)
        body = "".join(chunks)
        cut = body.rfind(" ")
        if cut > 0 and len(body) > 200:
            body = body[:cut] + ".\n"
        text += body
        if fam is not None:
            text += f"\n- Copy note {j}: kept from an earlier session.\n"
        write(path, text)
        expected_tags = [*tags] + ([body_tag] if body_tag and body_tag not in tags else [])
        info.expected[path] = Expected(title, layer, trust if trust is not None else 0.5, expected_tags)
    # The hubs: the index lists every page, the log every session; both are over 1 MB.
    if "index.md" in hubs:
        listing = [f"- [[{t}]] — {p}" for t, p in zip(titles, paths, strict=True)]
        reps = max(1, 1_100_000 // max(1, sum(len(x) + 1 for x in listing)) + 1)
        text = "---\ntitle: Index\ntype: index\n---\n# Index\n\n" + "\n".join(listing * reps) + "\n"
        write("index.md", text)
        info.expected["index.md"] = Expected("Index", "deep", 0.5, [])
    if "log.md" in hubs:
        entries = [f"## [2026-{1 + e % 12:02d}-{1 + e % 28:02d}] ingest | {titles[e % n_regular]}\n"
                   f"{pool[starts[e % len(starts)]:starts[e % len(starts)] + 300]}\n"
                   for e in range(4200)]
        text = "---\ntitle: Log\ntype: log\n---\n# Log\n\n" + "\n".join(entries)
        write("log.md", text)
        info.expected["log.md"] = Expected("Log", "deep", 0.5, [])
    extras.labelled_links = [(paths[j], written, None if right is None else paths[right], shape)
                             for j, written, right, shape in labelled]
    info.unresolved.update(written for _j, written, _right, _shape in labelled)
    extras.over_1m = list(hubs)
    extras.over_100k += hubs
    extras.families = [[paths[m] for m in members] for members in families]
    extras.two_thirds = [(paths[a], paths[b]) for a, b in (sorted(pair_pages[p]) for p in sorted(pair_pages))]
    extras.total_bytes = total
    info.pages = sorted(info.expected)
    if git:
        _git_commit(root)
    return info
