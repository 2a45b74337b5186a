"""A downloaded or shared wiki's own git configuration runs nothing until the operator trusts it
(issue 45): ``core.fsmonitor``, hooks, clean/smudge filters, diff text converters, a remote's
upload-pack program and ``ext::`` URLs all ran on Curator's ordinary git calls. Each is set up as
a hostile ``.git/config`` would, every program leaves a marker file when it runs, and the wiki is
used through the CLI (open, append, history, blame, sync) and the station; no marker may appear.
Once the operator runs ``curator trust``, git runs them again (which shows the markers work)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.repo.git import Git
from tests.gui_helpers import loaded_window

ID = ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"]
HOOKS = ("reference-transaction", "post-index-change", "pre-auto-gc", "post-merge", "pre-commit",
         "post-commit", "post-checkout")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *ID, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def cli(root: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def hostile(tmp: Path) -> tuple[Path, Path]:
    """A wiki (and its bare remote) whose repository configuration names a program for every
    class; each writes a file into the returned marker folder."""
    ran = tmp / "ran"
    ran.mkdir()
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    root = tmp / "wiki"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "wiki").mkdir()
    (root / "wiki" / "payments.md").write_text("# Payments\n\n## Updates\n\n- Cards settle in two days\n")
    (root / ".gitattributes").write_text("*.md filter=evil diff=evil\n")
    (root / ".gitignore").write_text(".curator/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "seed")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    git(root, "branch", "-q", "--set-upstream-to=origin/main")
    # a second commit on the remote, so that a sync fetches (upload-pack) and merges
    other = tmp / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    (other / "wiki" / "refunds.md").write_text("# Refunds\n\n## Updates\n\n- Refunds take five days\n")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "refunds")
    git(other, "push", "-q", "origin", "main")

    def mark(name: str) -> str:
        return f"touch {ran}/{name}"

    config = {
        "core.fsmonitor": str(script(tmp, "fsmonitor", f"{mark('fsmonitor')}\nexit 1\n")),
        "filter.evil.clean": f"sh -c '{mark('clean')}; cat'",
        "filter.evil.smudge": f"sh -c '{mark('smudge')}; cat'",
        "diff.evil.textconv": str(script(tmp, "textconv", f"{mark('textconv')}\ncat \"$1\"\n")),
        "diff.external": str(script(tmp, "extdiff", f"{mark('extdiff')}\n")),
        "remote.origin.uploadpack": f"{mark('uploadpack')}; git-upload-pack",
        "remote.evil.url": f"ext::sh -c {mark('ext').replace(' ', '% ')}",
        "credential.helper": str(script(tmp, "credential", f"{mark('credential')}\n")),
    }
    for key, value in config.items():
        git(root, "config", key, value)
    for name in HOOKS:
        script(root / ".git" / "hooks", name, f"{mark('hook-' + name)}\n")
    return root, ran


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def ran_programs(ran: Path) -> list[str]:
    return sorted(os.listdir(ran))


def use_the_wiki(root: Path) -> None:
    for args in (["index"], ["append", "payments", "Refunds are paid to the card", "--json"],
                 ["history"], ["blame", "wiki/payments.md"], ["sync"], ["health"]):
        _rc, out = cli(root, *args)
        assert "Traceback" not in out, out


def test_nothing_the_configuration_names_runs_until_the_wiki_is_trusted(tmp_path: Path) -> None:
    root, ran = hostile(tmp_path)
    rc, out = cli(root, "trust", "--show", "--json")
    shown = json.loads(out)
    assert rc == 0 and shown["trusted"] is False
    listed = "\n".join(shown["programs"])
    for what in ("core.fsmonitor", "filter.evil.clean", "diff.evil.textconv", "remote.origin.uploadpack",
                 "remote.evil.url", "credential.helper", "hook post-merge", "hook reference-transaction"):
        assert what in listed, listed
    use_the_wiki(root)
    assert ran_programs(ran) == []
    assert "Refunds take five days" in (root / "wiki" / "refunds.md").read_text()  # the sync merged
    assert "Refunds are paid to the card" in git(root, "show", "HEAD~1:wiki/payments.md") \
        + git(root, "show", "HEAD:wiki/payments.md")

    # An agent cannot trust a wiki; the operator can, and then git runs what it names again.
    rc, out = cli(root, "--as", "agent:bob", "trust")
    assert rc == 1 and "only the operator" in out
    rc, out = cli(root, "trust")
    assert rc == 0 and "trusting" in out and "hook post-merge" in out, out
    rc, out = cli(root, "append", "payments", "Chargebacks take ten days", "--json")
    assert rc == 0, out
    assert {"hook-reference-transaction", "clean"} <= set(ran_programs(ran)), ran_programs(ran)
    rc, out = cli(root, "trust", "--remove")
    assert rc == 0 and Git(root).guard()  # untrusted again: the overrides are back


def test_opening_the_station_runs_nothing(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, ran = hostile(tmp_path)
    win = loaded_window(qtbot, root, tmp_path, station=True)
    win.open_page((0, "wiki/payments.md"))
    qtbot.waitUntil(lambda: "Cards settle" in win.page_view.browser.toPlainText(), timeout=15_000)
    qtbot.wait(500)  # (the provenance and history views read git in the background)
    win.close()
    assert ran_programs(ran) == []


@pytest.mark.parametrize("key", ["filter.Evil.clean", "merge.pages.driver", "diff.x.command",
                                 "remote.up.receivepack"])
def test_every_named_driver_gets_a_neutral_stand_in(tmp_path: Path, key: str) -> None:
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    git(root, "config", key, "touch /tmp/never")
    args = Git(root, trusted=False).guard()
    section, name, leaf = key.split(".")
    assert any(a.startswith(f"{section}.{name}.{leaf.lower()}=") and "touch" not in a for a in args), args
    assert Git(root, trusted=True).guard() == []


def test_the_station_says_what_an_untrusted_wiki_would_run_and_trusts_it_when_asked(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curator.engine.repo.trust import is_trusted

    root, _ran = hostile(tmp_path)
    win = loaded_window(qtbot, root, tmp_path)
    qtbot.waitUntil(lambda: win.trust_checked, timeout=15_000)
    banner = win.trust_banner
    assert banner is not None and banner.isVisibleTo(win)
    assert "Curator runs none of them" in banner.label.text() and "core.fsmonitor" in banner.toolTip()
    assert "hook post-merge" in banner.toolTip()

    def click(box, label: str) -> bool:  # type: ignore[no-untyped-def]
        next(b for b in box.buttons() if b.text() == label).click()
        return True

    win.exec_dialog = lambda box: click(box, "Cancel")
    banner.buttons["Trust this wiki…"].click()
    assert not is_trusted(root) and banner.isVisibleTo(win)
    win.exec_dialog = lambda box: click(box, "Trust")
    banner.buttons["Trust this wiki…"].click()
    assert is_trusted(root) and not banner.isVisibleTo(win)
    assert win.workspace.wiki(0).session.git.guard() == []  # this process stops overriding at once
    win.close()


def test_a_wiki_whose_configuration_names_nothing_shows_no_banner(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.gui_helpers import make_wiki

    win = loaded_window(qtbot, make_wiki(tmp_path / "plain"), tmp_path)
    qtbot.waitUntil(lambda: win.trust_checked, timeout=15_000)
    assert win.trust_banner is None or not win.trust_banner.isVisibleTo(win)
    win.close()


def test_the_station_says_a_wiki_came_with_its_own_state_folder_and_adopts_it_when_trusted(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A wiki that arrived with a ``.curator/`` folder (here: one holding an agent's token hash,
    as a downloaded wiki could): the banner says its tokens and settings are not used, and
    trusting the wiki adopts the folder for the next opening."""
    from curator.engine.corpus.state import STATE_DIR, is_ours
    from tests.gui_helpers import make_wiki

    root = make_wiki(tmp_path / "downloaded")
    shutil.rmtree(root / STATE_DIR, ignore_errors=True)
    (root / STATE_DIR).mkdir()
    (root / STATE_DIR / "agents.json").write_text(json.dumps({"agents": {}}), "utf-8")
    win = loaded_window(qtbot, root, tmp_path)
    qtbot.waitUntil(lambda: win.trust_checked, timeout=15_000)
    banner = win.trust_banner
    assert banner is not None and banner.isVisibleTo(win)
    assert ".curator folder of" in banner.label.text() and "tokens" in banner.label.text()
    assert "names programs" not in banner.label.text()  # (its git configuration names none)
    assert win.workspace.wiki(0).state_dir != root / STATE_DIR  # (not read: kept in the cache folder)

    def click(box, label: str) -> bool:  # type: ignore[no-untyped-def]
        next(b for b in box.buttons() if b.text() == label).click()
        return True

    win.exec_dialog = lambda box: click(box, "Trust")
    banner.buttons["Trust this wiki…"].click()
    assert is_ours(root / STATE_DIR) and not banner.isVisibleTo(win)
    win.close()
