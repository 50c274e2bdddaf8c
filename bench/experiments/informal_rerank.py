"""Re-ranking prose queries by the informal statements of their first candidates, from cached lists.

The vector index embeds name_signature, docstring and description (the informal rendering is in
the lexical index only: issue 10, third session). This script takes each prose query's first
DEPTH fused candidates, embeds their informal renderings (without the glosses of used constants)
with the release's model, and fuses the cosine order as one more channel, `informal`, under a grid
of weights; two-fold CV by target as bench/fusion_weights.py. The vectors are kept in VECS.pkl.
Lists cached by the engine itself (bench/cache_runs.py with the channel on: RUNS.pkl has `informal`
lists) are scored as they are, with `-` for VECS.pkl.

    .venv/bin/python -m bench.experiments.informal_rerank RELEASE_DIR SUITE.json RUNS.pkl VECS.pkl [--depth 30]
        [--variant prf:K:B] [--variant long:MIN_WORDS:WEIGHT:DEPTH]

Variants (scored at weight 1.0 beside the plain channel, in-sample): `prf:K:B` re-ranks with the
query vector plus B times the mean rendering vector of the first K candidates (Rocchio feedback);
`long:N:W:D` gives queries of at least N words weight W and the first D candidates (at most --depth);
`combine:max` / `combine:mean` scores a candidate by the better / the mean of its rendering's cosine
and the embedding channel's (where that list has it); `gap:W:P` weighs the list W x its gap
confidence ** P (fusion.gap_weights).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from bench.common.rescoring import load_runs, ranking_engine, table, fold_of
from mathindex.embed.models import reference_path, release_root
from mathindex.informal.rules import without_context
from mathindex.search.kinds import query_kind
from mathindex.search.weights import weights_for
from mathindex.store.integrity import read_manifest

STYLES = ("q1a_lean", "q1b_latex", "q1c_natural", "q2_slogan", "q3_nickname")
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def candidates(engine, runs, depth: int) -> dict[str, list[str]]:
    out = {}
    for q, results, resolved in runs:
        if query_kind(q.text) == "words":
            out[q.id] = [h.name for h in engine.rank(q.text, results, resolved, depth, weights_for("words")).hits]
    return out


def informal_texts(release: Path, names: set[str]) -> dict[str, str]:
    t = (pl.scan_parquet(release / "embedding_texts.parquet").filter(pl.col("facet") == "informal")
         .filter(pl.col("name").is_in(list(names))).select("name", "text").collect())
    return {n: without_context(x) for n, x in zip(t["name"].to_list(), t["text"].to_list())}


def embed(release: Path, texts: list[str]) -> np.ndarray:
    from mathindex.embed import SentenceTransformerEmbedder

    model = reference_path(read_manifest(release).vector_index.model, release_root(release))
    emb = SentenceTransformerEmbedder(str(model), progress=False)
    try:
        return emb.encode(texts)
    finally:
        emb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("suite", type=Path)
    ap.add_argument("runs", type=Path)
    ap.add_argument("vecs", type=Path)
    ap.add_argument("--depth", type=int, default=30, help="candidates embedded (the vectors kept)")
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--variant", action="append", default=[], help="prf:K:B, long:MIN_WORDS:WEIGHT:DEPTH, combine:max|mean, gap:W:P")
    ap.add_argument("--rerank", type=int, default=None, help="candidates re-ranked (at most --depth; default --depth)")
    args = ap.parse_args()
    engine = ranking_engine(args.release)
    runs = load_runs(args.runs, args.suite)
    if any("informal" in res for _, res, _ in runs):  # the engine's own lists
        lists = {q.id: res.pop("informal") for q, res, _ in runs if "informal" in res}
        return report(engine, runs, lists, args.metric)
    cands = candidates(engine, runs, args.depth)
    if args.vecs.exists():
        store = pickle.loads(args.vecs.read_bytes())
    else:
        names = {n for c in cands.values() for n in c}
        texts = informal_texts(args.release, names)
        queries = {q.id: q.text for q, _, _ in runs if q.id in cands}
        t0 = time.perf_counter()
        keys = sorted(texts)
        vecs = embed(args.release, [texts[n] for n in keys] + [queries[i] for i in sorted(queries)])
        print(f"embedded {len(keys)} informal texts and {len(queries)} queries in {time.perf_counter() - t0:.0f} s")
        store = {"names": {n: vecs[i] for i, n in enumerate(keys)},
                 "queries": {qid: vecs[len(keys) + i] for i, qid in enumerate(sorted(queries))}}
        args.vecs.write_bytes(pickle.dumps(store))
    lists = informal_lists(store, cands, args.rerank or args.depth)
    report(engine, runs, lists, args.metric)
    for v in args.variant:
        kind, *p = v.split(":")
        weight_of, extra = {}, {}
        if kind == "prf":
            lists_v = informal_lists(store, cands, args.rerank or args.depth, int(p[0]), float(p[1]))
        elif kind == "long":
            long = {q.id for q, _, _ in runs if len(q.text.split()) >= int(p[0])}
            deep = informal_lists(store, cands, int(p[2]))
            lists_v = {qid: deep[qid] if qid in long else lst for qid, lst in lists.items()}
            weight_of = {qid: float(p[1]) for qid in long}
        elif kind == "combine":  # the rendering's cosine with the embedding channel's, where it has the node
            emb = {q.id: dict(res.get("embedding", [])) for q, res, _ in runs}
            pick = (lambda s, e: max(s, e)) if p[0] == "max" else (lambda s, e: (s + e) / 2)
            lists_v = {qid: sorted(((n, pick(s, emb[qid][n]) if n in emb[qid] else s) for n, s in lst),
                                   key=lambda x: (-x[1], x[0])) for qid, lst in lists.items()}
        elif kind == "gap":  # weight W times the list's gap confidence ** P (fusion.gap_weights)
            lists_v, extra = lists, {"informal": float(p[0]), "gap:informal": float(p[1])}
        else:
            sys.exit(f"error: unknown variant {v!r} (prf:K:B, long:MIN_WORDS:WEIGHT:DEPTH, combine:max|mean or gap:W:P)")
        aug = [(q, {**res, "informal": lists_v[q.id]} if q.id in lists_v else res, rsv) for q, res, rsv in runs]
        r = table(engine, aug, lambda q: {**weights_for(query_kind(q.text)), "informal": weight_of.get(q.id, 1.0), **extra},
                  args.metric)
        print(f"variant {v}: all {r['all']:6.2f} fair {r['fair']:6.2f} " + " ".join(f"{s} {r[s]:6.2f}" for s in STYLES)
              + f" fold0 {r['fold0']:6.2f} fold1 {r['fold1']:6.2f}")


def informal_lists(store, cands, depth: int, prf_k: int = 0, prf_b: float = 0.0) -> dict[str, list]:
    """Each query's first `depth` candidates by cosine to its vector (with Rocchio feedback from the
    first `prf_k` candidates' renderings when prf_k > 0)."""
    lists = {}
    for qid, names in cands.items():
        have = [n for n in names[:depth] if n in store["names"]]
        if not have:
            continue
        m = np.stack([store["names"][n] for n in have])
        qv = store["queries"][qid]
        if prf_k:
            qv = qv + prf_b * m[:prf_k].mean(axis=0)
            qv = qv / np.linalg.norm(qv)
        lists[qid] = sorted(zip(have, (m @ qv).tolist()), key=lambda x: (-x[1], x[0]))
    return lists


