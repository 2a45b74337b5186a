"""The desktop bundle: build packaging/curator.spec with PyInstaller, then start the built binary
offscreen with ``--screenshot`` on the bundled demo wiki and check the image (issue 10).

Slow (a full PyInstaller build), so it lives in tests/perf/ and runs with ``make perf`` or
``.venv/bin/pytest tests/perf/test_perf_dist.py -s``. Needs the ``packaging`` extra
(``pip install -e '.[packaging]'``; ``make dist`` installs it). Prints the build time, the bundle
size and the binary's start-up time next to the virtual environment's ``curator`` (the baseline).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_BUDGET_S = 600
SIZE_BUDGET_MB = 500
STARTUP_BUDGET_S = 2.0
SCREENSHOT_BUDGET_S = 90


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _median_run(cmd: list[str], env: dict[str, str], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=60)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def test_built_binary_renders_the_main_view_offscreen(tmp_path: Path, qapp: object) -> None:
    pytest.importorskip("PyInstaller", reason="needs the 'packaging' extra (make dist installs it)")
    dist, work = tmp_path / "dist", tmp_path / "build"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", str(dist), "--workpath", str(work), str(ROOT / "packaging" / "curator.spec")],
        cwd=tmp_path, check=True, capture_output=True, text=True, timeout=BUILD_BUDGET_S * 2,
    )
    build_s = time.perf_counter() - start
    binary = dist / "curator" / "curator"
    assert binary.is_file() and os.access(binary, os.X_OK)
    size_mb = _tree_size(dist / "curator") / 1e6
    bundled = list((dist / "curator").rglob("resources/demo-wiki/.scope.toml"))
    assert bundled, "the demo wiki is bundled"
    assert not list((dist / "curator").rglob("resources/demo-wiki/.curator"))

    # An isolated user: the station copies the demo wiki into the user data folder on first use.
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path / "home"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    version = subprocess.run([str(binary), "--version"], env=env, check=True, capture_output=True,
                             text=True, timeout=60)
    assert version.stdout.startswith("curator ")
    listing = subprocess.run([str(binary), "--wiki", str(bundled[0].parent), "index"], env=env,
                             check=True, capture_output=True, text=True, timeout=60)
    assert listing.stdout.rstrip().endswith(f"{len(list((ROOT / 'resources' / 'demo-wiki').rglob('*.md')))} pages")

    shot = tmp_path / "main.png"
    start = time.perf_counter()
    subprocess.run([str(binary), "gui", "--screenshot", str(shot)], env=env, check=True,
                   capture_output=True, text=True, timeout=SCREENSHOT_BUDGET_S * 2)
    shot_s = time.perf_counter() - start

    from PySide6.QtGui import QImage

    image = QImage(str(shot))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    step = 7
    colours = {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}
    assert len(colours) >= 50, "the main view shows real content, not a blank window"

    startup = _median_run([str(binary), "--help"], env)
    baseline = _median_run([str(Path(sys.executable).parent / "curator"), "--help"], env) \
        if shutil.which("curator", path=str(Path(sys.executable).parent)) else float("nan")
    print(f"\nPyInstaller build: {build_s:.1f} s; bundle dist/curator: {size_mb:.0f} MB; "
          f"screenshot of the demo (first launch, demo copy included): {shot_s:.2f} s")
    print(f"`curator --help` median: bundle {startup * 1000:.0f} ms, venv {baseline * 1000:.0f} ms "
          f"(ratio {startup / baseline:.2f})")
    assert build_s < BUILD_BUDGET_S
    assert size_mb < SIZE_BUDGET_MB
    assert startup < STARTUP_BUDGET_S
    assert shot_s < SCREENSHOT_BUDGET_S
