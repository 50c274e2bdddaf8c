/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/
import MiniMath.Order.Lattice

/-!
# Monoids, groups and subgroups

This file sets up a small multiplicative algebraic hierarchy inside the `MiniMath` namespace
and proves the elementary laws that every first course states: cancellation, uniqueness of
inverses, and the formula `(a * b)⁻¹ = b⁻¹ * a⁻¹`.

## Main definitions

* `MiniMath.Semigroup`, `MiniMath.Monoid`, `MiniMath.Group`, `MiniMath.CommGroup`:
  the classes, each extending the previous one.
* `MiniMath.npow`: natural powers in a monoid, by recursion on the exponent.
* `MiniMath.Subgroup`: a set of elements closed under `1`, `*` and `⁻¹`.

## Main results

* `MiniMath.mul_left_cancel`: left multiplication by a fixed element is injective.
* `MiniMath.inv_inv`: inversion is an involution.
* `MiniMath.mul_inv_rev`: the inverse of a product is the product of the inverses, reversed.

## Implementation notes

Most lemmas carry `@[to_additive]`, which would generate the additive versions
(`add_left_cancel`, `neg_neg`, …) in a full library.
-/

universe u v

namespace MiniMath

/-- A semigroup is a type with an associative binary multiplication. -/
class Semigroup (G : Type u) extends Mul G where
  /-- Multiplication is associative. -/
  protected mul_assoc : ∀ a b c : G, a * b * c = a * (b * c)

/-- A monoid is a semigroup with a two-sided identity element `1`. -/
class Monoid (M : Type u) extends Semigroup M, One M where
  /-- `1` is a left identity. -/
  protected one_mul : ∀ a : M, 1 * a = a
  /-- `1` is a right identity. -/
  protected mul_one : ∀ a : M, a * 1 = a

/-- A group is a monoid in which every element `a` has a left inverse `a⁻¹`. -/
class Group (G : Type u) extends Monoid G, Inv G where
  protected inv_mul_cancel : ∀ a : G, a⁻¹ * a = 1

/-- A commutative (abelian) group: a group whose multiplication commutes. -/
class CommGroup (G : Type u) extends Group G where
  protected mul_comm : ∀ a b : G, a * b = b * a

/-- A type is commutative for a multiplication when any two elements commute. -/
abbrev IsCommutative (G : Type u) [Mul G] : Prop :=
  ∀ a b : G, a * b = b * a

section Monoid

variable {M : Type u} [Monoid M]

/-- The identity is neutral on the left. -/
@[to_additive (attr := simp)]
theorem one_mul (a : M) : 1 * a = a :=
  Monoid.one_mul a

/-- The identity is neutral on the right. -/
@[to_additive (attr := simp)]
theorem mul_one (a : M) : a * 1 = a :=
  Monoid.mul_one a

@[to_additive]
theorem mul_assoc (a b c : M) : a * b * c = a * (b * c) :=
  Semigroup.mul_assoc a b c

/-- Natural number powers in a monoid, `npow n a = a * ⋯ * a` with `n` factors. -/
def npow : ℕ → M → M
  | 0, _ => 1
  | n + 1, a => npow n a * a

@[simp]
theorem npow_zero (a : M) : npow 0 a = 1 := rfl

theorem npow_succ (n : ℕ) (a : M) : npow (n + 1) a = npow n a * a := rfl

/-- Powers add: `a ^ (m + n) = a ^ m * a ^ n`. -/
theorem npow_add (m n : ℕ) (a : M) :
    npow (m + n) a = npow m a * npow n a := by
  induction n with
  | zero => simp
  | succ n ih => rw [← Nat.add_assoc, npow_succ, ih, npow_succ, mul_assoc]

end Monoid

section Group

variable {G : Type u} [Group G] {a b c : G}

/-- The defining property of the inverse. -/
@[to_additive (attr := simp) neg_add_cancel]
theorem inv_mul_cancel (a : G) : a⁻¹ * a = 1 :=
  Group.inv_mul_cancel a

/-- **Left cancellation**: in a group one may cancel a common left factor [sampleGroups2025]. -/
@[to_additive, stacks MA02]
theorem mul_left_cancel (h : a * b = a * c) : b = c := by
  rw [← one_mul b, ← inv_mul_cancel a, mul_assoc, h, ← mul_assoc, inv_mul_cancel, one_mul]

@[to_additive, stacks MA02 "as an equivalence"]
theorem mul_left_cancel_iff : a * b = a * c ↔ b = c :=
  ⟨mul_left_cancel, fun h => h ▸ rfl⟩

/-- A left inverse is also a right inverse. -/
@[to_additive (attr := simp) add_neg_cancel]
theorem mul_inv_cancel (a : G) : a * a⁻¹ = 1 := by
  apply mul_left_cancel (a := a⁻¹)
  rw [← mul_assoc, inv_mul_cancel, one_mul, mul_one]

/-- **Right cancellation**. -/
@[to_additive]
theorem mul_right_cancel (h : b * a = c * a) : b = c := by
  rw [← mul_one b, ← mul_inv_cancel a, ← mul_assoc, h, mul_assoc, mul_inv_cancel, mul_one]

/-- Inverses are unique: if `a * b = 1` then `a⁻¹ = b`. -/
@[to_additive]
theorem inv_eq_of_mul_eq_one_right (h : a * b = 1) : a⁻¹ = b :=
  mul_left_cancel (a := a) (by rw [mul_inv_cancel, h])

