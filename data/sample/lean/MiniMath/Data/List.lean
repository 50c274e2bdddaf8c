/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/

/-!
# Lists

Basic operations on lists written from scratch: reversal, sums, counting, and the sublist
relation, with their interaction with `++` and `length`.

## Main definitions

* `MiniMath.List.rev`: list reversal, by structural recursion.
* `MiniMath.List.sum`: the sum of a list of elements of an additive type.
* `MiniMath.List.Sublist`: `l₁ <+ l₂` when `l₁` is obtained from `l₂` by deleting elements.

## Tags

list, reverse, palindrome, sublist
-/

universe u v

namespace MiniMath.List

variable {α : Type u} {β : Type v}

/-- Reverse a list: `rev [a, b, c] = [c, b, a]`. -/
def rev : List α → List α
  | [] => []
  | a :: l => rev l ++ [a]

@[simp] theorem rev_nil : rev ([] : List α) = [] := rfl

@[simp] theorem rev_cons (a : α) (l : List α) : rev (a :: l) = rev l ++ [a] := rfl

/-- Reversal turns concatenation around. -/
@[simp]
theorem rev_append (l₁ l₂ : List α) : rev (l₁ ++ l₂) = rev l₂ ++ rev l₁ := by
  induction l₁ with
  | nil => simp
  | cons a l ih => simp [ih, List.append_assoc]

/-- Reversing twice gives back the original list. -/
@[simp]
theorem rev_rev (l : List α) : rev (rev l) = l := by
  induction l with
  | nil => rfl
  | cons a l ih => simp [ih]

/-- Reversal preserves length. -/
@[simp]
theorem length_rev (l : List α) : (rev l).length = l.length := by
  induction l <;> simp_all

/-- A tail-recursive version of `rev`, accumulating the result. -/
private def revAux : List α → List α → List α
  | [], acc => acc
  | a :: l, acc => revAux l (a :: acc)

private lemma revAux_eq (l acc : List α) : revAux l acc = rev l ++ acc := by
  induction l generalizing acc <;> simp_all [revAux]

/-- `rev` agrees with the accumulator-based implementation. -/
@[csimp]
theorem rev_eq_revAux (l : List α) : rev l = revAux l [] := by
  simp [revAux_eq]

/-- A palindrome is a list equal to its own reverse. -/
abbrev Palindrome (l : List α) : Prop := rev l = l

lemma palindrome_append_rev (l : List α) : Palindrome (l ++ rev l) := by
  simp [Palindrome]

/-- The sum of a list; `sum [] = 0`. -/
def sum [Add α] [Zero α] : List α → α
  | [] => 0
  | a :: l => a + sum l

section Sum

variable [AddCommMonoid α]

@[simp] theorem sum_nil : sum ([] : List α) = 0 := rfl

@[simp] theorem sum_cons (a : α) (l : List α) : sum (a :: l) = a + sum l := rfl

/-- The sum of a concatenation is the sum of the sums. -/
@[simp]
theorem sum_append (l₁ l₂ : List α) : sum (l₁ ++ l₂) = sum l₁ + sum l₂ := by
  induction l₁ with
  | nil => simp
  | cons a l ih => simp [ih, add_assoc]

/-- Reversing a list does not change its sum. -/
theorem sum_rev (l : List α) : sum (rev l) = sum l := by
  induction l with
  | nil => rfl
  | cons a l ih => simp [ih, add_comm]

end Sum

/-- Sum of `0 + 1 + ⋯ + (n - 1)`, twice: `2 * ∑ i < n, i = n * (n - 1)`. -/
theorem two_mul_sum_range (n : ℕ) : 2 * sum (List.range n) = n * (n - 1) := by
  sorry

/-- The number of occurrences of `a` in a list. -/
def count [DecidableEq α] (a : α) : List α → ℕ
  | [] => 0
  | b :: l => if b = a then count a l + 1 else count a l

lemma count_append [DecidableEq α] (a : α) (l₁ l₂ : List α) :
    count a (l₁ ++ l₂) = count a l₁ + count a l₂ := by
  induction l₁ with
  | nil => simp [count]
  | cons b l ih => by_cases h : b = a <;> simp [count, h, ih] <;> omega

/-- The length of a mapped list is the length of the list. -/
@[simp]
theorem length_map' (f : α → β) (l : List α) : (l.map f).length = l.length := by
  induction l <;> simp_all

/-- `l₁ <+ l₂`, or `Sublist l₁ l₂`: `l₁` is a (not necessarily contiguous) sublist of `l₂`. -/
inductive Sublist : List α → List α → Prop
  /-- The empty list is a sublist of itself. -/
  | slnil : Sublist [] []
  /-- Dropping the head of the larger list. -/
  | cons (a : α) {l₁ l₂ : List α} : Sublist l₁ l₂ → Sublist l₁ (a :: l₂)
  /-- Keeping a common head. -/
  | cons₂ (a : α) {l₁ l₂ : List α} : Sublist l₁ l₂ → Sublist (a :: l₁) (a :: l₂)

@[inherit_doc] scoped infixl:50 " <+ " => Sublist

namespace Sublist

/-- A sublist is no longer than the list it comes from. -/
theorem length_le {l₁ l₂ : List α} (h : l₁ <+ l₂) : l₁.length ≤ l₂.length := by
  induction h with
  | slnil => exact le_refl 0
  | cons _ _ ih => exact Nat.le_succ_of_le ih
  | cons₂ _ _ ih => exact Nat.succ_le_succ ih

/-- Every list is a sublist of itself. -/
@[refl]
protected theorem refl : ∀ l : List α, l <+ l
  | [] => .slnil
  | a :: l => .cons₂ a (Sublist.refl l)

/-- The sublist relation is transitive. -/
@[trans]
protected theorem trans {l₁ l₂ l₃ : List α} (h₁ : l₁ <+ l₂) (h₂ : l₂ <+ l₃) : l₁ <+ l₃ := by
  sorry

end Sublist

/-- The empty list is a sublist of every list. -/
@[simp]
theorem nil_sublist : ∀ l : List α, [] <+ l
  | [] => .slnil
  | a :: l => .cons a (nil_sublist l)

/-- An element of `l₁` is in `l₁ ++ l₂`; stated for the core `List` namespace. -/
theorem _root_.List.mem_append_of_mem_left' {a : α} {l₁ : List α} (l₂ : List α) (h : a ∈ l₁) :
    a ∈ l₁ ++ l₂ :=
  List.mem_append.2 (Or.inl h)

end MiniMath.List
