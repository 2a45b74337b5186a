"""Link suggestions (docs/design.md §12): the pages an unresolved target may have meant, for the
whole queue in one batch (:class:`Suggester`; :mod:`curator.engine.review.linkrepair` holds one per link index).

Kept apart from :mod:`curator.engine.review.linkrepair` so that its fixes (``links fix|create|ignore``) do not import
numpy, which only the suggestions use.
"""

from __future__ import annotations

import itertools
import operator
import posixpath
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from curator.engine.corpus.page import Page
from curator.engine.corpus.slugs import (
    SLUG_MAX,
    all_plain,
    plain_slug,
    similarity,
    slug_features,
    slugify_many,
)

# (defined there: the saved queue, and whether its rows are sure, need no numpy)
from curator.engine.review.link_queue import ACCEPT_CONFIDENCE as ACCEPT_CONFIDENCE  # (re-exported)
from curator.engine.review.link_queue import Suggestion

MAX_SUGGESTIONS = 5
SUGGEST_THRESHOLD = 0.4  # slugSim floor, as for append's candidates
PREFIX_SCORE = 0.8  # a target that is a word-wise prefix of a name scores 0.8 .. 1.0
#: Postings longer than this are not followed (a word half the wiki's names share finds nothing).
RARE_WORD = 40
RUN_POSTINGS = 200
PREFIX_HITS = 20
SCORED = 8  # names scored with slugSim per target, besides prefixes (the most shared word pairs)


# --- suggestions ------------------------------------------------------------------------------------

_NAMES_OF = operator.attrgetter("path", "title", "aliases")


def _stem(path: str) -> str:
    """``Page.stem`` from the path (``posixpath.splitext`` of the file name, quicker for ``x.md``)."""
    name = path.rpartition("/")[2]
    if name.endswith(".md") and name[:-3].lstrip("."):
        return name[:-3]
    return posixpath.splitext(name)[0]


#: why a page is suggested, by stage (an earlier stage wins a tie: see :meth:`Suggester._rank`)
SAME, PLURAL, BEGINS, SIMILAR = 0, 1, 2, 3
REASONS = ("same name", "the same name but for a plural", "the target begins its name", "similar name")
#: a name that is the target but for a plural ending ([[Lanterns]] -> lantern.md): as sure as a
#: prefix covering most of a name, and below the same name
PLURAL_SCORE = 0.95
#: a runner-up scoring this close to the top suggestion makes the choice between them a guess
AMBIGUOUS_MARGIN = 0.05
#: the confidence of a guess (below :data:`ACCEPT_CONFIDENCE`, whatever the scores)
GUESS = 0.5


def number_forms(alnum: str) -> list[str]:
    """The letters-and-digits forms of a name with its last word in the other number:
    ``lanterns`` -> ``lantern``, ``boxes`` -> ``box``, ``entries`` -> ``entry`` and back. (Too
    short a name is left alone: ``as`` is not the plural of ``a``.)"""
    if len(alnum) < 3 or not alnum[-1].isalpha():
        return []
    forms = [alnum + "s", alnum + "es"]
    if alnum.endswith("y"):
        forms.append(alnum[:-1] + "ies")
    if alnum.endswith("s"):
        forms.append(alnum[:-1])
        if alnum.endswith("es"):
            forms.append(alnum[:-2])
        if alnum.endswith("ies"):
            forms.append(alnum[:-3] + "y")
    return forms


