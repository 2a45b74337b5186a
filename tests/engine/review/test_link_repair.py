"""Link repair (docs/design.md §12): the unresolved queue with suggestions, fix by alias or rewrite, create,
ignore (a committed decision that survives a clone), health; agents see no hidden page through
it and may fix only what the policy lets them write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from curator.engine.corpus.page import parse_page
from curator.engine.errors import PageNotFound
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.review.health import health
from curator.engine.review.link_suggest import Suggester
from curator.engine.review.linkrepair import (
    IGNORED_FILE,
    create,
    fix,
    fix_many,
    ignore,
    preview_fix,
    unresolved,
)
from curator.engine.wiki import Wiki
from curator.engine.write.actions import undo
from curator.engine.write.bootstrap import init_wiki
from tests.engine.write.test_curation_merge import commit_all, git, snapshot

AGENT = Actor("agent", "dudu", "sales")
CAMPAIGN = "---\ntitle: Nocturne Bg3 V4 Campaign\ntags: [games]\n---\n# Nocturne Bg3 V4 Campaign\n\nThe campaign.\n"
N_LINKERS = 6


def _linker(i: int) -> str:
    return (f"---\ntitle: Session {i}\n---\n# Session {i}\n\n- Played [[Nocturne Bg3 V4]] again.\n"
            f"- Notes in [[Nocturne Bg3 V4#Boss|the boss fight]].\n"
            "```\n[[Nocturne Bg3 V4]] in code is not a link\n```\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki/nocturne-bg3-v4-campaign.md").write_text(CAMPAIGN, encoding="utf-8")
    (root / "wiki/nocturne-bg2-notes.md").write_text("# Nocturne Bg2 Notes\n\nOlder game.\n", encoding="utf-8")
    for i in range(N_LINKERS):
        (root / f"wiki/session-{i}.md").write_text(_linker(i), encoding="utf-8")
    (root / "wiki/bystander.md").write_text("# Bystander\n\nLinks [[session-0]] only.\n", encoding="utf-8")
    # a hidden page (finance only) and a visible page that links to it by name
    (root / "departments/finance").mkdir(parents=True)
    (root / "departments/finance/payroll-secrets.md").write_text("# Payroll Secrets\n\nSalaries.\n",
                                                                 encoding="utf-8")
    (root / "departments/finance/payroll-secrets-2026.md").write_text("# Payroll Secrets 2026\n",
                                                                      encoding="utf-8")
    (root / "wiki/open.md").write_text("# Open\n\nSee [[payroll-secrets]] and [[Payroll Sec]].\n",
                                       encoding="utf-8")
    (root / "locked").mkdir()
    (root / "locked/rules.md").write_text("# Rules\n\nSee [[Nocturne Bg3 V4]].\n", encoding="utf-8")
    (root / ".scope.toml").write_text('[namespaces."locked"]\nmode = "operator_only"\n', encoding="utf-8")
    commit_all(root)
    return root


def _commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def _changed(root: Path) -> list[str]:
    return sorted(git(root, "show", "--name-only", "--format=", "HEAD").split())


def _target(items: list, key: str):  # type: ignore[no-untyped-def]
    return next((u for u in items if u.key == key), None)


def test_queue_lists_target_occurrences_pages_and_prefix_suggestion(root: Path) -> None:
    items = unresolved(Wiki(root))
    u = _target(items, "nocturne-bg3-v4")
    assert u is not None and items[0] is u  # most occurrences first
    assert u.target == "Nocturne Bg3 V4"
    assert u.count == 2 * N_LINKERS + 1  # the code block does not count; locked/rules.md does
    assert u.pages == sorted([*(f"wiki/session-{i}.md" for i in range(N_LINKERS)), "locked/rules.md"])
    assert u.suggestions[0].path == "wiki/nocturne-bg3-v4-campaign.md"
    assert u.suggestions[0].score > 0.8
    assert all(s.path != "wiki/session-0.md" or s.score < u.suggestions[0].score for s in u.suggestions)
    assert len(u.suggestions) <= 5


def test_suggester_finds_titles_aliases_and_names_the_target_begins() -> None:
    pages = {p: parse_page(p, t.encode())[0] for p, t in {
        "a/quarterly-budget-review.md": "# Q\n",
        "a/x1.md": "---\ntitle: Harbour Master Plan\n---\n",
        "a/x2.md": "---\naliases: [Tide Tables]\n---\n",
        "a/unrelated.md": "# Zebra\n",
    }.items()}
    s = Suggester(pages)
    assert s.suggest("Quarterly Budget")[0].path == "a/quarterly-budget-review.md"  # prefix
    assert s.suggest("Harbour Master Plan!")[0].path == "a/x1.md"  # title (punctuation folded)
    assert s.suggest("tide tables 2026")[0].path == "a/x2.md"  # an alias that begins the target
    assert s.suggest("zzz qqq") == []


def test_fix_by_alias_resolves_all_occurrences_one_file_one_commit(root: Path) -> None:
    wiki = Wiki(root)
    n = _target(unresolved(wiki), "nocturne-bg3-v4").count
    before, commits = snapshot(root), _commits(root)
    result = fix(wiki, "Nocturne Bg3 V4", "nocturne-bg3-v4-campaign", "alias")
    assert result.status == "fixed", result.message
    assert result.data["links"] == n
    assert _commits(root) == commits + 1 and _changed(root) == ["wiki/nocturne-bg3-v4-campaign.md"]
    after = snapshot(root)
    assert [p for p in after if after[p] != before.get(p)] == ["wiki/nocturne-bg3-v4-campaign.md"]
    assert "aliases: [Nocturne Bg3 V4]" in after["wiki/nocturne-bg3-v4-campaign.md"].decode()
    fresh = Wiki(root)
    assert _target(unresolved(fresh), "nocturne-bg3-v4") is None
    edges = [e for edges in fresh.links.outgoing.values() for e in edges if e.link.key == "nocturne-bg3-v4"]
    assert len(edges) == n and {e.target for e in edges} == {"wiki/nocturne-bg3-v4-campaign.md"}
    assert undo(fresh, OPERATOR).status == "reverted"
    assert snapshot(root) == before


def test_fix_by_rewrite_changes_exactly_the_linking_pages_display_text_kept(root: Path) -> None:
    wiki = Wiki(root)
    u = _target(unresolved(wiki), "nocturne-bg3-v4")
    before, commits = snapshot(root), _commits(root)
    plan = preview_fix(wiki, [("Nocturne Bg3 V4", "wiki/nocturne-bg3-v4-campaign.md")], "rewrite")
    assert snapshot(root) == before and plan.changed == u.pages
    result = fix(wiki, "Nocturne Bg3 V4", "wiki/nocturne-bg3-v4-campaign.md", "rewrite")
    assert result.status == "fixed", result.message
    assert _commits(root) == commits + 1 and _changed(root) == u.pages
    after = snapshot(root)
    assert sorted(p for p in after if after[p] != before.get(p)) == u.pages
    text = after["wiki/session-3.md"].decode()
    assert "- Played [[nocturne-bg3-v4-campaign|Nocturne Bg3 V4]] again." in text
    assert "[[nocturne-bg3-v4-campaign#Boss|the boss fight]]" in text
    assert "[[Nocturne Bg3 V4]] in code is not a link" in text  # code untouched
    assert _target(unresolved(Wiki(root)), "nocturne-bg3-v4") is None


def test_bulk_fix_is_one_commit(root: Path) -> None:
    (root / "wiki/more.md").write_text("# More\n\n[[Nocturne Bg2]] and [[Nocturne Bg3 V4]].\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    commits = _commits(root)
    pairs = [(u.target, u.suggestions[0].path) for u in unresolved(wiki)
             if u.key in ("nocturne-bg2", "nocturne-bg3-v4")]
    assert len(pairs) == 2
    result = fix_many(wiki, pairs, "alias")
    assert result.ok, result.message
    assert _commits(root) == commits + 1
    assert _changed(root) == ["wiki/nocturne-bg2-notes.md", "wiki/nocturne-bg3-v4-campaign.md"]
    keys = {u.key for u in unresolved(Wiki(root))}
    assert not keys & {"nocturne-bg2", "nocturne-bg3-v4"}


def test_create_makes_the_page_the_links_name(root: Path) -> None:
    (root / "wiki/todo.md").write_text("# Todo\n\n[[Harbour Master Plan]] and [[C++ Guide]].\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    result = create(wiki, "Harbour Master Plan")
    assert result.status == "created", result.message
    assert _changed(root) == ["wiki/harbour-master-plan.md"]
    text = (root / "wiki/harbour-master-plan.md").read_text(encoding="utf-8")
    assert "title: Harbour Master Plan" in text and "## Updates" in text
    assert create(Wiki(root), "C++ Guide").ok
    keys = {u.key for u in unresolved(Wiki(root))}
    assert "harbour-master-plan" not in keys and "c++-guide" not in keys
    again = create(Wiki(root), "Harbour Master Plan")
    assert again.status == "invalid"


def test_ignored_target_stays_hidden_after_a_fresh_clone(root: Path, tmp_path: Path) -> None:
    wiki = Wiki(root)
    result = ignore(wiki, "Nocturne Bg3 V4")
    assert result.status == "ignored", result.message
    assert _changed(root) == [IGNORED_FILE]
    assert git(root, "status", "--porcelain").strip() == ""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    assert not (clone / ".curator").exists()
    items = unresolved(Wiki(clone))
    assert _target(items, "nocturne-bg3-v4") is None and items  # other targets still listed
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(clone), "links", "unresolved",
                          "--json"], capture_output=True, text=True, check=True)
    assert "nocturne-bg3-v4" not in {u["key"] for u in json.loads(out.stdout)}
    assert ignore(Wiki(clone), "Nocturne Bg3 V4").status == "unchanged"


def test_agent_sees_a_link_to_a_hidden_page_as_missing_and_no_hidden_suggestion(root: Path) -> None:
    wiki = Wiki(root)
    op = {u.key for u in unresolved(wiki, OPERATOR)}
    assert "payroll-secrets" not in op  # resolves for the operator
    items = unresolved(wiki, AGENT)
    hidden = _target(items, "payroll-secrets")
    assert hidden is not None and hidden.pages == ["wiki/open.md"]
    assert hidden.count == 1
    # looks exactly like a link to a missing page: no hidden page suggested, for any target
    for u in items:
        assert all(not s.path.startswith("departments/finance/") for s in u.suggestions), u
        assert all(not p.startswith("departments/finance/") for p in u.pages)
    # the operator's suggestions do include them (so the filter is what hides them)
    op_items = unresolved(wiki, OPERATOR)
    assert any(s.path.startswith("departments/finance/") for u in op_items for s in u.suggestions)
    # an agent cannot point a fix at a hidden page, nor learn it exists from the refusal
    with pytest.raises(PageNotFound) as err:
        fix(wiki, "Payroll Sec", "departments/finance/payroll-secrets-2026.md", "alias", AGENT)
    with pytest.raises(PageNotFound) as missing:
        fix(wiki, "Payroll Sec", "departments/finance/payroll-secrets-2027.md", "alias", AGENT)
    assert str(err.value).replace("2026", "2027") == str(missing.value)


def test_agent_fix_create_ignore_only_where_the_policy_lets_it_write_everything(root: Path) -> None:
    wiki = Wiki(root)
    commits = _commits(root)
    # rewrite would touch locked/rules.md (operator_only): denied, nothing written
    before = snapshot(root)
    denied = fix(wiki, "Nocturne Bg3 V4", "nocturne-bg3-v4-campaign", "rewrite", AGENT)
    assert denied.status == "denied", denied.message
    assert snapshot(root) == before and _commits(root) == commits
    # ignore writes a decision file: the operator's alone
    assert ignore(wiki, "Nocturne Bg3 V4", AGENT).status == "denied"
    # an alias on a page it may write is allowed
    ok = fix(wiki, "Nocturne Bg3 V4", "nocturne-bg3-v4-campaign", "alias", AGENT)
    assert ok.status == "fixed", ok.message
    assert git(root, "log", "-1", "--format=%an").strip() == "agent:dudu"
    # creating into a namespace it may not write is denied
    (root / "locked/more.md").write_text("# More\n\n[[locked/new-rule]]\n", encoding="utf-8")
    commit_all(root)
    assert create(Wiki(root), "locked/new-rule", AGENT).status == "denied"


def test_agent_fix_may_not_get_around_the_review_policy(root: Path) -> None:
    (root / ".scope.toml").write_text('[namespaces."locked"]\nmode = "operator_only"\n'
                                      '[namespaces."wiki"]\nreview = true\n[review]\ncreate = true\n',
                                      encoding="utf-8")
    (root / "wiki/todo.md").write_text("# Todo\n\n[[Harbour Master Plan]]\n", encoding="utf-8")
    commit_all(root)
    wiki = Wiki(root)
    before, commits = snapshot(root), _commits(root)
    assert fix(wiki, "Nocturne Bg3 V4", "nocturne-bg3-v4-campaign", "alias", AGENT).status == "denied"
    assert create(wiki, "Harbour Master Plan", AGENT).status == "denied"
    assert snapshot(root) == before and _commits(root) == commits
    assert create(wiki, "Harbour Master Plan", OPERATOR).status == "created"


def test_bad_input_is_a_clear_answer(root: Path) -> None:
    wiki = Wiki(root)
    assert fix(wiki, "No Such Target", "nocturne-bg3-v4-campaign", "alias").status == "invalid"
    plan = preview_fix(wiki, [("[[Nocturne Bg3 V4#Boss|the boss fight]]", "nocturne-bg3-v4-campaign")], "alias")
    assert plan.fixes[0][1] == "nocturne-bg3-v4" and plan.links == 2 * N_LINKERS + 1  # pasted as written
    assert fix(wiki, "Nocturne Bg3 V4", "nocturne-bg3-v4-campaign", "magic").status == "invalid"
    with pytest.raises(PageNotFound):
        fix(wiki, "Nocturne Bg3 V4", "no-such-page-at-all", "alias")
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "links", "fix",
                          "Nope", "--to", "x", "--by", "alias"], capture_output=True, text=True)
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) <= 1
    assert "Traceback" not in out.stderr + out.stdout
    (root / IGNORED_FILE).write_text("{not json", encoding="utf-8")  # a damaged decision file
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "links", "unresolved"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and IGNORED_FILE in out.stderr
    assert "Traceback" not in out.stderr


def test_health_figures_and_queues(root: Path) -> None:
    report = health(Wiki(root))
    fig = report.figure
    assert fig("pages").value == len(Wiki(root).pages)
    assert fig("unresolved_targets").value == len(unresolved(Wiki(root), suggest=False))
    assert fig("unresolved_links").value == sum(u.count for u in unresolved(Wiki(root), suggest=False))
    assert fig("unresolved_targets").queue == "links"
    assert fig("duplicates").queue == "dedup" and fig("duplicates").value is not None
    assert fig("lint:orphan").value == report.lint["orphan"] == fig("orphans").value
    assert fig("inbox_pending").value == 0 and fig("auto_pending").value == 0
    ignore(Wiki(root), "Nocturne Bg3 V4")
    after = health(Wiki(root)).figure("unresolved_targets").value
    assert after == fig("unresolved_targets").value - 1
    # an agent's health counts only what it may see
    agent = health(Wiki(root), AGENT)
    assert agent.figure("pages").value == fig("pages").value - 2
    out = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "health", "--json"],
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["unresolved_targets"] == after and {f["key"] for f in data["figures"]} >= {
        "pages", "duplicates", "orphans", "inbox_pending", "auto_pending", "agent_writes_24h"}


def test_a_one_shot_health_builds_the_link_index_once(root: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot ``health`` counts everything the link index answers (unresolved links, lint)
    before its duplicate scan, which then lets go of the index: built once, not held through the
    scan, not built again after it. The figures are in their usual order and are a long-lived
    process's."""
    import shutil

    from curator.engine import memory
    from curator.engine.corpus import links as corpus_links

    assert not (root / ".curator").exists()  # (nothing counted yet: every figure is counted here)
    shutil.copytree(root, tmp_path / "copy")
    kept = health(Wiki(tmp_path / "copy"))  # (the expected figures)
    monkeypatch.setattr(memory, "runs_for_long", lambda: False)
    builds = []
    real_init = corpus_links.LinkIndex.__init__

    def counted(self: corpus_links.LinkIndex, *args: object, **kwargs: object) -> None:
        builds.append(1)
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(corpus_links.LinkIndex, "__init__", counted)
    wiki = Wiki(root)
    report = health(wiki)
    assert len(builds) == 1 and not wiki.links_built()
    assert [f.key for f in report.figures] == [f.key for f in kept.figures]
    assert report.figure("duplicates").value and report.lint == kept.lint
    assert [f.value for f in report.figures] == [f.value for f in kept.figures]


def test_health_counts_agent_writes_of_the_last_day(root: Path) -> None:
    from curator.engine.write.append import append

    wiki = Wiki(root)
    assert health(wiki, duplicates=False).figure("agent_writes_24h").value == 0
    assert append(wiki, "bystander", "A new fact about the bystander.", actor=AGENT).ok
    assert health(Wiki(root), duplicates=False).figure("agent_writes_24h").value == 1