def report(engine, runs, lists, metric: str = "ndcg@10") -> None:
    """The gold's rank in the informal lists (natural), the grid of weights, two-fold CV."""
    gold_rank = [next((i for i, (n, _) in enumerate(lists.get(q.id, []), 1) if n in q.gold), None)
                 for q, _, _ in runs if q.style == "q1c_natural"]
    buckets = {"1": 0, "2-10": 0, ">10": 0, "none": 0}
    for r in gold_rank:
        buckets["none" if r is None else "1" if r == 1 else "2-10" if r <= 10 else ">10"] += 1
    print("gold rank in the informal list (natural):", buckets)
    grid = {}
    for w in WEIGHTS:
        aug = [(q, {**res, "informal": lists[q.id]} if w and q.id in lists else res, rsv) for q, res, rsv in runs]
        grid[w] = table(engine, aug, lambda q, w=w: dict(weights_for(query_kind(q.text)), informal=w), metric)
        r = grid[w]
        print(f"informal weight {w:4.2f}: all {r['all']:6.2f} fair {r['fair']:6.2f} " + " ".join(f"{s} {r[s]:6.2f}" for s in STYLES))
    cv = 0.0
    for f in (0, 1):
        train, test = f"fold{1 - f}", f"fold{f}"
        w = max(WEIGHTS, key=lambda w: (grid[w][train], -w))
        n = sum(1 for q, _, _ in runs if fold_of(q.id) == f)
        cv += grid[w][test] * n
        print(f"{test}: chosen on {train}: weight {w}; {grid[w][test]:.2f} (without {grid[0.0][test]:.2f}); "
              f"natural {grid[w]['q1c_natural/' + test]:.2f} (without {grid[0.0]['q1c_natural/' + test]:.2f})")
    print(f"two-fold CV ({metric}): {cv / len(runs):.2f} against {grid[0.0]['all']:.2f}")


if __name__ == "__main__":
    main()
