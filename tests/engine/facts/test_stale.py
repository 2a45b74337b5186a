"""The stale queue (issue 41, docs/design.md §15): which facts and pages are due, verify and
retire as one commit each, the operator's only, hidden pages never shown, and expired pages left
out of the agents' context with a notice."""

from __future__ import annotations

import datetime as _dt
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.engine.facts.stale import StaleFact, retire, stale_facts, verify
from curator.engine.policy.actor import OPERATOR, parse_actor
from curator.engine.policy.scope import parse_scope
from curator.engine.read.agent_context import SKIP_EXPIRED, build_context
from curator.engine.wiki import Wiki
from curator.engine.write.actions import git_of
from curator.engine.write.bootstrap import init_wiki
from curator.mcp_server import AgentDoor

TODAY = _dt.date(2026, 6, 1)
AGENT = parse_actor("agent:bot")

SCOPE = """
[namespaces."ops"]
stale_after = "90d"

[namespaces."hr"]
visible_to_departments = ["hr"]
"""

PAGES = {
    "wiki/today.md": "---\ntitle: Today\nlayer: context\n---\n# Today\n\n## Updates\n\n"
                     "- The billing queue is paused for maintenance (added 2026-01-02)\n"
                     "- The new office opens on the third floor (added 2026-05-20)\n",
    "wiki/policy.md": "---\ntitle: Refund policy\nlayer: core\nvalid_until: 2026-03-01\n---\n"
                      "Refunds need two approvals from finance.\n",
    "wiki/rules.md": "---\ntitle: Rules\nlayer: core\n---\nAlways answer in plain words.\n",
    "ops/runbook.md": "---\ntitle: Runbook\n---\n- Restart the worker with the blue button (added 2026-01-10)\n"
                      "- Rotate the keys every quarter please (added 2026-04-01)\n",
    "wiki/history.md": "---\ntitle: History\n---\n- The company was founded in a garage (added 2019-03-04)\n",
    "hr/salaries.md": "---\ntitle: Salaries\nlayer: context\n---\n- Salary bands were raised last winter (added 2026-01-05)\n",
}


def commit_all(root: Path, message: str = "seed") -> None:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], cwd=root, check=True)


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, check=True,
                              capture_output=True, text=True).stdout)


