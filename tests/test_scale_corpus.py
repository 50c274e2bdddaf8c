"""The synthetic corpus of the scale benchmark (bench/common/scale_corpus.py): k renamed copies of a
small Lean and Stacks-style LaTeX corpus extract to k times the base's rows, no name, label or tag
is shared between copies, and every reference resolves inside its own copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.common.scale_corpus import header_end, link_corpus, seeded_share, select_base, write_copies
from mathindex.latex import extract_latex_tree
from mathindex.lean import extract_lean_tree
from mathindex.search.sameas import same_as_table

LEAN = {
    "Tiny/Basic.lean": """/-
Copyright (c) 2026. Authors: the tests
-/
import Tiny.Order

/-!
# Doubling, for `Tiny.double`
-/

namespace Tiny

/-- Twice a number. -/
def double (n : Nat) : Nat := n + n

theorem double_eq (n : Nat) : double n = 2 * n := by
  unfold double; omega

@[stacks 0001]
theorem double_le (n : Nat) : n ≤ double n := by
  simp [double_eq]

end Tiny

theorem root_fact (n : Nat) : Tiny.double n = n + n := rfl

theorem _root_.rooted_fact (n : Nat) : Tiny.double n = 2 * n := Tiny.double_eq n
""",
    "Tiny/Order.lean": """import Mathlib.Order.Basic

namespace Tiny.Order

def Small (n : Nat) : Prop := n < 10

theorem Small.zero : Small 0 := by decide

end Tiny.Order

theorem uses_root (n : Nat) : Tiny.double n = n + n := root_fact n

theorem uses_rooted (n : Nat) : Tiny.double n = 2 * n := rooted_fact n
""",
}
TEX = {
    "preamble.tex": "\\documentclass{article}\n\\newtheorem{lemma}{Lemma}\n",
    "chap.tex": """\\input{preamble}
