"""Proof references: constants a declaration's proof or definition body names (`role == "proof"`)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.informal.informalise import RuleInformaliser, dependency_levels, informalise
from mathindex.lean import extract_lean_tree
from mathindex.lean.scanner import scan_file
from mathindex.schemas.lean import DEPENDENCIES


def proof_refs(src: str) -> dict[str, list[str]]:
    """Declaration name -> its raw proof references (as written), for one inline file."""
    decls, _, errors = scan_file(src, "t", "T", "T.lean")
    assert errors == []
    return {d["full_name"]: d.get("_proof_deps") for d in decls}


def extract(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        path = tmp_path / "lib" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return extract_lean_tree(tmp_path / "lib", "t")


def rows(deps: pa.Table, name: str) -> dict[str, tuple[str, bool]]:
    return {r["target"]: (r["role"], r["resolved"]) for r in deps.to_pylist() if r["full_name"] == name}


def test_term_body() -> None:
    refs = proof_refs("theorem t (a b : Nat) : a + b = b + a :=\n  (add_comm a b).trans (Eq.refl _)\n")
    assert refs["t"] == ["add_comm", "Eq.refl"]


def test_tactic_block() -> None:
    refs = proof_refs(
        "theorem t (a b : Nat) (h : a ≤ b) : a ≤ b := by\n"
        "  rw [foo, ← bar, Nat.baz_eq]\n"
        "  simp +contextual [baz, -erased] at h ⊢\n"
        "  apply le_of_thing\n"
        "  exact qux _\n"
    )
    assert refs["t"] == ["foo", "bar", "Nat.baz_eq", "baz", "le_of_thing", "qux"]


def test_local_names_are_not_references() -> None:
    refs = proof_refs(
        "theorem t (s : Set Nat) : ∀ n ∈ s, P n := by\n"
        "  intro n hn\n"
        "  obtain ⟨witness, hwit⟩ := exists_bound s\n"
        "  have key : Q n := helper n hn\n"
        "  rcases split_lemma key with ⟨left_part, rfl⟩ | other\n"
        "  induction n with\n"
        "  | zero => exact base\n"
        "  | succ m ih => exact step (fun elem => witness elem) left_part other hwit.le\n"
    )
    assert refs["t"] == ["exists_bound", "helper", "split_lemma", "base", "step"]


def test_structure_fields_and_named_arguments_are_not_references() -> None:
    refs = proof_refs(
        "def e : Foo where\n"
        "  toFun value := convertValue value\n"
        "  map_zero' := by simp (config := {}) [map_thing]\n"
        "structure S where\n"
        "  carrier : Set Nat\n"
        "  closed (first second : Nat) : Rel first second\n"
    )
    assert refs["e"] == ["convertValue", "map_thing"]
    assert refs["S"] == ["Set", "Nat", "Rel"]


def test_dotted_names_on_binders_and_constants() -> None:
    refs = proof_refs(
        "theorem t (f : A → B) (hf : Continuous f) (hab : a ≤ b) : Continuous f :=\n"
        "  hf.comp continuous_id |>.congr hab.le le_antisymm_iff.mp\n"
    )
    # `hf.comp` on `hf : Continuous f` is `Continuous.comp`; `hab.le` has a local head
    assert refs["t"] == ["Continuous.comp", "continuous_id", "le_antisymm_iff.mp"]


def test_roles_resolution_and_one_row_per_target(tmp_path: Path) -> None:
    ex = extract(tmp_path, {
        "A/Base.lean": (
            "namespace Alg\ntheorem helper : True := trivial\ndef Obj : Type := Nat\nend Alg\n"
            "namespace Other\ntheorem opened_lemma : True := trivial\ntheorem iff_lemma : True ↔ True := Iff.rfl\n"
            "end Other\n"
        ),
        "A/Use.lean": (
            "open Other\nnamespace Alg\n"
            "theorem main (x : Obj) : True := by\n"
            "  have := helper\n"
            "  exact opened_lemma.trans (iff_lemma.mp helper) Obj\n"
            "end Alg\n"
        ),
    })
    assert ex.dependencies.schema == DEPENDENCIES
    got = rows(ex.dependencies, "Alg.main")
    assert got == {
        "True": ("statement", False),  # not a corpus name: kept as written
        "Alg.Obj": ("statement", True),  # in the signature and the body: one statement row
        "Alg.helper": ("proof", True),  # through the namespace
        "Other.opened_lemma": ("proof", True),  # through `open`; `.trans` falls back to the constant
        "Other.iff_lemma": ("proof", True),
    }
    keys = [(r["corpus"], r["full_name"], r["target"]) for r in ex.dependencies.to_pylist()]
    assert len(keys) == len(set(keys))


def test_informalisation_order_ignores_proof_references(tmp_path: Path) -> None:
    ex = extract(tmp_path, {"B/Cyc.lean": (
        "def base : Nat := 0\n"
        "theorem first_fact : base = base := second_fact.symm\n"
        "theorem second_fact : base = base := first_fact\n"
        "theorem third (h : first_fact = first_fact) : True := by exact second_fact ▸ trivial\n"
    )})
    deps = ex.dependencies
    assert set(deps["role"].to_pylist()) == {"statement", "proof"}
    statement_only = deps.filter(pc.equal(deps["role"], "statement"))
    names = ex.declarations["full_name"].to_pylist()
    assert dependency_levels(names, deps) == dependency_levels(names, statement_only)
    with_proofs = informalise(ex.declarations, RuleInformaliser(), None, dependencies=deps)
    without = informalise(ex.declarations, RuleInformaliser(), None, dependencies=statement_only)
    assert with_proofs.equals(without)


def test_references_resolve_to_generated_names_and_relative_opens(tmp_path: Path) -> None:
    ex = extract(tmp_path, {"C/Gen.lean": (
        "namespace Cat\nnamespace Category\ntheorem assoc_law : True := trivial\nend Category\nend Cat\n"
        "@[to_additive]\ntheorem mul_thing : True := trivial\n"
        "namespace Cat\nopen Category\n"
        "theorem user : True := by\n  exact add_thing.trans (assoc_law.symm ▸ trivial)\nend Cat\n"
    )})
    assert rows(ex.dependencies, "Cat.user") == {
        "True": ("statement", False),
        "add_thing": ("proof", True),  # the @[to_additive] twin of mul_thing
        "Cat.Category.assoc_law": ("proof", True),  # `open Category` inside `namespace Cat`
        "trivial": ("proof", False),  # Lean core's, not the corpus's
    }


def test_a_protected_name_needs_its_namespace(tmp_path: Path) -> None:
    ex = extract(tmp_path, {"D/Prot.lean": (
        "theorem zero_mul : True := trivial\n"
        "namespace Mat\nprotected theorem zero_mul : True := trivial\n"
        "theorem uses_root : True := zero_mul\n"
        "theorem uses_own : True := Mat.zero_mul\nend Mat\n"
    )})
    assert rows(ex.dependencies, "Mat.uses_root")["zero_mul"] == ("proof", True)
    assert rows(ex.dependencies, "Mat.uses_own")["Mat.zero_mul"] == ("proof", True)


def test_a_dotted_declaration_name_opens_its_namespace(tmp_path: Path) -> None:
    ex = extract(tmp_path, {"E/Dot.lean": (
        "namespace Geo\nnamespace Scheme\ntheorem homOfLE_x : True := trivial\nend Scheme\n"
        "theorem Scheme.Hom.uses : True := homOfLE_x\nend Geo\n"
    )})
    assert rows(ex.dependencies, "Geo.Scheme.Hom.uses")["Geo.Scheme.homOfLE_x"] == ("proof", True)
