"""`@[to_dual]` and `@[to_additive]` twins are stated as the twin, not with their source's text (lean/twins.py)."""

from __future__ import annotations

from pathlib import Path

from mathindex.formal.telescope import TelescopeBuilder
from mathindex.lean import extract_lean_tree
from mathindex.lean.twins import twin_statement

def dual_statement(text: str, explicit: dict[str, str] | None = None) -> str | None:
    return twin_statement("to_dual", text, explicit)


def additive_statement(text: str, explicit: dict[str, str] | None = None) -> str | None:
    return twin_statement("to_additive", text, explicit)


LIB = """\
variable {α : Type*}

section
variable [SemilatticeSup α]

/-- the join is an upper bound -/
@[to_dual]
theorem le_sup_left_thing (a b : α) : a ≤ a ⊔ b := sorry
end

@[to_dual min_le_min_thing]
theorem max_le_max_thing [LinearOrder α] {a b c d : α} : a ≤ c → b ≤ d → max a b ≤ max c d := sorry

@[to_dual]
theorem Ico_sub_thing [Preorder α] {a b : α} (h : a < b) : Set.Ico a b ⊆ Set.Ici a := sorry

@[to_dual]
theorem epi_thing {C : Type*} {X Y : C} (f : X ⟶ Y) : f = f := rfl

@[to_additive]
theorem Finset.prod_comm_thing {M : Type*} [CommMonoid M] (s : Finset ι) (f : ι → M) :
    (∏ x ∈ s, f x) * 1 = ∏ x ∈ s, f x := sorry

@[to_additive]
theorem Finset.prod_swap_thing {M : Type*} [CommMonoid M] (s : Finset ι) (f g : ι → M) :
    ∏ x ∈ s, f x * g x = (∏ x ∈ s, f x) * ∏ x ∈ s, g x := sorry
"""


def test_order_symbols_names_and_intervals_translate() -> None:
    assert dual_statement("(a b : α) : a ≤ max a b") == "(a b : α) : a ≥ min a b"
    assert dual_statement(": a ⊔ b = a ↔ b ≤ a") == ": a ⊓ b = a ↔ b ≥ a"
    assert dual_statement("(hs : BddAbove s) : IsLUB s (sSup s)") == "(hs : BddBelow s) : IsGLB s (sInf s)"
    assert dual_statement(": s.sup f ∈ upperBounds (f '' s)") == ": s.inf f ∈ lowerBounds (f '' s)"
    assert dual_statement(": ⨆ i, f i = ⊤") == ": ⨅ i, f i = ⊥"
    # a two-argument interval swaps its arguments: Ico a b in the dual order is Ioc b a
    assert dual_statement("(h : a < b) : Set.Ico a (succ b) ⊆ Ioi a") == "(h : a > b) : Set.Ioc (pred b) a ⊆ Iio a"
    # ASCII operators that only look like orders, keywords and one-letter variables stay; a bound
    # name made of a dual word translates where it is bound and where it is used alike
    assert dual_statement(": (fun x => x) <| a = a") == ": (fun x => x) <| a = a"
    assert dual_statement("{top : α} (h : x ≤ top) : True") == "{bot : α} (h : x ≥ bot) : True"
    # the explicit name a `@[to_dual foo]` gives wins over the guess
    assert dual_statement(": lt_min_iff = x", {"lt_min_iff": "max_lt_iff"}) == ": max_lt_iff = x"
    assert dual_statement("") == ""


def test_additive_symbols_and_names_translate() -> None:
    assert additive_statement("{M : Type*} [Monoid M] (a b : M) : a * b = b * a") == \
        "{M : Type*} [AddMonoid M] (a b : M) : a + b = b + a"
    assert additive_statement("(f : G →* H) : (Subgroup.map f K).comap f = K") == \
        "(f : G →+ H) : (AddSubgroup.map f K).comap f = K"
    assert additive_statement(": ∏ i ∈ s, f i = Finset.prod s f") == ": ∑ i ∈ s, f i = Finset.sum s f"
    assert additive_statement("(h : IsUnit a) : Commute a b") == "(h : IsAddUnit a) : AddCommute a b"
    assert additive_statement("(x : M) : mul_one x = x", {"mul_one": "add_zero"}) == "(x : M) : add_zero x = x"
    # where a token does not say what it becomes, the rule refuses: one, powers, inverses, division
    for text in (": a * 1 = a", ": a ^ n * a = a ^ (n + 1)", ": a⁻¹ * a = e", ": a / b = c", ": n • a = b"):
        assert additive_statement(text) is None, text
    assert additive_statement("(h : 1 < n) : True") is None  # a natural number's 1 cannot be told apart
    assert additive_statement("(v : Fin 2 → M) (h : x.1 = y) : v = v") is not None  # `.1` is a projection


