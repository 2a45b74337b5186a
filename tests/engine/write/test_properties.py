"""Property edits (`curator set`, the properties panel): one action, one commit, only that key."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from curator.cli import main
from curator.engine.policy.actor import OPERATOR, parse_actor
from curator.engine.wiki import Wiki
from curator.engine.write.properties import set_property
from tests.gui_helpers import make_wiki

PAGE = ("---\ntitle: Ann\nlayer: core\ntrust: 0.5\n# owner's note\ncustom_key: {keep: me}\ntags: [a]\n---\n"
        "# Ann\n\nBody stays.\n")


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    return Wiki(make_wiki(tmp_path / "w", {"wiki/ann.md": PAGE, "wiki/other.md": "# Other\n"}))


def log(root: Path) -> list[str]:
    return subprocess.run(["git", "log", "--format=%s|%an"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.splitlines()


@pytest.mark.parametrize(("name", "value", "line"), [
    ("trust", 0.8, "trust: 0.8"), ("layer", "L0", "layer: identity"), ("tags", "x, #y", "tags: [x, y]"),
    ("do_not_inject", "true", "do_not_inject: true"),
])
def test_one_key_one_commit(wiki: Wiki, name: str, value: object, line: str) -> None:
    before = log(wiki.root)
    result = set_property(wiki, OPERATOR, "ann", name, value)
    assert result.ok and result.commit
    text = (wiki.root / "wiki/ann.md").read_text(encoding="utf-8")
    assert line in text
    assert "custom_key: {keep: me}" in text and "# owner's note" in text and "Body stays." in text
    assert log(wiki.root) == [f"set_{name}: wiki/ann.md|operator", *before]
    assert result.changed == ["wiki/ann.md"]
    assert wiki.pages["wiki/ann.md"].meta[name] is not None  # the cache saw the change


@pytest.mark.parametrize(("name", "value"), [
    ("trust", 1.5), ("trust", "high"), ("trust", True), ("layer", "top"), ("tags", "ok, bad tag!"),
    ("do_not_inject", "maybe"), ("title", "x"),
])
def test_invalid_values_change_nothing(wiki: Wiki, name: str, value: object) -> None:
    before = log(wiki.root)
    result = set_property(wiki, OPERATOR, "ann", name, value)
    assert result.status == "invalid" and result.is_error and result.message
    assert (wiki.root / "wiki/ann.md").read_text(encoding="utf-8") == PAGE
    assert log(wiki.root) == before


def test_denied_by_scope_for_an_agent(wiki: Wiki) -> None:
    (wiki.root / ".scope.toml").write_text('[namespaces."wiki"]\nmode = "operator_only"\n', encoding="utf-8")
    result = set_property(wiki, parse_actor("agent:dudu"), "ann", "trust", 0.9)
    assert result.status == "denied"
    assert (wiki.root / "wiki/ann.md").read_text(encoding="utf-8") == PAGE


def test_cli_set_and_exit_codes(wiki: Wiki, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(wiki.root)
    assert main(["--wiki", root, "set", "wiki/ann.md", "trust", "0.3"]) == 0
    assert "trust of wiki/ann.md set to 0.3" in capsys.readouterr().out
    assert main(["--wiki", root, "set", "ann", "trust", "7"]) == 1
    assert main(["--wiki", root, "set", "nobody", "trust", "0.1"]) == 1
    assert "no page 'nobody'" in capsys.readouterr().err
    assert main(["--wiki", root, "set", "ann", "colour", "red"]) == 2
