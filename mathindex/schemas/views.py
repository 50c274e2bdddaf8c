"""The views and table macros of `search.duckdb`: the common joins over the registered tables.

Each is created by `store.write_duckdb` when every table it reads is in the database; each view is
ordered (its rows come out the same in every build). docs/sql.md shows them in use.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class View:
    """A view (or, with `macro` set, a table macro taking those parameters) and what it reads. A
    view's column takes the comment of the same-named column of the first of `tables` holding one,
    or its entry in `columns` (renamed and computed columns)."""

    name: str
    comment: str
    tables: tuple[str, ...]
    sql: str
    macro: str | None = None  # the parameter list of a table macro, e.g. "before, after := 'x'"
    columns: tuple[tuple[str, str], ...] = ()  # (column, comment) where the tables give none


DECLARATION_INFO = View(
    name="declaration_info",
    comment="Each Lean declaration with its module, location and informal rendering (informalisations), one row per decl_id.",
    tables=("declarations", "informalisations"),
    columns=(("informal", "informalisations.text: the informal rendering"),
             ("informal_status", "informalisations.status: ok, fallback or empty"),
             ("informal_backend", "informalisations.backend: rules or http")),
    sql="""
SELECT d.decl_id, d.corpus, d.module, d.full_name, d.kind, d.signature, d.docstring,
       i.text AS informal, i.status AS informal_status, i.backend AS informal_backend,
       d.file, d.line_start, d.line_end
FROM declarations AS d
LEFT JOIN informalisations AS i ON i.decl_id = d.decl_id
ORDER BY d.corpus, d.file, d.line_start, d.full_name, d.decl_id""",
)

STATEMENT_FORMULAS = View(
    name="statement_formulas",
    comment="Each LaTeX statement with each of its formulas (in file order) and their parse results; "
    "a statement without formulas is one row with null formula columns.",
    tables=("latex_statements", "formulas", "formula_trees"),
    columns=(("parse_status", "formula_trees.status: ok (grammar), partial (grammar, repaired), fallback (mathml) or error (tokens)"),),
    sql="""
SELECT s.statement_id, s.node_id, s.corpus, s.kind, s.title, s.label, s.tag, s.file, s.line_start,
       f.formula_id, f.position, f.role, f.display, f.latex, f.latex_normalised,
       t.parser, t.status AS parse_status, t.tree_text, t.canonical
FROM latex_statements AS s
LEFT JOIN formulas AS f ON f.statement_id = s.statement_id
LEFT JOIN formula_trees AS t ON t.formula_id = f.formula_id
ORDER BY s.corpus, s.file, s.line_start, s.statement_id, f.position""",
)

# A release holds one benchmark run (its own), so comparing two runs needs two databases: the
# baseline release's search.duckdb is ATTACHed read-only (a view cannot name a database that is
# not attached; a macro binds its tables when it is called). `change` is the change of the
# reciprocal rank (0 when no gold hit is in the top k), what MRR averages: the measure the release
# notes sort the queries that fell and rose by (evaluation.notes.rank_moves).
BENCH_COMPARE = View(
    name="bench_compare",
    comment="bench_compare(before, after := 'bench_results'): each query of two bench_results tables "
    "(e.g. 'baseline.bench_results' of an ATTACHed release) with its rank before and after; "
    "change is the change of 1/rank, status fell, rose, same, new or gone.",
    tables=("bench_results",),
    macro="before, after := 'bench_results'",
    sql="""
SELECT suite, query_id, coalesce(a.style, b.style) AS style, coalesce(a.query, b.query) AS query,
       b.rank AS rank_before, a.rank AS rank_after,
       round(coalesce(1.0 / a.rank, 0) - coalesce(1.0 / b.rank, 0), 6) AS change,
       CASE WHEN b.query_id IS NULL THEN 'new' WHEN a.query_id IS NULL THEN 'gone'
            WHEN a.rank IS NOT DISTINCT FROM b.rank THEN 'same'
            WHEN coalesce(1.0 / a.rank, 0) < coalesce(1.0 / b.rank, 0) THEN 'fell' ELSE 'rose' END AS status
FROM query_table(after) AS a
FULL JOIN query_table(before) AS b USING (suite, query_id)
ORDER BY suite, query_id""",
)

VIEWS = (DECLARATION_INFO, STATEMENT_FORMULAS, BENCH_COMPARE)
