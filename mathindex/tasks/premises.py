"""Premise-selection task: priors, the held-out suite, fitted weights and figures (mathindex.premises)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.tasks import HOUR_S, IndexBuild, stage


@stage(name="build_premises", timeout_seconds=3 * HOUR_S)
def premise_index(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, model: str | None,
                  cache_dir: Path | None = None) -> IndexBuild:
    """Builds `premises/` in a release whose tables and indexes are written; returns the figures.
    With `cache_dir` (the root's cache), unchanged inputs reuse the last build's files."""
    from mathindex.premises.build import cached_premises
    from mathindex.search.engine import SearchEngine

    return IndexBuild("premises", cached_premises(release_dir, declarations, dependencies,
                                                  lambda: SearchEngine(release_dir, model=model), cache_dir, model))
