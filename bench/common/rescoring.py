"""Re-scoring cached channel lists (bench/cache_runs.py's pickle, or lists gathered in-process):
two folds by target, per-group metric tables, a ranking-only engine over a release's prior."""

from __future__ import annotations

import hashlib
import pickle
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from mathindex.evaluation.metrics import metric_value
from mathindex.evaluation.suites import load_suite
from mathindex.search.engine import SearchEngine
from mathindex.search.parents import parent_sets
from mathindex.search.prior import PRIOR, read_prior
from mathindex.store.layout import ReleaseLayout


def fold_of(query_id: str) -> int:
    """The query's fold (0 or 1), by its target: a target's paraphrases stay in one fold."""
    target = query_id.split(":", 1)[0]
    return hashlib.sha256(target.encode()).digest()[0] % 2


def grouped_scores(engine, runs, weights_of, metric: str, k: int) -> dict[str, float]:
    """Mean metric over `runs` (query, channel hits, resolved) ranked with `weights_of(query)`,
    overall (`all`), per style, per fold (`fold0`, `fold1`), per style and fold (`STYLE/fold0`)
    and on the fair subset."""
    out = defaultdict(list)
    for q, results, resolved in runs:
        names = [h.name for h in engine.rank(q.text, results, resolved, k, weights_of(q)).hits]
        v = metric_value(metric, names, set(q.gold))
        fold = f"fold{fold_of(q.id)}"
        for key in ("all", q.style, fold, f"{q.style}/{fold}") + (("fair",) if q.fair else ()):
            out[key].append(v)
    return {key: sum(v) / len(v) for key, v in out.items()}


def ranking_engine(release: Path) -> SearchEngine:
    """A SearchEngine that only ranks (`rank`): the release's prior, no channels
    opened, so re-fusing cached lists costs seconds instead of the minutes of opening every index."""
    engine = SearchEngine.__new__(SearchEngine)
    engine.release, engine.weights, engine.unavailable = Path(release), {}, {}
    engine.prior = read_prior(ReleaseLayout(release).table("nodes"), PRIOR)
    engine.known, engine.fields = parent_sets(pq.read_table(ReleaseLayout(release).table("nodes"), columns=["name", "kind"]))
    return engine


def node_kinds(release: Path) -> dict[str, str]:
    """name -> kind of every node of the release (its `nodes` table)."""
    nodes = pq.read_table(ReleaseLayout(release).table("nodes"), columns=["name", "kind"])
    return dict(zip(nodes.column("name").to_pylist(), nodes.column("kind").to_pylist()))


def load_runs(pickle_path: Path, suite_path: Path, styles: set[str] | None = None):
    """[(query, channel lists, resolved)] of the suite's queries (of `styles`, when given) from a
    bench/cache_runs.py pickle."""
    runs = pickle.loads(Path(pickle_path).read_bytes())["runs"]
    suite = load_suite(suite_path)
    return [(q, *runs[q.id]) for q in suite.queries if styles is None or q.style in styles]


def table(engine, runs, weights_of, metric: str = "ndcg@10", k: int = 10, query_of=None) -> dict[str, float]:
    """Mean metric per group: all, style, fold, style/fold, fair. `weights_of(query)` gives the
    fusion weights; `query_of(query)` the text the engine ranks with (default: the query's own)."""
    out = defaultdict(list)
    for q, results, resolved in runs:
        text = query_of(q) if query_of else q.text
        names = [h.name for h in engine.rank(text, results, resolved, k, weights_of(q)).hits]
        v = metric_value(metric, names, set(q.gold))
        fold = f"fold{fold_of(q.id)}"
        for key in ("all", q.style, fold, f"{q.style}/{fold}") + (("fair",) if q.fair else ()):
            out[key].append(v)
    return {key: sum(v) / len(v) for key, v in out.items()}


def rank_of(names: list[str], gold) -> int | None:
    """The 1-based rank of the first gold name in `names`, or None."""
    for i, n in enumerate(names, 1):
        if n in gold:
            return i
    return None
