"""Tasks return frozen records, and the flows read the manifest entries from them."""

from __future__ import annotations

import dataclasses
import inspect

import pyarrow as pa
import pytest

from mathindex.tasks import BenchRun, IndexBuild, TableBuild
from mathindex.tasks.bench import run_benchmarks
from mathindex.tasks.formal import formal_index
from mathindex.tasks.formulas import build_formula_index
from mathindex.tasks.premises import premise_index
from mathindex.tasks.search_index import lexical_index


def test_an_index_build_cannot_be_edited_after_its_task_returned():
    figures = {"documents": 3, "nested": {"a": 1}}
    built = IndexBuild("lexical", figures)
    figures["documents"] = 99  # the caller's dict is copied, not kept
    with pytest.raises(TypeError):
        built.figures["documents"] = 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.kind = "other"
    more = built.with_figures(table_bytes=10)
    assert built.manifest_entry() == {"documents": 3, "nested": {"a": 1}}
    assert more.manifest_entry() == {"documents": 3, "nested": {"a": 1}, "table_bytes": 10}
    entry = more.manifest_entry()
    entry["nested"]["a"] = 2  # a manifest entry is a copy too
    assert more.figures["nested"]["a"] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        TableBuild(pa.table({"x": [1]}), built).index = more


def test_the_release_tasks_are_declared_to_return_records():
    for task, record in ((build_formula_index, "IndexBuild"), (lexical_index, "IndexBuild"),
                         (premise_index, "IndexBuild"), (formal_index, "TableBuild"), (run_benchmarks, "BenchRun")):
        assert inspect.signature(task.fn).return_annotation == record, task.name
    assert dataclasses.is_dataclass(BenchRun) and BenchRun.__dataclass_params__.frozen
