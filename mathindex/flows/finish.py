"""What every release-writing flow shares: the root's lock and the leftovers cleaned under it; the
tail: gate, notes, manifest (last), publication."""

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
from mathindex.evaluation.notes import metrics_rows, render_notes, suite_changes
from mathindex.evaluation.plot import metrics_svg
from mathindex.schemas.manifest import CorpusPin, Manifest
from mathindex.store import MANIFEST, clean_leftovers, file_hashes, file_sizes, finalise, publish, root_lock, write_json


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
    release = outcome.release_dir
    metrics = json.loads((release / "bench" / "metrics.json").read_text(encoding="utf-8"))
    suites = sorted(metrics["suites"])
    gate = "not gated" if not outcome.gate.get("gated", True) else "passed" if outcome.passed else "FAILED"
    create_markdown_artifact(markdown=(release / "release-notes.md").read_text(encoding="utf-8"),
                             key=artifact_key("release-notes", *suites), description=f"{release.name}: gate {gate}")
    for name in suites:
        create_table_artifact(table=metrics_rows(metrics["suites"][name]), key=artifact_key("metrics", name),
                              description=f"{release.name}: suite {name} (points), gate {gate}")


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
    suites: list[dict]  # SuitePin dumps: name, path, sha256
    formal_index: dict | None = None  # flows that build no formal index (reembed) leave it out
    premises: dict | None = None  # mathindex.premises figures; reembed carries its source's


def finish_release(root: Path, staging: Path, parts: ReleaseParts, metrics: dict, verdict: GateReport,
                   baseline_from: str, title: str = "Release", before: Path | None = None) -> ReleaseOutcome:  # fmt: skip
    """Writes metrics and notes into staging, renames it, writes the manifest last, and points
    `published.json` at it only when the gate passed (or was skipped: `--no-gate`). `before` is the
    release gated against, whose per-style metrics the notes show beside this one's."""
    (staging / "bench").mkdir(exist_ok=True)
    write_json(staging / "bench" / "metrics.json", metrics)
    (staging / "bench" / "metrics.svg").write_text(metrics_svg(verdict, f"{title} {parts.release_id}"), encoding="utf-8")
    errors_by_stage = dict(Counter(parts.errors.column("stage").to_pylist()))
    indexes = {"vector": parts.vector_index, "formula": parts.formula_index, "lexical": parts.lexical_index}
    if parts.formal_index:
        indexes["formal"] = parts.formal_index
    notes = render_notes(parts.release_id, verdict, baseline_from, metrics["suites"], [p.model_dump() for p in parts.pins],
                         parts.row_counts, errors_by_stage, parts.stages, indexes, title=title,
                         before_suites=_suites_of(before), suite_pins=parts.suites,
                         changed_suites=suite_changes(parts.suites, _suite_pins_of(before)),
                         premises=parts.premises)  # fmt: skip
    (staging / "release-notes.md").write_text(notes, encoding="utf-8")
    manifest = Manifest(
        release_id=parts.release_id, code_version=__version__, corpora=parts.pins, embedder=parts.embedder,
        vector_index=parts.vector_index, formula_index=parts.formula_index, formal_index=parts.formal_index or {},
        premises=parts.premises or {}, stages=parts.stages,
        row_counts=parts.row_counts, files=file_hashes(staging), sizes=file_sizes(staging),
        bench={"headline": metrics["headline"], "baseline": baseline_from, "suites": parts.suites},
        gate=verdict.to_dict(), published=verdict.passed,
        previous_release=baseline_from.removeprefix("release ") if baseline_from.startswith("release ") else None,
    )  # fmt: skip
    final = finalise(staging, parts.release_id, manifest.model_dump(mode="json"))
    if verdict.passed:
        publish(root, parts.release_id)
    return ReleaseOutcome(release_dir=final, passed=verdict.passed, gate=verdict.to_dict(), message=verdict.summary())


def _suite_pins_of(release: Path | None) -> list[dict] | None:
    """The suites a release's manifest pinned (`bench.suites`), or None without a release."""
    path = release / MANIFEST if release is not None else None
    if path is None or not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("bench", {}).get("suites", [])


def _suites_of(release: Path | None) -> dict | None:
    """The per-suite metrics a release recorded (bench/metrics.json), or None."""
    path = release / "bench" / "metrics.json" if release is not None else None
    if path is None or not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("suites")
