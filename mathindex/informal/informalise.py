"""Informalisation: one English text per Lean declaration, produced in dependency order.

A declaration's rendering may reuse the informal text of the constants it depends on, so the
declarations are processed level by level (dependencies first). Results are cached on disk by
(statement hash, backend, model, prompt version, context hash), a cache that outlives a release.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
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

log = logging.getLogger(__name__)

MAX_CONTEXT = 5  # dependencies whose text is shown to a declaration's rendering


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
    """A backend's answer for one declaration: `status` ok | fallback | empty, `reason` when not ok."""

    text: str
    status: str = "ok"
    reason: str | None = None


class Informaliser(Protocol):
    """A backend that turns declarations into English; `render_many` keeps the input order."""

    backend: str
    model: str
    prompt_version: str

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]: ...


class RuleInformaliser:
    """The deterministic rule-based backend (Lean notation and names to English)."""

    backend = "rules"
    model = RULES_VERSION
    prompt_version = RULES_VERSION

    def render(self, item: InformalInput) -> Rendering:
        text = render_rules(item.full_name, item.kind, item.signature, item.type, item.docstring, item.context)
        return Rendering(text, "ok" if text else "empty", None if text else "nothing to render")

    def render_many(self, items: Sequence[InformalInput]) -> list[Rendering]:
        return [self.render(item) for item in items]


def sha256_hex(*parts: str) -> str:
    """sha256 hex of the parts joined by NUL bytes."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def statement_sha256(full_name: str, kind: str, signature: str, type_: str, docstring: str) -> str:
    """The hash of a declaration's own statement (name, kind, signature, type, docstring)."""
    return sha256_hex(full_name, kind, signature, type_, docstring)


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


class InformalCache:
    """Informal texts (ok renderings only), one row per key, as `cache.ShardStore` shards in
    `CacheLayout.informal(<digest>)` under a root's cache directory: the digest is the code's that
    renders (`cache.codes.INFORMAL`); a key covers the statement, the informaliser's backend, model
    and prompt version, and the context shown."""

    SCHEMA = pa.schema([("key", pa.string()), ("text", pa.string())])

    def __init__(self, root: Path | None, backend: str, model: str, prompt_version: str):
        self.store = ShardStore(None if root is None else CacheLayout(root).informal(INFORMAL.digest()), self.SCHEMA)
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
        self._map[key] = text
        self._new.append((key, text))

    def flush(self) -> None:
        """Writes the new entries as one shard (atomic rename); nothing is overwritten."""
        if self._new:
            self.store.add(pl.DataFrame(self._new, schema={"key": pl.String, "text": pl.String}, orient="row"))
        self._new = []


def _column(table: pa.Table, name: str) -> list[str]:
    if name not in table.column_names:
        return [""] * table.num_rows
    col = table.column(name)
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return [" ".join(v or []) for v in col.to_pylist()]
    return ["" if v is None else str(v) for v in col.to_pylist()]


def informalise(
    declarations: pa.Table, informaliser: Informaliser, cache_dir: Path | None,
    dependencies: pa.Table | None = None,
) -> pa.Table:
    """INFORMALISATIONS for `declarations`, rendered in dependency order and cached in `cache_dir`.

    Rows come out sorted by (order, full_name, decl_id); `order` is the dependency rank.
    Declarations repeated under one full_name are rendered once each but only the first is context.
    """
    names = _column(declarations, "full_name")
    decl_ids = _column(declarations, "decl_id")
    kinds, sigs = _column(declarations, "kind"), _column(declarations, "signature")
    # `variable` binders in scope that the statement uses, when the extractor provides them
    sigs = [f"{v} {s}" if v.strip() else s for v, s in zip(_column(declarations, "variables"), sigs)]
    types, docs = _column(declarations, "type"), _column(declarations, "docstring")
    levels = dependency_levels(names, dependencies)
    deps_of: dict[str, list[str]] = {}
    known = set(names)
    for src, dst in statement_edges(dependencies):
        if dst in known and dst != src:
            deps_of.setdefault(src, []).append(dst)
    glossed = {n for targets in deps_of.values() for n in targets}  # only these are ever another's context
    order = sorted(range(len(names)), key=lambda i: (levels[i], names[i], decl_ids[i]))
    cache = InformalCache(cache_dir, informaliser.backend, informaliser.model, informaliser.prompt_version)
    gloss: dict[str, str] = {}
    cols: dict[str, list] = {f.name: [] for f in INFORMALISATIONS}
    start = 0
    hits = 0
    while start < len(order):
        stop = start
        while stop < len(order) and levels[order[stop]] == levels[order[start]]:
            stop += 1
        level_idx = order[start:stop]
        inputs, keys, hashes, todo = [], [], [], []
        for i in level_idx:
            ctx_names = sorted(set(deps_of.get(names[i], ())))[:MAX_CONTEXT]
            context = tuple((n, gloss[n]) for n in ctx_names if n in gloss)
            h = statement_sha256(names[i], kinds[i], sigs[i], types[i], docs[i])
            item = InformalInput(names[i], kinds[i], sigs[i], types[i], docs[i], context)
            inputs.append(item)
            hashes.append(h)
            keys.append(cache.key(h, context))
        results: list[Rendering | None] = []
        for pos, key in enumerate(keys):
            cached = cache.get(key)
            results.append(Rendering(cached) if cached is not None else None)
            if cached is None:
                todo.append(pos)
        hits += len(level_idx) - len(todo)
        for pos, res in zip(todo, informaliser.render_many([inputs[p] for p in todo])):
            results[pos] = res
            if res.status == "ok":
                cache.put(keys[pos], res.text)
        for pos, i in enumerate(level_idx):
            res = results[pos] or Rendering("", "empty", "no rendering")
            if names[i] in glossed and names[i] not in gloss:
                gloss[names[i]] = first_sentence(docs[i]) if docs[i].strip() else first_sentence(res.text)
            row = {
                "decl_id": decl_ids[i], "full_name": names[i], "text": res.text,
                "backend": informaliser.backend, "model": informaliser.model,
                "prompt_version": informaliser.prompt_version, "statement_sha256": hashes[pos],
                "status": res.status, "reason": res.reason,
                "context": [n for n, _ in inputs[pos].context], "order": len(cols["order"]),
            }
            for key, value in row.items():
                cols[key].append(value)
        start = stop
    cache.flush()
    log.info("informalised %d declarations (%d from cache)", len(cols["order"]), hits)
    return pa.table(cols, schema=INFORMALISATIONS)
