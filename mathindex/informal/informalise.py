"""Informalisation: one English text per Lean declaration, produced in dependency order.

A declaration's rendering may reuse the informal text of the constants its statement uses, so the
declarations are processed level by level (dependencies first). Results are cached on disk by
(statement hash, backend, model, prompt version, context hash), a cache that outlives a release:
the rules' by this code's digest, a model's (an informaliser with an `endpoint`) by the type hash
alone, written as answers arrive so that a killed run asks again only what it had not stored.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Protocol

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore
from mathindex.cache.codes import INFORMAL
from mathindex.informal.rules import RULES_VERSION, first_sentence, render_rules
from mathindex.schemas.embed import INFORMALISATIONS
from mathindex.schemas.lean import ROLE_STATEMENT
from mathindex.schemas.manifest import InformaliserEntry

log = logging.getLogger(__name__)

MAX_CONTEXT = 5  # dependencies whose text is shown to a declaration's rendering
FLUSH_ROWS = 256  # a remote informaliser's answers are stored every this many (a killed run keeps them)
MAX_SHARDS = 64  # shards of an informal cache before they are merged into one
NOT_ASKED = "not asked: "  # how a fallback's reason starts when the endpoint was given up before asking


@dataclass(frozen=True)
class InformalInput:
    """What a backend sees of one declaration, plus (name, gloss) of the constants it uses."""

    full_name: str
    kind: str
    signature: str
    type: str
    docstring: str
    context: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Rendering:
    """A backend's answer for one declaration: `status` ok | fallback | empty, `reason` when not ok.
    A `fallback` text is the rules' rendering, made because the backend could not answer."""

    text: str
    status: str = "ok"
    reason: str | None = None


class Informaliser(Protocol):
    """A backend that turns declarations into English; `render_many` keeps the input order.
    `endpoint`: the host it asks (None: it renders here, with this code); `closed`: why it asks no
    more in this run (None while it asks), which `close` sets when a copy elsewhere gave up."""

    backend: str
    model: str
    prompt_version: str
    endpoint: str | None

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]: ...

    def closed(self) -> str | None: ...

    def close(self, reason: str) -> None: ...


class RuleInformaliser:
    """The deterministic rule-based backend (Lean notation and names to English)."""

    backend = "rules"
    model = RULES_VERSION
    prompt_version = RULES_VERSION
    endpoint = None

    def render(self, item: InformalInput) -> Rendering:
        text = render_rules(item.full_name, item.kind, item.signature, item.type, item.docstring, item.context)
        return Rendering(text, "ok" if text else "empty", None if text else "nothing to render")

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]:
        return [self.render(item) for item in items]

    def closed(self) -> str | None:
        return None  # it asks no host: nothing to give up

    def close(self, reason: str) -> None:
        pass


Renderer = Callable[[list[InformalInput], list[str]], list[Rendering]]
"""Renders one level's declarations the cache lacks (their inputs and cache keys, in level order),
storing the ok answers in the informal cache; the answers in the same order."""


def sha256_hex(*parts: str) -> str:
    """sha256 hex of the parts joined by NUL bytes."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def statement_sha256(full_name: str, kind: str, signature: str, type_: str, docstring: str) -> str:
    """The hash of a declaration's own statement (name, kind, signature, type, docstring)."""
    return sha256_hex(full_name, kind, signature, type_, docstring)


def flat(text: str) -> str:
    """`text` with every run of whitespace one space, trimmed: the statement as a model is shown it."""
    return " ".join(text.split())


def type_hash(item: InformalInput) -> str:
    """The hash a model's rendering is cached by: the statement (name, kind, signature, type,
    docstring) with its whitespace normalised (`flat`), so a reflowed docstring is not asked again."""
    return sha256_hex(*(flat(v) for v in (item.full_name, item.kind, item.signature, item.type, item.docstring)))


def statement_edges(dependencies: pa.Table | None) -> list[tuple[str, str]]:
    """(declaration, target) pairs its statement names: the `statement` rows of a dependencies
    table (every row of a table without a `role` column). Proof references are left out: a proof
    may use what the statement is used by, so they would add cycles and reorder the levels."""
    if dependencies is None or dependencies.num_rows == 0:
        return []
    if "role" in dependencies.column_names:
        dependencies = dependencies.filter(pc.equal(dependencies.column("role"), ROLE_STATEMENT))
    return list(zip(dependencies.column("full_name").to_pylist(), dependencies.column("target").to_pylist()))


