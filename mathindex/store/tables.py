"""A release's tables: deterministic Parquet (cast to the schema, sorted by its keys, renamed into
place) and `search.duckdb` over the same rows, with the schemas' comments, views and macros;
a no-change nightly links the previous release's database."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mathindex.cache.filehash import sha256_file
from mathindex.schemas import TableSpec, table_specs
from mathindex.schemas.columns import comment_of
from mathindex.schemas.views import VIEWS, View
from mathindex.store.integrity import IntegrityError, read_manifest
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)


ROW_GROUP = 65536  # rows a Parquet row group of a release table


def release_order(table: pa.Table, spec: TableSpec, columns: list[str] | None = None) -> pa.Table:
    """A table as a release holds it (cast to the spec's schema, sorted by its keys: a stable
    sort), or only its `columns`, in that order."""
    table = table.select(spec.schema.names).cast(spec.schema)
    kept = table if columns is None else table.select(columns)
    if not table.num_rows:
        return kept
    return kept.take(sort_order(table, spec))


def sort_order(table: pa.Table, spec: TableSpec) -> pa.Array:
    """The row order `release_order` gives: a stable sort by the spec's keys."""
    return pc.sort_indices(table.select(spec.sort_keys), [(k, "ascending") for k in spec.sort_keys])


def write_table(table: pa.Table, spec: TableSpec, directory: Path) -> Path:
    """Writes `<name>.parquet` cast to the spec's schema and sorted by its keys (deterministic): the
    bytes of `pq.write_table(release_order(table, spec), row_group_size=ROW_GROUP)`, made a row group
    at a time, so that only the sort order and one row group's copy are in memory beside `table`
    (which the release flow holds memory-mapped: tasks/spill.py)."""
    table = table.select(spec.schema.names).cast(spec.schema)
    path = ReleaseLayout(directory).table(spec.name)
    tmp = path.with_name(path.name + ".tmp")
    if not table.num_rows:
        pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP)
    else:
        order = sort_order(table, spec)
        with pq.ParquetWriter(tmp, table.schema, compression="zstd") as writer:
            for start in range(0, table.num_rows, ROW_GROUP):
                writer.write_table(table.take(order.slice(start, ROW_GROUP)), row_group_size=ROW_GROUP)
    os.replace(tmp, path)
    return path


def read_table(directory: Path, name: str, columns: list[str] | None = None) -> pa.Table:
    """A release's table (`ReleaseLayout.table`), or some of its columns."""
    return pq.read_table(ReleaseLayout(directory).table(name), columns=columns)


def write_duckdb(directory: Path, names: list[str], previous: Path | None = None) -> Path:
    """`search.duckdb` holding a copy of each Parquet table (same rows, same order). Each table is
    created from its schema first (NOT NULL kept: CREATE TABLE AS from Parquet drops it), then
    filled; table and column comments come from the schemas; then the views and table macros of
    `schemas.views` whose tables are all present. When release `previous` holds a database of the
    same tables (each Parquet file's sha256 equal to the one its manifest records) and the same
    catalog (tables, columns, comments, views, macros: `_catalog`), and its database matches its
    manifest, that file is linked instead (a no-change nightly)."""
    path = ReleaseLayout(directory).duckdb
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    if previous is not None and _reuse_duckdb(directory, names, Path(previous), tmp):
        os.replace(tmp, path)
        return path
    _fill_duckdb(tmp, directory, names, [])
    os.replace(tmp, path)
    return path


def start_duckdb(directory: Path, names: list[str], previous: Path | None = None) -> Path | None:
    """The first part of `write_duckdb` while a release's last tables are still being made (the flow
    runs it beside the benchmarks: DuckDB works without the GIL): when release `previous` cannot
    lend its database because one of these tables differs from its, they are loaded now into a
    temporary database, whose path is returned for `finish_duckdb`; None when the database may yet
    be linked, which only the last tables decide."""
    if previous is not None and _same_tables(directory, names, Path(previous)):
        return None
    part = ReleaseLayout(directory).duckdb.with_name(ReleaseLayout.DUCKDB + ".part")
    part.unlink(missing_ok=True)
    _fill_duckdb(part, directory, sorted(names), [])
    return part


def finish_duckdb(directory: Path, names: list[str], previous: Path | None, part: Path | None,
                  first: list[str]) -> Path:
    """`search.duckdb` over `names`: `write_duckdb` when `start_duckdb` gave no database (`part`
    None), else `part` (holding the tables `first`) with the other tables, and the views that read
    them, added. The catalog is the one `write_duckdb` makes (test)."""
    if part is None:
        return write_duckdb(directory, sorted(names), previous)
    _fill_duckdb(part, directory, sorted(set(names) - set(first)), sorted(first))
    path = ReleaseLayout(directory).duckdb
    os.replace(part, path)
    return path


def _fill_duckdb(db: Path, directory: Path, names: list[str], present: list[str]) -> None:
    """Adds tables `names` (schema first, then the Parquet rows) to database `db`, which holds the
    tables `present`, and the views whose tables are now all there and were not before."""
    con = duckdb.connect(str(db))
    try:
        _create_catalog(con, names, table_specs(), present)
        for name in names:
            src = _sql_string(ReleaseLayout(directory).table(name).as_posix())
            con.execute(f'INSERT INTO "{name}" BY NAME SELECT * FROM read_parquet({src})')
        con.execute("CHECKPOINT")
    finally:
        con.close()


