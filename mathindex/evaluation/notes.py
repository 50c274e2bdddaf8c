"""Release notes: Markdown a maintainer can act on. Against the baseline release (the one gated
against; for reembed, the source release): what inputs changed, each headline metric and each
suite's per-style metrics before and after (and beside other tools' published figures, when the
suite has them: reported, never gated), the queries that fell and rose most with their ranks, and
the row count of each table before and after. Then the inputs, stages and indexes as tables.

`render_notes` reads the new release's manifest and the baseline's `Baseline`, both typed
(`schemas.manifest.Manifest`), so both sides are compared in the same shape.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from mathindex.evaluation.external import ExternalRow, external_rows
from mathindex.evaluation.gate import GateReport
from mathindex.schemas.manifest import ExternalFigure, InformaliserEntry, Manifest, PremisesEntry, SuitePin

MOVES_SHOWN = 10  # queries listed as fell most and rose most
_QUERY_CHARS = 90


@dataclass(frozen=True)
class Baseline:
    """The release the notes compare with: its manifest, its `bench/metrics.json` suites (None
    when unreadable) and its `bench_results` rows (None when the release holds none)."""

    release_id: str
    manifest: Manifest
    suites: dict | None = None
    results: list[dict] | None = None


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.2f}"


def _delta(v) -> str:
    return "—" if v is None else f"{v:+.2f}"


def _cell(text: object) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped, long text cut."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= _QUERY_CHARS else text[: _QUERY_CHARS - 1] + "…"


def render_notes(manifest: Manifest, suites: dict[str, dict], gate: GateReport, *, indexes: dict[str, dict],
                 errors_by_stage: dict[str, int], results: list[dict] | None = None, before: Baseline | None = None,
                 title: str = "Release", plots: Sequence[str] = ()) -> str:  # fmt: skip
    """The notes of the release `manifest` describes (its premise-selection table from the
    manifest's `premises`): `suites` its bench/metrics.json suites, `results` its bench_results
    rows, `before` the baseline release (None when gated against bench/baselines), `plots` the
    stems `plot.write_plots` wrote under bench/."""
    changed = suite_changes(manifest.bench.suites, _pins(before))
    lines = _header(manifest, gate, changed, title)
    lines += _changes_section(manifest, before, manifest.bench.baseline)
    lines += recipe_section(manifest, before.manifest if before else None)
    lines += _headline_section(gate, plots)
    externals = {p.name: p.external for p in manifest.bench.suites if p.external is not None}
    for name, s in sorted(suites.items()):
        note = " (the suite changed since the baseline release)" if name in changed else ""
        lines += ["", f"## Suite `{name}`: {s.get('queries', 0)} queries, by query style{note}", ""]
        lines += _style_table(s, (before.suites or {}).get(name) if before else None)
        if name in externals and "metrics" in s:
            lines += ["", *external_section(s, externals[name].figures)]
    if "styles" in plots:
        lines += ["", "![each suite's metrics per query style, before and after](bench/styles.svg)",
                  "", "(also as [PNG](bench/styles.png))"]  # fmt: skip
    lines += _moves_section(results, before)
    if manifest.premises:
        lines += ["", *premise_section(manifest.premises)]
    lines += _inputs_section(manifest)
    lines += _tables_section(manifest.row_counts, before.manifest.row_counts if before else None)
    lines += ["", "## Errors by stage", ""]
    lines += [f"- {k}: {v:,}" for k, v in sorted(errors_by_stage.items())] or ["- none"]
    lines += ["", "## Stages", ""]
    lines += [f"- {k}: {v}" for k, v in manifest.stages.items()]
    lines += _indexes_section(indexes)
    return "\n".join(lines) + "\n"


def _pins(before: Baseline | None) -> list[SuitePin] | None:
    return None if before is None else before.manifest.bench.suites


def _header(manifest: Manifest, gate: GateReport, changed: dict[str, str], title: str) -> list[str]:
    lines = [f"# {title} {manifest.release_id}", "", *_gate_lines(gate, manifest.bench.baseline), ""]
    if changed:
        lines += ["**Suites changed since the baseline release** (their before and after figures come from different "
                  "query sets; a drop there is not by itself a search regression):", ""]
        lines += [f"- `{name}`: {what}" for name, what in sorted(changed.items())] + [""]
    return lines


def _changes_section(manifest: Manifest, before: Baseline | None, baseline_from: str) -> list[str]:
    lines = ["## Changes against the baseline release", ""]
    if before is None:  # a first release on its root: `tasks.bench.committed_source` names the files
        against = baseline_from if baseline_from.startswith("committed") else "committed bench/baselines"
        return lines + [f"No baseline release: the first release on this root, gated against the {against}; "
                        "no inputs to compare.", ""]
    changes = input_changes(manifest, before.manifest)
    if not changes:
        return lines + [f"Nothing among the inputs: the corpus pins, suites, model and code version are those of "
                        f"release {before.release_id}.", ""]  # fmt: skip
    return lines + [f"Against release {before.release_id}:", ""] + [f"- {c}" for c in changes] + [""]


def input_changes(now: Manifest, before: Manifest) -> list[str]:
    """What differs between two manifests' inputs: corpus pins (content sha256, commit, file
    count; corpora added or dropped), suites (sha256; added or dropped), the embedding model (name,
    revision, the root-relative reference), the informaliser (backend, model, prompt version; when
    both record one) and the code version. Empty: the same inputs."""
    out = []
    old = {c.name: c for c in before.corpora}
    new = {c.name: c for c in now.corpora}
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            out.append(f"corpus `{name}`: {'added' if a is None else 'dropped'}")
            continue
        diffs = [f"{k} {_short(getattr(a, k))} -> {_short(getattr(b, k))}" for k in ("sha256", "commit", "files")
                 if getattr(a, k) != getattr(b, k)]  # fmt: skip
        if diffs:
            out.append(f"corpus `{name}`: " + ", ".join(diffs))
    old_s = {p.name for p in before.bench.suites}
    new_s = {p.name for p in now.bench.suites}
    out += [f"suite `{n}`: added" for n in sorted(new_s - old_s)] + [f"suite `{n}`: dropped" for n in sorted(old_s - new_s)]
    changed = suite_changes(now.bench.suites, before.bench.suites)
    out += [f"suite `{n}`: {what}" for n, what in sorted(changed.items())]
    out += [f"suite `{n}`: {what}" for n, what in external_changes(now.bench.suites, before.bench.suites)]
    a, b = _model(before), _model(now)
    if a != b:
        out.append(f"embedding model: {a} -> {b}")
    a, b = _recipe(before), _recipe(now)
    if a != b:
        out.append(f"embedder recipe: {a or 'none'} -> {b or 'none'}")
    a, b = _informaliser(before), _informaliser(now)
    if a != b and None not in (a, b):
        out.append(f"informaliser: {a} -> {b}")
    if before.code_version != now.code_version:
        out.append(f"code version: {before.code_version} -> {now.code_version}")
    return out


def _recipe(manifest: Manifest) -> str | None:
    """`name (recipe key12, holdout key12)` of a manifest's embedder recipe; None when it followed none."""
    r = manifest.embedder_recipe
    return None if r is None else f"`{r.name}` (recipe {r.recipe_key[:12]}…, held-out suites {r.holdout_key[:12]}…)"


