"""The Loogle query forms the formal channel answers beyond constants and plain patterns: hypothesis
patterns without `⊢`, patterns with binders, constants a statement writes through notation, dot
notation or its namespace, and the ranking that puts the statements naming just the query's
constants first. Statements and notation commands are self-written, not Mathlib's."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.formal import FORMAL_DIR, build_formal_index
from mathindex.formal.keys import ConstantResolver, text_hints
from mathindex.formal.notation import NotationMap, prefix_notation
from mathindex.formal.search import FormalIndex
from mathindex.formal.telescope import arrows_outermost, split
from mathindex.formula.grammar import parse_lean
from mathindex.schemas.lean import NOTATIONS
from tests.formal_fixture import declarations_table

STATEMENTS = [
    ("Nat.Prime", "(p : ℕ) : Prop", "", "source"),
    ("Nat.Coprime", "(m n : ℕ) : Prop", "", "source"),
    ("Nat.totient", "(n : ℕ) : ℕ", "", "source"),
    ("Nat.divisors", "(n : ℕ) : Finset ℕ", "", "source"),
    ("Nat.Prime.two_le", ": ∀ {p : ℕ}, Prime p → 2 ≤ p", "", "source"),
    ("Nat.sum_totient", "(n : ℕ) : n.divisors.sum φ = n", "", "source"),
    ("Nat.totient_prime", "{p : ℕ} (hp : p.Prime) : φ p = p - 1", "", "source"),
    ("Nat.totient_coprime_le", "{p n : ℕ} (hp : p.Prime) (h : Nat.Coprime p n) : φ p ≤ p", "", "source"),
    ("Nat.Prime.dvd_or", "{p a b : ℕ} (hp : p.Prime) : p ∣ a * b → p ∣ a ∨ p ∣ b", "", "source"),
    ("Real.goldenRatio", ": ℝ", "", "source"),
    ("Real.gold_sq", ": φ ^ 2 = φ + 1", "", "source"),
    ("Demo.geom", "{r : ℝ} (h : r < 1) : ∑' n : ℕ, r ^ n = (1 - r)⁻¹", "", "source"),
    ("Demo.integral_sin", ": ∫ x in a..b, sin x = cos a - cos b", "{a b : ℝ}", "source"),
    ("Finset.card", "(s : Finset α) : ℕ", "", "source"),
    ("Finset.range", "(n : ℕ) : Finset ℕ", "", "source"),
    ("Finset.card_range", "(n : ℕ) : #(range n) = n", "", "source"),
    ("Cardinal.mk", "(α : Type u) : Cardinal", "", "source"),
    ("Cardinal.mk_le", "{α β : Type u} (f : α → β) : #α ≤ #β", "", "source"),
    ("Finset.card_union_le", "(s t : Finset α) : #(s ∪ t) ≤ #s + #t", "", "source"),
    ("Demo.abs_union_le", "(s t : ℝ) : |s ∪ t| ≤ |s| + |t|", "", "source"),
]
NOTATION_ROWS = [  # (atom, target, scope, file)
    ("φ", "Nat.totient", "scoped", "Nat/Totient.lean"),
    ("φ", "Real.goldenRatio", "scoped", "Real/Golden.lean"),
    ("#", "Finset.card", "scoped", "Finset/Card.lean"),
    ("#", "Cardinal.mk", "scoped", "Cardinal/Basic.lean"),
]


def notations_table() -> pa.Table:
    return pa.Table.from_pylist([{"corpus": "demo", "file": f, "line": 1, "kind": "notation" if a != "#" else "prefix",
                                  "scope": s, "atoms": [a], "target": t} for a, t, s, f in NOTATION_ROWS], schema=NOTATIONS)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("forms")
    deps = pa.Table.from_pylist([{"corpus": "demo", "full_name": "Nat.totient_coprime_le", "target": "Nat.Coprime",
                                  "resolved": True, "role": "statement"}])
    statements, info = build_formal_index(declarations_table(STATEMENTS), deps, root / FORMAL_DIR,
                                          notations=notations_table())
    pq.write_table(statements, root / "formal_statements.parquet")
    assert info["notation_statements"] >= 5
    return FormalIndex(root)


def names(index, query, k=20):
    return [h.name for h in index.loogle(query, k).hits]


def constants(index, name):
    table = pq.read_table(index._table, columns=["name", "constants"]).to_pylist()
    return next(r["constants"] for r in table if r["name"] == name)


def test_a_pattern_with_parameters_matches_the_telescope(index):
    # Loogle: "if the pattern has parameters, they are matched in any order", with or without ⊢
    assert names(index, "Nat.Prime ?p → 2 ≤ ?p") == ["Nat.Prime.two_le"]
    assert names(index, "⊢ Nat.Prime ?p → 2 ≤ ?p") == ["Nat.Prime.two_le"]
    assert names(index, "Nat.Prime ?p → ?p ∣ ?a * ?b → ?p ∣ ?a ∨ ?p ∣ ?b") == ["Nat.Prime.dvd_or"]


def test_a_pattern_with_binders(index):
    assert names(index, "∑' n : ℕ, _ ^ n") == ["Demo.geom"]
    assert names(index, "∑' n, _ ^ n") == ["Demo.geom"]
    assert names(index, "∫ x in _.._, Real.sin x") == ["Demo.integral_sin"]
    assert names(index, "Nat.Prime ?p → 2 ≤ ?p, ℕ") == ["Nat.Prime.two_le"]  # `ℕ` is the constant Nat


def test_notation_and_dot_notation_are_constants(index):
    assert names(index, "Nat.totient, Nat.divisors") == ["Nat.sum_totient"]
    assert "Nat.divisors" in constants(index, "Nat.sum_totient")  # `n.divisors` with `n : ℕ`
    assert "Nat.Prime" in constants(index, "Nat.totient_prime")  # `p.Prime`
    # a pattern naming the constant matches the notation the statement writes
    assert names(index, "⊢ Nat.totient ?p = ?p - 1") == ["Nat.totient_prime"]
    # `φ` is the golden ratio in `Real`: the namespace decides between two scoped notations
    assert constants(index, "Real.gold_sq").count("Real.goldenRatio") == 1
    assert "Nat.totient" not in constants(index, "Real.gold_sq")
    # `#s` is Finset.card in Finset, Cardinal.mk in Cardinal
    assert names(index, "Finset.card, Finset.range") == ["Finset.card_range"]
    assert "Cardinal.mk" in constants(index, "Cardinal.mk_le") and "Finset.card" not in constants(index, "Cardinal.mk_le")


def test_bars_in_a_fused_query_also_read_as_a_cardinality(index):
    """People write `|s|` for the size of a finite set, where Mathlib writes `#s`: the fused channel
    scores both readings, the one as written a little higher where both match; Loogle mode keeps
    the bars as written."""
    soft = [name for name, _ in index.soft("`|s ∪ t| ≤ |s| + |t|`", 10)]
    assert soft[:2] == ["Demo.abs_union_le", "Finset.card_union_le"]
    assert [name for name, _ in index.soft("`|range n| = n`", 10)][:1] == ["Finset.card_range"]
    assert names(index, "|_ ∪ _| ≤ _") == ["Demo.abs_union_le"]


def test_the_statement_naming_just_the_query_constants_ranks_first(index):
    got = names(index, "Nat.totient, Nat.Prime")
    assert got[0] == "Nat.totient_prime" and "Nat.totient_coprime_le" in got  # one other constant: Nat.Coprime


def test_name_fragments_ignore_case(index):
    assert set(names(index, '"TOTIENT_"')) == {"Nat.totient_prime", "Nat.totient_coprime_le"}


def test_arrows_bind_looser_than_or_and_and():
    tele = split(parse_lean("p ∣ a → p ∣ b ∨ p ∣ c"), [])
    assert tele.hypotheses == [("mid", ("#v", "p"), ("#v", "a"))] and tele.conclusion[0] == "or"
    assert arrows_outermost(parse_lean("a ∨ b → c"))[0] == "to"
    assert arrows_outermost(parse_lean("a ∧ b ∨ c")) == parse_lean("a ∧ b ∨ c")


def test_prefix_notation_and_text_hints():
    assert prefix_notation("#(range n) = b ^ #s") == "(hashNOTATION (range n)) = b ^ (hashNOTATION s)"
    assert prefix_notation("#{x ∈ #(s ∪ t) | p x}") == "(hashNOTATION {x ∈ (hashNOTATION (s ∪ t)) | p x})"
    assert prefix_notation("#[a, b] ++ #(x") == "#[a, b] ++ #(x"
    declared = {"n": "bbN", "s": "Finset", "h": "mid"}
    assert text_hints(["(n : ℕ) : n.divisors.card ≤ s.card ∧ h.trans"], declared) == {"Nat", "Nat.divisors", "Finset.card"}


def test_a_notation_only_its_own_file_uses_is_local():
    resolver = ConstantResolver(["Nat.totient", "Demo.f", "Demo.g"])
    local = pa.Table.from_pylist([{"corpus": "demo", "file": "A.lean", "line": 1, "kind": "notation", "scope": "local",
                                   "atoms": ["φ"], "target": "Nat.totient"}], schema=NOTATIONS)
    notation = NotationMap(local, resolver)
    assert notation.resolve({"phi"}, ("Demo.f", "demo", "A.lean"), []) == {"phi": "Nat.totient"}
    assert notation.resolve({"phi"}, ("Demo.g", "demo", "B.lean"), []) == {}
