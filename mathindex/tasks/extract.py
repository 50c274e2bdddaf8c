"""Extraction tasks: Lean declarations, in content-keyed shards of files (`lean.shards`), and
LaTeX/XML statements of one pinned source each."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.lean.extract import LeanExtraction, LeanPlan, finish_extraction, plan_extraction
from mathindex.lean.shards import SHARD_BYTES, extract_shard
from mathindex.search.nodes import names_in_several_corpora
from mathindex.schemas import latex as latex_schema
from mathindex.schemas import lean as lean_schema
from mathindex.schemas.common import ERRORS, concat
from mathindex.sources import Source
from mathindex.tasks import io_stage, stage
from mathindex.tasks.shards import run_shards, size_from_env

SHARD_BYTES_ENV = "MATHINDEX_LEAN_SHARD_BYTES"  # smaller Lean shards spread a small corpus over more workers (the tests)
# A local run scans each source's shards in the stage's process pool, not as tasks on the flow's
# threads (the scanner is Python: the threads share one GIL): whole Mathlib cold, 51.6 s wall / 45.8 s
# CPU against 57.3 s / 44.4 s, medians of 2 rounds; the sample 0.03 s both (bench/libraries.py
# --modes task,threads, 2-core Xeon with AMX, loaded).
LOCAL_POOL = True


@dataclass(frozen=True)
class Extraction:
    """Every extracted table of a release, concatenated over its sources."""

    declarations: pa.Table
    dependencies: pa.Table
    descriptions: pa.Table
    citations: pa.Table
    statements: pa.Table
    formulas: pa.Table
    macros: pa.Table
    errors: pa.Table


@io_stage(name="extract_lean")
def extract_lean(source: Source, cache_dir: Path):
    return extract_lean_tree(source.root, source.spec.name, cache_dir=cache_dir)


def shard_bytes(default: int = SHARD_BYTES) -> int:
    """Source bytes a Lean shard: $MATHINDEX_LEAN_SHARD_BYTES when set, else `default`."""
    return size_from_env(SHARD_BYTES_ENV, default)


@stage(name="plan_lean")
def plan_lean(source: Source, cache_dir: Path, spread: int, start: int, size: int) -> LeanPlan:
    """One Lean source's shards of files the rows cache lacks (`lean.extract.plan_extraction`)."""
    return plan_extraction(source.root, source.spec.name, cache_dir, spread, start, size)


extract_lean_shard = io_stage(name="extract_lean_shard", task_run_name="extract-lean-shard-{shard.index}")(extract_shard)


@stage(name="finish_lean")
def finish_lean(plan: LeanPlan, cache_dir: Path) -> LeanExtraction:
    """One Lean source's tables from its rows in the cache (`lean.extract.finish_extraction`)."""
    return finish_extraction(plan, cache_dir)


def extract_lean_sources(sources: list[Source], cache_dir: Path, local: bool) -> list[LeanExtraction]:
    """The Lean sources' extractions. On the flow's thread pool (`local`) with LOCAL_POOL, one task
    a source, each scanning its shards in its own process pool; else every source's shards as tasks
    through the flow's task runner (`tasks.shards.run_shards`: on Dask all at once, locally a shard
    a core), each stored in the root's rows cache, and each source's tables from there, in file order."""
    lean = [s for s in sources if s.spec.kind == "lean"]
    if local and LOCAL_POOL:
        return [f.result() for f in [extract_lean.submit(s, cache_dir) for s in lean]]
    cores = os.cpu_count() or 1
    plans: list[LeanPlan] = []
    for source in lean:
        plans.append(plan_lean(source, cache_dir, cores if local else 1, sum(len(p.shards) for p in plans), shard_bytes()))
    run_shards(extract_lean_shard, [s for p in plans for s in p.shards], "lean extraction", cores if local else None,
               cache_dir=cache_dir)
    return [finish_lean(p, cache_dir) for p in plans]


@io_stage(name="extract_latex")
def extract_latex(source: Source):
    return extract_latex_tree(source.root, source.spec.name, tags_file=source.tags_file)


def extract_sources(sources: list[Source], cache_dir: Path, local: bool) -> Extraction:
    """Every source's tables, merged (`merge_extractions`): LaTeX sources as tasks on the flow's task
    runner beside the Lean ones (`extract_lean_sources`). The per-source tables are dropped once
    merged, so the flow never holds the corpus twice (they were 586 MB at k = 1 of bench/scale.py)."""
    latex_runs = [extract_latex.submit(s) for s in sources if s.spec.kind == "latex"]
    lean_runs = extract_lean_sources(sources, cache_dir, local=local)
    return merge_extractions(lean_runs, [f.result() for f in latex_runs])


def merge_extractions(lean: list, latex: list) -> Extraction:
    """One table per kind over all sources (order does not matter: the store sorts), with an error
    row for each Lean name that two corpora declare (one node)."""
    declarations = concat([x.declarations for x in lean], lean_schema.DECLARATIONS)
    shared = names_in_several_corpora(declarations) if len(lean) > 1 else ERRORS.empty_table()
    return Extraction(
        declarations=declarations,
        dependencies=concat([x.dependencies for x in lean], lean_schema.DEPENDENCIES),
        descriptions=concat([x.descriptions for x in lean], lean_schema.DESCRIPTIONS),
        citations=concat([x.citations for x in lean], lean_schema.CITATIONS),
        statements=concat([x.statements for x in latex], latex_schema.LATEX_STATEMENTS),
        formulas=concat([x.formulas for x in latex], latex_schema.FORMULAS),
        macros=concat([x.macros for x in latex], latex_schema.LATEX_MACROS),
        errors=concat([*(x.errors for x in lean + latex), shared], ERRORS),
    )
