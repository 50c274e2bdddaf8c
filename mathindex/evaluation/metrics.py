"""Retrieval metrics over ranked lists of hit names, binary relevance, in points (0-100).

Ranked lists are deduplicated by name before scoring (first occurrence wins), so a node that
several channels or facets return counts once; ties were already broken by the ranker. Nodes that
state one fact (a release's same_as groups) are one answer (`same_fact`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def dedupe(ranked: Sequence[str]) -> list[str]:
    """Names in order of first appearance."""
    seen: set[str] = set()
    return [n for n in ranked if not (n in seen or seen.add(n))]


def same_fact(ranked: Sequence[str], gold: set[str], key: Callable[[str], str]) -> tuple[list[str], set[str]]:
    """(ranked, gold) with names compared by fact (`key`: a name -> the key of its same_as group,
    itself when it has none): the gold names of one group count as one, the first of them by name,
    and any hit of that group is named so, so a folded hit counts at its rank whichever member names
    it, and an unfolded list counts the group once, at its first member."""
    named: dict[str, str] = {}
    for g in sorted(gold):
        named.setdefault(key(g), g)
    return [named.get(key(n), n) for n in ranked], set(named.values())


def first_gold_rank(ranked: Sequence[str], gold: set[str], k: int) -> int | None:
    """1-based rank of the first gold name within the top k, or None."""
    for i, name in enumerate(dedupe(ranked)[:k], start=1):
        if name in gold:
            return i
    return None


def ndcg_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    top = dedupe(ranked)[:k]
    dcg = sum(1.0 / math.log2(i + 2) for i, n in enumerate(top) if n in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return 100.0 * dcg / ideal if ideal else 0.0


def recall_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    top = set(dedupe(ranked)[:k])
    return 100.0 * len(top & gold) / len(gold) if gold else 0.0


def mrr_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    rank = first_gold_rank(ranked, gold, k)
    return 100.0 / rank if rank else 0.0


def precision_at_k(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Share of the top k (k, not the number returned) that is gold: the loogle suite's headline."""
    return 100.0 * len(set(dedupe(ranked)[:k]) & gold) / k if k else 0.0


METRICS = {"ndcg": ndcg_at_k, "recall": recall_at_k, "mrr": mrr_at_k, "precision": precision_at_k}


def metric_value(name: str, ranked: Sequence[str], gold: set[str]) -> float:
    """A metric by its name, e.g. `ndcg@10`; unknown names raise ValueError."""
    base, _, k = name.partition("@")
    if base not in METRICS or not k.isdigit():
        raise ValueError(f"unknown metric {name!r} (expected ndcg@K, recall@K, mrr@K or precision@K)")
    return METRICS[base](ranked, gold, int(k))


def mean_metrics(runs: Sequence[tuple[Sequence[str], set[str]]], names: Sequence[str]) -> dict[str, float]:
    """Mean of each named metric over (ranked, gold) pairs, rounded to 2 decimals."""
    if not runs:
        raise ValueError("no queries to score")
    return {m: round(sum(metric_value(m, r, g) for r, g in runs) / len(runs), 2) for m in names}
