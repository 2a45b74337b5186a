"""Link repair (docs/design.md §12): the queue of unresolved link targets and the four fixes.

:func:`unresolved` lists every target that resolves to nothing (for the actor: a link to a page it
may not see is a link to a missing page, :meth:`~.wiki.Wiki.links_for`), with its occurrences, the
pages that link to it and up to five suggested pages (:class:`Suggester`: the same name, a name the
target is a word-wise prefix of (``[[Nocturne Bg3 V4]]`` -> ``nocturne-bg3-v4-campaign.md``) or
that is a prefix of the target, and slugSim over titles, aliases and file names; only pages the
actor may see are ever suggested). Ignored targets (:data:`IGNORED_FILE`) are left out.

Each fix is one action, one commit, undoable:

* :func:`fix` ``by="alias"``: the target becomes an alias of the chosen page (one file changed;
  every occurrence resolves through it, the linking pages are untouched);
* :func:`fix` ``by="rewrite"``: every occurrence is re-pointed at the page with its display text
  kept (``[[Nocturne Bg3 V4]]`` -> ``[[nocturne-bg3-v4-campaign|Nocturne Bg3 V4]]``), through the
  one link rewriter (:mod:`.relink`); exactly the linking pages change;
* :func:`fix_many`: several targets at once (the station's bulk mode), still one commit;
* :func:`create`: a page for the target (append's scaffold, no fact yet);
* :func:`ignore`: the target is recorded in :data:`IGNORED_FILE`, a tracked decision file (like
  "not duplicates"), so it stays out of the queue for everyone who clones the wiki.

Who may: the operator always. Another actor only where the scope policy lets it write every file
the fix touches, and never where the review policy (``[review]``) would hold its write for an
operator (a fix must not be a way around the inbox). :data:`IGNORED_FILE` configures the wiki, so
``ignore`` is the operator's alone.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import itertools
import json
import operator
import posixpath
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from . import frontmatter
from .actions import ActionContext, ActionResult, Denied, Invalid, run_action
from .actor import OPERATOR, Actor
from .decision_files import load_decision_file
from .links import Edge, LinkIndex
from .markdown_scan import RawLink, split_wikilink
from .merge import action_reader, encode_writes
from .page import Page, link_key, parse_page
from .relink import LinkRewrite, Retarget, rewrite_page
from .slugs import SLUG_MAX, plain_slug, similarity, slug_features, slugify, slugify_many
from .status import Status
from .store import gc_paused
from .wiki import Wiki

#: The tracked decision file of ignored targets (root-level ``.curator-*``: operator-only).
IGNORED_FILE = ".curator-ignored-links.json"
MAX_SUGGESTIONS = 5
SUGGEST_THRESHOLD = 0.4  # slugSim floor, as for append's candidates
PREFIX_SCORE = 0.8  # a target that is a word-wise prefix of a name scores 0.8 .. 1.0
#: Postings longer than this are not followed (a word half the wiki's names share finds nothing).
RARE_WORD = 40
RUN_POSTINGS = 200
PREFIX_HITS = 20
SCORED = 8  # names scored with slugSim per target, besides prefixes (the most shared word pairs)
METHODS: tuple[str, ...] = ("alias", "rewrite")


# --- suggestions ------------------------------------------------------------------------------------

class Suggestion(NamedTuple):
    """A page a target may mean (a tuple: the queue of a big wiki holds ~100,000 of them)."""

    path: str
    score: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "score": self.score, "reason": self.reason}


def _stem(path: str) -> str:
    """``Page.stem`` from the path (``posixpath.splitext`` of the file name, quicker for ``x.md``)."""
    name = path.rpartition("/")[2]
    if name.endswith(".md") and name[:-3].lstrip("."):
        return name[:-3]
    return posixpath.splitext(name)[0]


#: why a page is suggested, by stage (an earlier stage wins a tie: see :meth:`Suggester._rank`)
SAME, BEGINS, SIMILAR = 0, 1, 2
REASONS = ("same name", "the target begins its name", "similar name")


class Suggester:
    """Pages a target may have meant, from an index of page names (file stem, title, aliases as
    slugs) built once per link index: exact names, a sorted list for prefixes, and postings of
    adjacent word pairs and rare words. Each target then scores a few dozen names, never all.

    Many targets are answered in one batch (:meth:`suggest_many`, what the queue asks): each
    target's candidate names are gathered from the postings, the shared word pairs counted for
    every target at once, every (target, name) pair scored with ``slugSim`` in one pass over
    columns of precomputed features (each name's computed once, for all the targets that meet
    it), and each target's best pages ranked in arrays. Each target gets what scoring it alone
    gives (the same pages, order and scores: ``tests/test_link_suggestions.py`` keeps that
    one-at-a-time suggester as the reference)."""

    def __init__(self, pages: Mapping[str, Page]) -> None:
        records = list(pages.values())
        stems = [_stem(page.path) for page in records]
        odd = list(itertools.compress(range(len(stems)), map(operator.not_, map(plain_slug, stems))))
        for k, slug in zip(odd, slugify_many([stems[k] for k in odd]), strict=True):  # (most are slugs already)
            stems[k] = slug
        titles = slugify_many([page.title for page in records])
        aliases = iter(slugify_many([a for page in records if page.aliases for a in page.aliases]))
        slugs: list[str] = []  # every page's names: file stem, title, aliases, as slugs (once each)
        owner: list[int] = []  # per name: the index of its page in ``_pages``
        for n, (stem, title, page) in enumerate(zip(stems, titles, records, strict=True)):
            if stem:
                slugs.append(stem)
                owner.append(n)
            if title and title != stem:
                slugs.append(title)
                owner.append(n)
            if page.aliases:
                names = [stem, title]
                for alias in itertools.islice(aliases, len(page.aliases)):
                    if alias and alias not in names:
                        names.append(alias)
                        slugs.append(alias)
                        owner.append(n)
        self.slugs = slugs
        self._pages = listed = list(pages)
        self._owner = np.array(owner, dtype=np.int64)
        #: each page's place in path order (the tie-break of equal scores)
        self._path_rank = np.empty(len(listed), dtype=np.int64)
        self._path_rank[sorted(range(len(listed)), key=listed.__getitem__)] = np.arange(len(listed))
        count = len(slugs)
        self._memo: dict[tuple[str, int], list[Suggestion]] = {}
        self._lock = threading.Lock()  # a session's suggester serves the station's threads
        self._words_index: dict[str, list[int]] | None = None  # built on first need (rarely)
        #: letters and digits of each name, and the names by them
        self._alnum = alnum = [name.replace("-", "") for name in slugs]
        exact: dict[str, list[int]] = {}
        for i, key in enumerate(alnum):
            exact.setdefault(key, []).append(i)
        self._exact = exact
        numbers = {key: k for k, key in enumerate(exact)}
        self._alnum_id = np.fromiter(map(numbers.__getitem__, alnum), dtype=np.int64, count=count)
        self._alnum_numbers = numbers
        self._alnum_len = np.fromiter(map(len, alnum), dtype=np.int64, count=count)
        # the words of every name, numbered; postings of adjacent word pairs (by their two numbers)
        split = [name.split("-") for name in slugs]
        flat = list(itertools.chain.from_iterable(split))
        self._vocab = vocab = {w: k for k, w in enumerate(dict.fromkeys(flat))}
        words = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        sizes = np.fromiter(map(len, split), dtype=np.int64, count=count)
        owner_of = np.repeat(np.arange(count, dtype=np.int64), sizes)
        self._word_rows, self._word_len = _rows(words, owner_of, sizes, count)
        same = owner_of[1:] == owner_of[:-1]  # word k and k + 1 are adjacent in one name
        keys = (words[:-1] * len(vocab) + words[1:])[same]
        order = np.argsort(keys, kind="stable")  # each pair's names in order, as they were met
        keys = keys[order]
        self._pair_names = owner_of[:-1][same][order]
        firsts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, dtype=np.int64)
        self._pair_keys = keys[firsts]
        self._pair_start = firsts
        self._pair_len = np.diff(np.r_[firsts, len(keys)])
        # trigrams and whether a name is a plain slug, computed on first need
        self._known = np.zeros(count, dtype=bool)
        self._plain = np.zeros(count, dtype=bool)
        self._tri_rows = np.full((count, SLUG_MAX), NO_TRIGRAM, dtype=np.uint16)
        self._tri_len = np.zeros(count, dtype=np.int64)
        self._sorted_ids = sorted(range(len(slugs)), key=slugs.__getitem__)  # (equal names: in order)
        self._sorted = list(map(slugs.__getitem__, self._sorted_ids))

    @property
    def _words(self) -> dict[str, list[int]]:
        if self._words_index is None:
            words: dict[str, list[int]] = {}
            for i, name in enumerate(self.slugs):
                for w in set(name.split("-")):
                    words.setdefault(w, []).append(i)
            self._words_index = words
        return self._words_index

    def suggest(self, target: str, limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
        """Up to ``limit`` pages ``target`` may mean, best first (remembered per target)."""
        return self.suggest_many([target], limit)[0]

    def suggest_many(self, targets: Sequence[str], limit: int = MAX_SUGGESTIONS) -> list[list[Suggestion]]:
        """:meth:`suggest` of each of ``targets``, in one batch (targets that fold to the same
        slug are answered once)."""
        memo = self._memo
        folded: dict[str, list[str]] = {}
        todo = [target for target in dict.fromkeys(targets) if (target, limit) not in memo]
        for target, q in zip(todo, slugify_many(todo), strict=True):
            folded.setdefault(q, []).append(target)
        for target in folded.pop("", ()):
            memo[(target, limit)] = []
        if folded:
            queries = list(folded)
            with self._lock:  # (the name features are filled in as targets need them)
                ranked = self._rank(queries, limit)
            for q, found in zip(queries, ranked, strict=True):
                for target in folded[q]:
                    memo[(target, limit)] = found
        return [memo[(target, limit)] for target in targets]

    def _rank(self, queries: list[str], limit: int) -> list[list[Suggestion]]:
        """The suggestions of each slug of ``queries`` (distinct, none empty)."""
        exact, names, sorted_ids = self._exact, self._sorted, self._sorted_ids
        # fixed (target, name, score, stage): the same names and the names the target begins
        fix_q: list[int] = []
        fix_n: list[int] = []
        fix_s: list[float] = []
        fix_k: list[int] = []
        pool_q: list[int] = []  # names to score that begin the target
        pool_n: list[int] = []
        split = [q.split("-") for q in queries]
        bottom = len(names)
        for qi, (q, qw) in enumerate(zip(queries, split, strict=True)):
            qa = q.replace("-", "")
            hits = exact.get(qa)
            if hits is not None:
                fix_q += [qi] * len(hits)
                fix_n += hits
                fix_s += [1.0] * len(hits)
                fix_k += [SAME] * len(hits)
            # names the target begins (word-wise): [[Nocturne Bg3 V4]] -> nocturne-bg3-v4-campaign
            head = q + "-"
            first = bisect.bisect_left(names, head)
            if first < bottom and names[first].startswith(head):
                for k in range(first, min(first + PREFIX_HITS, bottom)):
                    name = names[k]
                    if not name.startswith(head):
                        break
                    fix_q.append(qi)
                    fix_n.append(sorted_ids[k])
                    fix_s.append(PREFIX_SCORE + (1 - PREFIX_SCORE) * len(qa) / (len(name) - name.count("-")))
                    fix_k.append(BEGINS)
            for n in range(len(qw) - 1, 0, -1):  # names that begin the target
                hits = exact.get("".join(qw[:n]))
                if hits is not None:
                    pool_q += [qi] * len(hits)
                    pool_n += hits
        words, owner, sizes = self._numbered(split)
        shared, shared_q = self._sharing(split, words, owner)
        cand_q, cand_n = _most_shared(shared, shared_q, len(self.slugs))
        pair_q = np.concatenate([np.array(pool_q, dtype=np.int64), cand_q])
        pair_n = np.concatenate([np.array(pool_n, dtype=np.int64), cand_n])
        scores = self._scores(queries, pair_q, pair_n, _rows(words, owner, sizes, len(queries)))
        similar = scores >= SUGGEST_THRESHOLD
        q_all = np.concatenate([np.array(fix_q, dtype=np.int64), pair_q[similar]])
        n_all = np.concatenate([np.array(fix_n, dtype=np.int64), pair_n[similar]])
        s_all = np.concatenate([np.array(fix_s, dtype=np.float64), scores[similar]])
        k_all = np.concatenate([np.array(fix_k, dtype=np.int64), np.full(int(similar.sum()), SIMILAR)])
        return self._best(len(queries), q_all, self._owner[n_all], s_all, k_all, limit)

    def _numbered(self, split: list[list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The targets' words as numbers (the names' numbers; a word no name has gets a number
        of its own), the target of each, and how many each target has."""
        flat = list(itertools.chain.from_iterable(split))
        vocab = self._vocab
        words = np.fromiter(map(vocab.get, flat, itertools.repeat(-1)), dtype=np.int64, count=len(flat))
        unknown: dict[str, int] = {}
        for k in np.flatnonzero(words < 0).tolist():
            words[k] = unknown.setdefault(flat[k], len(vocab) + len(unknown))
        sizes = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        return words, np.repeat(np.arange(len(split), dtype=np.int64), sizes), sizes

    def _sharing(self, split: list[list[str]], words: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every target's names that share an adjacent word pair with it (pairs no more than
        :data:`RUN_POSTINGS` names share), in the order met: the target's pairs in order, each
        pair's names in order; a target sharing none gets the names sharing its rare words
        (:data:`RARE_WORD`). As (names, targets)."""
        known = len(self._vocab)
        same = owner[1:] == owner[:-1]
        first, second, by = words[:-1][same], words[1:][same], owner[:-1][same]
        keep = (first < known) & (second < known)
        keys, by = first[keep] * known + second[keep], by[keep]
        at = np.minimum(np.searchsorted(self._pair_keys, keys), max(len(self._pair_keys) - 1, 0))
        found = self._pair_keys[at] == keys if len(self._pair_keys) else np.zeros(len(keys), dtype=bool)
        lengths = self._pair_len[at] if len(self._pair_keys) else np.zeros(len(keys), dtype=np.int64)
        use = found & (lengths <= RUN_POSTINGS)
        at, by, lengths = at[use], by[use], lengths[use]
        ends = np.cumsum(lengths)
        places = np.repeat(self._pair_start[at] - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends) else 0)
        shared, shared_q = self._pair_names[places], np.repeat(by, lengths)
        met = np.zeros(len(split), dtype=bool)
        met[by] = True
        more: list[int] = []
        more_q: list[int] = []
        for qi in np.flatnonzero(~met).tolist():
            for w in split[qi]:
                hits = self._words.get(w)
                if hits is not None and len(hits) <= RARE_WORD:
                    more += hits
                    more_q += [qi] * len(hits)
        if more:
            shared = np.concatenate([shared, np.array(more, dtype=np.int64)])
            shared_q = np.concatenate([shared_q, np.array(more_q, dtype=np.int64)])
        return shared, shared_q

    def _features(self, ids: np.ndarray) -> None:
        """Fill in the trigrams of the names ``ids`` not computed yet."""
        known = self._known
        todo = np.unique(ids)
        todo = todo[~known[todo]]
        if not len(todo):
            return
        slugs = self.slugs
        plain, (rows, sizes) = _trigrams([slugs[i] for i in todo.tolist()])
        self._plain[todo] = plain
        self._tri_rows[todo] = rows
        self._tri_len[todo] = sizes
        known[todo] = True

    def _scores(self, queries: list[str], pair_q: np.ndarray, pair_n: np.ndarray,
                q_words: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """``slugSim`` (:func:`~.slugs.similarity`) of each (target, name) pair, in one pass: the
        trigrams and the words the two share counted in arrays (each pair's two rows of numbers
        sorted together, a number met twice being one shared), containment over strings. A pair
        with a slug of other scripts is scored by :func:`~.slugs.similarity` itself."""
        count = len(pair_q)
        if not count:
            return np.zeros(0, dtype=np.float64)
        self._features(pair_n)
        q_plain, (q_rows, q_tri) = _trigrams(queries)
        plain = q_plain[pair_q] & self._plain[pair_n]
        q_alnum = [q.replace("-", "") for q in queries]
        numbers = self._alnum_numbers
        q_id = np.fromiter(map(numbers.get, q_alnum, itertools.repeat(-1)), dtype=np.int64, count=len(queries))
        equal = (q_id[pair_q] == self._alnum_id[pair_n]) & (q_id[pair_q] >= 0)
        la = np.fromiter(map(len, q_alnum), dtype=np.int64, count=len(queries))[pair_q]
        lb = self._alnum_len[pair_n]
        inside = equal.copy()
        qs, ns = pair_q.tolist(), pair_n.tolist()
        a_alnum = list(map(q_alnum.__getitem__, qs))
        b_alnum = list(map(self._alnum.__getitem__, ns))
        for small, large, which in ((a_alnum, b_alnum, la < lb), (b_alnum, a_alnum, lb < la)):
            where = np.flatnonzero(which & plain).tolist()
            inside[where] = np.fromiter(map(operator.contains, map(large.__getitem__, where),
                                            map(small.__getitem__, where)), dtype=bool, count=len(where))
        ta, tb = q_tri[pair_q], self._tri_len[pair_n]
        tri_both = _shared_counts(q_rows, pair_q, self._tri_rows, pair_n, ta, tb, plain, TRIGRAM_LIMIT)
        (w_rows, wa), wb = q_words, self._word_len[pair_n]
        wa = wa[pair_q]
        word_both = _shared_counts(w_rows, pair_q, self._word_rows, pair_n, wa, wb, plain, NO_WORD)
        scores = np.zeros(count, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tri = tri_both / (ta + tb - tri_both)
            word = np.where((wa > 0) & (wb > 0), word_both / (wa + wb - word_both), 0.0)
            scores[:] = np.where(inside, np.maximum(0.7, np.minimum(la, lb) / np.maximum(la, lb)),
                                 np.maximum(tri, word))
        scores[equal] = 1.0
        scores[(la == 0) | (lb == 0)] = 0.0
        for k in np.flatnonzero(~plain).tolist():  # a slug of other scripts: scored one by one
            scores[k] = similarity(slug_features(queries[qs[k]]), slug_features(self.slugs[ns[k]]))
        return scores

    def _best(self, count: int, qs: np.ndarray, pages: np.ndarray, scores: np.ndarray, stages: np.ndarray,
              limit: int) -> list[list[Suggestion]]:
        """Each target's best ``limit`` pages: a page's best score (a tie: the earlier stage's
        reason), then the highest scores first, equal ones in path order."""
        if not len(qs):
            return [[] for _ in range(count)]
        order = np.lexsort((stages, -scores, qs * len(self._pages) + pages))
        qs, pages, scores, stages = qs[order], pages[order], scores[order], stages[order]
        first = np.ones(len(qs), dtype=bool)
        first[1:] = (qs[1:] != qs[:-1]) | (pages[1:] != pages[:-1])
        qs, pages, scores, stages = qs[first], pages[first], scores[first], stages[first]
        order = np.lexsort((self._path_rank[pages], -scores, qs))
        qs, pages, scores, stages = qs[order], pages[order], scores[order], stages[order]
        starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
        place = np.arange(len(qs)) - np.repeat(starts, np.diff(np.r_[starts, len(qs)]))
        keep = place < limit
        qs, pages, stages = qs[keep], pages[keep], stages[keep]
        paths, reasons = self._pages, REASONS
        values, which = np.unique(scores[keep], return_inverse=True)  # (few distinct: each rounded once)
        rounded = [round(v, 3) for v in values.tolist()]
        made = list(map(tuple.__new__, itertools.repeat(Suggestion), zip(map(paths.__getitem__, pages.tolist()),
                                                                         map(rounded.__getitem__, which.tolist()),
                                                                         map(reasons.__getitem__, stages.tolist()),
                                                                         strict=True)))
        ends = np.cumsum(np.bincount(qs, minlength=count)).tolist()
        return [made[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


#: the characters of an ASCII slug and its padding, numbered from 1 (0: past the end)
_SYMBOLS = "abcdefghijklmnopqrstuvwxyz0123456789- "
_BASE = len(_SYMBOLS) + 1
#: a trigram's number is below this; a row of :func:`trigram_rows` is filled up with :data:`NO_TRIGRAM`
TRIGRAM_LIMIT = _BASE**3
NO_TRIGRAM = np.iinfo(np.uint16).max
_NUMBER = np.zeros(256, dtype=np.uint16)
_NUMBER[[ord(c) for c in _SYMBOLS]] = np.arange(1, _BASE, dtype=np.uint16)


def trigram_rows(slugs: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The trigram sets of :func:`~.slugs.slug_features` for many :data:`~.slugs.plain_slug` slugs at once, as
    numbers: (a ``len(slugs) x SLUG_MAX`` array of ``uint16``, each row a slug's distinct trigram
    numbers in ascending order followed by :data:`NO_TRIGRAM`; the size of each set). Two slugs
    share a trigram exactly when their rows share its number."""
    count = len(slugs)
    chars = np.array([s.encode("ascii") for s in slugs], dtype=f"S{SLUG_MAX}").view(np.uint8)
    sizes = np.fromiter(map(len, slugs), dtype=np.int64, count=count)
    padded = np.zeros((count, SLUG_MAX + 2), dtype=np.int32)  # " slug " (0 past its end)
    padded[:, 0] = _BASE - 1
    padded[:, 1:-1] = _NUMBER[chars.reshape(count, SLUG_MAX)]
    padded[np.arange(count), sizes + 1] = _BASE - 1
    rows = ((padded[:, :-2] * _BASE + padded[:, 1:-1]) * _BASE + padded[:, 2:]).astype(np.uint16)
    rows[np.arange(SLUG_MAX) >= sizes[:, None]] = NO_TRIGRAM  # a slug of n characters has n trigrams
    rows.sort(axis=1)
    rows[:, 1:][rows[:, 1:] == rows[:, :-1]] = NO_TRIGRAM  # each trigram once
    rows.sort(axis=1)
    return rows, (rows != NO_TRIGRAM).sum(axis=1)


