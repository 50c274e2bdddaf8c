"""The one Lean binder parser (`mathindex.lean.binders`) and its three readings: the scanner's
`VarBinder`s, the embedding rules' (bracket, names, type) triples, the telescopes' groups.
Expected outputs are written by hand; the corpus figures were those of the three parsers this one
replaced (identical on every declaration of data/sample/lean, tests/fixtures/lean and Mathlib)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathindex.informal import rules
from mathindex.lean.binders import groups, leading_groups, parse_binders, split_colon
from mathindex.lean.shards import extract_file

ROOT = Path(__file__).parent.parent
CORPORA = (ROOT / "data" / "sample" / "lean", ROOT / "tests" / "fixtures" / "lean")


def scanner(text: str) -> tuple[list[tuple], int]:
    found, end = parse_binders(text)
    return [(b.bracket, b.names, b.type, sorted(b.idents)) for b in found], end


def telescope(text: str) -> list[tuple]:
    return [(g.bracket, g.names, g.type) for g in leading_groups(text)[0]]


# text -> the scanner's (bracket, names, type, identifiers of the type) and end offset; the
# telescope's (bracket, names, type or None); the rules' (bracket, names, type) over all the text
CASES = [
    ("(a b : ℕ) {x} [Group G] ⦃y : T⦄ : P",
     ([("(", ("a", "b"), "ℕ", ["ℕ"]), ("{", ("x",), "", []), ("[", (), "Group G", ["G", "Group"]),
       ("⦃", ("y",), "T", ["T"])], 32),
     [("(", ("a", "b"), "ℕ"), ("{", ("x",), None), ("[", ("Group", "G"), None), ("⦃", ("y",), "T")],
     [("(", ["a", "b"], "ℕ"), ("{", [], "x"), ("[", [], "Group G"), ("⦃", ["y"], "T")]),
    # instance binders: one name before the colon names it for the scanner, several do not
    ("[inst : CommRing α] [h : ∀ x : T, C x] [inst inst' : Foo α] [Fintype (Fin n)]",
     ([("[", ("inst",), "CommRing α", ["CommRing", "α"]), ("[", ("h",), "∀ x : T, C x", ["C", "T", "x"]),
       ("[", (), "inst inst' : Foo α", ["Foo", "inst", "inst'", "α"]),
       ("[", (), "Fintype (Fin n)", ["Fin", "Fintype", "n"])], 77),
     [("[", ("inst",), "CommRing α"), ("[", ("h",), "∀ x : T, C x"), ("[", ("inst", "inst'"), "Foo α"),
      ("[", ("Fintype", "(Fin", "n)"), None)],
     [("[", ["inst"], "CommRing α"), ("[", ["h"], "∀ x : T, C x"), ("[", ["inst", "inst'"], "Foo α"),
      ("[", [], "Fintype (Fin n)")]),
    # nested brackets, `::` and the colon of a type ascription inside them
    ("(s : Set (α × β)) (h : l = a :: t) (p : ⟨a, b⟩ = c) (m : x ∈ ({a} : Set α))",
     ([("(", ("s",), "Set (α × β)", ["Set", "α", "β"]), ("(", ("h",), "l = a :: t", ["a", "l", "t"]),
       ("(", ("p",), "⟨a, b⟩ = c", ["a", "b", "c"]), ("(", ("m",), "x ∈ ({a} : Set α)", ["Set", "a", "x", "α"])],
      75),
     [("(", ("s",), "Set (α × β)"), ("(", ("h",), "l = a :: t"), ("(", ("p",), "⟨a, b⟩ = c"),
      ("(", ("m",), "x ∈ ({a} : Set α)")],
     [("(", ["s"], "Set (α × β)"), ("(", ["h"], "l = a :: t"), ("(", ["p"], "⟨a, b⟩ = c"),
      ("(", ["m"], "x ∈ ({a} : Set α)")]),
    # `:=` defaults and auto-params stay in the type; `(m := 4)` has no type colon; empty types
    ("(h : a = b := by simp) (n : ℕ := 3) (m := 4) (x :)",
     ([("(", ("h",), "a = b := by simp", ["a", "b", "by", "simp"]), ("(", ("n",), "ℕ := 3", ["ℕ"]),
       ("(", ("m", ":=", "4"), "", []), ("(", ("x",), "", [])], 50),
     [("(", ("h",), "a = b := by simp"), ("(", ("n",), "ℕ := 3"), ("(", ("m", ":=", "4"), None),
      ("(", ("x",), None)],
     [("(", ["h"], "a = b := by simp"), ("(", ["n"], "ℕ := 3"), ("(", [], "m := 4"), ("(", ["x"], "")]),
    # strict implicit, both spellings (before the merge only the scanner read `{{…}}` as `⦃…⦄`:
    # the telescopes kept bracket `{`, the rules saw `("{", [], "{x : α}")`)
    ("{{x : α}} {{y}} ⦃z w : β⦄",
     ([("⦃", ("x",), "α", ["α"]), ("⦃", ("y",), "", []), ("⦃", ("z", "w"), "β", ["β"])], 25),
     [("⦃", ("x",), "α"), ("⦃", ("y",), None), ("⦃", ("z", "w"), "β")],
     [("⦃", ["x"], "α"), ("⦃", [], "y"), ("⦃", ["z", "w"], "β")]),
    # universes are no identifiers of the type; Unicode and «quoted» names split at spaces as before
    ("(α : Type u) (β : Sort (max u v)) {γ : Type*} («x y» : T) (hε : 0 < ε)",
     ([("(", ("α",), "Type u", ["Type"]), ("(", ("β",), "Sort (max u v)", ["Sort"]),
       ("{", ("γ",), "Type*", ["Type"]), ("(", ("«x", "y»"), "T", ["T"]), ("(", ("hε",), "0 < ε", ["ε"])], 70),
     [("(", ("α",), "Type u"), ("(", ("β",), "Sort (max u v)"), ("{", ("γ",), "Type*"), ("(", ("«x", "y»"), "T"),
      ("(", ("hε",), "0 < ε")],
     [("(", ["α"], "Type u"), ("(", ["β"], "Sort (max u v)"), ("{", ["γ"], "Type*"), ("(", ["«x", "y»"], "T"),
      ("(", ["hε"], "0 < ε")]),
    # leading groups stop at other text or at a group never closed; the rules read groups anywhere,
    # an unclosed one to the end
    ("(x : ℕ) foo.{u} (y) {z : Z",
     ([("(", ("x",), "ℕ", ["ℕ"])], 8),
     [("(", ("x",), "ℕ")],
     [("(", ["x"], "ℕ"), ("{", [], "u"), ("(", [], "y"), ("{", ["z"], "Z")]),
    ("(a) ⟨b, c⟩ (d : D)",
     ([("(", ("a",), "", [])], 4),
     [("(", ("a",), None)],
     [("(", [], "a"), ("(", ["d"], "D")]),
    ("  \n (a : α)\n  (b : β) : a = a",
     ([("(", ("a",), "α", ["α"]), ("(", ("b",), "β", ["β"])], 22),
     [("(", ("a",), "α"), ("(", ("b",), "β")],
     [("(", ["a"], "α"), ("(", ["b"], "β")]),
    ("", ([], 0), [], []),
]


@pytest.mark.parametrize(("text", "want_scanner", "want_telescope", "want_rules"), CASES, ids=[c[0][:30] for c in CASES])
def test_the_three_readings_of_tricky_binders(text: str, want_scanner: tuple, want_telescope: list,
                                               want_rules: list) -> None:
    assert scanner(text) == want_scanner
    assert telescope(text) == want_telescope
    assert rules.parse_binders(text) == want_rules


def test_merged_edge_cases_read_as_the_scanner_read_them() -> None:
    # the telescopes' own parser counted only ( { [ ⦃ as brackets and took the first colon of `::`:
    # `(x ⟨y : T⟩ : S)` gave names (x, ⟨y) and type `T⟩ : S`, `(x := a :: l)` type `: l`
    assert telescope("(x ⟨y : T⟩ : S)") == [("(", ("x", "⟨y", ":", "T⟩"), "S")]
    assert telescope("(x := a :: l)") == [("(", ("x", ":=", "a", "::", "l"), None)]
    # `{{x : α} }` and `⦃{x : α}⦄` are strict implicit for all three (the telescopes read neither)
    assert telescope("{{x : α} }") == telescope("⦃{x : α}⦄") == [("⦃", ("x",), "α")]
    assert rules.parse_binders("{{x : α} }") == [("⦃", ["x"], "α")]


def _corpus_texts() -> tuple[set[str], set[str]]:
    """Signatures and `variable` texts of the sample and fixture libraries, and the binder heads the
    rules read (the header before its top-level colon)."""
    texts: set[str] = set()
    heads: set[str] = set()
    for root in CORPORA:
        for path in sorted(root.rglob("*.lean")):
            for row in extract_file(path.read_bytes(), "c", str(path.relative_to(root)))[0]:
                texts.update([row["signature"] or "", row["variables"] or ""])
                head, colon, _ = split_colon(rules.strip_header(row["signature"] or "", row["full_name"]))
                heads.add(head if colon else "")
    return texts, heads


def test_corpus_figures_and_the_readings_agree() -> None:
    texts, heads = _corpus_texts()
    assert (len(texts), len(heads)) == (283, 92)
    found = [g for t in sorted(texts) for g in leading_groups(t)[0]]
    assert Counter(g.bracket for g in found) == {"(": 171, "{": 103, "[": 63}
    assert sum(g.colon for g in found) == 274
    triples = [x for h in sorted(heads) for x in rules.parse_binders(h)]
    assert Counter(x[0] for x in triples) == {"(": 115, "{": 36, "[": 18}
    assert sum(not names for _, names, _ in triples) == 18
    for text in texts:
        vars_, end = parse_binders(text)
        tele = leading_groups(text)[0]
        assert len(vars_) == len(tele)
        for var, group in zip(vars_, tele):
            assert var.bracket == group.bracket
            if group.bracket != "[":  # the scanner names no `[C α]`; the telescopes split its words
                assert (var.names, var.type or None) == (group.names, group.type)
        if not text[end:].strip():  # a text of groups only: the rules read the same groups
            assert [(g.bracket, g.inner) for g in groups(text)] == [(g.bracket, g.inner) for g in tele]


NAMES = st.sampled_from(["a", "x₁", "hε", "α", "f'", "inst", "G", "h₂'", "𝕜"])
TYPES = st.recursive(
    st.sampled_from(["ℕ", "α", "Set α", "a = b", "l = a :: t", "⟨a, b⟩ = c", "0 < ε", "Type*", "f x",
                     "x ∈ ({a} : Set α)", "a = b := by simp"]),
    lambda inner: st.one_of(st.builds("({})".format, inner), st.builds("{} → {}".format, inner, inner),
                            st.builds("⟦{}⟧".format, inner), st.builds("{{x | {}}}".format, inner),
                            st.builds("[{}]".format, inner)),
    max_leaves=4)
GROUPS = st.tuples(st.sampled_from(["(", "{", "[", "⦃", "{{"]), st.lists(NAMES, min_size=1, max_size=3),
                   st.none() | TYPES)
CLOSE = {"(": ")", "{": "}", "[": "]", "⦃": "⦄", "{{": "}}"}


@settings(max_examples=300, deadline=None)
@given(st.lists(GROUPS, max_size=4), st.sampled_from(["", " ", "\n  "]), st.sampled_from(["", " : P x", " extends M α"]))
def test_generated_binders_read_back(spec: list[tuple], gap: str, tail: str) -> None:
    body = gap.join(f"{o}{' '.join(ns)}{'' if t is None else ' : ' + t}{CLOSE[o]}" for o, ns, t in spec)
    text = body + tail
    want = [("⦃" if o == "{{" else o, tuple(ns), t) for o, ns, t in spec]
    assert telescope(text) == want
    vars_, end = parse_binders(text)
    assert end == len(body) + (tail[:1] == " ")
    for var, (o, ns, t) in zip(vars_, want, strict=True):
        named = o != "[" or (t is not None and len(ns) == 1)
        assert (var.names, var.type) == ((ns, t or "") if named else ((), " ".join(ns) + ("" if t is None else " : " + t)))
    head, colon, _ = split_colon(text)
    assert colon == (tail == " : P x") and head.rstrip() == (body if colon else text).rstrip()
    assert rules.parse_binders(body) == [(o, list(ns), t) if t is not None else (o, [], " ".join(ns)) for o, ns, t in want]
    assert [g.bracket for g in groups(body)] == [o for o, _, _ in want]
