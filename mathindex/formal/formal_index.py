"""Building the formal index: the `formal_statements` table (one row per Lean declaration: its
telescope as normal-form trees, heads and constants) and the `formal/` directory (postings from
every key of mathindex.formal.keys to the declarations that have it, and the constant vocabulary).

Two passes. `statement_facts` turns each distinct statement text (signature, type, variables,
additive or not) into what depends on that text alone: trees, heads, size, tree keys and leaf
symbols; with a cache directory it keeps them by content, so a rebuild parses only the
statements that changed. Then each declaration's constants are resolved against the whole
corpus (names, namespaces, the dependencies table), and the postings are sorted by polars."""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.cache.shards import KeyedShard, RowsDone
from mathindex.formal.facts import FACTS, dumps
from mathindex.formal.keys import NOTATION_CONSTANTS, ConstantResolver, tree_facts
from mathindex.formal.normal import head
from mathindex.formal.notation import NotationMap, rename_leaves
from mathindex.formal.shards import (SHARD_STATEMENTS, aligned_facts, facts_cache, facts_shard,
                                     keep_facts, parse_facts, plan_shards, statement_keys)
from mathindex.schemas.formal import FORMAL_KEYS, FORMAL_NOTATIONS, FORMAL_STATEMENTS, FORMAL_VOCABULARY
from mathindex.store.layout import ReleaseLayout
from mathindex.workers import mp_context, stop_on_sigterm

log = logging.getLogger(__name__)

FORMAL_DIR = ReleaseLayout.FORMAL  # the release folder (store.ReleaseLayout owns its name)
FORMAT = "mathindex-formal-index/1"
_COLS = ["full_name", "kind", "module", "signature", "type", "variables", "origin", "corpus", "file", "line_start"]


def statement_constants(dependencies: pa.Table | None, role: str = "statement") -> dict[str, list[str]]:
    """name -> the constants its statement (`role`) names (dependencies rows of that role, or every
    row for a release built before roles)."""
    if dependencies is None or dependencies.num_rows == 0:
        return {}
    df = pl.from_arrow(dependencies.select([c for c in ("full_name", "target", "role") if c in dependencies.column_names]))
    if "role" in df.columns:
        df = df.filter(pl.col("role") == role)
    grouped = df.group_by("full_name").agg(pl.col("target").unique().sort())
    return dict(zip(grouped["full_name"].to_list(), grouped["target"].to_list()))


def written_constants(dependencies: pa.Table | None) -> list[str]:
    """The statement targets the vocabulary takes beside declared names: root names, and dotted
    ones whose first component is a capitalised word (`Real.sqrt`, not `h.le`)."""
    if dependencies is None or dependencies.num_rows == 0:
        return []
    df = pl.from_arrow(dependencies.select([c for c in ("target", "role") if c in dependencies.column_names]))
    if "role" in df.columns:
        df = df.filter(pl.col("role") == "statement")
    targets = df.select(pl.col("target").unique())["target"].to_list()
    return [c for c in targets if "." not in c or len(c.split(".", 1)[0]) > 1 and c[:1].isupper()]


def unique_declarations(declarations: pa.Table) -> pa.Table:
    """Lean declarations in (corpus, file, line) order, each name once (its first occurrence, as
    in the `nodes` table)."""
    cols = [c for c in _COLS if c in declarations.column_names]
    t = declarations.select(cols).sort_by([("corpus", "ascending"), ("file", "ascending"), ("line_start", "ascending")])
    keep = pl.from_arrow(t.select(["full_name"]))["full_name"].is_first_distinct().to_arrow()
    return t.filter(keep) if keep.false_count else t


