"""The formula parse cache: a warm rebuild gives the same rows, errors and index bytes without
parsing; another code version misses; a corrupt part is dropped with a warning and rebuilt."""

from __future__ import annotations

import hashlib
import logging
import shutil
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mathindex.formula.api as api
from mathindex.formula.api import lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex
from mathindex.cache import digest
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore
from mathindex.cache.codes import FORMULA_FEATURES, FORMULAS
from mathindex.formula import parse_cache
from mathindex.formula.parse_cache import SCHEMA, content_key, parse_version
from mathindex.textfold import PY_WHITESPACE

LATEX = [
    r"(a+b)^2 = a^2 + 2ab + b^2",  # a canonical form
    r"\frac{x}{y} + z",
    r"a^2 + b^2 = c^2",
    r"\frac{x}{y} + z",  # the same text twice: parsed once, two rows
    "{" * 70 + "x" + "}" * 70,  # past the grammar's depth: a parse_formula error row
    r"a + ) b",  # malformed: a partial tree, with an error row
]
LEAN = ["∀ n : ℕ, n + 0 = n", "a * b = b * a", "Type u", "x + \\frac{x}{y}"]


def corpus() -> pa.Table:
    rows = [{"formula_id": hashlib.sha256(f"c|{i}".encode()).hexdigest()[:16], "corpus": "c",
             "file": f"f{i % 2}.tex", "line": i + 1, "latex": s, "latex_normalised": s, "source": "latex"}
            for i, s in enumerate(LATEX)]
    rows += [{"formula_id": f"lean{i}", "corpus": "c", "file": "L.lean", "line": i + 1, "latex": s,
              "latex_normalised": s, "source": "lean"} for i, s in enumerate(LEAN)]
    return pa.Table.from_pylist(rows)


def formulas_dir(cache_dir) -> Path:
    return CacheLayout(cache_dir).root / CacheLayout.FORMULAS


