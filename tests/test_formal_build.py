"""The formal index build: one walk gives what the reference functions give, the worker pool and
the content cache give the same index as a plain build, and a warm rebuild parses nothing; the
soft channel finds a structure by its fields' names and signatures."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.cache.layout import CacheLayout
from mathindex.cache.codes import FORMAL
from mathindex.formal import FORMAL_DIR, build_formal_index
from mathindex.formal.keys import leaf_symbols, tree_facts, tree_keys
from mathindex.formal.normal import size
from mathindex.formal.search import FormalIndex
from mathindex.formal.telescope import TelescopeBuilder
from tests.formal_fixture import STATEMENTS, declarations_table, dependencies_table


def _build(directory, rows=STATEMENTS, **kwargs):
    statements, info = build_formal_index(declarations_table(rows), dependencies_table(), directory / FORMAL_DIR, **kwargs)
    pq.write_table(statements, directory / "formal_statements.parquet")
    return statements, info


def _files(directory):
    return {p.name: p.read_bytes() for p in sorted((directory / FORMAL_DIR).iterdir())}


def test_tree_facts_is_the_three_walks_in_one():
    builder = TelescopeBuilder()
    seen = 0
    for _, sig, variables, _ in STATEMENTS:
        cut = sig.index(":") if sig.startswith(":") else sig.rindex(") :") + 2
        tele = builder.of_declaration(sig, sig[cut + 1:].strip(), variables)
        if tele is None:
            continue
        trees = [tele.conclusion, *tele.hypotheses]
        keys, symbols, n = tree_facts(tele.hypotheses, tele.conclusion)
        assert keys == tree_keys(tele.hypotheses, tele.conclusion)
        assert symbols == leaf_symbols(trees)
        assert n == sum(size(t) for t in trees)
        seen += 1
    assert seen >= 15


def test_pool_and_cache_give_the_same_index(tmp_path):
    plain, info = _build(tmp_path / "plain", workers=1)
    pooled, _ = _build(tmp_path / "pooled", workers=2, cache_dir=tmp_path / "cache", shard_statements=3)  # 7 shards, 2 processes
    assert pooled.equals(plain) and _files(tmp_path / "pooled") == _files(tmp_path / "plain")
    warm, warm_info = _build(tmp_path / "warm", workers=2, cache_dir=tmp_path / "cache")
    assert warm.equals(plain) and _files(tmp_path / "warm") == _files(tmp_path / "plain")
    # Demo.prod_one and Demo.sum_zero share their text but not `to_additive`: 20 distinct statements
    assert warm_info["statements_parsed"] == 0 and warm_info["statements_cached"] == 20
    assert info["declarations"] == 20 and plain.column("doc").to_pylist() == list(range(20))


def test_cache_parses_only_changed_statements(tmp_path):
    _build(tmp_path / "first", cache_dir=tmp_path / "cache")
    changed = list(STATEMENTS)
    changed[0] = ("Demo.mul_comm", ": ∀ a b : G, b * a = a * b", changed[0][2], changed[0][3])
    rebuilt, info = _build(tmp_path / "second", rows=changed, cache_dir=tmp_path / "cache")
    fresh, _ = _build(tmp_path / "fresh", rows=changed)
    assert info["statements_parsed"] == 1 and info["statements_cached"] == 19
    assert rebuilt.equals(fresh) and _files(tmp_path / "second") == _files(tmp_path / "fresh")


def test_damaged_cache_is_rebuilt(tmp_path):
    _build(tmp_path / "first", cache_dir=tmp_path / "cache")
    cached = sorted(CacheLayout(tmp_path / "cache").formal_statements(FORMAL.digest()).glob("*.parquet"))
    assert len(cached) == 1
    cached[0].write_bytes(b"not parquet")
    again, info = _build(tmp_path / "second", cache_dir=tmp_path / "cache")
    plain, _ = _build(tmp_path / "plain")
    assert info["statements_parsed"] == 20 and again.equals(plain)


AUTOMATA = [  # (full_name, kind, signature)
    ("Demo.Automaton", "structure", "(α : Type u) (σ : Type v)"),
    ("Demo.Automaton.step", "field", ": σ → α → σ"),
    ("Demo.Automaton.start", "field", ": σ"),
    ("Demo.Automaton.accept", "field", ": Set σ"),
    ("Demo.Counter", "structure", "(σ : Type v)"),
    ("Demo.Counter.step", "field", ": ℕ → ℕ"),
    ("Demo.Counter.start", "field", ": ℕ"),
    ("Demo.Machine", "inductive", "(σ : Type v)"),
    ("Demo.Machine.halt", "constructor", ": Demo.Machine σ"),
    ("Demo.Machine.run", "constructor", ": σ → Demo.Machine σ"),
    ("Demo.step_start", "theorem", "(M : Demo.Automaton α σ) (a : α) : M.step M.start a = M.start"),
]


def test_structure_found_by_its_fields(tmp_path):
    rows = []
    for i, (name, kind, sig) in enumerate(AUTOMATA):
        typ = sig[sig.index(":") + 1:].strip() if sig.startswith(":") or ") :" in sig else None
        rows.append({"full_name": name, "kind": kind, "module": "Demo", "signature": sig, "type": typ, "variables": "",
                     "origin": "source", "corpus": "demo", "file": "Demo.lean", "line_start": i + 1})
    statements, _ = build_formal_index(pa.Table.from_pylist(rows), None, tmp_path / FORMAL_DIR)
    pq.write_table(statements, tmp_path / "formal_statements.parquet")
    index = FormalIndex(tmp_path)
    got = [n for n, _ in index.soft("`step : σ → α → σ`, `start : σ`, `accept : Set σ`", 5)]
    assert got[0] == "Demo.Automaton"
    got = [n for n, _ in index.soft("a counter with `step : ℕ → ℕ` and `start : ℕ`", 5)]
    assert got[0] == "Demo.Counter"
    got = [n for n, _ in index.soft("constructors `halt, run`", 5)]
    assert got[0] == "Demo.Machine"
