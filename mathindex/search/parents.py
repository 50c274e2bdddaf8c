"""The parent channel: a declaration whose members the other channels find.

A query asking for a structure or class by its defining formulas (`$F(\\mathrm{id}_X) =
\\mathrm{id}_{F X}$` for `CategoryTheory.Functor`, `$\\mathrm{encode} : \\alpha \\to \\mathbb{N}$` for
`Encodable`) matches its fields and lemmas (`Encodable.encode`, `Encodable.encodek`) better than
the declaration itself, whose statement holds none of those formulas. The channel ranks the
namespace parents of the fused head that are declarations themselves, each by the reciprocal
ranks of its members there, and is fused like any channel (weight `parent`, depth PARENT_DEPTH).
"""

from __future__ import annotations

from collections import defaultdict

PARENT_DEPTH = 20  # members counted: the fused head's first PARENT_DEPTH names
PARENT_K = 10  # a member at fused rank r adds 1 / (PARENT_K + r)


def parent_of(name: str) -> str | None:
    """`Encodable.encodek` -> Encodable; None for a name without a namespace."""
    head, dot, _ = name.rpartition(".")
    return head if dot and head else None


def parent_hits(head: list[str], known, depth: int = PARENT_DEPTH) -> list[tuple[str, float]]:
    """(parent, score), best first (ties by name): the parents in `known` (a set of declaration
    names) of the first `depth` names of `head`, scored by their members' reciprocal ranks."""
    score: dict[str, float] = defaultdict(float)
    for rank, name in enumerate(head[:depth], start=1):
        parent = parent_of(name)
        if parent is not None and parent in known:
            score[parent] += 1.0 / (PARENT_K + rank)
    return sorted(score.items(), key=lambda x: (-x[1], x[0]))
