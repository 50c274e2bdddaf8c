"""The cache layer: declared code sets against the makers' imports, one place that names the
folders, checked shards and entries, and (e2e) a damaged cache of each kind costing a recompute,
never a wrong release."""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore
from mathindex.cache.codes import CACHES, FORMAL, FORMULA_FEATURES, INFORMAL, LEAN, TOKENS
from mathindex.cache.digest import PACKAGE_DIR, expand, import_closure
from mathindex.cache.shards import DIGESTS, publish_dir, verify, write_json
from mathindex.formula.parse_cache import parse_version
from mathindex.store.layout import RootLayout
from mathindex.store.releases import published_release

_spec = importlib.util.spec_from_file_location("release_diff", PACKAGE_DIR.parent / "bench" / "release_diff.py")
release_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release_diff)
RUN_RECORDS = {"manifest.json", "release-notes.md", "search.duckdb"}  # differ between identical builds
FOLDERS = {v for k, v in vars(CacheLayout).items() if k.isupper() and isinstance(v, str)}
GARBAGE = b"not what the cache wrote"


@pytest.mark.parametrize("name", sorted(n for n, code in CACHES.items() if code is not None))
def test_a_declared_code_set_holds_every_module_its_makers_import(name):
    code = CACHES[name]
    declared = set(expand(code.modules))
    imported = {m for m in import_closure(code.makers) if not m.startswith("mathindex.cache")}
    assert set(code.makers) <= declared
    assert not imported - declared, f"{name}: the makers import modules its code set misses"


def test_the_lean_cache_covers_the_files_it_reads_through():
    assert "mathindex.corpusfiles" in expand(LEAN.modules)


