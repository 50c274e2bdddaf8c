"""Release notes: Markdown with the headline table (before/after), per-style figures and inputs."""

from __future__ import annotations

from mathindex.evaluation.gate import GateReport


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.2f}"


def _delta(v) -> str:
    return "—" if v is None else f"{v:+.2f}"


def render_notes(
    release_id: str,
    gate: GateReport,
    baseline_from: str,
    suites: dict[str, dict],
    corpora: list[dict],
    row_counts: dict[str, int],
    errors_by_stage: dict[str, int],
    stages: dict[str, str],
    indexes: dict[str, dict],
    title: str = "Release",
) -> str:
    verdict = "PASSED" if gate.passed else "FAILED"
    lines = [
        f"# {title} {release_id}",
        "",
        f"Gate: **{verdict}** (a headline metric may fall at most {gate.tolerance:.1f} points; baseline: {baseline_from}).",
        "",
        "## Headline metrics (points, 0–100)",
        "",
        "![headline metrics before and after](bench/metrics.svg)",
        "",
        "| metric | before | after | change | status |",
        "|---|---:|---:|---:|---|",
    ]
    for c in gate.checks:
        status = "ok" if c.ok else f"**FAIL**: {c.note}"
        if c.ok and c.note:
            status = c.note
        lines.append(f"| {c.metric} | {_fmt(c.baseline)} | {_fmt(c.current)} | {_delta(c.delta)} | {status} |")
    for name, s in sorted(suites.items()):
        metric_names = list(s["metrics"])
        lines += ["", f"## Suite `{name}`: {s['queries']} queries, by query style", ""]
        lines.append("| style | queries | " + " | ".join(metric_names) + " |")
        lines.append("|---|---:|" + "---:|" * len(metric_names))
        for style, m in s["by_style"].items():
            lines.append(f"| {style} | {m['queries']} | " + " | ".join(_fmt(m[x]) for x in metric_names) + " |")
        if "fair" in s:
            lines.append(f"| *fair subset* | {s['fair']['queries']} | " + " | ".join(_fmt(s['fair'][x]) for x in metric_names) + " |")
    lines += ["", "## Inputs", "", "| corpus | kind | files | pin |", "|---|---|---:|---|"]
    for c in corpora:
        pin = f"commit {c['commit']}, " if c.get("commit") else ""
        lines.append(f"| {c['name']} | {c['kind']} | {c['files']} | {pin}sha256 {c['sha256'][:16]}… |")
    lines += ["", "## Tables (rows)", ""]
    lines += [f"- `{k}`: {v:,}" for k, v in sorted(row_counts.items())]
    lines += ["", "## Errors by stage", ""]
    lines += [f"- {k}: {v:,}" for k, v in sorted(errors_by_stage.items())] or ["- none"]
    lines += ["", "## Stages", ""]
    lines += [f"- {k}: {v}" for k, v in stages.items()]
    lines += ["", "## Indexes", ""]
    for name, info in sorted(indexes.items()):
        lines.append(f"- {name}: " + ", ".join(f"{k}={v}" for k, v in sorted(info.items())))
    return "\n".join(lines) + "\n"
