"""A cross-encoder re-ranking the fused top candidates: trained on the mined pairs, adopted only if
two-fold CV on a suite says so.

`train` fine-tunes a cross-encoder (a sequence-pair classifier with one logit) from the bundled
MiniLM-L6 (22.7 M parameters, or --base) on the pairs `mathindex train-embedder` mines from the
release (the same leak guard: no suite query or target), with the embedder recipe's mix of pair
kinds. Each anchor is scored against its positive, its hard negative (same module) and the next
anchor's positive; the loss is the softmax cross-entropy of the positive among the three.
Checkpoints every 50 steps; run it again to resume.

`lists` writes each suite query's fused top DEPTH as `mathindex bench` ranks and counts them
(same-fact folding included). `eval` scores each (query, candidate statement) pair with the trained
model and re-ranks the first R candidates by 1/(60 + fused rank) + w/(60 + cross-encoder rank);
(R, w) is chosen per kind of query (formula-like or words) on one fold of targets and scored on
the other, and the other way round. Printed: nDCG@10 / R@10 overall, fair and per style, before and
after, with the in-sample best beside the CV figure. The scores are kept in DIR/scores.json.

    python -m bench.experiments.cross_encoder train RELEASE --suite SUITE --out DIR [--steps 300 --batch 16]
    python -m bench.experiments.cross_encoder lists RELEASE --suite SUITE --out DIR [--depth 50]
    python -m bench.experiments.cross_encoder eval RELEASE --suite SUITE --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl

from bench.common.rescoring import fold_of
from mathindex.embed.base import default_model_path
from mathindex.embed.pairs import mine_pairs, read_release_tables
from mathindex.embed.train import Recipe, schedule
from mathindex.evaluation.metrics import metric_value
from mathindex.evaluation.suites import load_suite, project_suite_queries
from mathindex.search.kinds import query_kind

MIX = {"docstring": 0.5, "description": 0.1, "module_doc": 0.1, "informal": 0.25, "label": 0.13, "slogan": 0.02}
DEPTHS = (10, 20, 30, 50)
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)
K = 60


def train(args: argparse.Namespace) -> None:
    """Fine-tunes the cross-encoder; resumable from DIR/checkpoint."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)
    queries, targets, _ = project_suite_queries(args.release, [args.suite])
    pairs, info = mine_pairs(read_release_tables(args.release), queries, targets, 0)
    plan = schedule(pairs, Recipe(steps=args.steps, batch_size=args.batch, mix=MIX))
    anchors, positives = pairs.column("anchor").to_pylist(), pairs.column("positive").to_pylist()
    negatives = pairs.column("negative").to_pylist()
    print(f"pairs: {info['pairs']}; dropped by the leak guard: {info['dropped']}", flush=True)
    ckpt, final = args.out / "checkpoint", args.out / "model"
    if final.is_dir():
        print(f"trained already: {final}")
        return
    base = ckpt if ckpt.is_dir() else Path(args.base or default_model_path())
    tok = AutoTokenizer.from_pretrained(str(base))
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1)
    model.base_model.embeddings.word_embeddings.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr)
    sched = get_linear_schedule_with_warmup(opt, int(0.1 * args.steps), args.steps)
    start, t0 = 0, time.perf_counter()
    if (ckpt / "state.pt").is_file():
        state = torch.load(ckpt / "state.pt", weights_only=False)
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start = state["step"]
        print(f"resuming at step {start}", flush=True)
    model.train()
    for step in range(start, args.steps):
        rows = plan[step]
        a = [anchors[i] for i in rows]
        cands = [positives[i] for i in rows], [negatives[i] or positives[rows[(j + 2) % len(rows)]] for j, i in enumerate(rows)], \
            [positives[rows[(j + 1) % len(rows)]] for j in range(len(rows))]
        enc = tok([x for x in a for _ in range(3)], [c[j] for j in range(len(rows)) for c in cands],
                  truncation="longest_first", max_length=args.max_length, padding=True, return_tensors="pt")
        logits = model(**enc).logits.view(len(rows), 3)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(rows), dtype=torch.long))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        if (step + 1) % 10 == 0:
            print(f"step {step + 1}/{args.steps} loss {float(loss):.4f} {(time.perf_counter() - t0) / (step + 1 - start):.2f} s/step", flush=True)
        if (step + 1) % 50 == 0 and step + 1 < args.steps:
            model.save_pretrained(ckpt)
            tok.save_pretrained(ckpt)
            torch.save({"opt": opt.state_dict(), "sched": sched.state_dict(), "step": step + 1}, ckpt / "state.pt")
    tmp = args.out / "model.tmp"
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    os.replace(tmp, final)
    print(f"model: {final} ({time.perf_counter() - t0:.0f} s this run)")


def lists(args: argparse.Namespace) -> None:
    """The fused top DEPTH of every suite query as `mathindex bench` ranks them (DIR/lists.jsonl),
    with each name's same-fact key (a folded hit counts by fact, as the bench counts it)."""
    from mathindex.search.engine import SearchEngine

    suite = load_suite(args.suite)
    engine = SearchEngine(args.release)
    with open(args.out / "lists.jsonl", "w") as f:
        for q in suite.queries:
            names = list(engine.names(q.text, args.depth))
            f.write(json.dumps({"id": q.id, "names": names, "keys": [engine.same_as.key(n) for n in names],
                                "gold": sorted(engine.same_as.key(g) for g in q.gold)}) + "\n")
    print(f"{len(suite.queries)} lists -> {args.out / 'lists.jsonl'}")


