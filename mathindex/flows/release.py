"""The release flow: pin, extract, informalise, embed, parse formulas, index, tables, premises,
benchmark, store, gate, publish. It reads like the DAG in docs/architecture.md; each step is a task."""

from __future__ import annotations

import hashlib
import json
import os
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
from mathindex.flows.recipe import STAGE as RECIPE_STAGE
from mathindex.flows.recipe import embedder_for_recipe, release_stages, resolve_recipe
from mathindex.schemas.common import ERRORS, concat
from mathindex.schemas.manifest import SuiteSpec
from mathindex.sources import (DEFAULT_SOURCES, check_allowed, load_informaliser, load_sources, pin_source, pin_suite,
                               sources_from_dirs)
from mathindex.store.layout import ReleaseLayout, RootLayout, check_output_root
from mathindex.store.prune import check_keep
from mathindex.store.releases import building, published_release, unique_release_id
from mathindex.tasks.bench import baseline_metrics, gate_release, run_benchmarks
from mathindex.tasks.embed import (build_embedding_texts, embed_and_index, embed_in_shards, embedder_spec,
                                   load_release_embedder, shard_texts)
from mathindex.tasks.extract import extract_sources
from mathindex.tasks.formal import formal_in_shards, shard_statements
from mathindex.tasks.formulas import build_formula_index, collect_formulas, parse_in_shards, shard_formulas
from mathindex.tasks.informalise import informalise_in_shards
from mathindex.tasks.premises import premises_in_shards, shard_goals
from mathindex.tasks.search_index import lexical_in_shards, nodes_table, same_as_edges, token_shard_texts
from mathindex.tasks.shards import runner_is_local
from mathindex.tasks.spill import drop_spilled, spilled
from mathindex.tasks.store import database_started, write_database, write_tables