def _trigrams(slugs: list[str]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Which of ``slugs`` are :data:`~.slugs.plain_slug` (a slug that is not is scored by
    :func:`~.slugs.similarity` itself), and their :func:`trigram_rows` (empty rows for
    the others)."""
    plain = np.fromiter(map(operator.truth, map(plain_slug, slugs)), dtype=bool, count=len(slugs))
    rows = np.full((len(slugs), SLUG_MAX), NO_TRIGRAM, dtype=np.uint16)
    sizes = np.zeros(len(slugs), dtype=np.int64)
    where = np.flatnonzero(plain)
    if len(where):
        rows[where], sizes[where] = trigram_rows([slugs[i] for i in where.tolist()])
    return plain, (rows, sizes)


#: what fills up a row of word numbers (:func:`_rows`)
NO_WORD = np.iinfo(np.int32).max


def _rows(words: np.ndarray, owner: np.ndarray, sizes: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The word numbers of each of ``count`` slugs (``words``, ``owner`` the slug of each, in
    order, ``sizes`` per slug) as a row of distinct numbers, ascending, filled up with
    :data:`NO_WORD`; and how many distinct each has."""
    wide = int(sizes.max()) if len(sizes) else 0
    rows = np.full((count, max(wide, 1)), NO_WORD, dtype=np.int32)
    starts = np.cumsum(sizes) - sizes
    rows[owner, np.arange(len(words)) - starts[owner]] = words
    rows.sort(axis=1)
    rows[:, 1:][rows[:, 1:] == rows[:, :-1]] = NO_WORD  # each word once
    rows.sort(axis=1)
    return rows, (rows != NO_WORD).sum(axis=1)


#: pairs whose shared trigrams are counted in one array (a few MB of it)
CHUNK = 16_384


def _shared_counts(a_rows: np.ndarray, a: np.ndarray, b_rows: np.ndarray, b: np.ndarray, a_size: np.ndarray,
                   b_size: np.ndarray, plain: np.ndarray, limit: int) -> np.ndarray:
    """How many numbers row ``a[k]`` of ``a_rows`` and row ``b[k]`` of ``b_rows`` share (each
    row: distinct numbers below ``limit``, ascending, ``a_size[k]``/``b_size[k]`` of them, then
    fill), for each pair ``k`` that is ``plain`` (0 for the others): both rows side by side,
    sorted, each number met twice in a row being one shared. The pairs go in chunks of similar
    sizes, each as wide as its largest rows."""
    out = np.zeros(len(a), dtype=np.int64)
    order = np.flatnonzero(plain)
    order = order[np.argsort(a_size[order] + b_size[order], kind="stable")]
    for start in range(0, len(order), CHUNK):
        part = order[start:start + CHUNK]
        wide_a, wide_b = max(int(a_size[part].max()), 1), max(int(b_size[part].max()), 1)
        both = np.concatenate((a_rows[a[part], :wide_a], b_rows[b[part], :wide_b]), axis=1)
        both.sort(axis=1)
        out[part] = ((both[:, 1:] == both[:, :-1]) & (both[:, 1:] < limit)).sum(axis=1)
    return out


def _most_shared(shared: np.ndarray, owner: np.ndarray, names: int) -> tuple[np.ndarray, np.ndarray]:
    """(target, name) for each target's :data:`SCORED` names met most often among ``shared``
    (``owner``: the target of each; a target's in the order met), equal counts in the order
    first met."""
    if not len(shared):
        return shared, shared
    key = owner * names + shared
    order = np.argsort(key, kind="stable")  # (a radix sort: faster than the default here)
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    counts = np.diff(np.r_[starts, len(key)])
    met = order[starts]  # the first time each (target, name) was met: a stable sort keeps it first
    group = key[starts] // names
    name = key[starts] % names
    top, places = int(counts.max()) + 1, len(shared)
    if (int(owner.max()) + 1) * top * places < 2**62:  # one key: target, then the most met, then the first met
        order = np.argsort((group * top + (top - counts)) * places + met, kind="stable")
    else:
        order = np.lexsort((met, -counts, group))
    group, name = group[order], name[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    place = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
    keep = place < SCORED
    return group[keep], name[keep]


#: suggesters a session keeps (the operator's and a few agents'), the oldest dropped first
KEPT_SUGGESTERS = 4


def suggester_for(wiki: Wiki, links: LinkIndex) -> Suggester:
    """The :class:`Suggester` over the pages of ``links`` (one of ``wiki``'s link indexes), held by
    the wiki's session as long as those pages' names are current: it depends on the pages' paths,
    titles and aliases only, and an index updated after a change that left every name as it was
    shares them (:attr:`~.links.LinkIndex.names`), so an edit does not build it again."""
    session = wiki.session
    names = links.names
    with session.services_lock:
        cached = session.suggesters.get(id(names))
    if cached is not None and cached[0] is names:
        return cached[1]
    with gc_paused():  # ~100,000 small lists, none cyclic (see gc_paused)
        found = Suggester(links.pages)
    with session.services_lock:
        kept = session.suggesters
        kept[id(names)] = (names, found)
        while len(kept) > KEPT_SUGGESTERS:
            del kept[next(iter(kept))]
    return found


# --- ignored targets ---------------------------------------------------------------------------------

def load_ignored(wiki: Wiki) -> dict[str, Any]:
    """The ignore file (``{"version": 1, "ignored": [{"target", "key", "by", "date"}]}``)."""
    return load_decision_file(wiki, IGNORED_FILE, "ignored")


def ignored_keys(wiki: Wiki) -> set[str]:
    out: set[str] = set()
    for entry in load_ignored(wiki)["ignored"]:
        if isinstance(entry, dict) and isinstance(entry.get("target"), str):
            out.add(link_key(str(entry.get("key") or entry["target"])))
    return out


def _render_ignored(data: dict[str, Any]) -> str:
    entries = sorted(data["ignored"], key=lambda e: str(e.get("key", "")))
    return json.dumps({**data, "ignored": entries}, ensure_ascii=False, indent=2) + "\n"


# --- the queue ---------------------------------------------------------------------------------------

@dataclass(slots=True)
class Unresolved:
    target: str  # as most often written
    key: str  # normalised (what every occurrence shares)
    count: int  # occurrences
    pages: list[str]  # linking pages, sorted
    lines: list[tuple[str, int]] = field(default_factory=list)  # (page, line) of each occurrence
    suggestions: list[Suggestion] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "key": self.key, "count": self.count, "pages": list(self.pages),
                "suggestions": [s.to_json() for s in self.suggestions]}


def _targets(links: LinkIndex, ignored: set[str]) -> dict[str, list[Edge]]:
    return {k: edges for k, edges in links.unresolved.items() if edges and k not in ignored}


def unresolved(wiki: Wiki, actor: Actor = OPERATOR, *, suggest: bool | int = True,
               keys: Iterable[str] | None = None) -> list[Unresolved]:
    """Every unresolved target ``actor`` sees (ignored ones left out), most occurrences first.

    ``keys``: only these targets (normalised). ``suggest``: True for every target's suggestions,
    False for none, a number N for the first N targets' (the rest: :func:`add_suggestions`)."""
    links = wiki.links_for(actor)
    found = _targets(links, ignored_keys(wiki))
    if keys is not None:
        wanted = {link_key(k) for k in keys}
        found = {k: v for k, v in found.items() if k in wanted}
    out: list[Unresolved] = []
    with gc_paused():  # ~20,000 rows next to a wiki's millions of objects: see gc_paused
        for key, edges in found.items():
            if len(edges) == 1:  # most targets (a Counter and a set each cost more than the rest)
                edge = edges[0]
                out.append(Unresolved(edge.link.target, key, 1, [edge.source], [(edge.source, edge.link.line)]))
                continue
            out.append(Unresolved(_written(edges), key, len(edges), sorted({e.source for e in edges}),
                                  [(e.source, e.link.line) for e in edges]))
        out.sort(key=operator.attrgetter("key"))  # then by count, most first (a stable sort: keys in order)
        out.sort(key=operator.attrgetter("count"), reverse=True)
    if suggest is not False:
        add_suggestions(wiki, out if suggest is True else out[:int(suggest)], actor)
    return out


def add_suggestions(wiki: Wiki, items: Iterable[Unresolved], actor: Actor = OPERATOR) -> None:
    """Fill in the suggestions of ``items`` (pages ``actor`` may see only)."""
    suggester = suggester_for(wiki, wiki.links_for(actor))
    items = list(items)
    with gc_paused():
        for item, found in zip(items, suggester.suggest_many([item.target for item in items]), strict=True):
            item.suggestions = found


def _written(edges: Sequence[Edge]) -> str:
    """The target as its links most often write it (equal counts: the first written)."""
    written = [e.link.target for e in edges]
    if written.count(written[0]) == len(written):  # (most targets are written one way)
        return written[0]
    return Counter(written).most_common(1)[0][0]


def unresolved_totals(wiki: Wiki, actor: Actor = OPERATOR) -> tuple[int, int]:
    """(unresolved targets, unresolved links) ``actor`` sees, ignored targets left out."""
    found = _targets(wiki.links_for(actor), ignored_keys(wiki))
    return len(found), sum(len(v) for v in found.values())


def _one(wiki: Wiki, target: str, actor: Actor) -> tuple[str, list[Edge]]:
    """The key and occurrences of an unresolved ``target``; :class:`Invalid` when it is none."""
    inner = str(target).strip().removeprefix("![[").removeprefix("[[").removesuffix("]]")
    key = link_key(split_wikilink(inner)[0])  # as written in a page too: [[Target#Sec|text]]
    edges = wiki.links_for(actor).unresolved.get(key) if key else None
    if not edges:
        raise Invalid(message=f"no link to {target!r} is unresolved (see 'curator links unresolved')")
    return key, list(edges)


# --- policy ---------------------------------------------------------------------------------------------

def _check(ctx: ActionContext, path: str, *, creates: bool, text: str | None = None) -> str:
    """``path`` checked for the actor: the scope policy, and (for an agent) the review policy,
    which a fix must not get around."""
    path = ctx.check_write(path)
    actor = ctx.actor
    if actor.is_agent:
        policy = ctx.wiki.policy
        review_reason = getattr(policy, "review_reason", None)
        if review_reason is not None:
            layer = parse_page(path, text.encode("utf-8"))[0].layer if text is not None else None
            why = review_reason(actor, path, creates=creates, layer=layer)
            if why is not None:
                raise Denied(message=f"{actor} may not repair links here: {why}; an operator does it "
                             "(or write the fact through append, which queues it for review)")
    return path


# --- fixes ----------------------------------------------------------------------------------------------

def _sentinel(key: str) -> str:
    return f"\0unresolved\0{key}"  # never a path: the "page" an unresolved key points at now


def _resolver(links: LinkIndex, keys: set[str]) -> Any:
    def resolve(link: RawLink, source: str) -> str | None:
        res = links.resolve(link.target, source)
        if res.resolved:
            return res.path
        key = link_key(link.target)
        return _sentinel(key) if key in keys else None

    return resolve


def _add_alias(text: str, path: str, names: Sequence[str]) -> tuple[str, list[str]]:
    page, _ = parse_page(path, text.encode("utf-8"))
    have = {a.casefold() for a in page.aliases}
    new = [n for n in dict.fromkeys(names) if n.casefold() not in have]
    if not new:
        return text, []
    parts = frontmatter.split(text)
    if parts.problem or (parts.raw is not None and frontmatter.load(parts.raw)[1]):
        raise Invalid(message=f"{path} has malformed frontmatter; fix it first so the alias can be added")
    return frontmatter.update(text, {"aliases": [*page.aliases, *new]}), new


@dataclass(slots=True)
class FixPlan:
    by: str
    fixes: list[tuple[str, str, str]]  # (target as written, key, page)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # page -> aliases added
    rewrites: list[LinkRewrite] = field(default_factory=list)
    writes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    links: int = 0  # occurrences repaired

    @property
    def changed(self) -> list[str]:
        return sorted(self.writes)

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "fixes": [{"target": t, "key": k, "page": p} for t, k, p in self.fixes],
                "links": self.links,
                "aliases_added": self.aliases, "rewrites": [r.to_json() for r in self.rewrites],
                "pages_changed": self.changed}

    def render(self) -> str:
        lines = []
        for t, _k, p in self.fixes:
            lines.append(f"[[{t}]] -> {p} (by {self.by})")
        for page, names in self.aliases.items():
            lines.append(f"  {page}: aliases + {', '.join(names)}")
        lines += [f"  {r.render()}" for r in self.rewrites]
        lines.append(f"{len(self.changed)} file(s) change")
        return "\n".join(lines)


