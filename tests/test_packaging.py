"""Packaging: the desktop files pass their validators, the demo wiki has the shape the station
needs on first launch (issue 10), and the wheel ships resources/ so an installed curator works."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import LAYERS
from curator.engine.corpus.slugs import slug_sim
from curator.engine.filing import autofile
from curator.engine.filing.grading import FILE, REVIEW, grade
from curator.engine.policy.scope import parse_scope
from curator.engine.review.lint import lint
from curator.engine.wiki import Wiki

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
APP_ID = "io.github.curator.Curator"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
ICON = ROOT / "resources" / "icons" / "curator.svg"
DEMO = ROOT / "resources" / "demo-wiki"
CJK = re.compile(r"[\u3400-\u9fff]")
UPDATE_BULLET = re.compile(r"(?m)^- .+ \[\[[^\]]+\]\] \(added \d{4}-\d{2}-\d{2}\)$")


def _project_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


# --- desktop integration -------------------------------------------------------------------------

def _run_validator(*cmd: str) -> subprocess.CompletedProcess[str]:
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"{cmd[0]} is not installed (.ci/run installs it)")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def test_desktop_file_passes_desktop_file_validate() -> None:
    result = _run_validator("desktop-file-validate", str(DESKTOP))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # hints are advice; errors and warnings are not acceptable
    assert not re.search(r": (error|warning): ", output), output


def test_metainfo_passes_appstreamcli_validate() -> None:
    result = _run_validator("appstreamcli", "validate", "--no-net", str(METAINFO))
    assert result.returncode == 0, result.stdout + result.stderr
    assert not re.search(r"^[EW]: ", result.stdout, re.M), result.stdout


def test_desktop_file_and_metainfo_agree() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    entry.read(DESKTOP, encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Type"] == "Application"
    assert desktop["Exec"].split()[:2] == ["curator", "gui"]
    assert desktop["Icon"] == APP_ID

    component = ET.parse(METAINFO).getroot()
    assert component.get("type") == "desktop-application"
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.findtext("provides/binary") == "curator"
    releases = [r.get("version") for r in component.iter("release")]
    assert releases and releases[0] == _project_version()


def test_icon_is_a_square_svg_that_renders_at_small_sizes(qapp: object) -> None:
    svg = ET.parse(ICON).getroot()
    assert svg.tag.endswith("svg")
    _, _, width, height = (float(v) for v in svg.get("viewBox", "").split())
    assert width == height

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ICON))
    assert renderer.isValid()
    for size in (16, 256):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(QColor(0, 0, 0, 0))
        painter = QPainter(image)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        colours = {image.pixel(x, y) for x in range(size) for y in range(size)}
        opaque = sum(1 for x in range(size) for y in range(size) if image.pixelColor(x, y).alpha() == 255)
        assert len(colours) >= 4, f"icon at {size}px is nearly blank"
        assert opaque >= size * size // 2, f"icon at {size}px is mostly transparent"


# --- the demo wiki -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Wiki:
    # A copy, so the checkout's resources/ never gets a .curator/ cache from the tests.
    root = tmp_path_factory.mktemp("demo") / "demo-wiki"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".curator"))
    return Wiki(root)


def _meta(wiki: Wiki, path: str) -> tuple[dict[str, object], str]:
    text = wiki.read_text(path)
    parts = frontmatter.split(text)
    return frontmatter.load(parts.raw or "")[0], text


def test_demo_has_about_sixty_pages_across_every_layer_and_folder(demo: Wiki) -> None:
    pages = demo.visible_pages()
    assert 55 <= len(pages) <= 75
    layers = {p.layer for p in pages}
    assert layers == set(LAYERS)
    for layer in LAYERS:
        assert sum(1 for p in pages if p.layer == layer) >= 3, layer
    namespaces = {p.namespace for p in pages}
    assert {"wiki", "concepts", "entities", "sources", "departments", "auto", "_review"} <= namespaces
    departments = {p.path.split("/")[1] for p in pages if p.namespace == "departments"}
    assert departments == {"finance", "engineering"}
    trusts = [p.trust for p in pages]
    assert min(trusts) <= 0.25 and max(trusts) >= 0.9
    assert sum(1 for p in pages if p.do_not_inject) >= 2
    assert not any(p.problems for p in pages), [(p.path, p.problems) for p in pages if p.problems]
    assert {"verified_fact", "raw_dialogue", "tool_output", "user_statement"} <= {p.source_type for p in pages}


def test_demo_scope_file_uses_every_mode(demo: Wiki) -> None:
    text = (demo.root / ".scope.toml").read_text(encoding="utf-8")
    tomllib.loads(text)  # plain TOML first: a syntax error should be named as such
    parsed = parse_scope(text)
    assert parsed.error is None and parsed.warnings == []
    rules = parsed.rules
    assert {r.mode for r in rules.values()} == {"agent_writable", "read_only", "operator_only", "agent_allowlist"}
    assert any(r.mode == "read_only" and r.synced_from for r in rules.values())
    assert any(r.mode == "agent_allowlist" and r.agents for r in rules.values())
    assert any(r.visible_to_departments for r in rules.values())
    pages = {p.namespace for p in demo.visible_pages()}
    assert set(rules) <= pages, "every namespace the policy names has pages to show"


def test_demo_auto_filed_pages_have_the_filing_format(demo: Wiki) -> None:
    auto = [p for p in demo.visible_pages() if p.namespace in ("auto", "_review")]
    filed = [p for p in auto if p.namespace == "auto"]
    held = [p for p in auto if p.namespace == "_review"]
    assert len(filed) >= 3 and len(held) == 2
    assert any(CJK.search(p.title) for p in filed)
    for page in auto:
        meta, text = _meta(demo, page.path)
        kind = page.path.split("/")[1]
        assert meta["type"] == kind and meta["author"] == autofile.AUTO_AUTHOR
        assert {autofile.AUTO_TAG, kind} <= set(page.tags)
        assert (page.layer, page.trust, page.source_type) == ("context", 0.3, "raw_dialogue")
        assert str(meta["filed_by"]).startswith("agent:") and meta["source"]
        assert page.path.split("/")[-1][:-3] == autofile.page_slug(page.title, kind)
        revisions = autofile.revisions_of(text)
        assert revisions and all(re.match(r"- \d{4}-\d{2}-\d{2} (first filing|update) by agent:", r)
                                 for r in revisions)
        # the recorded grade is what the grader gives the filed text (its title line included)
        body = frontmatter.split(text).body.split(autofile.REVISION_HEADING)[0]
        verdict = grade(body, page.title)
        assert (verdict.score, verdict.doc_type) == (meta["score"], kind), page.path
        assert verdict.decision == (REVIEW if page.namespace == "_review" else FILE)
        assert meta["content_hash"] == autofile.content_hash(page.title, body)
    assert any(len(autofile.revisions_of(_meta(demo, p.path)[1])) == 2 for p in filed)


def test_demo_has_cjk_pages_with_articles(demo: Wiki) -> None:
    cjk = [p for p in demo.visible_pages() if CJK.search(p.title)]
    assert len(cjk) >= 4
    articles = [p for p in cjk if "第一條" in demo.read_text(p.path) and "第二條" in demo.read_text(p.path)]
    assert any(p.path.endswith("付款流程.md") for p in articles)


def test_demo_links_updates_and_planted_problems(demo: Wiki) -> None:
    pages = demo.visible_pages()
    links = [link for p in pages for link in p.links]
    assert any(link.anchor for link in links) and any(link.alias for link in links)
    assert {"wikilink", "embed", "markdown", "related"} <= {link.kind for link in links}
    with_updates = [p for p in pages if "## Updates" in demo.read_text(p.path)]
    assert len(with_updates) >= 5
    assert all(UPDATE_BULLET.search(demo.read_text(p.path)) for p in with_updates)

    issues = lint(demo)
    assert not [i for i in issues if i.severity == "error"]
    codes = {i.code for i in issues}
    assert codes == {"unresolved-link", "orphan"}, codes  # only what was planted
    assert len({i.message for i in issues if i.code == "unresolved-link"}) >= 3
    assert 3 <= sum(1 for i in issues if i.code == "orphan") <= 10


def test_demo_plants_each_kind_of_duplicate(demo: Wiki) -> None:
    by_path = {p.path: p for p in demo.visible_pages()}
    fold = lambda s: re.sub(r"[\W_]+", "", s.lower())  # noqa: E731
    # a title variant pair
    assert fold(by_path["concepts/chargeback.md"].title) == fold(by_path["wiki/notes/charge-back.md"].title)
    # a subset slug pair
    assert slug_sim("project-lantern", "project-lantern-notes") >= 0.7
    assert {"wiki/projects/project-lantern.md", "wiki/projects/project-lantern-notes.md"} <= set(by_path)
    # a copied body

    def shingles(path: str) -> set[str]:
        words = re.findall(r"\w+", frontmatter.split(demo.read_text(path)).body.lower())
        return {" ".join(words[i:i + 5]) for i in range(len(words) - 4)}

    a, b = shingles("policies/data-retention-policy.md"), shingles("wiki/notes/retention-rules.md")
    assert len(a & b) / len(a | b) >= 0.8


# --- the wheel -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built offline from a copy of the source tree, with a stray .curator/ cache in the
    demo that must not ship."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns(".curator", "__pycache__", "*.egg-info")
    for name in ("curator", "resources"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    (src / "resources" / "demo-wiki" / ".curator").mkdir()
    (src / "resources" / "demo-wiki" / ".curator" / "cache.sqlite").write_bytes(b"local state")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "--wheel-dir", str(out), str(src)],
        check=True, capture_output=True, text=True, timeout=300,
    )
    (built,) = out.glob("curator-*.whl")
    return built


def test_wheel_ships_resources(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prefix = "curator/resources/"
    assert f"{prefix}icons/curator.svg" in names
    assert f"{prefix}demo-wiki/.scope.toml" in names
    assert f"{prefix}demo-wiki/departments/finance/付款流程.md" in names
    shipped = {n[len(prefix) + len("demo-wiki/"):] for n in names if n.startswith(f"{prefix}demo-wiki/")}
    in_tree = {p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*.md") if ".curator" not in p.parts}
    assert in_tree <= shipped
    assert not [n for n in names if "/.curator/" in n or "__pycache__" in n]
    assert "curator/cli.py" in names and "curator/engine/wiki.py" in names


def test_installed_wheel_finds_its_demo_wiki(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    # The wheel's curator comes first on the path, ahead of this checkout's editable install.
    probe = subprocess.run(
        [sys.executable, "-c", "import curator.paths as p; print(p.resources_dir())"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    resources = Path(probe.stdout.strip())
    assert resources == site / "curator" / "resources"
    copy = tmp_path / "demo"
    shutil.copytree(resources / "demo-wiki", copy)
    listing = subprocess.run(
        [sys.executable, "-m", "curator.cli", "--wiki", str(copy), "index", "--json"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True)
    import json

    rows = json.loads(listing.stdout)
    assert len(rows) == len(list(DEMO.rglob("*.md")))
