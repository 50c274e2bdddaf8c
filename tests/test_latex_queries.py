"""LaTeX-style queries: the lexical channel sees their math as the Unicode Mathlib prints
(search/latexquery.py), and the parent channel lifts a declaration whose members are found
(search/parents.py). Corpora are a few statements written here."""

from __future__ import annotations

from mathindex.search.engine import SearchEngine
from mathindex.search.kinds import lexical_text
from mathindex.search.latexquery import english_math, math_pieces, unicode_math
from mathindex.search.lexical import LexicalChannel, LexicalIndex, build_lexical_index
from mathindex.search.parents import parent_hits, parent_of

STATEMENTS = {
    "omegaLimit_union": "theorem omegaLimit_union : ω f ϕ (s₁ ∪ s₂) = ω f ϕ s₁ ∪ ω f ϕ s₂",
    "Finset.card_union_two": "theorem Finset.card_union_two : (s ∪ t).card ≤ s.card + 1 + 2 + ω",
    "Sylow.nonempty": "instance Sylow.nonempty : Nonempty (Sylow p G)",
    "Module.rank_docs": "the $\\mathrm{rank}$ of a module is written $\\mathrm{rank}(M)$",
    "Real.sqrt_eq": "theorem Real.sqrt_eq : Real.sqrt x = y ↔ y * y = x",
    "chart_source_mem_nhds": "theorem chart_source_mem_nhds : (chartAt H x).source ∈ 𝓝 x",
    "Set.mem_of": "theorem Set.mem_of : x ∈ N",
    "Nat.lt_N": "theorem Nat.lt_N : n < N",
}


def test_math_pieces_are_written_as_lean_prints_them():
    assert unicode_math(r"$\omega(s_1 \cup s_2) = \omega(s_{12})^{-1}$") == "ω(s₁ ∪ s₂) = ω(s₁₂)⁻¹"
    assert unicode_math(r"$\mathrm{Sylow}_p(G) \ne \emptyset$ for $G$ finite") == "Sylow_p(G) ≠ ∅ for G finite"
    assert unicode_math(r"$d : X \times X \to \mathbb{R}$, symmetric") == "d : X × X → ℝ, symmetric"
    assert unicode_math(r"$\left| \tfrac{x+y}{2} \right| \le \varphi(x)\,\mathrm{d}x$") == "| tfrac (x+y)/(2) | ≤ φ(x) dx"
    assert unicode_math(r"$\gcd(a, b) \mid a$") == "gcd (a, b) ∣ a"  # no symbol: the command's name
    assert unicode_math(r"\sum_i x_i") == "∑_i x_i"  # TeX without delimiters: the whole query
    assert unicode_math("two-sided inverse, no math") == "two-sided inverse, no math"
    assert math_pieces("prose $a$ and \\(b\\)") == [(6, 9, "a"), (14, 19, "b")]
    assert english_math(r"$s_1 \cup s_2 = \emptyset$") == "s₁ union s₂ equals the empty set"


def test_lexical_channel_meets_lean_subscripts_and_drops_font_commands(tmp_path):
    names = list(STATEMENTS)
    build_lexical_index(names, list(STATEMENTS.values()), tmp_path / "lexical")
    index = LexicalIndex(tmp_path / "lexical")
    union = r"$\omega(s_1 \cup s_2) = \omega(s_1) \cup \omega(s_2)$"
    assert index.search(union, 1)[0][0] == "Finset.card_union_two"  # as typed: s, 1, 2 match the wrong lemma
    assert index.search(lexical_text(union), 1)[0][0] == "omegaLimit_union"
    sylow = r"$\mathrm{Sylow}_p(G) \ne \emptyset$ for $\mathrm{rank}$"
    assert index.search(sylow, 1)[0][0] == "Module.rank_docs"  # `mathrm` is a word of the docstring
    assert index.search(lexical_text(sylow), 1)[0][0] == "Sylow.nonempty"

    engine = SearchEngine.__new__(SearchEngine)  # the channels alone, without a release around them
    engine.lexical = LexicalChannel(index)
    assert engine.channel_hits(union)["lexical"][0][0] == "omegaLimit_union"
    assert engine.channel_hits("`s_1 ∪ s_2`")["lexical"] == index.search("`s_1 ∪ s_2`", 200)  # Lean: as typed


def test_script_letters_meet_the_unicode_letters_lean_prints(tmp_path):
    assert unicode_math(r"$\mathcal{N}(x)$") == "N 𝒩 𝓝 (x)"  # script and bold script: both are Lean's
    assert unicode_math(r"$\mathfrak{m}$, $\mathscr{F}$") == "m 𝔪 𝖒, F 𝓕 ℱ"  # holes of the alphabet: letterlike
    assert unicode_math(r"$\mathcal{AB}$") == "AB"  # a name, not a letter
    assert unicode_math(r"$\mathcal{N}(x)$", script_letters=False) == "N(x)"
    names = list(STATEMENTS)
    build_lexical_index(names, list(STATEMENTS.values()), tmp_path / "lexical")
    index = LexicalIndex(tmp_path / "lexical")
    nhds = r"$x \in \mathcal{N}(x)$"
    assert index.search(unicode_math(nhds, script_letters=False), 1)[0][0] == "Set.mem_of"  # N alone
    assert index.search(lexical_text(nhds), 1)[0][0] == "chart_source_mem_nhds"


def test_parent_channel_lifts_the_structure_whose_fields_are_found():
    known = {"Encodable", "Encodable.encode", "Encodable.encodek", "Nat.succ", "Nat"}
    fields = {"Encodable.encode", "Encodable.encodek"}  # a field states what its structure is
    head = [("Encodable.encode", 0.5), ("Nat.succ", 0.4), ("Encodable.encodek", 0.25), ("Other.thing", 0.2)]
    assert parent_of("Encodable.encodek") == "Encodable" and parent_of("Nat") is None
    assert parent_hits(head, known, fields, others=0.0) == [("Encodable", 0.75)]  # `Other` is no declaration
    assert parent_hits(head, known, fields, others=0.5) == [("Encodable", 0.75), ("Nat", 0.2)]

    engine = SearchEngine.__new__(SearchEngine)
    engine.known, engine.fields, engine.prior, engine.unavailable = frozenset(known), frozenset(fields), {}, {}
    results = {"lexical": [("Encodable.encode", 3.0), ("Encodable.encodek", 2.9), ("Nat.succ", 2.8), ("Encodable", 1.0)],
               "embedding": [("Nat.succ", 0.9), ("Encodable.encode", 0.8), ("Encodable.encodek", 0.7)]}
    plain = {"lexical": 1.0, "embedding": 1.0}
    without = [h.name for h in engine.rank("q", results, [], 4, plain).hits]
    assert without.index("Encodable") == 3
    lifted = engine.rank("q", results, [], 4, {**plain, "parent": 1.0, "parent_depth": 3, "parent_others": 0.0})
    assert lifted.hits[0].name == "Encodable" and lifted.hits[0].channels["parent"] == 1
    shallow = engine.rank("q", results, [], 4, {**plain, "parent": 1.0, "parent_depth": 1, "parent_others": 0.0})
    assert [h.name for h in shallow.hits].index("Encodable") == 3  # the head (Nat.succ) holds none of its fields