SYMPY_BUDGET_S = 2.0
DASK_ADDRESS_ENV = "MATHINDEX_DASK_ADDRESS"  # the scheduler a deployment's flow runs submit their tasks to
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
    (`finish.locked_root`). A sources file's `embedder:` recipe, when `model` is None, makes the
    model instead: found on the root or trained before embedding (`flows.recipe`)."""
    root = check_output_root(out)  # before any build work: a deployment made without MATHINDEX_OUT stops here
    if keep is not None:
        check_keep(keep)
    cache = RootLayout(root).cache
    recipe = resolve_recipe(sources_file, lean or [], latex or [], model)  # the sources file's embedder recipe, if any
    trained = None
    with locked_root(root), StageProgress(release_stages(STAGES, recipe), desc="release") as progress:
        with progress.stage("pin"):
            sources, suite_specs = resolve_inputs(sources_file, lean or [], latex or [], suites or [])
            informal_spec = resolve_informaliser(sources_file, lean or [], latex or [], informaliser)
            pins = [pin_source(s) for s in sources]
            suite_pins = [pin_suite(s).model_dump() for s in suite_specs]
            embedding_model = pin_model(model, root) if recipe is None else None  # else the embedder stage's
            embed_precision = resolve_precision(precision, root)
            release_id = new_release_id(pins, root)
        with building(root, release_id) as staging:
            with progress.stage("extract"):
                ex = spilled(staging, "extracted", extract_sources(sources, cache, local=runner_is_local()))
            with progress.stage("informalise"):
                informalised = spilled(staging, "informalised",
                                       informalise_in_shards(ex.declarations, ex.dependencies, cache, informal_spec))
                informal = informalised.table
            texts = None
            if recipe is not None:
                with progress.stage(RECIPE_STAGE):
                    texts = spilled(staging, "embedding_texts", build_embedding_texts(
                        ex.declarations, informal, ex.statements, ex.descriptions, cache))
                    trained = embedder_for_recipe(recipe, root, {"declarations": ex.declarations, "embedding_texts": texts,
                                                                 "latex_statements": ex.statements},
                                                  suite_specs, pins, cache, release_id, informal_spec)
                    embedding_model = trained.pin
            with progress.stage("embed"):
                if texts is None:
                    texts = spilled(staging, "embedding_texts", build_embedding_texts(
                        ex.declarations, informal, ex.statements, ex.descriptions, cache))
                spec = embedder_spec(embedding_model, cache, embed_precision, local=runner_is_local())
                embedder = load_release_embedder(spec)
                sharded = embed_in_shards(texts, embedder, spec, cache, published_release(root), shard_texts())
                vector = embed_and_index(texts, embedding_model, staging, cache, published_release(root),
                                         precision=embed_precision, embedder=embedder, sharded=sharded,
                                         runner="local" if runner_is_local() else "dask")
            with progress.stage("formulas"):
                formulas = spilled(staging, "formulas", collect_formulas(ex.formulas, ex.declarations))
                trees, formula_errors = parse_in_shards(formulas, SYMPY_BUDGET_S, cache, shard_formulas())
                trees = spilled(staging, "formula_trees", trees)
                formula_built = build_formula_index(trees, formulas, staging, cache)
            with progress.stage("formal index"):
                lean_roots = [(s.root, s.spec.name) for s in sources if s.spec.kind == "lean"]
                formal = spilled(staging, "formal", formal_in_shards(ex.declarations, ex.dependencies, staging, cache,
                                                                     lean_roots, shard_statements()))
            with progress.stage("search index"):
                nodes = spilled(staging, "nodes", nodes_table(ex.declarations, ex.statements, ex.dependencies, ex.citations))
                same_as = same_as_edges(ex.declarations, ex.statements)
                lexical = lexical_in_shards(texts, staging, cache, token_shard_texts())
            errors = concat([ex.errors, formula_errors], ERRORS)
            with progress.stage("tables"):
                tables = {
                    "declarations": ex.declarations, "dependencies": ex.dependencies, "descriptions": ex.descriptions,
                    "citations": ex.citations, "latex_statements": ex.statements, "latex_macros": ex.macros, "formulas": formulas, "formula_trees": trees,
                    "informalisations": informal, "embedding_texts": texts, "nodes": nodes, "same_as": same_as, "errors": errors,
                    "formal_statements": formal.table,
                }  # fmt: skip
                row_counts = write_tables(staging, tables)  # premises and bench read them
                formal_built = formal.index.with_figures(
                    table_bytes=ReleaseLayout(staging).table("formal_statements").stat().st_size)
            with progress.stage("premises"):
                premises = premises_in_shards(staging, ex.declarations, ex.dependencies, vector.channel,
                                              spec.named(embedder), embedding_model.reference, cache,
                                              [p.path for p in pins if p.kind == "lean"], shard_goals())
            with progress.stage("bench"), database_started(staging, list(row_counts), published_release(root)) as db:
                bench = run_benchmarks(staging, suite_specs, vector.channel, embedding_model.reference, cache)
                metrics = dict(bench.metrics)
            with progress.stage("store"):
                first = list(row_counts)
                row_counts |= write_tables(staging, {"bench_results": bench.rows})
                write_database(staging, list(row_counts), published_release(root), (db.result(), first))
            with progress.stage("publish"):
                drop_spilled(staging)
                baseline, baseline_from = baseline_metrics(root, [s.name for s in suite_specs])
                verdict = gate_release(metrics, baseline, no_gate)
                parts = ReleaseParts(
                    release_id=release_id, pins=pins, embedder=vector.embedder,
                    vector_index=vector.manifest_entry(), formula_index=formula_built.manifest_entry(),
                    lexical_index=lexical.manifest_entry(), formal_index=formal_built.manifest_entry(),
                    stages=stage_report(ex, trees, errors, progress), row_counts=row_counts, errors=errors,
                    suites=suite_pins, premises=premises.manifest_entry(), informaliser=informalised.report.model_dump(exclude_none=True),
                    embedder_recipe=trained.entry if trained else None,
                )  # fmt: skip
                outcome = finish_release(root, staging, parts, metrics, verdict, baseline_from, before=published_release(root))
                prune_after_publish(root, keep, outcome)
    publish_artifacts(outcome)
    return final_state(outcome)


def cluster_runner(address: str | None = None):
    """prefect-dask's task runner on the Dask scheduler at `address`, else at $MATHINDEX_DASK_ADDRESS
    (how a deployment's job variables point the nightly at a cluster: docs/cluster.md); None when
    neither is given (the flow's own thread pool)."""
    address = address or os.environ.get(DASK_ADDRESS_ENV)
    if not address:
        return None
    from prefect_dask import DaskTaskRunner  # heavy, optional: loads dask.distributed (~0.3 s), for a cluster only

    return DaskTaskRunner(address=address)


if (_runner := cluster_runner()) is not None:  # a deployment's flow run, its job variables naming a scheduler
    release_flow = release_flow.with_options(task_runner=_runner)


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


def stage_report(ex, trees: pa.Table, errors: pa.Table, progress: StageProgress) -> dict[str, str]:
    """One line per stage for the manifest and the notes; the stages' seconds, and the flow process's
    peak RSS in MB in each stage (its worker processes not counted: a forked child's RSS counts the
    pages it shares with the flow), with the tables it holds memory-mapped, and the anonymous part's
    sampled peak (`peak_anon_rss_mb`: without them; Linux)."""
    status = Counter(trees.column("status").to_pylist())
    canon = Counter(trees.column("canonical_status").to_pylist())
    return {
        "extract": f"{ex.declarations.num_rows} declarations, {ex.statements.num_rows} LaTeX statements, "
        f"{ex.formulas.num_rows} LaTeX formulas",
        "formulas": "parse " + ", ".join(f"{k} {v}" for k, v in sorted(status.items()))
        + "; canonical " + ", ".join(f"{k} {v}" for k, v in sorted(canon.items())),
        "errors": f"{errors.num_rows} rows",
        "seconds": ", ".join(f"{k} {v}" for k, v in progress.seconds.items()),
        "peak_rss_mb": ", ".join(f"{k} {v}" for k, v in progress.peak_mb.items()),
        **({"peak_anon_rss_mb": ", ".join(f"{k} {v}" for k, v in progress.peak_anon_mb.items())} if progress.peak_anon_mb else {}),
    }  # fmt: skip