def dependency_levels(names: list[str], dependencies: pa.Table | None) -> list[int]:
    """Level of each name: 0 with no known dependency, else 1 + the highest level it depends on.

    Edges outside `names` are ignored; members of a dependency cycle are put one level above
    the highest level computed without them (deterministic, in name order).
    """
    index = {n: i for i, n in enumerate(names)}
    deps: list[set[int]] = [set() for _ in names]
    for src, dst in statement_edges(dependencies):
        i, j = index.get(src), index.get(dst)
        if i is not None and j is not None and i != j:
            deps[i].add(j)
    users: list[list[int]] = [[] for _ in names]
    pending = [len(d) for d in deps]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    level = [0] * len(names)
    frontier = [i for i, p in enumerate(pending) if p == 0]
    done = cycles = cursor = 0
    by_name = sorted(range(len(names)), key=lambda i: names[i])
    while True:
        while frontier:
            nxt = []
            for j in frontier:
                done += 1
                for i in users[j]:
                    if pending[i] <= 0:  # released to break a cycle: its level is fixed
                        continue
                    level[i] = max(level[i], level[j] + 1)
                    pending[i] -= 1
                    if pending[i] == 0:
                        nxt.append(i)
            frontier = nxt
        if done == len(names):
            if cycles:
                log.info("broke %d dependency cycles", cycles)
            return level
        # a cycle: release the lowest-named declaration still waiting (pending only ever decreases)
        while pending[by_name[cursor]] <= 0:
            cursor += 1
        stuck = by_name[cursor]
        log.debug("dependency cycle through %s; breaking it", names[stuck])
        cycles += 1
        pending[stuck] = 0
        frontier = [stuck]


CACHE_SCHEMA = pa.schema([("key", pa.string()), ("text", pa.string())])


def informal_store(root: Path | None, remote: bool) -> ShardStore:
    """The informal texts under a root's cache directory (None: nowhere): the rules' in
    `CacheLayout.informal(<digest>)` (the digest is the code's that renders, `cache.codes.INFORMAL`),
    a model's in `CacheLayout.informal_model()` (`remote`: a model's answer depends on the model
    and the prompt, not on this code)."""
    layout = None if root is None else CacheLayout(root)
    folder = None if layout is None else layout.informal_model() if remote else layout.informal(INFORMAL.digest())
    return ShardStore(folder, CACHE_SCHEMA, max_shards=MAX_SHARDS)


class InformalCache:
    """Informal texts (ok renderings only), one row per key, as `cache.ShardStore` shards under a
    root's cache directory (`informal_store`). A key covers the statement hash, the backend, model
    and prompt version, and the context shown."""

    SCHEMA = CACHE_SCHEMA

    def __init__(self, root: Path | None, backend: str, model: str, prompt_version: str, remote: bool = False):
        self.store = informal_store(root, remote)
        self.scope = (backend, model, prompt_version)
        rows = self.store.load()
        self._map: dict[str, str] = dict(zip(rows["key"].to_list(), rows["text"].to_list()))
        self._new: list[tuple[str, str]] = []

    def key(self, statement_hash: str, context: tuple[tuple[str, str], ...]) -> str:
        ctx = sha256_hex(*(f"{n}\0{t}" for n, t in context))
        return sha256_hex(statement_hash, *self.scope, ctx)

    def get(self, key: str) -> str | None:
        return self._map.get(key)

    def put(self, key: str, text: str) -> None:
        """Remembers `key` and stores it at the next `flush`."""
        self._map[key] = text
        self._new.append((key, text))

    def remember(self, key: str, text: str) -> None:
        """Remembers `key`, stored already (by a shard) or to be stored by `put`."""
        self._map[key] = text

    def flush(self) -> None:
        """Writes the new entries as one shard (atomic rename); nothing is overwritten."""
        if self._new:
            self.store.add(pl.DataFrame(self._new, schema={"key": pl.String, "text": pl.String}, orient="row"))
        self._new = []


