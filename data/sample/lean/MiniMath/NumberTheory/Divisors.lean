/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/
import MiniMath.Analysis.Sum

/-!
# Divisors, Euler's totient and perfect numbers

This file defines the finset of divisors of a natural number and the arithmetic functions built
from it.

## Main definitions

* `MiniMath.Nat.divisors n`: the divisors of `n`, as a `Finset ℕ`; `divisors 0 = ∅`.
* `MiniMath.Nat.properDivisors n`: the divisors of `n` other than `n` itself.
* `MiniMath.Nat.totient n`, written `φ n`: the number of `k < n` coprime to `n`.
* `MiniMath.Nat.sigma k n`, written `σ k n`: the sum of the `k`-th powers of the divisors.
* `MiniMath.Nat.Perfect n`: `n` is the sum of its proper divisors.

## Main results

* `MiniMath.Nat.sum_totient`: **Gauss's identity** `∑ d ∈ n.divisors, φ d = n`.
* `MiniMath.Nat.exists_infinite_primes`: there are infinitely many primes (Euclid).
* `MiniMath.Nat.gcd_eq_gcd_ab`: **Bézout's identity**.

## Notation

`φ` and `σ` are scoped in `MiniMath.Nat`: use `open scoped MiniMath.Nat`.
-/

open Finset

namespace MiniMath.Nat

/-- A natural number `p` is prime if `2 ≤ p` and its only divisors are `1` and `p`. -/
def Prime (p : ℕ) : Prop :=
  2 ≤ p ∧ ∀ m, m ∣ p → m = 1 ∨ m = p

theorem Prime.two_le {p : ℕ} (hp : Prime p) : 2 ≤ p := hp.1

theorem Prime.pos {p : ℕ} (hp : Prime p) : 0 < p := by
  have := hp.two_le; omega

/-- `2` is a prime number. -/
theorem prime_two : Prime 2 := by decide

/-- The finset of divisors of `n`, that is the `d` with `1 ≤ d ≤ n` and `d ∣ n`.
By convention `divisors 0 = ∅`. -/
def divisors (n : ℕ) : Finset ℕ :=
  (Finset.Ico 1 (n + 1)).filter (· ∣ n)

/-- The proper divisors of `n`: those `d ∣ n` with `d < n`. -/
def properDivisors (n : ℕ) : Finset ℕ :=
  (Finset.Ico 1 n).filter (· ∣ n)

variable {m n : ℕ}

@[simp]
theorem mem_divisors : m ∈ divisors n ↔ m ∣ n ∧ n ≠ 0 := by
  rcases n with _ | n
  · simp [divisors]
  · simp only [divisors, mem_filter, mem_Ico]
    exact ⟨fun h => ⟨h.2, by omega⟩, fun h => ⟨⟨Nat.pos_of_dvd_of_pos h.1 (by omega),
      Nat.lt_succ_of_le (Nat.le_of_dvd (by omega) h.1)⟩, h.1⟩⟩

theorem mem_properDivisors : m ∈ properDivisors n ↔ m ∣ n ∧ m < n := by
  sorry

/-- Every divisor of a nonzero `n` is at most `n`. -/
lemma divisor_le (h : m ∈ divisors n) : m ≤ n :=
  Nat.le_of_dvd (Nat.pos_of_ne_zero (mem_divisors.1 h).2) (mem_divisors.1 h).1

@[simp]
theorem divisors_zero : divisors 0 = ∅ := rfl

@[simp]
theorem divisors_one : divisors 1 = {1} := rfl

theorem insert_self_properDivisors (h : n ≠ 0) : insert n (properDivisors n) = divisors n := by
  sorry

/-- The divisors of a prime `p` are exactly `1` and `p`. -/
theorem Prime.divisors {p : ℕ} (hp : Prime p) : divisors p = {1, p} := by
  ext m
  simp only [mem_divisors, mem_insert, mem_singleton]
  exact ⟨fun h => hp.2 m h.1, fun h => ⟨by rcases h with rfl | rfl <;> simp, hp.pos.ne'⟩⟩

/-- A prime power `p ^ k` has exactly `k + 1` divisors, namely `1, p, …, p ^ k`. -/
theorem card_divisors_prime_pow {p : ℕ} (hp : Prime p) (k : ℕ) :
    (divisors (p ^ k)).card = k + 1 := by
  sorry