def _plan(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor,
          read: Any, ctx: ActionContext | None) -> FixPlan:
    if by not in METHODS:
        raise Invalid(message=f"--by must be alias or rewrite, not {by!r}")
    if not pairs:
        raise Invalid(message="nothing to fix: name at least one target")
    links = wiki.links_for(actor)
    plan = FixPlan(by, [])
    occurrences: dict[str, list[Edge]] = {}
    dest: dict[str, str] = {}
    for target, to in pairs:
        key, edges = _one(wiki, target, actor)
        page = wiki.find(to, actor).path
        written = _written(edges)
        plan.fixes.append((written, key, page))
        occurrences[key] = edges
        plan.links += len(edges)
        dest[_sentinel(key)] = page
    texts: dict[str, tuple[str, bool]] = {}

    def text_of(path: str) -> tuple[str, bool]:
        if path not in texts:
            texts[path] = read(path)
        return texts[path]

    if by == "alias":
        for written, key, page in plan.fixes:
            text, bom = plan.writes.get(page) or text_of(page)
            if ctx is not None:
                _check(ctx, page, creates=False, text=text)
            new, added = _add_alias(text, page, [written])
            if link_key(written) != key:  # the alias must normalise to the key every occurrence has
                raise Invalid(message=f"{written!r} cannot be an alias that resolves {key!r}")
            if added:
                plan.aliases.setdefault(page, []).extend(added)
                plan.writes[page] = (new, bom)
        return plan
    retarget = Retarget(links, dest, resolve=_resolver(links, set(occurrences)))
    sources = sorted({e.source for edges in occurrences.values() for e in edges})
    for path in sources:
        text, bom = text_of(path)
        if ctx is not None:
            _check(ctx, path, creates=False, text=text)
        new, rewrites = rewrite_page(text, path, retarget)
        plan.rewrites += rewrites
        if new != text:
            plan.writes[path] = (new, bom)
    return plan


