/-
Copyright (c) 2026 The mathindex authors. All rights reserved.
Released under the license of the mathindex project, see `data/sample/README.md`.
Authors: The mathindex authors
-/
import MiniMath.Order.Lattice

/-!
# Topological spaces

A topology on `X` is a collection of *open* sets containing `univ`, closed under finite
intersections and arbitrary unions. We develop closed sets, closure, continuous maps, compact
sets and Hausdorff spaces.

## Main definitions

* `MiniMath.TopologicalSpace X`: the class of topologies on `X`.
* `MiniMath.IsOpen`, `MiniMath.IsClosed`, `MiniMath.closure`.
* `MiniMath.Continuous f`: preimages of open sets are open.
* `MiniMath.IsCompact s`: every open cover of `s` has a finite subcover.
* `MiniMath.T2Space X`: distinct points have disjoint open neighbourhoods.

## Main results

* `MiniMath.continuous_def`, `MiniMath.continuous_iff_isClosed`.
* `MiniMath.IsCompact.image`: the continuous image of a compact set is compact.
* `MiniMath.IsCompact.isClosed`: a compact subset of a Hausdorff space is closed.
-/

open Set

universe u v w

namespace MiniMath

/-- A topology on `X`: a predicate `IsOpen` on sets, stable under finite intersections and
arbitrary unions, and holding for the whole space. -/
class TopologicalSpace (X : Type u) where
  /-- The open sets of the topology. -/
  protected IsOpen : Set X → Prop
  protected isOpen_univ : IsOpen univ
  protected isOpen_inter : ∀ s t, IsOpen s → IsOpen t → IsOpen (s ∩ t)
  protected isOpen_sUnion : ∀ S : Set (Set X), (∀ t ∈ S, IsOpen t) → IsOpen (⋃₀ S)

variable {X : Type u} {Y : Type v} {Z : Type w}

section Open

variable [TopologicalSpace X] {s t : Set X}

/-- `IsOpen s` means that `s` is open in the ambient topology on `X`. -/
def IsOpen (s : Set X) : Prop :=
  TopologicalSpace.IsOpen s

@[simp]
theorem isOpen_univ : IsOpen (univ : Set X) := TopologicalSpace.isOpen_univ

/-- The intersection of two open sets is open. -/
theorem IsOpen.inter (hs : IsOpen s) (ht : IsOpen t) : IsOpen (s ∩ t) :=
  TopologicalSpace.isOpen_inter s t hs ht

theorem isOpen_sUnion {S : Set (Set X)} (h : ∀ t ∈ S, IsOpen t) : IsOpen (⋃₀ S) :=
  TopologicalSpace.isOpen_sUnion S h

/-- An arbitrary union of open sets is open. -/
theorem isOpen_iUnion {ι : Sort*} {f : ι → Set X} (h : ∀ i, IsOpen (f i)) : IsOpen (⋃ i, f i) :=
  isOpen_sUnion (by rintro _ ⟨i, rfl⟩; exact h i)

@[simp]
theorem isOpen_empty : IsOpen (∅ : Set X) := by
  rw [← sUnion_empty]; exact isOpen_sUnion fun _ h => h.elim

/-- A set is closed if its complement is open. -/
def IsClosed (s : Set X) : Prop :=
  IsOpen sᶜ

@[simp]
theorem isOpen_compl_iff : IsOpen sᶜ ↔ IsClosed s := Iff.rfl

/-- The union of two closed sets is closed. -/
theorem IsClosed.union (hs : IsClosed s) (ht : IsClosed t) : IsClosed (s ∪ t) := by
  rw [IsClosed, compl_union]; exact hs.inter ht

/-- The closure of `s`: the intersection of all closed sets containing `s`. -/
def closure (s : Set X) : Set X :=
  ⋂₀ {t | IsClosed t ∧ s ⊆ t}

/-- Every set is contained in its closure. -/
lemma subset_closure : s ⊆ closure s :=
  subset_sInter fun _ h => h.2

/-- The closure of a set is closed. -/
theorem isClosed_closure : IsClosed (closure s) := by
  sorry

/-- A closed set is its own closure. -/
theorem IsClosed.closure_eq (hs : IsClosed s) : closure s = s :=
  Subset.antisymm (sInter_subset_of_mem ⟨hs, Subset.rfl⟩) subset_closure

end Open

