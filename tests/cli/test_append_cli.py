"""The write commands: append --json shape and exit codes, ingest, history, undo, recover (docs/design.md §11)."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from curator.engine.write.bootstrap import init_wiki


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def cli(root: Path, *args: str, stdin: str | None = None) -> tuple[int, dict | list | str, str]:
    proc = subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(root), *args],
                          capture_output=True, text=True, input=stdin, timeout=60)
    out: dict | list | str = proc.stdout
    if "--json" in args and proc.stdout.strip():
        out = json.loads(proc.stdout)
    return proc.returncode, out, proc.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return seed_wiki(tmp_path)


def seed_wiki(tmp_path: Path) -> Path:
    """``w``: a wiki with ``wiki/ann-smith.md`` (one fact), committed."""
    root = tmp_path / "w"
    init_wiki(root)
    (root / "wiki").mkdir()
    (root / "wiki" / "ann-smith.md").write_text("# Ann Smith\n\n## Updates\n\n- Ann joined ACME in 2019\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    return root


KEYS = {"status", "created", "page", "commit", "candidates", "matched", "message"}


def test_append_json_shapes_and_exit_codes(root: Path) -> None:
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "ann-smith", "Ann leads payments",
                     "--link", "Payments", "--json")
    assert rc == 0 and isinstance(out, dict) and out.keys() >= KEYS
    assert out["status"] == "appended" and out["created"] is False and out["page"] == "wiki/ann-smith.md"
    assert len(out["commit"]) == 40 and out["candidates"] == [] and out["matched"] is None
    assert git(root, "log", "-1", "--format=%an|%s").strip() == "agent:dudu|wiki_append: ann-smith"

    rc, out, _ = cli(root, "append", "ann-smith", "ann joined acme in 2019", "--json")
    assert rc == 0 and out["status"] == "duplicate" and out["matched"] == "Ann joined ACME in 2019"

    rc, out, _ = cli(root, "append", "ann", "Ann likes tea", "--json")
    assert rc == 0 and out["status"] == "candidates" and out["commit"] is None
    assert out["candidates"][0]["slug"] == "ann-smith" and out["candidates"][0]["score"] >= 0.7
    assert set(out["candidates"][0]) == {"slug", "path", "score"}

    rc, out, _ = cli(root, "append", "ann", "Ann likes tea", "--create-new", "--json")
    assert rc == 0 and out["status"] == "appended" and out["created"] is True and out["page"] == "wiki/ann.md"

    rc, out, _ = cli(root, "append", "!!!", "x", "--json")
    assert rc == 1 and out["status"] == "invalid"

    rc, text, err = cli(root, "append", "ann-smith", "Ann moved to Berlin")
    assert rc == 0 and text.startswith("appended: ") and err == ""
    rc, _, err = cli(root, "append", "only-slug")
    assert rc == 2 and "error" in err
    assert git(root, "status", "--porcelain") == ""


def test_append_denied_exits_1(root: Path) -> None:
    (root / ".scope.toml").write_text('[namespaces."wiki"]\nmode = "operator_only"\n')
    git(root, "add", ".scope.toml")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "scope")
    rc, out, _ = cli(root, "--as", "agent:dudu", "append", "ann-smith", "Ann moved to Berlin", "--json")
    assert rc == 1 and out["status"] == "denied"
    rc, out, _ = cli(root, "append", "ann-smith", "Ann moved to Berlin", "--json")
    assert rc == 0 and out["status"] == "appended"


def test_ingest_file_stdin_and_url_rules(root: Path, tmp_path: Path) -> None:
    src = tmp_path / "notes.txt"
    src.write_bytes(b"raw meeting notes\n")
    rc, out, _ = cli(root, "ingest", "Meeting notes (2024)!.txt", "--file", str(src), "--json")
    assert rc == 0 and out["status"] == "ingested" and out["path"] == "raw/Meeting_notes_2024_.txt"
    assert (root / "raw" / "Meeting_notes_2024_.txt").read_bytes() == b"raw meeting notes\n"
    assert git(root, "log", "-1", "--format=%s").strip() == "ingest: raw/Meeting_notes_2024_.txt"
    rc, out, _ = cli(root, "ingest", "../../escape", "--file", "-", "--json", stdin="x")
    assert rc == 0 and out["path"] == "raw/escape"
    rc, out, _ = cli(root, "ingest", "x", "--url", "file:///etc/passwd", "--json")
    assert rc == 1 and out["status"] == "invalid"
    rc, out, _ = cli(root, "ingest", "x", "--url", "ftp://example.invalid/x", "--json")
    assert rc == 1 and out["status"] == "invalid"
    rc, _, _ = cli(root, "ingest", "x", "--json")
    assert rc == 2  # --file or --url is required
    rc, out, _ = cli(root, "index", "--json")
    assert all(not p["path"].startswith("raw/") for p in out)  # raw sources are not pages


def test_ingest_url_from_loopback_is_refused(root: Path) -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b"<html>served</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/page"
        rc, out, _ = cli(root, "ingest", "page.html", "--url", url, "--json")
    finally:
        server.shutdown()
    assert rc == 1 and out["status"] == "invalid" and "loopback, private or reserved" in out["message"]
    assert hits == [] and not (root / "raw" / "page.html").exists()  # never even asked


def test_history_undo_and_recover(root: Path) -> None:
    cli(root, "--as", "agent:a", "append", "ann-smith", "Ann moved to Berlin", "--json")
    cli(root, "--as", "agent:b", "append", "topic-x", "a fact about x", "--json")
    rc, out, _ = cli(root, "history", "--limit", "3", "--json")
    assert rc == 0 and [e["subject"] for e in out] == ["wiki_append: topic-x", "wiki_append: ann-smith", "seed"]
    assert out[0]["actor"] == "agent:b" and out[0]["paths"] == ["wiki/topic-x.md"] and out[0]["action"] == "wiki_append"
    rc, out, _ = cli(root, "undo", "--json")
    assert rc == 0 and out["status"] == "reverted" and not (root / "wiki" / "topic-x.md").exists()
    assert git(root, "log", "-1", "--format=%s").strip() == "revert: wiki_append: topic-x"
    rc, text, _ = cli(root, "history")
    assert "revert: wiki_append: topic-x" in text

    # an operator deletes a page by accident and commits it: recover rebuilds it from the journal
    git(root, "rm", "-q", "wiki/ann-smith.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "oops")
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["status"] == "recovered"
    assert out["restored"] == [{"page": "wiki/ann-smith.md", "content": "Ann moved to Berlin"}]
    text = (root / "wiki" / "ann-smith.md").read_text()
    assert "- Ann moved to Berlin (added " in text and "# Ann Smith" in text
    assert "topic-x" not in " ".join(p.name for p in (root / "wiki").iterdir())  # undone on purpose
    assert git(root, "log", "-1", "--format=%s").strip() == "recover: journal"
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["status"] == "ok" and out["commit"] is None
    assert git(root, "status", "--porcelain") == ""


def test_recover_commits_an_interrupted_append(root: Path) -> None:
    crash = ("import os,sys\nfrom curator.engine.wiki import Wiki\nfrom curator.engine.write import actions\n"
             "from curator.engine.write.append import append\n"
             "def boom(*a, **k): os._exit(9)\n"
             "actions.Git.commit_paths = boom\n"
             "append(Wiki(sys.argv[1]), 'ann-smith', 'Ann moved to Lisbon')\n")
    proc = subprocess.run([sys.executable, "-c", crash, str(root)], capture_output=True, text=True)
    assert proc.returncode == 9
    assert "Lisbon" in (root / "wiki" / "ann-smith.md").read_text()
    rc, out, _ = cli(root, "recover", "--json")
    assert rc == 0 and out["interrupted"]["status"] == "recovered"
    assert git(root, "log", "-1", "--format=%s").strip() == "recover: wiki_append: ann-smith"
    assert git(root, "status", "--porcelain") == ""
    journal = [json.loads(x) for x in (root / ".curator" / "journal.jsonl").read_text().splitlines()]
    lisbon = [r for r in journal if r.get("content") == "Ann moved to Lisbon"]
    assert len(lisbon) == 1 and lisbon[0]["committed"] is True
