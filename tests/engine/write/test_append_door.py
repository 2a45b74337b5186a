"""The one write door (docs/design.md §4): slugify, routing, dedup, composition, placement, encodings."""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
from pathlib import Path

import pytest

from curator.engine.corpus.facts import clean_bullet, compose_bullet, find_duplicate, insert_bullet, title_of
from curator.engine.corpus.slugs import similarity, slug_features, slug_sim, slugify
from curator.engine.policy.actor import OPERATOR, Actor
from curator.engine.policy.scope import Decision
from curator.engine.wiki import Wiki
from curator.engine.write.append import append, route
from curator.engine.write.bootstrap import init_wiki

DAY = dt.date(2026, 3, 4)
AGENT = Actor("agent", "dudu")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def write(root: Path, rel: str, text: str | bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8", newline="")


@pytest.fixture
def wiki(tmp_path: Path) -> Wiki:
    root = tmp_path / "w"
    init_wiki(root)
    write(root, "wiki/ann-smith.md",
          "---\ntitle: Ann Smith\nowner: finance  # keep me\nupdated: 2020-01-01\n---\n# Ann Smith\n\n"
          "## Updates\n\n- Ann Smith joined ACME in 2019 [[acme]] (added 2020-01-01)\n\n## Notes\n\nFree text.\n")
    write(root, "wiki/payments.md", "# Payments\n\nThe payments team.\n")
    write(root, "auto/ann-smit.md", "# auto\n")
    write(root, "_review/ann-smithe.md", "# review\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed")
    w = Wiki(root)
    yield w
    w.close()


def clean_tree(root: Path) -> bool:
    return git(root, "status", "--porcelain") == ""


# --- slugs -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "slug"), [
    ("Ann Smith", "ann-smith"), ("  --Hello,  World!!  ", "hello-world"), ("a_b.c/d", "a-b-c-d"),
    ("../../x", "x"), ("付款流程", "付款流程"), ("Café Zürich", "café-zürich"), ("!!!", ""), ("", ""),
    ("x" * 70, "x" * 60), ("日本語 テキスト", "日本語-テキスト"),
])
def test_slugify(raw: str, slug: str) -> None:
    assert slugify(raw) == slug


def test_slugify_on_ascii_is_the_spec_regex() -> None:
    import re

    rng = random.Random(3)
    alphabet = "abcXYZ019 -_./!?#"
    for _ in range(500):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        expected = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60].rstrip("-")
        assert slugify(s) == expected


@pytest.mark.parametrize(("a", "b", "score"), [
    ("ann-smith", "ann-smith", 1.0), ("ann", "ann-smith", 0.7), ("ann-smith", "ann", 0.7),
    ("payments-team", "payments-teams", 12 / 13), ("", "x", 0.0), ("--", "ann", 0.0),
    ("abc", "xyz", 0.0), ("red-apple", "apple-red", 1.0),
])
def test_slug_sim(a: str, b: str, score: float) -> None:
    assert slug_sim(a, b) == pytest.approx(score)


def test_slug_sim_words_and_trigrams() -> None:
    # words {red, green, apple} vs {red, apple}: no containment of "redgreenapple"/"redapple"
    assert slug_sim("red-green-apple", "red-apple") == pytest.approx(max(2 / 3, _tri("red-green-apple", "red-apple")))


def _tri(a: str, b: str) -> float:
    ta = {f" {a} "[i:i + 3] for i in range(len(a))}
    tb = {f" {b} "[i:i + 3] for i in range(len(b))}
    return len(ta & tb) / len(ta | tb)


def test_precomputed_routing_scores_equal_slug_sim() -> None:
    rng = random.Random(7)
    words = ["ann", "smith", "pay", "payments", "team", "ledger", "a", "x1", "付款", "流程"]
    slugs = ["-".join(rng.sample(words, rng.randint(1, 3))) for _ in range(300)]
    for a in slugs[:60]:
        fa = slug_features(a)
        for b in slugs:
            exact = slug_sim(a, b)
            fast = similarity(fa, slug_features(b), 0.4)
            if exact >= 0.4 or fast >= 0.4:
                assert fast == pytest.approx(exact), (a, b)


# --- routing ------------------------------------------------------------------------------------

