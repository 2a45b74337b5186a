"""``curator mcp --http``: many agents on one server, each known by its token alone (issue 42).

Every test starts ``python -m curator.cli mcp --http 127.0.0.1:PORT --wiki W`` as a subprocess
and talks to it with the MCP SDK's streamable-HTTP client (or, for what must be refused before
any MCP exchange, with plain HTTP requests).
"""

from __future__ import annotations

import re
import signal
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

import curator
from tests.mcp.http_helpers import (
    add_agent,
    call,
    free_port,
    http_server,
    http_session,
    raw_post,
    wait_until,
)
from tests.mcp.http_helpers import (
    curator as run_curator,
)
from tests.mcp.test_mcp_server import IDENT, git_log, make_wiki

APPEND = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
          "params": {"name": "wiki_append", "arguments": {"slug": "payments", "content": "Forged fact"}}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture
def wiki_root(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "w")
    (root / "departments/hr").mkdir(parents=True)
    (root / "departments/hr/salaries.md").write_text("# Salaries\n\nThe wombatpay band is reviewed yearly.\n",
                                                   encoding="utf-8")
    subprocess.run(["git", *IDENT, "add", "."], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", *IDENT, "commit", "-qm", "hr"], cwd=root, check=True, capture_output=True)
    return root


def run(main: object) -> None:
    try:
        anyio.run(main)  # type: ignore[arg-type]
    except BaseExceptionGroup as group:  # show a failed assertion inside the task groups plainly
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from None


def test_no_token_or_a_wrong_one_is_401_before_any_tool_runs(wiki_root: Path) -> None:
    add_agent(wiki_root, "ann")
    before = git_log(wiki_root)
    with http_server(wiki_root) as (url, _):
        for token in (None, "not-a-token", "x" * 43):
            for message in (INITIALIZE, APPEND):
                answer = raw_post(url, token, message)
                assert answer.status_code == 401, (token, answer.text)
                assert "Bearer" in answer.headers["www-authenticate"]
    assert git_log(wiki_root) == before
    assert "Forged fact" not in (wiki_root / "wiki/payments.md").read_text("utf-8")


def test_a_revoked_token_is_refused_within_two_seconds_without_a_restart(wiki_root: Path) -> None:
    token = add_agent(wiki_root, "ann")
    with http_server(wiki_root) as (url, proc):

        async def main() -> None:
            async with http_session(url, token) as s:
                err, text = await call(s, "wiki_search", query="zebracorn OR payments")
                assert not err, text
                run_curator("--wiki", str(wiki_root), "agents", "revoke", "ann")
                took = wait_until(lambda: raw_post(url, token, INITIALIZE).status_code == 401, 2.0)
                assert took < 2.0
                # the session opened before the revocation is refused too: every request is checked
                with pytest.raises(Exception):  # noqa: B017 (the SDK's client raises its HTTP error)
                    await s.call_tool("wiki_append", {"slug": "payments", "content": "After revocation"})

        run(main)
        assert proc.poll() is None  # the same server, never restarted
    assert "After revocation" not in (wiki_root / "wiki/payments.md").read_text("utf-8")


def test_department_visibility_comes_from_the_token(wiki_root: Path) -> None:
    hr = add_agent(wiki_root, "hanna", "hr")
    sales = add_agent(wiki_root, "sam", "sales")
    with http_server(wiki_root) as (url, _):

        async def main() -> None:
            async with http_session(url, hr) as s:
                err, text = await call(s, "wiki_search", query="wombatpay")
                assert not err and "departments/hr/salaries.md" in text, text
                err, text = await call(s, "wiki_read", page_name="departments/hr/salaries.md")
                assert not err and "wombatpay" in text, text
            async with http_session(url, sales) as s:
                err, text = await call(s, "wiki_search", query="wombatpay")
                assert "salaries" not in text, text
                err, text = await call(s, "wiki_read", page_name="departments/hr/salaries.md")
                assert err and "wombatpay" not in text, text
                err, text = await call(s, "wiki_search", query="zebracorn")
                assert not err and "departments/sales/pipeline.md" in text, text

        run(main)


def test_each_commit_is_authored_by_the_agent_of_its_token(wiki_root: Path) -> None:
    tokens = {agent: add_agent(wiki_root, agent) for agent in ("ann", "bob", "cyd")}
    with http_server(wiki_root) as (url, _):

        async def agent(name: str) -> None:
            async with http_session(url, tokens[name]) as s:
                for i in range(3):
                    err, text = await call(s, "wiki_append", slug="payments",
                                           content=f"{name} recorded settlement fact number {i} today")
                    assert not err and text.startswith("appended"), text

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for name in tokens:
                    tg.start_soon(agent, name)

        run(main)
    log = git_log(wiki_root, "%an <%ae>|%b")
    authored = [line for line in log if "settlement fact" in line or line.startswith("agent:")]
    assert sum(line.startswith("agent:") for line in authored) == 9
    page = (wiki_root / "wiki/payments.md").read_text("utf-8")
    for name in tokens:
        commits = subprocess.run(["git", "log", "--format=%H", f"--author=agent:{name} <"], cwd=wiki_root,
                                 capture_output=True, text=True, check=True).stdout.split()
        assert len(commits) == 3, name
        for sha in commits:
            diff = subprocess.run(["git", "show", "--format=", sha], cwd=wiki_root, capture_output=True,
                                  text=True, check=True).stdout
            added = [ln for ln in diff.splitlines() if ln.startswith("+") and "settlement fact" in ln]
            assert added and all(f"{name} recorded" in ln for ln in added), (name, diff)
        assert page.count(f"{name} recorded settlement fact") == 3


def test_a_session_of_one_agent_cannot_be_used_with_another_agents_token(wiki_root: Path) -> None:
    ann = add_agent(wiki_root, "ann")
    bob = add_agent(wiki_root, "bob")
    with http_server(wiki_root) as (url, _):
        opened = raw_post(url, ann, INITIALIZE)
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        import httpx2

        answer = httpx2.post(url, headers={"Authorization": f"Bearer {bob}", "mcp-session-id": session_id,
                                           "Accept": "application/json, text/event-stream",
                                           "Content-Type": "application/json"},
                             json=APPEND, timeout=30.0)
        assert answer.status_code >= 400, answer.text
    assert "Forged fact" not in (wiki_root / "wiki/payments.md").read_text("utf-8")


def test_the_server_reports_curators_version(wiki_root: Path) -> None:
    token = add_agent(wiki_root, "ann")
    with http_server(wiki_root) as (url, _):
        opened = raw_post(url, token, INITIALIZE)
        assert opened.status_code == 200, opened.text
        assert re.search(r'"serverInfo":\{"name":"curator"[^}]*"version":"' + re.escape(curator.__version__) + '"',
                         opened.text), opened.text


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "[::]", "example.org"])
def test_another_address_without_tls_or_proxy_is_refused_in_one_line(wiki_root: Path, host: str) -> None:
    done = run_curator("--wiki", str(wiki_root), "mcp", "--http", f"{host}:{free_port()}", check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "without TLS" in lines[0] and "--behind-proxy" in lines[0], done.stderr


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_behind_a_proxy_another_address_is_served_with_a_warning(wiki_root: Path, stop: int) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "curator.cli", "mcp", "--http", f"0.0.0.0:{port}",
                             "--behind-proxy", "--wiki", str(wiki_root)],
                            cwd=Path(curator.__file__).parent.parent, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        warning = proc.stderr.readline()
        assert warning.startswith("warning: serving plain HTTP on 0.0.0.0"), warning
        assert "serving MCP at http://0.0.0.0:" in proc.stderr.readline()
    finally:
        proc.send_signal(stop)
        assert proc.wait(30) == 0  # a clean stop (Ctrl-C included), not death by the signal


