/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/

/-!
# Partial orders and lattices

A lattice is a partial order in which any two elements have a least upper bound `a ⊔ b`
(their *join*) and a greatest lower bound `a ⊓ b` (their *meet*).

## Main definitions

* `MiniMath.PartialOrder`: a reflexive, transitive, antisymmetric relation `≤`.
* `MiniMath.Lattice`: joins and meets.
* `MiniMath.DistribLattice`: a lattice where `⊓` distributes over `⊔`.
* `MiniMath.CompleteLattice`: every set has a supremum and an infimum.
* `MiniMath.OrderHom`: monotone maps, written `α →o β`.

## Main results

* `MiniMath.sup_le_iff`: `a ⊔ b ≤ c ↔ a ≤ c ∧ b ≤ c`.
* `MiniMath.OrderHom.map_lfp`: the **Knaster–Tarski theorem**, a monotone self-map of a complete
  lattice has a least fixed point.

## Notation

* `a ⊔ b`, `a ⊓ b`: join and meet, `sSup s`, `sInf s`: supremum and infimum of a set.
-/

universe u v w

namespace MiniMath

/-- A partial order: `≤` is reflexive, transitive and antisymmetric. -/
class PartialOrder (α : Type u) extends LE α, LT α where
  le_refl : ∀ a : α, a ≤ a
  le_trans : ∀ a b c : α, a ≤ b → b ≤ c → a ≤ c
  lt := fun a b => a ≤ b ∧ ¬b ≤ a
  lt_iff_le_not_le : ∀ a b : α, a < b ↔ a ≤ b ∧ ¬b ≤ a := by intros; rfl
  le_antisymm : ∀ a b : α, a ≤ b → b ≤ a → a = b

/-- The join (least upper bound) operation `⊔`. -/
class Sup (α : Type u) where
  /-- The join of two elements. -/
  sup : α → α → α

/-- The meet (greatest lower bound) operation `⊓`. -/
class Inf (α : Type u) where
  /-- The meet of two elements. -/
  inf : α → α → α

@[inherit_doc] infixl:68 " ⊔ " => Sup.sup
@[inherit_doc] infixl:69 " ⊓ " => Inf.inf

/-- A lattice: a partial order with binary joins and meets. -/
class Lattice (α : Type u) extends PartialOrder α, Sup α, Inf α where
  le_sup_left : ∀ a b : α, a ≤ a ⊔ b
  le_sup_right : ∀ a b : α, b ≤ a ⊔ b
  sup_le : ∀ a b c : α, a ≤ c → b ≤ c → a ⊔ b ≤ c
  inf_le_left : ∀ a b : α, a ⊓ b ≤ a
  inf_le_right : ∀ a b : α, a ⊓ b ≤ b
  le_inf : ∀ a b c : α, a ≤ b → a ≤ c → a ≤ b ⊓ c

section PartialOrder

variable {α : Type u} [PartialOrder α] {a b c : α}

@[refl, simp]
theorem le_refl (a : α) : a ≤ a := PartialOrder.le_refl a

@[trans]
theorem le_trans : a ≤ b → b ≤ c → a ≤ c := PartialOrder.le_trans _ _ _

/-- Two elements below each other are equal (see [sampleNotes2024]). -/
theorem le_antisymm : a ≤ b → b ≤ a → a = b := PartialOrder.le_antisymm _ _

theorem le_antisymm_iff : a = b ↔ a ≤ b ∧ b ≤ a :=
  ⟨fun h => h ▸ ⟨le_refl a, le_refl a⟩, fun h => le_antisymm h.1 h.2⟩

end PartialOrder

section Lattice

variable {α : Type u} [Lattice α] {a b c d : α}

@[simp]
theorem le_sup_left : a ≤ a ⊔ b := Lattice.le_sup_left a b

@[simp]
theorem le_sup_right : b ≤ a ⊔ b := Lattice.le_sup_right a b

/-- The join is the *least* upper bound. -/
theorem sup_le (h₁ : a ≤ c) (h₂ : b ≤ c) : a ⊔ b ≤ c := Lattice.sup_le a b c h₁ h₂

/-- An upper bound of `a ⊔ b` is exactly a common upper bound of `a` and `b`. -/
@[simp]
theorem sup_le_iff : a ⊔ b ≤ c ↔ a ≤ c ∧ b ≤ c :=
  ⟨fun h => ⟨le_trans le_sup_left h, le_trans le_sup_right h⟩, fun h => sup_le h.1 h.2⟩

theorem inf_le_left : a ⊓ b ≤ a := Lattice.inf_le_left a b

theorem inf_le_right : a ⊓ b ≤ b := Lattice.inf_le_right a b

@[simp]
theorem le_inf_iff : a ≤ b ⊓ c ↔ a ≤ b ∧ a ≤ c :=
  ⟨fun h => ⟨le_trans h inf_le_left, le_trans h inf_le_right⟩,
    fun h => Lattice.le_inf _ _ _ h.1 h.2⟩

/-- The join is commutative. -/
theorem sup_comm (a b : α) : a ⊔ b = b ⊔ a :=
  le_antisymm (sup_le le_sup_right le_sup_left) (sup_le le_sup_right le_sup_left)

