"""A dependency-free SVG bar chart of headline metrics, before (baseline) and after (this release)."""

from __future__ import annotations

from html import escape

from mathindex.evaluation.gate import GateReport

_W, _BAR, _GAP, _LEFT, _TOP = 640, 12, 14, 210, 30


def metrics_svg(report: GateReport, title: str) -> str:
    """One row per headline metric: a grey bar for the baseline, a coloured bar for the release
    (green when the gate accepted it, red when it fell too far); values in points on 0-100."""
    rows = [c for c in report.checks if c.current is not None or c.baseline is not None]
    height = _TOP + len(rows) * (2 * _BAR + _GAP) + 20
    scale = (_W - _LEFT - 60) / 100.0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" font-family="sans-serif" font-size="11">',
        f'<text x="8" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    y = _TOP
    for c in rows:
        out.append(f'<text x="8" y="{y + _BAR + 4}">{escape(c.metric)}</text>')
        for value, colour, dy in ((c.baseline, "#999999", 0), (c.current, "#2e7d32" if c.ok else "#c62828", _BAR)):
            if value is None:
                continue
            w = max(0.0, min(100.0, value)) * scale
            out.append(f'<rect x="{_LEFT}" y="{y + dy}" width="{w:.1f}" height="{_BAR - 1}" fill="{colour}"/>')
            out.append(f'<text x="{_LEFT + w + 4:.1f}" y="{y + dy + _BAR - 2}">{value:.2f}</text>')
        y += 2 * _BAR + _GAP
    out.append(f'<text x="8" y="{height - 6}" fill="#555">grey: before (baseline) · colour: after · points 0–100</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
