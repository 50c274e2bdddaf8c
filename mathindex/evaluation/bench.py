"""Running a query set through a search function and scoring it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from mathindex.evaluation.metrics import first_gold_rank, mean_metrics
from mathindex.evaluation.suites import Suite

SearchFn = Callable[[str, int], Sequence[str]]  # query, k -> ranked hit names


def run_suite(search: SearchFn, suite: Suite) -> tuple[dict, list[dict]]:
    """Scores every query; returns (summary, bench_results rows). The summary holds the headline
    metrics over all queries, per style, and over the `fair` subset when it differs."""
    runs, rows = [], []
    by_style: dict[str, list] = defaultdict(list)
    fair = []
    for q in suite.queries:
        ranked = list(search(q.text, suite.k))
        gold = set(q.gold)
        runs.append((ranked, gold))
        by_style[q.style].append((ranked, gold))
        if q.fair:
            fair.append((ranked, gold))
        rows.append(
            {
                "suite": suite.name,
                "query_id": q.id,
                "style": q.style,
                "query": q.text,
                "gold": sorted(gold),
                "rank": first_gold_rank(ranked, gold, suite.k),
                "top": ranked[: suite.k],
            }
        )
    summary = {
        "queries": len(runs),
        "metrics": mean_metrics(runs, suite.headline),
        "by_style": {s: {"queries": len(r), **mean_metrics(r, suite.headline)} for s, r in sorted(by_style.items())},
    }
    if len(fair) != len(runs) and fair:
        summary["fair"] = {"queries": len(fair), **mean_metrics(fair, suite.headline)}
    return summary, rows


def headline(suites: dict[str, dict]) -> dict[str, float]:
    """Flat `suite/metric` -> points over every suite's headline metrics (what the gate reads)."""
    return {f"{name}/{m}": v for name, s in sorted(suites.items()) for m, v in s["metrics"].items()}