def test_with_tls_another_address_is_served_over_https(wiki_root: Path, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    token = add_agent(wiki_root, "ann")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "curator.cli", "mcp", "--http", f"0.0.0.0:{port}",
                             "--tls-cert", str(cert), "--tls-key", str(key), "--wiki", str(wiki_root)],
                            cwd=Path(curator.__file__).parent.parent, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(f"serving MCP at https://0.0.0.0:{port}/mcp"), line  # no warning first
        import httpx2

        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        answer = httpx2.post(f"https://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=headers,
                             verify=ssl.create_default_context(cafile=str(cert)), timeout=30.0)
        assert answer.status_code == 200 and '"name":"curator"' in answer.text, answer.text
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


@pytest.mark.parametrize("args, says", [
    (["mcp", "--http", "127.0.0.1:1", "--agent", "ann"], "drop --agent"),
    (["--as", "agent:ann", "mcp", "--http", "127.0.0.1:1"], "drop --agent"),
    (["mcp", "--http", "127.0.0.1:1", "--tls-cert", "c.pem"], "both --tls-cert and --tls-key"),
    (["mcp", "--agent", "ann", "--behind-proxy"], "apply to --http only"),
    (["mcp", "--http", "127.0.0.1:99999"], "HOST:PORT"),
    (["mcp"], "--agent ID (stdio) or --http HOST:PORT"),
])
def test_options_that_do_not_fit_together_are_one_line_usage_errors(wiki_root: Path, args: list[str],
                                                                     says: str) -> None:
    done = run_curator("--wiki", str(wiki_root), *args, check=False)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr


