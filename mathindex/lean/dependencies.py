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
        self.contexts: dict[int, dict[str, int]] = {}  # context -> opened namespace -> rank
        # name of one component -> the namespaces Q whose `Q.name` the corpus declares, unprotected;
        # the last two components of every name (`A.b` of `X.A.b`): a dotted name can only be
        # found under an `open` when its own last two are among them; every last component
        self.holders: dict[str, set[str]] = {}
        self.last_two: set[str] = set()
        self.lasts: set[str] = set()
        for n in names:
            q, dot, last = n.rpartition(".")
            self.lasts.add(last)
            if dot:
                self.last_two.add(n[q.rfind(".") + 1 :])
                if n not in protected:
                    self.holders.setdefault(last, set()).add(q)
        self.names = names

    def _exists(self, written: str):
        return self.exists if "." in written else self.exists_short

    def in_namespace(self, written: str, ns: str) -> str | None:
        return resolve(written, ns, [], self._exists(written))

    def opened(self, written: str, ctx: int, ns: str, opens: list[str]) -> str | None:
        """`written` in the first opened namespace that holds it: the `open`s as written, then
        each `open` under each namespace prefix, longest first (`open Category` made inside
        `namespace CategoryTheory` opens `CategoryTheory.Category`; the namespace the `open` was
        made in is not recorded, the declaration's is taken). `ctx` numbers (`ns`, `opens`)."""
        dotted = "." in written
        held = None if dotted else self.holders.get(written)
        if not (held or dotted and written[written.rfind(".", 0, written.rfind(".")) + 1 :] in self.last_two):
            return None
        rank = self.contexts.get(ctx)
        if rank is None:
            parts = ns.split(".") if ns else []
            prefixes = [".".join(parts[:k]) + "." for k in range(len(parts), 0, -1)]
            order = dict.fromkeys(opens + [pre + o for o in opens for pre in prefixes])
            rank = self.contexts[ctx] = {q: i for i, q in enumerate(order)}
        if dotted:  # few are asked: try each opened namespace
            return next((q + "." + written for q in rank if q + "." + written in self.names), None)
        hits = held.intersection(rank)
        return min(hits, key=rank.__getitem__) + "." + written if hits else None

    def prefix(self, written: str, ctx: int, ns: str, opens: list[str]) -> str | None:
        """The longest proper prefix of a dotted name that resolves, if any."""
        while "." in written:
            written = written.rpartition(".")[0]
            full = self.in_namespace(written, ns) or (self.opened(written, ctx, ns, opens) if opens else None)
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


def _in_namespace(pairs: pl.DataFrame, ns_of: dict[int, str], names: set[str], protected: set[str]) -> pl.DataFrame:
    """`resolve` with no `open`s, columnar: for each (`ns_id`, `written`), `in_ns` = the name under
    the longest namespace prefix that the corpus declares, else the root name, else null."""
    prefixes = []  # (ns_id, prefix, rank): "A.B." before "A." before the root ""
    for n, ns in ns_of.items():
        parts = ns.split(".") if ns else []
        prefixes.extend((n, ".".join(parts[:k]) + ".", len(parts) - k) for k in range(len(parts), 0, -1))
        prefixes.append((n, "", len(parts)))
    prefixes_df = pl.DataFrame(prefixes, schema={"ns_id": pl.Int64, "prefix": pl.String, "rank": pl.Int64},
                               orient="row")
    everything = pl.Series(list(names), dtype=pl.String).implode()
    unprotected = pl.Series(list(names - protected), dtype=pl.String).implode()
    rooted = pl.col("written").str.starts_with("_root_.")  # `_root_.x` is `x`, from anywhere
    return (
        pairs.select(["ns_id", "written"])
        .join(prefixes_df, on="ns_id")
        .filter(~rooted | (pl.col("prefix") == ""))
        .with_columns(cand=pl.when(rooted).then(pl.col("written").str.strip_prefix("_root_."))
                      .otherwise(pl.col("prefix") + pl.col("written")))
        .filter(pl.when(pl.col("written").str.contains(".", literal=True))
                .then(pl.col("cand").is_in(everything)).otherwise(pl.col("cand").is_in(unprotected)))
        .sort("rank")
        .group_by(["ns_id", "written"], maintain_order=True)
        .agg(in_ns=pl.col("cand").first())
    )


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
    lasts = pl.Series(list(res.lasts), dtype=pl.String).implode()
    ns_pairs = edges.select(["ns_id", "written"]).unique().with_columns(
        maybe=pl.col("written").str.extract(r"([^.]*)$").is_in(lasts).fill_null(False))
    ns_pairs = ns_pairs.join(_in_namespace(ns_pairs.filter("maybe"), ns_of, names, protected),
                             on=["ns_id", "written"], how="left")
    edges = edges.join(ns_pairs, on=["ns_id", "written"], how="left", maintain_order="left")
    todo = (edges.filter(pl.col("in_ns").is_null() & (pl.col("maybe") | pl.col("written").str.contains(".", literal=True)))
            .select(["ctx_id", "written", "maybe"]).unique())
    opened: list[str | None] = []
    fallback: list[str | None] = []
    for c, w, ok in zip(todo["ctx_id"].to_list(), todo["written"].to_list(), todo["maybe"].to_list()):
        ns, opens = ctx_ns[c], ctx_opens[c]
        full = res.opened(w, c, ns, opens) if ok and opens else None
        opened.append(full)
        fallback.append(res.prefix(w, c, ns, opens) if full is None and "." in w else None)
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