_RECIPE_SOURCES = {
    "installed": "an installed model trained from the same recipe and held-out suites (no training)",
    "published": "the published release's model, made by the same recipe and held-out suites (no training)",
}


def recipe_section(now: Manifest, before: Manifest | None) -> list[str]:
    """How the sources file's embedder recipe gave the model (trained now, an installed model, the
    published release's) and, when the model is not the baseline release's, the re-embedding: why,
    and the recipe's fields before and after. Nothing when the release followed no recipe."""
    r = now.embedder_recipe
    if r is None:
        return []
    if r.source == "trained":
        resumed = f", resumed at step {r.resumed_from}" if r.resumed_from else ""
        pairs = ", ".join(f"{k} {v:,}" for k, v in (r.pairs or {}).items())
        how = f"trained by this release ({r.seconds or 0:,.0f} s of training{resumed}; pairs {pairs})"
    else:
        how = _RECIPE_SOURCES[r.source]
        if r.model_tables_key and r.model_tables_key != r.tables_key:
            how += ", trained on earlier tables than this release's"
    lines = ["## Embedder recipe", "", f"Model `{r.model}` from the sources file's recipe `{r.name}` (recipe "
             f"{r.recipe_key[:12]}…, base {_cell(r.base)}): {how}. Model card: `{r.model}/README.md`.", ""]
    if r.corpora:
        read = ", ".join(f"`{c.name}` ({c.kind}, {c.files:,} files, sha256 {c.sha256[:12]}…)" for c in r.corpora)
        lines += [f"Training corpora (mined for pairs, not indexed): {read}.", ""]
    if before is None or _model(before) == _model(now):
        return lines
    old = before.embedder_recipe
    if old is None:
        why = "the release now follows an embedder recipe"
    elif old.recipe_key != r.recipe_key:
        why = "the embedder recipe changed"
    elif old.holdout_key != r.holdout_key:
        why = "the suites kept out of training changed"
    else:
        why = "the recipe's model changed"
    lines += [f"**Re-embedding**: {why}, so every text was embedded again with {_model(now)} (before: "
              f"{_model(before)}); the metrics below are the new model's against the baseline release's.", ""]
    if old is not None and old.recipe != r.recipe:
        lines += ["| recipe field | before | after |", "|---|---|---|"]
        lines += [f"| {k} | {_cell(old.recipe.get(k, '—'))} | {_cell(r.recipe.get(k, '—'))} |"
                  for k in sorted(old.recipe.keys() | r.recipe.keys()) if old.recipe.get(k) != r.recipe.get(k)]
        lines.append("")
    return lines