/-- **Euler's totient function**: the number of natural numbers below `n` coprime to `n` (https://oeis.org/A000010; [Fixture, *Divisors*][sampleDivisors2026]). -/
def totient (n : ℕ) : ℕ :=
  ((range n).filter n.Coprime).card

@[inherit_doc]
scoped notation "φ" => MiniMath.Nat.totient

@[simp]
theorem totient_zero : φ 0 = 0 := rfl

@[simp]
theorem totient_one : φ 1 = 1 := rfl

/-- For a prime `p`, all of `1, …, p - 1` are coprime to `p`. -/
@[simp]
theorem totient_prime {p : ℕ} (hp : Prime p) : φ p = p - 1 := by
  sorry

lemma totient_le (n : ℕ) : φ n ≤ n :=
  ((range n).card_filter_le _).trans_eq (card_range n)

/-- **Gauss's identity**: summing Euler's totient over the divisors of `n` gives `n`. -/
@[stacks MN05]
theorem sum_totient (n : ℕ) : ∑ d ∈ divisors n, φ d = n := by
  sorry

/-- The sum of the `k`-th powers of the divisors of `n`. -/
def sigma (k n : ℕ) : ℕ :=
  ∑ d ∈ divisors n, d ^ k

@[inherit_doc]
scoped notation "σ" => MiniMath.Nat.sigma

lemma sigma_one_apply (n : ℕ) : σ 1 n = ∑ d ∈ divisors n, d := by
  simp [sigma]

theorem sigma_zero_apply (n : ℕ) : σ 0 n = (divisors n).card := by
  simp [sigma]

/-- `n` is **perfect** if it is positive and equals the sum of its proper divisors. -/
def Perfect (n : ℕ) : Prop :=
  ∑ i ∈ properDivisors n, i = n ∧ 0 < n

/-- `n` is perfect iff the sum of all its divisors is `2 * n`. -/
theorem perfect_iff_sum_divisors_eq_two_mul (h : 0 < n) :
    Perfect n ↔ ∑ i ∈ divisors n, i = 2 * n := by
  rw [← insert_self_properDivisors h.ne', sum_insert (by simp [mem_properDivisors]), Perfect]
  omega

/-- `6 = 1 + 2 + 3` is a perfect number. -/
theorem perfect_six : Perfect 6 := by decide

/-- **Euclid's theorem**: above every natural number there is a prime. -/
@[stacks MN02]
theorem exists_infinite_primes (n : ℕ) : ∃ p, n ≤ p ∧ Prime p := by
  sorry

/-- The extended Euclidean algorithm: returns `(x, y)` with `x * a + y * b = gcd a b`. -/
def xgcd (a b : ℕ) : ℤ × ℤ :=
  go a b 1 0 0 1
where
  /-- The loop invariant is `r = s * a + t * b` and `r' = s' * a + t' * b`. -/
  go : ℕ → ℕ → ℤ → ℤ → ℤ → ℤ → ℤ × ℤ
    | 0, _, _, _, s', t' => (s', t')
    | r@(_ + 1), r', s, t, s', t' =>
      let q := r' / r
      go (r' % r) r (s' - q * s) (t' - q * t) s t
  decreasing_by all_goals simp_wf; exact Nat.mod_lt _ (Nat.succ_pos _)

/-- The first Bézout coefficient. -/
def gcdA (a b : ℕ) : ℤ := (xgcd a b).1

/-- The second Bézout coefficient. -/
def gcdB (a b : ℕ) : ℤ := (xgcd a b).2

/-- **Bézout's identity**: `gcd a b` is an integer combination of `a` and `b`. -/
@[stacks MN03]
theorem gcd_eq_gcd_ab (a b : ℕ) : (Nat.gcd a b : ℤ) = a * gcdA a b + b * gcdB a b := by
  sorry

/-- Coprime numbers have a multiplicative number of divisors. -/
theorem Coprime.card_divisors_mul (hmn : Nat.Coprime m n) :
    (divisors (m * n)).card = (divisors m).card * (divisors n).card := by
  sorry

end MiniMath.Nat
