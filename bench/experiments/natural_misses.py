"""Where prose queries lose their gold: per query, the gold's rank in each channel's list and
after fusion, then the misses grouped by kind of target, query length and phrasing.

    .venv/bin/python -m bench.experiments.natural_misses RELEASE_DIR SUITE.json RUNS.pkl [--style q1c_natural] [--list]

RUNS.pkl comes from bench/cache_runs.py on the same release and suite.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

from bench.common.rescoring import load_runs, node_kinds, rank_of, ranking_engine
from mathindex.evaluation.metrics import metric_value
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for

CHANNELS = ("lexical", "embedding", "formula", "formal", "informal")
_QUESTION = re.compile(r"^(what|which|how|is|are|does|do|can|why|when)\b|\?\s*$", re.I)
_BOILER = re.compile(r"^(prove|show|the (theorem|lemma|fact|statement|result)|theorem|lemma)\b|\bif\b.*\bthen\b", re.I)


def bucket_rank(r: int | None) -> str:
    if r is None:
        return ">200"
    return "1" if r == 1 else "2-10" if r <= 10 else "11-50" if r <= 50 else "51-200"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("--style", default="q1c_natural")
    ap.add_argument("--list", action="store_true", help="print every query's row")
    args = ap.parse_args()
    engine = ranking_engine(args.release)
    kinds = node_kinds(args.release)
    runs = load_runs(args.runs, args.suite, {args.style})
    rows = []
    for q, results, resolved in runs:
        names = [h.name for h in engine.rank(q.text, results, resolved, 200, weights_for(query_kind(q.text))).hits]
        gold = set(q.gold)
        ch = {c: rank_of([n for n, _ in results.get(c, [])], gold) if c in results else "off" for c in CHANNELS}
        words = len(q.text.split())
        kind = kinds.get(next(iter(gold)), "?")
        rows.append(dict(q=q, fused=rank_of(names, gold), ndcg=metric_value("ndcg@10", names, gold), kind=kind,
                         kindgroup="theorem" if kind in ("theorem", "lemma", "instance") else "definition",
                         words=words, length="short (<8)" if words < 8 else "medium (8-13)" if words < 14 else "long (14+)",
                         phrasing="question" if _QUESTION.search(q.text) else "boilerplate" if _BOILER.search(q.text) else "plain",
                         qkind=query_kind(q.text), **ch))
    if args.list:
        for r in sorted(rows, key=lambda r: (r["fused"] or 999)):
            print(f"{str(r['fused'] or '-'):>4} lex {str(r['lexical'] or '-'):>4} emb {str(r['embedding'] or '-'):>4} "
                  f"fml {str(r['formula'] or '-'):>4} {r['kind']:<10} {r['q'].id:<6} {next(iter(r['q'].gold))[:45]:<45} | {r['q'].text}")
    print(f"{args.style}: {len(rows)} queries, nDCG@10 {sum(r['ndcg'] for r in rows) / len(rows):.2f}")
    for c in ("fused",) + CHANNELS:
        counts = defaultdict(int)
        for r in rows:
            counts["off" if r[c] == "off" else bucket_rank(r[c])] += 1
        print(f"  gold rank in {c:<9}: " + ", ".join(f"{b} {counts[b]}" for b in ("1", "2-10", "11-50", "51-200", ">200", "off") if counts[b]))
    for facet in ("kindgroup", "length", "phrasing", "qkind"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[facet]].append(r)
        for g, rs in sorted(groups.items()):
            top10 = sum(1 for r in rs if r["fused"] and r["fused"] <= 10)
            lex = sum(1 for r in rs if isinstance(r["lexical"], int) and r["lexical"] <= 10)
            emb = sum(1 for r in rs if isinstance(r["embedding"], int) and r["embedding"] <= 10)
            either = sum(1 for r in rs if any(isinstance(r[c], int) and r[c] <= 10 for c in CHANNELS))
            print(f"  {facet:<9} {g:<14} n {len(rs):3d}  nDCG@10 {sum(r['ndcg'] for r in rs) / len(rs):6.2f}  "
                  f"fused top10 {top10:3d}  lexical top10 {lex:3d}  embedding top10 {emb:3d}  any channel top10 {either:3d}")
    lost = [r for r in rows if (not r["fused"] or r["fused"] > 10)
            and any(isinstance(r[c], int) and r[c] <= 10 for c in CHANNELS)]
    print(f"  in some channel's top 10 but not fused top 10: {len(lost)}")
    for r in lost:
        print(f"    fused {r['fused']} lex {r['lexical']} emb {r['embedding']} {r['q'].id} {r['q'].text[:80]}")


if __name__ == "__main__":
    main()
