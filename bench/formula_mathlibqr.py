"""The formula channel alone on MathlibQR's formula-bearing queries: LaTeX (q1b_latex,
q4_special_case) and Lean (q1a_lean) formulas against the Lean statement types of all Mathlib.

Reports hit@1/@10 and MRR of the target's full name when the whole query goes to
FormulaIndex.search_groups, which searches its formula pieces (`$…$`, backticks) and adds up
their scores; a query with no piece is parsed whole. Baseline beside it: BM25 over path tokens without the structural re-score.

    .venv/bin/python -m bench.formula_mathlibqr [--decls build/bench/mathlib_decls.parquet]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import time
from pathlib import Path

import pyarrow.parquet as pq

from bench.common.formulas import MATHLIBQR, ROOT, mathlib_declarations
from mathindex.formula.api import lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex

_DOLLARS = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)", re.S)
_TICKS = re.compile(r"`([^`]+)`")
STYLES = {"q1b_latex": _DOLLARS, "q4_special_case": _DOLLARS, "q1a_lean": _TICKS}
DEPTH = 50  # groups read per piece


def pieces(text: str, pattern: re.Pattern) -> list[str]:
    """The formula pieces of a query, longest first (at most three)."""
    found = [next(g for g in m.groups() if g) if m.groups() else m.group(0) for m in pattern.finditer(text)]
    found = [f.strip() for f in found if f and f.strip()]
    return sorted(found, key=len, reverse=True)[:3]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decls", type=Path, default=ROOT / "build/bench/mathlib_decls.parquet")
    ap.add_argument("--trees", type=Path, default=None, help="Parquet cache of the parsed trees")
    ap.add_argument("--index-dir", type=Path, default=ROOT / "build/bench/formula_index_mathlib")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    decls = mathlib_declarations(args.decls)
    formulas = lean_formulas(decls)
    if args.trees is not None and args.trees.exists():
        trees = pq.read_table(args.trees)
        parse_s = None
    else:
        t0 = time.perf_counter()
        trees, _errors = parse_formulas(formulas, budget_s=2.0)
        parse_s = time.perf_counter() - t0
        if args.trees is not None:
            pq.write_table(trees, args.trees)
    t0 = time.perf_counter()
    FormulaIndex.build(trees, formulas, args.index_dir)
    build_s = time.perf_counter() - t0
    idx = FormulaIndex.open(args.index_dir)
    idx.wait_ready(60)
    name_of = dict(zip(formulas.column("formula_id").to_pylist(),
                       (n[len("lean:"):] for n in formulas.column("node_id").to_pylist())))
    targets = json.loads(MATHLIBQR.read_text(encoding="utf-8"))
    rows = []
    for tgt in targets:
        for style, pattern in STYLES.items():
            text = tgt.get(style) or ""
            if not text:
                continue
            ps = pieces(text, pattern)
            rank = {}
            for mode in ("full", "bm25"):
                # the whole query goes in: the index searches its $…$ / backtick pieces itself
                best: dict[str, float] = {}
                for g, sc in idx.search_groups(text, DEPTH, rescore=(mode == "full")):
                    for fid in idx.members[g]:
                        n = name_of[fid]
                        best[n] = max(best.get(n, 0.0), sc)
                names = [n for n, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))]
                rank[mode] = names.index(tgt["full_name"]) + 1 if tgt["full_name"] in names else None
            rows.append({"style": style, "pieces": len(ps), "rank": rank["full"], "rank_bm25": rank["bm25"]})

    def metrics(rs: list[dict], key: str) -> dict:
        n = max(len(rs), 1)
        return {"n": len(rs), "hit1": sum(1 for r in rs if r[key] == 1) / n,
                "hit10": sum(1 for r in rs if r[key] is not None and r[key] <= 10) / n,
                "mrr": sum(1 / r[key] for r in rs if r[key] is not None and r[key] <= 10) / n}

    by = collections.defaultdict(list)
    for r in rows:
        by[r["style"]].append(r)
    res = {"declarations": decls.num_rows, "lean_formulas": formulas.num_rows,
           "groups": idx.n_groups, "parse_s": parse_s, "build_s": build_s,
           "styles": {s: {"with_pieces": sum(1 for r in rs if r["pieces"]), "full": metrics(rs, "rank"),
                          "bm25": metrics(rs, "rank_bm25")} for s, rs in sorted(by.items())}}
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(f"Mathlib declarations {decls.num_rows}, Lean formulas {formulas.num_rows}, groups {idx.n_groups}; "
          f"parse {parse_s if parse_s is None else round(parse_s, 1)} s, index build {build_s:.1f} s")
    print(f"{'style':18s} {'queries':>7s} {'w/ formula':>10s} {'hit@1':>7s} {'hit@10':>7s} {'MRR@10':>7s}"
          f"   BM25 only: hit@1 / hit@10 / MRR@10")
    for s, v in res["styles"].items():
        f, b = v["full"], v["bm25"]
        print(f"{s:18s} {f['n']:>7d} {v['with_pieces']:>10d} {100 * f['hit1']:>6.1f}% {100 * f['hit10']:>6.1f}% "
              f"{f['mrr']:>7.3f}   {100 * b['hit1']:5.1f}% / {100 * b['hit10']:5.1f}% / {b['mrr']:.3f}")


if __name__ == "__main__":
    main()
