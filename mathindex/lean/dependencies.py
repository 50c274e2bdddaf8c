"""The `dependencies` table: the constants each declaration's statement (`_deps`) or, beyond it,
its proof or definition body (`_proof_deps`) names, resolved to the corpus's full names.

Resolution follows Lean's name lookup as far as text allows: namespace prefixes of the
declaration, the root, the `open`s in force, then an `open` taken relative to the namespace
(`open Category` inside `namespace CategoryTheory`); a `protected` name is never reached from its
last component alone. A proof reference that does not resolve falls back to its longest resolving
prefix, so a dotted name on a constant (`le_antisymm_iff.trans`, `Foo.rec`) refers to that
constant. A (declaration, target) pair is one row: `statement` when the signature names it.

The per-row work is columnar (Arrow, Polars); Python resolves each distinct (namespace, written
name) pair once, and each still unresolved (namespace, opens, written name) once more.
"""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mathindex.lean.instances import resolve
from mathindex.schemas.lean import DEPENDENCIES, ROLE_PROOF, ROLE_STATEMENT


class _Resolver:
    """Written name -> full name through a namespace's prefixes and the root, or through `open`s;
    None when nothing matches."""

    def __init__(self, names: set[str], protected: set[str]):
        self.exists = names.__contains__
        self.exists_short = (names - protected).__contains__  # for names of one component
        self.contexts: dict[tuple[str, tuple[str, ...]], dict[str, int]] = {}  # opened namespace -> rank
        self.by_last: dict[str, list[str]] = {}  # last component -> the full names ending with it
        for n in names:
            self.by_last.setdefault(n.rpartition(".")[2], []).append(n)

    def _exists(self, written: str):
        return self.exists if "." in written else self.exists_short

    def in_namespace(self, written: str, ns: str) -> str | None:
        return resolve(written, ns, [], self._exists(written))

    def opened(self, written: str, ns: str, opens: list[str]) -> str | None:
        """`written` in the first opened namespace that holds it: the `open`s as written, then
        each `open` under each namespace prefix, longest first (`open Category` made inside
        `namespace CategoryTheory` opens `CategoryTheory.Category`; the namespace the `open` was
        made in is not recorded, the declaration's is taken). Tries those namespaces, or, when
        fewer, the corpus names that end like `written`."""
        key = (ns, tuple(opens))
        rank = self.contexts.get(key)
        if rank is None:
            parts = ns.split(".") if ns else []
            prefixes = [".".join(parts[:k]) + "." for k in range(len(parts), 0, -1)]
            order = dict.fromkeys(opens + [pre + o for o in opens for pre in prefixes])
            rank = self.contexts[key] = {q: i for i, q in enumerate(order)}
        same_last = self.by_last.get(written.rpartition(".")[2], ())
        tail = "." + written
        exists = self._exists(written)
        if len(same_last) > len(rank):
            for q in rank:
                if exists(q + tail):
                    return q + tail
            return None
        best, best_rank = None, len(rank)
        for full in same_last:
            if full.endswith(tail):
                r = rank.get(full[: -len(tail)], best_rank)
                if r < best_rank and exists(full):
                    best, best_rank = full, r
        return best

    def prefix(self, written: str, ns: str, opens: list[str]) -> str | None:
        """The longest proper prefix of a dotted name that resolves, if any."""
        while "." in written:
            written = written.rpartition(".")[0]
            full = self.in_namespace(written, ns) or (self.opened(written, ns, opens) if opens else None)
            if full is not None:
                return full
        return None


def _edges(table: pa.Table) -> pl.DataFrame:
    """One row per listed name: declaration index `p`, `written` name, `role`, in table order."""
    parts = []
    for column, role in (("_deps", ROLE_STATEMENT), ("_proof_deps", ROLE_PROOF)):
        lists = table[column].combine_chunks()
        parts.append(pl.DataFrame({
            "p": pc.list_parent_indices(lists).to_numpy(),
            "written": pl.from_arrow(pc.list_flatten(lists)),
        }).with_columns(role=pl.lit(role)))
    return pl.concat(parts)


