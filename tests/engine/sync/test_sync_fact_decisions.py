"""The operator's decisions about facts stick across a restart and a sync (issue 41): clone ``a``
keeps both facts of a conflict and keeps a group of similar facts; after ``a`` and then ``b`` sync,
a fresh ``curator`` in ``b`` reports neither again, while an unrelated conflict stays listed. A
decision file written with plain git by someone who is not an operator is held by the sync, so it
hides nothing."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from curator.cli import main
from curator.engine.facts.conflict_queue import fact_conflicts
from curator.engine.facts.conflicts import decision_key
from curator.engine.facts.decisions import DECISIONS_FILE, keep_all, resolve
from curator.engine.facts.similar import find_similar
from curator.engine.policy.actor import OPERATOR
from curator.engine.sync.remote import decide_held, sync
from tests.sync_helpers import GIT_ID, Net, git, make_net

REFUND_30 = "Refunds are accepted within 30 days of purchase."
REFUND_14 = "Refunds are accepted within 14 days of purchase."
TELEMETRY_ON = "Telemetry is enabled in the desktop build."
TELEMETRY_OFF = "Telemetry is disabled in the desktop build."
PAGES = {
    "wiki/refunds.md": f"# Refunds\n\n- {REFUND_30}\n",
    "wiki/policy.md": f"# Policy\n\n- {REFUND_14}\n",
    "wiki/desktop.md": f"# Desktop\n\n- {TELEMETRY_ON}\n",
    "wiki/privacy.md": f"# Privacy\n\n- {TELEMETRY_OFF}\n",
    "wiki/team.md": "# Team\n\n- The team lunch is paid for by the company on Fridays.\n",
    "wiki/office.md": "# Office\n\nOn Fridays the company pays for the team's lunch.\n",
}


@pytest.fixture
def net(tmp_path: Path) -> Iterator[Net]:
    net = make_net(tmp_path, PAGES)
    yield net
    net.close()


def cli(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> list[dict[str, Any]]:
    """``curator --wiki ROOT ... --json`` in a fresh Wiki of its own (as after a restart)."""
    capsys.readouterr()
    code = main(["--wiki", str(root), *argv, "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    result: list[dict[str, Any]] = json.loads(out)
    return result


def conflict_texts(capsys: pytest.CaptureFixture[str], root: Path) -> list[set[str]]:
    return [{f["text"] for f in c["facts"]} for c in cli(capsys, root, "facts", "conflicts")]


def lunch_listed(capsys: pytest.CaptureFixture[str], root: Path) -> bool:
    return any("lunch" in f["text"] for g in cli(capsys, root, "facts", "similar") for f in g["facts"])


def test_kept_both_and_kept_all_reach_the_other_clone(capsys: pytest.CaptureFixture[str], net: Net) -> None:
    refunds = next(c for c in fact_conflicts(net.a, OPERATOR) if {c.a.text, c.b.text} == {REFUND_30, REFUND_14})
    assert not resolve(net.a, OPERATOR, refunds, "both").status.refused
    lunch = next(g for g in find_similar(net.a, OPERATOR) if any("lunch" in f.text for f in g.facts))
    assert not keep_all(net.a, OPERATOR, lunch).status.refused
    assert sync(net.a, OPERATOR).status == "pushed"
    b = net.tmp / "b"
    # before its sync, b still reports both (what follows is the sync's doing)
    assert {REFUND_30, REFUND_14} in conflict_texts(capsys, b) and lunch_listed(capsys, b)
    pulled = sync(net.b, OPERATOR)
    assert pulled.status in ("pulled", "merged"), pulled.message
    net.b.close()
    assert git(b, "status", "--porcelain") == ""
    found = conflict_texts(capsys, b)
    assert {REFUND_30, REFUND_14} not in found
    assert {TELEMETRY_ON, TELEMETRY_OFF} in found  # an unrelated conflict is still reported
    assert not lunch_listed(capsys, b)


def test_a_decision_file_from_a_non_operator_hides_nothing(capsys: pytest.CaptureFixture[str], net: Net) -> None:
    b = net.tmp / "b"
    forged = {"version": 1, "similar_kept": [],
              "both_true": [{"facts": list(decision_key(TELEMETRY_ON, TELEMETRY_OFF))}]}
    (b / DECISIONS_FILE).write_text(json.dumps(forged), encoding="utf-8")
    git(b, "add", DECISIONS_FILE)
    subprocess.run(["git", *GIT_ID, "-c", "user.name=agent:mallory", "commit", "-qm", "hide a conflict"],
                   cwd=b, check=True, capture_output=True)
    git(b, "push", "-q", "origin", "main")
    a = net.a.root
    assert {TELEMETRY_ON, TELEMETRY_OFF} in conflict_texts(capsys, a)
    held = sync(net.a, OPERATOR)
    assert held.status == "held" and f"changes {DECISIONS_FILE}" in held.message, held.message
    assert not (a / DECISIONS_FILE).exists()
    net.a.close()
    assert {TELEMETRY_ON, TELEMETRY_OFF} in conflict_texts(capsys, a)  # still reported after a restart
    # the forged file would hide it, were it accepted: only the operator's choice lets it in
    from curator.engine.wiki import Wiki

    wiki = Wiki(a)
    try:
        assert not decide_held(wiki, OPERATOR, keep=True).is_error
    finally:
        wiki.close()
    assert {TELEMETRY_ON, TELEMETRY_OFF} not in conflict_texts(capsys, a)
