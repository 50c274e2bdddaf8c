"""The release flow: pin, extract, informalise, embed, parse formulas, index, tables, premises,
benchmark, store, gate, publish. It reads like the DAG in docs/architecture.md; each step is a task."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
from prefect import flow
from prefect.states import State

from mathindex import __version__
from mathindex.embed.models import pin_model, resolve_precision
from mathindex.flows.finish import (ReleaseOutcome, ReleaseParts, final_state, finish_release, locked_root,
                                    prune_after_publish, publish_artifacts)
from mathindex.flows.progress import StageProgress
from mathindex.schemas.common import ERRORS, concat
from mathindex.schemas.manifest import SuiteSpec
from mathindex.sources import (DEFAULT_SOURCES, check_allowed, load_informaliser, load_sources, pin_source, pin_suite,
                               sources_from_dirs)
from mathindex.store.layout import ReleaseLayout, RootLayout, check_output_root
from mathindex.store.prune import check_keep
from mathindex.store.releases import building, published_release, unique_release_id
from mathindex.tasks.bench import baseline_metrics, gate_release, run_benchmarks
from mathindex.tasks.embed import build_embedding_texts, embed_and_index
from mathindex.tasks.extract import extract_latex, extract_lean, merge_extractions
from mathindex.tasks.formal import formal_index
from mathindex.tasks.formulas import build_formula_index, collect_formulas, parse_formulas
from mathindex.tasks.informalise import informalise_declarations, timeout_s
from mathindex.tasks.premises import premise_index
from mathindex.tasks.search_index import lexical_index, nodes_table, same_as_edges
from mathindex.tasks.store import database_started, write_database, write_tables

SYMPY_BUDGET_S = 2.0
STAGES = ["pin", "extract", "informalise", "embed", "formulas", "formal index", "search index", "tables", "premises",
          "bench", "store", "publish"]


@flow(name="release", log_prints=False)
def release_flow(
    out: str,
    sources_file: str | None = None,
    lean: list[str] | None = None,
    latex: list[str] | None = None,
    suites: list[str] | None = None,
    model: str | None = None,
    no_gate: bool = False,
    precision: str | None = None,
    informaliser: str | None = None,
    keep: int | None = None,
) -> ReleaseOutcome | State:
    """A ReleaseOutcome when the gate passed, else a Failed state carrying it (`finish.final_state`).
    A release with no benchmark suite fails the gate; `no_gate` publishes it ungated all the same
    (the notes and the manifest say "not gated").
    `model`: None (the nightly's default) is the model of the last published release under `out`,
    else the bundled one; `default` is the bundled model; `name@rev16` or a bare `name` is an entry
    of `out/models/`; anything else a model directory, installed into `out/models/` first. The
    manifest records the model relative to the root (`embed.models.pin_model`). `precision`: fp32,
    bf16 or int8 (`embed.base.PRECISIONS`); None follows the last published release. `informaliser`:
    rules or http, over the sources file's `informaliser:` section (`sources.load_informaliser`;
    None: the file's, else rules). `keep`: once published, prune `out` to its `keep` newest releases
    (`store.prune`; None prunes nothing). Holds the lock on `out` for the whole run
    (`finish.locked_root`)."""
    root = check_output_root(out)  # before any build work: a deployment made without MATHINDEX_OUT stops here
    if keep is not None:
        check_keep(keep)
    cache = RootLayout(root).cache
    with locked_root(root), StageProgress(STAGES, desc="release") as progress:
        with progress.stage("pin"):
            sources, suite_specs = resolve_inputs(sources_file, lean or [], latex or [], suites or [])
            informal_spec = resolve_informaliser(sources_file, lean or [], latex or [], informaliser)
            pins = [pin_source(s) for s in sources]
            suite_pins = [pin_suite(s).model_dump() for s in suite_specs]
            embedding_model = pin_model(model, root)
            embed_precision = resolve_precision(precision, root)
            release_id = new_release_id(pins, root)
        with building(root, release_id) as staging:
            with progress.stage("extract"):
                lean_runs = [extract_lean.submit(s, cache) for s in sources if s.spec.kind == "lean"]
                latex_runs = [extract_latex.submit(s) for s in sources if s.spec.kind == "latex"]
                ex = merge_extractions([f.result() for f in lean_runs], [f.result() for f in latex_runs])
            with progress.stage("informalise"):
                informalised = informalise_declarations.with_options(timeout_seconds=timeout_s(informal_spec))(
                    ex.declarations, ex.dependencies, cache, informal_spec)
                informal = informalised.table
            with progress.stage("embed"):
                texts = build_embedding_texts(ex.declarations, informal, ex.statements, ex.descriptions, cache)
                vector = embed_and_index(texts, embedding_model, staging, cache, published_release(root),
                                         precision=embed_precision)
            with progress.stage("formulas"):
                formulas = collect_formulas(ex.formulas, ex.declarations)
                trees, formula_errors = parse_formulas(formulas, SYMPY_BUDGET_S, cache)
                formula_built = build_formula_index(trees, formulas, staging, cache)
            with progress.stage("formal index"):
                formal = formal_index(ex.declarations, ex.dependencies, staging, cache)
            with progress.stage("search index"):
                nodes = nodes_table(ex.declarations, ex.statements, ex.dependencies)
                same_as = same_as_edges(ex.declarations, ex.statements)
                lexical = lexical_index(texts, staging, cache)
            errors = concat([ex.errors, formula_errors], ERRORS)
            with progress.stage("tables"):
                tables = {
                    "declarations": ex.declarations, "dependencies": ex.dependencies, "descriptions": ex.descriptions,
                    "latex_statements": ex.statements, "latex_macros": ex.macros, "formulas": formulas, "formula_trees": trees,
                    "informalisations": informal, "embedding_texts": texts, "nodes": nodes, "same_as": same_as, "errors": errors,
                    "formal_statements": formal.table,
                }  # fmt: skip
                row_counts = write_tables(staging, tables)  # premises and bench read them
                formal_built = formal.index.with_figures(
                    table_bytes=ReleaseLayout(staging).table("formal_statements").stat().st_size)
            with progress.stage("premises"):
                premises = premise_index(staging, ex.declarations, ex.dependencies, vector.channel,
                                         embedding_model.reference, cache, [p.path for p in pins if p.kind == "lean"])
            with progress.stage("bench"), database_started(staging, list(row_counts), published_release(root)) as db:
                bench = run_benchmarks(staging, suite_specs, vector.channel, embedding_model.reference, cache)
                metrics = dict(bench.metrics)
            with progress.stage("store"):
                first = list(row_counts)
                row_counts |= write_tables(staging, {"bench_results": bench.rows})
                write_database(staging, list(row_counts), published_release(root), (db.result(), first))
            with progress.stage("publish"):
                baseline, baseline_from = baseline_metrics(root, [s.name for s in suite_specs])
                verdict = gate_release(metrics, baseline, no_gate)
                parts = ReleaseParts(
                    release_id=release_id, pins=pins, embedder=vector.embedder,
                    vector_index=vector.manifest_entry(), formula_index=formula_built.manifest_entry(),
                    lexical_index=lexical.manifest_entry(), formal_index=formal_built.manifest_entry(),
                    stages=stage_report(ex, trees, errors, progress.seconds), row_counts=row_counts, errors=errors,
                    suites=suite_pins, premises=premises.manifest_entry(), informaliser=informalised.report.model_dump(exclude_none=True),
                )  # fmt: skip
                outcome = finish_release(root, staging, parts, metrics, verdict, baseline_from, before=published_release(root))
                prune_after_publish(root, keep, outcome)
    publish_artifacts(outcome)
    return final_state(outcome)


def resolve_inputs(sources_file: str | None, lean: list[str], latex: list[str], suites: list[str]):
    """Sources and suites: `--lean/--latex` directories, or a sources file (default: the sample)."""
    if lean or latex:
        if sources_file:
            raise ValueError("give either --sources or --lean/--latex directories, not both")
        sources, specs = sources_from_dirs([Path(d) for d in lean], [Path(d) for d in latex]), []
    else:
        sources, specs = load_sources(Path(sources_file) if sources_file else DEFAULT_SOURCES)
    extra = [SuiteSpec(name=Path(s).stem, path=str(Path(s).resolve())) for s in suites]
    for spec in extra:
        check_allowed(f"suite {spec.name!r}", spec.path)
    return sources, specs + extra


def resolve_informaliser(sources_file: str | None, lean: list[str], latex: list[str], backend: str | None):
    """The release's informaliser settings: the sources file's (none with `--lean/--latex`
    directories: the rules), its backend replaced by `backend` when given (`sources.load_informaliser`)."""
    path = None if lean or latex else Path(sources_file) if sources_file else DEFAULT_SOURCES
    return load_informaliser(path, backend)


def new_release_id(pins: list, root: Path) -> str:
    """`<UTC time>-<hash of the pinned inputs and code version>`, unique under `root`
    (`store.unique_release_id`)."""
    h = hashlib.sha256(json.dumps([p.model_dump() for p in pins], sort_keys=True).encode() + __version__.encode())
    return unique_release_id(root, h.hexdigest())


def stage_report(ex, trees: pa.Table, errors: pa.Table, seconds: dict[str, float]) -> dict[str, str]:
    """One line per stage for the manifest and the notes."""
    status = Counter(trees.column("status").to_pylist())
    canon = Counter(trees.column("canonical_status").to_pylist())
    return {
        "extract": f"{ex.declarations.num_rows} declarations, {ex.statements.num_rows} LaTeX statements, "
        f"{ex.formulas.num_rows} LaTeX formulas",
        "formulas": "parse " + ", ".join(f"{k} {v}" for k, v in sorted(status.items()))
        + "; canonical " + ", ".join(f"{k} {v}" for k, v in sorted(canon.items())),
        "errors": f"{errors.num_rows} rows",
        "seconds": ", ".join(f"{k} {v}" for k, v in seconds.items()),
    }  # fmt: skip
