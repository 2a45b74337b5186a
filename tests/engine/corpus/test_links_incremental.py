"""The incremental link index (issue 19): after any change, the index the wiki brings up to date
from the changed pages answers every query exactly as a fresh ``LinkIndex(pages, attachments)``.

A property test drives a small wiki on disk through random edits (links added and removed,
titles and aliases changed, pages added, removed and moved, attachment files added and removed,
pages moved in and out of a department's folder, so the actors' visibility changes) and after
each compares the wiki's operator and per-actor indexes with fresh ones on every query: the
resolution of every key from every folder, outgoing edges (in page order), backlinks, inbound
counts, unresolved and attachment lists (in source then link order), ambiguous edges, stem pages.
Focused tests pin the cases that made the rule what it is.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from curator.engine.corpus import links as links_module
from curator.engine.corpus.links import LinkIndex, folder_of
from curator.engine.corpus.page import link_key
from curator.engine.policy.actor import OPERATOR, Actor, parse_actor
from curator.engine.wiki import Wiki

FOLDERS = ["", "wiki", "wiki/people", "WIKI", "departments/sales", "departments/hr", "notes/a/b"]
STEMS = ["ann", "Ann", "bob", "cat dan", "cat-dan", "eve", "ann-smith", "x", "nocturne-bg3-v4"]
TITLES = ["", "Ann Smith", "Bob", "eve", "Cat Dan", "Nocturne Bg3 V4", "X", "wiki/ann"]
ALIASES = ["ann", "Bobby", "x", "Nocturne", "wiki/ann", "Eve", "shot.png"]
FILES = ["wiki/shot.png", "departments/sales/shot.png", "eve.png", "docs/doc.pdf", "wiki/people/Shot.PNG",
         "board.canvas"]
TARGETS = ["ann", "Ann", "bob", "cat dan", "Cat Dan", "eve", "ann smith", "Ann Smith", "x", "X", "Bobby",
           "Nocturne", "Nocturne Bg3 V4", "wiki/ann", "people/bob", "wiki/people/eve", "WIKI/x",
           "../ann", "./bob", "../../x", "a/..", "wiki/..", "..", "./", "shot.png", "eve.png", "doc.pdf",
           "docs/doc.pdf", "missing.png", "board.canvas", "nobody", "sales/ann", "departments/sales/eve",
           "home/wiki/people/bob", "b/ann", "ann#Part", "eve.md", "notes/a/b/x"]
ACTORS = [OPERATOR, parse_actor("agent:bot", "sales"), parse_actor("agent:bot", "hr"), parse_actor("agent:other")]


class Model:
    """The wiki's pages as data (path -> title, aliases, link targets), written to disk."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.pages: dict[str, tuple[str, list[str], list[str]]] = {}
        self.files: set[str] = set()

    def text(self, path: str) -> str:
        title, aliases, targets = self.pages[path]
        head = []
        if title:
            head.append(f"title: {title}")
        if aliases:
            head.append("aliases: [" + ", ".join(f'"{a}"' for a in aliases) + "]")
        front = "---\n" + "\n".join(head) + "\n---\n" if head else ""
        lines = []
        for i, target in enumerate(targets):
            form = i % 4
            if form == 0:
                lines.append(f"See [[{target}]].")
            elif form == 1:
                lines.append(f"Also [[{target}|shown]] here.")
            elif form == 2:
                lines.append(f"![[{target}]]")
            else:
                lines.append(f"[[{target}]] and [[{self.rng.choice(TARGETS)}]]")
        return front + "# Page\n\n" + "\n".join(lines) + "\n"

    def write(self, path: str) -> None:
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(self.text(path), encoding="utf-8")

    def new_path(self) -> str:
        for _ in range(50):
            folder = self.rng.choice(FOLDERS)
            path = f"{folder}/{self.rng.choice(STEMS)}.md".lstrip("/")
            if path not in self.pages:
                return path
        return f"extra/p{len(self.pages)}.md"

    def add_page(self) -> str:
        path = self.new_path()
        aliases = self.rng.sample(ALIASES, self.rng.choice([0, 0, 1, 2]))
        self.pages[path] = (self.rng.choice(TITLES), aliases, self.rng.sample(TARGETS, self.rng.randint(0, 6)))
        self.write(path)
        return path


