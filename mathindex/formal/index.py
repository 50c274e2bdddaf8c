"""Building the formal index: the `formal_statements` table (one row per Lean declaration: its
telescope as normal-form trees, heads and constants) and the `formal/` directory (postings from
every key of mathindex.formal.keys to the declarations that have it, and the constant vocabulary).

Declarations stream in batches; postings are collected as (key id, doc) integer pairs and sorted
once with numpy, so memory grows with the postings, not with Python objects per declaration."""

from __future__ import annotations

import json
import logging
import time
from array import array
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.formal.keys import NOTATION_CONSTANTS, ConstantResolver, leaf_symbols, tree_keys
from mathindex.formal.normal import TooDeep, head, size
from mathindex.formal.telescope import TelescopeBuilder
from mathindex.schemas.common import table
from mathindex.schemas.formal import FORMAL_KEYS, FORMAL_STATEMENTS, FORMAL_VOCABULARY
from mathindex.store import ReleaseLayout

log = logging.getLogger(__name__)

FORMAL_DIR = ReleaseLayout.FORMAL  # the release folder (store.ReleaseLayout owns its name)
FORMAT = "mathindex-formal-index/1"
_COLS = ["full_name", "kind", "module", "signature", "type", "variables", "origin", "corpus", "file", "line_start"]


def _dumps(tree: tuple) -> str:
    """The FORMULA_TREES JSON encoding (tuples serialise as lists)."""
    return json.dumps(tree, ensure_ascii=False, separators=(",", ":"))


def statement_constants(dependencies: pa.Table | None) -> dict[str, list[str]]:
    """name -> the constants its statement names (dependencies rows of role `statement`, or every
    row for a release built before roles)."""
    if dependencies is None or dependencies.num_rows == 0:
        return {}
    import polars as pl

    df = pl.from_arrow(dependencies.select([c for c in ("full_name", "target", "role") if c in dependencies.column_names]))
    if "role" in df.columns:
        df = df.filter(pl.col("role") == "statement")
    grouped = df.group_by("full_name").agg(pl.col("target").unique().sort())
    return dict(zip(grouped["full_name"].to_list(), grouped["target"].to_list()))


def unique_declarations(declarations: pa.Table) -> pa.Table:
    """Lean declarations in (corpus, file, line) order, each name once (its first occurrence, as
    in the `nodes` table)."""
    cols = [c for c in _COLS if c in declarations.column_names]
    t = declarations.select(cols).sort_by([("corpus", "ascending"), ("file", "ascending"), ("line_start", "ascending")])
    names = t.column("full_name").to_pylist()
    seen: set[str] = set()
    keep = [not (n in seen or seen.add(n)) for n in names]
    return t.filter(pa.array(keep)) if not all(keep) else t


def build_formal_index(declarations: pa.Table, dependencies: pa.Table | None, out_dir: Path) -> tuple[pa.Table, dict]:
    """(formal_statements table, manifest info) and the postings written under `out_dir`."""
    t0 = time.perf_counter()
    decls = unique_declarations(declarations)
    named = statement_constants(dependencies)
    all_names = decls.column("full_name").to_pylist()
    written = {c for cs in named.values() for c in cs if "." not in c or len(c.split(".", 1)[0]) > 1 and c[:1].isupper()}
    vocab = sorted(set(all_names) | written | set(NOTATION_CONSTANTS))
    resolver = ConstantResolver(all_names)
    builder = TelescopeBuilder()
    key_ids: dict[str, int] = {}
    pair_keys, pair_docs = array("i"), array("i")
    rows: list[dict] = []
    unparsed = 0
    for batch in decls.to_batches(max_chunksize=20_000):
        for d in batch.to_pylist():
            doc = len(rows)
            row, keys = _statement_row(doc, d, builder, resolver, named.get(d["full_name"], []))
            unparsed += row["conclusion"] is None and bool(d.get("type"))
            rows.append(row)
            for k in keys:
                kid = key_ids.setdefault(k, len(key_ids))
                pair_keys.append(kid)
                pair_docs.append(doc)
    statements = table(rows, FORMAL_STATEMENTS)
    del rows
    info = _write_postings(out_dir, key_ids, pair_keys, pair_docs, vocab)
    info |= {"format": FORMAT, "declarations": statements.num_rows, "unparsed_types": unparsed,
             "seconds": round(time.perf_counter() - t0, 2)}
    return statements, info


def _statement_row(doc: int, d: dict, builder: TelescopeBuilder, resolver: ConstantResolver,
                   named: list[str]) -> tuple[dict, set[str]]:
    """One formal_statements row and its keys (constants `c:` included)."""
    tele = None
    if d.get("type"):
        try:
            tele = builder.of_declaration(d.get("signature") or "", d["type"], d.get("variables") or "",
                                          to_additive=d.get("origin") == "to_additive")
        except (TooDeep, RecursionError):
            tele = None
    hyps, concl = (tele.hypotheses, tele.conclusion) if tele is not None else ([], None)
    trees = ([concl] if concl is not None else []) + hyps
    constants = sorted(resolver.constants(d["full_name"], leaf_symbols(trees), named))
    keys = tree_keys(hyps, concl) if trees else set()
    keys.update("c:" + c for c in constants)
    row = {
        "doc": doc, "name": d["full_name"], "kind": d.get("kind") or "", "module": d.get("module") or "",
        "signature": " ".join((d.get("signature") or "").split()),
        "conclusion_head": head(concl) if concl is not None else None,
        "hypothesis_heads": [head(h) for h in hyps], "constants": constants,
        "size": sum(size(t) for t in trees),
        "conclusion": _dumps(concl) if concl is not None else None,
        "hypotheses": _dumps(hyps),
    }
    return row, keys


def _write_postings(out_dir: Path, key_ids: dict[str, int], pair_keys: array, pair_docs: array,
                    vocab: list[str]) -> dict:
    """formal/keys.parquet (sorted keys with their slice), formal/postings.npy, vocabulary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    kid = np.frombuffer(pair_keys, dtype=np.int32)
    docs = np.frombuffer(pair_docs, dtype=np.int32)
    names = sorted(key_ids)
    rank = np.empty(len(key_ids), dtype=np.int32)  # key id -> position in sorted key order
    for pos, k in enumerate(names):
        rank[key_ids[k]] = pos
    r = rank[kid]
    order = np.lexsort((docs, r))
    postings = docs[order]
    counts = np.bincount(r, minlength=len(names)).astype(np.int32)
    starts = (np.cumsum(counts, dtype=np.int64) - counts).astype(np.int64)  # empty when there are no keys
    keys = pa.table({"key": names, "start": starts, "count": counts}, schema=FORMAL_KEYS)
    pq.write_table(keys, out_dir / "keys.parquet", compression="zstd")
    np.save(out_dir / "postings.npy", postings.astype(np.int32))
    pq.write_table(pa.table({"name": vocab}, schema=FORMAL_VOCABULARY), out_dir / "vocabulary.parquet", compression="zstd")
    return {"keys": len(names), "postings": int(postings.size), "vocabulary": len(vocab)}