def _informaliser(manifest: Manifest) -> str | None:
    """`backend model (prompt version)` of a manifest's informaliser; None when it records none."""
    e = manifest.informaliser
    return None if e is None else _cell(f"{e.backend} {e.model} ({e.prompt_version})")


def _short(v) -> str:
    return f"{v[:12]}…" if isinstance(v, str) and len(v) > 16 else str(v)


def _model(manifest: Manifest) -> str:
    """`name@rev12 (reference)`: the embedder a manifest records and where its model lives."""
    e = manifest.embedder
    ref = manifest.vector_index.model or "the bundled model"
    return f"{e.name}@{e.revision[:12]} ({ref})"


def _headline_section(gate: GateReport, plots: Sequence[str]) -> list[str]:
    lines = ["## Headline metrics (points, 0–100)", ""]
    if "history" in plots:
        lines += ["![headline metrics over the last published releases and this one](bench/history.svg)", "",
                  "(also as [PNG](bench/history.png))", ""]  # fmt: skip
    lines += ["| metric | before | after | change | status |", "|---|---:|---:|---:|---|"]
    for c in gate.checks:
        status = "ok" if c.ok else f"**FAIL**: {c.note}"
        if c.ok and c.note:
            status = c.note
        lines.append(f"| {c.metric} | {_fmt(c.baseline)} | {_fmt(c.current)} | {_delta(c.delta)} | {status} |")
    return lines


def _gate_lines(gate: GateReport, baseline_from: str) -> list[str]:
    """The verdict (PASSED, FAILED, or NOT GATED for `--no-gate`, with what the gate would have
    said) and each failure of the whole comparison (no suite, no baseline)."""
    if not gate.gated:
        return [f"Gate: **NOT GATED** (`--no-gate`: published without the gate; baseline: {baseline_from}).", "",
                f"Had it been gated: {gate.verdict()}."]
    verdict = "PASSED" if gate.passed else "FAILED"
    lines = [f"Gate: **{verdict}** (a headline metric may fall at most {gate.tolerance:.1f} points; baseline: {baseline_from})."]
    return lines + ([""] if gate.problems else []) + [f"- **FAIL**: {p}" for p in gate.problems]


def premise_section(p: PremisesEntry) -> list[str]:
    """The premise-selection figures: each method on the held-out files' theorems."""
    files = p.split.files
    n = p.suite.queries
    scored = n if p.suite.evaluated is None else p.suite.evaluated
    which = f"{n} theorems" if scored == n else f"a seeded sample of {scored} of the {n} theorems"
    out = [f"## Premise selection: {which} of {p.suite.files} held-out files", "",
           f"Split seed {p.split.seed}, by file: " + ", ".join(f"{k} {v}" for k, v in sorted(files.items()))
           + (f" files; weights fitted on {p.tune_queries} tune theorems: " if p.fitted
              else f" files; default weights ({p.tune_queries} tune theorems, too few to fit): ")
           + ", ".join(f"{k} {v:g}" for k, v in p.weights.items()) + ".", ""]
    if c := p.carried:
        out += [f"**Carried, not measured in this release**: the weights and figures are those of premise build "
                f"{c.measured_build}, with the same code, model and seed; since it, {c.changed_files} training "
                f"files holding {c.changed_declarations} of {c.declarations} declarations ({100 * c.share:.2f} %) "
                f"changed, and no held-out or tune theorem. The priors and the statement index are this release's.", ""]
    if not p.figures:
        return out + ["No held-out theorem with a gold set."]
    out += ["| method | R@10 | R@32 | MRR@32 |", "|---|---:|---:|---:|"]
    for name, m in p.figures.items():
        out.append(f"| {name} | {_fmt(m['recall@10'])} | {_fmt(m['recall@32'])} | {_fmt(m['mrr@32'])} |")
    return out


