"""Curating auto-filed pages (docs/design.md §10): list, confirm, share across two repositories, remove."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.corpus.frontmatter import load, split
from curator.engine.filing.autofile import file_doc
from curator.engine.filing.curation import FAULT_ENV, FAULT_EXIT, confirm, list_auto, remove, share
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.wiki import Wiki
from curator.engine.write.actions import recover_pending
from curator.engine.write.bootstrap import init_wiki
from tests.engine.filing.test_auto_grading import SOP, SPEC

DUDU = Actor("agent", "dudu", "ops")
PAGE = "auto/sop/incident-response-sop.md"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def meta(root: Path, path: str) -> dict:
    return load(split((root / path).read_text("utf-8")).raw or "")[0]


def clean(root: Path) -> bool:
    return git(root, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    init_wiki(tmp_path / "agents" / "dudu" / "wiki")
    init_wiki(tmp_path / "shared" / "wiki")
    w = Wiki(tmp_path / "agents" / "dudu" / "wiki")
    assert file_doc(w, SOP, title="Incident response SOP", actor=DUDU, source="chat").status == "filed"
    assert file_doc(w, SPEC, title="Export spec", actor=DUDU).status == "filed"
    w.close()
    return tmp_path


@pytest.fixture
def wiki(home: Path) -> Wiki:
    w = Wiki(home / "agents" / "dudu" / "wiki")
    yield w
    w.close()


@pytest.fixture
def shared(home: Path) -> Wiki:
    w = Wiki(home / "shared" / "wiki")
    yield w
    w.close()


def test_list(wiki: Wiki) -> None:
    rows = [e.to_json() for e in list_auto(wiki)]
    assert [r["path"] for r in rows] == ["auto/sop/incident-response-sop.md", "auto/spec/export-spec.md"]
    r = rows[0]
    assert (r["type"], r["title"], r["author"], r["trust"], r["revisions"], r["shared"]) == (
        "sop", "Incident response SOP", "auto-distill", 0.3, 1, False)
    assert r["score"] >= 65 and r["filed_by"] == "agent:dudu"
    # visibility applies: an agent outside the policy's departments sees none of them
    (wiki.root / ".scope.toml").write_text('[namespaces.auto]\nvisible_to_departments = ["ops"]\n', "utf-8")
    assert list_auto(wiki, Actor("agent", "kiki", "sales")) == []
    assert len(list_auto(wiki, DUDU)) == 2


def test_confirm(wiki: Wiki) -> None:
    n = commits(wiki.root)
    r = confirm(wiki, "incident-response-sop", actor=OPERATOR, layer="core")
    assert r.status == "confirmed" and r.data["page"] == "incident-response-sop.md"
    assert commits(wiki.root) == n + 1 and clean(wiki.root)
    assert git(wiki.root, "log", "-1", "--format=%s") == f"auto_confirm: {PAGE}"
    assert not (wiki.root / PAGE).exists()
    m = meta(wiki.root, "incident-response-sop.md")
    assert (m["trust"], m["source_type"], m["author"], m["layer"]) == (0.8, "user_statement", "operator", "core")
    assert m["tags"] == ["sop", "curated"]
    assert "## Revision log" in (wiki.root / "incident-response-sop.md").read_text("utf-8")
    assert [e.path for e in list_auto(wiki)] == ["auto/spec/export-spec.md"]


def test_confirm_into_wiki_folder_and_chosen_folder(wiki: Wiki) -> None:
    (wiki.root / "wiki").mkdir()
    assert confirm(wiki, PAGE, actor=OPERATOR).data["page"] == "wiki/incident-response-sop.md"
    r = confirm(wiki, "auto/spec/export-spec.md", actor=OPERATOR, folder="specs/", trust=0.9)
    assert r.data["page"] == "specs/export-spec.md" and meta(wiki.root, "specs/export-spec.md")["trust"] == 0.9
    assert meta(wiki.root, "wiki/incident-response-sop.md")["layer"] == "context"


def test_confirm_errors(wiki: Wiki) -> None:
    n = commits(wiki.root)
    assert confirm(wiki, PAGE, actor=DUDU).status == "denied"
    (wiki.root / "incident-response-sop.md").write_text("# taken\n", "utf-8")
    assert confirm(wiki, PAGE, actor=OPERATOR).status == "invalid"
    assert confirm(wiki, PAGE, actor=OPERATOR, folder="auto/x").status == "invalid"
    assert confirm(wiki, "no-such-page", actor=OPERATOR).status == "invalid"
    assert commits(wiki.root) == n and (wiki.root / PAGE).exists()


def test_remove(wiki: Wiki) -> None:
    before = (wiki.root / PAGE).read_bytes()
    n = commits(wiki.root)
    r = remove(wiki, PAGE, actor=OPERATOR)
    assert r.status == "removed" and r.data["page"] == f"_archive/{PAGE}"
    assert commits(wiki.root) == n + 1 and clean(wiki.root)
    assert (wiki.root / "_archive" / PAGE).read_bytes() == before and not (wiki.root / PAGE).exists()
    assert remove(wiki, "auto/spec/export-spec.md", actor=DUDU).status == "denied"


def test_share_one_commit_per_repository(wiki: Wiki, shared: Wiki) -> None:
    n_src, n_sh = commits(wiki.root), commits(shared.root)
    original = (wiki.root / PAGE).read_text("utf-8")
    r = share(wiki, shared, PAGE, actor=OPERATOR)
    target = "sources/dudu--incident-response-sop.md"
    assert r.status == "shared" and r.data["page"] == target and r.data["shared_commit"] and r.commit
    assert (commits(wiki.root), commits(shared.root)) == (n_src + 1, n_sh + 1)
    assert clean(wiki.root) and clean(shared.root)
    copy = (shared.root / target).read_text("utf-8")
    assert meta(shared.root, target)["shared_from"] == f"agent:dudu:{PAGE}"
    assert split(copy).body == split(original).body
    assert meta(wiki.root, PAGE)["shared_to"] == target
    assert list_auto(wiki)[0].shared
    # sharing again changes nothing anywhere
    again = share(wiki, shared, PAGE, actor=OPERATOR)
    assert again.status == "shared" and again.commit is None and again.data["shared_commit"] is None
    assert (commits(wiki.root), commits(shared.root)) == (n_src + 1, n_sh + 1)


def test_share_to_a_namespace_and_department_rules(wiki: Wiki, shared: Wiki) -> None:
    r = share(wiki, shared, PAGE, actor=OPERATOR, namespace="departments/sales")
    assert r.status == "denied" and "departments/sales" in r.message
    r = share(wiki, shared, PAGE, actor=OPERATOR, namespace="departments/ops")
    assert r.status == "shared" and r.data["page"] == "departments/ops/dudu--incident-response-sop.md"


def test_share_honours_the_shared_policy(wiki: Wiki, shared: Wiki) -> None:
    n_src, n_sh = commits(wiki.root), commits(shared.root)
    (shared.root / ".scope.toml").write_text('[namespaces.sources]\nmode = "operator_only"\n', "utf-8")
    r = share(wiki, shared, PAGE, actor=OPERATOR)
    assert r.status == "denied" and "operator_only" in r.message
    (shared.root / ".scope.toml").write_text('[namespaces.sources]\nvisible_to_departments = ["hr"]\n', "utf-8")
    assert share(wiki, shared, PAGE, actor=OPERATOR).status == "denied"
    assert (commits(wiki.root), commits(shared.root)) == (n_src, n_sh)
    assert "shared_to" not in meta(wiki.root, PAGE)
    # a shared wiki with a malformed policy is fail-safe: no policy, sharing works
    (shared.root / ".scope.toml").write_text('[namespaces.sources\n', "utf-8")
    assert share(wiki, shared, PAGE, actor=OPERATOR).status == "shared"


def test_share_runs_the_secret_scan(wiki: Wiki, shared: Wiki) -> None:
    p = wiki.root / PAGE
    p.write_text(p.read_text("utf-8") + "\npassword = Hunter2024!\n", "utf-8")
    r = share(wiki, shared, PAGE, actor=OPERATOR)
    assert r.status == "blocked" and "secret" in r.message
    assert not (shared.root / "sources").exists()


def test_share_only_auto_pages_and_only_by_the_operator(wiki: Wiki, shared: Wiki) -> None:
    assert share(wiki, shared, PAGE, actor=DUDU).status == "denied"
    confirm(wiki, "auto/spec/export-spec.md", actor=OPERATOR)
    assert share(wiki, shared, "export-spec.md", actor=OPERATOR).status == "invalid"


def test_cli_auto_commands(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = ["--wiki", str(home / "agents" / "dudu" / "wiki")]
    assert main([*w, "auto", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"path", "type", "title", "author", "trust", "score", "revisions", "shared"} <= set(rows[0])
    assert main([*w, "auto", "share", PAGE, "--json"]) == 0  # finds shared/wiki of the home
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "shared" and (home / "shared" / "wiki" / out["page"]).exists()
    other = home / "elsewhere"
    init_wiki(other)
    assert main([*w, "--shared", str(other), "auto", "share", "auto/spec/export-spec.md", "--namespace",
                 "imported", "--json"]) == 0
    assert (other / "imported" / "dudu--export-spec.md").exists()
    capsys.readouterr()
    assert main([*w, "auto", "confirm", "auto/spec/export-spec.md", "--to", "specs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["page"] == "specs/export-spec.md"
    assert main([*w, "auto", "remove", PAGE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["page"] == f"_archive/{PAGE}"
    assert main([*w, "--as", "agent:dudu", "auto", "remove", "specs/export-spec.md", "--json"]) == 1


def test_cli_scope(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = home / "agents" / "dudu" / "wiki"
    (root / ".scope.toml").write_text('[namespaces.auto]\nmode = "agent_allowlist"\nagents = ["kiki"]\n', "utf-8")
    assert main(["--wiki", str(root), "--as", "agent:dudu", "scope", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    auto = next(r for r in out["namespaces"] if r["namespace"] == "auto")
    assert (auto["mode"], auto["agents"], auto["pages"], auto["can_write"]) == ("agent_allowlist", ["kiki"], 2, False)
    assert out["error"] is None
    (root / ".scope.toml").write_text("[[[", "utf-8")
    assert main(["--wiki", str(root), "scope", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "does not parse" in out["error"] and out["in_force"] is False
    assert main(["--wiki", str(root), "scope"]) == 0
    assert "ERROR" in capsys.readouterr().out


# --- killed between the commits ----------------------------------------------------------------

def run_cli(home: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop(FAULT_ENV, None)
    if fault:
        env[FAULT_ENV] = fault
    return subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(home / "agents" / "dudu" / "wiki"),
                           *args], capture_output=True, text=True, env=env, timeout=60)


def test_share_killed_between_the_two_commits_leaves_a_duplicate_never_a_loss(home: Path) -> None:
    src, sh = home / "agents" / "dudu" / "wiki", home / "shared" / "wiki"
    n_src, n_sh = commits(src), commits(sh)
    original = (src / PAGE).read_bytes()
    proc = run_cli(home, "auto", "share", PAGE, "--json", fault="auto_share")
    assert proc.returncode == FAULT_EXIT, proc.stderr
    target = "sources/dudu--incident-response-sop.md"
    # the copy is committed in the shared wiki; the original is untouched and intact
    assert commits(sh) == n_sh + 1 and clean(sh) and (sh / target).exists()
    assert commits(src) == n_src and clean(src) and (src / PAGE).read_bytes() == original
    # sharing again completes: no second copy commit, one commit marking the original
    proc = run_cli(home, "auto", "share", PAGE, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "shared"
    assert commits(sh) == n_sh + 1 and commits(src) == n_src + 1
    assert meta(src, PAGE)["shared_to"] == target and clean(src)


@pytest.mark.parametrize(("command", "fault", "new_path"), [
    (["auto", "confirm", PAGE], "auto_confirm", "incident-response-sop.md"),
    (["auto", "remove", PAGE], "auto_remove", f"_archive/{PAGE}"),
])
def test_confirm_and_remove_killed_before_the_commit_lose_nothing(home: Path, command: list[str], fault: str,
                                                                  new_path: str) -> None:
    src = home / "agents" / "dudu" / "wiki"
    body = split((src / PAGE).read_text("utf-8")).body
    n = commits(src)
    proc = run_cli(home, *command, "--json", fault=fault)
    assert proc.returncode == FAULT_EXIT, proc.stderr
    assert commits(src) == n
    assert split((src / new_path).read_text("utf-8")).body == body  # the content is on disk
    # the next action (here: recovery on its own) rolls the half-applied action back whole
    w = Wiki(src)
    try:
        result = recover_pending(w)
    finally:
        w.close()
    assert result is not None and result.status == "rolled_back"
    assert commits(src) == n and clean(src)
    assert split((src / PAGE).read_text("utf-8")).body == body and not (src / new_path).exists()
