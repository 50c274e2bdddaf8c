"""The fusion's measured settings: each kind of query's channel weights (WEIGHTS_BY_KIND, relative to
lexical = 1), the prior's and the parent channel's, the informal channel's depth and the candidates
per channel. The comments record the measurement behind each choice."""

from __future__ import annotations

from mathindex.search.fusion import GAP_PREFIX

# Per kind of query (what the engine sees at query time), relative to lexical = 1. Seed 14.8 set 1 per
# channel and 0.5 for embeddings; bench/fusion_weights.py over the whole-Mathlib release on MathlibQR
# dev (476 queries, two-fold cross-validation by target) moved formula-like queries to equal
# weights (nDCG@10 41.1 -> 42.2, both folds chose it) and kept 0.5 for prose (best in-sample; the
# folds disagreed, 0.25 and 2.0, so no setting is better supported).
# "prior" is the weight of the reference prior (fused score x (1 + weight x prior)), from
# bench/experiments/ranking_prior.py on the whole-Mathlib release with proof references in the graph
# (20261201T072844Z), MathlibQR dev nDCG@10 / R@10: no prior 45.1 / 59.5 (depth 100); PageRank 1.5
# 49.6 / 64.7; 2.0 50.3 / 65.6 (two-fold CV 49.8; the folds chose 3.0 and 2.0). 1.5, not 2.0,
# because the small sample corpus falls 0.7 at 1.5 but 2.1 at 2.0, past the release gate.
# "lean" queries (Lean syntax in backticks, Loogle syntax, dotted constant names; see
# `looks_like_lean`) get the formula weights plus the formal channel (mathindex/formal): FORMAL_WEIGHT,
# from bench/experiments/formal_fusion.py on the whole-Mathlib release (20261201T072844Z + formal index),
# MathlibQR dev nDCG@10: q1a_lean 56.3 without the channel; 58.2 / 59.2 / 59.5 / 60.2 / 59.1 / 58.4 at
# 0.5 / 1 / 1.5 / 2 / 3 / 4; all styles 49.65 -> 50.46 at 2.0 (two-fold CV 50.23, the folds chose 3.0
# and 2.0); the other styles never run the channel (no change).
WEIGHTS_BY_KIND = {
    "words": {"lexical": 1.0, "embedding": 0.5, "formula": 1.0, "prior": 1.5},
    "formula": {"lexical": 1.0, "embedding": 1.0, "formula": 1.0, "prior": 1.5},
}
FORMAL_WEIGHT = 2.0
# Lean-looking queries take a stronger prior, 3.0: on release 20261201T075654Z (formal channel in the
# flow) their nDCG@10 / R@10 is 59.6 / 76.8 at 1.5 and 62.8 / 80.8 at 3.0 (formal 2.0 kept: the folds
# chose 3.0 with formal 1.0 and 2.0); the sample's Lean queries stay at 100 for any weight, while its
# prose and formula queries fall past 1.5, which is why those kinds keep 1.5.
WEIGHTS_BY_KIND["lean"] = {**WEIGHTS_BY_KIND["formula"], "formal": FORMAL_WEIGHT, "prior": 3.0}
# Lean-looking queries take the formula channel at 0.25, scaled by its list's gap confidence (fusion.py
# `gap_weights`): bench/experiments/formula_fusion.py over the whole-Mathlib release 20261201T144856Z on MathlibQR
# dev, the 76 Lean-style queries that run the channel, nDCG@10: 65.70 at weight 1, 69.84 with the
# channel off, 70.32 at 0.25 x gap (in-sample best 70.34 at 0.5 x gap^2); two-fold CV 69.75 (the folds
# chose 0.25 x gap and off). Formula-like queries keep 1.0 without the gap (110 queries: CV 42.95
# against 45.49; 41.50 with the channel off).
WEIGHTS_BY_KIND["lean"].update({"formula": 0.25, GAP_PREFIX + "formula": 1.0})
# The parent channel (search/parents.py: a structure gains a share of its fields' scores in the head),
# per kind as (weight, depth, what a member that is no field counts): bench/experiments/parent_channel.py on the
# whole-Mathlib release 20261201T205319Z, MathlibQR dev nDCG@10, with the lexical text above.
# Formula-like queries take 0.5/10/0 (120 queries, this branch's lists: 48.77 off, 51.71 at the former
# cap 0.25, 52.63 at 0.5; the weight alone at depth 10: both folds chose 0.5, 54.22 / 50.81; the full
# grid's CV 51.63, its folds chose 0.5/10/0 and 0.5/50/0.1); the bundled sample costs 0.2 there
# (one formula query, nDCG@10 87.00 -> 86.80, MRR@10 88.88 -> 88.64: within the release gate).
# Word queries stay capped at 0.25 (`--cap words=0.25`): uncapped, the sample's few structures, whose
# fields rank high for every lemma about them, cost it 3.8 (87.00 -> 83.18 with all kinds uncapped).
# Lean-looking ones, which cost the sample nothing, take the CV choice. Figures:
# docs/results/latex-queries.md.
PARENT_SETTINGS = {"formula": (0.5, 10, 0.0), "lean": (0.5, 20, 0.0), "words": (0.25, 10, 0.0)}
for _kind, (_weight, _depth, _others) in PARENT_SETTINGS.items():
    WEIGHTS_BY_KIND[_kind].update({"parent": _weight, "parent_depth": _depth, "parent_others": _others})
