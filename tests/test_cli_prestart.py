"""cli/prestart.py: a `search` whose query may ask SymPy starts the shared SymPy worker before the
query path loads; other queries and verbs start nothing."""

from __future__ import annotations

import argparse

import pytest

from mathindex.cli import prestart
from mathindex.formula import canonical
from mathindex.search.hint import may_ask_sympy


@pytest.mark.parametrize("query, expected", [
    ("a^2 + b^2 = c^2", True),
    (r"\sum_{d|n} \varphi(d) = n", True),
    ("x ≤ y", True),
    ("Nat.Prime.two_le", False),  # a Lean name: `_` looks like math, but nothing SymPy reads
    ("sum of totient over divisors", False),
    ("0BQX", False),
    ("Nat.totient, Nat.Prime", False),
])
def test_which_queries_may_ask_sympy(query: str, expected: bool) -> None:
    assert may_ask_sympy(query) is expected


@pytest.fixture
def fresh_worker(monkeypatch):
    worker = canonical.CanonicalWorker()
    monkeypatch.setattr(canonical, "_SHARED", worker)
    yield worker
    worker.close()


def _args(command: str = "search", query: str | None = "a^2 + b^2 = c^2", formal: bool = False) -> argparse.Namespace:
    return argparse.Namespace(command=command, query=query, formal=formal, queries=None if query else "q.jsonl")


def test_a_formula_search_starts_the_shared_worker_and_it_loads_sympy(fresh_worker) -> None:
    prestart.start(_args())
    assert fresh_worker.starts == 1
    assert canonical.shared_worker() is fresh_worker
    assert fresh_worker.ready(60.0)  # the formula index's wait_ready finds this worker, not a new one
    canonical.shared_worker().start()
    assert fresh_worker.starts == 1


@pytest.mark.parametrize("args", [
    _args(query="Nat.Prime.two_le"),
    _args(query="sum of totient over divisors"),
    _args(formal=True),  # --formal never runs the formula channel
    _args(query=None),  # --queries: a batch process, whose channels warm as a server's do
    _args(command="premises"),
])
def test_other_queries_and_verbs_start_nothing(fresh_worker, args) -> None:
    prestart.start(args)
    assert fresh_worker.starts == 0
