"""The artifact store: deterministic Parquet, DuckDB over it, staging and atomic publication.

A release is built in `ROOT/releases/.staging-<id>/`, renamed to `ROOT/releases/<id>/`, and only
then gets `manifest.json` (a reader never sees half a release). `ROOT/published.json` names the
last release that passed its gate; it is replaced atomically and only by a passing release.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.schemas import TableSpec, comment_of, table_specs
from mathindex.schemas.views import VIEWS, View

MANIFEST = "manifest.json"
PUBLISHED = "published.json"


def write_table(table: pa.Table, spec: TableSpec, directory: Path) -> Path:
    """Writes `<name>.parquet` cast to the spec's schema and sorted by its keys (deterministic)."""
    table = table.select(spec.schema.names).cast(spec.schema)
    if table.num_rows:
        table = table.sort_by([(k, "ascending") for k in spec.sort_keys])
    path = directory / f"{spec.name}.parquet"
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd", row_group_size=65536)
    os.replace(tmp, path)
    return path


def read_table(directory: Path, name: str) -> pa.Table:
    return pq.read_table(directory / f"{name}.parquet")


def write_duckdb(directory: Path, names: list[str]) -> Path:
    """`search.duckdb` holding a copy of each Parquet table (same rows, same order). Each table is
    created from its schema first (NOT NULL kept: CREATE TABLE AS from Parquet drops it), then
    filled; table and column comments come from the schemas; then the views and table macros of
    `schemas.views` whose tables are all present."""
    specs = table_specs()
    path = directory / "search.duckdb"
    tmp = directory / "search.duckdb.tmp"
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        for name in names:
            for statement in table_ddl(specs[name]):
                con.execute(statement)
            src = _sql_string((directory / f"{name}.parquet").as_posix())
            con.execute(f'INSERT INTO "{name}" BY NAME SELECT * FROM read_parquet({src})')
        for view in VIEWS:
            if set(view.tables) <= set(names):
                write_view(con, view, [specs[t].schema for t in view.tables])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, path)
    return path


_SQL_TYPES = {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN", pa.float64(): "DOUBLE"}


def _sql_type(t: pa.DataType) -> str:
    return _sql_type(t.value_type) + "[]" if pa.types.is_list(t) else _SQL_TYPES[t]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_ddl(spec: TableSpec) -> list[str]:
    """CREATE TABLE (NOT NULL for each non-nullable field) and the COMMENT ON statements of a
    table, from its schema and the descriptions on it (`schemas.comment_of`)."""
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


def write_json(path: Path, obj: object) -> None:
    """JSON with sorted keys, written to a temporary name and renamed."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file under a release directory except the manifest."""
    return {
        p.relative_to(directory).as_posix(): sha256_file(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def staging_dir(root: Path, release_id: str) -> Path:
    path = root / "releases" / f".staging-{release_id}"
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def finalise(staging: Path, release_id: str, manifest: dict) -> Path:
    """Renames staging to its final name, then writes the manifest last."""
    final = staging.parent / release_id
    if final.exists():
        raise FileExistsError(f"release already exists: {final}")
    os.replace(staging, final)
    write_json(final / MANIFEST, manifest)
    return final


def discard(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def building(root: Path, release_id: str) -> Iterator[Path]:
    """A fresh staging directory for a release; removed if the block fails (whatever the error),
    so a failed build leaves nothing behind and never touches published releases."""
    staging = staging_dir(root, release_id)
    try:
        yield staging
    except BaseException:
        discard(staging)
        raise


def published_release(root: Path) -> Path | None:
    """The last release that passed its gate, or None."""
    pointer = root / PUBLISHED
    if not pointer.is_file():
        return None
    rid = json.loads(pointer.read_text(encoding="utf-8"))["release_id"]
    path = root / "releases" / rid
    return path if (path / MANIFEST).is_file() else None


def published_releases(root: Path, limit: int) -> list[Path]:
    """The last `limit` published releases under root, oldest first: those whose manifest says
    `published`, up to the one `published.json` names (one after it was withdrawn by pointing
    back). Release ids begin with their UTC build time, so name order is build order."""
    last = published_release(root)
    if last is None:
        return []
    found = []
    for path in sorted((root / "releases").iterdir()):
        if path.name.startswith(".") or path.name > last.name or not (path / MANIFEST).is_file():
            continue
        try:
            if load_manifest(path).get("published") is True:
                found.append(path)
        except (OSError, ValueError):
            continue
    return found[-limit:] if limit > 0 else []


def publish(root: Path, release_id: str) -> None:
    write_json(root / PUBLISHED, {"release_id": release_id})


def verify_release(release: Path) -> list[str]:
    """What is wrong with a release directory against its manifest: a missing manifest, or a file
    the manifest lists that is missing or whose sha256 differs (empty: the release is intact)."""
    try:
        manifest = load_manifest(release)
    except (OSError, ValueError) as exc:
        return [f"manifest: {exc}"]
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return ["manifest lists no file hashes"]
    problems = []
    for rel, expected in sorted(files.items()):
        path = release / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(path) != expected:
            problems.append(f"{rel}: sha256 mismatch")
    return problems


def load_manifest(release: Path) -> dict:
    path = release / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"not a complete release (no {MANIFEST}): {release}")
    return json.loads(path.read_text(encoding="utf-8"))
