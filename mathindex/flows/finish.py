"""What every release-writing flow shares: the root's lock and the leftovers cleaned under it; the
tail: gate, notes, manifest (last), publication, and the prune after it."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.logging import get_run_logger
from prefect.states import Failed, State

from mathindex import __version__
from mathindex.evaluation.gate import GateReport
from mathindex.evaluation.notes import Baseline, metrics_rows, render_notes
from mathindex.evaluation.plot import THIS_RELEASE, write_plots
from mathindex.schemas.manifest import CorpusPin, Manifest
from mathindex.store.integrity import file_hashes, file_sizes, read_manifest, write_json
from mathindex.store.layout import ReleaseLayout
from mathindex.store.lock import clean_leftovers, root_lock
from mathindex.store.prune import prune
from mathindex.store.releases import finalise, publish, published_releases
from mathindex.store.tables import read_table

HISTORY_RELEASES = 10  # published releases the headline history plot shows before this one


@contextmanager
def locked_root(root: Path) -> Iterator[None]:
    """The release root's lock for a release-writing run (`store.root_lock`: RootBusy when another
    run holds it; the CLI may hold it already), and, under it, what interrupted runs left removed,
    each removal a warning in the run's log."""
    with root_lock(root):
        for line in clean_leftovers(root):
            get_run_logger().warning("leftover of an interrupted run: %s", line)
        yield


@dataclass(frozen=True)
class ReleaseOutcome:
    release_dir: Path
    passed: bool
    gate: dict
    message: str = ""  # the gate's one-line summary (`GateReport.summary`)


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key: lowercase letters, digits and single dashes."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower())).strip("-")


def publish_artifacts(outcome: ReleaseOutcome) -> None:
    """The release notes as a markdown artifact (`release-notes-<suites>`) and each suite's metrics
    as a table artifact (`metrics-<suite>`), attached to the flow run; a key's versions are that
    suite's history across runs."""
    release = ReleaseLayout(outcome.release_dir)
    metrics = json.loads(release.metrics.read_text(encoding="utf-8"))
    suites = sorted(metrics["suites"])
    gate = "not gated" if not outcome.gate.get("gated", True) else "passed" if outcome.passed else "FAILED"
    create_markdown_artifact(markdown=release.notes.read_text(encoding="utf-8"),
                             key=artifact_key("release-notes", *suites), description=f"{release.dir.name}: gate {gate}")
    for name in suites:
        create_table_artifact(table=metrics_rows(metrics["suites"][name]), key=artifact_key("metrics", name),
                              description=f"{release.dir.name}: suite {name} (points), gate {gate}")


def final_state(outcome: ReleaseOutcome) -> ReleaseOutcome | State:
    """What a release-writing flow returns: the outcome (a Completed run) when the gate passed, else
    a Failed state whose message names each failing metric and its drop, carrying the outcome as
    its data, so a scheduled run ends Failed (notifications fire) and the CLI still reads the gate."""
    return outcome if outcome.passed else Failed(message=outcome.message, data=outcome)


@dataclass(frozen=True)
class ReleaseParts:
    """What a flow built in staging, as the manifest and the notes report it."""

    release_id: str
    pins: list[CorpusPin]
    embedder: dict
    vector_index: dict
    formula_index: dict
    lexical_index: dict
    stages: dict[str, str]
    row_counts: dict[str, int]
    errors: pa.Table
    suites: list[dict]  # SuitePin dumps: name, path, sha256 (and external, when the suite has external figures)
    formal_index: dict | None = None  # flows that build no formal index (reembed) leave it out
    premises: dict | None = None  # mathindex.premises figures; reembed carries its source's
    informaliser: dict | None = None  # the informalise stage's report (schemas.manifest.InformaliserEntry); reembed carries its source's
    embedder_recipe: dict | None = None  # how a sources file's embedder recipe gave the model (flows.recipe)