def _resolve(edges: pl.DataFrame, contexts: pl.DataFrame, names: set[str], protected: set[str]) -> pl.DataFrame:
    """`edges` (`ns_id`, `ctx_id`, `written`) with `exact` (the resolution, or null) and `fallback`
    (a dotted name's longest resolving prefix, where `exact` is null). `contexts`: `ns`, `opens`
    (JSON) by `ctx_id`, `ns_id` numbering the namespaces. Each distinct (namespace, written) pair
    is looked up once in the namespace and the root; each still unresolved (context, written)
    pair once in the `open`s."""
    res = _Resolver(names, protected)
    ns_of = dict(zip(contexts["ns_id"].to_list(), contexts["ns"].to_list()))
    ctx_ns = contexts["ns"].to_list()
    ctx_opens = [json.loads(o) if o else [] for o in contexts["opens"].to_list()]
    lasts = pl.Series(list(res.by_last)).implode()
    ns_pairs = edges.select(["ns_id", "written"]).unique().with_columns(
        maybe=pl.col("written").str.extract(r"([^.]*)$").is_in(lasts).fill_null(False))
    ns_pairs = ns_pairs.with_columns(in_ns=pl.Series([
        res.in_namespace(w, ns_of[n]) if ok else None
        for n, w, ok in zip(ns_pairs["ns_id"].to_list(), ns_pairs["written"].to_list(), ns_pairs["maybe"].to_list())
    ], dtype=pl.String))
    edges = edges.join(ns_pairs, on=["ns_id", "written"], how="left", maintain_order="left")
    todo = (edges.filter(pl.col("in_ns").is_null() & (pl.col("maybe") | pl.col("written").str.contains(".", literal=True)))
            .select(["ctx_id", "written", "maybe"]).unique())
    opened: list[str | None] = []
    fallback: list[str | None] = []
    for c, w, ok in zip(todo["ctx_id"].to_list(), todo["written"].to_list(), todo["maybe"].to_list()):
        ns, opens = ctx_ns[c], ctx_opens[c]
        full = res.opened(w, ns, opens) if ok and opens else None
        opened.append(full)
        fallback.append(res.prefix(w, ns, opens) if full is None and "." in w else None)
    todo = todo.select(["ctx_id", "written"]).with_columns(
        opened=pl.Series(opened, dtype=pl.String), fallback=pl.Series(fallback, dtype=pl.String))
    return (edges.join(todo, on=["ctx_id", "written"], how="left", maintain_order="left")
            .with_columns(exact=pl.coalesce("in_ns", "opened")))


def dependency_table(table: pa.Table, corpus: str, names: set[str]) -> pa.Table:
    """DEPENDENCIES from the final raw rows (`full_name`, `is_protected`, `_ns`, `_opens`, `_deps`,
    `_proof_deps`) and every full name of the corpus, generated ones included."""
    decls = pl.from_arrow(table.select(["full_name", "is_protected", "_ns", "_opens"])).with_columns(
        pl.col("_ns").fill_null(""), pl.col("_opens").fill_null("[]"))
    protected = set(decls.filter(pl.col("is_protected"))["full_name"].to_list())
    # number the namespaces and the (namespace, opens) contexts, 0, 1, ... in order of appearance
    decls = decls.with_columns(
        ns_id=pl.col("_ns").rank("dense").cast(pl.Int64) - 1,
        ctx_id=pl.struct("_ns", "_opens").rank("dense").cast(pl.Int64) - 1,
    )
    contexts = (decls.select(["ctx_id", "ns_id", pl.col("_ns").alias("ns"), pl.col("_opens").alias("opens")])
                .unique("ctx_id").sort("ctx_id"))
    edges = _edges(table)
    idx = edges["p"]
    edges = edges.with_columns(
        full_name=decls["full_name"].gather(idx), ns_id=decls["ns_id"].gather(idx), ctx_id=decls["ctx_id"].gather(idx))
    out = (
        _resolve(edges, contexts, names, protected)
        .with_columns(resolved_to=pl.when(pl.col("exact").is_not_null()).then(pl.col("exact"))
                      .when(pl.col("role") == ROLE_PROOF).then(pl.col("fallback")))
        .select(
            corpus=pl.lit(corpus),
            full_name=pl.col("full_name"),
            target=pl.coalesce("resolved_to", "written"),
            resolved=pl.col("resolved_to").is_not_null(),
            role=pl.col("role"),
        )
        .unique(subset=["full_name", "target"], keep="first", maintain_order=True)
    )
    return out.to_arrow().cast(DEPENDENCIES)
