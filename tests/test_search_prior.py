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


class _CountingPrior(dict):
    """A prior that counts its look-ups."""

    reads = 0

    def get(self, key, default=None):
        self.reads += 1
        return super().get(key, default)


def _ranking_engine(prior: dict, known=frozenset(), fields=frozenset()):
    from mathindex.search.engine import SearchEngine

    engine = SearchEngine.__new__(SearchEngine)  # ranking alone, no channels
    engine.known, engine.fields, engine.prior, engine.unavailable = known, fields, prior, {}
    return engine


def _everything_ranked(results, prior, weights, resolved, k, known):
    """The ranking as the engine defines it, over every name: fuse, the prior on each rounded
    score, the parent channel over the head, the k best by score (ties by name), resolved first."""
    from mathindex.search.fusion import fused_scores
    from mathindex.search.parents import parent_hits
    from mathindex.search.prior import with_prior

    total, ranks = fused_scores(results, weights)
    scored = dict(with_prior([(n, round(s, 8)) for n, s in total.items()], prior, weights["prior"]))
    head = sorted(scored.items(), key=lambda x: (-x[1], x[0]))[: weights["parent_depth"]]
    for rank, (parent, score) in enumerate(parent_hits(head, known, frozenset(), 1.0) if weights["parent"] else [], 1):
        scored[parent] = scored.get(parent, 0.0) + weights["parent"] * score
        ranks.setdefault(parent, {})["parent"] = rank
    order = [n for n, _ in sorted(scored.items(), key=lambda x: (-x[1], x[0])) if n not in resolved]
    return [(n, round(scored.get(n, 0.0), 8), {**({"identifier": resolved.index(n) + 1} if n in resolved else {}),
             **ranks.get(n, {})}) for n in (resolved + order)[:k]]


def test_the_prior_is_read_for_the_head_only_and_the_ranking_is_that_of_every_name():
    """`rank` applies the prior to the names that can still reach the k best (by fused score down,
    until a score times the largest prior factor cannot); the hits are those of scoring every name,
    with the parent channel, resolved names deep in the lists and any k."""
    import random

    rng = random.Random(5)
    names = [f"N{i // 7}.m{i}" for i in range(400)] + [f"N{i}" for i in range(57)]
    prior = _CountingPrior({n: rng.random() ** 3 for n in names})
    known = frozenset(n for n in names[:-1] if "." not in n)  # N56 is no declaration: no parent channel
    engine = _ranking_engine(prior, known=known)
    reads = []
    for trial in range(300):
        results = {ch: [(n, rng.uniform(0.1, 10.0)) for n in rng.sample(names, rng.randrange(1, 200))]
                   for ch in ("lexical", "embedding", "formula")[: rng.randrange(1, 4)]}
        for hits in results.values():
            hits.sort(key=lambda x: -x[1])
        weights = {"lexical": 1.0, "embedding": 0.5, "formula": 1.0, "prior": rng.choice([0.5, 1.5, 3.0]),
                   "parent": rng.choice([0.0, 0.25, 1.0]), "parent_depth": rng.choice([1, 10, 20]), "parent_others": 1.0}
        resolved = rng.sample(names, rng.randrange(0, 3))
        k = rng.choice([1, 5, 10, 30])
        prior.reads = 0
        got = engine.rank("q", results, resolved, k, dict(weights)).hits
        reads.append((prior.reads, len({n for hits in results.values() for n, _ in hits})))
        assert [(h.name, h.score, h.channels) for h in got] == _everything_ranked(results, prior, weights, resolved, k, known)
    assert sum(r for r, _ in reads) < 0.6 * sum(n for _, n in reads)  # most names' prior is never read
