"""The tables a release flow holds between stages, memory-mapped from the staging release's work
folder (tasks/spill.py), and release tables written a row group at a time (store/tables.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.schemas import table_specs
from mathindex.store import tables
from mathindex.store.layout import ReleaseLayout
from mathindex.tasks.spill import drop_spilled, spilled


def _declarations(n: int, seed: int = 0) -> pa.Table:
    """`n` rows of the declarations schema in a shuffled order, over several chunks."""
    spec = table_specs()["declarations"]
    rng = np.random.default_rng(seed)
    cols = {}
    for f in spec.schema:
        if pa.types.is_string(f.type):
            cols[f.name] = pa.array([f"{f.name}-{int(i):05d}" for i in rng.permutation(n)], f.type)
        elif pa.types.is_integer(f.type):
            cols[f.name] = pa.array(rng.integers(0, 50, n), f.type)
        elif pa.types.is_boolean(f.type):
            cols[f.name] = pa.array(rng.integers(0, 2, n).astype(bool), f.type)
        else:
            cols[f.name] = pa.nulls(n, f.type) if f.nullable else pa.array([[]] * n, f.type)
    table = pa.table(cols, schema=spec.schema)
    return pa.concat_tables([table.slice(0, n // 3), table.slice(n // 3)])


def test_a_spilled_table_is_the_same_table_memory_mapped(tmp_path):
    table = _declarations(2000)
    before = pa.total_allocated_bytes()
    got = spilled(tmp_path, "extracted.declarations", table)
    assert pa.total_allocated_bytes() - before < table.nbytes / 10  # its buffers are the file's pages
    assert got.equals(table) and got.schema == table.schema
    assert [len(c) for c in got.column(0).chunks] == [len(c) for c in table.column(0).chunks]
    assert (ReleaseLayout(tmp_path).work / "extracted.declarations.arrow").is_file()


@dataclass(frozen=True)
class _Built:
    table: pa.Table
    other: pa.Table
    note: str


def test_a_dataclass_has_each_table_field_spilled_and_the_rest_kept(tmp_path):
    built = _Built(pa.table({"a": [1, 2]}), pa.table({"b": ["x"]}), "kept")
    got = spilled(tmp_path, "formal", built)
    assert got.note == "kept" and got.table.equals(built.table) and got.other.equals(built.other)
    work = ReleaseLayout(tmp_path).work
    assert sorted(p.name for p in work.iterdir()) == ["formal.other.arrow", "formal.table.arrow"]
    drop_spilled(tmp_path)
    assert not work.exists()
    assert got.table.column("a").to_pylist() == [1, 2]  # still mapped after the files are gone


def test_spilling_something_else_is_refused(tmp_path):
    with pytest.raises(TypeError, match="cannot spill dict"):
        spilled(tmp_path, "x", {"a": 1})


def test_a_table_written_a_row_group_at_a_time_has_the_bytes_of_one_write(tmp_path, monkeypatch):
    """write_table's bytes equal pq.write_table of the sorted table, over several row groups (a
    small ROW_GROUP here), from a spilled table as the flow gives it; an empty table too."""
    monkeypatch.setattr(tables, "ROW_GROUP", 7)
    spec = table_specs()["declarations"]
    for n in (0, 1, 7, 50):
        table = spilled(tmp_path, f"t{n}", _declarations(n, seed=n))
        (tmp_path / f"new{n}").mkdir()
        path = tables.write_table(table, spec, tmp_path / f"new{n}")
        pq.write_table(tables.release_order(table, spec), tmp_path / f"old{n}.parquet", compression="zstd",
                       row_group_size=7)
        assert path.read_bytes() == (tmp_path / f"old{n}.parquet").read_bytes(), n
        meta = pq.ParquetFile(path).metadata
        assert meta.num_rows == n
        if n:
            assert meta.num_row_groups == -(-n // 7)
            rows = pq.read_table(path, columns=list(spec.sort_keys)).to_pylist()
            keys = [tuple(r[k] for k in spec.sort_keys) for r in rows]
            assert keys == sorted(keys)


def test_the_sample_release_has_no_work_folder(sample_release_root):
    from mathindex.store.releases import published_release

    release = published_release(sample_release_root)
    assert not ReleaseLayout(release).work.exists()
    assert not [p for p in release.rglob("*.arrow")]
