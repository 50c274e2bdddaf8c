"""The tables a release flow holds between its stages, on disk: each written once into the staging
release's work folder as an Arrow IPC file and read back memory-mapped. The flow then holds them as
file pages the kernel can drop, not as anonymous memory, and a stage's working set is what it adds.
At k = 1 of bench/scale.py (whole Mathlib and the Stacks Project) the flow held 2.4 GB of tables
when it published (bench/experiments/flow_memory.py); at 10x that would not fit one machine."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from mathindex.cache.shards import read_arrow, write_arrow
from mathindex.store.layout import ReleaseLayout

T = TypeVar("T")


def spilled(release_dir: Path, name: str, value: T) -> T:
    """`value` with its tables memory-mapped from `release_dir`'s work folder: a pa.Table, or a
    dataclass whose pa.Table fields are (each as `name.field`); the same rows, columns and chunks.
    The caller drops its own reference to the in-memory tables by rebinding to the result."""
    if isinstance(value, pa.Table):
        path = write_arrow(ReleaseLayout(release_dir).work / f"{name}.arrow", value)
        table = read_arrow(path, remove=False)
        if table is None:  # unreadable right after writing: a disk error, not bad input
            raise OSError(f"could not read back {path}")
        return table
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        tables = {f.name: spilled(release_dir, f"{name}.{f.name}", getattr(value, f.name))
                  for f in dataclasses.fields(value) if isinstance(getattr(value, f.name), pa.Table)}
        return dataclasses.replace(value, **tables)
    raise TypeError(f"cannot spill {type(value).__name__}: a pa.Table or a dataclass of them")


def drop_spilled(release_dir: Path) -> None:
    """Removes the work folder before the manifest lists the release's files; the tables stay
    readable where they are mapped (Linux keeps an unlinked file while it is mapped)."""
    shutil.rmtree(ReleaseLayout(release_dir).work, ignore_errors=True)
