"""A release-shaped directory of extraction tables, without embeddings or indexes.

Whole-corpus releases spend about 2 h of the 2 cores embedding. Mining training pairs
(`mathindex train-embedder`) and comparing embedders on a candidate pool (bench/embedder_pool.py)
need only the tables: declarations, dependencies, informalisations, latex_statements,
embedding_texts, nodes. This writes them, as the release flow would, in a few minutes.

Usage: .venv/bin/python bench/corpus_tables.py --lean ../corpora/mathlib4 --latex ../shared/corpora/stacks-project --out build/tables/mathlib-stacks
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mathindex.embed import RuleInformaliser, embedding_texts, informalise
from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.schemas import table_specs
from mathindex.schemas.common import ERRORS, concat
from mathindex.search.nodes import build_nodes
from mathindex.store import write_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lean", type=Path, action="append", default=[])
    ap.add_argument("--latex", type=Path, action="append", default=[])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    specs = table_specs()
    t = time.perf_counter()
    lean = [extract_lean_tree(d, d.resolve().name, cache_dir=out.parent / "cache" / "lean") for d in args.lean]
    latex = [extract_latex_tree(d, d.resolve().name) for d in args.latex]
    decls = concat([x.declarations for x in lean], specs["declarations"].schema)
    deps = concat([x.dependencies for x in lean], specs["dependencies"].schema)
    stmts = concat([x.statements for x in latex], specs["latex_statements"].schema)
    errors = concat([x.errors for x in lean + latex], ERRORS)
    print(f"extract {time.perf_counter() - t:.1f} s: {decls.num_rows:,} declarations, {stmts.num_rows:,} statements")
    t = time.perf_counter()
    informal = informalise(decls, RuleInformaliser(), out.parent / "cache", dependencies=deps)
    texts = embedding_texts(decls, informal, stmts)
    nodes = build_nodes(decls, stmts)
    print(f"informalise + texts + nodes {time.perf_counter() - t:.1f} s: {texts.num_rows:,} texts")
    tables = {"declarations": decls, "dependencies": deps, "latex_statements": stmts, "informalisations": informal,
              "embedding_texts": texts, "nodes": nodes, "errors": errors}
    for name, table in tables.items():
        write_table(table, specs[name], out)
    (out / "tables.json").write_text(json.dumps({k: v.num_rows for k, v in tables.items()}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
