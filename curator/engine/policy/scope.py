"""The scope policy: who may read and write which pages of a wiki (docs/design.md §6).

A wiki root may hold ``.scope.toml``::

    [namespaces."hr"]
    mode = "read_only"              # agent_writable (default) | read_only | operator_only | agent_allowlist
    synced_from = "capability:hr-sync"
    visible_to_departments = ["hr"]

    [namespaces."ops"]
    mode = "agent_allowlist"
    agents = ["dudu", "kiki"]      # exact agent ids; empty = no agent
    review = true                   # every agent write here is held in the review inbox
                                    # (review = 2: and needs two different operators' approvals)

    [review]                        # agent writes held for an operator (docs/design.md §13)
    create = true                   # an agent creating a page is held
    layers = ["identity", "core"]   # an agent appending to a page of these layers is held

    [freshness]                     # facts gone stale (docs/design.md §15): per layer
    context = "30d"                 # the default; "never" switches it off

    [namespaces."ops"]
    stale_after = "90d"             # every fact under ops/ (wins over its layer's freshness)

Writes: ``agent_writable`` allows everyone, ``read_only`` the operator and the capability named
by ``synced_from``, ``operator_only`` the operator, ``agent_allowlist`` the operator and the
listed agents. Reads: ``departments/<dept>/`` is visible only to actors whose department is
exactly ``<dept>`` (built in, whatever the file says) and a namespace with
``visible_to_departments`` only to actors in a listed department. The operator sees and writes
everything. Unlisted namespaces are ``agent_writable``: the file can only tighten.

Review (:meth:`ScopePolicy.review_reason`): an agent's write that the policy allows is still
*held* for an operator (``pending`` in the review inbox, :mod:`curator.engine.review.inbox`) when ``[review] create``
is on and it creates a page, when it appends to a page whose layer ``[review] layers`` lists, or
when a namespace rule has ``review = true`` (or a number of approvals: ``review = 2`` holds the
write until two different operators approved it, :meth:`ScopePolicy.approvals_needed`). The
operator (and a capability) is never held. The inbox's own files
(``_review/inbox/``, ``_review/rejected/``) are operator-only for every door: the engine writes
them on an agent's behalf only when it holds that agent's write.

A namespace is the first path segment (``""`` for pages at the root). A key with a slash
(``"departments/sales"``) is a narrower rule for that folder; every rule whose key is a prefix of
the path must allow the access, so a narrower rule can never loosen a wider one.

The file is read again whenever its identity (inode, size, mtime) changes, checked before every
read and write decision by an actor other than the operator (hot reload). Problems are never fatal here: a file that does not parse gives *no*
policy plus ``error`` (fail-safe, the shared wiki keeps working and the station shows the error);
callers that must fail closed (auto-filing into an agent wiki, docs/design.md §10) check ``error``
themselves. A rule that parses but makes no sense (unknown mode, ``read_only`` without
``synced_from``, ``agents`` that is not a list of ids) is kept in its strictest reading and
reported in ``warnings``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from curator.engine.corpus.freshness import parse_duration
from curator.engine.policy.actor import Actor


def _warn(message: str, *args: object) -> None:
    """Log a warning about the policy file (logging is imported only then: most wikis' commands
    never warn, and every command opens the policy)."""
    import logging

    logging.getLogger(__name__).warning(message, *args)


SCOPE_FILE = ".scope.toml"
AGENT_WRITABLE = "agent_writable"
READ_ONLY = "read_only"
OPERATOR_ONLY = "operator_only"
AGENT_ALLOWLIST = "agent_allowlist"
MODES: tuple[str, ...] = (AGENT_WRITABLE, READ_ONLY, OPERATOR_ONLY, AGENT_ALLOWLIST)
DEPARTMENTS = "departments"
#: Larger files are refused (treated as malformed): a policy is a few lines, never megabytes.
MAX_SCOPE_BYTES = 256 * 1024
#: Folders of the review inbox (docs/design.md §13): written by the engine, decided by the operator only.
INBOX_FOLDERS: tuple[str, ...] = ("_review/inbox", "_review/rejected")
#: The most approvals a namespace may ask for (``review = N``).
MAX_APPROVALS = 9
#: Days a fact of a layer stays fresh when ``[freshness]`` does not say (docs/design.md §15): the
#: context layer is refreshed daily by the agents that write it, so a month-old fact there is due
#: for a look; nothing else goes stale unless configured.
DEFAULT_FRESHNESS: dict[str, int | None] = {"context": 30}

#: Files that configure the wiki itself: only the operator may create, change or remove them, on
#: every mutation path (append, merge, undo/revert, ...), whatever ``.scope.toml`` says.
#: ``.gitignore`` and ``.gitattributes`` at any depth; at the root also every tracked decision
#: file, named ``.curator-*`` (``.curator-decisions.json``: "not duplicates", ignored links, ...).
PROTECTED_NAMES: frozenset[str] = frozenset({SCOPE_FILE, ".gitignore", ".gitattributes"})
DECISION_PREFIX = ".curator-"
#: What a non-operator is told when it may not write a path it cannot see: the same words for
#: every such path, so a refusal never names (or confirms) a hidden page.
HIDDEN_WRITE = "it would change a page {actor} may not see"


def namespace_of(path: str) -> str:
    """First path segment of a root-relative posix path; ``""`` for a page at the root."""
    head, sep, _ = path.strip("/").partition("/")
    return head if sep else ""


def _strip_kind(value: str, kind: str) -> str:
    value = value.strip()
    return value[len(kind) + 1:] if value.startswith(kind + ":") else value


@dataclass(slots=True, frozen=True)
class NamespaceRule:
    """One ``[namespaces."<key>"]`` table in its effective (already validated) form."""

    key: str
    mode: str = AGENT_WRITABLE
    agents: tuple[str, ...] = ()
    synced_from: str | None = None  # capability name, without the ``capability:`` prefix
    visible_to_departments: tuple[str, ...] | None = None  # None = no department restriction
    #: Every agent write here is held until this many different operators approved it (0: not
    #: held; ``review = true`` is 1; docs/design.md §13).
    review: int = 0
    #: Days a fact here stays fresh (``stale_after``; None: its layer's freshness decides).
    stale_after: int | None = None

    def applies_to(self, path: str) -> bool:
        """Whether the rule covers ``path``; folder names match whatever their case (``HR/``
        is ``[namespaces."hr"]``: a rule a folder's case could dodge would protect nothing)."""
        if self.key == "":
            return "/" not in path.strip("/")
        key, folded = self.key.casefold(), path.casefold()
        return folded == key or folded.startswith(key + "/")

    def allows_write(self, actor: Actor) -> bool:
        if actor.is_operator or self.mode == AGENT_WRITABLE:
            return True
        if self.mode == READ_ONLY:
            return actor.kind == "capability" and self.synced_from is not None and actor.id == self.synced_from
        if self.mode == AGENT_ALLOWLIST:
            return actor.is_agent and actor.id in self.agents
        return False  # operator_only, and anything unknown

    def allows_read(self, actor: Actor) -> bool:
        if actor.is_operator or self.visible_to_departments is None:
            return True
        return actor.department is not None and actor.department in self.visible_to_departments

    def to_json(self) -> dict[str, Any]:
        return {"namespace": self.key, "mode": self.mode, "agents": list(self.agents),
                "synced_from": f"capability:{self.synced_from}" if self.synced_from else None,
                "visible_to_departments": (None if self.visible_to_departments is None
                                           else list(self.visible_to_departments)),
                "review": self.review if self.review > 1 else bool(self.review),
                **({"stale_after_days": self.stale_after} if self.stale_after is not None else {})}


@dataclass(slots=True, frozen=True)
class ReviewRule:
    """The ``[review]`` table: which agent writes are held for an operator (docs/design.md §13)."""

    create: bool = False
    layers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"create": self.create, "layers": list(self.layers)}


