"""What the premise ranker reads, built from a release's tables: one document per declaration (its
name and signature, the BM25 index of the "BM25 over statements" signal and of the neighbour
search) and the priors, from the proofs of the `train` part of the split only:

- `usage`: how many training proofs name the declaration;
- `proof`: for each training theorem, the documents its proof names (what "proofs of similar
  statements" contribute; empty for everything outside `train`).

Beside them, `premises/file_proofs.parquet` (FILE_PROOFS, row-aligned too) holds every
declaration's proof references, whatever its part: what a goal's file says above the goal. The
ranker reads it only for the declarations above a goal in the goal's own file (the text a proof
there is written under, as an agent editing the file has it); it is never a prior, and a goal's
own proof and everything below it stay out of its reach.

`premises/priors.parquet` is row-aligned with the formal index's declarations
(`formal.formal_index.unique_declarations`), so the formal signal indexes the same rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.formal.formal_index import unique_declarations
from mathindex.premises.imports import IMPORTS_FILE
from mathindex.premises.split import TRAIN
from mathindex.premises.suite import THEOREM_KINDS, proof_premises
from mathindex.search.lexical import build_lexical_index
from mathindex.store.layout import ReleaseLayout

PREMISES_DIR = ReleaseLayout.PREMISES  # the release folder (store.ReleaseLayout owns its name)
STATEMENTS_DIR = "statements"
PRIORS_FILE = "priors.parquet"
FILE_PROOFS_FILE = "file_proofs.parquet"
PRIORS = pa.schema([
    pa.field("name", pa.string(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("file", pa.string(), nullable=False),
    pa.field("line", pa.int32(), nullable=False),  # line_start: "earlier in the same file" (premises.imports)
    pa.field("part", pa.string(), nullable=False),  # premises.split: train, tune or test
    pa.field("usage", pa.int32(), nullable=False),  # training proofs that name it
    pa.field("proof", pa.list_(pa.int32()), nullable=False),  # rows its proof names; train theorems only
    pa.field("simp", pa.bool_(), nullable=False),  # a `simp` attribute (scoped or not): the tree model's `simp`
])
FILE_PROOFS = pa.schema([
    pa.field("proof", pa.list_(pa.int32()), nullable=False),  # rows its proof names, every part (priors' row order)
])


def statement_document(name: str, signature: str) -> str:
    """What BM25 indexes for a declaration: its name (split into words by `search.text.tokens`)
    and its signature."""
    return f"{name} {signature or ''}"


def simp_names(declarations: pa.Table) -> pl.Series:
    """The names declared with a `simp` attribute (`simp`, `scoped simp`, `simp ←`, ...)."""
    attributes = pl.from_arrow(declarations.select(["full_name", "attributes"]))
    return attributes.filter(pl.col("attributes").list.eval(pl.element().str.contains(r"\bsimp\b")).list.any())["full_name"]


def _documents(declarations: pa.Table, parts: dict[str, str]) -> pl.DataFrame:
    """(doc, full_name, kind, file, line_start, simp, part): one row per distinct declaration name,
    in the formal index's order."""
    decls = pl.from_arrow(unique_declarations(declarations).select(["full_name", "kind", "file", "line_start"]))
    decls = decls.with_columns(pl.col("full_name").is_in(simp_names(declarations).implode()).alias("simp"))
    part = pl.DataFrame({"file": list(parts), "part": list(parts.values())}, schema={"file": pl.String, "part": pl.String})
    return decls.with_row_index("doc").join(part, on="file", how="left").with_columns(pl.col("part").fill_null(TRAIN))


def _proof_pairs(decls: pl.DataFrame, used: pl.DataFrame) -> pl.DataFrame:
    """(full_name, target, doc): each proof reference of `used` (proof_premises rows) to a row of
    `decls`, with that row's number."""
    doc_of = decls.select(pl.col("full_name").alias("target"), pl.col("doc").cast(pl.Int32))
    return used.explode("premises").rename({"premises": "target"}).join(doc_of, on="target")


