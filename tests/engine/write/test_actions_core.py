"""The action mechanism (docs/design.md §5): lock, policy, atomic writes, exact commits, journal, undo."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.policy.scope import Decision
from curator.engine.repo.git import lock_is_stale
from curator.engine.wiki import Wiki
from curator.engine.write.actions import (
    ActionContext,
    ActionFailed,
    Invalid,
    history,
    revert,
    run_action,
    undo,
)
from curator.engine.write.bootstrap import init_wiki

AGENT = Actor("agent", "dudu")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki" / "ann.md").write_text("# Ann\n\nAnn likes tea.\n", encoding="utf-8")
    git(root, "add", "wiki/ann.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    w = Wiki(root)
    yield w
    w.close()


def edit(path: str, text: str):
    def apply(ctx: ActionContext) -> None:
        ctx.write_text(path, text)
        ctx.message = "edited"
    return apply


def status(root: Path) -> str:
    return git(root, "status", "--porcelain")


def test_commits_exactly_the_touched_paths_as_the_actor(wiki: Wiki) -> None:
    root = wiki.root
    (root / "notes.txt").write_text("operator's unrelated work\n")
    (root / "wiki" / "ann.md").write_text("# Ann\n\nAnn likes tea.\nlocal edit\n")
    git(root, "add", "notes.txt")  # even staged work stays out of the commit
    res = run_action(wiki, AGENT, "edit", "wiki/bob", edit("wiki/bob.md", "# Bob\n"))
    assert res.status == "ok" and res.ok and not res.is_error
    assert res.changed == ["wiki/bob.md"] and res.commit and len(res.commit) == 40
    assert git(root, "log", "-1", "--format=%an <%ae>|%s").strip() == \
        "agent:dudu <dudu@agents.invalid>|edit: wiki/bob"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["wiki/bob.md"]
    st = status(root)
    assert "A  notes.txt" in st and " M wiki/ann.md" in st and "bob" not in st
    rec = json.loads((root / ".curator" / "journal.jsonl").read_text().splitlines()[-1])
    assert rec["action"] == "edit" and rec["commit"] == res.commit and rec["committed"] is True
    assert rec["actor"] == "agent:dudu" and rec["changed"] == ["wiki/bob.md"]
    assert not (root / ".curator" / "pending.jsonl").exists()
    assert res.to_json()["status"] == "ok"


def test_fsck_and_tree_match_what_git_would_commit(wiki: Wiki) -> None:
    root = wiki.root
    files = {"wiki/deep/er/x y.md": "x\n", "wiki-a.md": "a\n", "wiki/ann.md": "changed\n", "z.md": "z\n"}

    def apply(ctx: ActionContext) -> None:
        for p, t in files.items():
            ctx.write_text(p, t)
    res = run_action(wiki, OPERATOR, "edit", "many", apply)
    assert sorted(res.changed) == sorted(files)
    subprocess.run(["git", "fsck", "--strict"], cwd=root, check=True, capture_output=True)
    assert status(root) == ""
    # the tree equals the one git itself builds from the same working tree
    assert git(root, "write-tree").strip() == git(root, "rev-parse", "HEAD^{tree}").strip()
    res = run_action(wiki, OPERATOR, "remove", "x", lambda c: c.delete("wiki/deep/er/x y.md", archive=False))
    assert res.changed == ["wiki/deep/er/x y.md"] and status(root) == ""
    subprocess.run(["git", "fsck", "--strict"], cwd=root, check=True, capture_output=True)


def test_nothing_written_means_no_commit(wiki: Wiki) -> None:
    head = git(wiki.root, "rev-parse", "HEAD")

    def apply(ctx: ActionContext) -> None:
        ctx.status, ctx.message, ctx.data["matched"] = "duplicate", "already there", "x"
    res = run_action(wiki, AGENT, "wiki_append", "ann", apply)
    assert (res.status, res.commit, res.changed, res.data) == ("duplicate", None, [], {"matched": "x"})
    # rewriting a file with identical bytes is no change either
    res = run_action(wiki, AGENT, "edit", "ann", edit("wiki/ann.md", "# Ann\n\nAnn likes tea.\n"))
    assert res.commit is None and res.changed == []
    assert git(wiki.root, "rev-parse", "HEAD") == head


def test_error_answers_roll_back_every_write(wiki: Wiki) -> None:
    root = wiki.root
    before = (root / "wiki" / "ann.md").read_bytes()

    def apply(ctx: ActionContext) -> None:
        ctx.write_text("wiki/ann.md", "overwritten\n")
        ctx.write_text("wiki/new/page.md", "new\n")
        raise Invalid(message="changed my mind", data={"why": "test"})
    res = run_action(wiki, AGENT, "edit", "ann", apply)
    assert res.status == "invalid" and res.is_error and res.message == "changed my mind"
    assert res.data == {"why": "test"} and res.commit is None
    assert (root / "wiki" / "ann.md").read_bytes() == before
    assert not (root / "wiki" / "new").exists()
    assert status(root) == "" and not (root / ".curator" / "pending.jsonl").exists()

    def boom(ctx: ActionContext) -> None:
        ctx.write_text("wiki/ann.md", "half\n")
        raise RuntimeError("bug")
    with pytest.raises(RuntimeError):
        run_action(wiki, AGENT, "edit", "ann", boom)
    assert (root / "wiki" / "ann.md").read_bytes() == before and status(root) == ""


@pytest.mark.parametrize("bad", ["../x.md", "../../etc/passwd", "/tmp/x.md", ".git/config",
                                 ".curator/journal.jsonl", "wiki/../../x.md", ""])
def test_paths_cannot_escape(wiki: Wiki, bad: str) -> None:
    res = run_action(wiki, AGENT, "edit", "x", edit(bad, "x"))
    assert res.status == "invalid"
    assert status(wiki.root) == ""


def test_symlinked_folder_leading_out_is_refused(wiki: Wiki, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (wiki.root / "link").symlink_to(outside)
    res = run_action(wiki, AGENT, "edit", "x", edit("link/x.md", "x"))
    assert res.status == "invalid" and not (outside / "x.md").exists()


class _NoAgents:
    def can_read(self, actor: Actor, path: str) -> bool:
        return True

    def check_write(self, actor: Actor, path: str) -> Decision:
        return Decision(not path.startswith("wiki/"), "wiki/ is operator_only")


def test_policy_denies_before_anything_is_written(wiki: Wiki) -> None:
    wiki.policy = _NoAgents()

    def apply(ctx: ActionContext) -> None:
        ctx.write_text("free.md", "ok\n")
        ctx.write_text("wiki/ann.md", "nope\n")
    res = run_action(wiki, AGENT, "edit", "x", apply)
    assert res.status == "denied" and "wiki/ is operator_only" in res.message
    assert not (wiki.root / "free.md").exists() and status(wiki.root) == ""
    assert run_action(wiki, OPERATOR, "edit", "x", apply).status == "ok"  # the operator may


def test_locked_when_another_process_holds_the_lock(wiki: Wiki) -> None:
    lock = wiki.state_dir / "write.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from filelock import FileLock; l=FileLock(sys.argv[1]); l.acquire();"
         "print('held', flush=True); time.sleep(30)", str(lock)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        wiki.session.lock.patience = 0.4
        t = time.monotonic()
        res = run_action(wiki, AGENT, "edit", "x", edit("wiki/x.md", "x\n"))
        assert res.status == "locked" and res.is_error and "busy" in res.message
        assert 0.3 < time.monotonic() - t < 2.0
        assert not (wiki.root / "wiki" / "x.md").exists()
    finally:
        holder.kill()
        holder.wait()
    assert run_action(wiki, AGENT, "edit", "x", edit("wiki/x.md", "x\n")).status == "ok"


def test_actions_run_with_the_cyclic_collector_paused_and_restore_it(wiki: Wiki) -> None:
    """An action's bulk objects (plans, texts, re-parsed pages) are not cyclic: the collector is
    paused while it runs (no re-scan of the whole cached wiki mid-merge) and restored afterwards,
    whatever the answer; a caller that had it off keeps it off."""
    seen: list[bool] = []

    def apply(ctx: ActionContext) -> None:
        seen.append(gc.isenabled())
        ctx.write_text("wiki/bob.md", "# Bob\n")

    assert gc.isenabled()
    assert run_action(wiki, OPERATOR, "edit", "bob", apply).status == "ok"
    assert seen == [False] and gc.isenabled()

    def refused(ctx: ActionContext) -> None:
        seen.append(gc.isenabled())
        raise Invalid(message="no")

    def crash(ctx: ActionContext) -> None:
        raise RuntimeError("bug")

    assert run_action(wiki, OPERATOR, "edit", "bob", refused).status == "invalid"
    with pytest.raises(RuntimeError):
        run_action(wiki, OPERATOR, "edit", "bob", crash)
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        assert run_action(wiki, OPERATOR, "edit", "cy", edit("wiki/cy.md", "# Cy\n")).status == "ok"
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_write_many_fsyncs_every_written_file_once(wiki: Wiki, monkeypatch: pytest.MonkeyPatch) -> None:
    from curator.engine.write import actions

    flushed: list[str] = []
    guard = threading.Lock()

    def record(path: str | Path, *, folder: bool = False) -> None:
        with guard:
            flushed.append(str(path))

    monkeypatch.setattr(actions, "fsync_path", record)
    files = {f"wiki/many/p{i:03}.md": f"# P{i}\n".encode() for i in range(101)}
    files["wiki/ann.md"] = b"# Ann\n\nAnn likes tea.\n"  # unchanged: not written, not flushed
    res = run_action(wiki, OPERATOR, "edit", "many", lambda ctx: ctx.write_many(files))
    assert res.status == "ok" and len(res.changed) == 101
    written = [str(wiki.root / p) for p in files if p != "wiki/ann.md"]
    assert sorted(p for p in flushed if "/wiki/many/" in p) == sorted(written)
    assert len(set(flushed)) == len(flushed)
    flushed.clear()
    actions.fsync_files([f"/x/{i}" for i in range(2003)])
    assert sorted(flushed) == sorted(f"/x/{i}" for i in range(2003))


def test_default_patience_is_spec_value() -> None:
    from curator.engine.repo import lock

    assert lock.PATIENCE_S == 3.75


_CRASHER = """
import os, sys
from curator.engine.wiki import Wiki
from curator.engine.policy.actor import Actor
from curator.engine.write.actions import run_action
w = Wiki(sys.argv[1])
def apply(ctx):
    ctx.journal["note"] = "crash test"
    ctx.write_text("wiki/ann.md", "# Ann\\n\\nAnn likes tea.\\n- crashed fact\\n")
    ctx.write_text("wiki/new.md", "# New\\n")
    os._exit(9)  # dies between write and commit, like a SIGKILL