def statement_facts(decls: pa.Table, cache_dir: Path | None = None, workers: int = 2,
                    shard_statements: int = SHARD_STATEMENTS) -> tuple[pa.Table, dict]:
    """FACTS rows aligned with `decls` (trees parsed once per distinct statement text), and
    counts: statements parsed, taken from the cache. With `cache_dir` (a root's cache directory),
    facts are read from and written to the facts cache (`formal.shards.facts_cache`); the
    statements it lacks are parsed as shards over `workers` processes (in this process when one,
    or when the pool fails), each stored there by this process as it comes back."""
    keyed, found, shards = plan_facts(decls, cache_dir, shard_statements)
    parsed: list[RowsDone] = []
    if workers > 1 and len(shards) > 1:
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context(), initializer=stop_on_sigterm) as pool:
                for shard, (rows, seconds) in zip(shards, pool.map(parse_facts, shards)):  # stored here: no polars in a forked worker
                    parsed.append(keep_facts(shard, rows, cache_dir, seconds))
        except (BrokenProcessPool, OSError) as exc:  # a dead worker: finish in this process
            log.warning("formal index worker pool failed (%s); parsing the remaining statements in-process", exc)
    for shard in shards[len(parsed):]:
        parsed.append(facts_shard(shard, cache_dir))
    return merge_facts(keyed, found, parsed, cache_dir)


def plan_facts(decls: pa.Table, cache_dir: Path | None, shard_statements: int = SHARD_STATEMENTS,
               spread: int = 1) -> tuple[pl.DataFrame, pl.DataFrame, list[KeyedShard]]:
    """The statement keys of `decls` (doc order), the facts the cache under `cache_dir` holds of
    them (a damaged cache shard is logged, removed and its statements parsed again), and the other
    distinct statements as content-keyed shards (`formal.shards.plan_shards`)."""
    keyed = statement_keys(decls)
    found = facts_cache(cache_dir).load(keyed["key"]) if cache_dir is not None else pl.from_arrow(FACTS.empty_table())
    todo = keyed.join(found.select("key"), on="key", how="anti")
    return keyed, found, plan_shards(todo, shard_statements, spread)


def merge_facts(keyed: pl.DataFrame, found: pl.DataFrame, parsed: list[RowsDone],
                cache_dir: Path | None) -> tuple[pa.Table, dict]:
    """The reduce of the facts shards: FACTS aligned with the statements in doc order, the counts,
    and the facts cache's shards merged when they are many (this process the one writer)."""
    if cache_dir is not None:
        facts_cache(cache_dir).compact()
    facts = aligned_facts(keyed, found, parsed)
    return facts, {"statements_parsed": sum(p.computed for p in parsed), "statements_cached": found.height}


def build_formal_index(declarations: pa.Table, dependencies: pa.Table | None, out_dir: Path,
                       cache_dir: Path | None = None, workers: int = 2, notations: pa.Table | None = None,
                       shard_statements: int = SHARD_STATEMENTS) -> tuple[pa.Table, dict]:
    """(formal_statements table, manifest info) and the postings written under `out_dir`;
    `cache_dir`: where statement facts are kept by content between builds (None: no cache);
    `workers`: processes that parse statements, `shard_statements` at a time; `notations`: the corpora's notation commands
    (schemas.lean.NOTATIONS), through which notation leaves become constants (formal.notation)."""
    t0 = time.perf_counter()
    decls = unique_declarations(declarations)
    facts, counts = statement_facts(decls, cache_dir, workers, shard_statements)
    statements, info = index_statements(decls, facts, dependencies, out_dir, notations)
    info["seconds"] = round(time.perf_counter() - t0, 2)
    if cache_dir is not None:
        info |= counts
    return statements, info


