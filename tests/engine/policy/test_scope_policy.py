"""The scope policy (docs/design.md §6): write matrix, department visibility, hot reload, malformed files."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR, Actor, parse_actor
from curator.engine.policy.scope import ScopePolicy, namespace_of, parse_scope

POLICY = """
[namespaces."synced"]
mode = "read_only"
synced_from = "capability:sync"

[namespaces."locked"]
mode = "operator_only"

[namespaces."team"]
mode = "agent_allowlist"
agents = ["kiki"]

[namespaces."nobody"]
mode = "agent_allowlist"
agents = []

[namespaces."open"]
mode = "agent_writable"
"""

ACTORS = {
    "operator": OPERATOR,
    "matching capability": Actor("capability", "sync"),
    "other capability": Actor("capability", "other"),
    "agent": Actor("agent", "dudu"),
    "allow-listed agent": Actor("agent", "kiki"),
}
T, F = True, False
# namespace -> expected write permission per actor, in the order of ACTORS
MATRIX = {
    "open": (T, T, T, T, T),
    "unlisted": (T, T, T, T, T),
    "synced": (T, T, F, F, F),
    "locked": (T, F, F, F, F),
    "team": (T, F, F, F, T),
    "nobody": (T, F, F, F, F),
}


def write_scope(root: Path, text: str) -> None:
    path = root / ".scope.toml"
    path.write_text(text, encoding="utf-8")
    # Make sure the change is seen even on file systems with coarse timestamps.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def policy(tmp_path: Path) -> ScopePolicy:
    write_scope(tmp_path, POLICY)
    return ScopePolicy(tmp_path)


@pytest.mark.parametrize("namespace", sorted(MATRIX))
@pytest.mark.parametrize("who", list(ACTORS))
def test_write_matrix(policy: ScopePolicy, namespace: str, who: str) -> None:
    expected = MATRIX[namespace][list(ACTORS).index(who)]
    path = f"{namespace}/page.md"
    decision = policy.check_write(ACTORS[who], path)
    assert decision.allowed is expected, (who, namespace, decision.reason)
    if not expected:
        assert path in decision.reason and str(ACTORS[who]) in decision.reason
    # nested pages belong to the same namespace
    assert policy.can_write(ACTORS[who], f"{namespace}/deeper/more/page.md") is expected


def test_no_file_means_no_policy(tmp_path: Path) -> None:
    policy = ScopePolicy(tmp_path)
    assert not policy.exists and policy.error is None
    for actor in ACTORS.values():
        assert policy.can_write(actor, "locked/x.md")
        assert policy.can_read(actor, "anything/x.md")


def test_namespace_of() -> None:
    assert namespace_of("page.md") == ""
    assert namespace_of("wiki/a/b.md") == "wiki"
    assert namespace_of("/auto/spec/x.md") == "auto"


def test_root_namespace_and_nested_rules_only_tighten(tmp_path: Path) -> None:
    write_scope(tmp_path, """
[namespaces.""]
mode = "operator_only"
[namespaces."wiki"]
mode = "agent_writable"
[namespaces."wiki/board"]
mode = "operator_only"
[namespaces."ops/team"]
mode = "agent_writable"
[namespaces."ops"]
mode = "operator_only"
""")
    policy = ScopePolicy(tmp_path)
    agent = Actor("agent", "dudu")
    assert not policy.can_write(agent, "root-page.md")
    assert policy.can_write(agent, "wiki/page.md")
    assert not policy.can_write(agent, "wiki/board/minutes.md")
    # a narrower rule cannot loosen the wider one
    assert not policy.can_write(agent, "ops/team/page.md")


def test_allowlist_ids_are_exact(tmp_path: Path) -> None:
    write_scope(tmp_path, '[namespaces.team]\nmode = "agent_allowlist"\nagents = ["kiki", "agent:momo"]\n')
    policy = ScopePolicy(tmp_path)
    assert policy.can_write(Actor("agent", "kiki"), "team/a.md")
    assert policy.can_write(Actor("agent", "momo"), "team/a.md")
    for other in ("Kiki", "kiki2", "kik"):
        assert not policy.can_write(Actor("agent", other), "team/a.md")
    # a capability named like an allowed agent is not that agent
    assert not policy.can_write(Actor("capability", "kiki"), "team/a.md")


def test_synced_from_accepts_bare_capability_name(tmp_path: Path) -> None:
    write_scope(tmp_path, '[namespaces.hr]\nmode = "read_only"\nsynced_from = "hr-sync"\n')
    policy = ScopePolicy(tmp_path)
    assert policy.can_write(Actor("capability", "hr-sync"), "hr/a.md")
    assert not policy.can_write(Actor("agent", "hr-sync"), "hr/a.md")


# --- reads ---------------------------------------------------------------------------------

READS = """
[namespaces."hr"]
visible_to_departments = ["hr", "exec"]

