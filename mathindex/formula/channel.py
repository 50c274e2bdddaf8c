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

    def __init__(self, release: Path, preload: bool = True, nodes: pa.Table | None = None, lazy: bool = False):
        """`preload`: start the SymPy worker now (FormulaIndex). `nodes`: the release's nodes table
        with `node_id` and `name`, as read already (None: read here). `lazy` (a one-query CLI): the
        member formulas' names are found at each query for its rows only (`member_names` over the
        rows of the tables that hold them: the same names, without 0.45 s of CPU at open on whole
        Mathlib); else for every member now."""
        layout = ReleaseLayout(release)
        self.index = FormulaIndex.open(layout.formula, preload=preload, lazy=lazy)
        formulas = pq.read_table(layout.table("formulas"), columns=["formula_id", "node_id"])
        if nodes is None or not {"node_id", "name"} <= set(nodes.column_names):
            nodes = pq.read_table(layout.table("nodes"), columns=["node_id", "name"])
        members = self.index.member_lists
        offsets = members.offsets.to_numpy()
        self.member_ptr = (offsets - offsets[0]).astype(np.int64)
        self._tables: tuple[pa.Table, pa.Table, pa.Array] | None = None
        self.names: list[str] | None = None
        self.member_name: np.ndarray | None = None
        if lazy:
            self._tables = (formulas.select(["formula_id", "node_id"]), nodes.select(["node_id", "name"]), members.flatten())
        else:
            self.names, self.member_name = member_names(formulas, nodes, members.flatten())

    @classmethod
    def open(cls, context: ChannelContext) -> FormulaChannel:
        return cls(context.release, context.preload, context.nodes, context.lazy)

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
        name, names = self._names_of(rows)
        known = name >= 0
        return best_by_position(name[known], score[known], names, k)

    def _names_of(self, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The member rows' name positions (-1: no node) and the sorted names they point into: the
        open channel's, or (lazy) those of the rows alone, made from the formulas and nodes that
        name them (`member_names` over them: the same order of names, so the same hits)."""
        if self._tables is None:
            return self.member_name[rows], self.names
        formulas, nodes, flat = self._tables
        fids = flat.take(pa.array(rows, pa.int64()))
        formulas = formulas.filter(pc.is_in(formulas.column("formula_id"), value_set=pc.unique(fids)))
        node_ids = pc.unique(formulas.column("node_id"))  # a null too, as last_index_in matches it
        nodes = nodes.filter(pc.is_in(nodes.column("node_id"), value_set=node_ids))
        names, name = member_names(formulas, nodes, fids)
        return name, names


def member_names(formulas: pa.Table, nodes: pa.Table, members: pa.Array) -> tuple[list[str], np.ndarray]:
    """(the names sorted, each of `members`' position among them, -1: none), as dicts would map them:
    formula id -> its node's name (a formula of no node left out; of a formula id listed twice, its
    last row with a node; of a node id listed twice, its last row), in Arrow. `formulas`: formula_id
    and node_id rows, `nodes`: node_id and name rows, both in the release's order (or rows of them
    kept in that order, that hold every row of the members' formula ids and of their node ids)."""
    node_row = last_index_in(formulas.column("node_id"), nodes.column("node_id"))
    named = np.flatnonzero(node_row >= 0)
    formula_ids = formulas.column("formula_id").take(pa.array(named))
    last = last_index_in(formula_ids, formula_ids)
    kept = np.flatnonzero(last == np.arange(len(last)))  # each formula id's last named row
    name_of = nodes.column("name").take(pa.array(node_row[named[kept]]))
    distinct = pc.unique(name_of)
    distinct = distinct.take(pc.sort_indices(distinct))
    position = pc.index_in(name_of, value_set=distinct).to_numpy(zero_copy_only=False).astype(np.int64)
    at = last_index_in(members, formula_ids.take(pa.array(kept)))
    member_name = np.where(at >= 0, position[np.maximum(at, 0)], -1) if len(position) else np.full(len(at), -1)
    return distinct.to_pylist(), member_name.astype(np.int64)
