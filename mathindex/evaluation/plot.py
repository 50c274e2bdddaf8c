"""The release notes' plots, drawn with matplotlib on its Agg canvas: the headline metrics over the
last published releases, and each suite's metrics per query style before and after.

Each plot is written as SVG and PNG under the same stem. Output is deterministic: the same inputs
give the same bytes (a fixed `svg.hashsalt`, no date or software version in the metadata, text kept
as text in the SVG and fonts from matplotlib's bundled DejaVu Sans), so no release id, time or other
build-dependent value may go into a plot.
"""

from __future__ import annotations

from pathlib import Path

from mathindex.evaluation.gate import GateReport
from mathindex.evaluation.notes import style_rows

HISTORY = "history"  # bench/history.{svg,png}
STYLES = "styles"  # bench/styles.{svg,png}
FORMATS = ("svg", "png")
BEFORE, AFTER, FAILED = "#9e9e9e", "#1f77b4", "#c62828"
THIS_RELEASE = "this release"
_RC = {
    "svg.hashsalt": "mathindex",  # clip-path and other ids derive from it, not from a random uuid
    "svg.fonttype": "none",  # text stays text (searchable, smaller); no glyph paths
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": False,
}
_METADATA = {"svg": {"Date": None}, "png": {"Software": None}}


def write_plots(directory: Path, history: list[tuple[str, dict[str, float]]], suites: dict[str, dict],
                before_suites: dict[str, dict] | None, report: GateReport) -> list[str]:  # fmt: skip
    """Writes `history.{svg,png}` (when `history` holds a headline metric) and `styles.{svg,png}`
    (when a suite has metrics) into `directory`; returns the stems written. `history` is
    (label, headline metrics) per release, oldest first, this release last."""
    written = []
    if any(head for _, head in history):
        _save(history_figure(history), directory / HISTORY)
        written.append(HISTORY)
    if any(s.get("metrics") for s in suites.values()):
        _save(styles_figure(suites, before_suites or {}, report), directory / STYLES)
        written.append(STYLES)
    return written


def history_figure(history: list[tuple[str, dict[str, float]]]):
    """One line per headline metric (`suite/metric`) across the releases, in points."""
    from matplotlib.figure import Figure  # heavy: plots are drawn only for release notes

    with _style():
        fig = Figure(figsize=(7.5, 3.6), layout="constrained")
        ax = fig.add_subplot()
        labels = [label for label, _ in history]
        for metric in sorted({m for _, head in history for m in head}):
            ys = [head.get(metric, float("nan")) for _, head in history]
            ax.plot(range(len(history)), ys, marker="o", label=metric)
        ax.set_xticks(range(len(history)), labels, rotation=30, ha="right")
        ax.set_xlim(-0.5, len(history) - 0.5)
        ax.set_ylabel("points (0-100)")
        earlier = len(history) - 1
        ax.set_title(f"Headline metrics over the last {earlier} published releases and this one" if earlier
                     else "Headline metrics of this release (no earlier published release)")  # fmt: skip
        ax.grid(axis="y", color="#e0e0e0")
        fig.legend(loc="outside right upper", fontsize=8)
    return fig


def styles_figure(suites: dict[str, dict], before_suites: dict[str, dict], report: GateReport):
    """A panel per suite and metric: one pair of bars per query style (all, each style, the fair
    subset), the baseline release's in grey, this release's in blue; an `all` bar whose headline
    metric failed the gate is red."""
    from matplotlib.figure import Figure  # heavy: plots are drawn only for release notes

    failed = {c.metric for c in report.checks if not c.ok}
    panels = [(name, metric) for name, s in sorted(suites.items()) if s.get("metrics") for metric in s["metrics"]]
    bars = max(len(style_rows(suites[name], before_suites.get(name))) for name, _ in panels)
    ncols = min(len(panels), 3)
    nrows = -(-len(panels) // ncols)
    with _style():
        fig = Figure(figsize=(3.2 * ncols, (0.5 + 0.34 * bars) * nrows + 0.6), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False).flatten()
        for ax, (name, metric) in zip(axes, panels):
            _style_panel(ax, style_rows(suites[name], before_suites.get(name)), metric, f"{name}/{metric}" in failed)
            ax.set_title(f"{name}: {metric}")
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        fig.legend(handles=[_patch(BEFORE, "before (baseline release)"), _patch(AFTER, "after (this release)")],
                   loc="outside lower center", ncols=2, fontsize=8)  # fmt: skip
    return fig


def _style_panel(ax, rows: list[tuple[str, int, dict, dict]], metric: str, failed: bool) -> None:
    height = 0.4
    for i, (label, _, after, before) in enumerate(rows):
        for value, colour, dy in ((before.get(metric), BEFORE, -height / 2), (after.get(metric), AFTER, height / 2)):
            if value is None:
                continue
            colour = FAILED if failed and label == "all" and colour == AFTER else colour
            ax.barh(i + dy, value, height=height, color=colour)
            ax.text(min(value, 100) + 1, i + dy, f"{value:.2f}", va="center", fontsize=7)
    ax.set_yticks(range(len(rows)), [label for label, *_ in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("points")


def _patch(colour: str, label: str):
    from matplotlib.patches import Patch  # heavy: plots are drawn only for release notes

    return Patch(color=colour, label=label)


def _style():
    import matplotlib  # heavy: plots are drawn only for release notes

    return matplotlib.rc_context(_RC)


def _save(fig, stem: Path) -> None:
    """The figure as `<stem>.svg` and `<stem>.png`, through the Agg canvas (no pyplot, no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # heavy: plots are drawn only for release notes

    FigureCanvasAgg(fig)
    with _style():
        for fmt in FORMATS:
            fig.savefig(stem.with_suffix(f".{fmt}"), format=fmt, metadata=_METADATA[fmt])