def report_of_table(informaliser: Informaliser, table: pa.Table) -> InformaliserEntry:
    """The report of a table read back whole (`cache.stages.StageCache`): every row from the cache."""
    status = Counter(table.column("status").to_pylist())
    return InformaliserEntry(backend=informaliser.backend, model=informaliser.model,
                             prompt_version=informaliser.prompt_version, endpoint=informaliser.endpoint,
                             rendered=0, cached=table.num_rows - status["fallback"] - status["empty"],
                             fell_back=status["fallback"], empty=status["empty"])


def _column(table: pa.Table, name: str) -> list[str]:
    if name not in table.column_names:
        return [""] * table.num_rows
    col = table.column(name)
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return [" ".join(v or []) for v in col.to_pylist()]
    return ["" if v is None else str(v) for v in col.to_pylist()]


@dataclass
class _Statements:
    """The declarations' columns as `informalise` reads them, their levels and statement edges."""

    names: list[str]
    decl_ids: list[str]
    kinds: list[str]
    sigs: list[str]
    types: list[str]
    docs: list[str]
    levels: list[int]
    deps_of: dict[str, list[str]]

    @classmethod
    def of(cls, declarations: pa.Table, dependencies: pa.Table | None) -> "_Statements":
        names = _column(declarations, "full_name")
        # `variable` binders in scope that the statement uses, when the extractor provides them
        sigs = [f"{v} {s}" if v.strip() else s
                for v, s in zip(_column(declarations, "variables"), _column(declarations, "signature"))]
        deps_of: dict[str, list[str]] = {}
        known = set(names)
        for src, dst in statement_edges(dependencies):
            if dst in known and dst != src:
                deps_of.setdefault(src, []).append(dst)
        return cls(names, _column(declarations, "decl_id"), _column(declarations, "kind"), sigs,
                   _column(declarations, "type"), _column(declarations, "docstring"),
                   dependency_levels(names, dependencies), deps_of)

    def by_level(self) -> list[list[int]]:
        """Row indices level by level, each level sorted by (name, decl_id)."""
        order = sorted(range(len(self.names)), key=lambda i: (self.levels[i], self.names[i], self.decl_ids[i]))
        return [list(g) for _, g in groupby(order, key=lambda i: self.levels[i])]


def informalise(
    declarations: pa.Table, informaliser: Informaliser, cache_dir: Path | None,
    dependencies: pa.Table | None = None,
) -> pa.Table:
    """INFORMALISATIONS for `declarations`, rendered in dependency order and cached in `cache_dir`
    (`informalise_reported` without its report)."""
    return informalise_reported(declarations, informaliser, cache_dir, dependencies)[0]


def informalise_reported(
    declarations: pa.Table, informaliser: Informaliser, cache_dir: Path | None,
    dependencies: pa.Table | None = None, render: Renderer | None = None,
) -> tuple[pa.Table, InformaliserEntry]:
    """INFORMALISATIONS for `declarations`, rendered level by level in dependency order and cached in
    `cache_dir`, with the report of what the informaliser did.

    Rows come out sorted by (order, full_name, decl_id); `order` is the dependency rank. A
    declaration is shown the glosses of up to MAX_CONTEXT constants its statement uses, from the
    levels below. Declarations repeated under one full_name are rendered once each but only the
    first is context. A fallback row is the rules' (backend, model, prompt version) and is not cached.
    `render` renders each level's uncached declarations (each level a barrier: `informal.shards`
    cuts them into shards that store their answers); by default the informaliser here, in this thread.
    """
    st = _Statements.of(declarations, dependencies)
    remote = informaliser.endpoint is not None
    glossed = {n for targets in st.deps_of.values() for n in targets}  # only these are ever another's context
    cache = InformalCache(cache_dir, informaliser.backend, informaliser.model, informaliser.prompt_version, remote)
    renderer = render or _level_renderer(informaliser, cache, remote)
    rules = RuleInformaliser()
    gloss: dict[str, str] = {}
    cols: dict[str, list] = {f.name: [] for f in INFORMALISATIONS}
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for level_idx in st.by_level():
        inputs, keys, hashes = [], [], []
        for i in level_idx:
            ctx_names = sorted(set(st.deps_of.get(st.names[i], ())))[:MAX_CONTEXT]
            context = tuple((n, gloss[n]) for n in ctx_names if n in gloss)
            item = InformalInput(st.names[i], st.kinds[i], st.sigs[i], st.types[i], st.docs[i], context)
            h = statement_sha256(item.full_name, item.kind, item.signature, item.type, item.docstring)
            inputs.append(item)
            hashes.append(h)
            keys.append(cache.key(type_hash(item) if remote else h, context))
        results = _cached_or_rendered(cache, renderer, inputs, keys, counts)
        for pos, i in enumerate(level_idx):
            res = results[pos]
            if st.names[i] in glossed and st.names[i] not in gloss:
                gloss[st.names[i]] = first_sentence(st.docs[i]) if st.docs[i].strip() else first_sentence(res.text)
            who = rules if res.status == "fallback" else informaliser
            counts[res.status] += 1
            if res.status == "fallback":
                reasons[res.reason or ""] += 1
            row = {
                "decl_id": st.decl_ids[i], "full_name": st.names[i], "text": res.text, "backend": who.backend,
                "model": who.model, "prompt_version": who.prompt_version, "statement_sha256": hashes[pos],
                "status": res.status, "reason": res.reason,
                "context": [n for n, _ in inputs[pos].context], "order": len(cols["order"]),
            }
            for key, value in row.items():
                cols[key].append(value)
    cache.flush()
    cache.store.compact()  # the shards' stores, merged past MAX_SHARDS
    report = _report(informaliser, counts, reasons)
    log.info("informalised %d declarations with %s (%d made now, %d from cache, %d fell back to the rules)",
             len(cols["order"]), informaliser.backend, report.rendered, report.cached, report.fell_back)
    return pa.table(cols, schema=INFORMALISATIONS), report


