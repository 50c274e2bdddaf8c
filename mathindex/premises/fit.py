"""Fitting the ranker's weights and scoring rankings: candidates are computed once per query, so a
weight setting costs one matrix product per query.

`fit_weights` is coordinate ascent (as RankLib's) on mean recall@10 of the `tune` part's queries,
with recall@32 breaking ties: each weight in turn takes the best value of WEIGHT_GRID, the
others held, for ROUNDS rounds or until nothing moves. Deterministic for given queries.

`fit_model` then fits the tree model (premises.boosted) on more tune queries (MODEL_QUERIES): each
query's RERANK best by the fitted linear score, labelled by its gold."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mathindex.evaluation.metrics import mean_metrics
from mathindex.premises.ranker import (FEATURES, MODEL_FEATURES, Candidates, PremiseRanker, model_inputs, ordered, rank_weights,
                                       weight_vector)
from mathindex.premises.boosted import RERANK, TreeModel, fit_trees

WEIGHT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0)
ROUNDS = 4
FIT_QUERIES = 600  # tune queries sampled (seeded) for the fit (1,500 cost a whole-Mathlib release 3x the time for +0 on test)
METRICS = ("recall@10", "recall@32", "mrr@32")
# tune queries the tree model is fitted on (a seeded sample; whole Mathlib has 4,404). Held-out R@10
# by their number (bench/experiments/premises_trees.py, issue 12's tenth session): 600: 37.70, 2,400: 39.26,
# all 4,404: 39.05 (the linear ranker 38.35); collecting a query's candidates costs 50-180 ms on
# the loaded machine, so the stage stops at 2,400
MODEL_QUERIES = 2400
MIN_MODEL_QUERIES = 100  # fewer: no tree model, the linear ranker alone


class Named(Protocol):
    """What ranking and scoring runs need of the ranker that collected them: its rows' names (a
    PremiseRanker, or premises.shards.RowNames in a reduce that never opens one)."""

    names: Sequence[str]


@dataclass
class Run:
    """One query's candidates and gold, ready to be ranked under any weights."""

    candidates: Candidates
    gold: set[str]


def collect(ranker: PremiseRanker, queries: list[dict]) -> list[Run]:
    """Candidates of suite queries (`query`, `context`, `gold`, `theorem` left out of its own list;
    in its `file` above its `line`, when the suite says: what a proof there can see)."""
    return [Run(ranker.candidates(q["query"], q.get("context", ""), frozenset([q["theorem"]]), q.get("file"), q.get("line")),
                set(q["gold"])) for q in queries]


def ranked_names(ranker: Named, run: Run, weights: dict[str, float], k: int = 32, fallback: bool = True,
                 vectors: dict[str | None, np.ndarray] | None = None, model: TreeModel | None = None) -> list[str]:
    """The run's top k under `weights` (`fallback`: a goal without known constants under its
    fallback channel, as `PremiseRanker.rank` does; a baseline keeps its own channel). `vectors`:
    the weight vectors by fallback channel (None: the weights themselves), made once per setting."""
    c = run.candidates
    key = c.fallback if fallback else None
    w = vectors[key] if vectors is not None and key in vectors else rank_weights(c, weights) if fallback else weights
    order, _ = ordered(c, w, k, model)
    return [ranker.names[int(d)] for d in c.docs[order]]


def score(ranker: Named, runs: list[Run], weights: dict[str, float], fallback: bool = True,
          model: TreeModel | None = None) -> dict[str, float]:
    """Mean recall@10, recall@32 and mrr@32 (points) of the runs ranked under `weights` (and the
    tree model, when given)."""
    vectors = {None: weight_vector(weights)} | {f: weight_vector({f: 1.0}) for f in FEATURES}
    return mean_metrics([(ranked_names(ranker, r, weights, fallback=fallback, vectors=vectors, model=model), r.gold)
                         for r in runs], METRICS)


def fit_model(ranker: Named, runs: list[Run], weights: dict[str, float]) -> tuple[TreeModel | None, dict]:
    """(the tree model, how it was fitted) on the runs' RERANK best by the linear score under
    `weights`; (None, why) with fewer than MIN_MODEL_QUERIES runs or no gold among the rows."""
    w = weight_vector(weights)
    xs, ys = [], []
    for r in runs:
        c = r.candidates
        if c.extra is None:  # a fallback goal: ranked by its channel, never by the trees
            continue
        top, linear = ordered(c, w, RERANK)
        xs.append(model_inputs(c, linear, top))
        ys.append(np.isin(np.asarray([ranker.names[int(d)] for d in c.docs[top]], dtype=object),
                          np.asarray(sorted(r.gold), dtype=object)))
    positives = int(sum(y.sum() for y in ys))
    how = {"queries": len(xs), "rows": int(sum(y.size for y in ys)), "positives": positives, "rerank": RERANK}
    if len(xs) < MIN_MODEL_QUERIES or positives == 0:
        return None, {**how, "fitted": False, "reason": f"{len(xs)} tune queries, {positives} gold rows (fewer than {MIN_MODEL_QUERIES} queries or none)"}
    model = fit_trees(np.vstack(xs), np.concatenate(ys).astype(np.int8), list(MODEL_FEATURES))
    return model, {**how, "fitted": True, "trees": int(model.feature.shape[0])}


def sample_queries(queries: list[dict], n: int, seed: int) -> list[dict]:
    if len(queries) <= n:
        return list(queries)
    return sorted(random.Random(seed).sample(queries, n), key=lambda q: q["id"])


def fit_weights(ranker: Named, runs: list[Run], start: dict[str, float]) -> tuple[dict[str, float], dict]:
    """(weights, how: objective before and after, rounds). Only features some run has are fitted."""
    present = [f for j, f in enumerate(FEATURES) if any(r.candidates.features[:, j].any() for r in runs)]
    w = {f: float(start.get(f, 0.0)) for f in FEATURES}

    def objective(weights):
        m = score(ranker, runs, weights)
        return (m["recall@10"], m["recall@32"])

    best = objective(w)
    before, rounds = best, 0
    for rounds in range(1, ROUNDS + 1):
        moved = False
        for f in present:
            for v in WEIGHT_GRID:
                if v == w[f]:
                    continue
                trial = {**w, f: v}
                got = objective(trial)
                if got > best:
                    best, w, moved = got, trial, True
        if not moved:
            break
    how = {"objective": "recall@10 (recall@32 breaks ties)", "queries": len(runs), "rounds": rounds,
           "before": {"recall@10": before[0], "recall@32": before[1]}, "after": {"recall@10": best[0], "recall@32": best[1]},
           "fitted_features": present}
    return w, how