\\begin{document}
\\section{One}
\\label{section-one}
\\begin{lemma}
\\label{lemma-one}
Every number $n$ satisfies $n \\le 2n$.
\\end{lemma}
\\begin{lemma}
\\label{lemma-two}
Also $n + n = 2n$.
\\end{lemma}
\\begin{proof}
By Lemma \\ref{lemma-one} and Lemma \\ref{chap-lemma-one}.
\\end{proof}
\\end{document}
""",
    "tags/tags": "# tags\n0001,chap-lemma-one\n0002,chap-lemma-two\n",
}
COPY = re.compile(r"ScaleK(\d+)|_k(\d+)\b|-k(\d+)\b|^k(\d+)/")


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def copy_of(name: str) -> int:
    """The copy a name, label or file belongs to (every renamed one carries its copy's mark)."""
    marks = {int(next(g for g in m.groups() if g is not None)) for m in COPY.finditer(name)}
    assert len(marks) == 1, name
    return marks.pop()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scale")
    lean, tex = _write(tmp / "lean", LEAN), _write(tmp / "tex", TEX)
    base = select_base(lean, tex, 1.0, 0)
    write_copies(base, 3, tmp / "store")
    copies = link_corpus(base, 3, tmp / "store", tmp / "k3")
    return (lean, tex), copies


def test_copies_extract_to_k_times_the_base_and_share_no_name(corpora) -> None:
    (lean, _), (lean3, _) = corpora
    base, three = extract_lean_tree(lean, "base"), extract_lean_tree(lean3, "x3")
    assert three.errors.num_rows == base.errors.num_rows == 0
    names = three.declarations["full_name"].to_pylist()
    assert len(names) == 3 * base.declarations.num_rows and len(set(names)) == len(names)
    assert sorted(copy_of(n) for n in names) == sorted([0, 1, 2] * base.declarations.num_rows)
    assert {"ScaleK1.Tiny_k1.double", "ScaleK1.root_fact", "ScaleK2.Tiny_k2.Order_k2.Small_k2.zero",
            "rooted_fact_k1"} <= set(names)
    assert sorted({m for m in three.declarations["module"].to_pylist()}) == sorted(
        f"Tiny_k{i}.{m}" for i in range(3) for m in ("Basic", "Order_k" + str(i)))


def test_references_resolve_inside_their_own_copy(corpora) -> None:
    (lean, _), (lean3, _) = corpora
    base, three = extract_lean_tree(lean, "base"), extract_lean_tree(lean3, "x3")
    resolved = [r for r in three.dependencies.to_pylist() if r["resolved"]]
    assert len(resolved) == 3 * sum(base.dependencies["resolved"].to_pylist()) > 0
    assert all(copy_of(r["full_name"]) == copy_of(r["target"]) for r in resolved)
    pairs = [{k: r[k] for k in ("full_name", "target")} for r in resolved]
    assert {"full_name": "ScaleK2.uses_root", "target": "ScaleK2.root_fact"} in pairs
    assert {"full_name": "ScaleK2.uses_rooted", "target": "rooted_fact_k2"} in pairs


def test_labels_tags_and_citations_stay_inside_their_copy(corpora) -> None:
    (_, tex), (lean3, tex3) = corpora
    base, three = extract_latex_tree(tex, "base", workers=1), extract_latex_tree(tex3, "x3", workers=1)
    rows = three.statements.to_pylist()
    assert len(rows) == 3 * base.statements.num_rows == 6
    assert len({r["full_label"] for r in rows}) == len({r["tag"] for r in rows}) == 6
    assert all(copy_of(r["full_label"]) == copy_of(r["file"]) for r in rows)
    tag_copy = {r["tag"]: copy_of(r["file"]) for r in rows}
    cited = [(copy_of(r["file"]), c) for r in rows for c in r["cites"]]
    assert len(cited) == 3 and all(tag_copy[c] == i for i, c in cited)  # lemma-one's tag, once per copy
    edges = same_as_table(extract_lean_tree(lean3, "x3").declarations, three.statements).to_pylist()
    assert len(edges) == 3 and all(copy_of(e["name"]) == tag_copy[e["tag"]] for e in edges)


def test_the_wrapper_namespace_comes_after_the_imports_and_before_a_doc_comment() -> None:
    text = "/- c -/\nmodule\n\npublic import A.B\nimport C\n/-- doc -/\ntheorem t : True := trivial\n"
    at = header_end(text)
    assert text[:at].endswith("import C") and text[at:].startswith("\n/-- doc")
    assert header_end("theorem t : True := trivial\n") == 0


def test_a_fraction_is_a_seeded_share_of_the_bytes() -> None:
    files = [(f"F{i}.lean", 100) for i in range(50)]
    half = seeded_share(files, 0.5, 0)
    assert half == seeded_share(files, 0.5, 0) and len(half) == 25
    assert half != seeded_share(files, 0.5, 1)
    assert len(seeded_share(files, 0.001, 0)) == 1 and len(seeded_share(files, 1.0, 0)) == 50


def test_scale_bench_reuses_a_k_measured_under_the_same_key(tmp_path, monkeypatch):
    """bench/scale.py saves each k's figures with their run key and takes them back only under the
    same key: a benchmark of hours per k can be spread over sittings, never mixed across CPUs."""
    import argparse

    import bench.scale as scale

    calls = []
    monkeypatch.setattr(scale, "one_k", lambda k, *a: calls.append(k) or {"k": k, "release": f"r{len(calls)}"})
    monkeypatch.setattr(scale, "run_key", lambda args, cpu: {"cpu": cpu, "clean": True})  # not this checkout's edits
    args = argparse.Namespace(work=tmp_path, fraction=1.0, seed=0, fresh=False)
    first = scale.measured_k(3, None, args, Path("m"), {}, "cpu A")
    again = scale.measured_k(3, None, args, Path("m"), {}, "cpu A")
    assert calls == [3] and again == first == {"k": 3, "release": "r1"}
    other = scale.measured_k(3, None, args, Path("m"), {}, "cpu B")
    assert calls == [3, 3] and other["release"] == "r2"
    args.fresh = True
    scale.measured_k(3, None, args, Path("m"), {}, "cpu B")
    assert calls == [3, 3, 3]