def _edit(model: Model) -> tuple[list[str], bool]:
    """One random change: the page paths it touched, and whether the walk must run (files)."""
    rng = model.rng
    paths = sorted(model.pages)
    kind = rng.choice(["link+", "link+", "link-", "title", "alias", "add", "remove", "move", "move",
                       "file+", "file-", "many"])
    if not paths or kind == "add":
        return [model.add_page()], False
    path = rng.choice(paths)
    title, aliases, targets = model.pages[path]
    if kind == "link+":
        model.pages[path] = (title, aliases, [*targets, rng.choice(TARGETS)])
    elif kind == "link-" and targets:
        targets = list(targets)
        del targets[rng.randrange(len(targets))]
        model.pages[path] = (title, aliases, targets)
    elif kind == "title":
        model.pages[path] = (rng.choice(TITLES), aliases, targets)
    elif kind == "alias":
        new = [a for a in aliases if rng.random() < 0.5] + rng.sample(ALIASES, rng.choice([0, 1]))
        model.pages[path] = (title, list(dict.fromkeys(new)), targets)
    elif kind == "remove":
        del model.pages[path]
        (model.root / path).unlink()
        return [path], False
    elif kind == "move":  # (into or out of a department's folder too: the actors' visibility)
        to = model.new_path()
        model.pages[to] = model.pages.pop(path)
        (model.root / path).unlink()
        model.write(to)
        return [path, to], False
    elif kind == "file+":
        file = rng.choice(FILES)
        (model.root / file).parent.mkdir(parents=True, exist_ok=True)
        (model.root / file).write_bytes(b"\x89PNG")
        model.files.add(file)
        return [], True
    elif kind == "file-" and model.files:
        file = rng.choice(sorted(model.files))
        (model.root / file).unlink()
        model.files.discard(file)
        return [], True
    elif kind == "many":  # an action touching several pages at once (a merge, a bulk fix)
        touched = rng.sample(paths, min(len(paths), rng.randint(2, 5)))
        for p in touched:
            t, a, ts = model.pages[p]
            model.pages[p] = (t, a, [*ts[1:], rng.choice(TARGETS)])
            model.write(p)
        return touched, False
    model.write(path)
    return [path], False


def _visible(wiki: Wiki, actor: Actor) -> tuple[dict[str, Any], list[str]]:
    pages = {p: page for p, page in wiki.pages.items() if wiki.visible(actor, p)}
    return pages, [f for f in wiki.store.attachments if wiki.visible(actor, f)]