class Suggester:
    """Pages a target may have meant, from an index of page names (file stem, title, aliases as
    slugs) built once per link index: exact names, a sorted list for prefixes, and postings of
    adjacent word pairs and rare words. Each target then scores a few dozen names, never all.

    Many targets are answered in one batch (:meth:`suggest_many`, what the queue asks): each
    target's candidate names are gathered from the postings, the shared word pairs counted for
    every target at once, every (target, name) pair scored with ``slugSim`` in one pass over
    columns of precomputed features (each name's computed once, for all the targets that meet
    it), and each target's best pages ranked in arrays. Each target gets what scoring it alone
    gives (the same pages, order and scores: ``tests/engine/review/test_link_suggestions.py`` keeps that
    one-at-a-time suggester as the reference)."""

    def __init__(self, pages: Mapping[str, Page] | Mapping[str, Any]) -> None:
        records = list(map(_NAMES_OF, pages.values()))  # (path, title, aliases) of each page
        stems = [_stem(path) for path, _title, _aliases in records]
        if not all_plain(stems):  # (most are slugs already)
            odd = list(itertools.compress(range(len(stems)), map(operator.not_, map(plain_slug, stems))))
            for k, slug in zip(odd, slugify_many([stems[k] for k in odd]), strict=True):
                stems[k] = slug
        titles = slugify_many([title for _path, title, _aliases in records])
        aliases = iter(slugify_many([a for _path, _title, listed in records if listed for a in listed]))
        # every page's names: file stem, title, aliases, as slugs, once each (and nothing empty)
        names: list[tuple[str, ...]] = list(zip(stems, titles, strict=True))
        kept: list[tuple[bool, ...]] = list(zip(map(operator.truth, stems),
                                                map(operator.and_, map(operator.truth, titles),
                                                    map(operator.ne, titles, stems)), strict=True))
        for n in itertools.compress(range(len(records)), map(operator.itemgetter(2), records)):  # (the few aliased)
            mine = list(names[n])
            for alias in itertools.islice(aliases, len(records[n][2])):
                if alias and alias not in mine:
                    mine.append(alias)
            names[n], kept[n] = tuple(mine), (*kept[n], *[True] * (len(mine) - 2))
        slugs = list(itertools.compress(itertools.chain.from_iterable(names), itertools.chain.from_iterable(kept)))
        per_page = np.fromiter(map(sum, kept), dtype=np.int64, count=len(kept))
        owner = np.repeat(np.arange(len(kept), dtype=np.int64), per_page)  # per name: its page's place in ``_pages``
        self.slugs = slugs
        self._pages = listed = list(pages)
        self._owner = owner
        #: each page's place in path order (the tie-break of equal scores)
        self._path_rank = np.empty(len(listed), dtype=np.int64)
        self._path_rank[sorted(range(len(listed)), key=listed.__getitem__)] = np.arange(len(listed))
        count = len(slugs)
        self._memo: dict[tuple[str, int], list[Suggestion]] = {}
        self._lock = threading.Lock()  # a session's suggester serves the station's threads
        self._words_index: dict[str, list[int]] | None = None  # built on first need (rarely)
        self._page_at: dict[str, int] | None = None  # each page's place, and its names: on first need
        self._first_name: list[int] = []
        self._name_count: list[int] = []
        #: letters and digits of each name, and the names by them
        self._alnum = alnum = "\0".join(slugs).replace("-", "").split("\0") if slugs else []
        numbers = dict(zip(dict.fromkeys(alnum), itertools.count()))
        self._alnum_id = ids = np.fromiter(map(numbers.__getitem__, alnum), dtype=np.int64, count=count)
        self._alnum_numbers = numbers
        #: the names by those numbers: ``_alnum_names[_alnum_start[k]:][:_alnum_count[k]]`` have number k
        self._alnum_names = np.argsort(ids, kind="stable")
        self._alnum_count = np.bincount(ids, minlength=len(numbers))
        self._alnum_start = np.cumsum(self._alnum_count) - self._alnum_count
        self._alnum_len = np.fromiter(map(len, alnum), dtype=np.int64, count=count)
        # the words of every name, numbered; postings of adjacent word pairs (by their two numbers)
        flat = "-".join(slugs).split("-") if slugs else []
        self._vocab = vocab = dict(zip(dict.fromkeys(flat), itertools.count()))
        words = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
        lengths = np.fromiter(map(len, slugs), dtype=np.int64, count=count)
        sizes = lengths - self._alnum_len + 1  # (the hyphens, and one)
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
        self._pairs_met = np.zeros(count, dtype=np.uint64)
        encoded = np.array([name.encode() for name in slugs], dtype=bytes)  # (UTF-8 bytes sort as str does)
        self._sorted_ids = np.argsort(encoded, kind="stable")  # (equal names: in order)
        self._sorted_names = encoded[self._sorted_ids]

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
        split = [q.split("-") for q in queries]
        q_alnum = [q.replace("-", "") for q in queries]
        numbers = self._alnum_numbers
        q_id = np.fromiter(map(numbers.get, q_alnum, itertools.repeat(-1)), dtype=np.int64, count=len(queries))
        # the same names (letters and digits equal): fixed at 1.0
        same_q, same_n = self._named(q_id)
        # names that are the target but for a plural ending: [[Lanterns]] -> lantern
        forms = [number_forms(a) for a in q_alnum]
        plural_q, plural_n = self._named(np.fromiter(map(numbers.get, itertools.chain.from_iterable(forms),
                                                         itertools.repeat(-1)), dtype=np.int64))
        plural_q = np.repeat(np.arange(len(queries), dtype=np.int64), [len(f) for f in forms])[plural_q]
        # names the target begins (word-wise): [[Nocturne Bg3 V4]] -> nocturne-bg3-v4-campaign, the first
        # PREFIX_HITS in name order (those starting with "q-" sort before "q.", "." following "-")
        names = self._sorted_names
        first = np.searchsorted(names, np.array([(q + "-").encode() for q in queries], dtype=bytes))
        hits = np.minimum(np.searchsorted(names, np.array([(q + ".").encode() for q in queries], dtype=bytes)) - first,
                          PREFIX_HITS)
        begin_q = np.repeat(np.arange(len(queries), dtype=np.int64), hits)
        begin_n = self._sorted_ids[np.repeat(first - (np.cumsum(hits) - hits), hits) + np.arange(len(begin_q))]
        q_len = np.fromiter(map(len, q_alnum), dtype=np.int64, count=len(queries))
        begin_s = PREFIX_SCORE + (1 - PREFIX_SCORE) * q_len[begin_q] / self._alnum_len[begin_n]
        # names that begin the target (its first words, all but the last), to be scored
        heads = [list(itertools.accumulate(qw[:-1])) for qw in split]
        pool_q, pool_n = self._named(np.fromiter(map(numbers.get, itertools.chain.from_iterable(heads),
                                                     itertools.repeat(-1)), dtype=np.int64))
        pool_q = np.repeat(np.arange(len(queries), dtype=np.int64), [len(h) for h in heads])[pool_q]
        words, owner, sizes = self._numbered(split)
        shared, shared_q = self._sharing(split, words, owner)
        cand_q, cand_n = _most_shared(shared, shared_q, len(self.slugs))
        pair_q = np.concatenate([pool_q, cand_q])
        pair_n = np.concatenate([pool_n, cand_n])
        scores = self._scores(queries, q_alnum, q_id, q_len, pair_q, pair_n,
                              _rows(words, owner, sizes, len(queries)), SUGGEST_THRESHOLD)
        similar = scores >= SUGGEST_THRESHOLD
        q_all = np.concatenate([same_q, plural_q, begin_q, pair_q[similar]])
        n_all = np.concatenate([same_n, plural_n, begin_n, pair_n[similar]])
        s_all = np.concatenate([np.ones(len(same_q)), np.full(len(plural_q), PLURAL_SCORE), begin_s, scores[similar]])
        k_all = np.concatenate([np.full(len(same_q), SAME), np.full(len(plural_q), PLURAL),
                                np.full(len(begin_q), BEGINS), np.full(int(similar.sum()), SIMILAR)])
        return self._best(len(queries), q_all, self._owner[n_all], s_all, k_all, limit)

    def confidence(self, target: str, found: Sequence[Suggestion]) -> float:
        """How sure the top of ``found`` (:meth:`suggest` of ``target``) is, 0 .. 1: a page may be
        taken without a look at :data:`ACCEPT_CONFIDENCE` or more.

        The score of the top suggestion, except where a name's likeness misleads: a target that
        begins a name counts the share of the name's words it covers (one word is a topic the
        page is one part of: [[Julian]] -> julian-calendar-notes, [[PR]] -> pr-1-add-design-doc,
        [[Validation]] -> validation-failure; two words of three are a page renamed with a word
        added), and a runner-up as good as the top makes it a guess."""
        if not found:
            return 0.0
        top = found[0]
        sure = top.score
        if top.reason == REASONS[BEGINS]:
            words = slugify_many([target])[0].split("-")
            covered = max((len(words) / len(name.split("-")) for name in self._names_of(top.path)
                           if name.startswith("-".join(words) + "-")), default=0.0)
            sure = PREFIX_SCORE + (1 - PREFIX_SCORE) * covered if len(words) > 1 and covered >= 0.5 \
                else GUESS * covered
        if len(found) > 1 and found[1].score >= top.score - AMBIGUOUS_MARGIN:
            sure = min(sure, GUESS)
        return round(sure, 3)

    def names_of(self, path: str) -> list[str]:
        """The names (slugs) the page ``path`` is known by here (none: not one of its pages)."""
        return self._names_of(path)

    def _names_of(self, path: str) -> list[str]:
        """The names (slugs) of the page ``path``."""
        if self._page_at is None:
            self._page_at = {p: k for k, p in enumerate(self._pages)}
            counts = np.bincount(self._owner, minlength=len(self._pages))
            self._first_name = (np.cumsum(counts) - counts).tolist()
            self._name_count = counts.tolist()
        k = self._page_at.get(path)
        if k is None:
            return []
        start = self._first_name[k]
        return self.slugs[start:start + self._name_count[k]]

    def _named(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k, a name) for each name whose letters and digits are numbered ``ids[k]`` (-1: none
        is), each k's names in name order."""
        where = np.flatnonzero(ids >= 0)
        ids = ids[where]
        sizes = self._alnum_count[ids]
        ends = np.cumsum(sizes)
        places = np.repeat(self._alnum_start[ids] - (ends - sizes), sizes) + np.arange(int(ends[-1]) if len(ends) else 0)
        return np.repeat(where, sizes), self._alnum_names[places]

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
        """Fill in the trigrams and letter pairs of the names ``ids`` not computed yet."""
        known = self._known
        todo = np.unique(ids)
        todo = todo[~known[todo]]
        if not len(todo):
            return
        listed = todo.tolist()
        plain, (rows, sizes) = _trigrams([self.slugs[i] for i in listed])
        self._plain[todo] = plain
        self._tri_rows[todo] = rows
        self._tri_len[todo] = sizes
        self._pairs_met[todo] = letter_pairs([self._alnum[i] for i in listed], plain)
        known[todo] = True

    def _scores(self, queries: list[str], q_alnum: list[str], q_id: np.ndarray, q_len: np.ndarray,
                pair_q: np.ndarray, pair_n: np.ndarray, q_words: tuple[np.ndarray, np.ndarray],
                floor: float = 0.0) -> np.ndarray:
        """``slugSim`` (:func:`~curator.engine.corpus.slugs.similarity`) of each (target, name) pair, in one pass: the
        trigrams and the words the two share counted in arrays (each pair's two rows of numbers
        sorted together, a number met twice being one shared), containment over strings (only
        where the shorter's letter pairs are among the longer's). A pair with a slug of other
        scripts is scored by :func:`~curator.engine.corpus.slugs.similarity` itself. (``q_alnum``, ``q_id``, ``q_len``:
        each target's letters and digits, their number among the names', their length.)

        A pair scoring below ``floor`` may get 0 instead: neither Jaccard is counted for a pair
        whose set sizes alone keep it below ``floor`` (smaller / larger, as ``similarity``'s floor)."""
        count = len(pair_q)
        if not count:
            return np.zeros(0, dtype=np.float64)
        self._features(pair_n)
        q_plain, (q_rows, q_tri) = _trigrams(queries)
        plain = q_plain[pair_q] & self._plain[pair_n]
        equal = (q_id[pair_q] == self._alnum_id[pair_n]) & (q_id[pair_q] >= 0)
        la, lb = q_len[pair_q], self._alnum_len[pair_n]
        inside = equal.copy()
        q_met, n_met = letter_pairs(q_alnum, q_plain)[pair_q], self._pairs_met[pair_n]
        for small, large, s_of, l_of, which in ((q_alnum, self._alnum, pair_q, pair_n, (la < lb) & ((q_met & ~n_met) == 0)),
                                                (self._alnum, q_alnum, pair_n, pair_q, (lb < la) & ((n_met & ~q_met) == 0))):
            where = np.flatnonzero(which & plain)
            inside[where] = np.fromiter(map(operator.contains, map(large.__getitem__, l_of[where].tolist()),
                                            map(small.__getitem__, s_of[where].tolist())), dtype=bool, count=len(where))
        ta, tb = q_tri[pair_q], self._tri_len[pair_n]
        (w_rows, wa), wb = q_words, self._word_len[pair_n]
        wa = wa[pair_q]
        rest = plain & ~inside & (la > 0) & (lb > 0)  # (the rest are scored without the Jaccards)
        with np.errstate(divide="ignore", invalid="ignore"):
            tri_reach = np.minimum(ta, tb) / np.maximum(ta, tb) >= floor
            word_reach = (np.minimum(wa, wb) / np.maximum(wa, wb) >= floor) & (wa > 0) & (wb > 0)
        tri_both = _shared_counts(q_rows, pair_q, self._tri_rows, pair_n, ta, tb, rest & tri_reach, TRIGRAM_LIMIT)
        word_both = _shared_counts(w_rows, pair_q, self._word_rows, pair_n, wa, wb, rest & word_reach, NO_WORD)
        scores = np.zeros(count, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tri = tri_both / (ta + tb - tri_both)
            word = np.where((wa > 0) & (wb > 0), word_both / (wa + wb - word_both), 0.0)
            scores[:] = np.where(inside, np.maximum(0.7, np.minimum(la, lb) / np.maximum(la, lb)),
                                 np.maximum(tri, word))
        scores[equal] = 1.0
        scores[(la == 0) | (lb == 0)] = 0.0
        for k in np.flatnonzero(~plain).tolist():  # a slug of other scripts: scored one by one
            scores[k] = similarity(slug_features(queries[int(pair_q[k])]), slug_features(self.slugs[int(pair_n[k])]))
        return scores

    def _best(self, count: int, qs: np.ndarray, pages: np.ndarray, scores: np.ndarray, stages: np.ndarray,
              limit: int) -> list[list[Suggestion]]:
        """Each target's best ``limit`` pages: a page's best score (a tie: the earlier stage's
        reason), then the highest scores first, equal ones in path order."""
        if not len(qs):
            return [[] for _ in range(count)]
        values, rank = np.unique(scores, return_inverse=True)  # (few distinct: each rounded once)
        rank = len(values) - 1 - rank.reshape(-1)  # 0 for the highest score
        width, pages_count = len(values), len(self._pages)
        if count * pages_count * width * len(REASONS) < 2**62:  # one number per key, sorted at once
            order = np.argsort(((qs * pages_count + pages) * width + rank) * len(REASONS) + stages)
        else:
            order = np.lexsort((stages, rank, qs * pages_count + pages))
        qs, pages, rank, stages = qs[order], pages[order], rank[order], stages[order]
        first = np.ones(len(qs), dtype=bool)
        first[1:] = (qs[1:] != qs[:-1]) | (pages[1:] != pages[:-1])
        qs, pages, rank, stages = qs[first], pages[first], rank[first], stages[first]
        if count * width * pages_count < 2**62:
            order = np.argsort((qs * width + rank) * pages_count + self._path_rank[pages])
        else:
            order = np.lexsort((self._path_rank[pages], rank, qs))
        qs, pages, rank, stages = qs[order], pages[order], rank[order], stages[order]
        starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
        place = np.arange(len(qs)) - np.repeat(starts, np.diff(np.r_[starts, len(qs)]))
        keep = place < limit
        qs, pages, stages, which = qs[keep], pages[keep], stages[keep], len(values) - 1 - rank[keep]
        paths, reasons = self._pages, REASONS
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
    """The trigram sets of :func:`~curator.engine.corpus.slugs.slug_features` for many :data:`~curator.engine.corpus.slugs.plain_slug` slugs at once, as
    numbers: (a ``len(slugs) x SLUG_MAX`` array of ``uint16``, each row a slug's distinct trigram
    numbers in ascending order followed by :data:`NO_TRIGRAM`; the size of each set). Two slugs
    share a trigram exactly when their rows share its number. (:data:`ROWS` slugs at a time, of
    similar lengths, each part as wide as its longest.)"""
    count = len(slugs)
    lengths = np.fromiter(map(len, slugs), dtype=np.int64, count=count)
    rows = np.full((count, SLUG_MAX), NO_TRIGRAM, dtype=np.uint16)
    sizes = np.zeros(count, dtype=np.int64)
    order = np.argsort(lengths, kind="stable")
    for start in range(0, count, ROWS):
        part = order[start:start + ROWS]
        chars = np.array([slugs[i].encode("ascii") for i in part.tolist()])
        wide, n = chars.itemsize, lengths[part]
        padded = np.zeros((len(part), wide + 2), dtype=np.int32)  # " slug " (0 past its end)
        padded[:, 0] = _BASE - 1
        padded[:, 1:-1] = _NUMBER[chars.view(np.uint8).reshape(len(part), wide)]
        padded[np.arange(len(part)), n + 1] = _BASE - 1
        tri = ((padded[:, :-2] * _BASE + padded[:, 1:-1]) * _BASE + padded[:, 2:]).astype(np.uint16)
        tri[np.arange(wide) >= n[:, None]] = NO_TRIGRAM  # a slug of n characters has n trigrams
        tri.sort(axis=1)
        twice = (tri[:, 1:] == tri[:, :-1]) & (tri[:, 1:] != NO_TRIGRAM)
        again = np.flatnonzero(twice.any(axis=1))  # (the few with a trigram twice)
        tri[:, 1:][twice] = NO_TRIGRAM  # each trigram once
        tri[again] = np.sort(tri[again], axis=1)
        rows[part, :wide] = tri
        sizes[part] = (tri != NO_TRIGRAM).sum(axis=1)
    return rows, sizes


def _trigrams(slugs: list[str]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Which of ``slugs`` (each what :func:`~curator.engine.corpus.slugs.slugify` makes, none empty) are
    :data:`~curator.engine.corpus.slugs.plain_slug`: the ASCII ones, as slugify makes ASCII letters and digits only
    (a slug that is not is scored by :func:`~curator.engine.corpus.slugs.similarity` itself); and their
    :func:`trigram_rows` (empty rows for the others)."""
    plain = np.fromiter(map(str.isascii, slugs), dtype=bool, count=len(slugs))
    rows = np.full((len(slugs), SLUG_MAX), NO_TRIGRAM, dtype=np.uint16)
    sizes = np.zeros(len(slugs), dtype=np.int64)
    where = np.flatnonzero(plain)
    if len(where):
        rows[where], sizes[where] = trigram_rows([slugs[i] for i in where.tolist()])
    return plain, (rows, sizes)


#: each pair of character codes (two bytes) -> its bit in a :func:`letter_pairs` mask (none past the end)
_PAIR_BIT = np.left_shift(np.uint64(1), ((np.arange(1 << 16, dtype=np.uint64) >> np.uint64(8)) * np.uint64(37)
                                          + np.arange(1 << 16, dtype=np.uint64)) % np.uint64(64))
_PAIR_BIT[np.arange(1 << 16) % 256 == 0] = 0
#: rows of characters turned into numbers at once (temporary arrays of a few MB at most)
ROWS = 4096


def letter_pairs(alnum: Sequence[str], plain: np.ndarray) -> np.ndarray:
    """A 64-bit mask of the adjacent character pairs of each ASCII letters-and-digits string of
    ``alnum`` that is ``plain`` (0 for the others), each pair one bit (hashed): a string inside
    another has its pairs among the other's, so a mask with a bit the other's lacks rules it out."""
    out = np.zeros(len(alnum), dtype=np.uint64)
    where = np.flatnonzero(plain).tolist()
    for start in range(0, len(where), ROWS):
        part = where[start:start + ROWS]
        chars = np.array([alnum[i].encode("ascii") for i in part])
        if chars.itemsize < 2:
            continue  # (one character each: no pairs)
        codes = chars.view(np.uint8).reshape(len(part), chars.itemsize).astype(np.uint16)
        out[part] = np.bitwise_or.reduce(_PAIR_BIT[(codes[:, :-1] << 8) | codes[:, 1:]], axis=1)
    return out


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
