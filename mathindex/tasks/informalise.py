"""Informalisation task: English renderings of Lean statements, cached across releases."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.tasks import stage


@stage(name="informalise")
def informalise_declarations(declarations: pa.Table, dependencies: pa.Table, cache_dir: Path) -> pa.Table:
    from mathindex.embed import RuleInformaliser, informalise

    return informalise(declarations, RuleInformaliser(), cache_dir / "informal", dependencies=dependencies)