def _create_catalog(con: duckdb.DuckDBPyConnection, names: list[str], specs: dict, present: list[str] = ()) -> None:
    """The empty tables (with comments), then the views and macros whose tables are all there
    (with the tables `present` that the database holds already) and were not before."""
    for name in names:
        for statement in table_ddl(specs[name]):
            con.execute(statement)
    now, before = set(names) | set(present), set(present)
    for view in VIEWS:
        if set(view.tables) <= now and not set(view.tables) <= before:
            write_view(con, view, [specs[t].schema for t in view.tables])


def _catalog(con: duckdb.DuckDBPyConnection) -> list:
    """Everything of a database but its rows: tables, columns (type, nullability, comment), views
    and table macros with their SQL and comments."""
    queries = (
        "SELECT table_name, comment FROM duckdb_tables() ORDER BY ALL",
        "SELECT table_name, column_index, column_name, data_type, is_nullable, comment FROM duckdb_columns() "
        "WHERE NOT internal ORDER BY ALL",
        "SELECT view_name, sql, comment FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
        "SELECT function_name, macro_definition, comment FROM duckdb_functions() "
        "WHERE function_type = 'table_macro' AND NOT internal ORDER BY ALL",
    )
    return [con.execute(q).fetchall() for q in queries]


def _same_tables(directory: Path, names: list[str], previous: Path, files: dict | None = None) -> bool:
    """Whether each table's Parquet file has the sha256 that release `previous`'s manifest records
    for it (`files`: that manifest's hashes, when the caller has read them)."""
    layout = ReleaseLayout(directory)
    if files is None:
        try:
            files = read_manifest(previous).files
        except (FileNotFoundError, IntegrityError, ValueError):
            return False
    wanted = {layout.table(n).relative_to(directory).as_posix(): layout.table(n) for n in names}
    return all(rel in files for rel in wanted) and all(sha256_file(p) == files[rel] for rel, p in wanted.items())


def _reuse_duckdb(directory: Path, names: list[str], previous: Path, tmp: Path) -> bool:
    """Links `previous`'s database to `tmp` when it holds exactly these tables' bytes and catalog."""
    before = ReleaseLayout(previous)
    try:
        files = read_manifest(previous).files
    except (FileNotFoundError, IntegrityError, ValueError):
        return False
    db_name = before.duckdb.relative_to(previous).as_posix()
    if db_name not in files or not _same_tables(directory, names, previous, files):
        return False
    if sha256_file(before.duckdb) != files[db_name]:
        return False
    con = duckdb.connect(":memory:")
    try:
        _create_catalog(con, names, table_specs())
        ours = _catalog(con)
    finally:
        con.close()
    old = duckdb.connect(str(before.duckdb), read_only=True)
    try:
        if _catalog(old) != ours:  # the same tables, columns, comments, views and macros
            return False
    finally:
        old.close()
    try:
        os.link(before.duckdb, tmp)
    except OSError:
        shutil.copy2(before.duckdb, tmp)
    log.info("search.duckdb linked from release %s (same tables and catalog)", previous.name)
    return True


_SQL_TYPES = {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN", pa.float64(): "DOUBLE"}


def _sql_type(t: pa.DataType) -> str:
    return _sql_type(t.value_type) + "[]" if pa.types.is_list(t) else _SQL_TYPES[t]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_ddl(spec: TableSpec) -> list[str]:
    """CREATE TABLE (NOT NULL for each non-nullable field) and the COMMENT ON statements of a
    table, from its schema and the descriptions on it (`schemas.columns.comment_of`)."""
    cols = ", ".join(f'"{f.name}" {_sql_type(f.type)}' + ("" if f.nullable else " NOT NULL") for f in spec.schema)
    out = [f'CREATE TABLE "{spec.name}" ({cols})']
    if comment_of(spec.schema):
        out.append(f'COMMENT ON TABLE "{spec.name}" IS {_sql_string(comment_of(spec.schema))}')
    out += [f'COMMENT ON COLUMN "{spec.name}"."{f.name}" IS {_sql_string(comment_of(f))}' for f in spec.schema if comment_of(f)]
    return out


def write_view(con: duckdb.DuckDBPyConnection, view: View, schemas: list[pa.Schema]) -> None:
    """Creates a view (or a table macro) and comments on it and on each of a view's columns: from
    `view.columns`, else from the same-named column of the first of `schemas` (its tables) holding one."""
    kind = "MACRO TABLE" if view.macro is not None else "VIEW"
    if view.macro is not None:
        con.execute(f'CREATE MACRO "{view.name}"({view.macro}) AS TABLE {view.sql}')
    else:
        con.execute(f'CREATE VIEW "{view.name}" AS {view.sql}')
    con.execute(f'COMMENT ON {kind} "{view.name}" IS {_sql_string(view.comment)}')
    if view.macro is not None:
        return
    comments = {f.name: comment_of(f) for schema in reversed(schemas) for f in schema if comment_of(f)}
    comments |= dict(view.columns)
    for (name, *_) in con.execute(f'DESCRIBE "{view.name}"').fetchall():
        if comments.get(name):
            con.execute(f'COMMENT ON COLUMN "{view.name}"."{name}" IS {_sql_string(comments[name])}')