def _plain_read(wiki: Wiki) -> Any:
    from .merge import plain_reader

    return plain_reader(wiki)


def preview_fix(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor = OPERATOR) -> FixPlan:
    """What :func:`fix_many` would change (nothing written)."""
    return _plan(wiki, pairs, by, actor, _plain_read(wiki), None)


def fix(wiki: Wiki, target: str, to: str, by: str, actor: Actor = OPERATOR) -> ActionResult:
    """Repair every occurrence of ``target`` by pointing it at the page ``to`` (one commit)."""
    return fix_many(wiki, [(target, to)], by, actor)


def fix_many(wiki: Wiki, pairs: Sequence[tuple[str, str]], by: str, actor: Actor = OPERATOR) -> ActionResult:
    """Repair several targets, each at its page, in ONE action and commit (the bulk mode)."""
    label = (f"{pairs[0][0]} -> {pairs[0][1]}" if len(pairs) == 1 else f"{len(pairs)} targets") if pairs else ""

    def apply(ctx: ActionContext) -> None:
        plan = _plan(wiki, pairs, by, actor, action_reader(ctx), ctx)
        ctx.journal.update(by=by, targets=[k for _t, k, _p in plan.fixes])
        ctx.write_many(encode_writes(plan.writes))
        n = plan.links
        ctx.status = Status.FIXED
        what = (f"alias added to {len(plan.writes)} page(s)" if by == "alias"
                else f"{len(plan.rewrites)} link(s) rewritten in {len(plan.writes)} page(s)")
        ctx.message = f"{len(plan.fixes)} target(s), {n} link(s) repaired: {what}"
        ctx.data.update(plan.to_json())
        ctx.data["links"] = n

    return run_action(wiki, actor, "link_fix", f"{label} (by {by})", apply)


