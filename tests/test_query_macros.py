"""Query macros: a LaTeX query typed with a corpus's own macros is expanded with that corpus's
definitions (the release's `latex_macros` table), so it meets the statements' expansions."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.latex import extract_latex_tree
from mathindex.latex.macros import expand_query, query_macros
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import write_table

NOTES = r"""\documentclass{article}
\newcommand{\str}[1]{\mathcal{O}_{#1}}
\newcommand{\loc}[2]{{#1}_{\mathfrak{#2}}}
\def\Nil{\operatorname{nil}}
\newtheorem{lemma}{Lemma}
\begin{document}
\begin{lemma}\label{stalk-flat}
For a scheme $X$ and $x \in X$ the map $\str{X}(U) \to \loc{A}{p}$ is flat.
\end{lemma}
\begin{lemma}\label{other}
We have $H^1(X, \mathcal{F}) = 0$ and $\Nil(A) \subseteq J(A)$.
\end{lemma}
\end{document}
"""
OTHER = r"""\newcommand{\str}[1]{\mathcal{S}_{#1}}
\begin{lemma}\label{elsewhere} $\str{Y} = 0$. \end{lemma}
"""


def _corpus(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "notes.tex").write_text(NOTES, encoding="utf-8")
    return root


def test_the_extraction_keeps_each_macro_definition_with_its_documents(tmp_path):
    root = _corpus(tmp_path)
    (root / "other.tex").write_text(OTHER, encoding="utf-8")  # a second document: another \str
    macros = extract_latex_tree(root, "notes", workers=1).macros
    rows = {(r["name"], r["body"]): r for r in macros.to_pylist()}
    assert rows[("str", "\\mathcal{O}_{#1}")]["nargs"] == 1
    assert rows[("loc", "{#1}_{\\mathfrak{#2}}")]["nargs"] == 2
    assert rows[("Nil", "\\operatorname{nil}")]["documents"] == 1
    assert ("str", "\\mathcal{S}_{#1}") in rows
    assert macros.schema.equals(table_specs()["latex_macros"].schema, check_metadata=False)
    assert expand_query(query_macros(macros.to_pylist()), r"$\loc{B}{q}$") == r"${B}_{\mathfrak{q}}$"


def test_query_macros_choose_the_commonest_definition_and_survive_a_runaway():
    rows = [{"name": "R", "nargs": 0, "default_value": None, "body": "\\mathbb{R}", "documents": 1},
            {"name": "R", "nargs": 0, "default_value": None, "body": "\\mathcal{R}", "documents": 3},
            {"name": "loop", "nargs": 0, "default_value": None, "body": "\\loop x", "documents": 1}]
    macros = query_macros(rows)
    assert expand_query(macros, r"\R^n") == r"\mathcal{R}^n"
    assert expand_query(macros, r"\loop") == r"\loop"  # runs away: the query as typed
    assert query_macros([]) is None and expand_query(None, r"\R") == r"\R"


def _release(tmp_path):
    """A release directory holding what the formula channel and the macros need, from the corpus."""
    from mathindex.formula.api import parse_formulas
    from mathindex.formula.formula_index import FormulaIndex

    ex = extract_latex_tree(_corpus(tmp_path), "notes", workers=1)
    release = tmp_path / "release"
    layout = ReleaseLayout(release)
    trees, _ = parse_formulas(ex.formulas, budget_s=2.0)
    FormulaIndex.build(trees, ex.formulas, layout.formula)
    specs = table_specs()
    write_table(ex.formulas, specs["formulas"], release)
    write_table(ex.macros, specs["latex_macros"], release)
    stmts = ex.statements.to_pylist()
    pq.write_table(pa.table({"node_id": [s["node_id"] for s in stmts], "name": [s["label"] for s in stmts]}),
                   layout.table("nodes"))
    return release


def test_a_query_typed_with_the_corpus_macros_finds_the_statement(tmp_path):
    from mathindex.formula.channel import FormulaChannel
    from mathindex.search.engine import SearchEngine
    from mathindex.search.latexquery import release_macros

    release = _release(tmp_path)
    engine = SearchEngine.__new__(SearchEngine)  # the formula channel alone, without a whole release
    engine.formula = FormulaChannel(release)
    query = r"$\str{X}(U) \to \loc{A}{p}$"
    typed = engine.channel_hits(query)["formula"]  # no macros: the commands are taken as they are
    engine.macros = release_macros(release)
    expanded = engine.channel_hits(query)["formula"]
    assert expanded[0][0] == "stalk-flat"
    assert not typed or typed[0][0] != "stalk-flat" or expanded[0][1] > typed[0][1]
    assert expanded[0][1] == engine.channel_hits(r"$\mathcal{O}_{X}(U) \to {A}_{\mathfrak{p}}$")["formula"][0][1]


def test_the_formula_channel_names_its_groups_members_as_a_dict_of_formula_ids_would(tmp_path):
    """`FormulaChannel.search` (members as name positions, numpy) gives what mapping the index's
    first 3k formula ids through a dict to their node's name and keeping each name's best gave:
    every k (the cut at 3k formula ids), and formulas whose node the release lacks left out; and so
    does a one-query CLI's channel (`lazy`), which names the members of each query's groups alone."""
    from mathindex.formula.channel import FormulaChannel
    from mathindex.search.fusion import best_per_name

    release = _release(tmp_path)
    nodes = pq.read_table(ReleaseLayout(release).table("nodes"))
    pq.write_table(nodes.slice(1), ReleaseLayout(release).table("nodes"))  # one node's formulas own no name
    channel = FormulaChannel(release)
    lazy = FormulaChannel(release, preload=False, lazy=True)
    formulas = pq.read_table(ReleaseLayout(release).table("formulas"), columns=["formula_id", "node_id"]).to_pylist()
    name_of_node = dict(zip(nodes.slice(1).column("node_id").to_pylist(), nodes.slice(1).column("name").to_pylist()))
    name_of = {f["formula_id"]: name_of_node[f["node_id"]] for f in formulas if f["node_id"] in name_of_node}
    assert 0 < len(name_of) < len(formulas)
    seen = 0
    for query in (r"$\str{X}(U) \to \loc{A}{p}$", "$H^1(X, F) = 0$", r"$X$ and $x \in X$", "$Y = 0$", "$A$"):
        for k in (1, 2, 3, 5, 50):
            want = best_per_name([(name_of[f], s) for f, s in channel.index.search(query, 3 * k) if f in name_of])[:k]
            got = channel.search(query, k)
            assert repr(got) == repr(want), (query, k)
            assert repr(lazy.search(query, k)) == repr(want), (query, k)
            seen += len(got)
    assert seen
    assert "vocab" not in lazy.index.__dict__  # its query tokens were found without the token dict
