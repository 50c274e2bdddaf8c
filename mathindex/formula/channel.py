"""The formula channel: structural formula search over the release's formula index, each formula
standing for the node that owns it (mathindex/channel.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.channel import Channel, ChannelContext, Hits, Query, best_by_position
from mathindex.formula.formula_index import FormulaIndex, _ranges
from mathindex.lookups import last_index_in
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

    def __init__(self, release: Path, preload: bool = True):
        """`preload`: start the SymPy worker now (FormulaIndex). The names are made in Arrow: a dict
        per formula and per node took 1 s of a one-query CLI's CPU on whole Mathlib."""
        layout = ReleaseLayout(release)
        self.index = FormulaIndex.open(layout.formula, preload=preload)
        formulas = pq.read_table(layout.table("formulas"), columns=["formula_id", "node_id"])
        nodes = pq.read_table(layout.table("nodes"), columns=["node_id", "name"])
        # as dicts would: formula id -> its node's name (a formula of no node left out; of a formula id
        # listed twice, its last row with a node), each member formula -> that name's position among
        # the names sorted (-1: none)
        node_row = last_index_in(formulas.column("node_id"), nodes.column("node_id"))
        named = np.flatnonzero(node_row >= 0)
        formula_ids = formulas.column("formula_id").take(pa.array(named))
        last = last_index_in(formula_ids, formula_ids)
        kept = np.flatnonzero(last == np.arange(len(last)))  # each formula id's last named row
        name_of = nodes.column("name").take(pa.array(node_row[named[kept]]))
        distinct = pc.unique(name_of)
        distinct = distinct.take(pc.sort_indices(distinct))
        self.names = distinct.to_pylist()
        position = pc.index_in(name_of, value_set=distinct).to_numpy(zero_copy_only=False).astype(np.int64)
        members = self.index.member_lists
        offsets = members.offsets.to_numpy()
        self.member_ptr = (offsets - offsets[0]).astype(np.int64)
        at = last_index_in(members.flatten(), formula_ids.take(pa.array(kept)))
        self.member_name = np.where(at >= 0, position[np.maximum(at, 0)], -1) if len(position) else np.full(len(at), -1)
        self.member_name = self.member_name.astype(np.int64)

    @classmethod
    def open(cls, context: ChannelContext) -> FormulaChannel:
        return cls(context.release, context.preload)

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
