"""Link suggestions in one batch (docs/design.md §12): :meth:`Suggester.suggest_many` gives every
target exactly what the one-target-at-a-time suggester gave (the same pages, order, scores and
reasons), on random names and targets with prefixes, digits, other scripts, punctuation, long
names, shared words and postings past every limit; and the batched pieces it is made of
(``slugify_many``, ``trigram_rows``, the shared-number counts) equal their one-by-one forms."""

from __future__ import annotations

import bisect
import itertools
import random
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pytest

from curator.engine.corpus.page import Page, parse_page
from curator.engine.corpus.slugs import (
    all_plain,
    plain_slug,
    similarity,
    slug_features,
    slugify,
    slugify_many,
)
from curator.engine.review import link_suggest as sg
from curator.engine.review.link_suggest import NO_TRIGRAM, TRIGRAM_LIMIT, Suggester, Suggestion, trigram_rows

# --- the reference: the suggester as it was, one target at a time (every name scored by slugSim) ---


class Reference:
    """The per-target suggester the batch replaced, kept as the oracle (module limits read at
    call time, as the batch reads them)."""

    def __init__(self, pages: Mapping[str, Page]) -> None:
        self.slugs: list[str] = []
        self.paths: list[str] = []
        for path, page in pages.items():
            names: list[str] = []
            for raw in (page.stem, page.title, *page.aliases):
                name = slugify(raw)
                if name and name not in names:
                    names.append(name)
            self.slugs += names
            self.paths += [path] * len(names)
        self.exact: dict[str, list[int]] = {}
        self.pairs: dict[str, list[int]] = {}
        self.words: dict[str, list[int]] = {}
        for i, name in enumerate(self.slugs):
            self.exact.setdefault(name.replace("-", ""), []).append(i)
            parts = name.split("-")
            if "-" in name:
                for k in range(len(parts) - 1):
                    self.pairs.setdefault(parts[k] + "-" + parts[k + 1], []).append(i)
            for w in set(parts):
                self.words.setdefault(w, []).append(i)
        ordered = sorted(zip(self.slugs, range(len(self.slugs)), strict=True))
        self.sorted = [name for name, _i in ordered]
        self.sorted_ids = [i for _name, i in ordered]

    def suggest(self, target: str, limit: int = sg.MAX_SUGGESTIONS) -> list[Suggestion]:
        q = slugify(target)
        if not q:
            return []
        paths = self.paths
        best: dict[str, tuple[float, str]] = {}
        qa = q.replace("-", "")
        for i in self.exact.get(qa, ()):
            best[paths[i]] = (1.0, "same name")
        for form in sg.number_forms(qa):
            for i in self.exact.get(form, ()):
                if best.get(paths[i], (0.0, ""))[0] < sg.PLURAL_SCORE:
                    best[paths[i]] = (sg.PLURAL_SCORE, "the same name but for a plural")
        head = q + "-"
        first = bisect.bisect_left(self.sorted, head)
        for k in range(first, min(first + sg.PREFIX_HITS, len(self.sorted))):
            name = self.sorted[k]
            if not name.startswith(head):
                break
            path = paths[self.sorted_ids[k]]
            score = sg.PREFIX_SCORE + (1 - sg.PREFIX_SCORE) * len(qa) / (len(name) - name.count("-"))
            if score > best.get(path, (0.0, ""))[0]:
                best[path] = (score, "the target begins its name")
        qw = q.split("-")
        pool: list[int] = []
        for n in range(len(qw) - 1, 0, -1):
            pool += self.exact.get("".join(qw[:n]), ())
        shared: list[int] = []
        for a, b in itertools.pairwise(qw):
            hits = self.pairs.get(f"{a}-{b}")
            if hits is not None and len(hits) <= sg.RUN_POSTINGS:
                shared += hits
        if not shared:
            for w in qw:
                hits = self.words.get(w)
                if hits is not None and len(hits) <= sg.RARE_WORD:
                    shared += hits
        if len(shared) > sg.SCORED:
            counts = Counter(shared)
            pool += sorted(counts, key=counts.__getitem__, reverse=True)[:sg.SCORED]
        else:
            pool += shared
        qf = slug_features(q)
        for i in set(pool):
            score = similarity(qf, slug_features(self.slugs[i]))
            if score >= sg.SUGGEST_THRESHOLD and score > best.get(paths[i], (0.0, ""))[0]:
                best[paths[i]] = (score, "similar name")
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
        return [Suggestion(path, round(score, 3), reason) for path, (score, reason) in ranked]


# --- random wikis -------------------------------------------------------------------------------

WORDS = ["nocturne", "bg3", "v4", "campaign", "alpha", "beta", "q3", "plan", "notes", "2024", "x7", "api",
         "付款", "流程", "café", "naïve", "draft", "entry", "155", "156", "copy", "a", "b", "ab", "aaa"]