def no_parsing(monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("parsed a formula the cache holds")
    monkeypatch.setattr(api, "analyse", refuse)


@pytest.fixture(scope="module")
def uncached() -> tuple[pa.Table, pa.Table]:
    return parse_formulas(corpus(), budget_s=5.0)


def test_warm_cache_gives_identical_rows_without_parsing(tmp_path, uncached, monkeypatch) -> None:
    trees, errors = uncached
    assert errors.num_rows >= 2 and "ok" in trees.column("canonical_status").to_pylist()
    cold = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert cold[0].equals(trees) and cold[1].equals(errors)
    assert len(list(formulas_dir(tmp_path).glob("*/*.parquet"))) == 1
    no_parsing(monkeypatch)
    warm = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert warm[0].equals(trees) and warm[1].equals(errors)
    assert warm[0].column("formula_id").to_pylist() == corpus().column("formula_id").to_pylist()


def test_only_new_formulas_are_parsed(tmp_path, uncached, monkeypatch) -> None:
    parse_formulas(corpus().slice(0, 5), budget_s=5.0, cache_dir=tmp_path)
    seen: list[str] = []
    real = api.analyse
    monkeypatch.setattr(api, "analyse", lambda text, lean=False: seen.append(text) or real(text, lean=lean))
    trees, errors = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert sorted(seen) == sorted(set(LATEX[5:] + LEAN))
    assert trees.equals(uncached[0]) and errors.equals(uncached[1])
    assert len(list(formulas_dir(tmp_path).glob("*/*.parquet"))) == 2


def test_another_code_version_misses(tmp_path, monkeypatch) -> None:
    parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    parse_formulas(corpus(), budget_s=4.0, cache_dir=tmp_path)  # the budget is part of the version
    assert len(list(formulas_dir(tmp_path).iterdir())) == 2
    monkeypatch.setattr(parse_cache, "parse_version", lambda budget_s: "edited-grammar")
    seen: list[str] = []
    real = api.analyse
    monkeypatch.setattr(api, "analyse", lambda text, lean=False: seen.append(text) or real(text, lean=lean))
    parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert len(seen) == len(set(LATEX + LEAN))


def test_code_version_follows_the_makers_sources(tmp_path, monkeypatch) -> None:
    assert parse_version(2.0) == parse_version(2.0) != parse_version(1.0)  # the budget decides `timeout`
    pkg = tmp_path / "mathindex"
    shutil.copytree(digest.PACKAGE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(digest, "PACKAGE_DIR", pkg)
    digest.code_digest.cache_clear()
    try:
        before, features = FORMULAS.digest(), FORMULA_FEATURES.digest()
        index = pkg / "formula" / "formula_index.py"
        index.write_text("# the index reads trees; it does not make them\n", encoding="utf-8")
        digest.code_digest.cache_clear()
        assert FORMULAS.digest() == before and FORMULA_FEATURES.digest() != features
        parser = pkg / "formula" / "parser.py"
        parser.write_text(parser.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        digest.code_digest.cache_clear()
        assert FORMULAS.digest() != before
    finally:
        digest.code_digest.cache_clear()


def test_corrupt_part_is_ignored_with_a_warning_and_rebuilt(tmp_path, uncached, caplog) -> None:
    parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    [part] = list(formulas_dir(tmp_path).glob("*/*.parquet"))
    part.write_bytes(b"PAR1 not a parquet file")
    with caplog.at_level(logging.WARNING, logger="mathindex.cache.shards"):
        trees, errors = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert trees.equals(uncached[0]) and errors.equals(uncached[1])
    assert any("skipping damaged" in r.getMessage() for r in caplog.records)
    [rebuilt] = list(formulas_dir(tmp_path).glob("*/*.parquet"))
    keys = pl.Series([content_key(s, False) for s in LATEX] + [content_key(s, True) for s in LEAN])
    assert ShardStore(rebuilt.parent, SCHEMA).load(keys).height == len(set(LATEX)) + len(LEAN)


def test_part_with_another_schema_is_ignored(tmp_path, uncached, caplog) -> None:
    parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    [part] = list(formulas_dir(tmp_path).glob("*/*.parquet"))
    pq.write_table(pa.table({"key": ["k"]}), part)
    with caplog.at_level(logging.WARNING, logger="mathindex.cache.shards"):
        trees, _ = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path)
    assert trees.equals(uncached[0]) and any("skipping damaged" in r.getMessage() for r in caplog.records)


def test_index_from_cached_rows_is_byte_identical(tmp_path, uncached, monkeypatch) -> None:
    parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path / "cache")
    no_parsing(monkeypatch)
    warm, _ = parse_formulas(corpus(), budget_s=5.0, cache_dir=tmp_path / "cache")
    FormulaIndex.build(uncached[0], corpus(), tmp_path / "a")
    FormulaIndex.build(warm, corpus(), tmp_path / "b")
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(files) >= 10 and files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_lean_formulas_folds_whitespace_as_str_split() -> None:
    chars = pl.Series([chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF])
    spaces = "".join(c for c in chars if c.isspace())
    assert chars.str.contains(f"^{PY_WHITESPACE}$").to_list() == [c.isspace() for c in chars]
    decls = pa.Table.from_pylist([
        {"full_name": "A.b", "type": f"{spaces}a{spaces}= b\x1c\u3000", "corpus": "c", "file": "A.lean", "line_start": 3},
        {"full_name": "A.c", "type": "\u2003Type\u00a0u", "corpus": "c", "file": "A.lean", "line_start": 4},
        {"full_name": "A.d", "type": "x\u200b= y", "corpus": "c", "file": "A.lean", "line_start": None},
    ])
    t = lean_formulas(decls)
    assert t.column("latex").to_pylist() == ["a = b", "x\u200b= y"]  # a zero-width space is no space
    assert t.column("position").to_pylist() == [0, 1] and t.column("line").to_pylist() == [3, 0]
    key = "c|A.lean|lean|A.d|None"
    assert t.column("formula_id")[1].as_py() == hashlib.sha256(key.encode()).hexdigest()[:16]


def test_index_features_from_the_cache_give_the_same_bytes(tmp_path, uncached, monkeypatch) -> None:
    import mathindex.formula.formula_index as index

    FormulaIndex.build(uncached[0], corpus(), tmp_path / "a")
    FormulaIndex.build(uncached[0], corpus(), tmp_path / "b", cache_dir=tmp_path / "cache")
    assert len(list((CacheLayout(tmp_path / "cache").formula_features(FORMULA_FEATURES.digest())).glob("*.parquet"))) == 1
    monkeypatch.setattr(index, "features", lambda *_a, **_k: pytest.fail("computed a cached tree's features"))
    FormulaIndex.build(uncached[0], corpus(), tmp_path / "c", cache_dir=tmp_path / "cache")
    for name in sorted(p.name for p in (tmp_path / "a").iterdir()):
        a = (tmp_path / "a" / name).read_bytes()
        assert a == (tmp_path / "b" / name).read_bytes() == (tmp_path / "c" / name).read_bytes(), name
    monkeypatch.undo()  # a query's features are computed
    hits = FormulaIndex.open(tmp_path / "c").search(r"(a+b)^2", k=3)
    assert hits and hits[0][0] == uncached[0].column("formula_id")[0].as_py()