def index_statements(decls: pa.Table, facts: pa.Table, dependencies: pa.Table | None, out_dir: Path,
                     notations: pa.Table | None) -> tuple[pa.Table, dict]:
    """The second pass over the statements' facts (aligned with the unique `decls`): notation and
    constants resolved against the whole corpus, the table, the postings under `out_dir`."""
    names = decls.column("full_name").to_pylist()
    named = statement_constants(dependencies)
    written = written_constants(dependencies)
    resolver = ConstantResolver(names, written)
    notation = NotationMap(notations, resolver)
    facts, renamed = resolve_notation(decls, facts, notation, resolver, named, dependencies)
    constants = [sorted(resolver.constants(n, set(s).difference(_last(r)), named.get(n, []), h) | set(r.values()))
                 for n, s, h, r in zip(names, facts.column("symbols").to_pylist(), facts.column("hints").to_pylist(), renamed)]
    statements = pa.table({
        "doc": pa.array(np.arange(len(names), dtype=np.int32)), "name": decls.column("full_name"),
        "kind": _text(decls, "kind"), "module": _text(decls, "module"),
        "signature": pa.array([" ".join((s or "").split()) for s in _text(decls, "signature").to_pylist()], pa.string()),
        "conclusion_head": facts.column("conclusion_head"), "hypothesis_heads": facts.column("hypothesis_heads"),
        "constants": pa.array(constants, pa.list_(pa.string())), "size": facts.column("size"),
        "conclusion": facts.column("conclusion"), "hypotheses": facts.column("hypotheses"),
    }).cast(FORMAL_STATEMENTS)
    vocab = sorted(set(names) | set(written) | set(NOTATION_CONSTANTS))
    info = _write_postings(out_dir, facts.column("tree_keys"), constants, vocab)
    rewrites = notation.context_free()
    pq.write_table(pa.table({"leaf": list(rewrites), "target": list(rewrites.values())}, schema=FORMAL_NOTATIONS),
                   out_dir / "notations.parquet", compression="zstd")
    types = _text(decls, "type")
    unparsed = pc.sum(pc.and_(pc.is_null(facts.column("conclusion")),
                                              pc.not_equal(types, ""))).as_py() or 0
    info |= {"format": FORMAT, "declarations": statements.num_rows, "unparsed_types": unparsed,
             "notation_statements": sum(1 for r in renamed if r)}
    return statements, info


def _last(renamed: dict[str, str]) -> set[str]:
    """The leaves a statement's resolved notation became (not resolved again: `𝓝` in
    `Filter.Tendsto.log` is `nhds`, not `Filter.Tendsto.nhds`)."""
    return {full.rsplit(".", 1)[-1] for full in renamed.values()} if renamed else set()


def resolve_notation(decls: pa.Table, facts: pa.Table, notation: NotationMap, resolver: ConstantResolver,
                     named: dict[str, list[str]], dependencies: pa.Table | None) -> tuple[pa.Table, list[dict[str, str]]]:
    """The facts with each statement's notation leaves made constants, and per statement the
    leaves resolved (leaf -> full name): its free names and the constant leaves the notation map
    knows (formal.notation), and its other free names that name a declaration of its own
    namespaces (`X` in `Polynomial.eval_X`). Only the statements that have such leaves are re-read
    and re-keyed."""
    renamed: list[dict[str, str]] = [{} for _ in range(facts.num_rows)]
    consts = {leaf for leaf, kind in notation.kinds.items() if kind == "#c"}
    cols = {c: decls.column(c).to_pylist() if c in decls.column_names else [""] * decls.num_rows
            for c in ("full_name", "corpus", "file")}
    free, symbols = facts.column("free").to_pylist(), facts.column("symbols").to_pylist()
    todo: list[tuple[int, set[str], tuple[str, str, str]]] = []
    for i, (name, corpus, file) in enumerate(zip(cols["full_name"], cols["corpus"], cols["file"])):
        if free[i] or (consts and consts.intersection(symbols[i])):
            todo.append((i, {x for x in free[i] if x in notation.by_leaf} | consts.intersection(symbols[i]),
                         (name, corpus or "", file or "")))
    tied = {where[0] for _, leaves, where in todo if leaves and notation.tied(leaves, where)}
    proof = statement_constants(_rows_of(dependencies, tied), "proof") if tied else {}  # breaks ties between namespaces
    for i, leaves, where in todo:
        name = where[0]
        got = notation.resolve(leaves, where, [named.get(name, []), proof.get(name, [])]) if leaves else {}
        for x in free[i]:
            if x not in got and "." in name and (found := resolver.in_namespace(x, name)):
                got[x] = found
        renamed[i] = got
    return _rekeyed(facts, renamed), renamed


