"""Informalisation task: English renderings of Lean statements, cached across releases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.cache.codes import INFORMAL
from mathindex.cache.stages import StageCache
from mathindex.informal import Informaliser, RuleInformaliser, informalise_reported
from mathindex.informal.informalise import report_of_table
from mathindex.informal.http import HttpInformaliser
from mathindex.schemas.embed import INFORMALISATIONS
from mathindex.schemas.manifest import InformaliserEntry, InformaliserSpec
from mathindex.tasks import HOUR_S, stage


@dataclass(frozen=True)
class Informalised:
    """The informalisations table and the report of the informaliser that made it."""

    table: pa.Table
    report: InformaliserEntry


def informaliser_for(spec: InformaliserSpec) -> Informaliser:
    """The backend a release's informaliser settings name (`sources.load_informaliser`)."""
    return HttpInformaliser.from_spec(spec) if spec.backend == "http" else RuleInformaliser()


def timeout_s(spec: InformaliserSpec) -> int:
    """The stage's Prefect timeout: an hour, plus the time the HTTP backend may spend asking."""
    return HOUR_S + (int(spec.budget_s) if spec.backend == "http" else 0)


def _no_fallback(table: pa.Table) -> bool:
    return not pc.any(pc.equal(table.column("status"), "fallback")).as_py()


@stage(name="informalise")
def informalise_declarations(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path,
                             spec: InformaliserSpec | None = None) -> Informalised:
    """The informalisations table and its report; the whole table comes from the stage cache when
    declarations and dependencies are those of an earlier run with the same informaliser
    (`cache.stages.StageCache`; a table with fallbacks is never stored there, so they are asked
    again), else each rendering from the per-statement cache (`informal.informalise.InformalCache`)
    or the informaliser. Run with `timeout_s(spec)` as its timeout."""
    informaliser = informaliser_for(spec or InformaliserSpec())
    made: list[InformaliserEntry] = []

    def compute() -> pa.Table:
        table, report = informalise_reported(declarations, informaliser, cache_dir, dependencies=dependencies)
        made.append(report)
        return table

    table, _ = StageCache(cache_dir).run(
        "informalise", INFORMAL, compute, {"declarations": declarations, "dependencies": dependencies},
        {"backend": informaliser.backend, "model": informaliser.model, "prompt": informaliser.prompt_version},
        schema=INFORMALISATIONS, keep=_no_fallback)
    return Informalised(table, made[0] if made else report_of_table(informaliser, table))
