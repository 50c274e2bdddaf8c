"""The reference graph as a ranking prior: how often other declarations use a node.

A release stores two raw signals per node in the `nodes` table: `in_degree` (how many distinct
declarations reference it, in statements or proofs, resolved references only, self-references
dropped) and `pagerank` (PageRank over the same edges, as LeanExplore uses; networkx's algorithm, `pagerank`). At query
time one of them becomes a prior in [0, 1], normalised within each corpus, and the engine
multiplies a fused score by `1 + weight * prior`.

Which signal and which weight is a benchmark decision (`bench/experiments/ranking_prior.py`, two-fold
cross-validation on MathlibQR dev): see `PRIOR` and the engine's weights.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import scipy as sp

SIGNALS = ("in_degree", "pagerank")
# Prior 1 at e^10 (about 22,000) references, or PageRank e^10 times an unreferenced node's: about
# Mathlib's `Set`, its most used declaration (in-degree 19,407; PageRank span e^9.99).
LOG_SPAN = 10.0
PRIOR = "pagerank"  # bench/experiments/ranking_prior.py, whole-Mathlib release: nDCG@10 49.6 against in-degree 49.2 at weight 1.5


def reference_signals(names: list[str], dependencies: pa.Table | None) -> tuple[list[int], list[float]]:
    """(in_degree, pagerank) for each name, from resolved dependency rows (any role)."""
    if dependencies is None or dependencies.num_rows == 0:
        return [0] * len(names), [0.0] * len(names)
    edges = (
        pl.from_arrow(dependencies.select(["full_name", "target", "resolved"]))
        .filter(pl.col("resolved") & (pl.col("full_name") != pl.col("target")))
        .select(["full_name", "target"])
        .unique()
        .sort(["full_name", "target"])  # one insertion order, so PageRank's float sums repeat bit for bit
    )
    wanted = pl.DataFrame({"name": pl.Series(names, dtype=pl.String)})
    degree = wanted.join(edges.group_by("target").len(), left_on="name", right_on="target", how="left")
    rank = wanted.join(pagerank(edges), on="name", how="left")
    return (degree.get_column("len").fill_null(0).cast(pl.Int64).to_list(),
            rank.get_column("pagerank").fill_null(0.0).to_list())


def pagerank(edges: pl.DataFrame, alpha: float = 0.85, max_iter: int = 100, tol: float = 1.0e-6) -> pl.DataFrame:
    """(name, pagerank) of every node of the directed graph `edges` (full_name -> target, in the
    order given): networkx's `pagerank` (its SciPy power iteration, copied here step for step, BSD
    licence) on the DiGraph `add_edges_from(edges)` would build, without building it: the same node
    order (first appearance, source before target), the same matrix and the same float operations,
    so the same bits (tests/test_search_parts.py compares them with networkx)."""
    if edges.is_empty():
        return pl.DataFrame({"name": [], "pagerank": []}, schema={"name": pl.String, "pagerank": pl.Float64})
    pairs = edges.select(u=pl.col("full_name"), v=pl.col("target"))
    order = pairs.select(pl.concat_list(["u", "v"]).alias("n")).explode("n").get_column("n").unique(maintain_order=True)
    index = pl.DataFrame({"n": order, "i": np.arange(len(order), dtype=np.int64)})
    coded = (pairs.with_row_index("e")
             .join(index, left_on="u", right_on="n").rename({"i": "r"})
             .join(index, left_on="v", right_on="n").rename({"i": "c"})
             .sort(["r", "e"]))  # networkx walks each node's out-edges in insertion order
    n = len(order)
    row, col = coded.get_column("r").to_numpy(), coded.get_column("c").to_numpy()
    A = sp.sparse.coo_array((np.ones(len(row)), (row, col)), shape=(n, n), dtype=float).asformat("csr")
    S = A.sum(axis=1)
    S[S != 0] = 1.0 / S[S != 0]
    Q = sp.sparse.dia_array((S.T, 0), shape=A.shape).tocsr()
    A = Q @ A
    x = np.repeat(1.0 / n, n)
    p = np.repeat(1.0 / n, n)
    is_dangling = np.where(S == 0)[0]
    for _ in range(max_iter):
        xlast = x
        x = alpha * (x @ A + sum(x[is_dangling]) * p) + (1 - alpha) * p
        if np.absolute(x - xlast).sum() < n * tol:
            return pl.DataFrame({"name": order, "pagerank": x})
    raise RuntimeError(f"PageRank did not converge in {max_iter} iterations")


def normalised_prior(signal: str, values: list[float], corpora: list[str]) -> list[float]:
    """Each node's prior in [0, 1]: the log-scaled `signal` over the fixed span `LOG_SPAN`, capped.

    The span is absolute, not each corpus's maximum, so a small corpus's best-used node is not
    lifted as much as Mathlib's `Set`: on a 300-declaration sample the per-corpus maximum cost 15
    points of nDCG@10 (bench/experiments/ranking_prior.py). PageRank is taken relative to its smallest positive
    value (a node nobody references), so it is scale-free too. A corpus without any references
    (a LaTeX corpus today) gets, for all its nodes, the median prior of the nodes that have a
    graph: neither favoured nor penalised against a typical declaration of another corpus."""
    if signal not in SIGNALS:
        raise ValueError(f"unknown prior signal {signal!r}; expected one of {', '.join(SIGNALS)}")
    if signal == "in_degree":
        scaled = [math.log1p(v) for v in values]
    else:
        floor = min((v for v in values if v > 0), default=1.0)
        scaled = [math.log(max(v, floor) / floor) for v in values]
    has_graph = {c for c, s in zip(corpora, scaled) if s > 0}
    prior = [min(1.0, s / LOG_SPAN) if c in has_graph else None for c, s in zip(corpora, scaled)]
    known = sorted(p for p in prior if p is not None)
    neutral = known[len(known) // 2] if known else 0.0
    return [neutral if p is None else p for p in prior]


def with_prior(scored: list[tuple[str, float]], prior: dict[str, float], weight: float) -> list[tuple[str, float]]:
    """Scores multiplied by `1 + weight * prior`, in the given order (unchanged when weight is 0 or
    there is no prior)."""
    if weight == 0 or not prior:
        return scored
    return [(n, s * (1.0 + weight * prior.get(n, 0.0))) for n, s in scored]


def apply_prior(scored: list[tuple[str, float]], prior: dict[str, float], weight: float) -> list[tuple[str, float]]:
    """Scores multiplied by `1 + weight * prior`, re-sorted (ties by name)."""
    if weight == 0 or not prior:
        return scored
    return sorted(with_prior(scored, prior, weight), key=lambda x: (-x[1], x[0]))


def read_prior(nodes: Path, signal: str, names: list[str] | None = None,
               row_of: Mapping[str, int] | None = None) -> Mapping[str, float]:
    """name -> prior from a `nodes` table file; empty (no prior) for a release built before `nodes`
    had the signals. `names`: the table's name column, as read already (the same rows, in order).
    `row_of` (a one-query engine: each name's last row): a `LazyPrior` over it, each name's prior
    computed when asked (the dict of every name's was 0.3 s of a CLI search's CPU on whole Mathlib)."""
    if signal not in pq.read_schema(nodes).names:
        return {}
    t = pq.read_table(nodes, columns=["corpus", signal] if names is not None else ["name", "corpus", signal])
    if row_of is not None:
        return LazyPrior(signal, t.column(signal), t.column("corpus"), row_of)
    values = normalised_prior(signal, t.column(signal).to_pylist(), t.column("corpus").to_pylist())
    return dict(zip(names if names is not None else t.column("name").to_pylist(), values))


class LazyPrior(Mapping):
    """`normalised_prior` as a mapping name -> prior, each value computed when asked, as the same
    floats: the log scale is monotone, so the floor, the corpora with a graph, the neutral median
    and the largest and smallest prior come from the raw signal in numpy (comparisons and one
    division, exact), and each asked name's prior from its own value by `math.log` as before."""

    def __init__(self, signal: str, values: pa.ChunkedArray, corpora: pa.ChunkedArray, row_of: Mapping[str, int]):
        if signal not in SIGNALS:
            raise ValueError(f"unknown prior signal {signal!r}; expected one of {', '.join(SIGNALS)}")
        self._signal, self._row_of = signal, row_of
        self._values = np.asarray(values.to_numpy(), dtype=np.float64 if signal == "pagerank" else np.int64)
        positive = self._values[self._values > 0]
        self._floor = float(positive.min()) if positive.size else 1.0
        if signal == "in_degree":
            lifted = self._values > 0  # log1p(v) > 0
        else:
            lifted = np.maximum(self._values, self._floor) / self._floor > 1.0  # log(x) > 0
        codes = pc.dictionary_encode(corpora.combine_chunks())
        corpus = codes.indices.to_numpy(zero_copy_only=False)
        graph_corpora = np.unique(corpus[lifted])
        self._graph = np.isin(corpus, graph_corpora)
        known = np.sort(self._values[self._graph])
        self._neutral = self._scaled(known[len(known) // 2].item()) if known.size else 0.0

    def _scaled(self, v) -> float:
        """One value's prior in a corpus with a graph (`normalised_prior`)."""
        s = math.log1p(v) if self._signal == "in_degree" else math.log(max(v, self._floor) / self._floor)
        return min(1.0, s / LOG_SPAN)

    def _at(self, row: int) -> float:
        return self._scaled(self._values[row].item()) if self._graph[row] else self._neutral

    def __getitem__(self, name: str) -> float:
        return self._at(self._row_of[name])

    def get(self, name: str, default=None):
        row = self._row_of.get(name)
        return default if row is None else self._at(row)

    def __contains__(self, name: object) -> bool:
        return name in self._row_of

    def __len__(self) -> int:
        return len(self._row_of)

    def __iter__(self):
        return iter(self._row_of)

    def bounds(self) -> tuple[float, float]:
        """(smallest, largest) prior of any name (at its row in `row_of`): at the smallest and the
        largest value with a graph, and the neutral prior for a name in a corpus without one."""
        rows = np.fromiter(self._row_of.values(), dtype=np.int64, count=len(self._row_of))
        graph = self._graph[rows]
        lifted = rows[graph]
        ends = [] if not lifted.size else [self._at(int(lifted[np.argmin(self._values[lifted])])),
                                           self._at(int(lifted[np.argmax(self._values[lifted])]))]
        if not graph.all():
            ends.append(self._neutral)
        return min(ends), max(ends)


def prior_top(prior: Mapping[str, float]) -> float | None:
    """The largest prior; None when some prior is negative (no bound)."""
    low, high = prior.bounds() if isinstance(prior, LazyPrior) else (min(prior.values()), max(prior.values()))
    return high if low >= 0 else None


def prior_scores(total: dict[str, float], prior: dict[str, float], weight: float, need: int | None = None,
                 top: float | None = None) -> list[tuple[str, float]]:
    """(name, score): the prior applied to the fused score rounded to 8 places, as `apply_prior`
    is applied to `fusion.fuse`'s hits; without a prior the unrounded fused scores (`fuse`'s order).
    With `need` and `top` (`prior_top`), only the names that may be among the `need` best after the
    prior (at least those): by fused score down, until a score times the largest prior factor falls
    below the need-th best so far (the prior's dict look-ups, out of cache, were most of the
    prior's cost; 400 names a query, a few dozen of them scored)."""
    if weight == 0 or not prior:
        return list(total.items())
    if need is None or weight < 0 or top is None or len(total) <= need:
        return with_prior([(n, round(s, 8)) for n, s in total.items()], prior, weight)
    bound = (1.0 + weight * top) * (1.0 + 1e-9)  # no name's score grows more than this
    kept, floor = [], []
    for n, s in sorted(total.items(), key=itemgetter(1), reverse=True):
        high = s + 1e-8  # round(s, 8) <= s + 5e-9
        if len(floor) == need and (high * bound if high > 0 else high) < floor[0]:
            break
        p = round(s, 8) * (1.0 + weight * prior.get(n, 0.0))  # as with_prior
        kept.append((n, p))
        if len(floor) < need:
            heapq.heappush(floor, p)
        elif p > floor[0]:
            heapq.heapreplace(floor, p)
    return kept


def prior_score(name: str, fused: float, prior: dict[str, float], weight: float) -> float:
    """One name's score after the prior, as `prior_scores` gives it."""
    if weight == 0 or not prior:
        return fused
    return round(fused, 8) * (1.0 + weight * prior.get(name, 0.0))
