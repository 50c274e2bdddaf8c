"""Formal-index task: the `formal_statements` table and the `formal/` postings (mathindex.formal)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.formal import build_formal_index
from mathindex.lean.notations import extract_notations
from mathindex.schemas.common import concat
from mathindex.schemas.lean import NOTATIONS
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import IndexBuild, TableBuild, stage


@stage(name="build_formal_index")
def formal_index(declarations: pa.Table, dependencies: pa.Table, release_dir: Path,
                 cache_dir: Path | None = None, lean_roots: list[tuple[Path, str]] | None = None) -> TableBuild:
    """The formal_statements table and the `formal/` postings, with the manifest's figures (build
    seconds, bytes on disk of the postings); statement facts are kept by content under
    `cache_dir` (a root's cache directory: `CacheLayout.formal_statements`) between builds;
    `lean_roots`: (root, corpus name) of each Lean corpus, whose notation commands are read."""
    out_dir = ReleaseLayout(release_dir).formal
    notations = concat([extract_notations(root, corpus) for root, corpus in lean_roots or []], NOTATIONS)
    statements, info = build_formal_index(declarations, dependencies, out_dir,
                                          cache_dir=cache_dir, notations=notations)
    info["directory_bytes"] = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
    return TableBuild(statements, IndexBuild("formal", info))
