"""Weighted reciprocal-rank fusion with a score-ratio factor (seed 14.8).

Each channel adds weight * factor / (K + rank) for each hit, where factor = score / score of the
channel's rank 1, clipped to [0.5, 1]: an exact match far above the next keeps its margin. Ties
break on the name, so the order is deterministic. A channel can be calibrated per query by how
distinct its head is (`gap_weights`): a flat list, whose rank 1 scores as its rank 10, says nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field


RRF_K = 60
GAP_PREFIX = "gap:"  # weights["gap:formula"] = p: the formula channel's weight times gap_confidence ** p
GAP_DEPTH = 10


@dataclass
class Member:
    """A node folded into another's hit (search/sameas.py): its name, its own fused score and its own
    rank in each channel, as it would have ranked unfolded."""

    name: str
    score: float
    channels: dict[str, int] = field(default_factory=dict)


@dataclass
class Hit:
    """A fused result: the node's name, its fused score, and its rank in each channel. A folded hit
    (nodes that state one fact) also lists the other members (`also`); its score and ranks are then
    the group's, its channels the union of theirs."""

    name: str
    score: float
    channels: dict[str, int] = field(default_factory=dict)
    also: list[Member] = field(default_factory=list)


def best_per_name(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Keeps each name's best-scored entry, in score order (ties by name)."""
    best: dict[str, float] = {}
    for name, score in hits:
        if name not in best or score > best[name]:
            best[name] = score
    return sorted(best.items(), key=lambda x: (-x[1], x[0]))


def gap_confidence(hits: list[tuple[str, float]], depth: int = GAP_DEPTH) -> float:
    """1 - score at rank `depth` / score at rank 1 (the last one when fewer), in [0, 1]: 0 for a
    flat or empty list, near 1 when rank 1 stands far above the rest."""
    if not hits or hits[0][1] <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - hits[min(depth, len(hits)) - 1][1] / hits[0][1]))


def gap_weights(results: dict[str, list[tuple[str, float]]], weights: dict[str, float]) -> dict[str, float]:
    """`weights` with each channel that has a `gap:<channel>` exponent p scaled by its list's
    gap_confidence ** p (weights without such keys come back unchanged)."""
    scaled = dict(weights)
    for key, power in weights.items():
        channel = key[len(GAP_PREFIX):]
        if key.startswith(GAP_PREFIX) and power and channel in results:
            scaled[channel] = weights.get(channel, 1.0) * gap_confidence(results[channel]) ** power
    return scaled


def fused_scores(results: dict[str, list[tuple[str, float]]], weights: dict[str, float],
                 k_rrf: int = RRF_K) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """(each name's fused score, unrounded; its rank in each channel that found it)."""
    ranks: dict[str, dict[str, int]] = defaultdict(dict)
    for channel, hits in results.items():
        for rank, (name, _) in enumerate(hits, start=1):
            ranks[name][channel] = rank
    return fused_totals(results, weights, k_rrf), ranks


def fused_totals(results: dict[str, list[tuple[str, float]]], weights: dict[str, float],
                 k_rrf: int = RRF_K) -> dict[str, float]:
    """Each name's fused score, unrounded (`fused_scores` without the ranks)."""
    total: dict[str, float] = defaultdict(float)
    for channel, hits in results.items():
        if not hits:
            continue
        weight = weights.get(channel, 1.0)
        top = hits[0][1]
        for rank, (name, score) in enumerate(hits, start=1):
            # min(1, max(0.5, score / top)) without the two calls (NaN gives 0.5 as it does there)
            factor = (f if 0.5 <= (f := score / top) <= 1.0 else 1.0 if f > 1.0 else 0.5) if top > 0 else 0.5
            total[name] += weight * factor / (k_rrf + rank)
    return total


class ChannelRanks:
    """`fused_scores`' ranks (name -> {channel: rank} in each list that holds the name), read for
    the names asked only: each channel's positions are indexed on first use, instead of a dict per
    candidate (about 400 a query, most never read). `setdefault` gives the dict of a channel
    outside the lists (the parent channel) to fill."""

    def __init__(self, results: dict[str, list[tuple[str, float]]]):
        self._lists = [(channel, hits) for channel, hits in results.items() if hits]
        self._positions: dict[str, dict[str, int]] = {}
        self._added: dict[str, dict[str, int]] = {}

    def _position(self, channel: str, hits: list[tuple[str, float]]) -> dict[str, int]:
        pos = self._positions.get(channel)
        if pos is None:  # a name listed twice keeps its last rank, as fused_scores' dict
            pos = self._positions[channel] = {name: rank for rank, (name, _) in enumerate(hits, start=1)}
        return pos

    def __getitem__(self, name: str) -> dict[str, int]:
        out = {}
        for channel, hits in self._lists:
            rank = self._position(channel, hits).get(name)
            if rank is not None:
                out[channel] = rank
        out.update(self._added.get(name, {}))
        return out

    def __contains__(self, name: str) -> bool:
        return name in self._added or any(name in self._position(c, hits) for c, hits in self._lists)

    def setdefault(self, name: str, default: dict[str, int]) -> dict[str, int]:
        return self._added.setdefault(name, default)


def fuse(results: dict[str, list[tuple[str, float]]], weights: dict[str, float], k_rrf: int = RRF_K) -> list[Hit]:
    total, ranks = fused_scores(results, weights, k_rrf)
    ordered = sorted(total.items(), key=lambda x: (-x[1], x[0]))
    return [Hit(name=n, score=round(s, 8), channels=dict(sorted(ranks[n].items()))) for n, s in ordered]