run_action(w, Actor("agent", "dudu"), "edit", "crash", apply)
"""


def test_action_killed_while_applying_is_rolled_back_whole(wiki: Wiki) -> None:
    root = wiki.root
    (root / "operator.md").write_text("operator's draft\n")
    before = (root / "wiki" / "ann.md").read_bytes()
    proc = subprocess.run([sys.executable, "-c", _CRASHER, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert (root / ".curator" / "pending.jsonl").exists()
    res = run_action(wiki, OPERATOR, "edit", "next", edit("wiki/next.md", "next\n"))
    assert res.status == "ok" and not res.data.get("recovered")
    log = git(root, "log", "-2", "--format=%an|%s").splitlines()
    assert log == ["operator|edit: next", "t|seed"]  # nothing of the half-done action was committed
    assert (root / "wiki" / "ann.md").read_bytes() == before and not (root / "wiki" / "new.md").exists()
    assert status(root) == "?? operator.md\n"  # the operator's file was not touched either
    recs = [json.loads(x) for x in (root / ".curator" / "journal.jsonl").read_text().splitlines()]
    assert not [r for r in recs if r.get("note") == "crash test"]
    assert next(r for r in recs if r.get("rolled_back"))["changed"] == ["wiki/ann.md", "wiki/new.md"]
    assert not (root / ".curator" / "pending.jsonl").exists()


_COMMIT_CRASHER = _CRASHER.replace("    os._exit(9)  # dies between write and commit, like a SIGKILL\n", "") \
    .replace("from curator.engine.write.actions import run_action",
             "from curator.engine.write.actions import run_action\nfrom curator.engine.repo import git\n"
             "git.Git.commit_paths = lambda *a, **k: os._exit(9)") \
    .replace('"edit", "crash", apply)', '"edit", "crash", apply, body="Reviewed-by: operator")')


def test_action_killed_at_its_commit_is_rolled_forward_without_sweeping_unrelated_edits(wiki: Wiki) -> None:
    root = wiki.root
    (root / "operator.md").write_text("operator's draft\n")
    proc = subprocess.run([sys.executable, "-c", _COMMIT_CRASHER, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert (root / ".curator" / "pending.jsonl").exists()
    res = run_action(wiki, OPERATOR, "edit", "next", edit("wiki/next.md", "next\n"))
    assert res.status == "ok" and res.data.get("recovered")
    log = git(root, "log", "-3", "--format=%an|%s").splitlines()
    assert log[0] == "operator|edit: next"
    assert log[1] == "agent:dudu|recover: edit: crash"
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD~1").split()) == \
        ["wiki/ann.md", "wiki/new.md"]
    assert "Reviewed-by: operator" in git(root, "log", "-1", "--format=%b", "HEAD~1")  # its body kept
    assert status(root) == "?? operator.md\n"  # the operator's file was not swept in
    recs = [json.loads(x) for x in (root / ".curator" / "journal.jsonl").read_text().splitlines()]
    crash = [r for r in recs if r.get("note") == "crash test"]
    assert len(crash) == 1 and crash[0]["committed"] is True
    assert any(r["action"] == "recover" for r in recs)
    assert not (root / ".curator" / "pending.jsonl").exists()
    # the completed action is an action like any other: undo (after the later edit) reverts it
    assert undo(wiki, OPERATOR).status == "reverted"  # edit: next
    res = undo(wiki, OPERATOR)
    assert res.status == "reverted" and "recover: edit: crash" in res.message
    assert not (root / "wiki" / "new.md").exists()


def test_stale_index_lock_is_cleared_but_a_held_one_is_not(wiki: Wiki) -> None:
    root = wiki.root
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 5
    os.utime(lock, (old, old))
    assert lock_is_stale(lock, root)
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys,time; f=open(sys.argv[1]); print('open', flush=True); time.sleep(30)",
                               str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        assert not lock_is_stale(lock, root)  # a live process has it open
    finally:
        holder.kill()
        holder.wait()
    res = run_action(wiki, AGENT, "edit", "x", edit("wiki/x.md", "x\n"))
    assert res.status == "ok" and res.commit and not lock.exists()
    assert status(root) == ""


def test_failed_commit_is_reported_not_fatal_and_recovered_later(wiki: Wiki, monkeypatch) -> None:
    from curator.engine.repo.git import Git, GitError

    def fail(self, *a, **k):
        raise GitError("git commit failed: simulated")
    monkeypatch.setattr(Git, "commit_paths", fail)
    res = run_action(wiki, AGENT, "edit", "x", edit("wiki/x.md", "x\n"))
    assert res.status == "ok" and res.commit is None and "simulated" in res.data["commit_error"]
    assert (wiki.root / "wiki" / "x.md").exists()
    monkeypatch.undo()
    res = run_action(wiki, AGENT, "edit", "y", edit("wiki/y.md", "y\n"))
    assert res.commit and res.data.get("recovered")
    assert status(wiki.root) == ""


def test_undo_reverts_newest_unreverted_action_and_history_lists_them(wiki: Wiki) -> None:
    root = wiki.root
    a = run_action(wiki, AGENT, "edit", "one", edit("wiki/one.md", "one\n"))
    b = run_action(wiki, OPERATOR, "edit", "ann", edit("wiki/ann.md", "# Ann\n\nAnn likes coffee.\n"))
    u1 = undo(wiki, OPERATOR)
    assert u1.status == "reverted" and u1.data["reverted"] == b.commit
    assert (root / "wiki" / "ann.md").read_text() == "# Ann\n\nAnn likes tea.\n"
    u2 = undo(wiki, OPERATOR)
    assert u2.data["reverted"] == a.commit and not (root / "wiki" / "one.md").exists()
    assert undo(wiki, OPERATOR).status == "invalid"  # only the seed commit is left
    h = history(wiki, 10)
    assert [e.subject for e in h[:4]] == ["revert: edit: one", "revert: edit: ann", "edit: ann", "edit: one"]
    assert h[0].reverts == a.commit and h[0].actor == "operator" and h[3].actor == "agent:dudu"
    assert h[3].paths == ["wiki/one.md"] and h[3].action == "edit" and h[3].target == "one"
    assert h[-1].action is None  # "curator init" is not an action
    assert status(root) == ""


def test_revert_merges_around_later_changes_and_refuses_conflicts(wiki: Wiki) -> None:
    root = wiki.root
    base = "l1\nl2\nl3\nl4\nl5\nl6\n"
    run_action(wiki, OPERATOR, "edit", "p", edit("p.md", base))
    first = run_action(wiki, OPERATOR, "edit", "p", edit("p.md", base.replace("l1", "L1")))
    run_action(wiki, OPERATOR, "edit", "p", edit("p.md", base.replace("l1", "L1").replace("l6", "L6")))
    res = revert(wiki, OPERATOR, first.commit)
    assert res.status == "reverted"
    assert (root / "p.md").read_text() == base.replace("l6", "L6")
    run_action(wiki, OPERATOR, "edit", "p", edit("p.md", base.replace("l6", "X6")))
    later = run_action(wiki, OPERATOR, "edit", "p", edit("p.md", base.replace("l6", "Y6")))
    assert later.commit
    conflicting = history(wiki, 2)[1].commit
    res = revert(wiki, OPERATOR, conflicting)
    assert res.status == "invalid" and "conflict" in res.message
    assert (root / "p.md").read_text() == base.replace("l6", "Y6") and status(root) == ""
    assert revert(wiki, OPERATOR, "not-a-commit").status == "invalid"


def test_move_and_delete_to_archive(wiki: Wiki) -> None:
    root = wiki.root
    res = run_action(wiki, OPERATOR, "move", "ann", lambda c: c.move("wiki/ann.md", "wiki/people/ann.md"))
    assert sorted(res.changed) == ["wiki/ann.md", "wiki/people/ann.md"]
    res = run_action(wiki, OPERATOR, "remove", "ann", lambda c: c.data.update(kept=c.delete("wiki/people/ann.md")))
    assert res.data["kept"] == "_archive/wiki/people/ann.md"
    assert (root / "_archive" / "wiki" / "people" / "ann.md").read_text().startswith("# Ann")
    assert status(root) == "" and "wiki/people/ann.md" not in wiki.pages


def test_page_cache_follows_actions_and_other_processes(wiki: Wiki) -> None:
    assert "wiki/ann.md" in wiki.pages  # load the cache
    seen = []
    wiki.changed.connect(lambda cs: seen.append(cs.paths))
    run_action(wiki, AGENT, "edit", "bob", edit("wiki/bob.md", "# Bob\n"))
    assert "wiki/bob.md" in wiki.pages and seen == [["wiki/bob.md"]]
    other = Wiki(wiki.root)  # another process, in effect
    try:
        run_action(other, AGENT, "edit", "cy", edit("wiki/cy.md", "# Cy\n"))
    finally:
        other.close()
    assert "wiki/cy.md" not in wiki.pages
    run_action(wiki, AGENT, "edit", "dee", edit("wiki/dee.md", "# Dee\n"))
    assert {"wiki/cy.md", "wiki/dee.md"} <= set(wiki.pages)


def test_two_repository_action_commits_the_copy_first(tmp_path: Path, wiki: Wiki) -> None:
    shared_root = tmp_path / "shared"
    init_wiki(shared_root)
    shared = Wiki(shared_root)
    try:
        def share(ctx: ActionContext) -> None:
            text, _ = ctx.read_text("wiki/ann.md")
            res = run_action(shared, ctx.actor, "share", "ann", lambda c: c.write_text("ann.md", text))
            if res.is_error:
                raise ActionFailed(res.status, res.message)
            ctx.write_text("wiki/ann.md", text + "\nshared: yes\n")
            ctx.data["shared_commit"] = res.commit
        res = run_action(wiki, OPERATOR, "share", "ann", share)
        assert res.status == "ok" and res.data["shared_commit"]
        assert (shared_root / "ann.md").read_text().startswith("# Ann")
        assert git(shared_root, "log", "-1", "--format=%s").strip() == "share: ann"
        with pytest.raises(RuntimeError):
            run_action(wiki, OPERATOR, "outer", "x",
                       lambda c: run_action(wiki, OPERATOR, "inner", "x", edit("a.md", "a")))
    finally:
        shared.close()


def test_not_a_repository_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    w = Wiki(tmp_path / "plain")
    try:
        res = run_action(w, OPERATOR, "edit", "x", edit("x.md", "x"))
        assert res.status == "invalid" and "curator init" in res.message
    finally:
        w.close()


def test_recovery_finds_a_commit_that_lands_while_it_looks(wiki: Wiki, monkeypatch) -> None:
    """A process killed while committing can leave its git children running, so the interrupted
    action's commit may land while recovery rolls it forward (which then finds nothing left to
    commit): recovery sees the commit, records it, and commits nothing twice."""
    from curator.engine.repo.git import Git, GitError
    from curator.engine.write.actions import recover_pending

    real = Git.commit_paths

    def fail(self, *a, **k):
        raise GitError("git commit failed: simulated")
    monkeypatch.setattr(Git, "commit_paths", fail)
    res = run_action(wiki, AGENT, "edit", "x", edit("wiki/x.md", "x\n"))
    assert res.commit is None and (wiki.root / ".curator" / "pending.jsonl").exists()
    before = int(git(wiki.root, "rev-list", "--count", "HEAD"))

    def lands_meanwhile(self, paths, message, *a, **k):  # the orphaned commit lands first
        real(self, paths, "edit: x", ("Curator", "curator@localhost"))
        raise GitError("nothing to commit: the paths are unchanged")
    monkeypatch.setattr(Git, "commit_paths", lands_meanwhile)
    rec = recover_pending(wiki)
    monkeypatch.undo()
    assert rec is None or not rec.is_error, rec.message
    assert int(git(wiki.root, "rev-list", "--count", "HEAD")) == before + 1
    assert git(wiki.root, "log", "-1", "--format=%s").strip() == "edit: x"
    assert not (wiki.root / ".curator" / "pending.jsonl").exists()
    assert status(wiki.root) == ""


def test_the_collector_stays_paused_until_the_last_pause_in_any_thread_ends() -> None:
    """Two threads building in bulk at once (the station's background reads): the first to end
    does not resume the collector under the other, and what they built is frozen at the end
    (the first collection after the pause must not walk it)."""
    import threading

    from curator.engine.corpus.store import gc_paused

    entered, first_done, states = threading.Event(), threading.Event(), []

    def long_build() -> None:
        with gc_paused():
            entered.set()
            first_done.wait(10)
            states.append(("after the other ended", gc.isenabled()))
            states.append(("frozen so far", gc.get_freeze_count()))

    thread = threading.Thread(target=long_build)
    gc.unfreeze()
    try:
        with gc_paused():  # the first pause, ended while the other thread's still runs
            thread.start()
            assert entered.wait(10)
            built = [[i] for i in range(1000)]  # noqa: F841  (kept alive past the pause)
        first_done.set()
        thread.join(10)
        assert states[0] == ("after the other ended", False)
        assert states[1][1] == 0  # nothing frozen while a pause still runs
        assert gc.isenabled() and gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