SEPARATORS = [" ", "-", "_", " - ", ": ", "/", "  ", "."]


def _phrase(rng: random.Random, low: int = 1, high: int = 6) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    text = words[0]
    for w in words[1:]:
        text += rng.choice(SEPARATORS) + w
    return text.title() if rng.random() < 0.4 else text


def _wiki(rng: random.Random, count: int) -> dict[str, Page]:
    pages: dict[str, Page] = {}
    for n in range(count):
        stem = slugify(_phrase(rng)) or f"page-{n}"
        if rng.random() < 0.05:
            stem = "-".join([rng.choice(WORDS)] * 30)  # longer than a slug may be
        path = f"{rng.choice(['wiki', 'wiki/x', 'notes'])}/{stem}-{n}.md" if rng.random() < 0.5 \
            else f"{rng.choice(['wiki', 'notes'])}/{stem}.md"
        if path in pages:
            continue
        meta = []
        if rng.random() < 0.6:
            meta.append(f"title: \"{_phrase(rng)}\"")
        if rng.random() < 0.25:
            meta.append("aliases: [" + ", ".join(f"\"{_phrase(rng, 1, 3)}\"" for _ in range(rng.randint(1, 3))) + "]")
        head = "---\n" + "\n".join(meta) + "\n---\n" if meta else ""
        pages[path] = parse_page(path, f"{head}# Body\n".encode())[0]
    return pages


