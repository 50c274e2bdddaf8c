"""The cheap-to-open look-ups (mathindex/lookups.py) and what a one-query engine computes lazily
(the prior, the formula channel's names): the same answers as the dicts they replace."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.lookups import ByLast, SortedKeys, is_sorted_distinct, last_index_in
from mathindex.search.prior import LazyPrior, normalised_prior, prior_top, read_prior

NAMES = ["Nat.Prime.two_le", "two_le", "Foo.two_le", "ℝ.x", "x", "a.b.c", "b.c", "c", "Z", "é.ǅ", "ǅ", "a..", ""]


def test_sorted_keys_find_what_a_dict_finds():
    for names in (sorted(set(NAMES)), NAMES, NAMES[::-1]):
        keys = SortedKeys(list(names))
        assert keys.keys == sorted(set(names)) and is_sorted_distinct(keys.keys)
        position = {k: i for i, k in enumerate(keys.keys)}
        for q in [*NAMES, "missing", "Nat", "zzz", "\U0010ffff"]:
            assert keys.index(q) == position.get(q) and (q in keys) == (q in position)
    assert 3 not in SortedKeys(["a"]) and len(SortedKeys([])) == 0 and SortedKeys([]).index("a") is None


def test_by_last_lists_what_the_dict_of_lists_lists():
    rng = random.Random(5)
    for names in (NAMES, [rng.choice(NAMES) + rng.choice(["", ".x", ".two_le"]) for _ in range(200)]):
        table: dict[str, list[str]] = {}
        for n in names:
            table.setdefault(n.rsplit(".", 1)[-1], []).append(n)
        index = ByLast(names)
        assert sorted(index) == sorted(table) and list(index) == sorted(table)
        for last in [*table, "missing"]:
            assert index.get(last) == table.get(last) and (last in index) == (last in table)
            assert [names[i] for i in index.positions(last).tolist()] == table.get(last, [])
        assert index.get("missing", []) == []


def test_last_index_in_is_a_dicts_last_position():
    rng = random.Random(7)
    for _ in range(50):
        keys = [rng.choice("abcdefg") for _ in range(rng.randrange(0, 30))]
        values = [rng.choice("abcdefgh") for _ in range(rng.randrange(0, 30))]
        last = {k: i for i, k in enumerate(keys)}
        got = last_index_in(pa.array(values, pa.string()), pa.chunked_array([pa.array(keys, pa.string())]))
        assert got.tolist() == [last.get(v, -1) for v in values]


def _nodes(tmp_path, signal, values, corpora, names):
    path = tmp_path / f"nodes-{signal}.parquet"
    kind = pa.float64() if signal == "pagerank" else pa.int32()
    pq.write_table(pa.table({"name": names, "corpus": corpora, signal: pa.array(values, kind)}), path)
    return path


def test_the_lazy_prior_is_the_dicts_prior(tmp_path):
    """Every name's prior, the largest and whether all are non-negative, for both signals, a corpus
    without a graph (the neutral median), a name listed twice (its last row) and zero values."""
    rng = random.Random(11)
    for trial in range(40):
        n = rng.randrange(1, 60)
        names = [f"n{rng.randrange(n)}" for _ in range(n)]
        corpora = [rng.choice(["lean", "lean", "tex", "other"]) for _ in range(n)]
        for signal in ("pagerank", "in_degree"):
            if signal == "pagerank":
                values = [rng.choice([0.0, 1e-7, 2.5e-6, rng.random() * 1e-3, 0.3]) for _ in range(n)]
            else:
                values = [rng.choice([0, 0, 1, 3, 19407]) for _ in range(n)]
            if trial % 5 == 0:
                values = [v if c == "lean" else type(v)(0) for v, c in zip(values, corpora)]
            path = _nodes(tmp_path, signal, values, corpora, names)
            want = read_prior(path, signal)
            assert want == dict(zip(names, normalised_prior(signal, values, corpora)))
            lazy = read_prior(path, signal, names, {m: i for i, m in enumerate(names)})
            assert isinstance(lazy, LazyPrior) and len(lazy) == len(want) and set(lazy) == set(want)
            assert all(repr(lazy[m]) == repr(want[m]) and repr(lazy.get(m, 0.0)) == repr(want[m]) for m in want)
            assert lazy.get("missing", 0.0) == 0.0 and "missing" not in lazy
            assert repr(prior_top(lazy)) == repr(prior_top(want))
    assert read_prior(_nodes(tmp_path, "pagerank", [0.1], ["lean"], ["a"]), "in_degree", ["a"], {"a": 0}) == {}