# Prose queries (`words`) take one more list, `informal` (search/informal.py): their first
# INFORMAL_DEPTH fused candidates by the cosine of their informal renderings to the query.
# bench/experiments/informal_rerank.py on the whole-Mathlib release 20261201T205319Z (parent channel in), MathlibQR
# dev nDCG@10 all / natural / slogan: 57.44 / 52.85 / 45.04 without it; 0.25: 58.53 / 54.34 / 47.62;
# 0.75: 59.21 / 55.53 / 49.86; 1.5: 59.30 / 55.59 / 51.26 (two-fold CV 58.95, the folds chose 1.5 and
# 0.75; R@10 72.90 -> 74.58 at 0.25, 75.00 at 0.75). The weight is 0.75, the lower of the folds'
# choices. On the bundled sample it takes one natural query ("formula for adding up the first n
# natural numbers") from rank 1 to 2 and MRR@10 from 88.64 to 87.92 (`bench/suite_weights.py
# SAMPLE_RELEASE data/sample/queries.json words informal 0 0.25 0.5 0.75 1.0`), past the floor of
# the sample baseline of 20261130 (90.44); the baseline was renewed with this change
# (docs/results/prose-queries.md). An earlier release (182722Z, no parent channel) gave depth 10 and
# 20 below 30 (55.42, 56.02 against 56.36).
# Its cost: a candidate's rendering not yet in the root's embedding cache is embedded at query time
# (a new prose query on whole Mathlib: about 25 renderings; bench/experiments/informal_cost.py), then kept there
# for every later process; `mathindex warm` embeds them all beforehand. INFORMAL_DEPTH = 0 turns the
# channel off.
WEIGHTS_BY_KIND["words"]["informal"] = 0.75
INFORMAL_DEPTH = 30
# Candidates per channel before fusion: 200, so that the prior can lift a well-used declaration that
# one channel ranks far down (bench/experiments/ranking_prior.py, release 20261201T075654Z, PageRank 1.5: nDCG@10
# 49.1 / 50.5 / 50.6 at depth 50 / 100 / 200; both folds chose 200). Costs about 7 ms a query.
CANDIDATES = 200


def weights_for(kind: str, overrides: dict[str, float] | None = None) -> dict[str, float]:
    """The weights of a kind of query (search/kinds.py `query_kind`), with `overrides` on top."""
    return dict(WEIGHTS_BY_KIND[kind], **(overrides or {}))