def suite_changes(current: list[SuitePin], before: list[SuitePin] | None) -> dict[str, str]:
    """Suite name -> how its file differs from the baseline release's pin, for the suites both ran:
    a different sha256, or no pin in the baseline (a release from before suites were pinned).
    `before` None (no baseline release) gives nothing to compare."""
    if before is None:
        return {}
    old = {p.name: p.sha256 for p in before}
    out = {}
    for pin in current:
        name, new = pin.name, pin.sha256
        if name not in old or old[name] == new:
            continue
        if old[name] is None:
            out[name] = "the baseline release did not pin it, so whether it changed is unknown"
        else:
            out[name] = f"changed (sha256 {old[name][:12]}… -> {(new or 'unreadable')[:12]}…)"
    return out


def external_changes(current: list[SuitePin], before: list[SuitePin]) -> list[tuple[str, str]]:
    """(suite, what) for the suites both ran whose external figures were added, dropped or changed
    (their file's sha256): the notes' external row then compares with other figures."""
    old = {p.name: p.external for p in before}
    out = []
    for pin in sorted(current, key=lambda p: p.name):
        if pin.name not in old:
            continue
        a, b = old[pin.name], pin.external
        if (a is None) != (b is None):
            out.append((pin.name, f"external figures {'added' if a is None else 'dropped'}"))
        elif a is not None and b is not None and a.sha256 != b.sha256:
            out.append((pin.name, f"external figures changed (sha256 {a.sha256[:12]}… -> {b.sha256[:12]}…)"))
    return out


def style_rows(s: dict, before: dict | None) -> list[tuple[str, int, dict, dict]]:
    """(label, queries, metrics after, metrics before) for all queries, each query style and the
    fair subset of a suite that ran; the before metrics are empty where the baseline has none."""
    before = before if before and "metrics" in before else {}
    rows = [("all", s["queries"], s["metrics"], before.get("metrics", {}))]
    rows += [(style, m["queries"], m, before.get("by_style", {}).get(style, {})) for style, m in s.get("by_style", {}).items()]
    if "fair" in s:
        rows.append(("fair subset", s["fair"]["queries"], s["fair"], before.get("fair", {})))
    return rows