def answers(index: LinkIndex, keys: list[str], folders: list[str]) -> dict[str, Any]:
    """Every query a caller makes of a link index, with the order callers depend on."""
    pages = sorted(index.pages)
    slugs = sorted({index.pages[p].slug for p in pages} | {link_key(s) for s in STEMS})
    return {
        "pages": [(p, index.pages[p]) for p in pages],
        "attachments": index.attachments,
        "outgoing": list(index.outgoing.items()),  # page order too (ambiguous_edges, lint)
        **{name: {k: v for k, v in getattr(index, name).items() if v}
           for name in ("incoming", "unresolved", "attachment_links", "missing_attachments")},
        "resolve": {(k, f): index.resolve_key(k, f) for k in keys for f in folders},
        "resolve_from": {(k, p): index.resolve(k, p) for k in keys[:12] for p in pages},
        "backlinks": {p: (index.backlinks(p), index.inbound(p)) for p in pages},
        "stems": {s: index.stem_pages(s) for s in slugs},
        "ambiguous": index.ambiguous_edges(),
    }


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the link indexes built from scratch (not those the tests build to compare with)."""
    count = [0]
    init = LinkIndex.__init__

    def counting(self: LinkIndex, *args: Any, **kwargs: Any) -> None:
        count[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(LinkIndex, "__init__", counting)
    yield count


def _check(wiki: Wiki, model: Model, builds: list[int]) -> None:
    keys = sorted({*TARGETS, *(link_key(t) for t in TARGETS), *ALIASES, *TITLES, *STEMS,
                   *(link_key(f) for f in FILES), *(f.rpartition("/")[2] for f in FILES)})
    keys = sorted({link_key(k) for k in keys})
    folders = sorted({*FOLDERS, *(folder_of(p) for p in wiki.pages)})
    for actor in ACTORS:
        index = wiki.links_for(actor)
        before = builds[0]
        pages, files = _visible(wiki, actor)
        fresh = LinkIndex(pages, files)
        builds[0] = before  # (the reference build is not counted)
        assert answers(index, keys, folders) == answers(fresh, keys, folders), (actor, sorted(model.pages))


def _small_wiki(tmp_path: Path, seed: int) -> tuple[Model, Wiki]:
    """14 random pages on disk, and the wiki over them (read)."""
    root = tmp_path / "w"
    (root / "wiki").mkdir(parents=True)
    model = Model(root, random.Random(seed))
    for _ in range(14):
        model.add_page()
    wiki = Wiki(root)
    wiki.refresh()
    return model, wiki


@pytest.mark.parametrize("seed", range(12))
def test_every_change_updates_the_index_to_a_fresh_build(tmp_path: Path, seed: int, builds: list[int],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(links_module, "REBUILD_SHARE", 10.0)  # never rebuilt: every update incremental
    model, wiki = _small_wiki(tmp_path, seed)
    rng = model.rng
    _check(wiki, model, builds)
    first = builds[0]  # the operator's index and the agents' who cannot see everything
    for _step in range(40):
        touched, walk = _edit(model)
        if walk or rng.random() < 0.3:
            wiki.refresh()  # the whole tree walked (the station's watcher, a one-shot command)
        else:
            wiki.refresh(touched)  # the paths an action wrote
        _check(wiki, model, builds)
    wiki.close()
    assert builds[0] == first  # every index after the first ones was updated, none built again


@pytest.mark.parametrize("seed", range(4))
def test_large_changes_rebuild_and_stay_exact(tmp_path: Path, seed: int, builds: list[int]) -> None:
    """With the default rule (more than a quarter of the pages to resolve again: a fresh build)
    the answers are the same; on a 14-page wiki most edits of names take that path."""
    model, wiki = _small_wiki(tmp_path, 100 + seed)
    for _step in range(25):
        _edit(model)
        wiki.refresh()
        _check(wiki, model, builds)
    wiki.close()


def _wiki(root: Path, pages: dict[str, str]) -> Wiki:
    for path, text in pages.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    wiki = Wiki(root)
    wiki.refresh()
    return wiki


def _same_as_fresh(wiki: Wiki, keys: list[str]) -> LinkIndex:
    index = wiki.links
    fresh = LinkIndex(wiki.pages, wiki.store.attachments)
    folders = sorted({"", *(folder_of(p) for p in wiki.pages)})
    assert answers(index, keys, folders) == answers(fresh, keys, folders)
    return index


def test_an_edit_that_keeps_every_name_resolves_only_that_page(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(links_module, "REBUILD_SHARE", 10.0)  # (a 3-page wiki: else rebuilt)
    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "[[b]] [[c]]\n", "wiki/b.md": "[[a]]\n", "wiki/c.md": "x\n"})
    index = wiki.links
    resolved: list[str] = []
    real = LinkIndex.resolve_key

    def spy(self: LinkIndex, key: str, folder: str = "") -> Any:
        resolved.append(key)
        return real(self, key, folder)

    monkeypatch.setattr(LinkIndex, "resolve_key", spy)
    (wiki.root / "wiki/c.md").write_text("x\n\n[[b]] and [[nowhere]]\n", encoding="utf-8")
    wiki.refresh(["wiki/c.md"])
    new = wiki.links
    # the edited page's new target only: every other resolution is kept from the index before
    assert resolved == ["nowhere"]
    new = _same_as_fresh(wiki, ["a", "b", "c", "nowhere"])
    assert new is not index and index.backlinks("wiki/b.md") == new.backlinks("wiki/b.md")[:1]
    assert [e.source for e in new.backlinks("wiki/b.md")] == ["wiki/a.md", "wiki/c.md"]
    assert index.unresolved.get("nowhere") is None  # the index before is left as it was
    assert wiki.links is new  # nothing changed since: the same index


def test_a_new_title_moves_other_pages_links(tmp_path: Path) -> None:
    """A name change re-resolves the links of other pages that use the name: a new alias
    resolves a target that was unresolved; a new page with the stem beats a title (step 3 before
    step 4); removing it hands the links back."""
    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "[[Bobby]] [[carol]]\n", "wiki/b.md": "---\ntitle: Carol\n---\n",
                                  "notes/c.md": "[[Bobby]]\n"})
    index = _same_as_fresh(wiki, ["bobby", "carol"])
    assert set(index.unresolved) == {"bobby"} and index.outgoing["wiki/a.md"][1].target == "wiki/b.md"
    (wiki.root / "wiki/b.md").write_text("---\ntitle: Carol\naliases: [Bobby]\n---\n", encoding="utf-8")
    wiki.refresh(["wiki/b.md"])
    index = _same_as_fresh(wiki, ["bobby", "carol"])
    assert not index.unresolved and index.inbound("wiki/b.md") == 2
    (wiki.root / "wiki/carol.md").write_text("# the real carol\n", encoding="utf-8")
    wiki.refresh(["wiki/carol.md"])
    index = _same_as_fresh(wiki, ["bobby", "carol"])
    assert index.outgoing["wiki/a.md"][1].target == "wiki/carol.md"
    (wiki.root / "wiki/carol.md").unlink()
    wiki.refresh(["wiki/carol.md"])
    assert _same_as_fresh(wiki, ["bobby", "carol"]).outgoing["wiki/a.md"][1].target == "wiki/b.md"


def test_same_path_keys_and_relative_keys(tmp_path: Path) -> None:
    """Two files with one path key (``Ann.md``, ``ann.md``): the shorter-then-alphabetical one
    holds the key, and the other takes it when it goes; ``[[../x]]`` and ``[[a/..]]`` follow
    a page added anywhere."""
    wiki = _wiki(tmp_path / "w", {"wiki/ann.md": "x\n", "wiki/Ann.md": "x\n",
                                  "wiki/p/q.md": "[[wiki/ann]] [[../x]] [[p/..]] [[./q]]\n"})
    index = _same_as_fresh(wiki, ["wiki/ann", "../x", "p/..", "./q"])
    assert index.outgoing["wiki/p/q.md"][0].target == "wiki/Ann.md"
    (wiki.root / "wiki/Ann.md").unlink()
    (wiki.root / "wiki/x.md").write_text("x\n", encoding="utf-8")
    (wiki.root / "wiki/p.md").write_text("x\n", encoding="utf-8")
    wiki.refresh(["wiki/Ann.md", "wiki/x.md", "wiki/p.md"])
    index = _same_as_fresh(wiki, ["wiki/ann", "../x", "p/..", "./q"])
    assert [e.target for e in index.outgoing["wiki/p/q.md"]] == ["wiki/ann.md", "wiki/x.md", "wiki/p.md",
                                                                  "wiki/p/q.md"]


def test_an_attachment_added_resolves_its_links(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "![[shot.png]] [[doc.pdf]]\n"})
    index = _same_as_fresh(wiki, ["shot.png", "doc.pdf"])
    assert set(index.missing_attachments) == {"shot.png", "doc.pdf"}
    (wiki.root / "wiki/img").mkdir()
    (wiki.root / "wiki/img/shot.png").write_bytes(b"\x89PNG")
    wiki.refresh()
    index = _same_as_fresh(wiki, ["shot.png", "doc.pdf"])
    assert set(index.missing_attachments) == {"doc.pdf"} and list(index.attachment_links) == ["wiki/img/shot.png"]


def test_an_agent_never_sees_a_page_moved_into_a_hidden_folder(tmp_path: Path) -> None:
    """A page moved into another department's folder disappears from an agent's updated index
    (its links to it are unresolved again, as if it did not exist); moved back, it returns."""
    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "[[Secret Plan]] [[b]]\n", "wiki/b.md": "---\ntitle: Secret Plan\n---\n"})
    agent = parse_actor("agent:bot", "sales")
    assert wiki.links_for(agent).outgoing["wiki/a.md"][0].target == "wiki/b.md"
    (wiki.root / "departments/hr").mkdir(parents=True)
    shutil.move(wiki.root / "wiki/b.md", wiki.root / "departments/hr/b.md")
    wiki.refresh(["wiki/b.md", "departments/hr/b.md"])
    seen = wiki.links_for(agent)
    assert "departments/hr/b.md" not in seen.pages and set(seen.unresolved) == {"secret-plan", "b"}
    assert wiki.links.outgoing["wiki/a.md"][0].target == "departments/hr/b.md"  # the operator sees it
    shutil.move(wiki.root / "departments/hr/b.md", wiki.root / "wiki/b.md")
    wiki.refresh(["wiki/b.md", "departments/hr/b.md"])
    assert wiki.links_for(agent).outgoing["wiki/a.md"][0].target == "wiki/b.md"
    assert wiki.links_for(agent) is wiki.links  # everything visible again: the wiki's own index


def test_an_agent_never_sees_a_hidden_attachment(tmp_path: Path) -> None:
    """Every page visible but not every file: the agent's index is not the wiki's own (a link to a
    file in another department's folder reads as a missing attachment, never as that file)."""
    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "![[shot.png]]\n"})
    (wiki.root / "departments/sales").mkdir(parents=True)
    (wiki.root / "departments/sales/shot.png").write_bytes(b"\x89PNG")
    wiki.refresh()
    agent = parse_actor("agent:bot", "hr")
    seen = wiki.links_for(agent)
    assert seen is not wiki.links and seen.attachments == ()
    assert list(seen.missing_attachments) == ["shot.png"] and not seen.attachment_links
    assert list(wiki.links_for(parse_actor("agent:bot", "sales")).attachment_links) == ["departments/sales/shot.png"]


