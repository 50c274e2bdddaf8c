"""Premise-selection task: priors, the held-out suite, fitted weights and figures (mathindex.premises)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.embed.channel import VectorChannel
from mathindex.formal.search import FormalIndex
from mathindex.premises.build import cached_premises
from mathindex.premises.imports import read_imports
from mathindex.tasks import HOUR_S, IndexBuild, stage


@stage(name="build_premises", timeout_seconds=3 * HOUR_S)
def premise_index(release_dir: Path, declarations: pa.Table, dependencies: pa.Table, vector: VectorChannel | None,
                  model: str | None, cache_dir: Path | None = None, lean_roots: list[str] | None = None) -> IndexBuild:
    """Builds `premises/` in a release whose tables and indexes are written; returns the figures.
    The ranker reads the formal index (opened from the release's files when the stage measures)
    and `vector`, the embed stage's embedding channel. With `cache_dir` (the root's cache),
    unchanged inputs reuse the last build's files. `lean_roots`: the Lean corpora's roots, whose
    file headers give the import graph."""
    imports = read_imports(lean_roots) if lean_roots else None
    return IndexBuild("premises", cached_premises(release_dir, declarations, dependencies,
                                                  lambda: (FormalIndex(release_dir), vector), cache_dir, model,
                                                  imports=imports))
