"""Context injection (docs/design.md §7): what an agent's prompt receives from the wiki."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.read.agent_context import DEFAULT_BUDGET, build_context, layer_header, render_page
from curator.engine.wiki import Wiki

AGENT = Actor("agent", "bot", "sales")


def write(root: Path, rel: str, body: str, **meta: object) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "".join(f"{k}: {v}\n" for k, v in meta.items())
    path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")


class HidePolicy:
    def can_read(self, actor: Actor, path: str) -> bool:
        return not path.startswith("secret/")

    def check_write(self, actor: Actor, path: str) -> object:  # pragma: no cover - unused here
        raise AssertionError


@pytest.fixture()
def wiki(tmp_path: Path) -> Wiki:
    root = tmp_path / "w"
    write(root, "wiki/who.md", "# Who I am\n\nI am the billing agent.\n", title="Who I am", layer="identity",
          trust=0.9)
    write(root, "wiki/voice.md", "Be brief.\n", title="Voice", layer="L0", trust=0.5)
    write(root, "wiki/rules.md", "Refunds need two approvals.\n", title="Rules", layer="core", trust=0.8)
    write(root, "wiki/payments.md", "Payments settle in three days.\n", title="Payments", layer="core",
          trust=0.6)
    write(root, "wiki/huge.md", "x" * 6000 + "\n", title="Huge", layer="core", trust=0.7)
    write(root, "wiki/private.md", "Never inject me.\n", title="Private", layer="core", do_not_inject="true")
    write(root, "auto/filed.md", "Auto-filed.\n", title="Filed", layer="core")
    write(root, "secret/plan.md", "Secret plan.\n", title="Plan", layer="identity", trust=1.0)
    write(root, "wiki/deep.md", "Deep page.\n", title="Deep", layer="deep")
    write(root, "wiki/ctx.md", "Context page.\n", title="Ctx", layer="context")
    w = Wiki(root)
    w.policy = HidePolicy()
    yield w
    w.close()


def test_identity_then_core_with_headers_and_blocks(wiki: Wiki) -> None:
    result = build_context(wiki, AGENT)
    text = result.text
    assert text.startswith(layer_header("identity"))
    assert text.index("### Wiki — identity") < text.index("## Who I am") < text.index("## Voice")
    assert text.index("## Voice") < text.index("### Wiki — core") < text.index("## Rules")
    assert text.index("## Rules") < text.index("## Huge") < text.index("## Payments")  # trust order
    assert "\n# Who I am" not in text  # the heading repeating the title is dropped
    assert "## Who I am\n\nI am the billing agent.\n\n## Voice" in text
    for absent in ("Secret plan", "Never inject", "Auto-filed", "Deep page", "Context page"):
        assert absent not in text
    assert [p.path for p in result.included] == ["wiki/who.md", "wiki/voice.md", "wiki/rules.md",
                                                 "wiki/huge.md", "wiki/payments.md"]
    reasons = {p.path: p.reason for p in result.skipped}
    assert reasons == {"wiki/private.md": "do_not_inject", "auto/filed.md": "auto-filed"}
    assert result.bytes == len(text.encode()) <= DEFAULT_BUDGET


def test_operator_sees_every_page(wiki: Wiki) -> None:
    assert "Secret plan" in build_context(wiki, OPERATOR).text


@pytest.mark.parametrize("budget", [0, 1, 10, 30, 60, 100, 150, 200, 300, 1000, 5000, 6100, 6200, 8000, 20000])
def test_budget_is_never_exceeded(wiki: Wiki, budget: int) -> None:
    result = build_context(wiki, AGENT, budget=budget)
    assert len(result.text.encode("utf-8")) <= budget
    assert result.bytes <= budget
    included = {p.path for p in result.included}
    for page in result.included:
        assert render_page(page.title, "").split("\n")[0] in result.text
    assert not included & {p.path for p in result.skipped}


def test_a_page_larger_than_the_budget_is_skipped_and_smaller_ones_fill(wiki: Wiki) -> None:
    result = build_context(wiki, AGENT, budget=1000)
    skipped = {p.path: p for p in result.skipped}
    assert skipped["wiki/huge.md"].reason == "over budget"
    assert skipped["wiki/huge.md"].bytes > 6000
    # Huge comes before Payments in core, yet Payments still made it in after Huge was skipped.
    assert [p.path for p in result.included][-2:] == ["wiki/rules.md", "wiki/payments.md"]
    assert "x" * 100 not in result.text


def test_output_is_deterministic_and_sizes_add_up(wiki: Wiki) -> None:
    first = build_context(wiki, AGENT, budget=7000)
    again = build_context(wiki, AGENT, budget=7000)
    assert first.text == again.text
    assert first.to_json() == again.to_json()
    blocks = sum(p.bytes for p in first.included)
    headers = sum(len(layer_header(layer).encode()) for layer in ("identity", "core"))
    separators = len(first.included) + 2 - 1
    assert first.bytes == blocks + headers + separators


def test_query_ranks_pages_within_each_layer_first(wiki: Wiki) -> None:
    plain = build_context(wiki, AGENT)
    assert plain.text.index("## Rules") < plain.text.index("## Payments")
    ranked = build_context(wiki, AGENT, query="payments settle")
    assert ranked.text.index("## Payments") < ranked.text.index("## Rules") < ranked.text.index("## Huge")
    assert ranked.text.index("### Wiki — identity") < ranked.text.index("### Wiki — core")  # layers stay
    assert build_context(wiki, AGENT, query="   ").text == plain.text


def test_a_layer_without_room_gets_no_header(wiki: Wiki) -> None:
    identity_only = len(build_context(wiki, AGENT, budget=100).text)
    assert "### Wiki — core" not in build_context(wiki, AGENT, budget=identity_only).text
    assert build_context(wiki, AGENT, budget=10).text == ""


def test_json_shape(wiki: Wiki) -> None:
    data = build_context(wiki, AGENT, budget=1000).to_json()
    assert set(data) == {"text", "bytes", "budget", "included", "skipped"}
    assert set(data["included"][0]) == {"path", "title", "layer", "bytes"}
    assert {"path", "title", "layer", "bytes", "reason"} <= set(data["skipped"][0])