def _cached_or_rendered(cache: InformalCache, renderer: Renderer, inputs: list[InformalInput], keys: list[str],
                        counts: Counter[str]) -> list[Rendering]:
    """One level's renderings, from the cache or the renderer (given the rest, in level order)."""
    results: list[Rendering | None] = [None] * len(inputs)
    todo = []
    for pos, key in enumerate(keys):
        cached = cache.get(key)
        if cached is None:
            todo.append(pos)
        else:
            results[pos] = Rendering(cached)
            counts["cached"] += 1
    answers = renderer([inputs[p] for p in todo], [keys[p] for p in todo]) if todo else []
    for pos, res in zip(todo, answers):
        results[pos] = res
        if res.status == "ok":
            cache.remember(keys[pos], res.text)
            counts["rendered"] += 1
    return [r or Rendering("", "empty", "no rendering") for r in results]


def _level_renderer(informaliser: Informaliser, cache: InformalCache, remote: bool) -> Renderer:
    """Renders with the informaliser here (asked in chunks of FLUSH_ROWS when remote, each chunk's
    ok answers stored before the next is asked; else all at once, stored at the end of the run)."""
    def render(inputs: list[InformalInput], keys: list[str]) -> list[Rendering]:
        out: list[Rendering] = []
        step = FLUSH_ROWS if remote else max(1, len(inputs))
        for start in range(0, len(inputs), step):
            answers = informaliser.render_many(inputs[start:start + step])
            for key, res in zip(keys[start:start + step], answers):
                if res.status == "ok":
                    cache.put(key, res.text)
            out.extend(answers)
            if remote:
                cache.flush()
        return out
    return render


def _report(informaliser: Informaliser, counts: Counter[str], reasons: Counter[str]) -> InformaliserEntry:
    """The report of one run; when an endpoint was asked and no request succeeded, says so once."""
    no_answer = None
    if informaliser.endpoint is not None and counts["fallback"] and not counts["rendered"]:
        asked = [r for r, _ in reasons.most_common() if not r.startswith(NOT_ASKED)]
        no_answer = (asked or [r for r, _ in reasons.most_common()])[0] or "no answer"
        log.warning("informaliser: no request to %s succeeded (%s); all %d declarations asked got the rules rendering",
                    informaliser.endpoint, no_answer, counts["fallback"])
    return InformaliserEntry(backend=informaliser.backend, model=informaliser.model,
                             prompt_version=informaliser.prompt_version, endpoint=informaliser.endpoint,
                             rendered=counts["rendered"], cached=counts["cached"], fell_back=counts["fallback"],
                             empty=counts["empty"], no_answer=no_answer)
