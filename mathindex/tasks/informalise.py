"""Informalisation task: English renderings of Lean statements, cached across releases."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.tasks import stage


@stage(name="informalise")
def informalise_declarations(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path) -> pa.Table:
    """The informalisations table; the whole table comes from the stage cache when declarations and
    dependencies are those of an earlier run (`stagecache.StageCache`), else each rendering from the
    per-statement cache or the informaliser."""
    from mathindex.informal import RuleInformaliser, informalise
    from mathindex.stagecache import StageCache

    informaliser = RuleInformaliser()
    table, _ = StageCache(cache_dir).run(
        "informalise", lambda: informalise(declarations, informaliser, cache_dir / "informal", dependencies=dependencies),
        {"declarations": declarations, "dependencies": dependencies},
        {"backend": informaliser.backend, "model": informaliser.model, "prompt": informaliser.prompt_version})
    return table