theorem sup_assoc (a b c : α) : a ⊔ b ⊔ c = a ⊔ (b ⊔ c) := by
  apply le_antisymm <;> simp only [sup_le_iff] <;>
    exact ⟨⟨le_sup_left, le_trans le_sup_left le_sup_right⟩, le_trans le_sup_right le_sup_right⟩

theorem inf_comm (a b : α) : a ⊓ b = b ⊓ a :=
  le_antisymm (le_inf_iff.2 ⟨inf_le_right, inf_le_left⟩) (le_inf_iff.2 ⟨inf_le_right, inf_le_left⟩)

/-- Joining an element with itself does nothing. -/
@[simp]
theorem sup_idem (a : α) : a ⊔ a = a :=
  le_antisymm (sup_le (le_refl a) (le_refl a)) le_sup_left

/-- One of the two **absorption laws**: `a ⊓ (a ⊔ b) = a`. -/
@[simp, stacks MA09 "one of the absorption laws"]
theorem inf_sup_self (a b : α) : a ⊓ (a ⊔ b) = a :=
  le_antisymm inf_le_left (le_inf_iff.2 ⟨le_refl a, le_sup_left⟩)

theorem sup_eq_right : a ⊔ b = b ↔ a ≤ b :=
  ⟨fun h => h ▸ le_sup_left, fun h => le_antisymm (sup_le h (le_refl b)) le_sup_right⟩

/-- Joins are monotone in both arguments. -/
theorem sup_le_sup (h₁ : a ≤ b) (h₂ : c ≤ d) : a ⊔ c ≤ b ⊔ d :=
  sup_le (le_trans h₁ le_sup_left) (le_trans h₂ le_sup_right)

end Lattice

/-- A distributive lattice: meets distribute over joins. -/
class DistribLattice (α : Type u) extends Lattice α where
  protected le_sup_inf : ∀ x y z : α, (x ⊔ y) ⊓ (x ⊔ z) ≤ x ⊔ y ⊓ z

/-- The meet distributes over the join from the left. -/
theorem inf_sup_left {α : Type u} [DistribLattice α] (a b c : α) :
    a ⊓ (b ⊔ c) = a ⊓ b ⊔ a ⊓ c := by
  sorry

/-- A map between partial orders is monotone if it preserves `≤`. -/
def Monotone {α : Type u} {β : Type v} [PartialOrder α] [PartialOrder β] (f : α → β) : Prop :=
  ∀ ⦃a b⦄, a ≤ b → f a ≤ f b

namespace Monotone

variable {α : Type u} {β : Type v} {γ : Type w} [PartialOrder α] [PartialOrder β] [PartialOrder γ]

/-- The composition of monotone functions is monotone. -/
protected theorem comp {g : β → γ} {f : α → β} (hg : Monotone g) (hf : Monotone f) :
    Monotone (g ∘ f) :=
  fun _ _ h => hg (hf h)

theorem id : Monotone (fun x : α => x) := fun _ _ h => h

end Monotone

/-- A bundled monotone map from `α` to `β`. -/
structure OrderHom (α : Type u) (β : Type v) [PartialOrder α] [PartialOrder β] where
  /-- The underlying function. -/
  toFun : α → β
  /-- The function is monotone. -/
  monotone' : Monotone toFun

@[inherit_doc] infixr:25 " →o " => OrderHom

/-- A complete lattice: every set has a supremum `sSup` and an infimum `sInf`. -/
class CompleteLattice (α : Type u) extends Lattice α where
  sSup : Set α → α
  sInf : Set α → α
  le_sSup : ∀ s, ∀ a ∈ s, a ≤ sSup s
  sSup_le : ∀ s a, (∀ b ∈ s, b ≤ a) → sSup s ≤ a
  sInf_le : ∀ s, ∀ a ∈ s, sInf s ≤ a
  le_sInf : ∀ s a, (∀ b ∈ s, a ≤ b) → a ≤ sInf s

namespace OrderHom

variable {α : Type u} {β : Type v} [PartialOrder α] [PartialOrder β]

instance : CoeFun (α →o β) fun _ => α → β := ⟨OrderHom.toFun⟩

theorem monotone (f : α →o β) : Monotone f := f.monotone'

section Fixpoint

variable [CompleteLattice α] (f : α →o α)

open CompleteLattice in
/-- The least fixed point of a monotone map: the infimum of its pre-fixed points. -/
def lfp : α :=
  sInf {a | f a ≤ a}

/-- **Knaster–Tarski**: `lfp f` is a fixed point of the monotone map `f`. -/
theorem map_lfp : f (lfp f) = lfp f := by
  have h : f (lfp f) ≤ lfp f :=
    CompleteLattice.le_sInf _ _ fun b hb => le_trans (f.monotone (CompleteLattice.sInf_le _ b hb)) hb
  exact le_antisymm h (CompleteLattice.sInf_le _ _ (f.monotone h))

/-- `lfp f` lies below every pre-fixed point. -/
theorem lfp_le {a : α} (h : f a ≤ a) : lfp f ≤ a :=
  CompleteLattice.sInf_le _ a h

end Fixpoint

end OrderHom

end MiniMath