def _create_path(wiki: Wiki, written: str) -> tuple[str, str]:
    """(page path, title) for a page the target names."""
    raw = written.strip().replace("\\", "/")
    if raw.lower().endswith(".md"):
        raw = raw[:-3]
    if "/" in raw:
        folder, _, name = raw.rpartition("/")
        parts = [p for p in folder.split("/") if p]
        if any(p in ("..", ".") for p in parts):
            raise Invalid(message=f"cannot create a page for {written!r}: '..' is not allowed")
        slug = slugify(name)
        if not slug:
            raise Invalid(message=f"cannot create a page for {written!r}: it has no letters or digits")
        return f"{'/'.join(parts)}/{slug}.md", name.strip()
    slug = slugify(raw)
    if not slug:
        raise Invalid(message=f"cannot create a page for {written!r}: it has no letters or digits")
    folder = "wiki/" if (wiki.root / "wiki").is_dir() else ""
    return f"{folder}{slug}.md", raw


def create(wiki: Wiki, target: str, actor: Actor = OPERATOR, today: _dt.date | None = None) -> ActionResult:
    """Create the page an unresolved ``target`` names (append's scaffold, no fact): one commit."""
    day = today or _dt.date.today()

    def apply(ctx: ActionContext) -> None:
        from .append import route, scaffold

        key, edges = _one(wiki, target, actor)
        written = _written(edges)
        path, title = _create_path(wiki, written)
        slug = posixpath.splitext(posixpath.basename(path))[0]
        if "/" not in written:
            route(wiki, slug, actor)  # a name taken by a page the actor may not see: Denied
        path = _check(ctx, path, creates=True)
        if ctx.read_bytes(path) is not None:
            raise Invalid(message=f"{path} exists already; fix the link with 'curator links fix'")
        text = scaffold(slug, "", day, title=title)
        if key not in (link_key(title), link_key(path), link_key(slug)):  # e.g. [[C++ Guide]]: c-guide.md
            text = frontmatter.update(text, {"aliases": [written]})
        ctx.journal.update(page=path, key=key)
        ctx.write_text(path, text)
        ctx.status = Status.CREATED
        ctx.message = f"created {path}: {len(edges)} link(s) to [[{written}]] now resolve"
        ctx.data.update(page=path, target=written, key=key, links=len(edges))

    return run_action(wiki, actor, "link_create", str(target), apply)


def ignore(wiki: Wiki, target: str, actor: Actor = OPERATOR) -> ActionResult:
    """Leave ``target`` out of the queue for good: a committed entry in :data:`IGNORED_FILE`."""

    def apply(ctx: ActionContext) -> None:
        ctx.check_write(IGNORED_FILE)  # operator-only (a decision file), before anything is read
        key, edges = _one(wiki, target, actor)
        written = _written(edges)
        data = load_ignored(wiki)
        ctx.data.update(target=written, key=key)
        if key in ignored_keys(wiki):
            ctx.status = Status.UNCHANGED
            ctx.message = f"[[{written}]] is already ignored"
            return
        data["ignored"].append({"target": written, "key": key, "by": str(actor),
                                "date": _dt.date.today().isoformat()})
        ctx.write_text(IGNORED_FILE, _render_ignored(data))
        ctx.status = Status.IGNORED
        ctx.message = f"[[{written}]] ignored ({len(edges)} link(s)); it no longer shows in the queue"

    return run_action(wiki, actor, "link_ignore", str(target), apply)