@dataclass(slots=True, frozen=True)
class Decision:
    """The answer to "may this actor write here?", with the reason to show when it may not."""

    allowed: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.allowed


@dataclass(slots=True)
class ParsedPolicy:
    """A ``.scope.toml`` as parsed."""

    rules: dict[str, NamespaceRule] = field(default_factory=dict)
    review: ReviewRule = field(default_factory=ReviewRule)
    error: str | None = None  # the file exists but does not parse: no policy
    warnings: list[str] = field(default_factory=list)
    #: Days a fact of each layer stays fresh (None: never stale); :data:`DEFAULT_FRESHNESS` plus ``[freshness]``.
    freshness: dict[str, int | None] = field(default_factory=lambda: dict(DEFAULT_FRESHNESS))


def _str_list(value: Any, what: str, warnings: list[str]) -> tuple[str, ...] | None:
    """A list of strings, or None (with a warning) when the value is something else."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value)
    warnings.append(f"{what} must be a list of strings")
    return None


def _parse_rule(key: str, table: Any, warnings: list[str]) -> NamespaceRule:
    where = f'[namespaces."{key}"]'
    if not isinstance(table, dict):
        warnings.append(f"{where} is not a table; treated as operator_only")
        return NamespaceRule(key, OPERATOR_ONLY)
    mode = table.get("mode", AGENT_WRITABLE)
    if mode not in MODES:
        warnings.append(f"{where}: unknown mode {mode!r} (use {', '.join(MODES)}); treated as operator_only")
        mode = OPERATOR_ONLY
    synced = table.get("synced_from")
    if synced is not None and not isinstance(synced, str):
        warnings.append(f"{where}: synced_from must be a string like 'capability:<name>'")
        synced = None
    synced = _strip_kind(synced, "capability") if synced else None
    if mode == READ_ONLY and not synced:
        warnings.append(f"{where}: read_only needs synced_from; only the operator may write")
    agents: tuple[str, ...] = ()
    if "agents" in table:
        # Exact ids; a broken list grants nobody (the policy only tightens).
        agents = tuple(_strip_kind(a, "agent") for a in (_str_list(table["agents"], f"{where}: agents", warnings) or ()))
    elif mode == AGENT_ALLOWLIST:
        warnings.append(f"{where}: agent_allowlist without agents: no agent may write")
    visible: tuple[str, ...] | None = None
    if "visible_to_departments" in table:
        # A malformed list hides the namespace from every agent rather than showing it to all.
        visible = _str_list(table["visible_to_departments"], f"{where}: visible_to_departments", warnings) or ()
    raw = table.get("review", False)
    if isinstance(raw, bool):
        review = int(raw)
    elif isinstance(raw, int) and 0 <= raw <= MAX_APPROVALS:
        review = raw
    else:
        warnings.append(f"{where}: review must be true, false or a number of approvals (1 to "
                        f"{MAX_APPROVALS}); treated as true")
        review = 1  # the policy only tightens: a broken flag holds rather than lets through
    stale_after: int | None = None
    if "stale_after" in table:
        try:
            stale_after = parse_duration(table["stale_after"])
        except ValueError as exc:
            warnings.append(f"{where}: stale_after: {exc}; ignored")
    unknown = sorted(set(table) - {"mode", "synced_from", "agents", "visible_to_departments", "review",
                                   "stale_after"})
    if unknown:
        warnings.append(f"{where}: unknown keys ignored: {', '.join(unknown)}")
    return NamespaceRule(key, mode, agents, synced, visible, review, stale_after)


def _parse_freshness(table: Any, warnings: list[str]) -> dict[str, int | None]:
    """``[freshness]``: layer name -> duration, over :data:`DEFAULT_FRESHNESS`; a bad entry is
    warned about and the layer keeps its default."""
    from curator.engine.corpus.page import LAYERS

    out = dict(DEFAULT_FRESHNESS)
    if not isinstance(table, dict):
        warnings.append("[freshness] is not a table; the defaults apply")
        return out
    for layer, value in table.items():
        if layer not in LAYERS:
            warnings.append(f"[freshness]: unknown layer {layer!r} ignored (use {', '.join(LAYERS)})")
            continue
        try:
            out[layer] = parse_duration(value)
        except ValueError as exc:
            warnings.append(f"[freshness]: {layer}: {exc}; the default applies")
    return out


def _parse_review(table: Any, warnings: list[str]) -> ReviewRule:
    from curator.engine.corpus.page import LAYERS, parse_layer

    if not isinstance(table, dict):
        warnings.append("[review] is not a table; every agent write that creates a page or "
                        "touches any layer is held")
        return ReviewRule(True, LAYERS)
    create = table.get("create", False)
    if not isinstance(create, bool):
        warnings.append("[review]: create must be true or false; treated as true")
        create = True
    layers: list[str] = []
    raw = table.get("layers", [])
    listed = _str_list(raw, "[review]: layers", warnings)
    for value in LAYERS if listed is None else listed:  # a broken list holds every layer
        name, problem = parse_layer(value)
        if problem:
            warnings.append(f"[review]: {problem}")
        if name not in layers:
            layers.append(name)
    unknown = sorted(set(table) - {"create", "layers"})
    if unknown:
        warnings.append(f"[review]: unknown keys ignored: {', '.join(unknown)}")
    return ReviewRule(create, tuple(layers))


def parse_scope(text: str) -> ParsedPolicy:
    """Parse the text of a ``.scope.toml``; never raises."""
    import tomllib  # (only for a wiki that has the file)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return ParsedPolicy(error=f"{SCOPE_FILE} does not parse: {exc}")
    result = ParsedPolicy()
    namespaces = data.get("namespaces", {})
    if not isinstance(namespaces, dict):
        return ParsedPolicy(error=f"{SCOPE_FILE}: 'namespaces' must be a table of tables")
    for key, table in namespaces.items():
        norm = key.strip().strip("/")
        result.rules[norm] = _parse_rule(norm, table, result.warnings)
    if "review" in data:
        result.review = _parse_review(data["review"], result.warnings)
    if "freshness" in data:
        result.freshness = _parse_freshness(data["freshness"], result.warnings)
    unknown = sorted(set(data) - {"namespaces", "review", "freshness"})
    if unknown:
        result.warnings.append(f"unknown top-level keys ignored: {', '.join(unknown)}")
    return result


def is_inbox_path(path: str) -> bool:
    """Is ``path`` one of the review inbox's own files (operator-only for every door)?"""
    p = path.strip("/")
    return any(p == f or p.startswith(f + "/") for f in INBOX_FOLDERS)