/-- A function between topological spaces is continuous if the preimage of every open set is
open. -/
structure Continuous [TopologicalSpace X] [TopologicalSpace Y] (f : X → Y) : Prop where
  /-- The preimage of an open set under a continuous map is open. -/
  isOpen_preimage : ∀ s, IsOpen s → IsOpen (f ⁻¹' s)

section Continuous

variable [TopologicalSpace X] [TopologicalSpace Y] [TopologicalSpace Z] {f : X → Y} {g : Y → Z}

theorem continuous_def : Continuous f ↔ ∀ s, IsOpen s → IsOpen (f ⁻¹' s) :=
  ⟨fun hf => hf.1, fun h => ⟨h⟩⟩

/-- The identity map is continuous. -/
@[continuity]
theorem continuous_id : Continuous (id : X → X) :=
  ⟨fun _ h => h⟩

/-- A constant map is continuous. -/
@[continuity]
theorem continuous_const {y : Y} : Continuous fun _ : X => y := by
  sorry

/-- The composition of two continuous maps is continuous. -/
@[continuity]
theorem Continuous.comp (hg : Continuous g) (hf : Continuous f) : Continuous (g ∘ f) :=
  ⟨fun s h => hf.isOpen_preimage _ (hg.isOpen_preimage s h)⟩

/-- A map is continuous iff preimages of closed sets are closed. -/
theorem continuous_iff_isClosed : Continuous f ↔ ∀ s, IsClosed s → IsClosed (f ⁻¹' s) := by
  sorry

/-- Continuous maps send the closure of a set into the closure of its image. -/
theorem image_closure_subset_closure_image (hf : Continuous f) {s : Set X} :
    f '' closure s ⊆ closure (f '' s) := by
  sorry

end Continuous

/-- A set is compact if every cover of it by open sets has a finite subcover. -/
def IsCompact [TopologicalSpace X] (s : Set X) : Prop :=
  ∀ {ι : Type u} (U : ι → Set X), (∀ i, IsOpen (U i)) → s ⊆ ⋃ i, U i →
    ∃ t : Finset ι, s ⊆ ⋃ i ∈ t, U i

/-- A Hausdorff (T₂) space: any two distinct points have disjoint open neighbourhoods. -/
class T2Space (X : Type u) [TopologicalSpace X] : Prop where
  t2 : ∀ x y : X, x ≠ y → ∃ u v : Set X, IsOpen u ∧ IsOpen v ∧ x ∈ u ∧ y ∈ v ∧ Disjoint u v

section Compact

variable [TopologicalSpace X] [TopologicalSpace Y] {s : Set X} {f : X → Y}

/-- The empty set is compact. -/
@[simp]
theorem isCompact_empty : IsCompact (∅ : Set X) :=
  fun _ _ _ => ⟨∅, by simp⟩

/-- The image of a compact set under a continuous map is compact. -/
@[stacks MT07]
theorem IsCompact.image (hs : IsCompact s) (hf : Continuous f) : IsCompact (f '' s) := by
  sorry

/-- In a Hausdorff space, every compact set is closed. -/
@[stacks MT08]
theorem IsCompact.isClosed [T2Space X] (hs : IsCompact s) : IsClosed s := by
  sorry

/-- A closed subset of a compact set is compact. -/
theorem IsCompact.of_isClosed_subset {t : Set X} (hs : IsCompact s) (ht : IsClosed t)
    (h : t ⊆ s) : IsCompact t := by
  sorry

end Compact

/-- The discrete topology on `X`, in which every set is open. -/
def TopologicalSpace.discrete (X : Type u) : TopologicalSpace X where
  IsOpen _ := True
  isOpen_univ := trivial
  isOpen_inter _ _ _ _ := trivial
  isOpen_sUnion _ _ := trivial

/-- In the discrete topology, every map to another space is continuous. -/
theorem continuous_of_discrete [TopologicalSpace Y] (f : X → Y) :
    @Continuous X Y (TopologicalSpace.discrete X) _ f :=
  @Continuous.mk X Y (TopologicalSpace.discrete X) _ f fun _ _ => trivial

/-- The Sierpiński topology on `Prop`: the open sets are `∅`, `{True}` and `univ`. -/
instance instTopologicalSpaceProp : TopologicalSpace Prop where
  IsOpen s := s False → s = univ
  isOpen_univ _ := rfl
  isOpen_inter := by sorry
  isOpen_sUnion := by sorry

end MiniMath
