"""The search query language and the text rules the full-text index shares with it (docs/design.md §7).

Query language (any text is accepted; what cannot be understood is ignored, except a filter that
could never match, which is a problem of the query, see :attr:`Query.problem`):

- ``payment flow``: every word must match (AND); words match whole tokens, case-insensitively,
  diacritics folded (``cafe`` finds ``Café``).
- ``"payment flow"``: a phrase (the words next to each other in this order).
- ``invoice OR receipt``: either side (``OR`` in capitals joins the terms on both sides).
- ``-draft``, ``-"old plan"``: pages containing this are left out.
- ``pay*``: a prefix.
- Filters: ``layer:core`` (also ``l0``..``l3``; several ``layer:`` filters mean any of them),
  ``tag:billing`` (also matches nested ``billing/...`` tags), ``path:ops`` (a case-insensitive
  part of the path; ``*`` and ``?`` make it a glob over the whole path), ``trust:>=0.5`` (also
  ``>``, ``<``, ``<=``, ``=``; a bare number means ``>=``). ``-tag:``, ``-path:`` and ``-layer:``
  exclude. Other ``word:word`` text is searched as words. An unknown layer (``layer:bogus``) and a
  trust that is not a number from 0 to 1 (``trust:>=abc``, ``trust:>=7``, ``-trust:...``) answer
  "0 hits" for a reason the user cannot see, so they are problems, as ``--layer bogus`` is.

The MATCH expression for SQLite FTS5 is built here from the parsed terms, every term quoted, so no
user input can reach FTS5 as syntax (and none can raise an FTS syntax error).

CJK: unicode61 keeps a run of CJK characters as one token and the trigram tokenizer needs three
characters, so neither finds ``付款`` inside ``付款流程``. Runs of CJK characters are therefore
rewritten, both in the indexed text and in queries, as their overlapping bigrams followed by the
run's last character (``付款流程`` -> ``付款 款流 流程 程``). A query run becomes the phrase of its
bigrams, which matches anywhere inside a longer run; a single character becomes a prefix query.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from curator.engine.corpus.page import parse_layer

#: Han, kana, Hangul, bopomofo and CJK compatibility/extension blocks (punctuation excluded: it
#: separates words like any other punctuation).
CJK_CHARS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """A run of CJK characters (compiled on first use: the class costs ~4 ms to compile, and
    every command imports this module, most of them to search nothing)."""
    return re.compile(f"[{CJK_CHARS}]+")


@functools.cache
def _segment() -> re.Pattern[str]:
    """A CJK run or a run of anything else (compiled on first use, like :func:`_cjk_run`)."""
    return re.compile(f"([{CJK_CHARS}]+)|([^{CJK_CHARS}]+)")


#: A token as FTS5's unicode61 sees it: a run of letters and digits.
_WORD = re.compile(r"[^\W_]+")
#: A letter or digit that is not CJK (the boundary of a Latin-like token).
_LATIN = f"[^\\W_{CJK_CHARS}]"

MAX_QUERY_CHARS = 2000  # longer input is cut: nobody types more, and it bounds the FTS work
MAX_TERMS = 32  # words after this are ignored, for the same reason

FILTER_KEYS = frozenset({"layer", "tag", "path", "trust"})
_CHUNK = re.compile(r'(-?)(?:([A-Za-z]+):)?(?:"([^"]*)(?:"|$)(\*?)|([^\s"]+))')
_TRUST = re.compile(r"^(>=|<=|>|<|=)?\s*([0-9]*\.?[0-9]+)$")
_NO_LAYER = "\x00none"  # an unknown layer name: the filter matches nothing


# --- text rules shared by the index and the queries ------------------------------------

def cjk_tokens(run: str) -> list[str]:
    """``付款流程`` -> ``['付款', '款流', '流程', '程']`` (bigrams, then the run's last character)."""
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def _expand_run(m: re.Match[str]) -> str:
    return " " + " ".join(cjk_tokens(m.group())) + " "


def index_text(text: str) -> str:
    """The text as the FTS index stores it: CJK runs rewritten as bigrams (see module doc)."""
    return _cjk_run().sub(_expand_run, text)


def fold(text: str) -> str:
    """Lower case without diacritics, like unicode61 with ``remove_diacritics 2``."""
    return "".join(fold_char(ch) for ch in text) if not text.isascii() else text.lower()


def fold_char(ch: str) -> str:
    if ch.isascii():
        return ch.lower()
    decomposed = unicodedata.normalize("NFD", ch)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _quote(tokens: Sequence[str], prefix: bool) -> str:
    # Tokens hold only letters and digits, but a stray quote must never end the string early.
    body = " ".join(t.replace('"', '""') for t in tokens)
    return f'"{body}"' + ("*" if prefix else "")


# --- parsed queries ---------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class Term:
    """A word, prefix or phrase as the user wrote it."""

    text: str
    phrase: bool = False
    prefix: bool = False

    @property
    def words(self) -> list[str]:
        return _WORD.findall(self.text)

    def fts(self) -> str | None:
        """This term as a quoted FTS5 phrase, or None when it holds no letters or digits."""
        segments: list[tuple[str, bool]] = []
        for word in self.words:
            for cjk, other in _segments(word):
                segments.append((cjk, True) if cjk else (other, False))
        if not segments:
            return None
        tokens: list[str] = []
        prefix = self.prefix
        for i, (seg, is_cjk) in enumerate(segments):
            if not is_cjk:
                tokens.append(seg)
            elif i < len(segments) - 1:
                # Something follows in the phrase, so this run must end where the indexed run
                # ends: match its whole indexed form, last character included.
                tokens.extend(cjk_tokens(seg))
            elif len(seg) >= 2:
                tokens.extend(cjk_tokens(seg)[:-1])
            else:
                tokens.append(seg)
                prefix = True  # one character: any bigram starting with it, or a run's last
        return _quote(tokens, prefix)


@dataclass(slots=True)
class Query:
    """A parsed query: text terms (AND of OR-groups), exclusions and metadata filters."""

    text: str = ""
    groups: list[list[Term]] = field(default_factory=list)
    excluded: list[Term] = field(default_factory=list)
    layers: set[str] = field(default_factory=set)
    not_layers: set[str] = field(default_factory=set)
    tags: list[str] = field(default_factory=list)
    not_tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    not_paths: list[str] = field(default_factory=list)
    trust: list[tuple[str, float]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # parts that were not understood
    problems: list[str] = field(default_factory=list)  # filters that could never match, one line each

    @property
    def problem(self) -> str | None:
        """The first filter that could never match, said in one line (None: there is none)."""
        return self.problems[0] if self.problems else None

    @property
    def has_filters(self) -> bool:
        return bool(self.layers or self.not_layers or self.tags or self.not_tags or self.paths
                    or self.not_paths or self.trust)

    @property
    def is_empty(self) -> bool:
        """Nothing to search for: no terms, no exclusions, no filters."""
        return not (self.groups or self.excluded or self.has_filters)

    def positive_match(self) -> str | None:
        """FTS5 MATCH for the required terms, or None when there are none."""
        parts = []
        for group in self.groups:
            alts = [a for a in (t.fts() for t in group) if a]
            if alts:
                parts.append(alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")")
        return " AND ".join(parts) or None

    def excluded_match(self) -> str | None:
        """FTS5 MATCH for any excluded term, or None."""
        alts = [a for a in (t.fts() for t in self.excluded) if a]
        return " OR ".join(alts) or None

    def match(self) -> str | None:
        """The whole FTS5 MATCH expression (None when the query has no required terms)."""
        positive, negative = self.positive_match(), self.excluded_match()
        if positive and negative:
            return f"({positive}) NOT ({negative})"
        return positive

    def add_layer(self, value: str, negate: bool = False) -> None:
        layer, problem = parse_layer(value)
        (self.not_layers if negate else self.layers).add(_NO_LAYER if problem else layer)
        if problem:
            self.problems.append(f"unknown layer {value!r} in {'-' if negate else ''}layer:{value}: "
                                 f"use identity, core, context or deep (or l0..l3)")

    def accepts(self, path: str, layer: str, trust: float, tags: Sequence[str]) -> bool:
        """Whether a page passes the metadata filters (the text is FTS5's business)."""
        if self.layers and layer not in self.layers:
            return False
        if layer in self.not_layers:
            return False
        for op, value in self.trust:
            if not _compare(trust, op, value):
                return False
        if self.tags or self.not_tags:
            folded = [t.lower() for t in tags]
            if not all(_has_tag(folded, t) for t in self.tags):
                return False
            if any(_has_tag(folded, t) for t in self.not_tags):
                return False
        if self.paths or self.not_paths:
            lowered = path.lower()
            if not all(_path_matches(lowered, p) for p in self.paths):
                return False
            if any(_path_matches(lowered, p) for p in self.not_paths):
                return False
        return True

    def highlighter(self, ascii_text: bool = False) -> re.Pattern[str] | None:
        """A pattern over :func:`fold`-ed text that finds the query's words (for snippets);
        ``ascii_text``: one for ASCII text only, which finds the same there (a letter is then
        ``[A-Za-z0-9]``: the class of non-CJK letters alone takes ~4 ms to compile)."""
        latin = "[A-Za-z0-9]" if ascii_text else _LATIN
        alternatives: set[str] = set()
        for group in self.groups:
            for term in group:
                words = _WORD.findall(fold(term.text))
                for i, word in enumerate(words):
                    last = i == len(words) - 1
                    for cjk, other in _segments(word):
                        if cjk:
                            alternatives.add(re.escape(cjk))
                        else:
                            tail = f"{latin}*" if term.prefix and last else ""
                            alternatives.add(f"(?<!{latin}){re.escape(other)}{tail}(?!{latin})")
        if not alternatives:
            return None
        return re.compile("|".join(sorted(alternatives, key=lambda a: (-len(a), a))))


def _segments(word: str) -> list[tuple[str, str]]:
    """``_segment().findall(word)``: an ASCII word is one run of other characters (its pattern
    is not compiled for it)."""
    return [("", word)] if word and word.isascii() else _segment().findall(word)


def _compare(value: float, op: str, limit: float) -> bool:
    if op == ">":
        return value > limit
    if op == "<":
        return value < limit
    if op == "<=":
        return value <= limit + 1e-9
    if op == "=":
        return abs(value - limit) < 1e-9
    return value >= limit - 1e-9


def _has_tag(tags: Sequence[str], wanted: str) -> bool:
    return any(t == wanted or t.startswith(wanted + "/") for t in tags)


def _path_matches(path: str, pattern: str) -> bool:
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(path, pattern)
    return pattern in path


def parse_query(text: str) -> Query:
    """Parse a query (see the module doc). Never raises: filters that could never match are
    listed in :attr:`Query.problems` for the caller to refuse."""
    text = (text or "").replace("\x00", " ")[:MAX_QUERY_CHARS]
    query = Query(text=text)
    pending_or = False
    terms = 0
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _CHUNK.match(text, pos)
        if m is None or m.end() == pos:  # cannot happen with this pattern; never loop forever
            pos += 1
            continue
        pos = m.end()
        neg, key, quoted, star, word = m.groups()
        negate = neg == "-"
        if key and key.lower() in FILTER_KEYS:
            value = quoted if quoted is not None else (word or "")
            _add_filter(query, key.lower(), value.strip(), negate, m.group())
            pending_or = False
            continue
        if word == "OR" and not negate and not key:
            pending_or = bool(query.groups)
            continue
        if quoted is not None:
            term = Term(f"{key}:{quoted}" if key else quoted, phrase=True, prefix=bool(star))
        else:
            raw = f"{key}:{word}" if key else (word or "")
            term = Term(raw.rstrip("*"), prefix=raw.endswith("*"))
        if not term.words:
            pending_or = False
            continue
        terms += 1
        if terms > MAX_TERMS:
            query.ignored.append(m.group())
            continue
        if negate:
            query.excluded.append(term)
        elif pending_or:
            query.groups[-1].append(term)
        else:
            query.groups.append([term])
        pending_or = False
    return query


def _add_filter(query: Query, key: str, value: str, negate: bool, raw: str) -> None:
    if not value:
        query.ignored.append(raw)
        return
    if key == "layer":
        query.add_layer(value, negate)
    elif key == "tag":
        tag = value.lstrip("#").lower()
        (query.not_tags if negate else query.tags).append(tag)
    elif key == "path":
        (query.not_paths if negate else query.paths).append(value.lower())
    else:
        m = _TRUST.match(value)
        if negate:
            query.problems.append(f"{raw} cannot be negated: use trust:<0.5 (or <, <=, >, >=, = and a number "
                                  "from 0 to 1)")
        elif m is None:
            query.problems.append(f"{raw}: trust is a number from 0 to 1, as in trust:>=0.5 (or <, <=, >, =)")
        elif float(m.group(2)) > 1:
            query.problems.append(f"{raw}: trust is a number from 0 to 1, so {m.group(2)} matches no page")
        else:
            query.trust.append((m.group(1) or ">=", float(m.group(2))))
