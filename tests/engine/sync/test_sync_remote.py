"""Sync through a git remote (issue 11): a bare repository and clones on this machine."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.corpus import frontmatter
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.sync.remote import AutoSync, conflict_sides, conflicts, resolve, setup, sync, sync_status
from curator.engine.write.actions import ActionContext, history, run_action
from curator.engine.write.append import append
from curator.engine.write.properties import set_property
from tests.sync_helpers import AGENT, Net, bullets, git, head, make_net, parents, read, signed

PAGE = "wiki/ann-smith.md"


@pytest.fixture
def net(tmp_path: Path) -> Iterator[Net]:
    n = make_net(tmp_path)
    yield n
    n.close()


def meta(text: str) -> dict:
    split = frontmatter.split(text)
    assert split.raw is not None
    return frontmatter.load(split.raw)[0]


def edit(wiki, actor: Actor, rel: str, func) -> None:  # type: ignore[no-untyped-def]
    """An action that rewrites one page with ``func(text)``."""
    def apply(ctx: ActionContext) -> None:
        text, _ = ctx.read_text(rel)
        ctx.write_text(rel, func(text))

    res = run_action(wiki, actor, "edit", rel, apply)
    assert res.ok and res.commit, res.message


# --- facts ---------------------------------------------------------------------------------------

def test_concurrent_appends_to_one_page_merge_without_conflict(net: Net) -> None:
    assert append(net.a, "ann-smith", "Ann moved to Bergen in 2024", actor=AGENT).status == "appended"
    assert append(net.b, "ann-smith", "Ann speaks Norwegian and Polish", actor=AGENT).status == "appended"
    a_commit, b_commit = head(net.a), head(net.b)
    ra = sync(net.a)
    assert ra.status == "pushed", ra.message
    rb = sync(net.b)
    assert rb.status == "merged" and rb.data["pushed"], rb.message
    assert rb.changed == [PAGE] and rb.commit == head(net.b)
    assert set(parents(net.b)) == {a_commit, b_commit}  # a merge: both commits kept as they were
    ra2 = sync(net.a)
    assert ra2.status == "pulled" and ra2.changed == [PAGE]
    for wiki in (net.a, net.b):
        text = read(wiki)
        assert "<<<<<<<" not in text
        facts = bullets(text)
        assert len(facts) == 3
        assert sum("Bergen" in f for f in facts) == 1 and sum("Polish" in f for f in facts) == 1
        # appended facts stay in the Updates section, before ## Notes
        assert text.index("Polish") < text.index("## Notes")
    assert read(net.a) == read(net.b)
    assert sync(net.a).status == "up_to_date" and sync(net.b).status == "up_to_date"
    assert conflicts(net.b) == []


def test_the_same_fact_on_both_sides_is_kept_once(net: Net) -> None:
    append(net.a, "ann-smith", "Ann chairs the architecture board", actor=AGENT)
    append(net.b, "ann-smith", "Ann chairs the architecture board.", actor=Actor("agent", "other"))
    append(net.b, "ann-smith", "Ann owns the refunds runbook", actor=AGENT)
    sync(net.a)
    assert sync(net.b).status == "merged"
    facts = bullets(read(net.b))
    assert sum("architecture board" in f for f in facts) == 1
    assert sum("refunds runbook" in f for f in facts) == 1


def test_pulled_pages_reach_the_page_cache(net: Net) -> None:
    net.b.store.refresh()
    assert append(net.a, "erik-berg", "Erik runs the data platform", create_new=True).status == "appended"
    sync(net.a)
    res = sync(net.b)
    assert res.status == "pulled" and res.changed == ["wiki/erik-berg.md"]
    assert "wiki/erik-berg.md" in net.b.pages
    entry = next(e for e in history(net.b, 5) if e.action == "wiki_append")
    assert entry.target == "erik-berg"


# --- frontmatter -------------------------------------------------------------------------------

def test_concurrent_frontmatter_edits_merge_key_by_key(net: Net) -> None:
    def a_side(text: str) -> str:
        return frontmatter.update(text, {"tags": ["people", "finance"], "updated": dt.date(2024, 3, 5)})

    def b_side(text: str) -> str:
        return frontmatter.update(text, {"tags": ["people", "oslo"], "layer": "identity",
                                         "updated": dt.date(2024, 2, 1), "aliases": ["Annie"]})

    edit(net.a, AGENT, PAGE, a_side)
    edit(net.b, AGENT, PAGE, b_side)
    sync(net.a)
    res = sync(net.b)
    assert res.status == "merged", res.message
    sync(net.a)
    for wiki in (net.a, net.b):
        m = meta(read(wiki))
        assert m["tags"] == ["people", "finance", "oslo"] or m["tags"] == ["people", "oslo", "finance"]
        assert m["updated"] == "2024-03-05"  # the newest
        assert m["layer"] == "identity"  # only b changed it
        assert m["aliases"] == ["Annie"]  # only b added it
        assert m["title"] == "Ann Smith" and m["created"] == "2024-01-01"
    assert read(net.a) == read(net.b)
    assert "updated: 2024-03-05\n" in read(net.a)  # a date, not a quoted string


def test_trust_the_operators_side_wins_whoever_merges(net: Net) -> None:
    grader = Actor("capability", "grader")
    assert set_property(net.a, OPERATOR, PAGE, "trust", 0.9).ok
    edit(net.b, grader, PAGE, lambda t: frontmatter.update(t, {"trust": 0.3}))
    assert sync(net.a).status == "pushed"
    res = sync(net.b)  # b merges: its own side is the grader's, the other the operator's
    assert res.status == "merged", res.message
    assert meta(read(net.b))["trust"] == 0.9
    sync(net.a)
    assert meta(read(net.a))["trust"] == 0.9

    # and the other way round: the operator's clone merges
    edit(net.a, grader, PAGE, lambda t: frontmatter.update(t, {"trust": 0.2}))
    assert set_property(net.b, OPERATOR, PAGE, "trust", 0.7).ok
    assert sync(net.b).status == "pushed"
    assert sync(net.a).status == "merged"
    assert meta(read(net.a))["trust"] == 0.7


# --- conflicts ---------------------------------------------------------------------------------------

def test_a_true_conflict_is_reported_nothing_lost_and_resolved_in_one_commit(net: Net) -> None:
    edit(net.a, OPERATOR, PAGE, lambda t: t.replace("Ann runs the payments team in Oslo.",
                                                    "Ann leads payments and refunds from Oslo."))
    edit(net.b, OPERATOR, PAGE, lambda t: t.replace("Ann runs the payments team in Oslo.",
                                                    "Ann runs payments; she moved to Bergen."))
    append(net.b, "ann-smith", "Ann mentors two new engineers", actor=AGENT)
    sync(net.a)
    b_before, b_text = head(net.b), read(net.b)
    res = sync(net.b)
    assert res.status == "conflict" and res.data["conflicts"] == [PAGE]
    assert "curator resolve" in res.message and res.ok
    # nothing changed locally, nothing pushed, both sides intact
    assert head(net.b) == b_before and read(net.b) == b_text
    assert git(net.b.root, "status", "--porcelain") == ""
    remote_text = git(net.b.root, "show", f"origin/main:{PAGE}")
    assert "refunds from Oslo" in remote_text
    listed = conflicts(net.b)
    assert [c.path for c in listed] == [PAGE] and "--theirs" in listed[0].how
    st = sync_status(net.b)
    assert st.conflicts == [PAGE] and st.summary() == "1 conflict"
    # local actions keep working while the conflict waits
    assert append(net.b, "ann-smith", "Ann speaks at the fintech meetup", actor=AGENT).status == "appended"
    assert sync(net.b).status == "conflict"
    sides = conflict_sides(net.b, PAGE)
    assert "Bergen" in sides["ours"] and "refunds from Oslo" in sides["theirs"]
    merged = sides["merged"]
    assert merged is not None and "<<<<<<< ours" in merged and ">>>>>>> theirs" in merged
    assert "Bergen" in merged and "refunds from Oslo" in merged
    # the facts are merged outside the markers
    updates = merged[merged.index("## Updates"):]
    assert "mentors two new engineers" in updates and "fintech meetup" in updates
    assert "<<<<<<<" not in updates

    resolution = merged.replace("<<<<<<< ours\n", "").replace("=======\n", "").replace(">>>>>>> theirs\n", "")
    resolution = resolution.replace("Ann runs payments; she moved to Bergen.\n",
                                    "").replace("refunds from Oslo.", "refunds, now from Bergen.")
    before = head(net.b)
    res = resolve(net.b, OPERATOR, ["ann-smith"], "file", resolution.encode())
    assert res.status == "resolved", res.message
    assert head(net.b) == res.commit and git(net.b.root, "rev-list", "--count", f"{before}..HEAD").strip() == "2"
    assert parents(net.b) == [before, git(net.b.root, "rev-parse", "origin/main").strip()]
    assert git(net.b.root, "log", "-1", "--format=%s %an").strip() == f"resolve: {PAGE} operator"
    text = read(net.b)
    assert "<<<<<<<" not in text and "now from Bergen" in text
    assert "fintech meetup" in text and "mentors two new engineers" in text
    assert conflicts(net.b) == [] and git(net.b.root, "status", "--porcelain") == ""
    assert sync(net.b).status == "pushed"
    assert sync(net.a).status == "pulled"
    assert read(net.a) == read(net.b)


def test_resolve_by_choosing_a_side(net: Net) -> None:
    edit(net.a, OPERATOR, PAGE, lambda t: t.replace("Nothing else yet.", "A says this."))
    edit(net.b, OPERATOR, PAGE, lambda t: t.replace("Nothing else yet.", "B says that."))
    sync(net.a)
    assert sync(net.b).status == "conflict"
    res = resolve(net.b, OPERATOR, [PAGE], "theirs")
    assert res.status == "resolved" and res.commit
    assert "A says this." in read(net.b) and "B says that." not in read(net.b)
    # ours is still in history: nothing lost
    assert "B says that." in git(net.b.root, "show", f"{parents(net.b)[0]}:{PAGE}")
    assert sync(net.b).status == "pushed"


def test_resolve_without_conflict_is_invalid(net: Net) -> None:
    res = resolve(net.a, OPERATOR, [PAGE], "ours")
    assert res.status == "invalid" and "no conflict" in res.message


def test_uncommitted_edits_in_the_way_are_an_error_and_kept(net: Net) -> None:
    append(net.a, "ann-smith", "Ann approves all refunds above 10k", actor=AGENT)
    sync(net.a)
    page = net.b.root / PAGE
    page.write_text(page.read_text() + "\nmy unsaved note\n")
    res = sync(net.b)
    assert res.status == "error" and PAGE in res.message
    assert page.read_text().endswith("my unsaved note\n")


# --- offline ---------------------------------------------------------------------------------------------

def test_offline_then_catch_up(net: Net, tmp_path: Path) -> None:
    url = str(net.remote)
    git(net.b.root, "remote", "set-url", "origin", str(tmp_path / "missing.git"))
    append(net.a, "ann-smith", "Ann signed the new vendor contract", actor=AGENT)
    sync(net.a)
    res = sync(net.b)
    assert res.status == "offline" and res.ok and "unreachable" in res.message
    # actions keep working locally
    assert append(net.b, "ann-smith", "Ann prefers email over chat", actor=AGENT).status == "appended"
    assert append(net.b, "ola-nord", "Ola joined the payments team", create_new=True).status == "appended"
    st = sync_status(net.b)
    assert st.offline and st.ahead == 2 and st.behind == 0  # as of the clone's last fetch
    assert st.last_sync is None and st.last_attempt is not None and "does not appear" in st.last_message
    # back-off while offline
    auto = AutoSync(lambda: sync(net.b), interval=60, backoff=10, max_backoff=40)
    r1 = auto.maybe_sync(now=0.0)
    assert r1 is not None and r1.status == "offline"
    assert auto.next_due > 5
    delays = [auto.record(sync(net.b), now=0.0) for _ in range(3)]
    assert delays == [20.0, 40.0, 40.0]
    auto.after_action(now=0.0)  # no earlier sync while backing off
    assert auto.next_due == 40.0
    assert auto.maybe_sync(now=1.0) is None
    # the remote is back: the next sync catches up
    git(net.b.root, "remote", "set-url", "origin", url)
    res = auto.maybe_sync(now=41.0)
    assert res is not None and res.status == "merged" and res.data["pushed"], res and res.message
    assert auto.failures == 0 and auto.next_due == 41.0 + 60
    assert sync(net.a).status == "pulled"
    text = read(net.a)
    assert "vendor contract" in text and "email over chat" in text
    assert (net.a.root / "wiki/ola-nord.md").exists()
    assert sync_status(net.a).ahead == 0 and sync_status(net.a).behind == 0


def test_auto_sync_after_actions_is_debounced() -> None:
    calls: list[float] = []
    from curator.engine.write.actions import ActionResult

    auto = AutoSync(lambda: calls.append(1) or ActionResult("up_to_date"), interval=100, after_action_delay=5)
    assert auto.maybe_sync(now=0.0) is not None  # first call: at once
    assert auto.maybe_sync(now=1.0) is None
    auto.after_action(now=2.0)
    auto.after_action(now=3.0)
    assert auto.next_due == 7.0
    assert auto.maybe_sync(now=6.0) is None and auto.maybe_sync(now=7.0) is not None
    assert len(calls) == 2


# --- set-up, fresh clones, errors --------------------------------------------------------------------------

def test_init_installs_the_driver_and_a_fresh_clone_gets_it_on_first_sync(net: Net) -> None:
    assert "*.md merge=curator" in (net.a.root / ".gitattributes").read_text()
    config = git(net.a.root, "config", "--get", "merge.curator.driver").strip()
    assert "curator.engine.sync.merge_driver" in config and config.startswith("/")
    assert subprocess.run(["git", "config", "--get", "merge.curator.driver"], cwd=net.b.root,
                          capture_output=True).returncode == 1  # config does not travel
    assert sync(net.b).status == "up_to_date"
    assert git(net.b.root, "config", "--get", "merge.curator.driver").strip() == config


def test_setup_is_an_action_commit_once(tmp_path: Path) -> None:
    from curator.engine.wiki import Wiki

    root = tmp_path / "w"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "p.md").write_text("# P\n")
    git(root, "add", "p.md")
    git(root, "commit", "-q", "-m", "p")
    wiki = Wiki(root)
    res = setup(wiki)
    assert res.ok and res.commit and res.changed == [".gitattributes"]
    assert git(root, "log", "-1", "--format=%s").strip() == "sync_setup: merge driver"
    again = setup(wiki)
    assert again.ok and again.commit is None and "already" in again.message
    wiki.close()


def test_no_remote_is_invalid(tmp_path: Path) -> None:
    from curator.engine.wiki import Wiki
    from curator.engine.write.bootstrap import init_wiki

    init_wiki(tmp_path / "solo")
    wiki = Wiki(tmp_path / "solo")
    res = sync(wiki)
    assert res.status == "invalid" and "git remote add origin" in res.message
    assert sync_status(wiki).summary() == "no remote"
    wiki.close()


def test_first_push_to_an_empty_remote(tmp_path: Path) -> None:
    from curator.engine.wiki import Wiki
    from curator.engine.write.bootstrap import init_wiki

    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / "r.git")], check=True)
    init_wiki(tmp_path / "w")
    git(tmp_path / "w", "remote", "add", "origin", str(tmp_path / "r.git"))
    wiki = Wiki(tmp_path / "w")
    assert sync(wiki).status == "pushed"
    assert sync(wiki).status == "up_to_date"
    wiki.close()


# --- the command line ---------------------------------------------------------------------------------------

def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_sync_conflicts_and_resolve(net: Net, capsys: pytest.CaptureFixture[str]) -> None:
    edit(net.a, OPERATOR, PAGE, lambda t: t.replace("Nothing else yet.", "A wrote this."))
    edit(net.b, OPERATOR, PAGE, lambda t: t.replace("Nothing else yet.", "B wrote that."))
    code, out, _ = run_cli(capsys, "--wiki", str(net.a.root), "sync", "--json")
    assert code == 0 and json.loads(out)["status"] == "pushed"
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "sync")
    assert code == 0 and out.startswith("conflict:") and PAGE in out
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "sync", "--status")
    assert code == 0 and "1 conflicted page(s)" in out and f"curator resolve {PAGE} --ours" in out
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "conflicts", "--json")
    assert code == 0 and json.loads(out)[0]["path"] == PAGE
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "conflicts", "ann-smith")
    assert code == 0 and "<<<<<<< ours" in out and "A wrote this." in out
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "conflicts", "ann-smith", "--side", "ours")
    assert code == 0 and "B wrote that." in out and "<<<<<<<" not in out
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "resolve", "nope", "--ours")
    assert code == 1 and out.startswith("invalid: nope is not in conflict")
    code, _, err = run_cli(capsys, "--wiki", str(net.b.root), "conflicts", "nope")
    assert code == 1 and err.count("\n") == 1 and "not in conflict" in err
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "resolve", "ann-smith", "--ours", "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "resolved" and data["commit"]
    assert "B wrote that." in read(net.b)
    code, out, _ = run_cli(capsys, "--wiki", str(net.b.root), "sync")
    assert code == 0 and out.startswith("pushed:")


def test_undo_after_a_merge_reverts_an_action_not_the_merge(net: Net) -> None:
    from curator.engine.write.actions import undo

    append(net.a, "ann-smith", "Ann reviews the quarterly budget", actor=AGENT)
    sync(net.a)
    append(net.b, "erik-berg", "Erik hosts the Friday demo", create_new=True, actor=AGENT)
    assert sync(net.b).status == "merged"
    res = undo(net.b, OPERATOR)
    assert res.status == "reverted", res.message
    assert res.data["reverted"] in git(net.b.root, "log", "--format=%H", "--no-merges").split()
    assert git(net.b.root, "log", "-1", "--format=%s", res.data["reverted"]).startswith("wiki_append:")


def test_a_wiki_without_the_attributes_line_still_merges_pages(net: Net) -> None:
    git(net.a.root, "rm", "-q", ".gitattributes")
    git(net.a.root, *signed("commit", "-q", "-m", "older wiki: no attributes"))  # (a configuration file: signed)
    assert sync(net.a).status == "pushed" and sync(net.b).status == "pulled"
    assert not (net.b.root / ".gitattributes").exists()
    append(net.a, "ann-smith", "Ann moved to the Bergen office", actor=AGENT)
    append(net.b, "ann-smith", "Ann writes the payments newsletter", actor=AGENT)
    sync(net.a)
    assert sync(net.b).status == "merged"
    text = read(net.b)
    assert "Bergen office" in text and "newsletter" in text and "<<<<<<<" not in text


def test_removed_on_one_side_changed_on_the_other(net: Net) -> None:
    res = run_action(net.a, OPERATOR, "remove", PAGE, lambda ctx: ctx.delete(PAGE, archive=False))
    assert res.commit
    append(net.b, "ann-smith", "Ann approved the new card scheme", actor=AGENT)
    sync(net.a)
    res = sync(net.b)
    assert res.status == "conflict" and res.data["conflicts"] == [PAGE]
    sides = conflict_sides(net.b, PAGE)
    assert sides["theirs"] is None and sides["ours"] is not None and "card scheme" in sides["ours"]
    res = resolve(net.b, OPERATOR, [PAGE], "theirs")
    assert res.status == "resolved", res.message
    assert not (net.b.root / PAGE).exists()
    assert "card scheme" in git(net.b.root, "show", f"HEAD^1:{PAGE}")  # kept in history
    assert git(net.b.root, "status", "--porcelain") == ""
    assert sync(net.b).status == "pushed"


def test_a_fact_follows_a_page_moved_on_the_other_side(net: Net) -> None:
    # git's rename detection: a move (or a removal into _archive/) carries the other side's append
    res = run_action(net.a, OPERATOR, "move", PAGE, lambda ctx: ctx.move(PAGE, "people/ann-smith.md"))
    assert res.commit
    append(net.b, "ann-smith", "Ann approved the new card scheme", actor=AGENT)
    sync(net.a)
    assert sync(net.b).status == "merged"
    assert not (net.b.root / PAGE).exists()
    assert "card scheme" in (net.b.root / "people/ann-smith.md").read_text()
