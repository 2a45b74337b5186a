"""Hardening, confidentiality (issue 14): routing with the writer's visibility, the wiki's own
configuration operator-only on every mutation path, and no hidden path leaking to an agent, each
tested as a class through the CLI and, for the agent paths, through a real MCP stdio client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from curator.engine.write.bootstrap import init_wiki
from tests.mcp.test_mcp_server import call, run

IDENT = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
SCOPE = '[namespaces.hr]\nvisible_to_departments = ["hr"]\n'
PUBLIC = {
    "wiki/welcome.md": "# Welcome\n\nStart here. See [[handbook]], [[Payroll Handbook]], [[Staff Rules]], "
                       "[[salaries]], [[nowhere]] and [[open-notes]].\n",
    "wiki/open-notes.md": "---\ntitle: Open notes\n---\n# Open notes\n\nBack to [[welcome]].\n",
    "wiki/payments.md": "# Payments\n\nHow we take money. [[welcome]]\n\n## Updates\n\n- Cards settle in two days\n",
}
HIDDEN = {
    "hr/handbook.md": "---\ntitle: Staff Rules\naliases: [Payroll Handbook]\n---\n# Staff Rules\n\n"
                      "Holidays. See [[payments]] and [[welcome]].\n",
    "departments/hr/salaries.md": "# Salaries\n\nThe band table. [[welcome]]\n",
}
ENG = ["--as", "agent:eng", "--department", "engineering"]
HR = ["--as", "agent:kiki", "--department", "hr"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENT, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


def make(root: Path, hidden: bool = True) -> Path:
    init_wiki(root)
    (root / ".scope.toml").write_text(SCOPE, encoding="utf-8")
    for rel, text in {**PUBLIC, **(HIDDEN if hidden else {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    commit_all(root, "seed")
    return root


def cli(root: Path, *args: str) -> tuple[int, Any, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, timeout=120)
    out: Any = proc.stdout
    if "--json" in args and proc.stdout.strip():
        out = json.loads(proc.stdout)
    return proc.returncode, out, proc.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make(tmp_path / "w")


def no_hidden_name(text: str) -> None:
    for rel in HIDDEN:
        assert rel not in text, text
    assert "handbook.md" not in text and "hr/" not in text, text


# --- 1. routing with the writer's own visibility ------------------------------------------------

def test_routing_never_crosses_a_visibility_boundary(root: Path) -> None:
    head = git(root, "rev-parse", "HEAD")
    # Before: the engineering agent's `salaries` created wiki/salaries.md beside the HR page.
    rc, out, _ = cli(root, *ENG, "append", "salaries", "Engineers are paid monthly", "--json")
    assert rc == 1 and out["status"] == "denied" and "nothing written" in out["message"], out
    assert out["page"] is None and not (root / "wiki/salaries.md").exists()
    assert "departments" not in out["message"]
    rc, out, _ = cli(root, *ENG, "append", "salaries", "Engineers are paid monthly", "--create-new", "--json")
    assert rc == 1 and out["status"] == "denied" and not (root / "wiki/salaries.md").exists()
    assert git(root, "rev-parse", "HEAD") == head

    # HR and the operator reach the page they can see.
    rc, out, _ = cli(root, *HR, "append", "salaries", "Salaries rise in April", "--json")
    assert rc == 0 and out["page"] == "departments/hr/salaries.md", out

    # A same-named page with another audience: nobody's fact is routed by guess any more.
    (root / "wiki/salaries.md").write_text("# Salaries\n\nPublic notes.\n", encoding="utf-8")
    commit_all(root, "public salaries")
    head = git(root, "rev-parse", "HEAD")
    for who in ([], HR):
        rc, out, _ = cli(root, *who, "append", "salaries", "Bands are reviewed yearly", "--json")
        assert rc == 1 and out["status"] == "invalid", out
        assert "departments/hr/salaries.md" in out["message"] and "path" in out["message"]
    assert git(root, "rev-parse", "HEAD") == head
    assert "yearly" not in (root / "wiki/salaries.md").read_text("utf-8")
    # ... and the page's path picks one exactly.
    rc, out, _ = cli(root, *HR, "append", "departments/hr/salaries", "Bands are reviewed yearly", "--json")
    assert rc == 0 and out["page"] == "departments/hr/salaries.md", out
    # The engineering agent may not append to the public page of a name a hidden page holds,
    # nor reach the hidden one by its path (a hidden path is like a missing one).
    rc, out, _ = cli(root, *ENG, "append", "departments/hr/salaries", "Leak attempt here", "--json")
    assert rc != 0 or out["page"] != "departments/hr/salaries.md"
    assert "Leak attempt" not in (root / "departments/hr/salaries.md").read_text("utf-8")


def test_routing_through_mcp(root: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_append", slug="salaries", content="Engineers are paid monthly",
                               create_new=True)
        assert err and text.startswith("denied:") and "\n" not in text, text
        err, text = await call(s, "wiki_append", slug="payments", content="Refunds take five days")
        assert not err and "wiki/payments.md" in text, text

    run(root, body, agent="eng", department="engineering")
    assert not (root / "wiki/salaries.md").exists()


# --- 2. the wiki's configuration is the operator's, on every mutation path ------------------------

def test_agent_cannot_revert_away_the_policy_or_git_files(root: Path) -> None:
    init_commit = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    (root / ".scope.toml").write_text(SCOPE + '[namespaces.wiki]\nmode = "operator_only"\n', encoding="utf-8")
    scope_commit = commit_all(root, "policy: wiki is operator_only")
    head = git(root, "rev-parse", "HEAD")
    rc, out, _ = cli(root, *ENG, "append", "payments", "Agents may not write here", "--json")
    assert rc == 1 and out["status"] == "denied"

    for sha in (scope_commit, init_commit):
        rc, out, _ = cli(root, *ENG, "undo", "--commit", sha, "--json")
        assert rc == 1 and out["status"] == "denied", out
        assert "only the operator" in out["message"], out
    assert git(root, "rev-parse", "HEAD") == head
    assert (root / ".gitignore").exists() and (root / ".gitattributes").exists()
    assert "operator_only" in (root / ".scope.toml").read_text("utf-8")
    rc, out, _ = cli(root, *ENG, "append", "payments", "Agents may not write here", "--json")
    assert rc == 1 and out["status"] == "denied"  # the policy still holds

    # The decision files too: "not duplicates" is the operator's call.
    rc, out, _ = cli(root, *ENG, "dismiss", "payments", "open-notes", "--json")
    assert rc == 1 and out["status"] == "denied" and not (root / ".curator-decisions.json").exists(), out
    rc, out, _ = cli(root, "dismiss", "payments", "open-notes", "--json")
    assert rc == 0, out
    dismissal = git(root, "rev-parse", "HEAD").strip()
    rc, out, _ = cli(root, *ENG, "undo", "--commit", dismissal, "--json")
    assert rc == 1 and out["status"] == "denied" and (root / ".curator-decisions.json").exists()

    # The operator may still undo the policy change.
    rc, out, _ = cli(root, "undo", "--commit", scope_commit, "--json")
    assert rc == 0 and out["status"] == "reverted", out
    assert "operator_only" not in (root / ".scope.toml").read_text("utf-8")


def test_revert_checks_every_path_and_names_no_hidden_one(root: Path) -> None:
    rc, out, _ = cli(root, *HR, "append", "payments", "HR reimburses travel", "--json")
    assert rc == 0
    (root / "hr/handbook.md").write_text(HIDDEN["hr/handbook.md"] + "\nPayments are [[payments]].\n")
    (root / "wiki/open-notes.md").write_text(PUBLIC["wiki/open-notes.md"] + "\nMore.\n")
    mixed = commit_all(root, "edit: handbook and open notes")
    head = git(root, "rev-parse", "HEAD")
    for args in (["undo", "--commit", mixed], ["undo"]):
        rc, out, _ = cli(root, *ENG, *args, "--json")
        assert rc == 1 and out["status"] == "denied", out
        no_hidden_name(json.dumps(out))
    assert git(root, "rev-parse", "HEAD") == head
    assert "More." in (root / "wiki/open-notes.md").read_text("utf-8")  # not half-reverted


# --- 3. hidden paths never leak ---------------------------------------------------------------------

def test_history_merge_preview_and_denials_name_no_hidden_path(root: Path) -> None:
    (root / "hr/handbook.md").write_text(HIDDEN["hr/handbook.md"] + "\nSee also [[open-notes]].\n")
    commit_all(root, "wiki_append: handbook")
    rc, out, _ = cli(root, *ENG, "history", "--json")
    assert rc == 0 and out, out
    no_hidden_name(json.dumps(out))
    assert any(".gitignore" in e["paths"] for e in out)  # the commits it may see are listed
    rc, out, _ = cli(root, "history", "--json")
    assert any("hr/handbook.md" in e["paths"] for e in out)  # the operator sees everything

    # open-notes is linked from hr/handbook.md: a merge would rewrite a hidden page.
    for extra in (["--preview"], []):
        rc, out, err = cli(root, *ENG, "merge", "payments", "open-notes", *extra, "--json")
        assert rc == 1, (out, err)
        no_hidden_name(err + (json.dumps(out) if not isinstance(out, str) else out))
    assert (root / "wiki/open-notes.md").exists()
    rc, out, _ = cli(root, "merge", "payments", "open-notes", "--preview", "--json")
    assert rc == 0 and "hr/handbook.md" in out["pages_rewritten"]


def test_scope_summary_names_and_counts_no_hidden_page(root: Path) -> None:
    rc, out, _ = cli(root, *ENG, "scope", "--json")
    assert rc == 0
    rows = {r["namespace"]: r for r in out["namespaces"]}
    assert "departments/hr" not in rows and "departments" not in rows, rows
    assert rows["hr"]["pages"] == 0 and rows["hr"]["visible_pages"] == 0  # configured: listed, not counted
    assert rows["wiki"]["pages"] == rows["wiki"]["visible_pages"] == 3
    rc, out, _ = cli(root, "scope", "--json")
    rows = {r["namespace"]: r for r in out["namespaces"]}
    assert rows["departments/hr"]["pages"] == 1 and rows["hr"]["pages"] == 1  # the operator's view


def _strip(value: Any, root: Path) -> str:
    if isinstance(value, list):  # bm25 scores weigh corpus-wide statistics; the hits must match
        value = [{k: v for k, v in row.items() if k != "score"} if isinstance(row, dict) else row
                 for row in value]
    return json.dumps(value, sort_keys=True).replace(str(root), "ROOT")


def test_a_hidden_page_looks_exactly_like_a_missing_one(tmp_path: Path) -> None:
    """The existence oracle, as a class: every read answer an agent gets from a wiki holding the
    hidden pages is byte for byte the answer from the same wiki without them."""
    with_hidden = make(tmp_path / "a" / "w")
    without = make(tmp_path / "b" / "w", hidden=False)
    queries = [["neighbors", "welcome"], ["neighbors", "payments"], ["lint"], ["graph", "--format", "json"],
               ["search", "welcome", "--expand"], ["search", "holidays"], ["read", "Payroll Handbook"],
               ["read", "hr/handbook.md"], ["explain", "welcome"], ["index"]]
    for q in queries:
        a = cli(with_hidden, *ENG, *q, "--json")
        b = cli(without, *ENG, *q, "--json")
        assert a[0] == b[0], (q, a, b)
        assert _strip(a[1], with_hidden) == _strip(b[1], without), q
        assert a[2].replace(str(with_hidden), "ROOT") == b[2].replace(str(without), "ROOT"), q
    _, out, _ = cli(with_hidden, *ENG, "neighbors", "welcome", "--json")
    unresolved = {n["target"] for n in out["outgoing"] if n["path"] is None}
    assert {"handbook", "Payroll Handbook", "Staff Rules", "salaries", "nowhere"} <= unresolved, out
    _, out, _ = cli(with_hidden, "neighbors", "welcome", "--json")  # the operator's view resolves them
    assert "hr/handbook.md" in {n["path"] for n in out["outgoing"]}

    async def neighbours(s: ClientSession) -> None:
        err, text = await call(s, "files_neighbors", slug="welcome")
        assert not err
        for name in ("handbook", "Payroll Handbook", "Staff Rules", "salaries", "nowhere"):
            assert f"[[{name}]] — not yet written" in text, text
        no_hidden_name(text)
        for tool, args in (("wiki_graph", {"center": "welcome", "depth": 2}),
                           ("wiki_search", {"query": "welcome", "expand": True})):
            err, text = await call(s, tool, **args)
            assert not err
            no_hidden_name(text)

    run(with_hidden, neighbours, agent="eng", department="engineering")


def test_the_two_wikis_differ_for_the_operator(tmp_path: Path) -> None:
    # Guard for the oracle test: its equality is not that of two identical wikis.
    a, b = make(tmp_path / "a"), make(tmp_path / "b", hidden=False)
    assert _strip(cli(a, "lint", "--json")[1], a) != _strip(cli(b, "lint", "--json")[1], b)


# --- 4. namespaces match whatever the folder's case ---------------------------------------------

def test_namespace_and_department_folders_match_without_case(tmp_path: Path) -> None:
    root = tmp_path / "w"
    init_wiki(root)
    (root / ".scope.toml").write_text('[namespaces."hr"]\nvisible_to_departments = ["hr"]\n'
                                      '[namespaces."VAULT"]\nmode = "operator_only"\n', encoding="utf-8")
    pages = {"HR/payroll.md": "# Payroll\n\nThe quokka salary bands.\n",
             "Departments/Sales/pipeline.md": "# Pipeline\n\nThe quokka deal.\n",
             "vault/keys.md": "# Keys\n\nOpen to read.\n",
             "wiki/welcome.md": "# Welcome\n\n[[payroll]] [[pipeline]]\n"}
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    commit_all(root, "seed")
    rc, out, _ = cli(root, *ENG, "search", "quokka", "--json")
    assert rc == 0 and out == [], out
    for page in ("HR/payroll.md", "Departments/Sales/pipeline.md"):
        rc, _, err = cli(root, *ENG, "read", page)
        assert rc == 1 and "no page" in err, err
    rc, out, _ = cli(root, "--as", "agent:s", "--department", "Sales", "read", "Departments/Sales/pipeline.md")
    assert rc == 0 and "quokka deal" in out
    rc, out, _ = cli(root, *ENG, "append", "vault/keys", "Agents write keys here", "--json")
    assert rc == 1 and out["status"] == "denied", out
    rc, out, _ = cli(root, *HR, "search", "quokka", "--json")
    assert [h["path"] for h in out] == ["HR/payroll.md"]

    # Two folders that differ only in case: a clear lint error.
    (root / "hr").mkdir()
    (root / "hr/notes.md").write_text("# Notes\n\n[[welcome]]\n", encoding="utf-8")
    rc, out, _ = cli(root, "lint", "--json")
    case = [i for i in out if i["code"] == "folder-case"]
    assert {i["path"] for i in case} == {"HR/", "hr/"} and case[0]["severity"] == "error", out

    async def body(s: ClientSession) -> None:
        err, text = await call(s, "wiki_search", query="quokka")
        assert not err and "HR/" not in text and "Departments" not in text, text
        err, text = await call(s, "wiki_read", page_name="HR/payroll.md")
        assert err and "no page" in text, text

    run(root, body, agent="eng", department="engineering")