def is_protected(path: str) -> bool:
    """Whether ``path`` is one of the files only the operator may write (:data:`PROTECTED_NAMES`)."""
    norm = path.strip("/")
    name = norm.rsplit("/", 1)[-1]
    if name in (".gitignore", ".gitattributes"):
        return True
    return "/" not in norm and (name == SCOPE_FILE or name.startswith(DECISION_PREFIX))


def protected_decision(actor: Actor, path: str) -> Decision | None:
    """The refusal for a non-operator writing a protected file, else None."""
    if actor.is_operator or not is_protected(path):
        return None
    return Decision(False, f"{path} configures the wiki and only the operator may change it; "
                    f"{actor} may not")


def department_allows(actor: Actor, path: str) -> bool:
    """Built-in isolation: ``departments/<dept>/...`` only for actors of exactly ``<dept>``.

    The ``departments`` folder is recognised whatever its case (``Departments/HR/`` is isolated
    too, never open to all); the department itself must match exactly (only ever tighter)."""
    parts = path.strip("/").split("/")
    if len(parts) < 3 or parts[0].casefold() != DEPARTMENTS:
        return True
    return actor.is_operator or (actor.department is not None and actor.department == parts[1])


class ScopePolicy:
    """The live policy of one wiki root: the read policy behind ``Wiki.policy`` and the write check.

    Thread-safe; cheap to ask: rules are matched per namespace and the file is only re-parsed
    when it changed on disk.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.path = self.root / SCOPE_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int, int] | None = None
        self._parsed = ParsedPolicy()
        self._by_ns: dict[str, list[NamespaceRule]] = {}
        self._exists = False
        #: Called (outside any lock) after a reload that changed the file, so that caches built
        #: from the old policy (per-actor graphs, ...) can be dropped.
        self.on_change: Callable[[], None] | None = None
        self.generation = 0  # bumped on every reload that read a changed file
        self.reload()

    # --- loading ------------------------------------------------------------------------
    def reload(self, force: bool = False) -> None:
        """Re-read the file when it changed (or always with ``force``)."""
        try:
            st = os.stat(self.path)
            stamp: tuple[int, int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except FileNotFoundError:
            stamp = None
        except OSError as exc:  # unreadable: treat like a file that does not parse
            stamp = (-1, -1, -1, -1)
            with self._lock:
                if self._stamp == stamp:
                    return
                self._set(ParsedPolicy(error=f"{SCOPE_FILE} cannot be read: {exc}"), True, stamp)
            if self.on_change is not None:
                self.on_change()
            return
        if stamp == self._stamp and not force:
            return  # the common case: no lock needed to see that nothing changed
        if stamp is None:
            parsed, exists = ParsedPolicy(), False
        else:
            exists = True
            try:
                raw = self.path.read_bytes()
                if len(raw) > MAX_SCOPE_BYTES:
                    parsed = ParsedPolicy(error=f"{SCOPE_FILE} is larger than {MAX_SCOPE_BYTES // 1024} KB")
                else:
                    parsed = parse_scope(raw.decode("utf-8"))
            except UnicodeDecodeError:
                parsed = ParsedPolicy(error=f"{SCOPE_FILE} is not valid UTF-8")
            except OSError as exc:
                parsed = ParsedPolicy(error=f"{SCOPE_FILE} cannot be read: {exc}")
        with self._lock:
            changed = self._stamp is not None or stamp is not None
            self._set(parsed, exists, stamp)
        if changed and self.on_change is not None:
            self.on_change()

    def _set(self, parsed: ParsedPolicy, exists: bool, stamp: tuple[int, int, int, int] | None) -> None:
        if parsed.error and parsed.error != self._parsed.error:
            _warn("%s: %s; no scope policy in force", self.root, parsed.error)
        seen = set(self._parsed.warnings)
        new = [w for w in parsed.warnings if w not in seen]
        if len(new) == 1:
            _warn("%s: %s: %s", self.root, SCOPE_FILE, new[0])
        elif new:  # one summary line, however many rules are wrong
            _warn("%s: %s: %d warnings (the first: %s); 'curator scope' lists them all",
                        self.root, SCOPE_FILE, len(new), new[0])
        self._parsed = parsed
        self._exists = exists
        self._stamp = stamp
        self.generation += 1
        by_ns: dict[str, list[NamespaceRule]] = {}
        for rule in sorted(parsed.rules.values(), key=lambda r: len(r.key)):
            by_ns.setdefault(rule.key.split("/", 1)[0].casefold() if rule.key else "", []).append(rule)
        self._by_ns = by_ns

    @property
    def exists(self) -> bool:
        return self._exists

    @property
    def error(self) -> str | None:
        """Why the file gives no policy (it exists but does not parse), else None."""
        return self._parsed.error

    @property
    def warnings(self) -> list[str]:
        return list(self._parsed.warnings)

    @property
    def rules(self) -> dict[str, NamespaceRule]:
        return dict(self._parsed.rules)

    def rules_for(self, path: str) -> list[NamespaceRule]:
        """The rules that apply to ``path``, widest first."""
        rules = self._by_ns.get(namespace_of(path).casefold())
        if not rules:
            return []
        return [r for r in rules if r.applies_to(path)]  # kept sorted widest first by _set

    def rule_keys(self) -> frozenset[str]:
        """Every rule's namespace key, casefolded: a page whose path is one of them is the only
        one that may read differently from its folder (a caller deciding per folder checks it)."""
        self.reload()
        with self._lock:
            return frozenset(r.key.casefold() for rules in self._by_ns.values() for r in rules)

    # --- decisions ----------------------------------------------------------------------
    def can_read(self, actor: Actor, path: str) -> bool:
        if actor.is_operator:
            return True
        # One stat (~2 µs) per question keeps reads exact after an edit of the file.
        self.reload()
        if not department_allows(actor, path):
            return False
        return all(r.allows_read(actor) for r in self.rules_for(path))

    def check_write(self, actor: Actor, path: str) -> Decision:
        """May ``actor`` create, change, move or delete ``path``? Re-reads a changed file first."""
        if actor.is_operator:
            return Decision(True)
        if is_inbox_path(path):
            return Decision(False, f"{path} belongs to the review inbox: only the operator decides "
                            "held writes (agents write through wiki_append)")
        protected = protected_decision(actor, path)
        if protected is not None:
            return protected
        if not self.can_read(actor, path):  # re-reads a changed file first
            # Writing where one cannot read would leak through answers (duplicate, candidates);
            # the reason never names the path (a refusal must not confirm a hidden page).
            return Decision(False, HIDDEN_WRITE.format(actor=actor))
        for rule in self.rules_for(path):
            if not rule.allows_write(actor):
                return Decision(False, _deny_reason(actor, path, rule))
        return Decision(True)

    def can_write(self, actor: Actor, path: str) -> bool:
        return self.check_write(actor, path).allowed

    @property
    def review(self) -> ReviewRule:
        return self._parsed.review

    def review_reason(self, actor: Actor, path: str, *, creates: bool, layer: str | None) -> str | None:
        """Why an allowed write of ``actor`` to ``path`` is held for an operator, or None.

        ``creates``: the write creates the page; ``layer``: the existing page's layer. The
        operator is never held, nor a capability (a sync job mirroring its source); nobody is
        when no ``[review]`` rule says so.
        """
        if not actor.is_agent:
            return None
        self.reload()
        review = self._parsed.review
        if creates and review.create:
            return "the policy holds every new page an agent creates ([review] create = true)"
        if not creates and layer is not None and layer in review.layers:
            return f"the policy holds agent writes to {layer} pages ([review] layers)"
        for rule in self.rules_for(path):
            if rule.review:
                ns = f"namespace {rule.key!r}" if rule.key else "the wiki root"
                if rule.review > 1:
                    return (f"the policy holds every agent write to {ns} until {rule.review} different "
                            f"operators approve it (review = {rule.review})")
                return f"the policy holds every agent write to {ns} (review = true)"
        return None

    def fresh_for(self, path: str, layer: str) -> tuple[int, str] | None:
        """How many days a fact of ``path`` (a page of ``layer``) stays fresh, and the rule that
        says so (``namespace 'ops'``, ``context layer``), or None when it never goes stale. The
        narrowest namespace with ``stale_after`` wins over the layer's freshness."""
        self.reload()
        for rule in reversed(self.rules_for(path)):
            if rule.stale_after is not None:
                return rule.stale_after, f"namespace {rule.key!r}" if rule.key else "the wiki root"
        days = self._parsed.freshness.get(layer)
        return None if days is None else (days, f"{layer} layer")

    def approvals_needed(self, path: str) -> int:
        """How many different operators must approve a held write to ``path`` (at least 1; the
        strictest rule covering the path decides)."""
        self.reload()
        return max([1, *(rule.review for rule in self.rules_for(path))])

    def audience(self, path: str) -> tuple[Any, ...]:
        """Who may read ``path``, as a value two paths share exactly when the same actors may
        read both: its ``departments/<dept>`` and the ``visible_to_departments`` lists in force."""
        self.reload()
        parts = path.strip("/").split("/")
        dept = parts[1] if len(parts) >= 3 and parts[0].casefold() == DEPARTMENTS else None
        lists = tuple(sorted({tuple(sorted(r.visible_to_departments)) for r in self.rules_for(path)
                              if r.visible_to_departments is not None}))
        return (dept, lists)

    def rule(self, namespace: str) -> NamespaceRule:
        """The effective rule of a namespace key (the default when unlisted)."""
        return self._parsed.rules.get(namespace.strip("/"), NamespaceRule(namespace.strip("/")))

    # --- summary for the station's policy panel and `curator scope --json` ----------------
    def summary(self, namespaces: list[str] | None = None) -> dict[str, Any]:
        """The effective policy: every configured namespace plus ``namespaces`` (e.g. those that
        hold pages) with their defaults, the built-in department rule, and any parse problem."""
        self.reload()
        keys = set(self._parsed.rules) | set(namespaces or ())
        rows = []
        for key in sorted(keys):
            row = self.rule(key).to_json()
            row["configured"] = key in self._parsed.rules
            if key == DEPARTMENTS or key.startswith(DEPARTMENTS + "/"):
                row["builtin"] = "departments/<dept>/ is visible only to actors of that exact department"
            rows.append(row)
        return {"file": SCOPE_FILE, "exists": self._exists, "error": self._parsed.error,
                "review": self._parsed.review.to_json(),
                "warnings": list(self._parsed.warnings), "in_force": self._parsed.error is None,
                "namespaces": rows}


