"""Curator's tests, laid out like ``curator/``: ``engine/<package>/``, ``views/<package>/``, ``cli/``,
``mcp/``; shared helpers (test wikis, the corpus generator, GUI helpers) at this level, benchmarks in
``perf/`` (not run by ``make test``)."""

from pathlib import Path

#: The repository's root (the checkout the tests run from), wherever a test file sits below tests/.
REPO = Path(__file__).resolve().parent.parent
