"""parse_formulas, lean_formulas, canonical forms under a budget, and the formula index."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest

from mathindex.formula.api import lean_formulas, parse_formulas
from mathindex.formula.formula_index import FormulaIndex
from mathindex.formula.canonical import CanonicalWorker, to_spec
from mathindex.formula.grammar import parse_latex
from mathindex.schemas.formula import FORMULA_TREES

FORMULAS = [
    r"\sum_{d \mid n} \varphi(d) = n",
    r"(a+b)^2 = a^2 + 2ab + b^2",
    r"\frac{x}{y} + z",
    r"f : X \to Y",
    r"\{x \in X \mid f(x) = 0\}",
    r"\int_0^1 f(x)\,dx",
    r"H^i(X, \mathcal{F}) = 0",
    r"2x + 4y = 6",
    "{" * 70 + "x" + "}" * 70,  # nested past the grammar's depth: fallback or error, never a crash
    r"\mathcal{O}_{X, x} \to \kappa(x)",
    r"\lim_{n \to \infty} \frac{1}{n} = 0",
    r"a^2 + b^2 = c^2",
]


def formulas_table(latex: list[str]) -> pa.Table:
    rows = [{"formula_id": hashlib.sha256(f"t|{i}".encode()).hexdigest()[:16], "corpus": "t",
             "node_id": f"tex:t:{i}", "file": "a.tex", "line": i + 1, "latex": s,
             "latex_normalised": s, "source": "latex"} for i, s in enumerate(latex)]
    return pa.Table.from_pylist(rows)


@pytest.fixture(scope="module")
def parsed() -> tuple[pa.Table, pa.Table, pa.Table]:
    f = formulas_table(FORMULAS)
    trees, errors = parse_formulas(f, budget_s=5.0)
    return f, trees, errors


def test_parse_formulas_rows(parsed) -> None:
    f, trees, errors = parsed
    assert trees.schema == FORMULA_TREES
    assert trees.column("formula_id").to_pylist() == f.column("formula_id").to_pylist()
    rows = trees.to_pylist()
    assert rows[0]["parser"] == "grammar" and rows[0]["status"] == "ok"
    assert rows[1]["canonical_status"] == "ok" and rows[1]["canonical"] == "Identity(a**2 + 2*a*b + b**2)"
    assert rows[7]["canonical"] == "Eq(x + 2*y - 3, 0)"
    assert rows[3]["canonical_status"] == "unsupported"
    assert rows[8]["parser"] != "grammar"
    assert errors.num_rows >= 1 and errors.column("stage").to_pylist()[0] == "parse_formula"
    assert all(r["path_tokens"] for r in rows)


def test_canonical_timeout_kills_the_worker_and_goes_on() -> None:
    slow = to_spec(parse_latex("(a+b+c+d+e+f+g)^{60} = 0"))
    fast = to_spec(parse_latex("x + x = 2y"))
    assert slow is not None and fast is not None
    with CanonicalWorker() as w:
        out = list(w.run([(0, fast), (1, slow), (2, fast)], budget_s=0.3))
        assert [o[1] for o in out] == ["ok", "timeout", "ok"]
        assert out[2][2] == "Eq(x - y, 0)"
        assert w.starts == 2


def test_lean_formulas() -> None:
    decls = pa.Table.from_pylist([
        {"full_name": "Nat.sum_totient", "type": "∑ d ∈ n.divisors, φ d = n", "signature": "(n : ℕ)",
         "corpus": "mathlib", "file": "Mathlib/A.lean", "line_start": 3},
        {"full_name": "Foo.bar", "type": None, "signature": "", "corpus": "mathlib",
         "file": "Mathlib/A.lean", "line_start": 9},
    ])
    t = lean_formulas(decls)
    assert t.num_rows == 1
    row = t.to_pylist()[0]
    assert row["source"] == "lean" and row["node_id"] == "lean:Nat.sum_totient"
    assert row["latex"] == "∑ d ∈ n.divisors, φ d = n"
    trees, _ = parse_formulas(t)
    assert trees.column("parser").to_pylist() == ["grammar"]


def test_index_finds_variants(parsed, tmp_path: Path) -> None:
    f, trees, _ = parsed
    FormulaIndex.build(trees, f, tmp_path / "fx")
    idx = FormulaIndex.open(tmp_path / "fx")
    assert idx.wait_ready(60)
    ids = f.column("formula_id").to_pylist()
    cases = {
        r"\sum_{k \mid m} \phi(k) = m": 0,  # renamed variables
        r"b^2 + 2 b a + a^2 = (b+a)^2": 1,  # commuted, sides swapped
        r"u/v + w": 2,  # a/b for \frac
        r"c^2 = a^2 + b^2": 11,
        r"x + 2y = 3": 7,  # only the canonical key matches
    }
    for query, want in cases.items():
        hits = idx.search(query, k=3)
        assert hits and hits[0][0] == ids[want], (query, hits)
    # a Lean statement answers a LaTeX query through the shared vocabulary
    lean = lean_formulas(pa.Table.from_pylist([{"full_name": "Nat.sum_totient", "type": "∑ d ∈ n.divisors, φ d = n",
                                                "signature": "", "corpus": "m", "file": "M.lean", "line_start": 1}]))
    both = pa.concat_tables([f.select(["formula_id", "latex", "latex_normalised", "source"]),
                             lean.select(["formula_id", "latex", "latex_normalised", "source"])],
                            promote_options="permissive")
    t2, _ = parse_formulas(both)
    FormulaIndex.build(t2, both, tmp_path / "fx2")
    hits = FormulaIndex.open(tmp_path / "fx2").search(r"\sum_{d \mid n} \varphi(d) = n", k=3)
    assert lean.column("formula_id")[0].as_py() in [h[0] for h in hits]


def test_index_bytes_are_deterministic(parsed, tmp_path: Path) -> None:
    f, trees, _ = parsed
    FormulaIndex.build(trees, f, tmp_path / "a")
    FormulaIndex.build(trees.take(list(reversed(range(trees.num_rows)))), f, tmp_path / "b")
    for p in sorted((tmp_path / "a").iterdir()):
        assert p.read_bytes() == (tmp_path / "b" / p.name).read_bytes(), p.name


def test_parse_formulas_survives_bad_input_in_bounded_time() -> None:
    import time

    bad = ["x + " * 25_000, "{" * 10_000 + "x" + "}" * 10_000, r"\foo{a}{b}\bar", r"\left( x",
           "\x00\x01", r"\frac12"]
    t0 = time.perf_counter()
    trees, errors = parse_formulas(formulas_table(bad), budget_s=1.0)
    assert time.perf_counter() - t0 < 20.0
    assert trees.num_rows == len(bad)
    statuses = trees.column("status").to_pylist()
    assert statuses[0] in ("ok", "error") and statuses[1] == "error"
    assert statuses[2] == "partial" and statuses[3] == "ok"  # \bar without its argument; \left( closed at the end
    assert statuses[5] == "ok"
    assert errors.num_rows >= 2


def test_pieces_that_are_one_variable_can_be_skipped(tmp_path: Path) -> None:
    f = formulas_table(["G", "G", "H \\cong G", "a + b = b + a", "G \\times H"])
    trees, _ = parse_formulas(f, budget_s=5.0)
    FormulaIndex.build(trees, f, tmp_path / "fx")
    idx = FormulaIndex.open(tmp_path / "fx")
    ids = f.column("formula_id").to_pylist()
    query = "a group $G$ with $a + b = b + a$"
    assert len({s for _, s in idx.search("$G$", k=5)}) <= 2 and idx.search("$G$", k=5)  # every G alike
    assert idx.search("$G$", k=5, skip_variables=True) == []
    skipped = idx.search(query, k=5, skip_variables=True)
    assert skipped[0][0] == ids[3] and ids[0] not in [i for i, _ in skipped]  # only the formula piece counts
    assert ids[0] in [i for i, _ in idx.search(query, k=5)]  # searched, the lone G lifts the G formulas


def test_postings_name_each_group_once_so_indexed_adds_sum_as_before(parsed, tmp_path: Path) -> None:
    """The BM25 scores are summed per posting with np.add.at, which adds a repeated index twice; a
    fancy-index `+=` (what the scores were) adds it once. They agree because a token's posting
    lists each group once, ascending: checked here, and the scores against the `+=` sums."""
    import numpy as np

    from mathindex.formula.formula_index import features

    f, trees, _ = parsed
    FormulaIndex.build(trees, f, tmp_path / "fx")
    idx = FormulaIndex.open(tmp_path / "fx")
    for tid in range(len(idx.vocab)):
        docs = idx.post_doc[idx.post_ptr[tid]:idx.post_ptr[tid + 1]]
        assert docs.size and (np.diff(docs.astype(np.int64)) > 0).all()
    for query in (r"a^2 + b^2 + a^2 = c^2", r"\frac{x}{y} + z + \frac{x}{y}", r"2x + 4y = 6"):
        tokens = features(parse_latex(query)).tokens
        want = np.zeros(idx.n_groups, dtype=np.float32)
        for tok in dict.fromkeys(tokens):
            if tok in idx.vocab:
                tid = idx.vocab[tok]
                a, b = idx.post_ptr[tid], idx.post_ptr[tid + 1]
                want[idx.post_doc[a:b]] += idx.post_w[a:b] * tokens.count(tok)
        got = dict(idx.search_groups(query, k=idx.n_groups, rescore=False))
        assert got == {g: round(float(want[g]), 6) for g in np.flatnonzero(want > 0).tolist()}


def test_only_a_query_sympy_can_read_waits_for_the_worker(parsed, tmp_path: Path) -> None:
    """`asks_canonical`: a query with a piece that parses whole into a tree SymPy builds asks for a
    canonical key (so a one-query CLI waits for the worker); a name, a lone variable or a partial
    parse does not (the worker cannot change its answer); an index without keys asks nothing."""
    f, trees, _ = parsed
    FormulaIndex.build(trees, f, tmp_path / "fx")
    idx = FormulaIndex.open(tmp_path / "fx", preload=False)
    assert idx.canonical
    assert idx.asks_canonical(r"x + 2y = 3") and idx.asks_canonical("a^2 + b^2 = c^2")
    assert idx.asks_canonical(r"the set $x + 2y = 3$ and $G$")  # one of its pieces
    assert not idx.asks_canonical("Nat.Prime.two_le") and not idx.asks_canonical("_ * _ ≤ _ * _")
    assert not idx.asks_canonical("$G$") and not idx.asks_canonical("$x$", skip_variables=True)
    idx.canonical = {}
    assert not idx.asks_canonical(r"x + 2y = 3")