def test_mcp_help_offers_only_what_applies_to_it() -> None:
    text = run_curator("mcp", "--help").stdout
    for option in ("--http", "--tls-cert", "--tls-key", "--behind-proxy", "--agent", "--department", "--wiki"):
        assert option in text, option
    for option in ("--as", "--json", "--shared"):
        assert option not in text, option


def appends_until_stopped(url: str, tokens: dict[str, str], probe: str, stop: Callable[[], None],
                          sent: list[str] | None = None) -> list[str]:
    """Every agent of ``tokens`` appends facts over HTTP until the server goes away; ``stop`` is
    called once 8 are acknowledged. The facts acknowledged (``sent``: every fact asked)."""
    acknowledged: list[str] = []

    async def agent(name: str) -> None:
        try:
            async with http_session(url, tokens[name]) as s:
                for i in range(200):
                    fact = f"Agent {name} noted {probe} probe {i} as {uuid.uuid4().hex}"
                    if sent is not None:
                        sent.append(fact)
                    err, text = await call(s, "wiki_append", slug="payments", content=fact)
                    if not err and text.startswith("appended"):
                        acknowledged.append(fact)
        except Exception:  # the server went away mid-session: what was acknowledged counts
            return

    async def stop_soon() -> None:
        with anyio.fail_after(60):
            while len(acknowledged) < 8:
                await anyio.sleep(0.02)
        stop()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_soon)
            for name in tokens:
                tg.start_soon(agent, name)

    run(main)
    return acknowledged


def committed_page(root: Path) -> str:
    return subprocess.run(["git", "show", "HEAD:wiki/payments.md"], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_sigterm_during_appends_keeps_every_acknowledged_fact_exactly_once(wiki_root: Path) -> None:
    tokens = {f"a{i}": add_agent(wiki_root, f"a{i}") for i in range(4)}
    with http_server(wiki_root) as (url, proc):
        start = time.monotonic()
        acknowledged = appends_until_stopped(url, tokens, "shutdown", lambda: proc.send_signal(signal.SIGTERM))
        assert proc.wait(30) == 0
        assert time.monotonic() - start < 60
    assert len(acknowledged) >= 8
    page = (wiki_root / "wiki/payments.md").read_text("utf-8")
    for fact in acknowledged:
        assert page.count(fact) == 1, fact
    # every acknowledged fact is committed, not just on disk
    committed = committed_page(wiki_root)
    assert all(committed.count(fact) == 1 for fact in acknowledged)


def test_a_killed_server_keeps_every_acknowledged_fact_and_no_half_fact(wiki_root: Path) -> None:
    """SIGKILL mid-appends (no chance to finish anything): every acknowledged fact is on the page
    exactly once after the next command's recovery, and an unacknowledged one is whole or absent."""
    tokens = {f"k{i}": add_agent(wiki_root, f"k{i}") for i in range(4)}
    sent: list[str] = []
    with http_server(wiki_root) as (url, proc):
        acknowledged = appends_until_stopped(url, tokens, "kill", lambda: proc.send_signal(signal.SIGKILL), sent)
        proc.wait(30)
    # the next command recovers what the killed process left (its journal), then answers
    subprocess.run([sys.executable, "-m", "curator.cli", "--wiki", str(wiki_root), "index"], check=True,
                   capture_output=True, timeout=120)
    committed = committed_page(wiki_root)
    assert len(acknowledged) >= 8
    assert all(committed.count(fact) == 1 for fact in acknowledged)
    lines = [line for line in committed.splitlines() if "kill probe" in line]
    assert all(any(fact in line for fact in sent) for line in lines), lines  # no half-written fact
    assert len(lines) == len(set(lines))
