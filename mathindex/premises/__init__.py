"""Premise selection (issue 12): which declarations a proof of a Lean goal is likely to name.

- `split`: the seeded by-file split (test = held out, tune = where weights are fitted, train = priors).
- `suite`: the held-out benchmark (goal = a theorem's type, gold = the declarations its proof names).
- `priors`: the statement index and the training-proof priors a release stores under `premises/`.
- `imports`: the corpus's import graph from the Lean headers (what a goal's file can see).
- `goal`: a goal checked before it is ranked (`check_goal`, `GoalError` with the position).
- `ranker`: `PremiseRanker` (signals, candidates, the weighted score, the trees' re-ranking).
- `fit`: coordinate ascent of the weights on the tune part; scoring a suite.
- `build`: the release stage (`tasks/premises.py`).
"""

from mathindex.premises.ranker import GoalError, Premise, PremiseRanker, PremiseResult

__all__ = ["GoalError", "Premise", "PremiseRanker", "PremiseResult"]