def _proof_rows(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(`_documents`, `_proof_pairs` of every proof): what the priors and the file proofs are both
    made from, read once."""
    decls = _documents(declarations, parts)
    return decls, _proof_pairs(decls, proof_premises(declarations, dependencies))


def build_file_proofs(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str],
                      rows: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> pa.Table:
    """FILE_PROOFS: every declaration's proof references as rows, in the priors' row order.
    `rows`: `_proof_rows` of the same tables, when the caller has them."""
    decls, pairs = rows if rows is not None else _proof_rows(declarations, dependencies, parts)
    proofs = pairs.group_by("full_name").agg(pl.col("doc").sort().alias("proof"))
    out = decls.select("doc", "full_name").join(proofs, on="full_name", how="left").sort("doc")
    return out.select(pl.col("proof").fill_null(pl.lit([], dtype=pl.List(pl.Int32)))).to_arrow().cast(FILE_PROOFS)


def build_priors(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str],
                 rows: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> pa.Table:
    """The priors table (PRIORS), one row per distinct declaration name, in the formal index's order.
    Only proofs of declarations written in `train` files are read. `rows`: as `build_file_proofs`'s."""
    decls, pairs = rows if rows is not None else _proof_rows(declarations, dependencies, parts)
    train_names = decls.filter(pl.col("part") == TRAIN).select("full_name")
    pairs = pairs.join(train_names, on="full_name", how="semi")
    usage = pairs.group_by("target").len().rename({"target": "full_name", "len": "usage"})
    theorem_rows = decls.filter(pl.col("kind").is_in(THEOREM_KINDS)).select("full_name")
    proofs = (pairs.join(theorem_rows, on="full_name", how="semi").group_by("full_name")
              .agg(pl.col("doc").sort().alias("proof")))
    out = (decls.join(usage, on="full_name", how="left").join(proofs, on="full_name", how="left").sort("doc")
           .with_columns(pl.col("usage").fill_null(0).cast(pl.Int32),
                         pl.col("proof").fill_null(pl.lit([], dtype=pl.List(pl.Int32)))))
    return out.select(pl.col("full_name").alias("name"), "kind", "file", pl.col("line_start").fill_null(0).alias("line"), "part",
                      "usage", "proof", "simp").to_arrow().cast(PRIORS)


def write_premise_index(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str], out_dir: Path,
                        token_cache: Path | None = None, imports: pa.Table | None = None) -> dict:
    """`out_dir/priors.parquet`, `out_dir/file_proofs.parquet`, the statements' BM25 index `out_dir/statements/` (documents'
    tokens kept in `token_cache`, `search.lexical.build_lexical_index`) and, when given, the import
    graph `out_dir/imports.parquet` (premises.imports); returns counts."""
    rows = _proof_rows(declarations, dependencies, parts)
    priors = build_priors(declarations, dependencies, parts, rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(priors, out_dir / PRIORS_FILE, compression="zstd")
    pq.write_table(build_file_proofs(declarations, dependencies, parts, rows), out_dir / FILE_PROOFS_FILE, compression="zstd")
    (out_dir / IMPORTS_FILE).unlink(missing_ok=True)
    if imports is not None:
        pq.write_table(imports, out_dir / IMPORTS_FILE, compression="zstd")
    decls = unique_declarations(declarations)
    names = decls.column("full_name").to_pylist()
    docs = [statement_document(n, s) for n, s in zip(names, decls.column("signature").to_pylist())]
    build_lexical_index(names, docs, out_dir / STATEMENTS_DIR, token_cache)
    proof_lengths = np.diff(priors.column("proof").combine_chunks().offsets.to_numpy())
    return {"declarations": priors.num_rows, "training_proofs": int((proof_lengths > 0).sum()),
            "training_premise_uses": int(proof_lengths.sum()),
            "import_graph_files": 0 if imports is None else imports.num_rows}