[namespaces."vault"]
visible_to_departments = []

[namespaces."departments"]
visible_to_departments = ["sales", "hr"]
"""


def agent(dept: str | None) -> Actor:
    return Actor("agent", "dudu", dept)


@pytest.mark.parametrize(("path", "dept", "expected"), [
    # built-in department isolation: exact department only
    ("departments/sales/pipeline.md", "sales", True),
    ("departments/sales/pipeline.md", "hr", False),
    ("departments/sales/pipeline.md", None, False),
    ("departments/sales/pipeline.md", "Sales", False),
    ("departments/sales/pipeline.md", "sales-eu", False),
    # both checks must pass: the namespace lists sales and hr but not ops
    ("departments/ops/runbook.md", "ops", False),
    ("departments/hr/handbook.md", "hr", True),
    # visible_to_departments: listed only, exact, no department denied
    ("hr/salaries.md", "hr", True),
    ("hr/salaries.md", "exec", True),
    ("hr/salaries.md", "sales", False),
    ("hr/salaries.md", None, False),
    ("hr/salaries.md", "HR", False),
    # empty list: nobody
    ("vault/keys.md", "hr", False),
    ("vault/keys.md", None, False),
    # unlisted namespaces and the root are visible to all
    ("wiki/open.md", None, True),
    ("root.md", "sales", True),
    # a file at departments/ itself is governed by the namespace rule only
    ("departments/index.md", None, False),
    ("departments/index.md", "sales", True),
])
def test_read_visibility(tmp_path: Path, path: str, dept: str | None, expected: bool) -> None:
    write_scope(tmp_path, READS)
    policy = ScopePolicy(tmp_path)
    assert policy.can_read(agent(dept), path) is expected
    assert policy.can_read(OPERATOR, path)
    # capabilities follow the same department rules as agents
    assert policy.can_read(Actor("capability", "sync", dept), path) is expected


def test_department_isolation_is_built_in_without_any_file(tmp_path: Path) -> None:
    policy = ScopePolicy(tmp_path)
    assert policy.can_read(agent("sales"), "departments/sales/x.md")
    assert not policy.can_read(agent("hr"), "departments/sales/x.md")
    assert not policy.can_read(agent(None), "departments/sales/x.md")
    # a page at departments/ itself belongs to no department
    assert policy.can_read(agent(None), "departments/index.md")


def test_no_write_where_no_read(tmp_path: Path) -> None:
    write_scope(tmp_path, READS)
    policy = ScopePolicy(tmp_path)
    decision = policy.check_write(agent("sales"), "departments/hr/x.md")
    assert not decision and "may not see" in decision.reason
    assert policy.can_write(agent("hr"), "departments/hr/x.md")
    assert policy.can_write(OPERATOR, "vault/keys.md")


# --- hot reload and malformed files -----------------------------------------------------------

def test_hot_reload_on_write_and_read(tmp_path: Path) -> None:
    policy = ScopePolicy(tmp_path)
    dudu = Actor("agent", "dudu")
    assert policy.can_write(dudu, "locked/x.md")
    write_scope(tmp_path, '[namespaces.locked]\nmode = "operator_only"\n')
    assert not policy.can_write(dudu, "locked/x.md")
    write_scope(tmp_path, '[namespaces.locked]\nmode = "operator_only"\nvisible_to_departments = ["x"]\n')
    assert not policy.can_read(dudu, "locked/x.md")
    (tmp_path / ".scope.toml").unlink()
    assert policy.can_write(dudu, "locked/x.md") and policy.can_read(dudu, "locked/x.md")
    assert not policy.exists


def test_hot_reload_with_same_size_and_time(tmp_path: Path) -> None:
    """An atomic replace by a rename (editors, the station) is caught even when size and mtime match."""
    dudu = Actor("agent", "dudu")
    write_scope(tmp_path, '[namespaces.aaaa]\nmode = "operator_only"\n')
    policy = ScopePolicy(tmp_path)
    st = (tmp_path / ".scope.toml").stat()
    tmp = tmp_path / "new.toml"
    tmp.write_text('[namespaces.bbbb]\nmode = "operator_only"\n', encoding="utf-8")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, tmp_path / ".scope.toml")
    assert policy.can_write(dudu, "aaaa/x.md")
    assert not policy.can_write(dudu, "bbbb/x.md")


def test_malformed_file_is_fail_safe_no_policy(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_scope(tmp_path, POLICY)
    policy = ScopePolicy(tmp_path)
    dudu = Actor("agent", "dudu")
    assert not policy.can_write(dudu, "locked/x.md")
    with caplog.at_level(logging.WARNING, logger="curator.engine.policy.scope"):
        write_scope(tmp_path, '[namespaces.locked\nmode = "operator_only"\n')
        assert policy.can_write(dudu, "locked/x.md")  # no policy: writable again
    assert policy.exists and policy.error is not None and "does not parse" in policy.error
    assert any("no scope policy" in r.getMessage() for r in caplog.records)
    summary = policy.summary()
    assert summary["error"] == policy.error and summary["in_force"] is False
    # department isolation does not depend on the file
    assert not policy.can_read(dudu, "departments/sales/x.md")
    # a fixed file is picked up again
    write_scope(tmp_path, '[namespaces.locked]\nmode = "operator_only"\n')
    assert policy.error is None or not policy.can_write(dudu, "locked/x.md")
    assert not policy.can_write(dudu, "locked/x.md") and policy.error is None


@pytest.mark.parametrize("bad", [b"\xff\xfe not utf-8", b"namespaces = 3\n"])
def test_unusable_files_are_errors(tmp_path: Path, bad: bytes) -> None:
    (tmp_path / ".scope.toml").write_bytes(bad)
    policy = ScopePolicy(tmp_path)
    assert policy.error
    assert policy.can_write(Actor("agent", "a"), "x/y.md")


def test_nonsense_rules_are_read_strictly_with_warnings() -> None:
    parsed = parse_scope("""
