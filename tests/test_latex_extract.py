"""LaTeX extraction on a small document written for these tests (tests/fixtures/latex/doc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathindex.latex import LatexExtraction, extract_latex_tree
from mathindex.latex.macros import MacroSet, kind_of, scan_definitions
from mathindex.latex.texscan import strip_comments
from mathindex.schemas.common import ERRORS
from mathindex.schemas.latex import FORMULAS, LATEX_STATEMENTS

DOC = Path(__file__).parent / "fixtures" / "latex" / "doc"


@pytest.fixture(scope="module")
def doc() -> LatexExtraction:
    return extract_latex_tree(DOC, "doc", workers=1)


def _by_label(doc: LatexExtraction) -> dict[str, dict]:
    return {row["label"]: row for row in doc.statements.to_pylist()}


def test_schemas_and_counts(doc):
    assert doc.statements.schema.equals(LATEX_STATEMENTS)
    assert doc.formulas.schema.equals(FORMULAS)
    assert doc.errors.schema.equals(ERRORS)
    assert doc.errors.num_rows == 0, doc.errors.to_pylist()
    envs = doc.statements.column("env").to_pylist()
    # verbatim and commented-out theorems are skipped; every real one is found once
    assert envs == ["lem", "lem", "mainthm", "satz", "kor", "dfn", "rmks", "defn", "theorem"]
    assert sorted(set(doc.statements.column("file").to_pylist())) == ["alpha.tex", "beta.tex"]


def test_kinds_from_theorem_definitions(doc):
    kinds = dict(zip(doc.statements.column("env").to_pylist(), doc.statements.column("kind").to_pylist()))
    assert kinds == {
        "lem": "lemma", "mainthm": "theorem", "satz": "theorem", "kor": "corollary", "dfn": "definition",
        "rmks": "remark", "defn": "definition", "theorem": "theorem",
    }


def test_statement_row(doc):
    row = _by_label(doc)["lemma-triangle"]
    assert row["full_label"] == "alpha-lemma-triangle" and row["tag"] == "T002"
    assert row["slogan"] == "The norm is subadditive."
    assert row["section_path"] == ["Norms"]
    assert row["file"] == "alpha.tex" and (row["line_start"], row["line_end"]) == (7, 18)
    assert "\\norm{x + y}" in row["body"] and "slogan" not in row["body"] and "fake math" not in row["body"]
    assert "Some book" not in row["body"] and "5\\%" in row["body"]
    assert "\\lVert x + y \\rVert" in row["body_normalised"] and "\\label" not in row["body_normalised"]
    assert row["proof"].startswith("See \\cite[Ch. 2]{Rudin}")
    # a local ref resolves through the file prefix; a cross-file ref is already qualified
    assert row["cites"] == ["T003", "T005"]
    assert row["bib_cites"] == ["Rudin"]
    assert row["statement_id"] and row["node_id"] == f"tex:doc:{row['statement_id']}"


def test_titles_sections_and_proof_after_noindent(doc):
    rows = _by_label(doc)
    assert rows["lemma-unit"]["title"] == "Unit vectors"
    assert rows["lemma-unit"]["section_path"] == ["Norms", "Units"]
    assert rows["satz-one"]["section_path"] == ["Numbers"] and rows["satz-one"]["tag"] == "T006"
    main = rows["theorem-main"]
    assert main["tag"] == "T005" and main["cites"] == ["T002", "T004"]
    assert rows["kor-two"]["tag"] is None and rows["kor-two"]["full_label"] == "alpha-kor-two"


def test_formulas(doc):
    rows = [r for r in doc.formulas.to_pylist() if r["file"] == "alpha.tex"]
    assert [r["position"] for r in rows] == list(range(len(rows)))
    by_latex = {r["latex"]: r for r in rows}
    unit = _by_label(doc)["lemma-unit"]
    eq = by_latex["\\label{equation-unit}\n\\Hom(A, B) = \\Spec R"]
    assert eq["display"] == "equation" and eq["statement_id"] == unit["statement_id"] and eq["role"] == "statement"
    assert (eq["label"], eq["tag"]) == ("alpha-equation-unit", "T004")
    assert eq["latex_normalised"] == "\\mathop{\\mathrm{Hom}}\\nolimits(A, B) = \\operatorname{Spec} R"
    assert by_latex["\\pair{u} = 1"]["latex_normalised"] == "\\langle x, u \\rangle = 1"
    assert by_latex["\\pair[y]{u} = 0"]["latex_normalised"] == "\\langle y, u \\rangle = 0"
    assert by_latex["\\abs{a} \\ge 0"]["role"] == "proof" and by_latex["\\abs{a} \\ge 0"]["display"] == "display"
    assert by_latex["\\colim_i M_i"]["display"] == "display"
    assert by_latex["\\colim_i M_i"]["latex_normalised"] == "\\operatorname*{colim}_i M_i"
    assert by_latex["a &= b \\\\\nc &= d"]["display"] == "align*"
    assert by_latex["\\loopmacro"]["latex_normalised"] == "L"  # defined in a file reached through a cycle
    assert not any("fake" in r["latex"] or "not a theorem" in r["latex"] for r in rows)
    assert by_latex["x, y \\in \\R^n"]["line"] == 12
    beta = [r for r in doc.formulas.to_pylist() if r["file"] == "beta.tex"]
    assert [(r["display"], r["role"]) for r in beta] == [("inline", "statement"), ("gather", None)]


def test_ids_are_deterministic(doc, monkeypatch):
    from mathindex.latex import tree

    monkeypatch.setattr(tree, "SERIAL_BELOW_BYTES", 0)  # force the process pool on this small corpus
    again = extract_latex_tree(DOC, "doc", workers=2)
    assert again.statements.equals(doc.statements)
    assert again.formulas.equals(doc.formulas)


def test_tags_file_argument_overrides_default(doc, tmp_path):
    tags = tmp_path / "tags"
    tags.write_text("X999,alpha-lemma-unit\n")
    rows = {r["label"]: r for r in extract_latex_tree(DOC, "doc", tags, workers=1).statements.to_pylist()}
    assert rows["lemma-unit"]["tag"] == "X999" and rows["lemma-triangle"]["tag"] is None


def test_plain_labels_without_file_prefix(tmp_path):
    (tmp_path / "tags").mkdir()
    (tmp_path / "tags" / "tags").write_text("AB12,thm:main\n")
    (tmp_path / "paper.tex").write_text("\\begin{theorem}\\label{thm:main} $a$ \\end{theorem}\n")
    row = extract_latex_tree(tmp_path, "p", workers=1).statements.to_pylist()[0]
    assert (row["full_label"], row["tag"], row["kind"]) == ("thm:main", "AB12", "theorem")


def test_kind_of_titles():
    assert kind_of("Main Theorem", "mainthm") == "theorem"
    assert kind_of("Key Lemma", "kl") == "lemma"
    assert kind_of("Théorème", "thmfr") == "theorem"
    assert kind_of("", "prop") == "proposition"
    assert kind_of("Remarks", "rmks") == "remark"


def test_definitions_and_expansion():
    defs = scan_definitions(
        strip_comments(
            "\\newcommand*{\\Z}{\\mathbf{Z}}\n% \\newcommand{\\X}{no}\n\\def\\pp#1#2{#1^{#2}}\n"
            "\\def\\delim#1.{x}\n\\newtheorem{conj}{Conjecture}\\input{other}"
        )
    )
    names = [m.name for m in defs.macros]
    assert names == ["Z", "pp"]  # commented and delimited-parameter definitions are not expanded
    assert defs.theorems == [("conj", "Conjecture", None)] and defs.inputs == ["other"]
    macros = MacroSet({m.name: m for m in defs.macros})
    assert macros.expand("\\pp{\\Z}{2} + \\Zeta") == "\\mathbf{Z}^{2} + \\Zeta"


def test_environment_shorthand_macros(tmp_path):
    (tmp_path / "p.tex").write_text(
        "\\def\\beq{\\begin{equation}}\\def\\eeq{\\end{equation}}\n"
        "\\newcommand{\\bthm}{\\begin{theorem}}\\newcommand{\\ethm}{\\end{theorem}}\n"
        "\\bthm\\label{t} Then \\beq x = 1 \\eeq holds. \\ethm\n"
    )
    result = extract_latex_tree(tmp_path, "p", workers=1)
    assert result.errors.num_rows == 0, result.errors.to_pylist()
    (row,) = result.statements.to_pylist()
    assert (row["env"], row["label"], row["line_start"]) == ("theorem", "t", 3)
    assert [(f["latex"], f["display"]) for f in result.formulas.to_pylist()] == [("x = 1", "equation")]
