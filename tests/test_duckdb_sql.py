"""`search.duckdb` of a sample release: docs/sql.md's ten queries each return rows with the columns
they name; every table and column has its schema's comment and NOT NULL; the views and the
`bench_compare` macro give what their descriptions promise."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from mathindex.schemas import table_specs
from mathindex.schemas.columns import comment_of
from mathindex.schemas.views import VIEWS

DOC = Path(__file__).resolve().parent.parent / "docs" / "sql.md"
BASELINE_PATH = "ROOT/releases/<baseline id>/search.duckdb"  # docs/sql.md's stand-in for another release


def doc_queries() -> list[tuple[list[str], str]]:
    """(declared columns, SQL) of each example in docs/sql.md: the ```sql blocks whose first line
    is `-- columns: a, b, ...`."""
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    out = []
    for block in blocks:
        first, _, rest = block.partition("\n")
        if first.startswith("-- columns:"):
            out.append(([c.strip() for c in first.removeprefix("-- columns:").split(",")], rest))
    return out


@pytest.fixture(scope="module")
def release(sample_release_root) -> Path:
    rid = json.loads((sample_release_root / "published.json").read_text())["release_id"]
    return sample_release_root / "releases" / rid


@pytest.fixture(scope="module")
def baseline_db(release, tmp_path_factory) -> Path:
    """A copy of the release's database standing in for an earlier release: a query the release
    answers first was fourth there (it rose), one the release answers lower was first there (it
    fell), and the earlier release lacks one query (new)."""
    path = tmp_path_factory.mktemp("baseline") / "search.duckdb"
    shutil.copy(release / "search.duckdb", path)
    con = duckdb.connect(str(path))
    try:
        first = con.execute("SELECT query_id FROM bench_results WHERE rank = 1 ORDER BY query_id LIMIT 1").fetchone()[0]
        lower = con.execute("SELECT query_id FROM bench_results WHERE rank > 1 ORDER BY query_id LIMIT 1").fetchone()[0]
        new = con.execute("SELECT query_id FROM bench_results ORDER BY query_id DESC LIMIT 1").fetchone()[0]
        con.execute("UPDATE bench_results SET rank = 4 WHERE query_id = ?", [first])
        con.execute("UPDATE bench_results SET rank = 1 WHERE query_id = ?", [lower])
        con.execute("DELETE FROM bench_results WHERE query_id = ?", [new])
    finally:
        con.close()
    return path


@pytest.fixture
def con(release):
    c = duckdb.connect(str(release / "search.duckdb"), read_only=True)
    yield c
    c.close()


def test_the_doc_has_ten_example_queries():
    queries = doc_queries()
    assert len(queries) == 10
    assert all(cols and all(re.fullmatch(r"\w+", c) for c in cols) for cols, _ in queries)
    assert sum(BASELINE_PATH in sql for _, sql in queries) == 1  # one compares two releases


@pytest.mark.parametrize("number", range(1, 11))
def test_each_doc_query_returns_rows_with_its_columns(release, baseline_db, number):
    columns, sql = doc_queries()[number - 1]
    con = duckdb.connect(str(release / "search.duckdb"), read_only=True)
    try:
        result = con.execute(sql.replace(BASELINE_PATH, baseline_db.as_posix()))
        rows = result.fetchall()
        assert [d[0] for d in result.description] == columns, f"query {number}"
        assert rows, f"query {number} returned no rows"
    finally:
        con.close()


def test_every_table_and_column_has_its_schema_comment_and_not_null(con):
    tables = dict(con.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    columns = {(t, c): (nullable, comment) for t, c, nullable, comment in con.execute(
        "SELECT table_name, column_name, is_nullable, comment FROM duckdb_columns() WHERE NOT internal").fetchall()}  # fmt: skip
    for name, spec in table_specs().items():
        assert tables[name] == comment_of(spec.schema), name
        for f in spec.schema:
            assert columns[(name, f.name)] == (f.nullable, comment_of(f)), f"{name}.{f.name}"
    assert sum(not nullable for nullable, _ in columns.values()) > 60


def test_not_null_is_enforced(release, tmp_path):
    path = tmp_path / "search.duckdb"
    shutil.copy(release / "search.duckdb", path)
    con = duckdb.connect(str(path))
    try:
        con.execute("INSERT INTO errors VALUES ('c', 'f', NULL, 'stage', 'reason')")  # line may be null
        with pytest.raises(duckdb.ConstraintException):
            con.execute("INSERT INTO errors VALUES ('c', 'f', 1, NULL, 'reason')")
    finally:
        con.close()


def test_views_and_the_macro_exist_with_comments(con):
    views = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    macros = dict(con.execute("SELECT function_name, comment FROM duckdb_functions() WHERE function_type = 'table_macro'").fetchall())
    for view in VIEWS:
        found = macros if view.macro is not None else views
        assert found.get(view.name) == view.comment, view.name
    uncommented = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal AND comment IS NULL").fetchall()
    assert uncommented == []  # view columns too


def test_the_views_join_what_they_say(con):
    count = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    assert count("SELECT count(*) FROM declaration_info") == count("SELECT count(*) FROM declarations")
    assert count("SELECT count(*) FROM declaration_info WHERE informal IS NULL") == count(
        "SELECT count(*) FROM declarations d WHERE NOT EXISTS (SELECT 1 FROM informalisations i WHERE i.decl_id = d.decl_id)")
    bare = count("SELECT count(*) FROM latex_statements s WHERE NOT EXISTS (SELECT 1 FROM formulas f WHERE f.statement_id = s.statement_id)")
    owned = count("SELECT count(*) FROM formulas WHERE statement_id IS NOT NULL")
    assert count("SELECT count(*) FROM statement_formulas") == bare + owned
    assert count("SELECT count(*) FROM statement_formulas WHERE formula_id IS NOT NULL AND parser IS NULL") == 0
    rows = con.execute("SELECT statement_id, position FROM statement_formulas").fetchall()
    assert rows == con.execute("SELECT statement_id, position FROM statement_formulas ORDER BY corpus, file, line_start, statement_id, position").fetchall()


def test_bench_compare_agrees_with_the_notes(con, release, baseline_db):
    """The macro and `notes.rank_moves` (the release notes' lists) measure a move the same way."""
    import pyarrow.parquet as pq

    from mathindex.evaluation.notes import rank_moves

    con.execute(f"ATTACH '{baseline_db.as_posix()}' AS baseline (READ_ONLY)")
    rows = con.execute("SELECT query_id, rank_before, rank_after, change, status FROM bench_compare('baseline.bench_results') "
                       "WHERE status <> 'same' ORDER BY change, query_id").fetchall()  # fmt: skip
    assert sorted(r[4] for r in rows) == ["fell", "new", "rose"]
    before = con.execute("SELECT suite, query_id, style, query, rank FROM baseline.bench_results").fetchall()
    moves = rank_moves(pq.read_table(release / "bench_results.parquet").to_pylist(),
                       [dict(zip(["suite", "query_id", "style", "query", "rank"], r)) for r in before])  # fmt: skip
    assert [(m["query_id"], m["rank_before"], m["rank_after"], m["change"]) for m in moves["fell"] + moves["rose"]] == \
        [r[:4] for r in rows if r[4] in ("fell", "rose")]
    assert moves["new"] == 1 and moves["gone"] == 0


def test_doc_query_8_is_the_mrr_of_the_metrics(release, con):
    """The per-style MRR computed in SQL from bench_results is bench/metrics.json's mrr@10."""
    _, sql = doc_queries()[7]
    metrics = json.loads((release / "bench" / "metrics.json").read_text())["suites"]
    got = {(suite, style): mrr for suite, style, _, mrr, _ in con.execute(sql).fetchall()}
    want = {(suite, style): round(m["mrr@10"], 2) for suite, s in metrics.items() for style, m in s["by_style"].items()}
    assert got == want