def _targets(rng: random.Random, pages: Mapping[str, Page], count: int) -> list[str]:
    names = [p.rsplit("/", 1)[1][:-3] for p in pages] + [p.title for p in pages.values()]
    out: list[str] = []
    for _ in range(count):
        kind = rng.random()
        name = rng.choice(names)
        words = slugify(name).split("-")
        if kind < 0.25:  # a prefix of a name, word-wise
            out.append(" ".join(words[: rng.randint(1, max(1, len(words) - 1))]).title())
        elif kind < 0.4:  # a name and more
            out.append(f"{name} {rng.choice(WORDS)}")
        elif kind < 0.55:  # a name with a word dropped or swapped
            k = rng.randrange(len(words))
            out.append("-".join(words[:k] + ([rng.choice(WORDS)] if rng.random() < 0.5 else []) + words[k + 1:]))
        elif kind < 0.65:
            out.append(name)
        elif kind < 0.7:
            out.append(rng.choice(["!!!", "", "  ", "???", "---"]))  # folds to nothing
        else:
            out.append(_phrase(rng))
    out += [out[0].upper(), out[1] + "!", out[2].replace(" ", "-")]  # targets that fold to one slug
    out += [rng.choice(names) + rng.choice(["s", "es", "S"]) for _ in range(count // 10)]  # plurals
    return out


@pytest.mark.parametrize("seed", range(12))
def test_batch_gives_each_target_what_the_one_by_one_suggester_gave(seed: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    if seed % 2:  # small limits, so that every cut is crossed: common pairs and words, many shared, prefixes
        monkeypatch.setattr(sg, "RUN_POSTINGS", rng.randint(1, 6))
        monkeypatch.setattr(sg, "RARE_WORD", rng.randint(1, 6))
        monkeypatch.setattr(sg, "SCORED", rng.randint(1, 4))
        monkeypatch.setattr(sg, "PREFIX_HITS", rng.randint(1, 3))
    pages = _wiki(rng, rng.choice([40, 150, 400]))
    targets = _targets(rng, pages, 300)
    reference = Reference(pages)
    expected = [reference.suggest(t) for t in targets]
    assert sum(map(len, expected)) > len(targets)  # (the random wikis do suggest)
    batch = Suggester(pages).suggest_many(targets)
    assert batch == expected
    one = Suggester(pages)
    assert [one.suggest(t) for t in targets[:60]] == expected[:60]  # one target at a time, the same
    assert Suggester(pages).suggest_many(targets[:50], limit=2) == [reference.suggest(t, 2) for t in targets[:50]]


def test_every_suggested_score_is_slugsim_or_the_prefix_score() -> None:
    rng = random.Random(99)
    pages = _wiki(rng, 300)
    suggester = Suggester(pages)
    names: dict[str, list[str]] = {}
    for path, page in pages.items():
        for raw in (page.stem, page.title, *page.aliases):
            if slugify(raw):
                names.setdefault(path, []).append(slugify(raw))
    seen = plurals = 0
    for target, found in zip(targets := _targets(rng, pages, 300), suggester.suggest_many(targets), strict=True):
        q = slugify(target)
        for s in found:
            sims = [similarity(slug_features(q), slug_features(n)) for n in names[s.path]]
            if s.reason == "similar name":
                # (slugSim of one of the page's names: the one a candidate, not always the best)
                assert s.score in {round(x, 3) for x in sims} and s.score >= sg.SUGGEST_THRESHOLD
                seen += 1
            elif s.reason == "same name":
                assert s.score == 1.0 and max(sims) == 1.0
            elif s.reason == "the same name but for a plural":
                forms = sg.number_forms(q.replace("-", ""))
                assert s.score == sg.PLURAL_SCORE and any(n.replace("-", "") in forms for n in names[s.path])
                plurals += 1
            else:
                assert any(n.startswith(q + "-") for n in names[s.path])
        assert [s.score for s in found] == sorted((s.score for s in found), reverse=True)
    assert seen > 50 and plurals > 5


def test_slugify_many_is_slugify_of_each() -> None:
    rng = random.Random(5)
    alphabet = "abcXYZ019 -_.!/:é付款ß\t\n\0İ"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    texts += ["", "-", "a" * 70, "a-" * 40, "Nocturne Bg3 V4", "C++ Guide", " x ", "Ｆｕｌｌ　Ｗｉｄｔｈ"]
    assert slugify_many(texts) == [slugify(t) for t in texts]
    ascii_only = [t for t in texts if t.isascii() and "\0" not in t]  # (all at once: the common case)
    ascii_only += ["", "-", "--a--", " a b ", "A_B", "a" * 59 + "-b", "x" * 61, "-" * 70, "a--b"]
    assert slugify_many(ascii_only) == [slugify(t) for t in ascii_only]
    assert slugify_many(["one"]) == ["one"] and slugify_many([]) == []


def test_plain_slugs_are_the_ascii_ones_slugify_makes() -> None:
    rng = random.Random(11)
    alphabet = "abcXYZ019 -_.!/:é付款ß\tİ"
    slugs = [s for s in (slugify("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))) for _ in range(3000)) if s]
    assert all(bool(plain_slug(s)) == s.isascii() for s in slugs)  # what the batch takes as plain
    assert not all_plain(slugs) and all_plain([s for s in slugs if plain_slug(s)]) and all_plain([])
    assert not all_plain(["a", "b-"]) and not all_plain(["a", ""]) and not all_plain(["a" * 61])
    assert all_plain(["a", "b-c", "a" * 60])


def test_letter_pairs_never_rule_out_a_string_inside_another() -> None:
    rng = random.Random(3)
    words = ["".join(rng.choice("abcde019") for _ in range(rng.randint(1, 8))) for _ in range(300)]
    strings = ["".join(rng.sample(words, rng.randint(1, 4)))[:60] for _ in range(3000)]
    masks = sg.letter_pairs(strings, np.ones(len(strings), dtype=bool)).tolist()
    inside = ruled_out = 0
    for _ in range(40000):
        i, j = rng.randrange(len(strings)), rng.randrange(len(strings))
        small, large = strings[i], strings[j]
        if small in large:
            inside += 1
            assert masks[i] & ~masks[j] == 0, (small, large)
        elif masks[i] & ~masks[j]:
            ruled_out += 1
    assert inside > 100 and ruled_out > 10000  # (it does rule most out)
    assert sg.letter_pairs(["ab", "x"], np.array([False, True])).tolist() == [0, 0]


@pytest.mark.parametrize("rows", [sg.ROWS, 7])
def test_trigram_rows_are_the_trigram_sets_and_count_what_two_share(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sg, "ROWS", rows)  # (slugs in parts of similar lengths: many parts too)
    rng = random.Random(7)
    slugs = sorted({slugify(_phrase(rng, 1, 12)) for _ in range(2000)} | {"a", "aa", "aaaa", "ab-ab-ab-ab",
                                                                            "x" * 60, "1-2-3"})
    slugs = [s for s in slugs if plain_slug(s)]
    rows, sizes = trigram_rows(slugs)
    numbers: dict[str, set[int]] = {}
    for s, row, size in zip(slugs, rows, sizes, strict=True):
        tri = slug_features(s).tri
        assert size == len(tri)
        assert list(row[size:]) == [NO_TRIGRAM] * (len(row) - size) and list(row[:size]) == sorted(row[:size])
        numbers[s] = set(row[:size].tolist())
    a = np.array([rng.randrange(len(slugs)) for _ in range(5000)])
    b = np.array([rng.randrange(len(slugs)) for _ in range(5000)])
    counted = sg._shared_counts(rows, a, rows, b, sizes[a], sizes[b], np.ones(len(a), dtype=bool),
                                        TRIGRAM_LIMIT)
    for i, j, n in zip(a.tolist(), b.tolist(), counted.tolist(), strict=True):
        assert n == len(slug_features(slugs[i]).tri & slug_features(slugs[j]).tri)
        assert len(numbers[slugs[i]] & numbers[slugs[j]]) == n  # the numbers stand for the trigrams one to one
