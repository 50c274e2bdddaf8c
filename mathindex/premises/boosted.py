"""The premise ranker's learned re-ranking: gradient-boosted trees over a candidate's features.

The linear score (the fitted weights over `ranker.FEATURES`) picks each goal's best `RERANK`
candidates; a tree ensemble over `MODEL_FEATURES` (the signals, the linear score itself and what
only trees combine well: the candidate's kind, `simp` attribute, conclusion head, namespace, size
and its use by the training proofs of the files the goal's file imports) orders them. The trees
are fitted at release time (sklearn's HistGradientBoostingClassifier, pointwise: "does a proof of
this goal name this candidate"; a LambdaMART ranker, lightgbm's, scored the same on whole Mathlib,
40.26 against 40.21 R@10, and would be one more dependency) on the `tune` goals, and stored in the
release as plain arrays (`premises/model.json`), which `TreeModel.predict` evaluates with numpy:
serving needs no sklearn and no pickle."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MODEL_FILE = "model.json"
RERANK = 100  # candidates the trees re-order (the linear score's top 100 hold 68.6 % of the gold on whole Mathlib)
# sklearn HistGradientBoostingClassifier's settings (fixed: the fit has no held-out part to pick them on)
TREE_PARAMS = {"learning_rate": 0.05, "max_iter": 200, "max_leaf_nodes": 31, "min_samples_leaf": 50}
SEED = 0


@dataclass
class TreeModel:
    """A fitted ensemble as padded arrays, one row per tree: `feature` (-1 at a leaf), `threshold`
    (x <= threshold goes left), `left`, `right`, `value` (a leaf's contribution, learning rate
    included), plus the `baseline`; `features`: the column names it was fitted on, in order."""

    features: list[str]
    baseline: float
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The raw score (log-odds) of each row of `x` (columns in `features` order): all trees at
        once, one level per step."""
        n = x.shape[0]
        trees = np.arange(self.feature.shape[0])[:, None]
        node = np.zeros((self.feature.shape[0], n), dtype=np.int64)
        rows = np.arange(n)[None, :]
        for _ in range(self.feature.shape[1]):
            f = self.feature[trees, node]
            inner = f >= 0
            if not inner.any():
                break
            go_left = x[rows, np.maximum(f, 0)] <= self.threshold[trees, node]
            node = np.where(inner, np.where(go_left, self.left[trees, node], self.right[trees, node]), node)
        return self.baseline + self.value[trees, node].sum(axis=0)

    def to_json(self) -> dict:
        return {"kind": "gradient-boosted trees", "features": self.features, "baseline": self.baseline,
                "trees": [{"feature": self.feature[t].tolist(), "threshold": self.threshold[t].tolist(),
                           "left": self.left[t].tolist(), "right": self.right[t].tolist(), "value": self.value[t].tolist()}
                          for t in range(self.feature.shape[0])]}

    @classmethod
    def from_json(cls, data: dict) -> "TreeModel":
        trees = data["trees"]
        width = max(len(t["feature"]) for t in trees)

        def pad(key, dtype, fill):
            out = np.full((len(trees), width), fill, dtype=dtype)
            for i, t in enumerate(trees):
                out[i, :len(t[key])] = t[key]
            return out

        return cls(list(data["features"]), float(data["baseline"]), pad("feature", np.int64, -1),
                   pad("threshold", np.float64, 0.0), pad("left", np.int64, 0), pad("right", np.int64, 0),
                   pad("value", np.float64, 0.0))


def from_sklearn(model, features: list[str]) -> TreeModel:
    """A fitted binary HistGradientBoostingClassifier (numeric features, no missing values) as a
    TreeModel whose `predict` is its `decision_function`."""
    trees = [p[0].nodes for p in model._predictors]
    return TreeModel.from_json({"features": features, "baseline": float(np.ravel(model._baseline_prediction)[0]),
                                "trees": [{"feature": np.where(t["is_leaf"].astype(bool), -1, t["feature_idx"]).tolist(),
                                           "threshold": t["num_threshold"].tolist(), "left": t["left"].tolist(),
                                           "right": t["right"].tolist(),
                                           "value": np.where(t["is_leaf"].astype(bool), t["value"], 0.0).tolist()}
                                          for t in trees]})


def fit_trees(x: np.ndarray, y: np.ndarray, features: list[str]) -> TreeModel:
    """TREE_PARAMS trees fitted on rows `x` (columns `features`) with 0/1 labels `y`, seeded."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # heavy, optional: fitting only (a fitted model is read without it)

    model = HistGradientBoostingClassifier(**TREE_PARAMS, early_stopping=False, random_state=SEED)
    model.fit(x, y)
    return from_sklearn(model, features)


def write_model(model: TreeModel, base: Path, how: dict) -> Path:
    path = Path(base) / MODEL_FILE
    path.write_text(json.dumps({**model.to_json(), "fit": how}) + "\n", encoding="utf-8")
    return path


def read_model(base: Path) -> TreeModel | None:
    """`premises/model.json`, None when the release has none (fitted before issue 12's tenth
    session, or too few tune goals)."""
    path = Path(base) / MODEL_FILE
    return TreeModel.from_json(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None
