"""A release whose tables and catalog equal the previous release's links its search.duckdb."""

from __future__ import annotations

import json
import shutil

import duckdb
import pyarrow as pa

from mathindex.store import tables as store
from mathindex.schemas import table_specs
from mathindex.schemas.common import ERRORS, error_row
from mathindex.store.integrity import file_hashes
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import write_duckdb, write_table
from tests.manifests import manifest_json


def release_dir(path, reasons: list[str]):
    path.mkdir(parents=True)
    specs = table_specs()
    write_table(pa.Table.from_pylist([error_row("c", "f.lean", i, "extract_lean", r) for i, r in enumerate(reasons)],
                                     schema=ERRORS), specs["errors"], path)
    write_table(specs["nodes"].schema.empty_table(), specs["nodes"], path)
    return path


def published(path) -> None:
    write_duckdb(path, ["errors", "nodes"])
    (path / "manifest.json").write_text(json.dumps(manifest_json(files=file_hashes(path))))


def test_the_previous_database_is_linked_only_for_the_same_tables_and_catalog(tmp_path, monkeypatch):
    a = release_dir(tmp_path / "a", ["x", "y"])
    published(a)
    b = release_dir(tmp_path / "b", ["x", "y"])
    write_duckdb(b, ["errors", "nodes"], previous=a)
    assert ReleaseLayout(b).duckdb.stat().st_ino == ReleaseLayout(a).duckdb.stat().st_ino  # linked
    c = release_dir(tmp_path / "c", ["x", "z"])  # other rows
    write_duckdb(c, ["errors", "nodes"], previous=a)
    assert ReleaseLayout(c).duckdb.stat().st_ino != ReleaseLayout(a).duckdb.stat().st_ino
    con = duckdb.connect(str(ReleaseLayout(c).duckdb), read_only=True)
    assert [r[0] for r in con.execute("SELECT reason FROM errors ORDER BY line").fetchall()] == ["x", "z"]
    con.close()
    d = release_dir(tmp_path / "d", ["x", "y"])
    write_duckdb(d, ["errors"], previous=a)  # fewer tables
    assert ReleaseLayout(d).duckdb.stat().st_ino != ReleaseLayout(a).duckdb.stat().st_ino
    e = release_dir(tmp_path / "e", ["x", "y"])
    monkeypatch.setattr(store, "table_ddl", lambda spec: [*_ddl(spec), f"COMMENT ON TABLE \"{spec.name}\" IS 'new words'"])
    write_duckdb(e, ["errors", "nodes"], previous=a)  # the same rows, another comment: built anew
    assert ReleaseLayout(e).duckdb.stat().st_ino != ReleaseLayout(a).duckdb.stat().st_ino
    monkeypatch.undo()
    shutil.copy(ReleaseLayout(a).duckdb, tmp_path / "saved")
    with open(ReleaseLayout(a).duckdb, "r+b") as f:  # damage the published database
        f.seek(5000)
        f.write(b"\0garbage\0")
    f2 = release_dir(tmp_path / "f", ["x", "y"])
    write_duckdb(f2, ["errors", "nodes"], previous=a)
    assert ReleaseLayout(f2).duckdb.stat().st_ino != ReleaseLayout(a).duckdb.stat().st_ino


_ddl = store.table_ddl


def _contents(path) -> list:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = [con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in ("errors", "nodes", "bench_results")]
        return [store._catalog(con), rows]
    finally:
        con.close()


def test_a_database_started_beside_the_benchmarks_equals_one_built_at_once(tmp_path):
    """start_duckdb loads the first tables while the last (bench_results) is still being made;
    finish_duckdb adds it and the views that read it: the same catalog and rows as write_duckdb.
    When the first tables equal the previous release's, nothing is started and the database can
    still be linked."""
    specs = table_specs()
    names = ["bench_results", "errors", "nodes"]
    once = release_dir(tmp_path / "once", ["x", "y"])
    write_table(specs["bench_results"].schema.empty_table(), specs["bench_results"], once)
    write_duckdb(once, names)
    two = release_dir(tmp_path / "two", ["x", "y"])
    part = store.start_duckdb(two, ["errors", "nodes"])
    assert part is not None and part.is_file() and not ReleaseLayout(two).duckdb.exists()
    write_table(specs["bench_results"].schema.empty_table(), specs["bench_results"], two)
    store.finish_duckdb(two, names, None, part, ["errors", "nodes"])
    assert not part.exists() and _contents(ReleaseLayout(two).duckdb) == _contents(ReleaseLayout(once).duckdb)
    # the same first tables as a published release: nothing started, the database linked at the end
    (once / "manifest.json").write_text(json.dumps(manifest_json(files=file_hashes(once))))
    three = release_dir(tmp_path / "three", ["x", "y"])
    assert store.start_duckdb(three, ["errors", "nodes"], previous=once) is None
    write_table(specs["bench_results"].schema.empty_table(), specs["bench_results"], three)
    store.finish_duckdb(three, names, once, None, ["errors", "nodes"])
    assert ReleaseLayout(three).duckdb.stat().st_ino == ReleaseLayout(once).duckdb.stat().st_ino