def _rows_of(dependencies: pa.Table | None, names: set[str]) -> pa.Table | None:
    """The dependencies rows of `names`."""
    if dependencies is None:
        return None
    return dependencies.filter(pc.is_in(dependencies.column("full_name"), pa.array(sorted(names), pa.string())))


_REKEYED = ("conclusion", "hypotheses", "conclusion_head", "hypothesis_heads", "tree_keys", "symbols")


def _rekeyed(facts: pa.Table, renamed: list[dict[str, str]]) -> pa.Table:
    """The facts with the statements that have resolved leaves renamed in their trees and keyed
    again; the other rows as they were (taken, not converted)."""
    changed = [i for i, r in enumerate(renamed) if r]
    if not changed:
        return facts
    part = facts.select(list(_REKEYED)).take(pa.array(changed, pa.int64())).to_pylist()
    rows: list[dict] = []
    for i, row in zip(changed, part):
        last = {leaf: full.rsplit(".", 1)[-1] for leaf, full in renamed[i].items()}
        try:
            concl = rename_leaves(json.loads(row["conclusion"]), last) if row["conclusion"] else None
            hyps = [rename_leaves(h, last) for h in json.loads(row["hypotheses"])]
        except RecursionError:
            rows.append(row)
            continue
        keys, syms, _ = tree_facts(hyps, concl)
        rows.append({"conclusion": dumps(concl) if concl is not None else None, "hypotheses": dumps(hyps),
                     "conclusion_head": head(concl) if concl is not None else None,
                     "hypothesis_heads": [head(h) for h in hyps], "tree_keys": sorted(keys), "symbols": sorted(syms)})
    fresh = pa.Table.from_pylist(rows, schema=pa.schema([FACTS.field(c) for c in _REKEYED]))
    order = np.arange(facts.num_rows, dtype=np.int64)
    order[changed] = facts.num_rows + np.arange(len(changed))
    for c in _REKEYED:
        merged = pa.concat_arrays([facts.column(c).combine_chunks(), fresh.column(c).combine_chunks()]).take(pa.array(order))
        facts = facts.set_column(facts.schema.get_field_index(c), c, merged)
    return facts


def _text(decls: pa.Table, name: str) -> pa.ChunkedArray:
    """A string column with nulls as "" ("" for every row when the column is absent)."""
    if name not in decls.column_names:
        return pa.chunked_array([pa.array([""] * decls.num_rows, pa.string())])
    return pc.fill_null(decls.column(name), "")


def _write_postings(out_dir: Path, tree_keys: pa.ChunkedArray, constants: list[list[str]], vocab: list[str]) -> dict:
    """formal/keys.parquet (sorted keys with their slice), formal/postings.npy (each key's docs,
    ascending), vocabulary: every (key, doc) pair, tree keys and `c:` constants, sorted by polars."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs = pl.concat([
        pl.DataFrame({"key": pa.chunked_array(tree_keys).cast(pa.list_(pa.string()))}).with_row_index("doc"),
        pl.DataFrame({"key": pa.array([["c:" + c for c in cs] for cs in constants], pa.list_(pa.string()))}).with_row_index("doc"),
    ]).explode("key").drop_nulls("key").sort(["key", "doc"])  # keys are sets: no (key, doc) twice
    postings = pairs["doc"].to_numpy().astype(np.int32)
    grouped = pairs.group_by("key", maintain_order=True).len()
    counts = grouped["len"].to_numpy().astype(np.int32)
    starts = (np.cumsum(counts, dtype=np.int64) - counts).astype(np.int64)
    keys = pa.table({"key": grouped["key"].to_arrow(), "start": starts, "count": counts}, schema=FORMAL_KEYS)
    pq.write_table(keys, out_dir / "keys.parquet", compression="zstd")
    np.save(out_dir / "postings.npy", postings)
    pq.write_table(pa.table({"name": vocab}, schema=FORMAL_VOCABULARY), out_dir / "vocabulary.parquet", compression="zstd")
    return {"keys": keys.num_rows, "postings": int(postings.size), "vocabulary": len(vocab)}
