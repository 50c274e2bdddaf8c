"""The parent channel: a declaration whose members the other channels find.

A query asking for a structure or class by its defining formulas (`$F(\\mathrm{id}_X) =
\\mathrm{id}_{F X}$` for `CategoryTheory.Functor`, `$\\mathrm{encode} : \\alpha \\to \\mathbb{N}$` for
`Encodable`) matches its fields and lemmas (`Encodable.encode`, `Encodable.encodek`) better than
the declaration itself, whose statement holds none of those formulas. The channel ranks the
namespace parents of the fused head (its first `parent_depth` names) that are declarations
themselves, and adds to each `parent` times the fused scores of its members there (a member that is
no field or constructor counts `parent_others` times): a structure inherits from its fields, so a
weak field far down lifts it little and a field at rank 1 lifts it to its field's place.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

PARENT_DEPTH = 20  # members counted: the fused head's first PARENT_DEPTH names
MEMBER_KINDS = frozenset({"field", "constructor"})  # node kinds that state what their parent is


def parent_of(name: str) -> str | None:
    """`Encodable.encodek` -> Encodable; None for a name without a namespace."""
    head, dot, _ = name.rpartition(".")
    return head if dot and head else None


def parent_hits(head: list[tuple[str, float]], known, fields=frozenset(), others: float = 1.0) -> list[tuple[str, float]]:
    """(parent, score), best first (ties by name): the parents in `known` (a set of declaration
    names) of the members in `head` (name, fused score), each scored by the sum of its members'
    fused scores; a member not in `fields` (a structure's fields and constructors, its defining
    statements) counts `others` times."""
    score: dict[str, float] = defaultdict(float)
    for name, value in head:
        parent = parent_of(name)
        weight = 1.0 if name in fields else others
        if parent is not None and weight and parent in known:
            score[parent] += weight * value
    return sorted(score.items(), key=lambda x: (-x[1], x[0]))


def parent_sets(nodes: pa.Table, names: list[str] | None = None) -> tuple[frozenset, frozenset]:
    """The parent channel's node names and, among them, the fields and constructors (MEMBER_KINDS),
    from a `nodes` table with `name` and `kind` (`names`: its name column, as read already)."""
    names = nodes.column("name").to_pylist() if names is None else names
    members = nodes.column("name").filter(pc.is_in(nodes.column("kind"), value_set=pa.array(sorted(MEMBER_KINDS))))
    return frozenset(names), frozenset(members.to_pylist())  # the kinds in Arrow: a list of every kind cost 0.05 s


def with_parents(scored: list[tuple[str, float]], ranks, weights: dict[str, float], known, fields,
                 score_of: Callable[[str], float]) -> list[tuple[str, float]]:
    """`scored` (name, score after the prior) with the parent channel added, and its ranks in
    `ranks` (fusion.ChannelRanks), when `weights` give it a weight: a parent gains `parent` times
    its fields' scores there, after the prior, so a well-used structure is not lifted by its own
    prior on its fields' evidence. A parent that `scored` left out has `score_of(parent)`, its
    fused score with the prior added first, as when every name was scored."""
    weight = weights.get("parent", 0.0)
    if not weight:
        return scored
    head = heapq.nsmallest(int(weights.get("parent_depth", PARENT_DEPTH)), scored, key=lambda x: (-x[1], x[0]))
    hits = parent_hits(head, known, fields, weights.get("parent_others", 1.0))
    if not hits:
        return scored
    out = dict(scored)
    for rank, (parent, score) in enumerate(hits, start=1):
        out[parent] = (out[parent] if parent in out else score_of(parent)) + weight * score
        ranks.setdefault(parent, {})["parent"] = rank
    return list(out.items())
