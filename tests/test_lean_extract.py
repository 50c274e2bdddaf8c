"""Lean extraction on the project's own fixture library (tests/fixtures/lean) and on inline text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mathindex.lean import LeanExtraction, extract_lean_tree
from mathindex.lean.shards import extract_file, module_name
from mathindex.lean.instances import Lookup, instance_name
from mathindex.lean.names import additive_name, dual_name, split_case
from mathindex.schemas.common import ERRORS
from mathindex.schemas.lean import DECLARATIONS, DEPENDENCIES

FIXTURES = Path(__file__).parent / "fixtures" / "lean"


@pytest.fixture(scope="module")
def fixture_run() -> LeanExtraction:
    return extract_lean_tree(FIXTURES, "demo")


@pytest.fixture(scope="module")
def by_name(fixture_run: LeanExtraction) -> dict[str, dict]:
    return {r["full_name"]: r for r in fixture_run.declarations.to_pylist()}


def test_tables_follow_their_schemas(fixture_run: LeanExtraction) -> None:
    assert fixture_run.declarations.schema == DECLARATIONS
    assert fixture_run.dependencies.schema == DEPENDENCIES
    assert fixture_run.errors.schema == ERRORS
    assert fixture_run.errors.num_rows == 0
    assert fixture_run.declarations.num_rows == 75


def test_module_names_and_files(by_name: dict[str, dict]) -> None:
    assert module_name("Mathlib/Order/Lattice.lean") == "Mathlib.Order.Lattice"
    row = by_name["Demo.helper"]
    assert (row["module"], row["file"], row["line_start"]) == ("Demo.Prelude", "Demo/Prelude.lean", 2)


def test_qualified_names(by_name: dict[str, dict]) -> None:
    for name in [
        "Demo.Order.le_refl'", "Demo.Order.«weird name»", "rootLevel", "A.B.deep", "A.half",
        "Demo.Order.Box.left_eq", "Demo.Order.secretValue", "Demo.Order.f",
    ]:
        assert name in by_name, name
    assert not any("fake_in_doc" in n or "not_real" in n or "inside_string" in n for n in by_name)
    assert by_name["Demo.Order.secretValue"]["is_private"] is True
    assert by_name["Demo.Order.Box.left_eq"]["is_protected"] is True


def test_kinds_signature_type_docstring(by_name: dict[str, dict]) -> None:
    row = by_name["Demo.Order.le_refl'"]
    assert row["kind"] == "theorem" and row["origin"] == "source"
    assert row["signature"] == ": a ≤ a" and row["type"] == "a ≤ a"
    assert row["docstring"] == "uses a and b"
    assert row["attributes"] == ["simp"]
    assert (row["line_start"], row["line_end"]) == (43, 44)
    assert by_name["Demo.Order.f"]["signature"] == ": Nat → Nat"  # stops at the `|` arms
    assert by_name["inline_match"]["type"] == "(∃ x, p x) → True"  # an inline `| _ =>` arm
    assert by_name["abs_stays"]["type"] == "|a| = |a| ∨ (fun x => x) a = a"  # |x| is not an arm
    assert by_name["Demo.Order.only_lattice"]["kind"] == "lemma"
    assert by_name["Demo.Order.constantValue"]["kind"] == "irreducible_def"
    assert by_name["Demo.Order.Joinish"]["kind"] == "class"


def test_variables_in_scope(by_name: dict[str, dict]) -> None:
    assert by_name["Demo.Order.le_refl'"]["variables"] == "{α : Type u} [PartialOrder α] (a : α)"
    assert by_name["Demo.Order.uses_b"]["variables"] == "{α : Type u} [PartialOrder α] (a b : α)"
    assert by_name["Demo.Order.only_lattice"]["variables"] == "{β : Type*} [Lattice β]"
    assert by_name["Demo.Order.with_include"]["variables"] == "{α : Type u} [PartialOrder α] (c : α)"
    assert by_name["Demo.Order.without_include"]["variables"] == ""
    assert by_name["Demo.Order.omitted"]["variables"] == "{α : Type u}"
    assert by_name["Demo.Order.explicit_alpha"]["variables"] == "(α : Type u) [PartialOrder α]"
    assert by_name["Demo.Order.implicit_a"]["variables"] == "{α : Type u} [PartialOrder α] {a : α}"
    assert by_name["Demo.Order.back_to_explicit"]["variables"] == "{α : Type u} [PartialOrder α] (a : α)"
    assert by_name["A.B.deep"]["variables"] == ""  # section variables end with their namespace


def test_fields_constructors_parents(by_name: dict[str, dict]) -> None:
    for name, origin in [
        ("Demo.Order.Box.left", "field"), ("Demo.Order.Box.right", "field"),
        ("Demo.Order.Box.top", "field"), ("Demo.Order.Box.hidden", "field"),
        ("Demo.Order.Box.toInhabited", "parent_projection"), ("Demo.Order.Box.mk'", "constructor"),
        ("Demo.Order.Joinish.join", "field"), ("Demo.Order.Joinish.mk", "constructor"),
        ("Demo.Order.Joinish.join_self", "field"),
        ("Demo.Order.Shape.circle", "constructor"), ("Demo.Order.Shape.line", "constructor"),
    ]:
        assert by_name[name]["origin"] == origin, name
    assert by_name["Mixin.mk'"]["origin"] == "constructor"  # `mk' ::` at column 0
    assert by_name["Mixin.mk"]["kind"] == "theorem"
    assert by_name["Rel.base"]["is_protected"] is True and by_name["Rel.step"]["origin"] == "constructor"
    assert by_name["Demo.Order.Box.left"]["docstring"] == "the left part"
    assert by_name["Demo.Order.Box.hidden"]["signature"] == ": γ"
    assert by_name["Demo.Order.Box.hidden"]["is_protected"] is True
    box = by_name["Demo.Order.Box"]
    assert by_name["Demo.Order.Box.left"]["statement_group"] == box["statement_group"]


def test_generated_names(by_name: dict[str, dict]) -> None:
    assert by_name["Demo.Order.instInhabitedShape"]["origin"] == "instance_name"
    assert by_name["Demo.Order.instNamed"]["origin"] == "source"
    assert by_name["Demo.Order.instDecidableEqShape"]["origin"] == "deriving"
    assert by_name["Demo.Order.instReprShape"]["kind"] == "instance"
    twin = by_name["Demo.Order.add_zero_thing"]
    assert twin["origin"] == "to_additive" and twin["docstring"] == "additive doc"
    assert by_name["Demo.Order.add_explicit"]["origin"] == "to_additive"
    assert by_name["Demo.Order.le_bot_thing"]["origin"] == "to_dual"
    assert by_name["Demo.Order.comp_thing_assoc"]["origin"] == "reassoc"
    assert by_name["natEquiv_apply"]["origin"] == "simps" and "natEquiv_symm_apply" in by_name
    assert by_name["Pair.ext"]["origin"] == by_name["Pair.ext_iff"]["origin"] == "ext"
    assert by_name["Pair.ext'_iff"]["origin"] == "ext"  # Lean appends _iff to the last component
    assert by_name["add_comp_thing_assoc"]["origin"] == "reassoc"  # (attr := reassoc) reaches the twin
    assert by_name["mul_comp_thing_assoc"]["origin"] == "reassoc"
    assert by_name["Demo.Order.alias_mp"]["kind"] == "alias"
    assert by_name["Demo.Order.constantValue_def"]["origin"] == "irreducible_def"


def test_ids_are_sha_derived_and_unique(fixture_run: LeanExtraction) -> None:
    ids = fixture_run.declarations["decl_id"].to_pylist()
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    again = extract_lean_tree(FIXTURES, "demo")
    assert again.declarations.equals(fixture_run.declarations)


def test_dependencies(fixture_run: LeanExtraction) -> None:
    deps = {(d["full_name"], d["target"]): d["resolved"] for d in fixture_run.dependencies.to_pylist()}
    assert deps[("Demo.Order.Box.left_eq", "Demo.Order.Box")] is True
    assert deps[("Demo.Order.mul_one_thing", "Nat")] is False
    assert deps[("Demo.Order.Box.left_eq", "Demo.Order.Box.left")] is True  # x.left with x : Box α
    assert not any(t in ("x", "a", "h") for _, t in deps)


def test_cache_reuses_and_notices_changes(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "P").mkdir(parents=True)
    (root / "P" / "A.lean").write_text("theorem a_one : True := trivial\n")
    (root / "P" / "B.lean").write_text("def b_two : Nat := 2\n")
    cache = tmp_path / "cache"
    first = extract_lean_tree(root, "c", cache)
    t0 = time.perf_counter()
    second = extract_lean_tree(root, "c", cache)
    assert time.perf_counter() - t0 < 5
    assert second.declarations.equals(first.declarations)
    (root / "P" / "B.lean").write_text("def b_three : Nat := 3\n")
    third = extract_lean_tree(root, "c", cache)
    assert sorted(third.declarations["full_name"].to_pylist()) == ["a_one", "b_three"]


def test_guess_names() -> None:
    assert split_case("InvHMulLEConjugate₂SMul_ne_top") == [
        "Inv", "HMul", "LE", "Conjugate₂", "SMul", "_", "ne", "_", "top"]
    assert additive_name("mul_one") == "add_zero"
    assert additive_name("prod_pow") == "sum_nsmul"
    assert additive_name("Monoid") == "AddMonoid"
    assert additive_name("mulSupport_one") == "support_zero"
    assert additive_name("one_le_two") == "nonneg_two"
    assert additive_name("mul_inv_cancel'") == "add_neg_cancel'"
    assert dual_name("le_sup_left") == "le_inf_left"
    assert dual_name("Ioi_subset") == "Iio_subset"


def test_instance_name_rule() -> None:
    mods = {"SimpleGraph": "Lib.Graph", "Fintype": "Lib.Fintype", "ENNReal": "Lib.ENNReal",
            "CommSemiring": "Lib.Ring", "Module": "Lib.Module"}
    look = Lookup(mods.__contains__, mods.get, lambda n: n == "Module")

    def name(ns: str, binders: list, typ: str, module: str = "Lib.Here") -> str:
        return instance_name({"ns": ns, "opens": [], "binders": binders, "type": typ}, module, look)

    assert name("", [["{", ["V"], "Type*"], ["[", [], "DecidableEq V"]], "Fintype (SimpleGraph V)") == \
        "instFintypeSimpleGraphOfDecidableEq"
    assert name("ENNReal", [], "CommSemiring ℝ≥0∞") == "instCommSemiring"
    assert name("", [["[", [], "Fintype α"]], "Fintype (Option α)") == "instFintypeOption"
    assert name("", [], "Inhabited Nat") == "instInhabitedNat_lib"  # nothing from this project
    assert name("", [["[", [], "Semiring R"]], "Module R R") == "instModule"  # binder used by Module
    assert name("", [], "CoeFun (α → β) fun _ => Prop") == "instCoeFunForallProp_lib"
    assert name("", [], "(fromSkeleton C).Full") == "instFullFromSkeleton_lib"  # (e).F visits F first
    assert name("", [], "IsIso (Sigma.ι f b)") == "instIsIsoι_lib"  # capitalisation is ASCII only


def test_extract_file_never_raises_on_bad_bytes() -> None:
    rows, errs = extract_file(b"theorem ok : True := trivial\n\xff\xfe bad\n", "c", "X.lean")
    assert [r["full_name"] for r in rows] == ["ok"]
    assert errs[0]["line"] == 2 and "UTF-8" in errs[0]["reason"]


def test_process_pool_gives_the_same_tables(monkeypatch: pytest.MonkeyPatch, fixture_run: LeanExtraction) -> None:
    import mathindex.lean.shards as shards

    monkeypatch.setattr(shards, "SPREAD_MIN_BYTES", 1)  # two files -> two shards -> the 2-process pool
    pooled = extract_lean_tree(FIXTURES, "demo")
    assert pooled.declarations.equals(fixture_run.declarations)
    assert pooled.dependencies.equals(fixture_run.dependencies)


def test_binder_syntax_is_shared_with_the_embedding_rules() -> None:
    from mathindex.informal import rules
    from mathindex.lean.binders import groups, parse_binders, split_colon

    assert split_colon("(a : T) (h : x :: l = y) : P := q") == ("(a : T) (h : x :: l = y) ", True, " P := q")
    assert split_colon("a :: l") == ("a :: l", False, "")
    assert [(g.bracket, g.inner) for g in groups("(a b : ℕ) {x} [Group G] ⦃y : T⦄ ⟨p, q⟩")] == [
        ("(", "a b : ℕ"), ("{", "x"), ("[", "Group G"), ("⦃", "y : T")]
    assert rules.parse_binders("(a b : ℕ) {x} [Group G]") == [("(", ["a", "b"], "ℕ"), ("{", [], "x"), ("[", [], "Group G")]
    binders, end = parse_binders("(a b : ℕ) {x} [inst : Group G] : P")
    assert [(b.bracket, b.names, b.type) for b in binders] == [
        ("(", ("a", "b"), "ℕ"), ("{", ("x",), ""), ("[", ("inst",), "Group G")]


def test_multi_line_fields_and_constructors_keep_their_whole_statement() -> None:
    """A field or constructor whose type runs over several lines is stated whole (its continuation
    lines are indented deeper), up to a default value or proof (`:= by ...`); the next member at the
    same indent starts a new row."""
    src = b"""namespace P
structure PM where
  /-- objects -/
  obj (X : Nat) : Nat
  map_id (X : Nat) :
    obj (X + 0) =
      obj X := by
        simp
  other : True := trivial

inductive T : Type
| a (n : Nat)
    (m : Nat) : T
| b : T

end P
"""
    rows, errs = extract_file(src, "c", "X.lean")
    got = {r["full_name"]: (r["signature"], r["line_start"], r["line_end"]) for r in rows}
    assert errs == []
    assert got["P.PM.map_id"] == ("(X : Nat) : obj (X + 0) = obj X", 5, 8)
    assert got["P.PM.obj"] == ("(X : Nat) : Nat", 4, 4)
    assert got["P.PM.other"] == (": True", 9, 9)
    assert got["P.T.a"] == ("a (n : Nat) (m : Nat) : T", 12, 13)
    assert got["P.T.b"] == ("b : T", 14, 14)
    rows, _ = extract_file(b"structure W (p : Nat) (V : Type) where\n  toLp (p) ::\n  ofLp : V\n", "c", "W.lean")
    kinds = {r["full_name"]: r["kind"] for r in rows}
    assert kinds["W.toLp"] == "constructor" and kinds["W.ofLp"] == "field"  # a constructor's binder update
