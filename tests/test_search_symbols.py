"""The LaTeX-to-Lean symbol map (search/symbols.py): mined from a small corpus written here, and
used by the lexical channel so that `\\binom{n}{k}` meets `Nat.choose`."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq

from mathindex.schemas.search import LATEX_SYMBOLS
from mathindex.search.lexical import LexicalIndex, build_lexical_index
from mathindex.search.symbols import SymbolMap, documents, mine, write_symbols


def _declarations() -> pl.LazyFrame:
    rows = [
        ("Nat.choose_symm", "n.choose k = n.choose (n - k)", "Symmetry: $\\binom{n}{k} = \\binom{n}{n-k}$."),
        ("Nat.succ_sub_one_choose", "n.choose 1 = n", "$\\binom{n}{1} = n$."),
        ("Nat.choose_two_right", "n.choose 2 = n * (n - 1) / 2", "The value of $\\binom{n}{2}$."),
        ("Nat.totient_prime", "φ p = p - 1", "Euler's $\\varphi$ at a prime, see `Nat.totient`."),
        ("Nat.totient_mul", "φ (m * n) = φ m * φ n", None),
        ("norm_add_le", "‖a + b‖ ≤ ‖a‖ + ‖b‖", "The triangle inequality."),
        ("norm_neg", "‖-a‖ = ‖a‖", None),
        ("Nat.add_comm", "n + m = m + n", "Addition is commutative: $n + m = m + n$."),
        ("Nat.mul_comm", "n * m = m * n", None),
        ("Real.sqrt_sq", "√(x ^ 2) = |x|", "$\\sqrt{x^2} = |x|$."),
    ]
    return pl.LazyFrame(rows, schema=["full_name", "type", "docstring"], orient="row")


def test_mined_map_links_binom_totient_and_norm_to_their_constants():
    table = mine(documents(_declarations()), min_pair_docs=2, min_pmi=0.5, top_words=3)
    words = SymbolMap(table).words
    assert "choose" in words["\\binom"]  # three docstrings write \binom beside n.choose
    assert "totient" in words["φ"]  # `\varphi` counts under φ, the notation the types print
    assert "norm" in words["‖"]
    assert "\\sqrt" not in words  # layout commands carry no constant
    assert set(table.columns) == {f.name for f in LATEX_SYMBOLS}
    assert (table["pair_docs"] >= 2).all()


def test_query_commands_are_expanded_with_their_words():
    table = mine(documents(_declarations()), min_pair_docs=2, min_pmi=0.5, top_words=3)
    smap = SymbolMap(table)
    assert "choose" in smap.expand("\\binom{n}{k} = \\binom{n}{n-k}").split()
    assert "totient" in smap.words_of("\\varphi(p) = p - 1")
    assert "norm" in smap.words_of("\\|x + y\\| \\le \\|x\\| + \\|y\\|")
    assert smap.expand("n + m = m + n") == "n + m = m + n"  # nothing mapped: the query itself


def test_expanded_latex_query_finds_the_lean_declaration(tmp_path):
    decls = _declarations().collect()
    names = decls["full_name"].to_list()
    docs = [f"{n} {t}" for n, t in zip(names, decls["type"].to_list())]  # what Lean nodes hold: name and type
    build_lexical_index(names, docs, tmp_path / "lexical")
    index = LexicalIndex(tmp_path / "lexical")
    table = mine(documents(_declarations()), min_pair_docs=2, min_pmi=0.5, top_words=3)
    write_symbols(table, tmp_path / "latex_symbols.parquet")
    assert pq.read_schema(tmp_path / "latex_symbols.parquet").names == [f.name for f in LATEX_SYMBOLS]
    smap = SymbolMap.read(tmp_path / "latex_symbols.parquet")
    query = "\\binom{x}{y}"
    assert [n for n, _ in index.search(query, 3)] == ["Real.sqrt_sq"]  # without the map: only x matches
    top = [n for n, _ in index.search(smap.expand(query), 3)]
    assert {"Nat.choose_symm", "Nat.succ_sub_one_choose"} <= set(top)  # with it: the n.choose statements
    totient = [n for n, _ in index.search(smap.expand("\\varphi(m n)"), 2)]
    assert "Nat.totient_mul" in totient


def test_engine_expands_latex_queries_only(tmp_path):
    from mathindex.search.engine import SearchEngine
    from mathindex.search.lexical import LexicalChannel
    from mathindex.search.symbols import release_symbols

    decls = _declarations().collect()
    names = decls["full_name"].to_list()
    build_lexical_index(names, [f"{n} {t}" for n, t in zip(names, decls["type"].to_list())], tmp_path / "lexical")
    write_symbols(mine(documents(_declarations()), min_pair_docs=2, min_pmi=0.5, top_words=3), tmp_path / "latex_symbols.parquet")
    assert release_symbols(tmp_path, tmp_path / "absent.parquet") is None  # no map: no expansion
    engine = SearchEngine.__new__(SearchEngine)  # the channels alone, without a release around them
    engine.lexical = LexicalChannel(LexicalIndex(tmp_path / "lexical"), release_symbols(tmp_path))  # the release's own file
    hits = [n for n, _ in engine.channel_hits("\\binom{x}{y}")["lexical"]]
    assert "Nat.choose_symm" in hits[:3]
    assert [n for n, _ in engine.channel_hits("binom x y")["lexical"]] == ["Real.sqrt_sq"]  # words: not expanded


_LEAN_NOTATIONS = '''/-- Euler's totient. -/
def Nat.totient (n : ℕ) : ℕ := 0

/-- docstring that says: notation "ψ" => Nat.fake, which is no command -/
@[inherit_doc] scoped[Nat] notation "φ" => Nat.totient
-- notation "χ" => Nat.commented
prefix:100 "√" => Real.sqrt
infixl:65 " +ᵥ " => HVAdd.hVAdd
notation "‖" e "‖" => norm e
local notation "φ" => leastExt F E
scoped[ProbabilityTheory] notation3 X:50 " ⟂ᵢ " Y:50 =>
  ProbabilityTheory.IndepFun X Y volume
'''


def test_notation_commands_are_read_from_lean_source(tmp_path):
    from mathindex.lean.notations import extract_notations, file_notations

    rows = file_notations(_LEAN_NOTATIONS)
    assert [(r["atoms"], r["target"], r["scope"], r["kind"]) for r in rows] == [
        (["φ"], "Nat.totient", "scoped", "notation"),
        (["√"], "Real.sqrt", "global", "prefix"),
        (["+ᵥ"], "HVAdd.hVAdd", "global", "infixl"),
        (["‖", "‖"], "norm", "global", "notation"),
        (["φ"], "leastExt", "local", "notation"),
        (["⟂ᵢ"], "ProbabilityTheory.IndepFun", "scoped", "notation3"),
    ]
    assert [r["line"] for r in rows] == [5, 7, 8, 9, 10, 11]
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "B.lean").write_text(_LEAN_NOTATIONS, encoding="utf-8")
    table = extract_notations(tmp_path, "lib")
    assert table.num_rows == 6 and set(table.column("file").to_pylist()) == {"A/B.lean"}


def test_notations_feed_the_symbol_map_through_the_grammar_symbols():
    from mathindex.lean.notations import file_notations
    from mathindex.search.symbols import notation_associations

    notations = pl.DataFrame(file_notations(_LEAN_NOTATIONS))
    table = notation_associations(notations)
    assert set(table.columns) == {f.name for f in LATEX_SYMBOLS}
    smap = SymbolMap(table)
    assert smap.words_of("\\varphi(n) = n - 1") == ["totient"]  # \varphi -> φ by the grammar's Greek table
    assert smap.words_of("\\phi(n)") == ["totient"]  # so does \phi (latex2mathml gives it ϕ)
    assert smap.words_of("\\sqrt{x}") == ["sqrt"]
    assert "norm" in smap.words_of("\\|x\\|")
    assert "least" not in smap.words_of("\\varphi")  # local notations are left out by default
    assert "least" in SymbolMap(notation_associations(notations, scopes=("global", "scoped", "local"))).words_of("\\varphi")
