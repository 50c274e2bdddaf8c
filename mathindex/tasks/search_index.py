"""Search-structure tasks: the `nodes` and `same_as` tables and the lexical (BM25) index."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mathindex.search.lexical import BM25_B, BM25_K1, build_text_index
from mathindex.search.nodes import build_nodes
from mathindex.search.sameas import same_as_table
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks import IndexBuild, stage


@stage(name="build_nodes")
def nodes_table(declarations: pa.Table, statements: pa.Table, dependencies: pa.Table, citations: pa.Table) -> pa.Table:
    return build_nodes(declarations, statements, dependencies, citations)


@stage(name="build_same_as")
def same_as_edges(declarations: pa.Table, statements: pa.Table) -> pa.Table:
    """Declarations and the LaTeX statements their `@[stacks TAG]` attributes cite (search/sameas.py)."""
    return same_as_table(declarations, statements)


@stage(name="build_lexical_index")
def lexical_index(texts: pa.Table, release_dir: Path, cache_dir: Path | None = None) -> IndexBuild:
    """BM25 over one document per node; texts' tokens are cached under `cache_dir` (`build_text_index`)."""
    documents = build_text_index(texts, ReleaseLayout(release_dir).lexical, cache_dir)
    return IndexBuild("lexical", {"documents": documents, "method": f"bm25 (bm25s, lucene, k1 {BM25_K1}, b {BM25_B})"})