def last_message(root: Path) -> str:
    return subprocess.run(["git", "log", "-1", "--format=%B"], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def wiki(tmp_path: Path) -> Iterator[Wiki]:
    root = tmp_path / "w"
    init_wiki(root)
    (root / ".scope.toml").write_text(SCOPE, encoding="utf-8")
    for rel, text in PAGES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    commit_all(root)
    w = Wiki(root)
    yield w
    w.close()


def by_path(entries: list[StaleFact]) -> dict[str, list[StaleFact]]:
    out: dict[str, list[StaleFact]] = {}
    for e in entries:
        out.setdefault(e.path, []).append(e)
    return out


def test_the_queue_holds_old_context_facts_expired_pages_and_namespace_rules(wiki: Wiki) -> None:
    found = by_path(stale_facts(wiki, OPERATOR, TODAY))
    # Context layer, 30 days by default: January's fact is due, May's is not.
    [old] = found["wiki/today.md"]
    assert old.text == "The billing queue is paused for maintenance"
    assert old.due == _dt.date(2026, 2, 1) and old.line == 9
    assert old.why == "context layer: added 2026-01-02, older than 30 days"
    # valid_until passed: one entry for the page.
    [page] = found["wiki/policy.md"]
    assert page.why == "page valid_until 2026-03-01" and page.due == _dt.date(2026, 3, 1)
    # ops/ has stale_after = 90d whatever its layer: January is due, April is not.
    [ops] = found["ops/runbook.md"]
    assert ops.text.startswith("Restart the worker") and "namespace 'ops'" in ops.why
    assert ops.due == _dt.date(2026, 4, 10)
    # A deep page with no rule never goes stale, however old; a core page without valid_until neither.
    assert "wiki/history.md" not in found and "wiki/rules.md" not in found
    assert "hr/salaries.md" in found  # the operator sees every page
    dues = [e.due for e in stale_facts(wiki, OPERATOR, TODAY)]
    assert dues == sorted(dues)


def test_an_agent_never_sees_a_hidden_pages_facts(wiki: Wiki) -> None:
    seen = {e.path for e in stale_facts(wiki, AGENT, TODAY)}
    assert "hr/salaries.md" not in seen and "wiki/today.md" in seen
    hr = parse_actor("agent:bot", "hr")
    assert "hr/salaries.md" in {e.path for e in stale_facts(wiki, hr, TODAY)}


def test_a_fact_without_a_stamp_counts_from_its_pages_last_commit(wiki: Wiki) -> None:
    root = wiki.root
    (root / "wiki/note.md").write_text("---\nlayer: context\n---\nThe printer on floor two is broken.\n", "utf-8")
    commit_all(root, "note")
    wiki.refresh()
    committed = _dt.datetime.fromtimestamp(git_of(wiki).last_changed()["wiki/note.md"], _dt.UTC).date()
    assert not [e for e in stale_facts(wiki, OPERATOR, committed + _dt.timedelta(days=30)) if e.path == "wiki/note.md"]
    [late] = [e for e in stale_facts(wiki, OPERATOR, committed + _dt.timedelta(days=31)) if e.path == "wiki/note.md"]
    assert late.why == f"context layer: page last changed {committed.isoformat()}, older than 30 days"
    # One git log for the whole wiki, kept until HEAD moves.
    assert git_of(wiki).last_changed() is git_of(wiki).last_changed()


def test_verify_takes_the_fact_out_of_the_queue_in_one_commit(wiki: Wiki) -> None:
    root = wiki.root
    [old] = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "wiki/today.md"]
    before = commits(root)
    result = verify(wiki, OPERATOR, old.id, TODAY)
    assert result.ok, result.message
    assert commits(root) == before + 1 and result.changed == ["wiki/today.md"]
    text = (root / "wiki/today.md").read_text("utf-8")
    assert "- The billing queue is paused for maintenance (verified 2026-06-01) (added 2026-01-02)\n" in text
    assert old.id not in {e.id for e in stale_facts(wiki, OPERATOR, TODAY)}
    # It comes back 30 days after the verification, under the same id.
    [again] = [e for e in stale_facts(wiki, OPERATOR, _dt.date(2026, 7, 2)) if e.text.startswith("The billing")]
    assert again.id == old.id and again.why == "context layer: verified 2026-06-01, older than 30 days"


def test_verify_of_an_expired_page_sets_verified_and_lets_agents_have_it_again(wiki: Wiki) -> None:
    [page] = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "wiki/policy.md"]
    assert "Refund policy" not in build_context(wiki, AGENT, today=TODAY).text
    result = verify(wiki, OPERATOR, page.id, TODAY)
    assert result.ok, result.message
    assert "verified: 2026-06-01" in (wiki.root / "wiki/policy.md").read_text("utf-8")
    assert page.id not in {e.id for e in stale_facts(wiki, OPERATOR, TODAY)}
    assert "Refund policy" in build_context(wiki, AGENT, today=TODAY).text


def test_retire_removes_the_fact_in_one_commit_with_the_reason(wiki: Wiki) -> None:
    root = wiki.root
    [ops] = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "ops/runbook.md"]
    before = commits(root)
    result = retire(wiki, OPERATOR, ops.id, "the worker restarts itself since May", TODAY)
    assert result.ok, result.message
    assert commits(root) == before + 1
    assert "the worker restarts itself since May" in last_message(root)
    text = (root / "ops/runbook.md").read_text("utf-8")
    assert "Restart the worker" not in text and "- Rotate the keys every quarter please (added 2026-04-01)\n" in text
    assert ops.id not in {e.id for e in stale_facts(wiki, OPERATOR, TODAY)}


def test_retire_needs_a_reason_and_a_known_id(wiki: Wiki) -> None:
    [ops] = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "ops/runbook.md"]
    assert retire(wiki, OPERATOR, ops.id, "  ", TODAY).status == "invalid"
    missing = verify(wiki, OPERATOR, "0123456789abcdef", TODAY)
    assert missing.status == "invalid" and "no stale fact" in missing.message


