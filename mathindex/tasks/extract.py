"""Extraction tasks: Lean declarations and LaTeX/XML statements of one pinned source each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.search.nodes import names_in_several_corpora
from mathindex.schemas import latex as latex_schema
from mathindex.schemas import lean as lean_schema
from mathindex.schemas.common import ERRORS, concat
from mathindex.sources import Source
from mathindex.tasks import io_stage


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


@io_stage(name="extract_latex")
def extract_latex(source: Source):
    return extract_latex_tree(source.root, source.spec.name, tags_file=source.tags_file)


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
