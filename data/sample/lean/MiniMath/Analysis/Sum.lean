/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/
import MiniMath.Data.List

/-!
# Finite and infinite sums of real numbers

Closed forms for the classical finite sums (arithmetic and geometric progressions, squares),
the Cauchy–Schwarz and Bernoulli inequalities, and convergence of the geometric series.

## Main results

* `MiniMath.geom_sum_eq`: `∑ i ∈ range n, x ^ i = (x ^ n - 1) / (x - 1)` for `x ≠ 1`.
* `MiniMath.Finset.sum_range_id_mul_two`: Gauss's formula for `0 + 1 + ⋯ + (n - 1)`.
* `MiniMath.sum_mul_sq_le_sq_mul_sq`: the **Cauchy–Schwarz inequality** for finite sums.
* `MiniMath.hasSum_geometric_of_lt_one`: `∑ rⁿ = (1 - r)⁻¹` when `0 ≤ r < 1`.
-/

open Finset

namespace MiniMath

namespace Finset

variable {β : Type*} [AddCommMonoid β]

/-- Peeling off the last term of a sum over `range (n + 1)`. -/
theorem sum_range_succ (f : ℕ → β) (n : ℕ) :
    ∑ x ∈ range (n + 1), f x = ∑ x ∈ range n, f x + f n := by
  rw [range_succ, sum_insert not_mem_range_self, add_comm]

/-- Peeling off the last factor of a product over `range (n + 1)`. -/
theorem prod_range_succ {M : Type*} [CommMonoid M] (f : ℕ → M) (n : ℕ) :
    ∏ x ∈ range (n + 1), f x = (∏ x ∈ range n, f x) * f n := by
  rw [range_succ, prod_insert not_mem_range_self, mul_comm]

/-- **Gauss's summation formula**: `(0 + 1 + ⋯ + (n - 1)) * 2 = n * (n - 1)`. -/
theorem sum_range_id_mul_two (n : ℕ) : (∑ i ∈ range n, i) * 2 = n * (n - 1) := by
  induction n with
  | zero => rfl
  | succ n ih =>
    rw [sum_range_succ, add_mul, ih]
    cases n <;> simp [Nat.mul_sub_one, Nat.mul_comm]; ring_nf; omega

/-- The product `1 * 2 * ⋯ * n` is `n !`. -/
theorem prod_range_add_one_eq_factorial (n : ℕ) : ∏ i ∈ range n, (i + 1) = n.factorial := by
  induction n with
  | zero => rfl
  | succ n ih => rw [prod_range_succ, ih, Nat.factorial_succ, Nat.mul_comm]

end Finset

section Geometric

variable {x : ℝ}

/-- Telescoping form of the geometric sum: `(∑ xⁱ) * (x - 1) = xⁿ - 1`. -/
theorem geom_sum_mul (x : ℝ) (n : ℕ) : (∑ i ∈ range n, x ^ i) * (x - 1) = x ^ n - 1 := by
  induction n with
  | zero => simp
  | succ n ih => rw [Finset.sum_range_succ, add_mul, ih, pow_succ]; ring

/-- **Geometric sum**: for `x ≠ 1`, `1 + x + ⋯ + x ^ (n - 1) = (x ^ n - 1) / (x - 1)`. -/
theorem geom_sum_eq (h : x ≠ 1) (n : ℕ) :
    ∑ i ∈ range n, x ^ i = (x ^ n - 1) / (x - 1) := by
  have : x - 1 ≠ 0 := sub_ne_zero.2 h
  rw [← geom_sum_mul, mul_div_cancel_right₀ _ this]

/-- The sum of the first `n` powers of `2` is `2 ^ n - 1`. -/
theorem sum_pow_two (n : ℕ) : ∑ i ∈ range n, (2 : ℝ) ^ i = 2 ^ n - 1 := by
  have := geom_sum_mul 2 n
  norm_num at this
  exact this

end Geometric

/-- The sum of the first `n` squares: `∑ i ≤ n, i² = n (n + 1) (2n + 1) / 6`. -/
theorem sum_range_sq (n : ℕ) :
    ∑ i ∈ range (n + 1), (i : ℚ) ^ 2 = n * (n + 1) * (2 * n + 1) / 6 := by
  induction n with
  | zero => simp
  | succ n ih =>
    rw [Finset.sum_range_succ, ih]
    push_cast
    ring

/-- Casting a finite sum of natural numbers to `ℝ` is the sum of the casts. -/
@[simp, norm_cast]
theorem cast_sum {ι : Type*} (s : _root_.Finset ι) (f : ι → ℕ) :
    ((∑ i ∈ s, f i : ℕ) : ℝ) = ∑ i ∈ s, (f i : ℝ) :=
  Nat.cast_sum s f

/-- The **triangle inequality** for finite sums. -/
theorem abs_sum_le_sum_abs {ι : Type*} (s : _root_.Finset ι) (f : ι → ℝ) :
    |∑ i ∈ s, f i| ≤ ∑ i ∈ s, |f i| := by
  sorry

/-- **Cauchy–Schwarz inequality** for finite sums of real numbers. -/
theorem sum_mul_sq_le_sq_mul_sq {ι : Type*} (s : _root_.Finset ι) (f g : ι → ℝ) :
    (∑ i ∈ s, f i * g i) ^ 2 ≤ (∑ i ∈ s, f i ^ 2) * ∑ i ∈ s, g i ^ 2 := by
  sorry

/-- **Bernoulli's inequality**: `1 + n a ≤ (1 + a) ^ n` for `a ≥ -2`. -/
theorem one_add_mul_le_pow {a : ℝ} (H : -2 ≤ a) (n : ℕ) : 1 + n * a ≤ (1 + a) ^ n := by
  sorry

/-- `HasSum f a` means that the partial sums `∑ i < n, f i` tend to `a`. -/
def HasSum (f : ℕ → ℝ) (a : ℝ) : Prop :=
  ∀ ε > 0, ∃ N, ∀ n ≥ N, |∑ i ∈ range n, f i - a| < ε

/-- A sequence is Cauchy if its terms become arbitrarily close to each other. -/
def IsCauchySeq (u : ℕ → ℝ) : Prop :=
  ∀ ε > 0, ∃ N, ∀ m ≥ N, ∀ n ≥ N, |u m - u n| < ε

/-- A sum has at most one value. -/
theorem HasSum.unique {f : ℕ → ℝ} {a b : ℝ} (ha : HasSum f a) (hb : HasSum f b) : a = b := by
  sorry

/-- The **geometric series** `∑ rⁿ` converges to `(1 - r)⁻¹` when `0 ≤ r < 1`. -/
theorem hasSum_geometric_of_lt_one {r : ℝ} (h₁ : 0 ≤ r) (h₂ : r < 1) :
    HasSum (fun n => r ^ n) (1 - r)⁻¹ := by
  sorry

/-- If the terms of a series are summable then they tend to zero. -/
theorem HasSum.tendsto_zero {f : ℕ → ℝ} {a : ℝ} (h : HasSum f a) :
    ∀ ε > 0, ∃ N, ∀ n ≥ N, |f n| < ε := by
  sorry

end MiniMath

/-!
## References

* [B. Example, *Geometric series and their sums*][sampleSeries1999]
-/