def _deny_reason(actor: Actor, path: str, rule: NamespaceRule) -> str:
    ns = f"namespace {rule.key!r}" if rule.key else "the wiki root"
    if rule.mode == READ_ONLY:
        who = f"capability:{rule.synced_from}" if rule.synced_from else "nobody but the operator"
        return f"{ns} is read_only (synced from {who}); {actor} may not write {path}"
    if rule.mode == AGENT_ALLOWLIST:
        return f"{ns} is writable only by listed agents; {actor} is not listed, so it may not write {path}"
    return f"{ns} is {rule.mode}; {actor} may not write {path}"


class PolicyWiki(Protocol):
    """What :func:`policy_summary` reads of a wiki (the :class:`~curator.engine.wiki.Wiki`, which
    sits above the policy)."""

    @property
    def root(self) -> Path: ...

    @property
    def scope(self) -> ScopePolicy: ...

    @property
    def paths(self) -> list[str]: ...


def policy_summary(wiki: PolicyWiki, actor: Actor | None = None, *, own_view: bool = False) -> dict[str, Any]:
    """What the station's policy panel and ``curator scope --json`` show.

    Every configured namespace and every namespace holding pages (``departments/<dept>`` listed
    one by one), with its effective rule and page count; with a non-operator ``actor``, also how
    many of those pages it sees and whether it may write there. Plus the file's parse error.
    With ``own_view`` the summary is the one ``actor`` itself gets (``curator --as agent:x
    scope``): built from the pages it may see only, so no hidden folder is named or counted.
    """
    policy = wiki.scope
    paths = wiki.paths  # (no page decoded: the station reads this for 100,000 pages as it opens)
    if own_view and actor is not None and not actor.is_operator:
        paths = [p for p in paths if policy.can_read(actor, p)]
    counts: dict[str, int] = {}
    top = [namespace_of(path) for path in paths]
    for path, ns in zip(paths, top, strict=True):
        if ns == DEPARTMENTS:
            parts = path.split("/")
            if len(parts) >= 3:
                ns = f"{DEPARTMENTS}/{parts[1]}"
        counts[ns] = counts.get(ns, 0) + 1
    summary = policy.summary(sorted(counts))
    summary["wiki"] = wiki.root.name
    # Each row's pages: those at the root for "", else those under the folder it names (any
    # depth: a configured namespace may be a nested folder), in one pass over the paths (a pass
    # per row was ~200 ms of the station's background at 32,000 pages).
    rows: dict[str, list[str]] = {row["namespace"]: [] for row in summary["namespaces"]}
    root = rows.get("")
    for path, ns in zip(paths, top, strict=True):
        if root is not None and ns == "":
            root.append(path)
        cut = path.find("/")
        while cut >= 0:
            under = rows.get(path[:cut]) if cut else None
            if under is not None:
                under.append(path)
            cut = path.find("/", cut + 1)
    for row in summary["namespaces"]:
        key = row["namespace"]
        members = rows[key]
        row["pages"] = len(members)
        if actor is not None and not actor.is_operator:
            row["visible_pages"] = sum(1 for p in members if policy.can_read(actor, p))
            probe = f"{key}/page.md" if key else "page.md"
            decision = policy.check_write(actor, probe)
            row["can_write"] = decision.allowed
            row["can_read"] = policy.can_read(actor, probe)
    if actor is not None:
        summary["actor"] = {"actor": str(actor), "department": actor.department}
    return summary
