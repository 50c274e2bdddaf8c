"""A release's extraction tables without the release: no embeddings, no indexes, no benchmarks.

Mining training pairs (`mathindex train-embedder`) and comparing embedders on a candidate pool need
only the tables (declarations, dependencies, descriptions, citations, informalisations, latex_statements,
embedding_texts, nodes), which take minutes for all of Mathlib where a release's embedding takes hours.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from mathindex.embed import embedding_texts
from mathindex.informal import RuleInformaliser, informalise
from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.schemas import table_specs
from mathindex.schemas.common import ERRORS, concat
from mathindex.search.nodes import build_nodes
from mathindex.store.tables import write_table


def extraction_tables(lean: list[Path], latex: list[Path], cache_dir: Path | None) -> dict[str, pa.Table]:
    """The tables a release would hold for these corpora (rule informalisations), before embedding."""
    specs = table_specs()
    lean_runs = [extract_lean_tree(d, Path(d).resolve().name, cache_dir=cache_dir) for d in lean]
    latex_runs = [extract_latex_tree(d, Path(d).resolve().name) for d in latex]
    decls = concat([x.declarations for x in lean_runs], specs["declarations"].schema)
    deps = concat([x.dependencies for x in lean_runs], specs["dependencies"].schema)
    described = concat([x.descriptions for x in lean_runs], specs["descriptions"].schema)
    cited = concat([x.citations for x in lean_runs], specs["citations"].schema)
    stmts = concat([x.statements for x in latex_runs], specs["latex_statements"].schema)
    informal = informalise(decls, RuleInformaliser(), cache_dir, dependencies=deps)
    return {"declarations": decls, "dependencies": deps, "descriptions": described, "latex_statements": stmts,
            "informalisations": informal, "embedding_texts": embedding_texts(decls, informal, stmts, described),
            "citations": cited, "nodes": build_nodes(decls, stmts, deps, cited),
            "errors": concat([x.errors for x in lean_runs + latex_runs], ERRORS)}


def write_extraction_tables(tables: dict[str, pa.Table], out: Path) -> dict[str, int]:
    """Each table as `<name>.parquet` (schema-cast, sorted) plus `tables.json` with the row counts."""
    out.mkdir(parents=True, exist_ok=True)
    specs = table_specs()
    for name, table in tables.items():
        write_table(table, specs[name], out)
    counts = {k: v.num_rows for k, v in tables.items()}
    (out / "tables.json").write_text(json.dumps(counts, indent=1))
    return counts