[namespaces.a]
mode = "read_only"
[namespaces.b]
mode = "everyone"
[namespaces.c]
mode = "agent_allowlist"
agents = "dudu"
[namespaces.d]
visible_to_departments = "sales"
[namespaces.e]
mode = "agent_allowlist"
""")
    assert parsed.error is None
    assert len(parsed.warnings) == 5
    rules = parsed.rules
    dudu = Actor("agent", "dudu", "sales")
    assert not rules["a"].allows_write(dudu) and not rules["a"].allows_write(Actor("capability", "x"))
    assert rules["b"].mode == "operator_only"
    assert not rules["c"].allows_write(dudu)
    assert not rules["d"].allows_read(dudu)
    assert not rules["e"].allows_write(dudu)


def test_summary_lists_configured_and_present_namespaces(policy: ScopePolicy) -> None:
    summary = policy.summary(["wiki", "open"])
    by_ns = {row["namespace"]: row for row in summary["namespaces"]}
    assert by_ns["synced"]["mode"] == "read_only"
    assert by_ns["synced"]["synced_from"] == "capability:sync"
    assert by_ns["team"]["agents"] == ["kiki"]
    assert by_ns["wiki"] == {"namespace": "wiki", "mode": "agent_writable", "agents": [], "synced_from": None,
                             "visible_to_departments": None, "review": False, "configured": False}
    assert by_ns["open"]["configured"] is True
    assert summary["exists"] and summary["error"] is None and summary["in_force"]


def test_actor_department_from_cli_parsing() -> None:
    a = parse_actor("agent:dudu", "sales")
    assert a.department == "sales"
    assert parse_actor("agent:dudu", "  ").department is None


def test_policy_summary_counts_the_pages_of_each_row(tmp_path: Path) -> None:
    """Every row's page count (and an agent's visible count) is that of the pages at the root
    for "", else of the pages under the folder the row names, at any depth: a configured nested
    namespace, a department, one holding no page."""
    from curator.engine.policy.scope import policy_summary
    from curator.engine.wiki import Wiki
    from tests.corpus import write_pages

    paths = ["index.md", "log.md", "wiki/a.md", "wiki/board/minutes.md", "wiki/board/old/b.md",
             "wikiboard.md", "wiki-x/c.md", "ops/team/d.md", "ops/e.md", "departments/hr/f.md",
             "departments/hr/deep/g.md", "departments/sales/h.md", "departments/i.md"]
    write_pages(tmp_path, {p: f"# {p}\n" for p in paths})
    write_scope(tmp_path, '[namespaces."wiki/board"]\nmode = "operator_only"\n'
                          '[namespaces."ops/team"]\nmode = "agent_writable"\n'
                          '[namespaces."empty/one"]\nmode = "operator_only"\n')
    wiki = Wiki(tmp_path)
    agent = Actor("agent", "dudu", department="hr")
    for actor in (None, agent):
        rows = {r["namespace"]: r for r in policy_summary(wiki, actor)["namespaces"]}
        expected = {"": 3, "wiki": 3, "wiki/board": 2, "wiki-x": 1, "ops": 2, "ops/team": 1,
                    "departments": 4, "departments/hr": 2, "departments/sales": 1, "empty/one": 0}
        assert {ns: rows[ns]["pages"] for ns in expected} == expected
        for ns, row in rows.items():
            under = [p for p in paths if ("/" not in p if ns == "" else p.startswith(ns + "/"))]
            assert row["pages"] == len(under), ns
            if actor is not None:
                assert row["visible_pages"] == sum(wiki.visible(actor, p) for p in under), ns