def test_typo_slug_gives_candidates_and_writes_nothing(wiki: Wiki) -> None:
    head = git(wiki.root, "rev-parse", "HEAD")
    res = append(wiki, "ann-smoth", "Ann moved to Berlin", actor=AGENT, today=DAY)
    assert res.status == "candidates" and res.ok and res.commit is None
    assert [c["path"] for c in res.data["candidates"]] == ["wiki/ann-smith.md"]
    assert "create_new" in res.message and "ann-smith" in res.message
    assert git(wiki.root, "rev-parse", "HEAD") == head and clean_tree(wiki.root)
    assert not (wiki.root / "wiki" / "ann-smoth.md").exists()


def test_subset_slug_scores_at_least_07(wiki: Wiki) -> None:
    res = append(wiki, "ann", "Ann likes tea", actor=AGENT, today=DAY)
    assert res.status == "candidates"
    (cand,) = res.data["candidates"]
    assert cand["slug"] == "ann-smith" and cand["score"] >= 0.7


def test_auto_and_review_pages_are_not_routed_to(wiki: Wiki) -> None:
    target, cands = route(wiki, "ann-smit")
    assert target is None and all(not c.path.startswith(("auto/", "_review/")) for c in cands)
    assert route(wiki, "ann-smithe")[0] is None


def test_at_most_five_candidates_best_first(wiki: Wiki) -> None:
    for i in range(8):
        write(wiki.root, f"wiki/ledger-{i}.md", "# L\n")
    res = append(wiki, "ledger", "x is y", today=DAY)
    scores = [c["score"] for c in res.data["candidates"]]
    assert res.status == "candidates" and len(scores) == 5 and scores == sorted(scores, reverse=True)
    assert all(s >= 0.4 for s in scores)


def test_unrelated_slug_creates_page_under_wiki(wiki: Wiki) -> None:
    res = append(wiki, "Quarterly Roadmap", "Q3 focuses on refunds", links=["Payments", ""],
                 actor=AGENT, today=DAY)
    assert res.status == "appended" and res.data["created"] is True
    assert res.data["page"] == "wiki/quarterly-roadmap.md"
    text = (wiki.root / "wiki" / "quarterly-roadmap.md").read_text()
    assert text == ("---\ntitle: Quarterly Roadmap\nlayer: deep\ntrust: 0.5\ncreated: 2026-03-04\n"
                    "updated: 2026-03-04\n---\n\n# Quarterly Roadmap\n\n## Updates\n\n"
                    "- Q3 focuses on refunds [[payments]] (added 2026-03-04)\n")
    assert git(wiki.root, "log", "-1", "--format=%an <%ae>|%s").strip() == \
        "agent:dudu <dudu@agents.invalid>|wiki_append: quarterly-roadmap"
    assert clean_tree(wiki.root)
    line = (wiki.root / ".curator" / "journal.jsonl").read_text().splitlines()[-1]
    rec = json.loads(line)
    assert {"t", "slug", "content", "created", "committed", "actor"} <= rec.keys()
    assert (rec["slug"], rec["content"], rec["created"], rec["committed"], rec["actor"]) == \
        ("quarterly-roadmap", "Q3 focuses on refunds", True, True, "agent:dudu")


def test_new_page_goes_to_root_without_wiki_folder(tmp_path: Path) -> None:
    init_wiki(tmp_path / "r")
    w = Wiki(tmp_path / "r")
    try:
        res = append(w, "topic", "a fact here", today=DAY)
        assert res.data["page"] == "topic.md" and res.status == "appended"
    finally:
        w.close()


def test_create_new_overrides_candidates(wiki: Wiki) -> None:
    res = append(wiki, "ann", "Ann is a cat", create_new=True, today=DAY)
    assert res.status == "appended" and res.data["page"] == "wiki/ann.md" and res.data["created"]


def test_exact_match_by_slugified_stem(wiki: Wiki) -> None:
    write(wiki.root, "notes/Quarter Plan.md", "# Q\n")
    res = append(wiki, "quarter plan", "a plan exists", today=DAY)
    assert res.status == "appended" and res.data["page"] == "notes/Quarter Plan.md"
    assert not res.data["created"]


