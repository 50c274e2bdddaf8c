"""Informalisation task: English renderings of Lean statements, cached across releases."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.cache.codes import INFORMAL
from mathindex.cache.stages import StageCache
from mathindex.informal import RuleInformaliser, informalise
from mathindex.schemas.embed import INFORMALISATIONS
from mathindex.tasks import stage


@stage(name="informalise")
def informalise_declarations(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path) -> pa.Table:
    """The informalisations table; the whole table comes from the stage cache when declarations and
    dependencies are those of an earlier run (`cache.stages.StageCache`), else each rendering from
    the per-statement cache (`informal.informalise.InformalCache`) or the informaliser."""
    informaliser = RuleInformaliser()
    table, _ = StageCache(cache_dir).run(
        "informalise", INFORMAL, lambda: informalise(declarations, informaliser, cache_dir, dependencies=dependencies),
        {"declarations": declarations, "dependencies": dependencies},
        {"backend": informaliser.backend, "model": informaliser.model, "prompt": informaliser.prompt_version},
        schema=INFORMALISATIONS)
    return table
