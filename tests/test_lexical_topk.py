"""The lexical channel's top-k: the k best positive scores, best first, ties by document id."""

from __future__ import annotations

import numpy as np

from mathindex.search.lexical import top_positive


def test_top_positive_keeps_positive_scores_best_first_ties_by_doc():
    scores = np.array([0.0, 2.0, 0.5, 2.0, 0.0, 3.0, 0.5, 0.0], dtype=np.float32)
    docs, values = top_positive(scores, 4)
    assert docs.tolist() == [5, 1, 3, 2] and values.tolist() == [3.0, 2.0, 2.0, 0.5]
    docs, values = top_positive(scores, 100)  # fewer positive scores than k: zeros never come back
    assert docs.tolist() == [5, 1, 3, 2, 6] and values.tolist() == [3.0, 2.0, 2.0, 0.5, 0.5]
    docs, values = top_positive(np.zeros(5, dtype=np.float32), 3)
    assert docs.tolist() == [] and values.tolist() == []


def test_top_positive_matches_a_full_sort_on_random_scores():
    rng = np.random.default_rng(0)
    scores = np.where(rng.random(50_000) < 0.02, rng.integers(1, 40, 50_000) / 4, 0).astype(np.float32)
    docs, values = top_positive(scores, 100)
    expected = sorted((i for i in range(len(scores)) if scores[i] > 0), key=lambda i: (-scores[i], i))[:100]
    assert docs.tolist() == expected and values.tolist() == scores[expected].tolist()
