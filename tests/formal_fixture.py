"""A tiny formal index built from self-written Lean statements (no Mathlib text), for the
tests/test_formal_*.py files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.formal import FORMAL_DIR, build_formal_index

# (full_name, signature, variables, origin); the type is what follows the signature's top-level `:`
STATEMENTS = [
    ("Demo.mul_comm", ": ∀ a b : G, a * b = b * a", "{G : Type*} [CommMagma G]", "source"),
    ("Demo.add_comm", ": ∀ a b : G, a + b = b + a", "{G : Type*} [AddCommMagma G]", "source"),
    ("Demo.mul_pow_le", "(h : 0 ≤ a) : a * b ^ n ≤ a * c", "{a b c : ℝ} {n : ℕ}", "source"),
    ("Real.sqrt_mul_self'", "(h : 0 ≤ x) : √x * √x = x", "{x : ℝ}", "source"),
    ("Real.sqrt_pi_pos", ": 0 < Real.sqrt π", "", "source"),
    ("Real.sqrt_two_lt", ": √2 < 2", "", "source"),
    ("Demo.inv_mul", "(h : a ≠ 0) : a⁻¹ * a = 1", "{a : K} [Field K]", "source"),
    ("Demo.zpow_neg_one_mul", "(h : a ≠ 0) : a ^ (-1 : ℤ) * a = 1", "{a : K} [Field K]", "source"),
    ("Demo.sum_add", ": ∑ x ∈ s, (f x + g x) = ∑ x ∈ s, f x + ∑ x ∈ s, g x", "{s : Finset ι} {f g : ι → M}", "source"),
    ("Demo.sum_eq_finset_sum", ": Finset.sum s f = Finset.sum s g", "{s : Finset ι} {f g : ι → M}", "source"),
    ("Demo.tsum_mul_left", ": ∑' x, a * f x = a * ∑' x, f x", "{f : ι → ℝ} {a : ℝ}", "source"),
    ("Demo.tsum_lt_tsum", "(h : f ≤ g) (hi : f i < g i) (hf : Summable f) (hg : Summable g) : ∑' n, f n < ∑' n, g n",
     "{f g : ι → ℝ} {i : ι}", "source"),
    ("Demo.tsum_le_tsum", "(h : ∀ n, f n ≤ g n) : tsum f ≤ tsum g", "{f g : ι → ℝ}", "source"),
    ("Demo.prod_one", ": ∏ _x ∈ s, (1 : M) = 1", "{s : Finset ι} [CommMonoid M]", "source"),
    ("Demo.sum_zero", ": ∏ _x ∈ s, (1 : M) = 1", "{s : Finset ι} [AddCommMonoid M]", "to_additive"),
    ("Demo.differentiable_sqrt", "(hx : x ≠ 0) : DifferentiableAt ℝ Real.sqrt x", "{x : ℝ}", "source"),
    ("Real.sqrt", ": ℝ → ℝ", "", "source"),
    ("Real.pi", ": ℝ", "", "source"),
    ("Summable", "(f : ι → ℝ) : Prop", "", "source"),
    ("DifferentiableAt", "(f : ℝ → ℝ) (x : ℝ) : Prop", "", "source"),
]


def declarations_table(rows=STATEMENTS) -> pa.Table:
    out = []
    for i, (name, sig, variables, origin) in enumerate(rows):
        depth, cut = 0, None
        for j, ch in enumerate(sig):  # the type: after the top-level `:`
            depth += ch in "([{⦃"
            depth -= ch in ")]}⦄"
            if ch == ":" and depth == 0:
                cut = j
                break
        out.append({
            "full_name": name, "kind": "theorem", "module": "Demo.Module", "signature": sig,
            "type": sig[cut + 1:].strip() if cut is not None else None, "variables": variables,
            "origin": origin, "corpus": "demo", "file": "Demo.lean", "line_start": i + 1,
        })
    return pa.Table.from_pylist(out)


def dependencies_table() -> pa.Table:
    rows = [
        ("Real.sqrt_pi_pos", "Real.sqrt"), ("Real.sqrt_pi_pos", "Real.pi"),
        ("Demo.differentiable_sqrt", "DifferentiableAt"), ("Demo.differentiable_sqrt", "Real.sqrt"),
        ("Demo.tsum_lt_tsum", "Summable"), ("Demo.sum_eq_finset_sum", "Finset.sum"),
        ("Demo.tsum_le_tsum", "tsum"),
    ]
    return pa.Table.from_pylist([{"corpus": "demo", "full_name": a, "target": b, "resolved": True, "role": "statement"}
                                 for a, b in rows])


def build(directory: Path, rows=STATEMENTS) -> dict:
    statements, info = build_formal_index(declarations_table(rows), dependencies_table(), directory / FORMAL_DIR)
    pq.write_table(statements, directory / "formal_statements.parquet")
    return info