def test_an_agent_may_not_verify_or_retire(wiki: Wiki) -> None:
    root = wiki.root
    [old] = [e for e in stale_facts(wiki, AGENT, TODAY) if e.path == "wiki/today.md"]
    before, text = commits(root), (root / "wiki/today.md").read_text("utf-8")
    assert verify(wiki, AGENT, old.id, TODAY).status == "denied"
    assert retire(wiki, AGENT, old.id, "gone", TODAY).status == "denied"
    assert commits(root) == before and (root / "wiki/today.md").read_text("utf-8") == text


def test_expired_pages_are_left_out_of_the_agents_context_with_a_notice(wiki: Wiki) -> None:
    result = build_context(wiki, AGENT, today=TODAY)
    assert "Always answer in plain words." in result.text and "Refunds need two approvals" not in result.text
    assert [(p.path, p.reason) for p in result.skipped if p.reason == SKIP_EXPIRED] == [("wiki/policy.md", SKIP_EXPIRED)]
    assert result.notice.startswith("[1 page was left out: past valid_until")
    assert build_context(wiki, AGENT, today=_dt.date(2026, 3, 1)).notice == ""  # valid through its day
    door = AgentDoor(wiki, AGENT)
    answer = door.context()  # today's date: 2026-03-01 has passed
    assert "Refunds need two approvals" not in answer
    assert answer.splitlines()[-1] == result.notice


def test_bad_durations_are_warnings_and_the_defaults_stay(wiki: Wiki) -> None:
    parsed = parse_scope('[freshness]\ncontext = "soon"\ncore = "12w"\nplanet = "1y"\n'
                         '[namespaces."ops"]\nstale_after = 90\n')
    assert parsed.error is None
    assert parsed.freshness == {"context": 30, "core": 84}
    assert any("[freshness]: context: 'soon' is not a duration" in w for w in parsed.warnings)
    assert any("unknown layer 'planet'" in w for w in parsed.warnings)
    assert any('[namespaces."ops"]: stale_after: 90 is not a duration' in w for w in parsed.warnings)
    assert parse_scope('[freshness]\ncontext = "never"\n').freshness == {"context": None}
    assert parse_scope('[freshness]\ndeep = "6m"\n[namespaces."a"]\nstale_after = "1y"\n').rules["a"].stale_after == 365
    (wiki.root / ".scope.toml").write_text('[freshness]\ncontext = "a while"\n', encoding="utf-8")
    found = stale_facts(wiki, OPERATOR, TODAY)  # no crash; the default 30 days stay
    assert any(e.path == "wiki/today.md" for e in found) and wiki.scope.warnings


def test_retire_of_an_expired_page_archives_it_in_one_commit(wiki: Wiki) -> None:
    root = wiki.root
    [page] = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "wiki/policy.md"]
    before = commits(root)
    result = retire(wiki, OPERATOR, page.id, "finance rewrote the policy", TODAY)
    assert result.ok, result.message
    assert commits(root) == before + 1 and "finance rewrote the policy" in last_message(root)
    assert not (root / "wiki/policy.md").exists() and (root / "_archive/wiki/policy.md").is_file()
    assert not [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path.endswith("policy.md")]


def test_the_same_words_twice_on_a_page_get_two_ids_and_verify_stamps_the_right_one(wiki: Wiki) -> None:
    root = wiki.root
    twice = "- The standup moves to ten (added 2026-01-03)\n"
    (root / "wiki/team.md").write_text(f"---\nlayer: context\n---\n{twice}\n## Later\n\n{twice}", "utf-8")
    commit_all(root, "team")
    wiki.refresh()
    entries = [e for e in stale_facts(wiki, OPERATOR, TODAY) if e.path == "wiki/team.md"]
    assert [e.line for e in entries] == [4, 8] and len({e.id for e in entries}) == 2
    assert verify(wiki, OPERATOR, entries[1].id, TODAY).ok
    lines = (root / "wiki/team.md").read_text("utf-8").splitlines()
    assert lines[3] == twice.strip() and "(verified 2026-06-01)" in lines[7]