def _statement_texts(release: Path, names: set[str]) -> dict[str, str]:
    t = (pl.scan_parquet(release / "embedding_texts.parquet")
         .filter(pl.col("facet").is_in(["name_signature", "latex_body"]) & pl.col("name").is_in(sorted(names)))
         .select("name", "text").collect().unique("name", keep="first"))
    return dict(zip(t["name"].to_list(), t["text"].to_list()))


def _scores(args: argparse.Namespace, suite, runs: dict[str, list[str]]) -> dict[str, list[float]]:
    """Cross-encoder logits of each query against its list (cached in DIR/scores.json)."""
    path = args.out / "scores.json"
    if path.is_file():
        return json.loads(path.read_text())
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(os.cpu_count() or 1)
    tok = AutoTokenizer.from_pretrained(str(args.out / "model"))
    model = AutoModelForSequenceClassification.from_pretrained(str(args.out / "model")).eval()
    texts = _statement_texts(args.release, {n for names in runs.values() for n in names})
    out, t0, n = {}, time.perf_counter(), 0
    with torch.inference_mode():
        for q in suite.queries:
            names = runs.get(q.id, [])
            cand = [texts.get(x, x) for x in names]
            logits: list[float] = []
            for i in range(0, len(cand), 32):
                enc = tok([q.text] * len(cand[i:i + 32]), cand[i:i + 32], truncation="longest_first",
                          max_length=args.max_length, padding=True, return_tensors="pt")
                logits += model(**enc).logits.view(-1).tolist()
            out[q.id] = logits
            n += len(cand)
    print(f"scored {n} pairs in {time.perf_counter() - t0:.0f} s ({1000 * (time.perf_counter() - t0) / max(n, 1):.1f} ms a pair)")
    path.write_text(json.dumps(out))
    return out


def _rerank(names: list[str], logits: list[float], depth: int, w: float) -> list[str]:
    head = names[:depth]
    if w == 0 or not head:
        return names
    order = np.argsort(-np.asarray(logits[:len(head)]), kind="stable")
    ce_rank = {head[j]: r for r, j in enumerate(order)}
    fused = sorted(head, key=lambda x: -(1 / (K + head.index(x)) + w / (K + ce_rank[x])))
    return fused + names[depth:]


def evaluate(args: argparse.Namespace) -> None:
    """Two-fold CV of (depth, weight) per kind of query; per-style figures before and after."""
    suite = load_suite(args.suite)
    rows = [json.loads(x) for x in (args.out / "lists.jsonl").read_text().splitlines()]
    runs = {r["id"]: r["names"] for r in rows}
    key = {n: k for r in rows for n, k in zip(r["names"], r["keys"])}
    gold = {r["id"]: set(r["gold"]) for r in rows}
    logits = _scores(args, suite, runs)
    queries = [q for q in suite.queries if q.id in runs]

    def value(q, choice: dict[str, tuple[int, float]], metric: str) -> float:
        ranked = _rerank(runs[q.id], logits[q.id], *choice[query_kind(q.text)])
        folded = list(dict.fromkeys(key[n] for n in ranked))  # metrics.same_fact: one entry per fact
        return metric_value(metric, folded, gold[q.id])

    def score(qs, choice: dict[str, tuple[int, float]], metric: str) -> float:
        return sum(value(q, choice, metric) for q in qs) / max(len(qs), 1)

    grid = [(d, w) for d in DEPTHS for w in WEIGHTS]
    kinds = sorted({query_kind(q.text) for q in queries})

    def best(qs) -> dict[str, tuple[int, float]]:
        return {k: max(grid, key=lambda c: (score([q for q in qs if query_kind(q.text) == k], {k: c}, "ndcg@10"), -c[1]))
                for k in kinds}

    best_in = best(queries)
    chosen = {fold: best([q for q in queries if fold_of(q.id) != fold]) for fold in (0, 1)}
    base = {k: (10, 0.0) for k in kinds}
    groups = defaultdict(list)
    for q in queries:
        for g in ("all", q.style) + (("fair",) if q.fair else ()):
            groups[g].append(q)
    print(f"chosen (depth, weight) per kind: fold 0 {chosen[0]}, fold 1 {chosen[1]}, in-sample {best_in}")
    print(f"{'group':14} {'n':>4} {'before nDCG/R@10':>18} {'CV nDCG/R@10':>16} {'in-sample nDCG':>15}")
    for g, qs in groups.items():
        cv = {m: sum(value(q, chosen[fold_of(q.id)], m) for q in qs) / len(qs) for m in ("ndcg@10", "recall@10")}
        print(f"{g:14} {len(qs):>4} {score(qs, base, 'ndcg@10'):8.2f} / {score(qs, base, 'recall@10'):6.2f}"
              f" {cv['ndcg@10']:7.2f} / {cv['recall@10']:6.2f} {score(qs, best_in, 'ndcg@10'):10.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("train", "lists", "eval"))
    ap.add_argument("release", type=Path)
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base", help="the model to start from (default: the bundled MiniLM-L6)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--depth", type=int, default=50)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    {"train": train, "lists": lists, "eval": evaluate}[args.command](args)


if __name__ == "__main__":
    main()
