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
    before_suites: dict[str, dict] | None = None,
    suite_pins: list[dict] | None = None,
    changed_suites: dict[str, str] | None = None,
    premises: dict | None = None,
) -> str:
    """The notes, the gate's verdict first (`_gate_lines`); each suite's per-style table shows
    `before_suites` (the baseline release's) beside it when given. `suite_pins` (name, path,
    sha256) are listed among the inputs; `changed_suites` (`suite_changes`) are called out under
    the gate line, so a changed gold set is not read as a search regression. `premises`
    (premises.build figures) adds the premise-selection table."""
    lines = [f"# {title} {release_id}", "", *_gate_lines(gate, baseline_from), ""]
    if changed_suites:
        lines += ["**Suites changed since the baseline release** (their before and after figures come from different "
                  "query sets; a drop there is not by itself a search regression):", ""]
        lines += [f"- `{name}`: {what}" for name, what in sorted(changed_suites.items())] + [""]
    lines += [
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
        changed = " (the suite changed since the baseline release)" if name in (changed_suites or {}) else ""
        lines += ["", f"## Suite `{name}`: {s.get('queries', 0)} queries, by query style{changed}", ""]
        lines += _style_table(s, (before_suites or {}).get(name))
    if premises:
        lines += ["", *premise_section(premises)]
    lines += ["", "## Inputs", "", "| corpus | kind | files | pin |", "|---|---|---:|---|"]
    for c in corpora:
        pin = f"commit {c['commit']}, " if c.get("commit") else ""
        lines.append(f"| {c['name']} | {c['kind']} | {c['files']} | {pin}sha256 {c['sha256'][:16]}… |")
    if suite_pins:
        lines += ["", "| suite | sha256 |", "|---|---|"]
        lines += [f"| {p['name']} | {p['sha256'] or 'unreadable'} |" for p in sorted(suite_pins, key=lambda p: p["name"])]
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


def _gate_lines(gate: GateReport, baseline_from: str) -> list[str]:
    """The verdict (PASSED, FAILED, or NOT GATED for `--no-gate`, with what the gate would have
    said) and each failure of the whole comparison (no suite, no baseline)."""
    if not gate.gated:
        return [f"Gate: **NOT GATED** (`--no-gate`: published without the gate; baseline: {baseline_from}).", "",
                f"Had it been gated: {gate.verdict()}."]
    verdict = "PASSED" if gate.passed else "FAILED"
    lines = [f"Gate: **{verdict}** (a headline metric may fall at most {gate.tolerance:.1f} points; baseline: {baseline_from})."]
    return lines + ([""] if gate.problems else []) + [f"- **FAIL**: {p}" for p in gate.problems]


def premise_section(p: dict) -> list[str]:
    """The premise-selection figures: each method on the held-out files' theorems."""
    files = p["split"]["files"]
    n, scored = p["suite"]["queries"], p["suite"].get("evaluated", p["suite"]["queries"])
    which = f"{n} theorems" if scored == n else f"a seeded sample of {scored} of the {n} theorems"
    out = [f"## Premise selection: {which} of {p['suite']['files']} held-out files", "",
           f"Split seed {p['split']['seed']}, by file: " + ", ".join(f"{k} {v}" for k, v in sorted(files.items()))
           + (f" files; weights fitted on {p['tune_queries']} tune theorems: " if p.get("fitted")
              else f" files; default weights ({p['tune_queries']} tune theorems, too few to fit): ")
           + ", ".join(f"{k} {v:g}" for k, v in p["weights"].items()) + ".", ""]
    if not p.get("figures"):
        return out + ["No held-out theorem with a gold set."]
    out += ["| method | R@10 | R@32 | MRR@32 |", "|---|---:|---:|---:|"]
    for name, m in p["figures"].items():
        out.append(f"| {name} | {_fmt(m['recall@10'])} | {_fmt(m['recall@32'])} | {_fmt(m['mrr@32'])} |")
    return out


def suite_changes(current: list[dict], before: list[dict] | None) -> dict[str, str]:
    """Suite name -> how its file differs from the baseline release's pin, for the suites both ran:
    a different sha256, or no pin in the baseline (a release from before suites were pinned).
    `before` None (no baseline release) gives nothing to compare."""
    if before is None:
        return {}
    old = {p["name"]: p.get("sha256") for p in before}
    out = {}
    for pin in current:
        name, new = pin["name"], pin.get("sha256")
        if name not in old or old[name] == new:
            continue
        if old[name] is None:
            out[name] = "the baseline release did not pin it, so whether it changed is unknown"
        else:
            out[name] = f"changed (sha256 {old[name][:12]}… -> {(new or 'unreadable')[:12]}…)"
    return out


def _style_table(s: dict, before: dict | None) -> list[str]:
    """One row per query style (and the fair subset): after, or before | after | change when known."""
    if "metrics" not in s:
        return [f"Not run: {s.get('error', 'no metrics')}"]
    names = list(s["metrics"])
    rows = [("all", s["queries"], s["metrics"], (before or {}).get("metrics", {}))]
    rows += [(style, m["queries"], m, (before or {}).get("by_style", {}).get(style, {})) for style, m in s["by_style"].items()]
    if "fair" in s:
        rows.append(("*fair subset*", s["fair"]["queries"], s["fair"], (before or {}).get("fair", {})))
    if before is None or "metrics" not in before:
        out = ["| style | queries | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
        return out + [f"| {label} | {n} | " + " | ".join(_fmt(m[x]) for x in names) + " |" for label, n, m, _ in rows]
    head = " | ".join(f"{x} before | {x} after | change" for x in names)
    out = [f"| style | queries | {head} |", "|---|---:|" + "---:|---:|---:|" * len(names)]
    for label, n, m, b in rows:
        cells = " | ".join(f"{_fmt(b.get(x))} | {_fmt(m[x])} | {_delta(None if b.get(x) is None else m[x] - b[x])}" for x in names)
        out.append(f"| {label} | {n} | {cells} |")
    return out


def metrics_rows(s: dict) -> list[dict]:
    """A suite's metrics as table rows (all, each query style, the fair subset): style, queries and
    each metric in points, two decimals; a suite that did not run is one row with its error."""
    if "metrics" not in s or not s["metrics"]:
        return [{"style": "all", "queries": 0, "error": s.get("error", "no metrics")}]
    rows = [("all", s["metrics"] | {"queries": s["queries"]})] + list(s.get("by_style", {}).items())
    if "fair" in s:
        rows.append(("fair subset", s["fair"]))
    return [{"style": label, "queries": m.get("queries"), **{k: round(v, 2) if isinstance(v, float) else v for k, v in m.items() if k != "queries"}}
            for label, m in rows]
