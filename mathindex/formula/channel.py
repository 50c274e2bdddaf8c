"""The formula channel: structural formula search over the release's formula index, each formula
standing for the node that owns it (mathindex/channel.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from mathindex.channel import Channel, ChannelContext, Hits, Query, best_by_position
from mathindex.formula.formula_index import FormulaIndex, _ranges
from mathindex.store.layout import ReleaseLayout

# The formula channel skips a query's pieces that are one variable or number (`maximal p-subgroup of
# $G$`: every formula with a G scores alike) when True. Off: bench/experiments/formula_fusion.py --skip-variables 1
# (the channel re-run) gives q1b_latex 47.57 against 48.03, all styles 53.28 against 53.44.
SKIP_FORMULA_VARIABLES = False


class FormulaChannel(Channel):
    """Structural formula search; formula ids map to their owning node's name. Each group's
    members are kept as positions into the sorted names (CSR: `member_ptr`, `member_name`, -1 for a
    formula of no node), so a query's groups become its names in numpy (`channel.best_by_position`)
    rather than by a dict look-up per formula id (0.5-1 ms a formula query on whole Mathlib)."""

    name = "formula"
    skip_variables = SKIP_FORMULA_VARIABLES

    def __init__(self, release: Path, names: list[str] | None = None, preload: bool = True):
        """`names`: the `nodes` table's name column, as the engine read it (the same rows, in order);
        `preload`: start the SymPy worker now (FormulaIndex)."""
        layout = ReleaseLayout(release)
        self.index = FormulaIndex.open(layout.formula, preload=preload)
        formulas = pq.read_table(layout.table("formulas"), columns=["formula_id", "node_id"])
        nodes = pq.read_table(layout.table("nodes"), columns=["node_id"] if names is not None else ["node_id", "name"])
        name_of_node = dict(zip(nodes.column("node_id").to_pylist(), names if names is not None else nodes.column("name").to_pylist()))
        name_of = {
            f: name_of_node[n]
            for f, n in zip(formulas.column("formula_id").to_pylist(), formulas.column("node_id").to_pylist())
            if n in name_of_node
        }
        self.names = sorted(set(name_of.values()))
        position = {n: i for i, n in enumerate(self.names)}
        members = self.index.members
        self.member_ptr = np.zeros(len(members) + 1, dtype=np.int64)
        self.member_ptr[1:] = np.cumsum([len(m) for m in members])
        self.member_name = np.fromiter((position[name_of[f]] if f in name_of else -1 for m in members for f in m),
                                       dtype=np.int64, count=int(self.member_ptr[-1]))

    @classmethod
    def open(cls, context: ChannelContext) -> FormulaChannel:
        return cls(context.release, context.names, context.preload)

    @classmethod
    def runs(cls, query: Query) -> bool:
        """Formula-like queries only (`query.formula`)."""
        return query.formula

    def hits(self, query: Query, k: int) -> Hits | None:
        return self.search(query.text, k) if self.runs(query) else None

    def search(self, query: str, k: int) -> Hits:
        """The best k names of the first k * 3 member formulas of the best groups (the index's
        `search`, whose groups are scored on the raw query: each $…$ / backtick piece is searched
        and their scores added), each name at its best score."""
        groups = self.index.search_groups(query, k * 3, skip_variables=self.skip_variables)
        if not groups:
            return []
        g = np.fromiter((x for x, _ in groups), dtype=np.int64, count=len(groups))
        score = np.fromiter((s for _, s in groups), dtype=np.float64, count=len(groups))
        start, end = self.member_ptr[g], self.member_ptr[g + 1]
        rows = _ranges(start, end)[: k * 3]
        score = np.repeat(score, end - start)[: k * 3]
        name = self.member_name[rows]
        known = name >= 0
        return best_by_position(name[known], score[known], self.names, k)
