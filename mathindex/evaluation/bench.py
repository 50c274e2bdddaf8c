"""Running a query set through a search function and scoring it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from mathindex.evaluation.metrics import first_gold_rank, mean_metrics, same_fact
from mathindex.evaluation.suites import Suite

SearchFn = Callable[[str, int], Sequence[str]]  # query, k -> ranked hit names


def run_suite(search: SearchFn, suite: Suite, same: Callable[[str], str] | None = None) -> tuple[dict, list[dict]]:
    """Scores every query; returns (summary, bench_results rows). The summary holds the headline
    metrics over all queries, per style, and over the `fair` subset when it differs. `same`: a name
    -> the key of its same_as group (`SameAsGroups.key`): names are then compared by fact
    (`metrics.same_fact`), and the rows hold the names as compared, so they score again alike."""
    scored, rows = [], []
    for q in suite.queries:
        ranked = list(search(q.text, suite.k))
        gold = set(q.gold)
        if same is not None:
            ranked, gold = same_fact(ranked, gold, same)
        scored.append((q.style, q.fair, ranked, gold))
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
    return summarise(scored, suite.headline), rows


def summarise(scored: Sequence[tuple[str, bool, Sequence[str], set[str]]], names: Sequence[str]) -> dict:
    """A suite's summary from (style, fair, ranked, gold) per query: the metrics `names` over all
    queries, per style, and over the fair subset when it differs."""
    runs = [(ranked, gold) for _, _, ranked, gold in scored]
    by_style: dict[str, list] = defaultdict(list)
    for style, _, ranked, gold in scored:
        by_style[style].append((ranked, gold))
    fair = [(ranked, gold) for _, is_fair, ranked, gold in scored if is_fair]
    summary = {
        "queries": len(runs),
        "metrics": mean_metrics(runs, names),
        "by_style": {s: {"queries": len(r), **mean_metrics(r, names)} for s, r in sorted(by_style.items())},
    }
    if len(fair) != len(runs) and fair:
        summary["fair"] = {"queries": len(fair), **mean_metrics(fair, names)}
    return summary


def summarise_results(rows: Sequence[dict], suite: Suite) -> dict:
    """The summary `run_suite` gave, again from a release's `bench_results` rows of `suite` (their
    top k, which is all the search was asked for, and gold; the fair flag from the suite file)."""
    fair = {q.id: q.fair for q in suite.queries}
    return summarise([(r["style"], fair.get(r["query_id"], True), r["top"], set(r["gold"])) for r in rows
                      if r["suite"] == suite.name], suite.headline)  # fmt: skip


def headline(suites: dict[str, dict]) -> dict[str, float]:
    """Flat `suite/metric` -> points over every suite's headline metrics (what the gate reads)."""
    return {f"{name}/{m}": v for name, s in sorted(suites.items()) for m, v in s["metrics"].items()}