def finish_release(root: Path, staging: Path, parts: ReleaseParts, metrics: dict, verdict: GateReport,
                   baseline_from: str, title: str = "Release", before: Path | None = None) -> ReleaseOutcome:  # fmt: skip
    """Writes metrics, plots and notes into staging, renames it, writes the manifest last, and
    points `published.json` at it only when the gate passed (or was skipped: `--no-gate`). `before`
    is the release gated against, which the notes compare with (inputs, per-style metrics,
    per-query ranks, row counts)."""
    layout = ReleaseLayout(staging)
    layout.bench.mkdir(exist_ok=True)
    write_json(layout.metrics, metrics)
    manifest = assemble_manifest(parts, metrics, verdict, baseline_from)
    baseline = read_baseline(before)
    plots = write_plots(layout.bench, headline_history(root, metrics["headline"]), metrics["suites"],
                        baseline.suites if baseline else None, verdict)  # fmt: skip
    indexes = {"vector": parts.vector_index, "formula": parts.formula_index, "lexical": parts.lexical_index}
    if parts.formal_index:
        indexes["formal"] = parts.formal_index
    notes = render_notes(manifest, metrics["suites"], verdict, indexes=indexes,
                         errors_by_stage=dict(Counter(parts.errors.column("stage").to_pylist())),
                         results=bench_rows(staging), before=baseline, title=title, plots=plots)  # fmt: skip
    layout.notes.write_text(notes, encoding="utf-8")
    manifest = manifest.model_copy(update={"files": file_hashes(staging), "sizes": file_sizes(staging)})
    final = finalise(staging, parts.release_id, manifest)
    if verdict.passed:
        publish(root, parts.release_id)
    return ReleaseOutcome(release_dir=final, passed=verdict.passed, gate=verdict.to_dict(), message=verdict.summary())


def prune_after_publish(root: Path, keep: int | None, outcome: ReleaseOutcome) -> list[str]:
    """With `keep`, and only once the release was published: ROOT pruned to its `keep` newest
    releases (`store.prune`, under the lock the run holds), one log line per release removed. A
    prune that fails is logged as an error and leaves the run's verdict alone: the release is
    published. The lines logged, for the caller."""
    if keep is None or not outcome.passed:
        return []
    logger = get_run_logger()
    try:
        plan = prune(root, keep)
    except Exception as exc:  # noqa: BLE001 - any failure: the published release stands, the error is logged
        line = f"prune --keep {keep} failed after publishing {outcome.release_dir.name}: {' '.join(str(exc).split())}"
        logger.error(line)
        return [line]
    lines = [f"pruned release {v.release_id} (keep {keep})" for v in plan.removed]
    for line in lines:
        logger.info(line)
    return lines


def assemble_manifest(parts: ReleaseParts, metrics: dict, verdict: GateReport, baseline_from: str) -> Manifest:
    """The manifest of a release (`release` and `reembed` alike), before its file hashes and sizes
    are filled in: what was built (`parts`), the headline metrics, the gate, the baseline."""
    previous = baseline_from.removeprefix("release ") if baseline_from.startswith("release ") else None
    return Manifest(
        release_id=parts.release_id, code_version=__version__, corpora=parts.pins, embedder=parts.embedder,
        vector_index=parts.vector_index, formula_index=parts.formula_index, formal_index=parts.formal_index or {},
        premises=parts.premises or {}, informaliser=parts.informaliser, embedder_recipe=parts.embedder_recipe,
        stages=parts.stages,
        row_counts=parts.row_counts, files={},
        bench={"headline": metrics["headline"], "baseline": baseline_from, "suites": parts.suites},
        gate=verdict.to_dict(), published=verdict.passed, previous_release=previous,
    )  # fmt: skip


def headline_history(root: Path, headline: dict[str, float], limit: int = HISTORY_RELEASES) -> list[tuple[str, dict]]:
    """(label, headline metrics) of the last `limit` published releases under root, oldest first,
    then this release's (label `plot.THIS_RELEASE`); only the metrics this release reports."""
    history = []
    for release in published_releases(root, limit):
        path = ReleaseLayout(release).metrics
        head = json.loads(path.read_text(encoding="utf-8")).get("headline", {}) if path.is_file() else {}
        history.append((release.name.split("-", 1)[0], {k: v for k, v in head.items() if k in headline}))
    return history + [(THIS_RELEASE, dict(headline))]


def read_baseline(release: Path | None) -> Baseline | None:
    """A complete release as the notes compare with it, or None without one."""
    if release is None or not ReleaseLayout(release).is_release():
        return None
    metrics = ReleaseLayout(release).metrics
    suites = json.loads(metrics.read_text(encoding="utf-8")).get("suites") if metrics.is_file() else None
    return Baseline(release_id=release.name, manifest=read_manifest(release), suites=suites, results=bench_rows(release))


def bench_rows(release: Path) -> list[dict] | None:
    """A release's per-query benchmark results (`bench_results` rows), or None when it has none."""
    if not ReleaseLayout(release).table("bench_results").is_file():
        return None
    return read_table(release, "bench_results").select(["suite", "query_id", "style", "query", "rank"]).to_pylist()
