"""Search hits shown to a person: snippets without markdown, scores without e-notation."""

from __future__ import annotations

import pytest

from curator.engine.search.display import format_score, plain_snippet


@pytest.mark.parametrize(("raw", "plain"), [
    ("see [[refund-policy|the «refund» policy]] now", "see the «refund» policy now"),
    ("see [[«Refund» Policy]] now", "see «Refund» Policy now"),
    ("see [[Ledger#Accounts]] and [[#Fees]]", "see Ledger > Accounts and Fees"),
    ("an ![[diagram.png]] here", "an diagram.png here"),
    ("the **«refund»** is __free__ and ~~old~~", "the «refund» is free and old"),
    ("a [doc](other.md) link and `code`", "a doc link and code"),
    ("# «Refund» Policy This policy ## Terms text", "«Refund» Policy This policy Terms text"),
    ("| Fee | Rate | |---|:---:| | «refund» | 0% |", "Fee · Rate · «refund» · 0%"),
    ("…lle]] and [[Dunk", "…lle and Dunk"),
    ("plain text stays plain, #tag too", "plain text stays plain, #tag too"),
])
def test_plain_snippet_shows_what_a_reader_sees(raw: str, plain: str) -> None:
    assert plain_snippet(raw) == plain


@pytest.mark.parametrize(("score", "shown"), [
    (1.545e-06, "0.00000155"), (4.363, "4.36"), (2.94, "2.94"), (0.05, "0.05"),
    (1234.5, "1234"), (12.0, "12"), (0.0, "0"),
])
def test_format_score_is_fixed_notation_with_three_significant_digits(score: float, shown: str) -> None:
    assert format_score(score) == shown
    assert "e" not in format_score(score)