theorem eq_inv_of_mul_eq_one_left (h : a * b = 1) : a = b⁻¹ := by
  rw [← inv_eq_of_mul_eq_one_right h, inv_eq_of_mul_eq_one_right (mul_inv_cancel b)]

/-- Taking the inverse twice gives back the element. -/
@[to_additive (attr := simp) neg_neg]
theorem inv_inv (a : G) : a⁻¹⁻¹ = a :=
  inv_eq_of_mul_eq_one_right (inv_mul_cancel a)

/-- The inverse of a product is the product of the inverses in the opposite order. -/
@[to_additive (attr := simp) neg_add_rev, stacks MA05]
theorem mul_inv_rev (a b : G) : (a * b)⁻¹ = b⁻¹ * a⁻¹ :=
  inv_eq_of_mul_eq_one_right <| by
    rw [mul_assoc, ← mul_assoc b, mul_inv_cancel, one_mul, mul_inv_cancel]

@[simp]
theorem inv_one : (1 : G)⁻¹ = 1 :=
  inv_eq_of_mul_eq_one_right (one_mul 1)

private theorem mul_eq_one_aux (h : a * b = 1) : b * a = 1 := by
  rw [← inv_eq_of_mul_eq_one_right h, inv_mul_cancel]

/-- In a group, `a * b = 1` if and only if `b * a = 1`. -/
theorem mul_eq_one_comm : a * b = 1 ↔ b * a = 1 :=
  ⟨mul_eq_one_aux, mul_eq_one_aux⟩

/-- Left multiplication by a group element is an injective map. -/
theorem _root_.Function.Injective.group_mul_left (a : G) :
    Function.Injective (a * · : G → G) :=
  fun _ _ h => mul_left_cancel h

/-- A group in which every element is its own inverse is commutative. -/
theorem isCommutative_of_mul_self_eq_one (h : ∀ x : G, x * x = 1) : IsCommutative G := by
  intro a b
  have hab := h (a * b)
  rw [← inv_eq_of_mul_eq_one_right (h a), ← inv_eq_of_mul_eq_one_right (h b), ← mul_inv_rev,
    inv_eq_of_mul_eq_one_right hab]

end Group

/-- The product of two groups is a group under componentwise multiplication. -/
instance Prod.instGroup {G : Type u} {H : Type v} [Group G] [Group H] : Group (G × H) where
  mul p q := (p.1 * q.1, p.2 * q.2)
  one := (1, 1)
  inv p := (p.1⁻¹, p.2⁻¹)
  mul_assoc _ _ _ := Prod.ext (mul_assoc _ _ _) (mul_assoc _ _ _)
  one_mul _ := Prod.ext (one_mul _) (one_mul _)
  mul_one _ := Prod.ext (mul_one _) (mul_one _)
  inv_mul_cancel _ := Prod.ext (inv_mul_cancel _) (inv_mul_cancel _)

/-- A subgroup of `G`: a set containing `1` and closed under products and inverses. -/
structure Subgroup (G : Type u) [Group G] where
  /-- The underlying set. -/
  carrier : Set G
  one_mem' : (1 : G) ∈ carrier
  mul_mem' {a b : G} : a ∈ carrier → b ∈ carrier → a * b ∈ carrier
  inv_mem' {a : G} : a ∈ carrier → a⁻¹ ∈ carrier

namespace Subgroup

variable {G : Type u} [Group G] (H K : Subgroup G)

instance : Membership G (Subgroup G) :=
  ⟨fun H a => a ∈ H.carrier⟩

theorem one_mem : (1 : G) ∈ H := H.one_mem'

theorem mul_mem {a b : G} (ha : a ∈ H) (hb : b ∈ H) : a * b ∈ H := H.mul_mem' ha hb

theorem inv_mem {a : G} (ha : a ∈ H) : a⁻¹ ∈ H := H.inv_mem' ha

/-- An element lies in a subgroup iff its inverse does. -/
@[simp]
theorem inv_mem_iff {a : G} : a⁻¹ ∈ H ↔ a ∈ H :=
  ⟨fun h => inv_inv a ▸ H.inv_mem h, H.inv_mem⟩

/-- The intersection of two subgroups is again a subgroup. -/
@[stacks MA03]
protected def inf : Subgroup G where
  carrier := H.carrier ∩ K.carrier
  one_mem' := ⟨H.one_mem', K.one_mem'⟩
  mul_mem' ha hb := ⟨H.mul_mem' ha.1 hb.1, K.mul_mem' ha.2 hb.2⟩
  inv_mem' ha := ⟨H.inv_mem' ha.1, K.inv_mem' ha.2⟩

@[simp]
theorem mem_inf {a : G} : a ∈ H.inf K ↔ a ∈ H ∧ a ∈ K := Iff.rfl

/-- The trivial subgroup `{1}`. -/
def bot : Subgroup G where
  carrier := {1}
  one_mem' := rfl
  mul_mem' ha hb := by simp_all
  inv_mem' ha := by simp_all

/-- The centre of a group: the elements commuting with every element. -/
def center (G : Type u) [Group G] : Subgroup G where
  carrier := {z | ∀ g : G, g * z = z * g}
  one_mem' g := by rw [mul_one, one_mul]
  mul_mem' {a b} ha hb g := by rw [← mul_assoc, ha, mul_assoc, hb, mul_assoc]
  inv_mem' {a} ha g := by
    rw [← mul_left_cancel_iff (a := a), ← mul_assoc, ← ha, mul_assoc, mul_inv_cancel, mul_one,
      ← mul_assoc, mul_inv_cancel, one_mul]

end Subgroup

end MiniMath
