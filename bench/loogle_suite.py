"""Writes bench/suites/loogle-mathlib.json, the formal channel's Loogle-style query set, and checks
it against a release: every gold name must be a declaration whose statement text (its signature,
as the extractor read it from the Mathlib source) matches the query's `check` regex.

Queries and gold sets were written by reading the Mathlib source at the pinned commit, in the query
forms of Loogle's documentation; no source text is copied here. Each query's `form`: constant,
constant-set (a set of constants whose best answer states just those), fragment (a quoted name
piece), pattern (`_` holes, anywhere), mvar (`?x`, non-linear), binder (a pattern with `∑ x ∈ s`,
`∑' n : ℕ`, `∀ ε > 0`, `∫ x in a..b`, `fun x =>`), conclusion (`⊢`), hypothesis (a pattern with
parameters, `A → B` or `⊢ A → B`: hypotheses in any order), notation (the statement writes a
named constant through notation, dot notation or its namespace: `φ`, `𝓝`, `n.divisors`), mixed,
order-dual (the gold is a `@[to_dual]` twin: `?a ⊓ ?b ≤ ?a` finds `inf_le_left`).

    .venv/bin/python -m bench.loogle_suite [RELEASE_DIR]    # writes the suite; checks gold with a release
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

OUT = Path(__file__).resolve().parent / "suites" / "loogle-mathlib.json"

# (form, query, gold names, check regex on each gold's signature)
QUERIES = [
    # constants (statement mentions every one)
    ("constant", "Real.sqrt, Real.pi", ["Real.Gamma_one_half_eq", "Stirling.tendsto_stirlingSeq_sqrt_pi"], r"√|sqrt"),
    ("constant", "Real.sin, Real.cos", ["Real.sin_sq_add_cos_sq", "Real.cos_sq_add_sin_sq", "Real.sin_two_mul"], r"sin"),
    ("constant", "Real.exp, Real.log", ["Real.exp_log", "Real.log_exp"], r"exp"),
    ("constant", "Real.sin, tsum", ["Real.sin_eq_tsum"], r"sin"),
    ("constant", "Nat.factorial, Nat.choose", ["Nat.choose_eq_factorial_div_factorial", "Nat.choose_mul_factorial_mul_factorial"], r"choose"),
    ("constant", "Polynomial.derivative, Polynomial.eval", ["Polynomial.derivative_eval"], r"derivative"),
    ("constant", "Matrix.det, Matrix.transpose", ["Matrix.det_transpose"], r"det"),
    ("constant", "Finset.card, Finset.range", ["Finset.card_range"], r"range"),
    ("constant", "Real.exp, Real.cosh", ["Real.cosh_eq"], r"cosh"),
    ("constant", "Complex.exp, Complex.I", ["Complex.exp_mul_I", "Complex.exp_pi_mul_I"], r"exp"),
    ("pattern", "EuclideanDomain.gcd _ _ * EuclideanDomain.lcm _ _ = _ * _", ["EuclideanDomain.gcd_mul_lcm"], r"gcd .* \* lcm"),
    ("constant", "IsCompact, Continuous", ["IsCompact.image", "IsCompact.exists_isMinOn"], r"IsCompact"),
    ("constant", "Real.arctan, Real.pi", ["Real.arctan_one", "Real.arctan_lt_pi_div_two"], r"arctan"),
    ("constant", "Real.log, Real.sqrt", ["Real.log_sqrt"], r"log"),
    # name fragments, alone and with constants
    ("fragment", "\"sin_sq_add_cos_sq\"", ["Real.sin_sq_add_cos_sq", "Complex.sin_sq_add_cos_sq"], r"sin"),
    ("fragment", "\"add_one_le_exp\"", ["Real.add_one_le_exp"], r"exp"),
    ("fragment", "\"card_union_add_card_inter\"", ["Finset.card_union_add_card_inter"], r"∪"),
    ("fragment", "Real.sqrt, \"lt_sqrt\"", ["Real.lt_sqrt", "Real.sqrt_lt_sqrt"], r"√"),
    ("fragment", "Real.exp, \"pos\"", ["Real.exp_pos"], r"exp"),
    ("fragment", "Real.pi, \"gt_three\"", ["Real.pi_gt_three"], r"π"),
    ("fragment", "\"dist_triangle\"", ["dist_triangle", "dist_triangle_left", "dist_triangle_right"], r"dist"),
    ("fragment", "Finset.sum, \"range_succ\"", ["Finset.sum_range_succ", "Finset.sum_range_succ_comm"], r"range"),
    ("fragment", "\"det_mul\"", ["Matrix.det_mul"], r"det"),
    ("fragment", "Filter.Tendsto, \"comp\"", ["Filter.Tendsto.comp"], r"Tendsto"),
    # patterns with holes, anywhere in the statement
    ("pattern", "Real.sin (_ + 2 * Real.pi)", ["Real.sin_add_two_pi"], r"sin \(x \+ 2 \* π\)"),
    ("pattern", "Real.cos (_ + 2 * Real.pi)", ["Real.cos_add_two_pi"], r"cos \(x \+ 2 \* π\)"),
    ("pattern", "Real.sqrt (_ * _)", ["Real.sqrt_mul_self", "Real.sqrt_mul"], r"√\("),
    ("pattern", "Real.exp (_ + _)", ["Real.exp_add"], r"exp \(x \+ y\)"),
    ("pattern", "Real.log (_ * _)", ["Real.log_mul"], r"log \(x \* y\)"),
    ("pattern", "Real.cos (2 * _)", ["Real.cos_two_mul", "Real.cos_sq"], r"cos \(2 \* x\)"),
    ("pattern", "Real.sin (2 * _)", ["Real.sin_two_mul"], r"sin \(2 \* x\)"),
    ("pattern", "(_ + _) ^ 2", ["add_sq", "add_sq'"], r"\(a \+ b\) \^ 2"),
    ("pattern", "(_ - _) ^ 2", ["sub_sq", "sub_sq'"], r"\(a - b\) \^ 2"),
    ("pattern", "Matrix.det (_ * _)", ["Matrix.det_mul"], r"det \(M \* N\)"),
    ("pattern", "Polynomial.derivative (_ * _)", ["Polynomial.derivative_mul"], r"derivative \(f \* g\)"),
    ("pattern", "Polynomial.degree (_ * _)", ["Polynomial.degree_mul", "Polynomial.degree_mul'", "Polynomial.degree_mul_le"], r"degree \(p \* q\)"),
    ("pattern", "deriv (_ * _) _", ["deriv_mul"], r"deriv \(c \* d\)"),
    ("pattern", "deriv (_ + _) _", ["deriv_add"], r"deriv \(f \+ g\)"),
    ("pattern", "HasDerivAt (_ * _) _ _", ["HasDerivAt.mul"], r"HasDerivAt \(c \* d\)"),
    ("pattern", "HasDerivAt (_ + _) _ _", ["HasDerivAt.add"], r"HasDerivAt \(f \+ g\)"),
    ("pattern", "Continuous (_ ∘ _)", ["Continuous.comp"], r"Continuous \(g ∘ f\)"),
    ("pattern", "IsCompact (_ '' _)", ["IsCompact.image"], r"IsCompact \(f '' s\)"),
    ("pattern", "Finset.card (_ ∪ _) + Finset.card (_ ∩ _)", ["Finset.card_union_add_card_inter"], r"#\(s ∪ t\) \+ #\(s ∩ t\)"),
    ("pattern", "Real.sqrt _ ^ 2", ["Real.sq_sqrt"], r"√x \^ 2"),
    ("pattern", "Real.sqrt (_ ^ 2)", ["Real.sqrt_sq"], r"√\(x \^ 2\)"),
    ("pattern", "Real.exp (Real.log _)", ["Real.exp_log"], r"exp \(log x\)"),
    ("pattern", "Real.log (Real.exp _)", ["Real.log_exp"], r"log \(exp x\)"),
    ("pattern", "_ * (_ ^ _)", ["pow_succ'", "mul_pow_sub_one"], r"\* .*\^"),
    # non-linear patterns: ?x binds one subterm everywhere
    ("mvar", "Real.sqrt ?a * Real.sqrt ?a", ["Real.mul_self_sqrt"], r"√a \* √a|√x \* √x"),
    ("mvar", "?a * ?b = ?b * ?a", ["mul_comm"], r"a \* b = b \* a"),
    ("mvar", "?a + ?b = ?b + ?a", ["add_comm"], r"a \+ b = b \+ a"),  # a to_additive twin, stated additively
    ("mvar", "?a * ?b * ?c = ?a * (?b * ?c)", ["mul_assoc", "Matrix.mul_assoc"], r"\* \(b \* c\)|\(M \* N\)"),
    ("mvar", "?a ∪ ?b = ?b ∪ ?a", ["Set.union_comm", "Finset.union_comm"], r"∪ \S+ = \S+ ∪"),
    ("mvar", "?a ∩ ?b = ?b ∩ ?a", ["Set.inter_comm", "Finset.inter_comm"], r"∩ \S+ = \S+ ∩"),
    ("mvar", "dist ?x ?y = dist ?y ?x", ["dist_comm"], r"dist x y = dist y x"),
    ("mvar", "dist ?x ?x = 0", ["dist_self"], r"dist x x = 0"),
    ("mvar", "?a / ?a = 1", ["div_self", "div_self'"], r"a / a = 1"),
    ("mvar", "?a * ?a⁻¹ = 1", ["mul_inv_cancel₀", "mul_inv_cancel"], r"a \* a⁻¹ = 1"),
    ("mvar", "?a⁻¹⁻¹ = ?a", ["inv_inv"], r"a⁻¹⁻¹ = a"),
    ("mvar", "2 * ?n = ?n + ?n", ["two_mul"], r"2 \* n = n \+ n"),
    ("mvar", "?a ^ 2 = ?a * ?a", ["pow_two"], r"a \^ 2 = a \* a"),
    ("mvar", "0 ≤ ?a * ?a", ["mul_self_nonneg"], r"0 ≤ a \* a"),
    ("mvar", "?f '' (?s ∪ ?t) = ?f '' ?s ∪ ?f '' ?t", ["Set.image_union"], r"'' \(s ∪ t\)"),
    # conclusion patterns
    ("conclusion", "⊢ tsum _ = _ * tsum _", ["tsum_mul_left"], r"a \* ∑'"),
    ("conclusion", "⊢ tsum _ = tsum _ * _", ["tsum_mul_right"], r"\(∑'\[L\] x, f x\) \* a"),
    ("conclusion", "⊢ 0 < Real.exp _", ["Real.exp_pos"], r"0 < exp x"),
    ("conclusion", "⊢ 0 ≤ Real.sqrt _", ["Real.sqrt_nonneg"], r"0 ≤ √x"),
    ("conclusion", "⊢ 0 < Real.pi", ["Real.pi_pos"], r"0 < π"),
    ("conclusion", "⊢ 3 < Real.pi", ["Real.pi_gt_three"], r"3 < π"),
    ("conclusion", "⊢ Real.sin Real.pi = 0", ["Real.sin_pi"], r"sin π = 0"),
    ("conclusion", "⊢ Real.cos Real.pi = -1", ["Real.cos_pi"], r"cos π = -1"),
    ("conclusion", "⊢ Real.sin _ ≤ 1", ["Real.sin_le_one"], r"sin x ≤ 1"),
    ("conclusion", "⊢ Real.sin _ ^ 2 + Real.cos _ ^ 2 = 1", ["Real.sin_sq_add_cos_sq"], r"sin x \^ 2 \+ cos x \^ 2"),
    ("conclusion", "⊢ _ + 1 ≤ Real.exp _", ["Real.add_one_le_exp"], r"x \+ 1 ≤"),
    ("conclusion", "⊢ dist _ _ ≤ dist _ _ + dist _ _", ["dist_triangle", "dist_triangle_left", "dist_triangle_right"], r"dist .* ≤ dist .* \+ dist"),
    ("conclusion", "⊢ ‖_ • _‖ = ‖_‖ * ‖_‖", ["NormSMulClass.norm_smul", "norm_smul"], r"‖r • x‖"),
    ("conclusion", "⊢ 0 ≤ _ ^ 2", ["sq_nonneg"], r"0 ≤ a \^ 2"),
    ("conclusion", "⊢ Matrix.det (Matrix.transpose _) = Matrix.det _", ["Matrix.det_transpose"], r"det"),
    ("conclusion", "⊢ Finset.card (Finset.range _) = _", ["Finset.card_range"], r"#\(range n\)"),
    ("conclusion", "⊢ _ ∈ _ ∪ _ ↔ _ ∈ _ ∨ _ ∈ _", ["Set.mem_union", "Finset.mem_union"], r"∈ a ∪ b ↔|∈ s ∪ t ↔"),
    ("conclusion", "⊢ _ ⊆ _ ∪ _", ["Set.subset_union_left", "Set.subset_union_right"], r"⊆ s ∪ t|⊆ .* ∪"),
    # conclusion patterns with hypotheses (matched in any order)
    ("hypothesis", "⊢ 0 ≤ ?x → Real.sqrt (?x * ?x) = ?x", ["Real.sqrt_mul_self"], r"0 ≤ x"),
    ("hypothesis", "⊢ 0 < ?x → Real.exp (Real.log ?x) = ?x", ["Real.exp_log"], r"0 < x"),
    ("hypothesis", "⊢ _ ≠ 0 → _ ≠ 0 → Real.log (_ * _) = _", ["Real.log_mul"], r"≠ 0"),
    ("hypothesis", "⊢ ?a ≤ ?b → ?b ≤ ?a → ?a = ?b", ["le_antisymm"], r"a ≤ b → b ≤ a"),
    ("hypothesis", "⊢ ?b ≤ ?c → ?a ≤ ?b → ?a ≤ ?c", ["le_trans"], r"a ≤ b → b ≤ c"),
    ("hypothesis", "⊢ ?b < ?c → ?a ≤ ?b → ?a < ?c", ["lt_of_le_of_lt"], r"a ≤ b.*b < c"),
    ("hypothesis", "⊢ Continuous _ → Continuous _ → Continuous (_ ∘ _)", ["Continuous.comp"], r"Continuous"),
    ("hypothesis", "⊢ Continuous _ → IsCompact _ → IsCompact (_ '' _)", ["IsCompact.image"], r"IsCompact"),
    ("hypothesis", "⊢ ?x ≤ ?y → Real.sqrt ?x ≤ Real.sqrt ?y", ["Real.sqrt_le_sqrt"], r"x ≤ y"),
    ("hypothesis", "⊢ ?x < ?y → 0 ≤ ?x → Real.sqrt ?x < Real.sqrt ?y", ["Real.sqrt_lt_sqrt"], r"x < y"),
    ("hypothesis", "⊢ _ < _ → tsum _ < tsum _", ["Summable.tsum_lt_tsum", "NNReal.tsum_lt_tsum", "ENNReal.tsum_lt_tsum"], r"<"),
    ("hypothesis", "⊢ (∀ i, ?f i ≤ ?a) → iSup ?f ≤ ?a", ["iSup_le"], r"iSup f ≤ a"),
    # mixes
    ("mixed", "Real.sqrt, Real.pi, \"Gamma\"", ["Real.Gamma_one_half_eq"], r"√"),
    ("mixed", "Real.exp, \"le\", ⊢ _ ≤ _", ["Real.add_one_le_exp", "Real.exp_le_exp"], r"≤"),
    ("mixed", "Finset.sum, \"mul\", ⊢ _ * _ = _", ["Finset.sum_mul"], r"\* a ="),
    ("mixed", "Real.cos, \"two_mul\"", ["Real.cos_two_mul", "Real.cos_two_mul'"], r"cos \(2"),
    # hypothesis patterns without ⊢: "if the pattern has parameters, they are matched in any order"
    # (Loogle's documentation); the statement's telescope as a whole, or a subterm
    ("hypothesis", "Nat.Prime ?p → 2 ≤ ?p", ["Nat.Prime.two_le"], r"Prime p → 2 ≤ p"),
    ("hypothesis", "Nat.Prime ?p → 1 < ?p", ["Nat.Prime.one_lt"], r"Prime p → 1 < p"),
    ("hypothesis", "Nat.Prime ?p → 0 < ?p", ["Nat.Prime.pos"], r"Prime p\) : 0 < p"),
    ("hypothesis", "Nat.Prime ?p → ?m ∣ ?p → ?m = 1 ∨ ?m = ?p", ["Nat.Prime.eq_one_or_self_of_dvd"], r"m = 1 ∨ m = p"),
    ("hypothesis", "Nat.Prime ?p → (?p ∣ ?m * ?n ↔ ?p ∣ ?m ∨ ?p ∣ ?n)", ["Nat.Prime.dvd_mul"], r"p ∣ m \* n ↔"),
    ("hypothesis", "Nat.Prime ?p → (?p ∣ Nat.factorial ?n ↔ ?p ≤ ?n)", ["Nat.Prime.dvd_factorial"], r"p ∣ n ! ↔ p ≤ n"),
    ("hypothesis", "0 < ?x → Real.log ?x ≤ ?x - 1", ["Real.log_le_sub_one_of_pos"], r"log x ≤ x - 1"),
    ("hypothesis", "?x ≠ 0 → ?x + 1 < Real.exp ?x", ["Real.add_one_lt_exp"], r"x \+ 1 < Real.exp x"),
    ("hypothesis", "?a ≠ 0 → ?a * ?a⁻¹ = 1", ["mul_inv_cancel₀"], r"a \* a⁻¹ = 1"),
    ("hypothesis", "?s ⊆ ?t → ?t ⊆ ?s → ?s = ?t", ["Finset.Subset.antisymm", "Set.Subset.antisymm"], r"⊆ .* ⊆ .* = "),
    ("hypothesis", "IsCompact ?s → IsClosed ?s", ["IsCompact.isClosed"], r"IsCompact s\) : IsClosed s"),
    ("hypothesis", "Differentiable _ ?f → Continuous ?f", ["Differentiable.continuous"], r"Differentiable 𝕜 f\) : Continuous f"),
    ("hypothesis", "?a ∣ ?b → ?b ∣ ?c → ?a ∣ ?c", ["dvd_trans"], r"a ∣ b → b ∣ c → a ∣ c"),
    ("hypothesis", "0 ≤ ?x → ?x < ?y → Real.sqrt ?x < Real.sqrt ?y", ["Real.sqrt_lt_sqrt"], r"0 ≤ x\) \(h : x < y\)"),
    ("hypothesis", "?x ≠ 0 → Complex.exp (Complex.log ?x) = ?x", ["Complex.exp_log"], r"x ≠ 0\) : exp \(log x\) = x"),
    # big operators and quantifiers with binders (`∑' n : ℕ`, `∑ i ∈ s`, `∀ ε > 0`, `∫ x in a..b`)
    ("binder", "∑' n : ℕ, _ ^ n", ["tsum_geometric_inv_two", "tsum_geometric_of_lt_one", "tsum_geometric_two"], r"∑' n : ℕ, .*\^ n"),
    ("binder", "∑ i ∈ Finset.range _, _ ^ i = (_ ^ _ - 1) / (_ - 1)", ["geom_sum_eq"], r"∑ i ∈ range n, x \^ i"),
    ("binder", "∑ i ∈ Finset.range _, i", ["Finset.sum_range_id", "Finset.sum_range_id_mul_two"], r"∑ i ∈ range n, i"),
    ("binder", "∑ m ∈ Finset.range (_ + 1), Nat.choose _ m", ["Nat.sum_range_choose"], r"range \(n \+ 1\), n.choose m"),
    ("binder", "Continuous _ ↔ ∀ b, ∀ ε > 0, ∃ δ > 0, _", ["EMetric.continuous_iff", "Metric.continuous_iff"], r"∀ ε > 0, ∃ δ > 0"),
    ("binder", "∫ x in _.._, Real.sin x", ["integral_sin"], r"∫ x in a..b, sin x"),
    ("binder", "∫ x in _.._, Real.cos x", ["integral_cos"], r"∫ x in a..b, cos x"),
    ("binder", "∫ x in _.._, Real.exp x", ["integral_exp"], r"∫ x in a..b, exp x"),
    ("binder", "∫ x in _.._, x ^ _", ["integral_pow"], r"∫ x in a..b, x \^ n"),
    ("binder", "(⋃ i, ?t i) ∩ ?s", ["Set.iUnion_inter"], r"\(⋃ i, t i\) ∩ s"),
    ("binder", "Real.exp (∑ i ∈ _, _)", ["Real.exp_sum"], r"exp \(∑ x ∈ s, f x\)"),
    ("binder", "∏ _x ∈ ?s, ?b = ?b ^ _", ["Finset.prod_const"], r"∏ _x ∈ s, b = b \^ #s"),
    ("binder", "fun x => Real.exp (-x)", ["Real.tendsto_exp_neg_atTop_nhds_zero"], r"fun x => exp \(-x\)"),
    # constants the statement writes through notation (`φ`, `σ`, `μ`, `Λ`, `ω`, `𝓝`), dot notation
    # (`n.divisors` with `n : ℕ`) or a namespace it is declared in (`X` in `Polynomial`)
    ("notation", "Nat.totient, Nat.divisors", ["Nat.sum_totient"], r"n.divisors.sum φ"),
    ("notation", "ArithmeticFunction.sigma, Nat.divisors", ["ArithmeticFunction.sigma_apply", "ArithmeticFunction.sigma_one_apply"], r"σ .* = ∑ d ∈ divisors n"),
    ("notation", "ArithmeticFunction.moebius, Nat.Prime", ["ArithmeticFunction.moebius_apply_prime"], r"μ p = -1"),
    ("notation", "ArithmeticFunction.vonMangoldt, Real.log", ["ArithmeticFunction.vonMangoldt_apply_prime"], r"Λ p = Real.log p"),
    ("notation", "ArithmeticFunction.cardDistinctFactors, Nat.Prime", ["ArithmeticFunction.cardDistinctFactors_apply_prime"], r"ω p = 1"),
    ("notation", "Polynomial.eval, Polynomial.X", ["Polynomial.eval_X"], r"X.eval x = x"),
    ("notation", "nhds, Real.sqrt, Real.pi", ["Stirling.tendsto_stirlingSeq_sqrt_pi"], r"𝓝 \(√π\)"),
    ("notation", "Real.exp, Filter.atTop, nhds", ["Real.tendsto_exp_neg_atTop_nhds_zero"], r"exp \(-x\)\) atTop \(𝓝 0\)"),
    ("notation", "Nat.totient (_ * _)", ["Nat.totient_mul"], r"φ \(m \* n\)"),
    ("notation", "⊢ Nat.totient ?n ≤ ?n", ["Nat.totient_le"], r"φ n ≤ n"),
    ("notation", "⊢ ArithmeticFunction.moebius _ = -1", ["ArithmeticFunction.moebius_apply_prime"], r"μ p = -1"),
    ("notation", "Nat.Prime, Nat.factorization, Finsupp.single", ["Nat.Prime.factorization"], r"p.factorization = single p 1"),
    ("notation", "Finset.sum, Finset.range, Nat.choose", ["Nat.sum_range_choose"], r"n.choose m"),
    ("notation", "Int.gcd, Int.natAbs, Nat.gcd", ["Int.gcd_eq_natAbs"], r"a.natAbs b.natAbs"),
    ("notation", "Nat.Prime, Nat.divisors", ["Nat.Prime.divisors"], r"divisors p = \{1, p\}"),
    # constant sets whose best answer states exactly those constants (fewest others first)
    ("constant-set", "Nat.totient, Nat.Prime", ["Nat.totient_prime"], r"φ p = p - 1"),
    ("constant-set", "Real.cos, Real.pi", ["Real.cos_pi", "Real.cos_pi_div_two", "Real.cos_two_pi"], r"cos .*π"),
    ("constant-set", "Real.sin, Real.pi", ["Real.sin_pi", "Real.sin_pi_div_two", "Real.sin_two_pi"], r"sin .*π"),
    ("constant-set", "Nat.Prime, Nat.factorial", ["Nat.Prime.dvd_factorial"], r"p ∣ n !"),
    ("constant-set", "Real.sinh, Real.exp", ["Real.sinh_eq"], r"sinh x = \(exp x - exp \(-x\)\) / 2"),
    ("constant-set", "Real.cosh, Real.exp", ["Real.cosh_eq"], r"cosh x = \(exp x \+ exp \(-x\)\) / 2"),
    ("constant-set", "Real.tan, Real.sin, Real.cos", ["Real.tan_eq_sin_div_cos"], r"tan x = sin x / cos x"),
    ("constant-set", "Nat.fib, Nat.gcd", ["Nat.fib_gcd"], r"fib \(gcd m n\)"),
    ("constant-set", "Real.tan, Real.arctan", ["Real.tan_arctan"], r"tan \(arctan x\) = x"),
    ("constant-set", "Complex.exp, Complex.log", ["Complex.exp_log"], r"exp \(log x\) = x"),
    ("constant-set", "Real.log, Real.logb", ["Real.log_div_log"], r"log x / log b = logb b x"),
    ("constant-set", "Finset.card, Finset.powerset", ["Finset.card_powerset"], r"card \(powerset s\) = 2 \^ card s"),
    ("constant-set", "Polynomial.derivative, Polynomial.degree", ["Polynomial.degree_derivative_lt"], r"p.derivative.degree < p.degree"),
    ("constant-set", "Real.exp, Real.sinh, Real.cosh", ["Real.cosh_add_sinh", "Real.sinh_add_cosh"], r"(cosh|sinh) x \+ (sinh|cosh) x = exp x"),
    ("constant-set", "Nat.divisors, Nat.properDivisors", ["Nat.sum_divisors_eq_sum_properDivisors_add_self"], r"properDivisors"),
    # order duals: each gold is the `@[to_dual]` twin of a source declaration (its attribute read in
    # the source); the extractor states it in the order dual (lean/twins.py), `≥` for a reversed `≤`
    ("order-dual", "?a ⊓ ?b ≤ ?a", ["inf_le_left"], r"a ≥ a ⊓ b"),
    ("order-dual", "?a ⊓ ?b ≤ ?b", ["inf_le_right"], r"b ≥ a ⊓ b"),
    ("order-dual", "?a ≤ ?b → ?a ≤ ?c → ?a ≤ ?b ⊓ ?c", ["le_inf"], r"a ⊓ b ≥ c"),
    ("order-dual", "?a ⊓ ?b = ?b ⊓ ?a", ["inf_comm"], r"a ⊓ b = b ⊓ a"),
    ("order-dual", "min _ _ ≤ min _ _", ["min_le_min"], r"min a b ≥ min c d"),
    ("order-dual", "max _ _ < _ ↔ _", ["max_lt_iff"], r"max b c ↔"),
    ("order-dual", "⊥ ≤ _", ["bot_le"], r"a ≥ ⊥"),
    ("order-dual", "?a ∈ ?s → sInf ?s ≤ ?a", ["sInf_le"], r"a ≥ sInf s"),
    ("order-dual", "IsGLB _ (sInf _)", ["isGLB_sInf"], r"IsGLB s \(sInf s\)"),
    ("order-dual", "iInf _ ≤ _", ["iInf_le"], r"f i ≥ iInf f"),
    ("order-dual", "Order.pred _ ≤ _", ["Order.pred_le"], r"a ≥ pred a"),
    ("order-dual", "BddBelow _ ↔ _", ["bddBelow_def"], r"BddBelow s ↔"),
]


def build() -> dict:
    """The suite: QUERIES with ids, in the MathlibQR-like format formal_loogle reads."""
    queries = [{"id": f"loogle-{i:03d}", "form": form, "query": q, "gold": sorted(gold), "check": check}
               for i, (form, q, gold, check) in enumerate(QUERIES, 1)]
    return {"suite": "loogle-mathlib", "k": 10, "headline": ["precision@10", "recall@10"], "queries": queries}


def check(suite: dict, release: Path) -> list[str]:
    """Problems: gold names the release lacks, or whose statement text fails the query's check."""
    t = pq.read_table(release / "declarations.parquet", columns=["full_name", "signature"])
    sig = dict(zip(t.column("full_name").to_pylist(), t.column("signature").to_pylist()))
    problems = []
    for q in suite["queries"]:
        for g in q["gold"]:
            if g not in sig:
                problems.append(f"{q['id']} {q['query']!r}: {g} is not a declaration")
            elif not re.search(q["check"], sig[g]):
                problems.append(f"{q['id']} {q['query']!r}: {g}'s statement `{sig[g][:80]}` fails {q['check']!r}")
    return problems


def main() -> None:
    """Writes the suite; with a release directory as argument, prints the gold names that fail."""
    suite = build()
    if len(sys.argv) > 1:
        for p in check(suite, Path(sys.argv[1])):
            print(p)
    OUT.write_text(json.dumps(suite, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(suite['queries'])} queries -> {OUT}")


if __name__ == "__main__":
    main()
