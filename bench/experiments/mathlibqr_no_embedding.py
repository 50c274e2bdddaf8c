"""MathlibQR dev over all of Mathlib through the search engine, without the embedding channel.

Embedding all ~676 k Mathlib texts takes about 3 h on 2 CPU cores (bench/embed_mathlib.py), so
this measures the other channels (identifier resolver, lexical BM25 over names, signatures,
docstrings and rule informalisations, and the formula channel over Lean statement types) on the
full corpus, fused as in a release. The same without the formula channel is run beside it as the baseline.
It is a partial figure, not the release's: a release also fuses the embedding channel.

Usage: .venv/bin/python -m bench.experiments.mathlibqr_no_embedding [--mathlib ../corpora/mathlib4] [--work build/bench/mathlibqr]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mathindex.embed import embedding_texts
from mathindex.informal import RuleInformaliser, informalise
from mathindex.evaluation.bench import run_suite
from mathindex.evaluation.suites import load_suite
from mathindex.formula.api import lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex
from mathindex.lean import extract_lean_tree
from mathindex.schemas import table_specs
from mathindex.search.engine import SearchEngine
from mathindex.search.lexical import build_lexical_index
from mathindex.search.nodes import build_nodes, node_documents
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import write_table

ROOT = Path(__file__).resolve().parents[2]


def build(mathlib: Path, work: Path) -> Path:
    """A release-shaped directory with nodes, lexical and formula indexes (no vector index)."""
    rel = work / "release"
    rel.mkdir(parents=True, exist_ok=True)
    specs = table_specs()
    steps = {}
    t = time.perf_counter()
    ex = extract_lean_tree(mathlib, "mathlib", cache_dir=work / "cache")
    steps["extract"] = time.perf_counter() - t
    t = time.perf_counter()
    informal = informalise(ex.declarations, RuleInformaliser(), work / "cache", dependencies=ex.dependencies)
    texts = embedding_texts(ex.declarations, informal, None)
    steps["informalise + texts"] = time.perf_counter() - t
    t = time.perf_counter()
    write_table(build_nodes(ex.declarations, None, ex.dependencies), specs["nodes"], rel)
    names, docs = node_documents(texts)
    build_lexical_index(names, docs, ReleaseLayout(rel).lexical)
    steps["nodes + lexical index"] = time.perf_counter() - t
    t = time.perf_counter()
    formulas = lean_formulas(ex.declarations)
    trees, _ = parse_formulas(formulas, budget_s=2.0)
    write_table(formulas, specs["formulas"], rel)
    FormulaIndex.build(trees, formulas, ReleaseLayout(rel).formula)
    steps["formulas + index"] = time.perf_counter() - t
    for k, v in steps.items():
        print(f"  build: {k:<24}{v:8.1f} s")
    print(f"  declarations {ex.declarations.num_rows:,}, nodes {len(names):,}, Lean formulas {formulas.num_rows:,}")
    return rel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mathlib", type=Path, default=ROOT.parent / "corpora" / "mathlib4")
    ap.add_argument("--suite", type=Path, default=ROOT / "bench" / "suites" / "mathlibqr-dev.json")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "mathlibqr")
    ap.add_argument("--reuse", action="store_true", help="search the indexes a previous run built")
    args = ap.parse_args()
    rel = args.work / "release" if args.reuse and (args.work / "release" / "nodes.parquet").is_file() else build(args.mathlib, args.work)
    suite = load_suite(args.suite)
    rows = []
    for label, weights in [("identifier+lexical (baseline)", {"formula": 0.0}), ("identifier+lexical+formula", {})]:
        engine = SearchEngine(rel, weights=weights)
        t = time.perf_counter()
        summary, _ = run_suite(engine.names, suite)
        per_query = (time.perf_counter() - t) / summary["queries"] * 1000
        rows.append((label, summary, per_query))
    print(f"\nMathlibQR dev, {rows[0][1]['queries']} queries (points; published on the fair subset: "
          "LeanExplore 39.3/56.9, LeanSearch v2 49.4/65.7 nDCG@10/R@10)")
    for label, s, ms in rows:
        fair = s.get("fair", {})
        print(f"  {label:<30} nDCG@10 {s['metrics']['ndcg@10']:6.2f}  R@10 {s['metrics']['recall@10']:6.2f}"
              f"  | fair ({fair.get('queries')}) {fair.get('ndcg@10', float('nan')):6.2f} / {fair.get('recall@10', float('nan')):6.2f}"
              f"  | {ms:.1f} ms/query")
    print("  by style (fused):")
    for style, m in rows[1][1]["by_style"].items():
        base = rows[0][1]["by_style"][style]
        print(f"    {style:<16} n={m['queries']:<4} nDCG@10 {m['ndcg@10']:6.2f} (lexical {base['ndcg@10']:6.2f})  R@10 {m['recall@10']:6.2f}")


if __name__ == "__main__":
    main()