def test_what_the_token_rule_cannot_state_is_refused() -> None:
    assert dual_statement("(f : X ⟶ Y) [Mono f] : f ≫ g = h") is None  # arrows reverse
    assert dual_statement(": toDual a ≤ toDual b ↔ b ≤ a") is None
    assert dual_statement("(s : Set αᵒᵈ) : True") is None
    assert dual_statement(": Ico a (b + 1 : ℕ) - c = Ico a b") is not None
    assert dual_statement(": Ico a <| b") is None  # an interval applied in a form it cannot swap


def test_extracted_twins_state_the_dual(tmp_path: Path) -> None:
    (tmp_path / "Lib").mkdir()
    (tmp_path / "Lib" / "Dual.lean").write_text(LIB, encoding="utf-8")
    run = extract_lean_tree(tmp_path, "t")
    decls = {r["full_name"]: r for r in run.declarations.to_pylist()}
    deps: dict[str, set[str]] = {}
    for r in run.dependencies.to_pylist():
        deps.setdefault(r["full_name"], set()).add(r["target"])
    src, twin = decls["le_sup_left_thing"], decls["le_inf_left_thing"]
    assert src["signature"] == "(a b : α) : a ≤ a ⊔ b" and src["variables"] == "{α : Type*} [SemilatticeSup α]"
    assert twin["origin"] == "to_dual"
    assert twin["signature"] == "(a b : α) : a ≥ a ⊓ b" and twin["type"] == "a ≥ a ⊓ b"
    assert twin["variables"] == "{α : Type*} [SemilatticeInf α]"
    assert decls["min_le_min_thing"]["type"] == "a ≥ c → b ≥ d → min a b ≥ min c d"
    assert decls["Ioc_sub_thing"]["type"] == "Set.Ioc b a ⊆ Set.Iic a"
    # the twin's statement names the dual constants (the formal channel's constants come from here)
    assert "max" in deps["max_le_max_thing"] and "min" in deps["min_le_min_thing"]
    assert "max" not in deps["min_le_min_thing"]
    assert {"Set.Ioc", "Set.Iic"} <= deps["Ioc_sub_thing"]
    # a category-theory dual keeps its source's text, as before
    assert decls["epi_thing"]["signature"] == decls["mono_thing"]["signature"]
    # an additive twin: stated additively where the rule can, its source's text where it cannot
    swap = decls["Finset.sum_swap_thing"]
    assert swap["origin"] == "to_additive" and swap["type"] == "∑ x ∈ s, f x + g x = (∑ x ∈ s, f x) + ∑ x ∈ s, g x"
    assert "[AddCommMonoid M]" in swap["signature"]
    assert "AddCommMonoid" in deps["Finset.sum_swap_thing"] and "CommMonoid" not in deps["Finset.sum_swap_thing"]
    assert decls["Finset.sum_comm_thing"]["type"] == decls["Finset.prod_comm_thing"]["type"]  # `* 1`: refused


def test_the_formal_channel_matches_the_dual_statement() -> None:
    """`?a ⊓ ?b ≤ ?a` is the dual twin's statement once `≥` reads as a reversed `≤`."""
    tele = TelescopeBuilder()
    twin = tele.of_declaration("(a b : α) : a ≥ a ⊓ b", "a ≥ a ⊓ b", "[SemilatticeInf α]")
    stated = tele.of_declaration("(a b : α) : a ⊓ b ≤ a", "a ⊓ b ≤ a", "[SemilatticeInf α]")
    assert twin is not None and stated is not None
    assert twin.conclusion == stated.conclusion


def test_bot_is_a_constant_in_lean_statements() -> None:
    """`⊥` in Lean is `Bot.bot`, a constant like `⊤` (not LaTeX's perp): `bot_le`, stated `a ≥ ⊥`
    in the dual, parses, and matches the query `⊥ ≤ _`."""
    tele = TelescopeBuilder()
    twin = tele.of_declaration(": a ≥ ⊥", "a ≥ ⊥", "")
    stated = tele.of_declaration(": ⊥ ≤ a", "⊥ ≤ a", "")
    assert twin is not None and stated is not None and twin.conclusion == stated.conclusion
    assert "⊥" in repr(twin.conclusion) and "perp" not in repr(twin.conclusion)
