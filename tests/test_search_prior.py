"""The reference prior: signals from the dependency graph, per-corpus normalisation, re-ranking."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from mathindex.search.prior import LOG_SPAN, apply_prior, normalised_prior, reference_signals


def _deps(rows):
    return pa.table({"full_name": [r[0] for r in rows], "target": [r[1] for r in rows],
                     "resolved": [r[2] for r in rows]})


def test_in_degree_counts_distinct_resolved_referrers_without_self_loops():
    deps = _deps([("a", "core", True), ("b", "core", True), ("b", "core", True),  # b twice: one referrer
                  ("core", "core", True), ("c", "core", False), ("c", "side", True)])
    degree, rank = reference_signals(["core", "side", "a", "lonely"], deps)
    assert degree == [2, 1, 0, 0]
    assert rank[0] > rank[1] > rank[2] and rank[3] == 0.0  # a node outside the graph has no PageRank


def test_no_dependencies_gives_zero_signals():
    assert reference_signals(["x", "y"], None) == ([0, 0], [0.0, 0.0])


def test_prior_has_an_absolute_scale_and_a_corpus_without_graph_gets_the_median():
    values = [0, 1, 3, 7, 0, 0]
    corpora = ["lean", "lean", "lean", "lean", "tex", "tex"]
    prior = normalised_prior("in_degree", values, corpora)
    assert prior[:4] == pytest.approx([0.0, math.log(2) / LOG_SPAN, math.log(4) / LOG_SPAN, math.log(8) / LOG_SPAN])
    median = sorted(prior[:4])[2]
    assert prior[4] == prior[5] == median  # neither favoured nor penalised
    assert normalised_prior("in_degree", [10**6], ["big"]) == [1.0]  # capped


def test_pagerank_prior_is_log_scaled_from_the_smallest_positive_value():
    prior = normalised_prior("pagerank", [0.0, 1e-6, 1e-6 * math.e**5, 1e-6 * math.e**20], ["l"] * 4)
    assert prior == pytest.approx([0.0, 0.0, 5 / LOG_SPAN, 1.0])


def test_unknown_signal_is_refused():
    with pytest.raises(ValueError, match="unknown prior signal"):
        normalised_prior("popularity", [1], ["l"])


def test_apply_prior_lifts_a_well_used_node_and_zero_weight_keeps_order():
    scored = [("obscure", 0.030), ("famous", 0.025), ("other", 0.020)]
    prior = {"famous": 1.0, "obscure": 0.0, "other": 0.2}
    assert [n for n, _ in apply_prior(scored, prior, 1.0)] == ["famous", "obscure", "other"]
    assert apply_prior(scored, prior, 0.0) == scored
