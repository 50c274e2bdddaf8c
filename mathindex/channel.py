"""The query channels' interface and the helpers channels share to name their candidates
(`NamedRows`, `best_by_position`). Low level: the adapters beside each index (formula/, formal/,
embed/, search/) and the engine (search/engine.py) ask it; it imports no channel. A channel opens from a release's files and the context the engine
lends it (`ChannelContext`), and answers a `Query` with its candidates (name, score), best first;
the engine fuses the lists (search/fusion.py). A channel's `name` labels its ranks in hits and is
its key in the weights (search/weights.py). The engine's registry (`engine.CHANNELS`) lists them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mathindex.names import shared_names
from mathindex.store.layout import RootLayout

Hits = list[tuple[str, float]]


@dataclass(frozen=True)
class ChannelContext:
    """What the engine lends each channel as it opens: the release, its `nodes` name column and
    one str object per name (`shared`: the channels' lists hold those, not a copy of every name,
    about 25 MB on whole Mathlib; None in a one-query engine, `lazy`, where sharing cost 0.5 s of
    CPU), the release root, the query model (a manifest's reference or a path; None: the bundled
    one), whether the embedder only encodes queries (a server), a symbol
    map file to use instead of the release's own, whether helper processes start as the channel
    opens (`preload`: the formula channel's SymPy worker; else at the first query that needs one),
    whether the engine answers a query or two and goes (`lazy`: a channel then makes only what its
    first queries read, not a table of every name), and the channels opened before this one."""

    release: Path
    names: list[str]
    shared: dict[str, str] | None
    root: Path
    model: str | Path | None = None
    queries_only: bool = False
    symbols: Path | None = None
    preload: bool = True
    lazy: bool = False
    opened: dict[str, Channel] = field(default_factory=dict)
    nodes: pa.Table | None = None  # the engine's `nodes` table (name, node_id, ...), read once for every channel

    @property
    def cache_dir(self) -> Path:
        """The release root's cache directory."""
        return RootLayout(self.root).cache


@dataclass
class Query:
    """One query as the channels see it: its text (the corpora's macros expanded), kind
    (search/kinds.py), whether it is TeX or math and not Lean (`latex`), whether the formula channel
    runs on it (`formula`: search/kinds.py `runs_formula_channel`), the embedding channel's vector
    once encoded, the lexical channel's coverage (the share of the query's tokens its index knows) once
    it ran, and `head(depth)`: the names the lists before it fuse to, best first."""

    text: str
    kind: str
    latex: bool
    formula: bool = False
    vector: Any = None
    coverage: float | None = None
    head: Callable[[int], list[str]] | None = None


class Channel(ABC):
    """One query channel over one index of a release."""

    name: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()  # the channels (by name) whose open ones `open` reads in `context.opened`

    @classmethod
    @abstractmethod
    def open(cls, context: ChannelContext) -> Channel | None:
        """The channel over `context.release`; None when the release has none of its index and that
        is no fault (a release built before it); an error when its files fail to open."""

    @classmethod
    def runs(cls, query: Query) -> bool:
        """Whether the channel runs for `query` (else `hits` is None): every query unless a channel
        says otherwise. Asked before the channel opens, so that an engine opening channels as queries
        need them (`SearchEngine(lazy=True)`) never opens one that would not run."""
        return True

    @abstractmethod
    def hits(self, query: Query, k: int) -> Hits | None:
        """The best k candidates, best first; None when the channel does not run for this query."""


class NamedRows:
    """A channel's row ids and the names they belong to, as sorted arrays: `best` is `best_per_name`
    over (row id, score) arrays with no Python look-up per hit (a dict of 690 k text ids cost 0.7 ms
    a query for 600 neighbours on whole Mathlib, its entries out of cache). An id listed twice keeps
    its last name, as a dict would. Made in Arrow: on whole Mathlib (690 k ids, 300 k names) a dict of
    positions and a Python sort took 0.9 s of a CLI search's CPU. With `lazy` (a one-query engine)
    no name is ranked up front (the sorted distinct names took 0.4 s): `best` reads the names of
    the rows it is asked about from the column and orders them itself, the same answer."""

    def __init__(self, ids, names: list[str] | pa.Array | pa.ChunkedArray, shared: dict[str, str] | None = None,
                 lazy: bool = False):
        """`names[i]` names `ids[i]`; `shared`: the engine's name objects (names.shared_names)."""
        ids = np.asarray(ids, dtype=np.int64)
        column = names if isinstance(names, (pa.Array, pa.ChunkedArray)) else pa.array(names, pa.string())
        same = bool(len(ids)) and bool((np.diff(ids) > 0).all())  # ascending and distinct already (a release's text ids)
        if same:
            order = np.arange(len(ids))
        else:
            order = np.argsort(ids, kind="stable")
            last = np.ones(len(ids), dtype=bool)  # of equal ids (adjacent once sorted, in table order) the last
            last[:-1] = ids[order][1:] != ids[order][:-1]
            order = order[last]
        self.ids = ids[order]
        self._column = (column if same else column.take(pa.array(order))) if lazy else None  # the name of ids[i]
        if lazy:
            return
        distinct = pc.unique(column)
        # a name's position is its rank: ties by name are ties by position. Arrow sorts strings by
        # their UTF-8 bytes, which is code point order, as `sorted` orders str
        distinct = distinct.take(pc.sort_indices(distinct))
        self.names = shared_names(distinct.to_pylist(), shared)
        self.name = np.asarray(pc.index_in(column, value_set=distinct).to_numpy(zero_copy_only=False), dtype=np.int64)[order]

    def __len__(self) -> int:
        return len(self.ids)

    def best(self, ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The k first of `best_per_name` over the named ones of (ids[i], scores[i]) (float32 scores)."""
        ids, scores = np.asarray(ids).ravel(), np.asarray(scores, dtype=np.float32).ravel()
        if not len(self.ids) or not len(ids):
            return []
        ascending = np.argsort(ids, kind="stable")  # sorted needles: searchsorted walks the table once
        at = np.empty(len(ids), dtype=np.int64)
        at[ascending] = np.minimum(np.searchsorted(self.ids, ids[ascending]), len(self.ids) - 1)
        known = self.ids[at] == ids
        if self._column is not None:
            return _best_of_named(self._column.take(pa.array(at[known])).to_pylist(), scores[known].tolist(), k)
        return best_by_position(self.name[at[known]], scores[known], self.names, k)


def _best_of_named(names: list[str], scores: list[float], k: int) -> list[tuple[str, float]]:
    """`best_by_position` over the names themselves: best first, ties by name, then in input order
    (-0.0 ties 0.0), each name at its first entry in that order."""
    order = sorted(range(len(names)), key=lambda i: (-scores[i], names[i], i))
    seen: set[str] = set()
    out = []
    for i in order:
        if names[i] not in seen:
            seen.add(names[i])
            out.append((names[i], scores[i]))
            if len(out) == k:
                break
    return out


def best_by_position(name: np.ndarray, score: np.ndarray, names: list[str], k: int) -> list[tuple[str, float]]:
    """`best_per_name(list(zip(names[name[i]], score[i])))[:k]` for positions `name` into `names`
    (sorted, distinct) and float32 or float64 `score`, in numpy."""
    if score.dtype == np.float32:  # one int64 key: a third of lexsort's time
        order = np.argsort(_descending(score) * (1 << 32) + name, kind="stable")
    else:
        order = np.lexsort((name, -score))  # stable too
    # best first, ties by name, equal (name, score) in input order (0.0 before -0.0 as there)
    _, first = np.unique(name[order], return_index=True)  # each name's first entry: its best
    keep = order[np.sort(first)][:k]
    return [(names[n], s) for n, s in zip(name[keep].tolist(), score[keep].tolist())]


def _descending(scores: np.ndarray) -> np.ndarray:
    """int64 keys of float32 `scores` that sort as -score does (-0.0 as 0.0), within +-2**31."""
    bits = (scores + np.float32(0.0)).view(np.int32).astype(np.int64)
    return -np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
