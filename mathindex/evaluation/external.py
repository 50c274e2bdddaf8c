"""Other tools' published figures beside ours, per query style: the external baseline row of the
release notes. Reported, never gated: the gate reads only the headline metrics (`bench.headline`)."""

from __future__ import annotations

from dataclasses import dataclass

from mathindex.schemas.manifest import ExternalFigure

WHOLE_SUITE = {"all": "all", "fair": "fair subset"}  # file keys for the whole suite -> the style table's row label


@dataclass(frozen=True)
class ExternalRow:
    """One query style and metric: ours on this release beside the best published figure of
    another tool (`best`); `others` the rest given for that style and metric."""

    style: str
    queries: int
    metric: str
    ours: float
    best: ExternalFigure
    others: tuple[ExternalFigure, ...] = ()

    @property
    def difference(self) -> float:
        """Ours minus theirs, in points: negative where the other tool does better."""
        return round(self.ours - self.best.value, 2)


def external_rows(summary: dict, figures: dict[str, list[ExternalFigure]]) -> tuple[list[ExternalRow], list[str]]:
    """(rows, skipped) for a suite's summary (`run_suite`: metrics, by_style, fair) and its external
    figures: a row per style and metric we also compute, in the style table's order (all, each
    style, fair subset); `skipped` says why each other figure is not compared (a style or a
    metric this suite's results do not have)."""
    ours = _our_rows(summary)
    rows, skipped = [], []
    order = {label: i for i, label in enumerate(ours)}
    for key in sorted(figures, key=lambda k: (order.get(WHOLE_SUITE.get(k, k), len(order)), k)):
        label = WHOLE_SUITE.get(key, key)
        if label not in ours:
            skipped.append(f"{label}: not a query style of this suite's results; "
                           f"{len(figures[key])} published figure(s) not compared")  # fmt: skip
            continue
        queries, metrics = ours[label]
        for metric in sorted({f.metric for f in figures[key]}):
            given = sorted((f for f in figures[key] if f.metric == metric), key=lambda f: (-f.value, f.system))
            if metric not in metrics:
                skipped.append(f"{label}: {metric} is not a metric this suite computes; "
                               f"{', '.join(f.system for f in given)} not compared")  # fmt: skip
                continue
            rows.append(ExternalRow(label, queries, metric, metrics[metric], given[0], tuple(given[1:])))
    return rows, skipped


def _our_rows(summary: dict) -> dict[str, tuple[int, dict[str, float]]]:
    """Row label -> (queries, metrics) for all queries, each style and the fair subset."""
    out = {"all": (summary["queries"], summary["metrics"])}
    for style, m in summary.get("by_style", {}).items():
        out[style] = (m["queries"], {k: v for k, v in m.items() if k != "queries"})
    if "fair" in summary:
        out["fair subset"] = (summary["fair"]["queries"], {k: v for k, v in summary["fair"].items() if k != "queries"})
    return out
