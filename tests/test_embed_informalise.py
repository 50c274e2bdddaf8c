"""Rule informaliser, dependency order and the informalisation cache (no model, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from mathindex.informal import RuleInformaliser, informalise
from mathindex.informal.informalise import dependency_levels
from mathindex.informal.rules import english, name_words, render_rules, split_name
from mathindex.schemas.embed import INFORMALISATIONS

FIXTURES = Path(__file__).parent / "fixtures" / "embed"


def load(name: str) -> pa.Table:
    return pa.Table.from_pylist(json.loads((FIXTURES / name).read_text()))


class CountingRules(RuleInformaliser):
    """The rule backend, counting how many declarations it was asked to render."""

    def __init__(self):
        self.calls = 0

    def render_many(self, items):
        self.calls += len(items)
        return super().render_many(items)


def test_name_splitting_and_abbreviations():
    assert split_name("IsCompact.image_of_continuousOn") == ["is", "compact", "image", "of", "continuous", "on"]
    assert split_name("HasDerivAt.comp") == ["has", "deriv", "at", "comp"]
    assert name_words("Nat.add_comm") == "natural number add commutative"
    assert name_words("Finset.sum_le_sum") == "finite set sum less or equal sum"


def test_notation_to_english():
    assert english("∀ x ∈ s, f x ≤ g x") == "for all x in s, f x is at most g x"
    assert english("∃ p, n ≤ p ∧ Nat.Prime p") == "there exists p such that n is at most p and Nat.Prime p"
    assert english("a ⊆ b → b ⊆ c → a ⊆ c") == "a is a subset of b implies b is a subset of c implies a is a subset of c"
    assert english("p ↔ ¬q") == "p if and only if not q"
    assert english("∑ i ∈ range n, f i = ∏ j ∈ s, g j") == (
        "the sum over i in range n of f i equals the product over j in s of g j")
    assert english("(↑n : ℝ) ≤ x") == "(n as real number) is at most x"


def test_render_binders_instances_and_docstring():
    text = render_rules(
        "Finset.sum_le_sum", "theorem",
        "theorem Finset.sum_le_sum {ι N : Type*} [OrderedAddCommMonoid N] {f g : ι → N} {s : Finset ι} "
        "(h : ∀ i ∈ s, f i ≤ g i) : s.sum f ≤ s.sum g", "s.sum f ≤ s.sum g", "Sums are monotone.",
    )
    assert text.startswith("Theorem Finset.sum_le_sum (finite set sum less or equal sum): for any types ι, N;")
    assert "functions f, g from ι to N" in text
    assert "assuming N is an ordered add commutative monoid; for all i in s, f i is at most g i" in text
    assert text.endswith("s.sum f is at most s.sum g. Sums are monotone.")
    assert render_rules("Nat.add_comm", "theorem", "(n m : ℕ) : n + m = m + n", "", "") == (
        "Theorem Nat.add_comm (natural number add commutative): for natural numbers n, m, n + m equals m + n.")


def test_dependency_levels_with_cycle_and_unknown_targets():
    names = ["a", "b", "c", "d"]
    deps = pa.table({"full_name": ["b", "c", "c", "a", "d", "x"], "target": ["a", "b", "zzz", "c", "d", "a"]})
    # a -> c -> b -> a is a cycle; it is broken at "a" (lowest name), d's self-edge is ignored
    assert dependency_levels(names, deps) == [0, 1, 2, 0]
    assert dependency_levels(names, None) == [0, 0, 0, 0]


def test_informalise_in_dependency_order_reuses_context_and_caches(tmp_path):
    decls, deps = load("declarations.json"), load("dependencies.json")
    backend = CountingRules()
    out = informalise(decls, backend, tmp_path, deps)
    assert out.schema == INFORMALISATIONS
    assert out.num_rows == decls.num_rows == backend.calls
    rows = {r["full_name"]: r for r in out.to_pylist()}
    assert rows["Real.exp"]["order"] < rows["Real.exp_pos"]["order"]
    assert rows["Nat.add_comm"]["order"] < rows["Nat.add_comm_three"]["order"]
    assert rows["Real.exp_pos"]["context"] == ["Real.exp"]
    assert "Uses Real.exp: The real exponential function." in rows["Real.exp_pos"]["text"]
    assert rows["Nat.add_comm_three"]["context"] == ["Nat.add_comm"]
    assert {r["status"] for r in rows.values()} == {"ok"}
    assert rows["Nat.exists_infinite_primes"]["text"].startswith(
        "Theorem Nat.exists_infinite_primes (natural number exists infinite primes): for natural number n, "
        "there exists p such that n is at most p and Nat.Prime p.")
    # a second run renders nothing and gives the same table
    again = CountingRules()
    assert informalise(decls, again, tmp_path, deps).equals(out)
    assert again.calls == 0
    # a changed statement re-renders that declaration only (its dependants keep their context gloss)
    changed = decls.set_column(
        decls.column_names.index("type"), "type",
        pa.array(["n + m = m + n", "c + b + a = a + b + c"] + decls.column("type").to_pylist()[2:]))
    third = CountingRules()
    informalise(changed, third, tmp_path, deps)
    assert third.calls == 1


def test_informalise_without_cache_dir_and_empty_table():
    out = informalise(load("declarations.json"), RuleInformaliser(), None)
    assert out.num_rows == 7 and out.column("context").to_pylist() == [[]] * 7
    empty = informalise(pa.Table.from_pylist([], schema=load("declarations.json").schema), RuleInformaliser(), None)
    assert empty.num_rows == 0 and empty.schema == INFORMALISATIONS