def test_slug_that_is_nothing_is_invalid_and_escape_is_impossible(wiki: Wiki, tmp_path: Path) -> None:
    res = append(wiki, "../..", "x y", today=DAY)
    assert res.status == "invalid" and res.is_error
    res = append(wiki, "../../evil", "an evil fact", today=DAY)
    assert res.status == "appended" and res.data["page"] == "wiki/evil.md"
    assert not (tmp_path / "evil.md").exists()
    assert append(wiki, "ok", "   ", today=DAY).status == "invalid"


def test_cjk_slug_is_kept(wiki: Wiki) -> None:
    res = append(wiki, "付款流程", "退款需要三天", today=DAY)
    assert res.status == "appended" and res.data["page"] == "wiki/付款流程.md"
    assert "# 付款流程" in (wiki.root / "wiki" / "付款流程.md").read_text()
    res = append(wiki, "付款流程", "退款需要三天", today=DAY)
    assert res.status == "duplicate"


# --- dedup -------------------------------------------------------------------------------------

def test_reformatted_restatement_is_duplicate_quoting_the_bullet(wiki: Wiki) -> None:
    res = append(wiki, "ann-smith", "ANN SMITH joined ACME, in 2019!", today=DAY)
    assert res.status == "duplicate" and res.ok and res.commit is None
    assert res.data["matched"] == "Ann Smith joined ACME in 2019"
    assert "Ann Smith joined ACME in 2019" in res.message and clean_tree(wiki.root)


def test_different_claim_same_subject_is_appended(wiki: Wiki) -> None:
    res = append(wiki, "ann-smith", "Ann Smith leads the payments team", today=DAY)
    assert res.status == "appended" and res.commit


def test_dedup_rules() -> None:
    page = "# P\n\n- Alpha beta gamma delta epsilon [[x]] (added 2020-01-01)\n- short one\n- [[only-link]]\n"
    assert find_duplicate(page, "alpha beta gamma delta epsilon zeta") == "Alpha beta gamma delta epsilon"
    assert find_duplicate(page, "we know: short one, really") == "short one"  # fact contains bullet
    assert find_duplicate(page, "short") == "short one"  # bullet contains fact
    assert find_duplicate(page, "alpha beta something else entirely") is None
    assert find_duplicate(page, "shorter") is None  # containment is by whole words
    long = "- " + "word " * 50 + "(added 2020-01-01)\n"
    assert len(find_duplicate(long, "word " * 50) or "") > 80  # quoting trims it to 80 later
    assert clean_bullet("- a [[b]] c (added 2024-01-02)") == "a c"


def test_jaccard_threshold_is_08() -> None:
    page = "- one two three four five six seven eight nine ten\n"
    # 8 shared of 10 + 0 new -> contained; use a different order and one swap: 9/11 = 0.818
    assert find_duplicate(page, "ten nine eight seven six five four three two eleven one") is not None
    # 8 / 12 = 0.667 and not contained
    assert find_duplicate(page, "one two three four five six seven eight x y") is None


def test_duplicate_quote_is_first_80_chars(wiki: Wiki) -> None:
    long = "Ann Smith " + "really " * 20 + "likes tea"
    assert append(wiki, "ann-smith", long, today=DAY).status == "appended"
    res = append(wiki, "ann-smith", long.upper(), today=DAY)
    assert res.status == "duplicate" and res.data["matched"] == long[:80]


# --- composition and placement ------------------------------------------------------------------

def test_compose_bullet() -> None:
    assert compose_bullet("  a\nfact  ", ["Ann Smith", "", "ann smith", "!!"], DAY) == \
        "- a fact [[ann-smith]] (added 2026-03-04)"
    assert title_of("ann-smith") == "Ann Smith" and title_of("2fa-setup") == "2fa Setup"


def test_bullet_goes_at_end_of_updates_not_after_next_section(wiki: Wiki) -> None:
    res = append(wiki, "ann-smith", "Ann moved to Berlin", today=DAY)
    assert res.status == "appended"
    text = (wiki.root / "wiki" / "ann-smith.md").read_text()
    assert text == ("---\ntitle: Ann Smith\nowner: finance  # keep me\nupdated: 2026-03-04\n---\n"
                    "# Ann Smith\n\n## Updates\n\n- Ann Smith joined ACME in 2019 [[acme]] (added 2020-01-01)\n"
                    "- Ann moved to Berlin (added 2026-03-04)\n\n## Notes\n\nFree text.\n")


