"""The Stacks Project read from ../shared: counts plus hand-picked rows (skips when the corpus is absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mathindex.latex import extract_latex_tree
from mathindex.latex.tree import read_tags

STACKS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "stacks-project"

pytestmark = pytest.mark.skipif(
    not (STACKS / "tags" / "tags").is_file(), reason=f"Stacks Project not present at {STACKS} (../shared)"
)


@pytest.fixture(scope="module")
def stacks():
    result = extract_latex_tree(STACKS, "stacks")
    return result, {r["tag"]: r for r in result.statements.to_pylist() if r["tag"]}


def test_counts(stacks):
    result, _ = stacks
    envs = Counter(result.statements.column("env").to_pylist())
    # raw \begin counts of the issue; the one lemma short sits inside a verbatim block of coding.tex
    assert envs == {
        "lemma": 12587, "definition": 1721, "remark": 1043, "example": 449, "exercise": 386,
        "proposition": 330, "theorem": 214, "situation": 124, "remarks": 5,
    }
    assert result.errors.num_rows == 0
    assert sum(1 for s in result.statements.column("slogan").to_pylist() if s) == 244
    assert len(set(result.statements.column("file").to_pylist())) > 100
    assert result.formulas.num_rows > 400_000


def test_every_labelled_statement_in_tags_carries_its_tag(stacks):
    result, _ = stacks
    tags = read_tags(STACKS / "tags" / "tags")
    rows = [r for r in result.statements.to_pylist() if r["full_label"] in tags]
    assert len(rows) == result.statements.num_rows
    assert all(r["tag"] == tags[r["full_label"]] for r in rows)


def test_nakayama_00DV(stacks):
    result, by_tag = stacks
    row = by_tag["00DV"]
    assert (row["file"], row["env"], row["kind"], row["title"]) == ("algebra.tex", "lemma", "lemma", "Nakayama's lemma")
    assert (row["label"], row["full_label"]) == ("lemma-NAK", "algebra-lemma-NAK")
    assert row["body"].startswith("\\label{lemma-NAK}\n\nLet $R$ be a ring with Jacobson radical $\\text{rad}(R)$.")
    assert row["section_path"] == ["Nakayama's lemma"]
    assert row["line_start"] < row["line_end"]
    assert row["proof"].startswith("Proof of (\\ref{item-nakayama})")
    assert "00DW" in row["cites"]  # algebra-item-nakayama
    mine = [f for f in result.formulas.to_pylist() if f["statement_id"] == row["statement_id"]]
    statement = [f["latex"] for f in mine if f["role"] == "statement"]
    assert statement[:5] == ["R", "\\text{rad}(R)", "M", "R", "I \\subset R"]
    assert all(f["node_id"] == row["node_id"] for f in mine)


def test_definition_flat_00HB(stacks):
    result, by_tag = stacks
    row = by_tag["00HB"]
    assert (row["full_label"], row["kind"]) == ("algebra-definition-flat", "definition")
    assert "is called {\\it flat} if whenever" in row["body"]
    latex = [f["latex"] for f in result.formulas.to_pylist() if f["statement_id"] == row["statement_id"]]
    assert "M \\otimes_R N_1 \\to M \\otimes_R N_2 \\to M \\otimes_R N_3" in latex


def test_slogan_and_cross_file_cites(stacks):
    _, by_tag = stacks
    assert by_tag["00KZ"]["slogan"].startswith("Finite modules have filtrations")
    assert "\\begin{slogan}" not in by_tag["00KZ"]["body"]
    adjoint = by_tag["07RB"]
    assert adjoint["file"] == "categories.tex" and adjoint["section_path"] == ["Adjoint functors"]
    assert adjoint["cites"] == ["0FWV"]


def test_tagged_equation_0BQX(stacks):
    result, _ = stacks
    rows = [f for f in result.formulas.to_pylist() if f["tag"] == "0BQX"]
    assert len(rows) == 1
    (row,) = rows
    assert (row["file"], row["display"], row["label"]) == ("duality.tex", "equation", "duality-equation-second-order-thickening")
    assert row["latex_normalised"].startswith("0 \\to \\mathcal{I}/\\mathcal{I}^2 \\to \\mathcal{O}_Y/\\mathcal{I}^2")
    assert row["role"] == "proof" and row["statement_id"] is not None
    labelled = [f for f in result.formulas.to_pylist() if f["label"]]
    assert len(labelled) == 688 and all(f["tag"] for f in labelled)