def test_a_first_read_keeps_the_parsed_pages_as_decoding_would_give_them(tmp_path: Path) -> None:
    """A cold first read keeps the pages it parsed (not decoded again from the cache): the same
    pages in the same order as a later process decodes from the records."""
    root = tmp_path / "w"
    (root / "wiki").mkdir(parents=True)
    model = Model(root, random.Random(7))
    for _ in range(30):
        model.add_page()
    cold = Wiki(root)
    decodes: list[int] = []
    real = type(cold.store)._decode_all

    def decode() -> dict[str, Any]:
        decodes.append(1)
        return real(cold.store)

    cold.store._decode_all = decode  # type: ignore[method-assign]
    first = cold.pages
    assert cold.store.decoded and not decodes  # kept from the parse
    warm = Wiki(root)
    decoded = warm.pages
    assert list(first) == list(decoded) and first == decoded
    cold.close()
    warm.close()


def test_the_suggester_is_kept_while_every_name_is(tmp_path: Path) -> None:
    """Link repair's suggester depends on the pages' names only: an edit that leaves them keeps it
    (suggestions remembered), a new title or a page moved makes a new one, and an agent is never
    suggested a page moved into a folder it may not read."""
    from curator.engine.review.linkrepair import suggester_for, unresolved

    wiki = _wiki(tmp_path / "w", {"wiki/a.md": "[[Nocturne Bg3]] [[Ledger Review]]\n",
                                  "wiki/nocturne-bg3-campaign.md": "# Nocturne\n", "wiki/b.md": "x\n"})
    agent = parse_actor("agent:bot", "sales")
    first = suggester_for(wiki, wiki.links)
    (wiki.root / "wiki/b.md").write_text("x\n\nmore text, [[Nocturne Bg3]] again\n", encoding="utf-8")
    wiki.refresh(["wiki/b.md"])
    assert suggester_for(wiki, wiki.links) is first  # no name changed
    (wiki.root / "wiki/b.md").write_text("---\ntitle: Ledger Review Notes\n---\n", encoding="utf-8")
    wiki.refresh(["wiki/b.md"])
    second = suggester_for(wiki, wiki.links)
    assert second is not first
    found = {u.key: [s.path for s in u.suggestions] for u in unresolved(wiki)}
    assert found["ledger-review"][0] == "wiki/b.md" and found["nocturne-bg3"] == ["wiki/nocturne-bg3-campaign.md"]
    assert {u.key: [s.path for s in u.suggestions] for u in unresolved(wiki, agent)}["nocturne-bg3"] == [
        "wiki/nocturne-bg3-campaign.md"]
    (wiki.root / "departments/hr").mkdir(parents=True)
    shutil.move(wiki.root / "wiki/nocturne-bg3-campaign.md", wiki.root / "departments/hr/nocturne-bg3-campaign.md")
    wiki.refresh(["wiki/nocturne-bg3-campaign.md", "departments/hr/nocturne-bg3-campaign.md"])
    seen = {u.key: [s.path for s in u.suggestions] for u in unresolved(wiki, agent)}
    assert seen["nocturne-bg3"] == []  # the hidden page is never suggested
    assert {u.key: [s.path for s in u.suggestions] for u in unresolved(wiki)}["nocturne-bg3"] == [
        "departments/hr/nocturne-bg3-campaign.md"]
