"""A long answer made terminal-safe a block at a time (curator.commands.invocation.terminal_safe)
shows exactly what showing it whole does: every control and format character escaped wherever it
falls (inside a block, at a block's edge, a "\r\n" kept), the printable rest as it is."""

from __future__ import annotations

import pytest

from curator.commands import invocation
from curator.commands.invocation import _CONTROL, terminal_safe
from curator.engine.corpus.lookalike import escape_controls


def whole(text: str) -> str:
    """The answer made safe in one piece (what terminal_safe did before it worked by blocks)."""
    text = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return text if text.isascii() else escape_controls(text, keep_lines=True)


@pytest.mark.parametrize("block", [64, 1 << 16])
def test_a_long_answer_is_made_safe_block_by_block_as_whole(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invocation, "SAFE_BLOCK", block)
    lines = [f"wiki/page-{i}.md\tdeep\t付款流程 {i}\u3000title" for i in range(10000)]
    lines[7] += " \x1b[2J cleared"  # (inside the first block)
    lines[1200] = "\u202eyaP fo sutats\u200b"  # (a bidirectional override, a zero-width space)
    lines[2500] += "\rforged line"  # (a lone carriage return)
    lines[3000] += "\r"  # ("\r\n": a line break as Windows writes it, kept)
    lines[9999] += "\x07\u2028\x9b"
    text = "\n".join(lines) + "\n"
    assert len(text) > 4 * block
    safe = terminal_safe(text)
    assert safe == whole(text)
    for raw in ("\x1b", "\u202e", "\u200b", "\x07", "\u2028", "\x9b"):
        assert raw not in safe
    assert "\\x1b[2J cleared" in safe and "<U+202E>yaP" in safe and "\\rforged line" in safe
    assert "title\r\n" in safe and "\u3000title" in safe  # (the ideographic space is printed as it is)
    printable = "\n".join(f"wiki/页面-{i}.md\tdeep" for i in range(10000))
    assert terminal_safe(printable) == printable == whole(printable)