def test_only_the_layout_names_a_cache_folder():
    """No `<something cache> / "<folder>"` and no cache entry prefix outside cache/layout.py."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")) + sorted((PACKAGE_DIR.parent / "bench").glob("*.py")):
        if path == PACKAGE_DIR / "cache" / "layout.py":
            continue
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                    and node.right.value in FOLDERS and "cache" in ast.unparse(node.left).lower():
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.startswith(("lean-final-", "statements-", "lean-")):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not found


def test_threads_of_one_process_write_the_same_file_at_once(tmp_path):
    """The embed shards of a local run are threads of one process, and each writes the cache's
    meta.json when it is missing: every writer must finish, and the file must be whole."""
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "meta.json"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: write_json(path, {"writer": i, "pad": "x" * 100_000}), range(200)))
    assert json.loads(path.read_text())["pad"] == "x" * 100_000
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]


def test_a_damaged_shard_is_skipped_logged_and_removed(tmp_path, caplog):
    schema = pa.schema([("key", pa.string()), ("v", pa.int64())])
    store = ShardStore(tmp_path / "s", schema)
    store.add(pl.DataFrame({"key": ["a", "b"], "v": [1, 2]}))
    store.add(pl.DataFrame({"key": ["c"], "v": [3]}))
    assert store.load(pl.Series(["a", "c", "z"])).sort("key")["v"].to_list() == [1, 3]
    bad = store.shards()[0]
    bad.write_bytes(GARBAGE)
    with caplog.at_level(logging.WARNING):
        left = store.load()
    assert left.height in (1, 2) and not bad.exists() and "skipping damaged" in caplog.text
    other = pa.schema([("key", pa.string()), ("v", pa.string())])
    ShardStore(tmp_path / "s", other).add(pl.DataFrame({"key": ["d"], "v": ["x"]}))  # another schema
    assert "d" not in store.load()["key"].to_list()


def test_a_sealed_entry_is_verified_file_by_file(tmp_path, caplog):
    tmp = tmp_path / ".tmp-entry"
    (tmp / "sub").mkdir(parents=True)
    (tmp / "a.json").write_text('{"w": 1}')
    (tmp / "sub" / "b.bin").write_bytes(b"\0\1")
    entry = publish_dir(tmp, tmp_path / "entry")
    assert (entry / DIGESTS).is_file() and verify(entry) and verify(entry, ["a.json"])
    (entry / "a.json").write_text('{"w": 2}')  # still valid JSON: only the digest tells
    with caplog.at_level(logging.WARNING):
        assert not verify(entry, remove=False)
    assert "a.json" in caplog.text and entry.exists()
    assert not verify(entry) and not entry.exists()


# -- e2e: the sample release from a damaged cache is the cold build's, and says so in the log --------


def _garbage(path: Path) -> Path:
    assert path.is_file(), path
    path.write_bytes(GARBAGE)
    return path


def _first(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert found, f"nothing like {pattern} in {folder}"
    return found[0]


def _tokens(c: CacheLayout) -> Path:
    return _garbage(_first(c.tokens(TOKENS.digest()), "*.parquet"))


def _stages(c: CacheLayout) -> Path:
    for stage in ("informalise", "embedding_texts"):
        _garbage(_first(c.stage(stage), "*.parquet"))
    return c.stage("embedding_texts")


def _informal(c: CacheLayout) -> Path:
    shutil.rmtree(c.stage("informalise"))  # else the whole stage comes from the stage cache
    return _garbage(_first(c.informal(INFORMAL.digest()), "*.parquet"))


def _formulas(c: CacheLayout) -> Path:
    from mathindex.flows.release import SYMPY_BUDGET_S

    return _garbage(_first(c.formulas(parse_version(SYMPY_BUDGET_S)), "*.parquet"))


def _formula_features(c: CacheLayout) -> Path:
    return _garbage(_first(c.formula_features(FORMULA_FEATURES.digest()), "*.parquet"))


def _embeddings(c: CacheLayout) -> Path:
    return _garbage(_first(c.root / CacheLayout.EMBEDDINGS, "*/*.keys.npy"))


def _lean_rows(c: CacheLayout) -> Path:
    for final in c.lean_finals():  # else the whole tree comes from its final tables
        shutil.rmtree(final)
    return _garbage(_first(c.lean, "*/*/raw.arrow"))


def _lean_final(c: CacheLayout) -> Path:
    return _garbage(c.lean_finals()[0] / "declarations.arrow")


def _formal(c: CacheLayout) -> Path:
    return _garbage(_first(c.formal_statements(FORMAL.digest()), "*.parquet"))


def _premises(c: CacheLayout) -> Path:
    weights = _first(c.premises, "*/weights.json")
    weights.write_text(json.dumps({"lexical": 9.0}))  # valid, and wrong: only the entry's digests tell
    return weights


def _premise_features(c: CacheLayout) -> Path:
    return _garbage(_first(c.premise_features, "*/*.parquet"))  # read when the premises entry misses (damaged too)


def _bench(c: CacheLayout) -> Path:
    metrics = _first(c.bench, "*/metrics.json")
    got = json.loads(metrics.read_text())
    got["headline"] = {k: 0.0 for k in got["headline"]}
    metrics.write_text(json.dumps(got))
    return metrics


def _onnx(c: CacheLayout) -> Path:
    shutil.copytree(os.environ["MATHINDEX_ONNX_DIR"], c.onnx)
    return _garbage(_first(c.onnx, "*/*/model.onnx"))


DAMAGE: dict[str, Callable[[CacheLayout], Path]] = {
    "tokens": _tokens, "stages": _stages, "informal": _informal, "formulas": _formulas,
    "formula-features": _formula_features, "embeddings": _embeddings, "lean-rows": _lean_rows,
    "lean-final": _lean_final, "formal": _formal, "premises": _premises, "premise-features": _premise_features, "bench": _bench, "onnx": _onnx,
}
# Caches damaged together in one rebuild: the informal cache and the Lean rows are only read when
# the stage cache and the Lean final tables miss, which the other group's damage would not let
# them do alone, so they have a build of their own.
GROUPS = {"informal+lean-rows": ("informal", "lean-rows"),
          "the rest": tuple(sorted(set(DAMAGE) - {"informal", "lean-rows"}))}


@pytest.mark.e2e
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_a_damaged_cache_costs_a_recompute_never_a_wrong_release(group, sample_release_root, tmp_path, caplog,
                                                                 monkeypatch):
    """The sample release built from a copy of the cold build's cache with one entry of each cache
    of the group damaged: every file but those that record the run is the cold build's, and each
    damage was logged, naming the damaged file or the entry that holds it."""
    from mathindex.flows.release import release_flow

    cold = published_release(sample_release_root)
    root = tmp_path / "root"
    caches = RootLayout(root).caches
    shutil.copytree(RootLayout(sample_release_root).cache, caches.root)
    damaged = {cache: DAMAGE[cache](caches) for cache in GROUPS[group]}
    if "onnx" in damaged:
        monkeypatch.delenv("MATHINDEX_ONNX_DIR")  # the root's own exports, one of them damaged
    with caplog.at_level(logging.WARNING):
        outcome = release_flow(out=str(root))
    assert outcome.passed, outcome.gate
    same, diff, only_cold, only_new = release_diff.compare(cold, published_release(root))
    assert set(diff) <= RUN_RECORDS and not only_cold and not only_new, diff
    assert len(same) > 40
    logged = [Path(r.args[0]) for r in caplog.records if r.getMessage().startswith("cache: skipping damaged")]
    for cache, path in damaged.items():
        assert any(p == path or p in path.parents or path in p.parents for p in logged), (cache, path, logged)
