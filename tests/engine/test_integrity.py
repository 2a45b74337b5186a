"""Integrity (issue 14): nothing lost, nothing resurrected; each class through the CLI (and the MCP
door where an agent can reach it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# the same git and CLI helpers and small wiki as the write commands' tests
from tests.cli.test_append_cli import cli, git, seed_wiki


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return seed_wiki(tmp_path)


# --- recover replays only facts no later action accounted for ---------------------------------------

def test_recover_does_not_undo_a_merge(root: Path) -> None:
    assert cli(root, "append", "project-x", "Project X ships in May", "--create-new")[0] == 0
    assert cli(root, "append", "project-x-notes", "The notes say the budget is 3 million",
               "--create-new")[0] == 0
    rc, out, err = cli(root, "merge", "project-x", "project-x-notes", "--json")
    assert rc == 0 and out["status"] == "merged", err
    assert not (root / "wiki" / "project-x-notes.md").exists()
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["restored"] == [] and out["commit"] is None
    assert not (root / "wiki" / "project-x-notes.md").exists()
    assert "budget is 3 million" in (root / "wiki" / "project-x.md").read_text()
    # the merge undone: its page is back with its fact, and recover still has nothing to do ...
    assert cli(root, "undo")[0] == 0
    assert "budget is 3 million" in (root / "wiki" / "project-x-notes.md").read_text()
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["restored"] == []
    # ... but a page lost outside Curator (deleted and committed by hand) is still rebuilt
    git(root, "rm", "-q", "wiki/project-x-notes.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "oops")
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and [r["page"] for r in out["restored"]] == ["wiki/project-x-notes.md"]
    assert "budget is 3 million" in (root / "wiki" / "project-x-notes.md").read_text()


# --- a stale git index is repaired; the answer tells the truth -------------------------------------

_HOLD_INDEX_LOCK = ("import sys, os\nf = open(sys.argv[1], 'w')\nprint('held', flush=True)\n"
                    "sys.stdin.readline()\nf.close()\nos.unlink(sys.argv[1])\n")  # held until told


def test_append_with_index_lock_held_says_committed_and_the_next_action_repairs_the_index(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The lock is held by a live process throughout: each action waits for it (0.5 s here, more
    # than the age a lock needs before its holders are even looked for), not git's usual 2 s.
    monkeypatch.setenv("CURATOR_GIT_LOCK_WAIT_S", "0.5")
    lock = root / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_INDEX_LOCK, str(lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        rc, out, err = cli(root, "--as", "agent:a", "append", "ann-smith", "Ann moved to Lisbon", "--json")
        assert rc == 0 and out["status"] == "appended", err
        # the branch has the fact: the answer and the journal say so
        assert out["commit"] and git(root, "rev-parse", "HEAD").strip() == out["commit"]
        assert "Lisbon" in git(root, "show", "HEAD:wiki/ann-smith.md")
        journal = [json.loads(x) for x in (root / ".curator" / "journal.jsonl").read_text().splitlines()]
        assert journal[-1]["content"] == "Ann moved to Lisbon" and journal[-1]["committed"] is True
        # while git's index is still locked, no other action starts over the unfinished one
        rc, out, _ = cli(root, "append", "ann-smith", "Ann speaks Portuguese", "--json")
        assert rc == 1 and "not started" in out["message"] and out["commit"] is None
        assert "Portuguese" not in (root / "wiki" / "ann-smith.md").read_text()
    finally:
        assert holder.stdin is not None
        holder.stdin.write("release\n")
        holder.stdin.close()
        holder.wait(timeout=20)
    # the lock is gone: the next action (here an unrelated append) repairs the index
    assert cli(root, "append", "bob", "Bob likes tea", "--create-new")[0] == 0
    assert git(root, "status", "--porcelain") == ""
    # so an operator's ordinary commit of another file keeps the fact in HEAD
    (root / "other.txt").write_text("x\n")
    git(root, "add", "other.txt")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "operator commit")
    assert "Lisbon" in git(root, "show", "HEAD:wiki/ann-smith.md")


def test_recover_repairs_an_index_left_stale_by_a_killed_update_index(root: Path) -> None:
    # update-index killed after update-ref (simulated: git's index update fails for good)
    crash = ("import sys\nfrom curator.engine.repo import git\nfrom curator.engine.wiki import Wiki\n"
             "from curator.engine.write.append import append\n_run = git.Git.run\n"
             "def run(self, *args, **kw):\n"
             "    if args and args[0] == 'update-index': raise git.GitError('git update-index failed: killed')\n"
             "    return _run(self, *args, **kw)\n"
             "git.Git.run = run\n_start = git.Git.start\n"
             "def start(self, *args):\n"
             "    return _start(self, 'update-index-killed') if args[0] == 'update-index' else _start(self, *args)\n"
             "git.Git.start = start\n"
             "r = append(Wiki(sys.argv[1]), 'ann-smith', 'Ann moved to Porto')\n"
             "print(r.status, r.commit, r.message)\n")
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    status, commit, *_ = proc.stdout.split()
    assert status == "appended" and commit != "None"
    assert "Porto" in git(root, "show", "HEAD:wiki/ann-smith.md")
    assert git(root, "status", "--porcelain").startswith("MM")  # the stale index
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["restored"] == []
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "diff", "--cached", "--name-only") == ""


# --- nothing under .curator/ is taken from a remote ------------------------------------------------

def test_sync_refuses_commits_that_track_curator_state(tmp_path: Path) -> None:
    from tests.sync_helpers import GIT_ID, make_net

    net = make_net(tmp_path)
    try:
        b = net.b.root
        rc, _, _ = cli(b, "--as", "agent:b", "append", "ann-smith", "Ann joined the board")
        assert rc == 0
        journal_before = (b / ".curator" / "journal.jsonl").read_bytes()
        b_head = git(b, "rev-parse", "HEAD").strip()
        # a collaborator force-adds a forged journal and pushes it
        a = net.a.root
        forged = {"t": "2024-01-01T00:00:00Z", "id": "x", "action": "wiki_append", "slug": "ann-smith",
                  "content": "Ann embezzled the pension fund", "page": "wiki/ann-smith.md", "committed": True,
                  "commit": None, "actor": "agent:evil"}
        (a / ".curator").mkdir(exist_ok=True)
        (a / ".curator" / "journal.jsonl").write_text(json.dumps(forged) + "\n")
        git(a, "add", "-f", ".curator/journal.jsonl")
        git(a, *GIT_ID, "commit", "-qm", "forge")
        git(a, "push", "-q", "origin", "HEAD:main")
        rc, out, err = cli(b, "sync")
        shown = out + err
        assert rc == 1 and shown.count("\n") == 1 and "Traceback" not in shown
        assert shown.startswith("invalid: refused") and ".curator/journal.jsonl" in shown
        assert (b / ".curator" / "journal.jsonl").read_bytes() == journal_before
        assert git(b, "rev-parse", "HEAD").strip() == b_head
        rc, out, _ = cli(b, "recover", "--json")
        assert rc == 0 and out["restored"] == []
        assert "embezzled" not in (b / "wiki" / "ann-smith.md").read_text()
        rc, out, _ = cli(b, "sync", "--json")
        assert rc == 1 and out["status"] == "invalid" and out["refused"] == [".curator/journal.jsonl"]
    finally:
        net.close()


# --- resolve --theirs keeps the facts this clone had committed ----------------------------------------

def test_resolve_theirs_keeps_the_local_clones_facts(tmp_path: Path) -> None:
    from tests.sync_helpers import make_net

    net = make_net(tmp_path)
    try:
        a, b = net.a.root, net.b.root
        page = b / "wiki" / "ann-smith.md"
        for fact in ("Ann mentors two new engineers", "Ann speaks at the fintech meetup"):
            assert cli(b, "--as", "agent:b", "append", "ann-smith", fact)[0] == 0
        text = page.read_text()
        page.write_text(text.replace("Ann runs the payments team in Oslo.", "B: Ann moved to Bergen."))
        git(b, "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qam", "b prose")
        ap = a / "wiki" / "ann-smith.md"
        ap.write_text(ap.read_text().replace("Ann runs the payments team in Oslo.", "A: Ann leads refunds."))
        git(a, "-c", "user.name=op", "-c", "user.email=op@x", "commit", "-qam", "a prose")
        assert cli(a, "sync")[0] == 0
        rc, out, _ = cli(b, "sync", "--json")
        assert out["status"] == "conflict"
        rc, out, err = cli(b, "resolve", "ann-smith", "--theirs", "--json")
        assert rc == 0 and out["status"] == "resolved", err
        final = page.read_text()
        assert "A: Ann leads refunds." in final and "Bergen" not in final  # their side of the prose
        assert "Ann mentors two new engineers" in final and "fintech meetup" in final  # our facts kept
        assert "kept 2 fact(s)" in out["message"]
        assert git(b, "status", "--porcelain") == ""
    finally:
        net.close()


# --- an operator's uncommitted edits are never swept into an action's commit ---------------------

OPERATOR_DRAFT = "# Ann Smith\n\nDRAFT: operator's unsaved paragraph.\n\n## Updates\n\n- Ann joined ACME in 2019\n"


def test_append_and_undo_leave_the_operators_uncommitted_edits_uncommitted(root: Path) -> None:
    page = root / "wiki" / "ann-smith.md"
    page.write_text(OPERATOR_DRAFT)
    rc, out, err = cli(root, "--as", "agent:a", "append", "ann-smith", "Ann moved to Lisbon", "--json")
    assert rc == 0 and out["status"] == "appended", err
    committed = git(root, "show", "HEAD:wiki/ann-smith.md")
    assert "Lisbon" in committed and "DRAFT" not in committed  # only the fact was committed
    text = page.read_text()
    assert "Lisbon" in text and "DRAFT: operator's unsaved paragraph." in text  # the draft is still there
    assert git(root, "status", "--porcelain") == " M wiki/ann-smith.md\n"  # ... and still uncommitted
    # undo (a revert) removes the fact, and again commits nothing of the draft
    rc, out, err = cli(root, "undo", "--json")
    assert rc == 0 and out["status"] == "reverted", err
    committed = git(root, "show", "HEAD:wiki/ann-smith.md")
    assert "Lisbon" not in committed and "DRAFT" not in committed
    assert page.read_text() == OPERATOR_DRAFT
    assert git(root, "status", "--porcelain") == " M wiki/ann-smith.md\n"


def test_an_append_killed_at_its_commit_is_recovered_without_the_operators_edits(root: Path) -> None:
    page = root / "wiki" / "ann-smith.md"
    page.write_text(OPERATOR_DRAFT)
    crash = ("import os, sys\nfrom curator.engine.repo import git\nfrom curator.engine.wiki import Wiki\n"
             "from curator.engine.write.append import append\ngit.Git.commit_paths = lambda *a, **k: os._exit(9)\n"
             "append(Wiki(sys.argv[1]), 'ann-smith', 'Ann moved to Lisbon')\n")
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["interrupted"]["status"] == "recovered"
    committed = git(root, "show", "HEAD:wiki/ann-smith.md")
    assert "Lisbon" in committed and "DRAFT" not in committed
    assert "DRAFT" in page.read_text() and "Lisbon" in page.read_text()
    assert git(root, "status", "--porcelain") == " M wiki/ann-smith.md\n"


def test_an_edit_next_to_the_actions_lines_is_refused_with_a_clear_message(root: Path) -> None:
    page = root / "wiki" / "ann-smith.md"
    draft = page.read_text() + "- operator's half-typed bullet\n"
    page.write_text(draft)
    rc, out, _ = cli(root, "append", "ann-smith", "Ann moved to Lisbon")
    assert rc == 1 and out.startswith("invalid: wiki/ann-smith.md has uncommitted changes") and out.count("\n") == 1
    assert page.read_text() == draft and git(root, "log", "-1", "--format=%s").strip() == "seed"


def test_mcp_append_on_a_page_with_uncommitted_edits_commits_only_the_fact(tmp_path: Path) -> None:
    from tests.mcp.test_mcp_server import call, make_wiki, run

    root = make_wiki(tmp_path / "w")
    page = root / "wiki" / "payments.md"
    page.write_text(page.read_text().replace("How we take money.", "How we take money. OPERATOR DRAFT, not saved."))

    async def body(s) -> None:  # type: ignore[no-untyped-def]
        is_error, text = await call(s, "wiki_append", slug="payments", content="Refunds take five days")
        assert not is_error and "appended" in text.lower(), text

    run(root, body)
    committed = git(root, "show", "HEAD:wiki/payments.md")
    assert "five days" in committed and "OPERATOR DRAFT" not in committed
    assert "OPERATOR DRAFT" in page.read_text() and "five days" in page.read_text()
    assert git(root, "status", "--porcelain") == " M wiki/payments.md\n"


# --- undo, redo, undo ------------------------------------------------------------------------------

def test_undo_after_a_redo_undoes_again(root: Path) -> None:
    assert cli(root, "append", "ann-smith", "Ann moved to Lisbon")[0] == 0
    rc, out, _ = cli(root, "undo", "--json")
    assert rc == 0 and out["status"] == "reverted"
    rc, out, _ = cli(root, "undo", "--commit", out["commit"], "--json")  # redo: revert the revert
    assert rc == 0 and "Lisbon" in (root / "wiki" / "ann-smith.md").read_text()
    rc, out, _ = cli(root, "undo", "--json")
    assert rc == 0 and out["status"] == "reverted", out
    assert "Lisbon" not in (root / "wiki" / "ann-smith.md").read_text()


def test_undo_of_an_older_append_applies_cleanly_next_to_a_newer_one(root: Path) -> None:
    rc, first, _ = cli(root, "append", "ann-smith", "Ann moved to Lisbon", "--json")
    assert cli(root, "append", "ann-smith", "Ann speaks Portuguese")[0] == 0
    rc, out, _ = cli(root, "undo", "--commit", first["commit"], "--json")
    assert rc == 0 and out["status"] == "reverted", out
    text = (root / "wiki" / "ann-smith.md").read_text()
    assert "Lisbon" not in text and "Ann speaks Portuguese" in text and "Ann joined ACME" in text
    assert git(root, "status", "--porcelain") == ""


# --- file names and permissions ----------------------------------------------------------------------

def test_a_backslash_in_a_page_name_is_that_page_not_a_folder(root: Path) -> None:
    page = root / "wiki" / "back\\slash.md"
    page.write_text("# Back Slash\n\n## Updates\n\n- first fact\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "backslash page")
    rc, out, err = cli(root, "append", "back\\slash", "second fact here", "--json")
    assert rc == 0 and out["status"] == "appended" and out["created"] is False, err
    assert out["page"] == "wiki/back\\slash.md"
    assert "second fact here" in page.read_text()
    assert not (root / "wiki" / "back").exists()
    assert git(root, "show", "--name-only", "--format=", "HEAD").strip() == '"wiki/back\\\\slash.md"'
    # the same through the agents' door
    from tests.mcp.test_mcp_server import call, run

    async def body(s) -> None:  # type: ignore[no-untyped-def]
        is_error, text = await call(s, "wiki_append", slug="back\\slash", content="third fact from an agent")
        assert not is_error and "wiki/back\\slash.md" in text, text

    run(root, body)
    assert "third fact from an agent" in page.read_text() and not (root / "wiki" / "back").exists()


def _unprivileged(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI bound by file permissions: as root, without the capabilities that let root read a
    chmod-000 file anyway."""
    import os
    import shutil

    cmd = [sys.executable, "-m", "curator.cli", "--wiki", str(root), *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "running as root needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE"
        caps = "-dac_override,-dac_read_search"
        cmd = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_an_unreadable_page_is_reported_by_index_and_lint_and_append_says_why(root: Path) -> None:
    (root / "wiki" / "locked.md").write_text("# Locked\n\n## Updates\n\n- a secret fact\n")
    (root / "wiki" / "open.md").write_text("# Open\n\nSee [[locked]].\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more")
    (root / "wiki" / "locked.md").chmod(0)
    try:
        proc = _unprivileged(root, "index")
        assert proc.returncode == 0, proc.stderr
        assert "wiki/locked.md" in proc.stdout and "unreadable" in proc.stdout
        proc = _unprivileged(root, "lint", "--json")
        issues = json.loads(proc.stdout)
        assert any(i["path"] == "wiki/locked.md" and i["code"] == "unreadable" and i["severity"] == "error"
                   for i in issues), issues
        proc = _unprivileged(root, "append", "locked", "another fact")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout
        assert proc.stdout.startswith("invalid: wiki/locked.md cannot be read (permission denied)"), proc.stdout
    finally:
        (root / "wiki" / "locked.md").chmod(0o644)
    proc = _unprivileged(root, "append", "locked", "another fact")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _unprivileged(root, "index")
    assert "unreadable" not in proc.stdout


# --- ingest never reaches into this machine's network --------------------------------------------------

class _Server:
    """A local http server on 127.0.0.1 that records what it was asked (``routes``: path ->
    (status, headers, body))."""

    def __init__(self, routes: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
        import http.server
        import threading

        hits = self.hits = []
        outer_routes = routes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                status, headers, body = outer_routes.get(self.path, (404, {}, b"no"))
                self.send_response(status)
                for k, v in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_ingest_refuses_loopback_and_private_addresses_cli_and_mcp(root: Path) -> None:
    from tests.mcp.test_mcp_server import call, run

    with _Server({"/page": (200, {}, b"<html>local secret</html>")}) as srv:
        for url in (f"{srv.url}/page", f"http://localhost:{srv.server.server_address[1]}/page",
                    f"http://[::ffff:127.0.0.1]:{srv.server.server_address[1]}/page"):
            rc, out, _ = cli(root, "ingest", "page.html", "--url", url, "--json")
            assert rc == 1 and out["status"] == "invalid", (url, out)
            assert "refused" in out["message"] or "could not fetch" in out["message"], out

        async def body(s) -> None:  # type: ignore[no-untyped-def]
            is_error, text = await call(s, "files_wiki_ingest", filename="page.html", url=f"{srv.url}/page")
            assert is_error and "loopback, private or reserved" in text and "\n" not in text, text

        run(root, body)
        assert srv.hits == []  # nothing was ever fetched
    assert not (root / "raw").exists()
    for host in ("10.0.0.1", "192.168.1.20", "169.254.169.254", "100.64.0.1", "::1", "fc00::1", "0.0.0.0"):
        from curator.engine.write.append import public_address

        assert not public_address(host), host
    assert public_address("93.184.216.34")


def test_ingest_refuses_a_redirect_that_changes_the_scheme(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only here is loopback let through (in process), to serve the redirects from 127.0.0.1.
    from curator.engine.wiki import Wiki
    from curator.engine.write import append as append_mod
    from curator.engine.write.actions import Invalid

    monkeypatch.setattr(append_mod, "public_address", lambda host: host == "127.0.0.1")
    with _Server({"/ok": (200, {}, b"fine"), "/to-ftp": (302, {"Location": "ftp://127.0.0.1/etc/passwd"}, b""),
                  "/to-file": (301, {"Location": "file:///etc/passwd"}, b""),
                  "/to-self": (302, {"Location": "/ok"}, b"")}) as srv:
        assert append_mod.fetch_url(f"{srv.url}/ok") == b"fine"
        assert append_mod.fetch_url(f"{srv.url}/to-self") == b"fine"  # same scheme: followed
        for path in ("/to-ftp", "/to-file"):
            with pytest.raises(Invalid, match=r"redirects from http to|is not allowed"):
                append_mod.fetch_url(f"{srv.url}{path}")
        w = Wiki(root)
        try:
            res = append_mod.ingest(w, "x.txt", url=f"{srv.url}/to-ftp")
        finally:
            w.close()
        assert res.status == "invalid" and "redirects from http to ftp" in res.message
    assert not (root / "raw" / "x.txt").exists()


# --- one hostile input, one line -----------------------------------------------------------------------

def test_a_5000_rule_scope_file_warns_in_one_summary_line(root: Path) -> None:
    rules = "".join(f'[namespaces."n{i}"]\nmode = "bogus"\n' for i in range(5000))
    (root / ".scope.toml").write_text(rules)
    rc, _, err = cli(root, "index")
    assert rc == 0
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "5000 warnings" in lines[0] and "curator scope" in lines[0], err[:500]


def test_the_merge_driver_on_binary_input_reports_a_conflict_without_a_traceback(tmp_path: Path) -> None:
    files = {}
    for name, data in (("base", b"a\0b\xff\n"), ("ours", b"a\0c\xfe\n"), ("theirs", b"a\0d\xfd\n")):
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    proc = subprocess.run([sys.executable, "-m", "curator.engine.sync.merge_driver", str(files["base"]),
                           str(files["ours"]), str(files["theirs"]), "wiki/bin.md"], capture_output=True, text=True)
    assert proc.returncode == 1  # a conflict for git to report
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") <= 2, proc.stderr
    assert files["ours"].read_bytes() == b"a\0c\xfe\n"  # our side kept as it was
    proc = subprocess.run([sys.executable, "-m", "curator.engine.sync.merge_driver", str(files["base"]),
                           str(tmp_path / "missing"), str(files["theirs"])], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_ansi_escapes_in_file_names_are_escaped_in_human_output(root: Path) -> None:
    evil = "wiki/evil\x1b[2J\x1b]0;pwned\x07.md"
    (root / evil).write_text("# Evil\n\nSee [[ann-smith]].\n")
    for args in (("index",), ("lint",), ("neighbors", "ann-smith")):
        rc, out, err = cli(root, *args)
        assert rc == 0, err
        assert "\x1b" not in out and "\x07" not in out, args
        assert "evil\\x1b[2J" in out, (args, out)
    rc, out, _ = cli(root, "index", "--json")
    assert evil in [p["path"] for p in out]  # JSON keeps the real name (escaped by JSON itself)


def _many_inbound(root: Path) -> None:
    for i in range(300):
        (root / "wiki" / f"p{i:03d}.md").write_text(f"# P{i}\n\n{'text ' * 40}[[ann-smith]]\n")


@pytest.mark.parametrize("budget", [600, 900, 2000, 5000, 30_000, 1_000_000])
def test_neighbors_json_as_printed_keeps_to_max_bytes(root: Path, budget: int) -> None:
    _many_inbound(root)
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), "neighbors", "ann-smith",
                           "--max-bytes", str(budget), "--json"], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) <= budget, (budget, len(proc.stdout))  # the whole document, keys and all
    out = json.loads(proc.stdout)
    listed = len(out["inbound"]) + len(out["outgoing"])
    assert listed + out["omitted"] == 300
    if budget >= 1_000_000:
        assert out["truncated"] is False and out["omitted"] == 0 and "note" not in out
        assert out["content"] == (root / "wiki" / "ann-smith.md").read_text("utf-8")
        return
    assert out["truncated"] is True and out["omitted"] > 0
    assert f"{out['omitted']} of 300 neighbours not listed" in out["note"]
    assert f"[truncated at {budget} bytes" in out["note"]
    page = (root / "wiki" / "ann-smith.md").read_text("utf-8")
    if out["page_cut"]:  # the page did not fit whole: its start is there, no neighbour
        assert listed == 0 and page.startswith(out["content"]) and out["content"] != page
    else:
        assert out["content"] == page
        # as many neighbours as fit: one more would not have
        assert len(proc.stdout) + 450 > budget, (budget, len(proc.stdout))  # (an item: ~300 B)


def test_neighbors_json_refuses_a_budget_too_small_for_any_answer(root: Path) -> None:
    rc, _out, err = cli(root, "neighbors", "ann-smith", "--max-bytes", "60", "--json")
    assert rc == 2 and "max_bytes 60 is too small" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_neighbors_text_through_the_mcp_door_keeps_to_max_bytes(root: Path) -> None:
    from mcp import ClientSession

    from tests.mcp.test_mcp_server import call, run

    _many_inbound(root)

    async def body(s: ClientSession) -> None:
        for budget in (300, 1000, 2000, 8000):
            err, text = await call(s, "files_neighbors", slug="ann-smith", max_bytes=budget)
            assert not err, text
            size = len(text.encode("utf-8"))
            assert size <= budget, (budget, size)
            assert f"[truncated at {budget} bytes" in text.splitlines()[-1]
        err, text = await call(s, "files_neighbors", slug="ann-smith", max_bytes=1_000_000)
        assert not err and "truncated" not in text and text.count("\n- P") == 300

    run(root, body)