def _style_table(s: dict, before: dict | None) -> list[str]:
    """One row per query style (and the fair subset): after, or before | after | change when known."""
    if "metrics" not in s:
        return [f"Not run: {s.get('error', 'no metrics')}"]
    names = list(s["metrics"])
    rows = [("*fair subset*" if label == "fair subset" else label, n, m, b) for label, n, m, b in style_rows(s, before)]
    if before is None or "metrics" not in before:
        out = ["| style | queries | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
        return out + [f"| {label} | {n} | " + " | ".join(_fmt(m[x]) for x in names) + " |" for label, n, m, _ in rows]
    head = " | ".join(f"{x} before | {x} after | change" for x in names)
    out = [f"| style | queries | {head} |", "|---|---:|" + "---:|---:|---:|" * len(names)]
    for label, n, m, b in rows:
        cells = " | ".join(f"{_fmt(b.get(x))} | {_fmt(m[x])} | {_delta(None if b.get(x) is None else m[x] - b[x])}" for x in names)
        out.append(f"| {label} | {n} | {cells} |")
    return out


def external_section(s: dict, figures: dict[str, list[ExternalFigure]]) -> list[str]:
    """A suite's results beside other tools' published figures (`external.external_rows`): a row per
    style and metric (ours, the best other tool, the difference, the others given), a line with the
    source where theirs is higher, where each best figure comes from, and what could not be compared.
    Reported, never gated."""
    rows, skipped = external_rows(s, figures)
    out = ["### Beside other tools (published figures; reported, not gated)", "",
           "Each row: the best published figure of another tool on that query style, beside ours. Their figures "
           "come from their own runs, query sets and corpora (each source's note says which), so the comparison "
           "is approximate."]  # fmt: skip
    if rows:
        out += ["", "| style | queries | metric | ours | best other tool | theirs | difference | others |",
                "|---|---:|---|---:|---|---:|---:|---|"]  # fmt: skip
        out += [f"| {_safe(r.style)} | {r.queries} | {r.metric} | {_fmt(r.ours)} | {_link(r.best)} | {_fmt(r.best.value)} "
                f"| {_delta(r.difference)} | {', '.join(f'{_safe(o.system)} {_fmt(o.value)}' for o in r.others) or '—'} |"
                for r in rows]  # fmt: skip
    behind = [r for r in rows if r.difference < 0]
    if behind:
        out += [""] + [f"- On {_where(r.style)}, {_safe(r.best.system)} does better ({_fmt(r.best.value)} vs our "
                       f"{_fmt(r.ours)} {r.metric}): <{r.best.url}>" for r in behind]  # fmt: skip
    if rows:
        out += ["", "Where each best figure comes from:", ""] + [_source_line(r) for r in rows]
    if skipped:
        out += ["", "Not compared:", ""] + [f"- {_safe(x)}" for x in skipped]
    return out


def _where(style: str) -> str:
    return {"all": "all queries", "fair subset": "the fair subset"}.get(style) or _safe(style)


def _source_line(r: ExternalRow) -> str:
    f = r.best
    note = f": {_safe(f.note)}" if f.note.strip() else ""
    via = f" (read in <{f.via}>)" if f.via else ""
    return f"- {_safe(r.style)}, {r.metric}, {_safe(f.system)} {_fmt(f.value)}{note}; <{f.url}>{via}"


def _safe(text: object) -> str:
    """Text from a file or a query, safe in Markdown (a table cell or a list item): one line, HTML
    escaped, pipes and brackets escaped."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return text.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")


def _link(f: ExternalFigure) -> str:
    return f"[{_safe(f.system)}]({f.url})"  # the URL's characters are checked by the schema


def _reciprocal(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


def rank_moves(after: list[dict], before: list[dict], n: int = MOVES_SHOWN) -> dict:
    """The queries of two `bench_results` tables (rows as dicts) whose rank of the first gold hit
    changed, measured by the change of its reciprocal (0 outside the top k: what MRR averages):
    `fell` and `rose`, the n that moved most (ties by suite and query id), and the counts
    `compared`, `fell_total`, `rose_total`, `new` (only after) and `gone` (only before).
    The SQL macro `bench_compare` of search.duckdb measures the same."""
    old = {(r["suite"], r["query_id"]): r for r in before}
    keys_after = {(r["suite"], r["query_id"]) for r in after}
    moved = []
    for r in after:
        b = old.get((r["suite"], r["query_id"]))
        if b is not None and b["rank"] != r["rank"]:
            change = round(_reciprocal(r["rank"]) - _reciprocal(b["rank"]), 6)
            moved.append({"suite": r["suite"], "query_id": r["query_id"], "style": r["style"], "query": r["query"],
                          "rank_before": b["rank"], "rank_after": r["rank"], "change": change})  # fmt: skip
    fell = sorted((m for m in moved if m["change"] < 0), key=lambda m: (m["change"], m["suite"], m["query_id"]))
    rose = sorted((m for m in moved if m["change"] > 0), key=lambda m: (-m["change"], m["suite"], m["query_id"]))
    return {"fell": fell[:n], "rose": rose[:n], "fell_total": len(fell), "rose_total": len(rose),
            "compared": len(keys_after & old.keys()), "new": len(keys_after - old.keys()), "gone": len(old.keys() - keys_after)}  # fmt: skip


def _moves_section(results: list[dict] | None, before: Baseline | None) -> list[str]:
    lines = ["", "## Queries that moved most", ""]
    if before is None:
        return lines + ["No baseline release: no per-query ranks to compare."]
    if before.results is None or results is None:
        return lines + [f"Release {before.release_id} holds no per-query results (bench_results): no ranks to compare."]
    m = rank_moves(results, before.results)
    lines.append(f"Rank of the first gold hit per query, against release {before.release_id} (— : none in the top k). "
                 f"{m['compared']} queries in both: {m['fell_total']} fell, {m['rose_total']} rose, "
                 f"{m['compared'] - m['fell_total'] - m['rose_total']} kept their rank; {m['new']} new, {m['gone']} gone.")  # fmt: skip
    for verb in ("fell", "rose"):
        shown, total = len(m[verb]), m[f"{verb}_total"]
        if not shown:
            lines += ["", f"### None {verb}"]
            continue
        lines += ["", f"### The {shown} that {verb} most" + (f" (of {total})" if total > shown else ""), "",
                  "| suite | query id | style | query | rank before | rank after | change of 1/rank |",
                  "|---|---|---|---|---:|---:|---:|"]  # fmt: skip
        lines += [f"| {r['suite']} | {r['query_id']} | {r['style']} | {_cell(r['query'])} | {_rank(r['rank_before'])} "
                  f"| {_rank(r['rank_after'])} | {r['change']:+.3f} |" for r in m[verb]]  # fmt: skip
    return lines


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def _inputs_section(manifest: Manifest) -> list[str]:
    lines = ["", "## Inputs", "", "| corpus | kind | files | pin |", "|---|---|---:|---|"]
    for c in manifest.corpora:
        pin = f"commit {c.commit}, " if c.commit else ""
        lines.append(f"| {c.name} | {c.kind} | {c.files} | {pin}sha256 {c.sha256[:16]}… |")
    pins = manifest.bench.suites
    if pins:
        lines += ["", "| suite | sha256 |", "|---|---|"]
        lines += [f"| {p.name} | {p.sha256 or 'unreadable'} |" for p in sorted(pins, key=lambda p: p.name)]
    lines += ["", f"Embedding model: {_model(manifest)}. Code version: {manifest.code_version}."]
    if manifest.informaliser is not None:
        lines += ["", informaliser_line(manifest.informaliser)]
    return lines


def informaliser_line(entry: InformaliserEntry) -> str:
    """Which informaliser rendered the Lean statements into English, and what it did: rendered now,
    from the cache, fell back to the rules (its endpoint did not answer)."""
    who = f"{entry.backend}, model {_cell(entry.model)}"
    if entry.endpoint:
        who += f" at {_cell(entry.endpoint)}"
    counts = [f"{entry.rendered:,} rendered now", f"{entry.cached:,} from the cache"]
    if entry.endpoint or entry.fell_back:
        counts.append(f"{entry.fell_back:,} fell back to the rules")
    if entry.empty:
        counts.append(f"{entry.empty:,} empty")
    line = f"Informaliser: {who}, prompt {_cell(entry.prompt_version)}: {', '.join(counts)}."
    if entry.no_answer:
        line += f" No request to the endpoint succeeded ({_cell(entry.no_answer)}): those have the rules rendering."
    return line


def _tables_section(after: dict[str, int], before: dict[str, int] | None) -> list[str]:
    lines = ["", "## Tables (rows)", ""]
    if before is None:
        return lines + ["| table | rows |", "|---|---:|"] + [f"| `{k}` | {v:,} |" for k, v in sorted(after.items())]
    lines += ["| table | before | after | change |", "|---|---:|---:|---:|"]
    for name in sorted(after.keys() | before.keys()):
        a, b = after.get(name), before.get(name)
        change = "—" if a is None or b is None else f"{a - b:+,}"
        lines.append(f"| `{name}` | {'—' if b is None else f'{b:,}'} | {'—' if a is None else f'{a:,}'} | {change} |")
    return lines


def _indexes_section(indexes: dict[str, dict]) -> list[str]:
    """One two-column table per index; nested settings flattened to dotted names."""
    lines = ["", "## Indexes"]
    for name, info in sorted(indexes.items()):
        lines += ["", f"### {name}", "", "| property | value |", "|---|---|"]
        lines += [f"| {key} | {_cell(_value(v))} |" for key, v in _flatten(info)]
    return lines


def _flatten(info: dict, prefix: str = "") -> list[tuple[str, object]]:
    out = []
    for key, value in sorted(info.items(), key=lambda kv: str(kv[0])):
        if isinstance(value, dict) and value:
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _value(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v) or "—"
    if isinstance(v, dict):
        return "—"
    return str(v)


def metrics_rows(s: dict) -> list[dict]:
    """A suite's metrics as table rows (all, each query style, the fair subset): style, queries and
    each metric in points, two decimals; a suite that did not run is one row with its error."""
    if "metrics" not in s or not s["metrics"]:
        return [{"style": "all", "queries": 0, "error": s.get("error", "no metrics")}]
    return [{"style": label, "queries": n, **{k: round(v, 2) if isinstance(v, float) else v for k, v in m.items() if k != "queries"}}
            for label, n, m, _ in style_rows(s, None)]
