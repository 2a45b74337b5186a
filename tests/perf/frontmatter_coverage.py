"""How many pages' frontmatter the fast path reads, per corpus profile, and what it hands to PyYAML.

    python -m tests.perf.frontmatter_coverage [--pages N] [--seed S] [--top K]

Generates each profile of tests/corpus.py in a temporary folder, counts the blocks
``frontmatter.fast_load`` answers, and groups the refused ones by the first line that made it
refuse (letters and digits folded to ``w``, so ``title: 2024 Ember`` and ``title: 2025 Opal``
count as one shape, and so do runs of words). Not a test: pytest does not collect tests/perf by default, and this file
has no tests in it.
"""

from __future__ import annotations

import argparse
import collections
import re
import tempfile
from pathlib import Path

from curator.engine.corpus import frontmatter
from curator.engine.corpus.page import decode
from tests.corpus import PROFILES, generate

_WORD = re.compile(r"[^\W_]+")
_WORDS = re.compile(r"w(?: w)+")


def refusing_line(raw: str) -> str:
    """The first line whose addition makes the fast path refuse the block."""
    lines = raw.split("\n")
    for k in range(1, len(lines) + 1):
        if frontmatter.fast_load("\n".join(lines[:k])) is None:
            return lines[k - 1]
    # refused only as a whole (e.g. a list item that later turns out to be nested)
    return lines[-1]


def measure(root: Path, pages: list[str]) -> tuple[int, int, collections.Counter[str], dict[str, str]]:
    total = accepted = 0
    shapes: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for path in pages:
        raw = frontmatter.split(decode((root / path).read_bytes()).text).raw
        if raw is None or not raw.strip():
            continue
        total += 1
        if frontmatter.fast_load(raw) is not None:
            accepted += 1
            continue
        line = refusing_line(raw)
        shape = _WORDS.sub("w w…", _WORD.sub("w", line))
        shapes[shape] += 1
        examples.setdefault(shape, line)
    return total, accepted, shapes, examples


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--top", type=int, default=10, help="refusal shapes listed per profile")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for profile in PROFILES:
            info = generate(Path(tmp) / profile, args.pages, seed=args.seed, profile=profile)
            total, accepted, shapes, examples = measure(info.root, info.pages)
            share = accepted / total if total else 1.0
            print(f"{profile}: fast path reads {accepted} of {total} frontmatter blocks ({share:.1%})")
            for shape, count in shapes.most_common(args.top):
                print(f"  {count:6d}  {shape!r}  e.g. {examples[shape]!r}")


if __name__ == "__main__":
    main()
