"""The reembed flow: a new release that reuses a release's extraction and re-embeds every text
with another model; its notes show each headline metric before (the source release) and after."""

from __future__ import annotations

import shutil
from pathlib import Path

from prefect import flow
from pydantic import BaseModel
from prefect.states import State

from mathindex.embed.models import pin_model, resolve_precision
from mathindex.flows.finish import ReleaseOutcome, ReleaseParts, final_state, finish_release, locked_root, publish_artifacts
from mathindex.flows.progress import StageProgress
from mathindex.flows.release import new_release_id
from mathindex.schemas.manifest import SuiteSpec
from mathindex.sources import pin_suite
from mathindex.store.integrity import check_release, read_manifest
from mathindex.store.layout import ReleaseLayout, RootLayout, check_output_root
from mathindex.store.releases import building
from mathindex.store.tables import read_table
from mathindex.tasks.bench import gate_release, run_benchmarks
from mathindex.tasks.embed import embed_and_index
from mathindex.tasks.store import write_database, write_tables

# What a re-embedding rewrites; everything else is copied from the source release unchanged.
REWRITTEN = {ReleaseLayout.MANIFEST, ReleaseLayout.NOTES, ReleaseLayout.DUCKDB, ReleaseLayout.BENCH, ReleaseLayout.VECTOR,
             ReleaseLayout.table_file("bench_results")}
STAGES = ["copy", "embed", "bench", "store", "publish"]


@flow(name="reembed", log_prints=False)
def reembed_flow(release: str, model: str, out: str, no_gate: bool = False,
                 precision: str | None = None) -> ReleaseOutcome | State:
    """A ReleaseOutcome when the gate passed, else a Failed state carrying it (`finish.final_state`);
    `no_gate` publishes it ungated, as `release_flow` does (a release with no suite needs it).
    `model` as `release_flow` takes it, resolved against `out`: `default`, an entry of
    `out/models/` (`name@rev16` or a bare `name`), or a model directory (installed there first).
    `precision` fp32, bf16 or int8 (`embed.base.PRECISIONS`); None keeps the source release's.
    Holds the lock on `out` for the whole run (`finish.locked_root`)."""
    source, root = Path(release).resolve(), check_output_root(out)  # before any work, as release_flow
    with locked_root(root):
        return _reembed(source, model, root, no_gate, precision)


def _reembed(source: Path, model: str, root: Path, no_gate: bool, precision: str | None) -> ReleaseOutcome | State:
    before = read_manifest(source)
    embedding_model = pin_model(model, root)
    embed_precision = resolve_precision(precision, root, release=source)
    pins = list(before.corpora)
    suites = [SuiteSpec(name=s.name, path=s.path, external=s.external.path if s.external else None) for s in before.bench.suites]
    suite_pins = [pin_suite(s).model_dump() for s in suites]  # pinned anew: the notes say when one changed
    release_id = new_release_id(pins, root)
    with StageProgress(STAGES, desc="reembed") as progress, building(root, release_id) as staging:
        with progress.stage("copy"):
            copy_release(source, staging, before.files)
        with progress.stage("embed"):
            texts = read_table(staging, "embedding_texts")
            vector = embed_and_index(texts, embedding_model, staging, RootLayout(root).cache, precision=embed_precision)
        with progress.stage("bench"):
            bench = run_benchmarks(staging, suites, vector.channel, embedding_model.reference)
            metrics = dict(bench.metrics)
        with progress.stage("store"):
            row_counts = dict(before.row_counts) | write_tables(staging, {"bench_results": bench.rows})
            write_database(staging, list(row_counts))
        with progress.stage("publish"):
            verdict = gate_release(metrics, before.bench.headline, no_gate)
            parts = ReleaseParts(
                release_id=release_id, pins=pins, embedder=vector.embedder, vector_index=vector.manifest_entry(),
                formula_index=_figures(before.formula_index), lexical_index={"copied_from": before.release_id},
                formal_index=_figures(before.formal_index),
                premises=_figures(before.premises),  # copied with premises/: fitted with the source's embedder
                informaliser=_figures(before.informaliser),  # the informalisations are copied
                stages={**before.stages, "reembed": f"from {before.release_id} with {embedding_model.label}"},
                row_counts=row_counts, errors=read_table(staging, "errors"), suites=suite_pins,
            )  # fmt: skip
            title = f"Re-embedding ({embedding_model.label}) of {before.release_id} ->"
            outcome = finish_release(root, staging, parts, metrics, verdict, f"release {before.release_id}", title=title,
                                     before=source)
    publish_artifacts(outcome)
    return final_state(outcome)


def _figures(section: BaseModel | None) -> dict | None:
    """A section of the source's manifest as its stage reported it (`ReleaseParts` holds those)."""
    return None if section is None else section.model_dump(mode="json")


def copy_release(source: Path, staging: Path, files: dict[str, str]) -> None:
    """Copies the files the source release's manifest lists (`files`), except what re-embedding
    rewrites, once each matches the manifest's sha256: IntegrityError naming the bad files first."""
    kept = sorted(rel for rel in files if rel.split("/", 1)[0] not in REWRITTEN)
    check_release(source, only=kept)
    for rel in kept:
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, staging / rel)