def test_updates_section_created_at_end_when_absent(wiki: Wiki) -> None:
    res = append(wiki, "payments", "Refunds take three days", today=DAY)
    assert res.status == "appended"
    assert (wiki.root / "wiki" / "payments.md").read_text() == \
        "# Payments\n\nThe payments team.\n\n## Updates\n\n- Refunds take three days (added 2026-03-04)\n"


def test_insert_ignores_headings_in_code_and_keeps_subsections() -> None:
    text = "# T\n\n## Updates\n\n- a\n\n### Sub\n\n- b\n\n```\n## Updates\n```\n## Next\nx\n"
    out = insert_bullet(text, "- new")
    assert out == "# T\n\n## Updates\n\n- a\n\n### Sub\n\n- b\n\n```\n## Updates\n```\n- new\n\n## Next\nx\n"
    assert insert_bullet("# T\n## Updates\n## Next\n", "- n") == "# T\n## Updates\n\n- n\n\n## Next\n"
    assert insert_bullet("no newline at end", "- n") == "no newline at end\n\n## Updates\n\n- n\n"


def test_crlf_and_bom_are_preserved(wiki: Wiki) -> None:
    raw = "\ufeff---\r\ntitle: W\r\nupdated: 2020-01-01\r\n---\r\n# W\r\n\r\n## Updates\r\n\r\n- old fact here\r\n"
    write(wiki.root, "wiki/win.md", raw.encode("utf-8"))
    res = append(wiki, "win", "a new windows fact", today=DAY)
    assert res.status == "appended"
    data = (wiki.root / "wiki" / "win.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"\r\n- a new windows fact (added 2026-03-04)\r\n" in data
    assert b"updated: 2026-03-04\r\n" in data
    assert data.replace(b"\r\n", b"") .count(b"\n") == 0  # no bare LF introduced


def test_page_with_invalid_utf8_is_never_rewritten(wiki: Wiki) -> None:
    raw = b"# Bad\n\n## Updates\n\n- caf\xe9 fact\n"
    write(wiki.root, "wiki/bad.md", raw)
    git(wiki.root, "add", "wiki/bad.md")
    git(wiki.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bad")
    res = append(wiki, "bad", "another fact", today=DAY)
    assert res.status == "invalid" and "UTF-8" in res.message
    assert (wiki.root / "wiki" / "bad.md").read_bytes() == raw and clean_tree(wiki.root)


def test_broken_frontmatter_is_not_repaired_or_duplicated(wiki: Wiki) -> None:
    write(wiki.root, "wiki/broken.md", "---\ntitle: [unclosed\n---\n# B\n")
    res = append(wiki, "broken", "a fact", today=DAY)
    assert res.status == "appended"
    text = (wiki.root / "wiki" / "broken.md").read_text()
    assert text.startswith("---\ntitle: [unclosed\n---\n# B\n") and text.count("---") == 2


# --- git and policy ----------------------------------------------------------------------------------

def test_dirty_unrelated_file_is_not_swept_into_the_commit(wiki: Wiki) -> None:
    write(wiki.root, "wiki/payments.md", "# Payments\n\noperator is editing\n")
    write(wiki.root, "scratch.md", "draft\n")
    res = append(wiki, "ann-smith", "Ann moved to Berlin", today=DAY)
    assert git(wiki.root, "show", "--name-only", "--format=", res.commit or "").split() == ["wiki/ann-smith.md"]
    assert sorted(git(wiki.root, "status", "--porcelain").splitlines()) == [" M wiki/payments.md", "?? scratch.md"]


class _ReadOnlyWiki:
    def can_read(self, actor: Actor, path: str) -> bool:
        return True

    def check_write(self, actor: Actor, path: str) -> Decision:
        return Decision(False, "namespace 'wiki' is read_only")


def test_denied_by_scope(wiki: Wiki) -> None:
    wiki.policy = _ReadOnlyWiki()
    res = append(wiki, "ann-smith", "Ann moved to Berlin", actor=AGENT, today=DAY)
    assert res.status == "denied" and res.is_error and "read_only" in res.message
    assert clean_tree(wiki.root)
    assert append(wiki, "ann-smith", "Ann moved to Berlin", actor=OPERATOR, today=DAY).status == "appended"


def test_long_lived_process_routes_from_the_cache(wiki: Wiki, monkeypatch) -> None:
    import curator.engine.write.append as ap

    assert "wiki/ann-smith.md" in wiki.pages
    monkeypatch.setattr(ap._DirCache, "pages", lambda self: (_ for _ in ()).throw(AssertionError("listed")))
    res = append(wiki, "brand-new-topic", "first fact", today=DAY)
    assert res.status == "appended" and "wiki/brand-new-topic.md" in wiki.pages
    assert append(wiki, "brand-new-topic", "first fact", today=DAY).status == "duplicate"


def test_dir_cache_lists_what_the_walker_walks(tmp_path: Path) -> None:
    import os
    import time

    from curator.engine.corpus.walker import walk
    from curator.engine.write.append import _DirCache
    from tests.corpus import generate

    root = tmp_path / "c"
    generate(root, 60, hostile=True)
    state = root / ".curator"
    cache = _DirCache(root, state)
    assert set(cache.pages()) == {f.path for f in walk(root)}
    assert (state / "route-paths.json").exists()
    # age every folder's listing past the racy window, then change one folder
    old = time.time() - 60
    for folder, _dirs, _files in os.walk(root):
        if ".git" not in folder:
            os.utime(folder, (old, old))
    cache.pages()  # lists again (mtimes moved) and records the aged folders
    write(root, "wiki/new sub/Brand New.md", "# x\n")
    (root / "wiki" / next(p.name for p in (root / "wiki").iterdir() if p.suffix == ".md")).unlink()
    listed = cache.pages()
    assert listed == {f.path: listed[f.path] for f in walk(root)} and len(listed) == len(list(walk(root)))
    assert listed["wiki/new sub/Brand New.md"] == "brand-new"


def _reference_slug_sim(a: str, b: str) -> float:
    """docs/design.md §4.3 written out literally, independent of the engine's code."""
    import re

    sa, sb = re.sub(r"[\W_]", "", a.lower()), re.sub(r"[\W_]", "", b.lower())
    if not sa or not sb:
        return 0.0
    if sa == sb:
        return 1.0
    if sa in sb or sb in sa:
        return max(0.7, min(len(sa), len(sb)) / max(len(sa), len(sb)))

    def jac(x: set[str], y: set[str]) -> float:
        return len(x & y) / len(x | y) if x and y else 0.0

    pa, pb = f" {a.lower()} ", f" {b.lower()} "
    tri = jac({pa[i:i + 3] for i in range(len(pa) - 2)}, {pb[i:i + 3] for i in range(len(pb) - 2)})
    words = jac(set(a.lower().replace("-", " ").split()), set(b.lower().replace("-", " ").split()))
    return max(tri, words)


def test_slug_sim_matches_the_spec_formula_on_random_slugs() -> None:
    rng = random.Random(5)
    parts = ["ann", "smith", "an", "pay", "ments", "x", "9", "付款", "ledger", "led"]
    slugs = ["-".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(200)]
    for a, b in zip(slugs, reversed(slugs), strict=True):
        assert slug_sim(a, b) == pytest.approx(_reference_slug_sim(a, b)), (a, b)


def test_candidate_prefilter_never_drops_a_page_that_scores() -> None:
    from curator.engine.write.append import could_score

    rng = random.Random(9)
    parts = ["ann", "smith", "an", "nn", "pay", "ments", "payments", "x", "0", "00", "付款", "ledger", "a"]
    slugs = list(dict.fromkeys(slugify("-".join(rng.choice(parts) for _ in range(rng.randint(1, 4))))
                               for _ in range(400)))
    for q in [*slugs[:80], "zzz", "ann-smith-payments-ledger-00"]:
        fq = slug_features(q)
        kept = set(could_score(fq, slugs, 0.4))
        for i, b in enumerate(slugs):
            if slug_sim(q, b) >= 0.4:
                assert i in kept, (q, b)
        assert len(kept) <= len(slugs)
