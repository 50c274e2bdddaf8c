"""Retrieval metrics on hand-computed two- and three-document cases."""

import math

import pytest

from mathindex.evaluation.bench import headline, run_suite
from mathindex.evaluation.metrics import dedupe, first_gold_rank, mean_metrics, metric_value
from mathindex.evaluation.suites import Query, Suite


def test_ndcg_single_gold_at_rank_two():
    assert metric_value("ndcg@10", ["a", "g", "b"], {"g"}) == pytest.approx(100 / math.log2(3))


def test_ndcg_two_golds_one_found_at_rank_one():
    # DCG = 1, IDCG = 1 + 1/log2(3)
    assert metric_value("ndcg@10", ["g1", "x"], {"g1", "g2"}) == pytest.approx(100 / (1 + 1 / math.log2(3)))


def test_recall_mrr_and_cutoff():
    ranked = ["x", "y", "g"]
    assert metric_value("recall@2", ranked, {"g"}) == 0.0
    assert metric_value("recall@3", ranked, {"g"}) == 100.0
    assert metric_value("mrr@10", ranked, {"g"}) == pytest.approx(100 / 3)
    assert first_gold_rank(ranked, {"g"}, 2) is None


def test_duplicates_count_once():
    assert dedupe(["a", "a", "g"]) == ["a", "g"]
    assert metric_value("mrr@10", ["a", "a", "g"], {"g"}) == 50.0


def test_unknown_metric_and_empty_runs_raise():
    with pytest.raises(ValueError):
        metric_value("map@10", ["a"], {"a"})
    with pytest.raises(ValueError):
        mean_metrics([], ["ndcg@10"])


def test_run_suite_summary_by_style_and_fair_subset():
    suite = Suite(
        name="t",
        k=10,
        headline=("recall@10", "mrr@10"),
        queries=(
            Query("1", "natural", "q1", frozenset({"A"})),
            Query("2", "latex", "q2", frozenset({"B"}), fair=False),
        ),
    )
    answers = {"q1": ["A", "B"], "q2": ["A", "C"]}
    summary, rows = run_suite(lambda q, k: answers[q], suite)
    assert summary["metrics"] == {"recall@10": 50.0, "mrr@10": 50.0}
    assert summary["by_style"]["natural"]["mrr@10"] == 100.0
    assert summary["fair"] == {"queries": 1, "recall@10": 100.0, "mrr@10": 100.0}
    assert [r["rank"] for r in rows] == [1, None]
    assert headline({"t": summary}) == {"t/recall@10": 50.0, "t/mrr@10": 50.0}


def test_precision_at_k_counts_gold_in_the_top_k_over_k():
    from mathindex.evaluation.metrics import metric_value

    assert metric_value("precision@4", ["a", "x", "b", "y"], {"a", "b", "z"}) == 50.0
    assert metric_value("precision@10", ["a"], {"a"}) == 10.0
