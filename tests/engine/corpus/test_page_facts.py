"""Every fact of a page (issue 41): list items with their continuation lines and prose paragraphs,
never the frontmatter, headings, tables or code; each with its line and its ``(added ...)`` date."""

from __future__ import annotations

from curator.engine.corpus.facts import page_facts

PAGE = """---
title: Payments
layer: core
---
# Payments

The refund window is 30 days for
every card payment.

## Updates

- Failed webhooks are retried 3 times by the payments service [[webhooks]] (added 2026-01-02)
- A second fact that goes on
  over two lines here
- [ ] a todo item with words
1. numbered fact with some words
- TODO

| refunds | days |
|---|---|
| card payments | 30 |

```
code is never a fact here
```

    indented code is not a fact either

> [!warning] Careful with the ledger close
> It runs at six every morning.
"""


def test_facts_are_items_and_paragraphs_with_their_lines_and_dates() -> None:
    facts = page_facts("wiki/payments.md", PAGE)
    assert [(f.line, f.text, f.added) for f in facts] == [
        (7, "The refund window is 30 days for every card payment.", None),
        (12, "Failed webhooks are retried 3 times by the payments service [[webhooks]]", "2026-01-02"),
        (13, "A second fact that goes on over two lines here", None),
        (15, "a todo item with words", None),
        (16, "numbered fact with some words", None),
        (29, "Careful with the ledger close It runs at six every morning.", None),
    ]


def test_a_facts_key_follows_its_words_not_its_line() -> None:
    before = {f.text: f.key for f in page_facts("wiki/p.md", PAGE)}
    moved = {f.text: f.key for f in page_facts("wiki/p.md", "# Moved\n\nIntro line of the page here.\n\n" + PAGE)}
    assert all(moved[text] == key for text, key in before.items())
    assert page_facts("wiki/q.md", PAGE)[0].key != page_facts("wiki/p.md", PAGE)[0].key
    crlf = page_facts("wiki/p.md", PAGE.replace("\n", "\r\n"))
    assert [(f.line, f.text) for f in crlf] == [(f.line, f.text) for f in page_facts("wiki/p.md", PAGE)]


def test_sentences_written_without_spaces_are_facts() -> None:
    facts = page_facts("wiki/zh.md", "# 服务器\n\n- 服务器每天凌晨两点自动重启。\n- 好的\n- サーバーは毎晩再起動します。\n")
    assert [f.text for f in facts] == ["服务器每天凌晨两点自动重启。", "サーバーは毎晩再起動します。"]
