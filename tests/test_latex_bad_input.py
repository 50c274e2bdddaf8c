"""Bad LaTeX input becomes `errors` rows within a bounded time, and the rest of the corpus is extracted."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mathindex.latex import extract_latex_tree

GOOD = "\\begin{lemma}\\label{lemma-good} Good $x$. \\end{lemma}\n"


def _errors_by_file(result) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in result.errors.to_pylist():
        out.setdefault(row["file"], []).append(row)
    return out


def _corpus(tmp_path: Path) -> Path:
    (tmp_path / "a-good.tex").write_text(GOOD)
    (tmp_path / "braces.tex").write_text(
        "\\section{Unclosed title\n\n\\begin{lemma}\\label{lemma-b} Text {{ $y$ \\end{lemma}\n"
        "Inline $\\frac{a}{b$ never closes.\n\nLast $z$ fine.\n"
    )
    (tmp_path / "noend.tex").write_text(
        "\\begin{theorem}\\label{theorem-open}\nStarts but\n\\begin{lemma}\\label{lemma-inner} $w$ \\end{lemma}\n"
        "\\begin{equation} a = b\n"
    )
    (tmp_path / "runaway.tex").write_text(
        "\\def\\a{\\a\\a}\n\\begin{lemma}\\label{lemma-run} $\\a$ and $\\a + 1$ \\end{lemma}\n"
    )
    (tmp_path / "garbage.tex").write_bytes(os.urandom(20000))
    with open(tmp_path / "huge.tex", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # a sparse 50 MB file
    (tmp_path / "mismatch.tex").write_text("\\begin{lemma} x \\end{theorem}\n\\end{itemize}\n" + GOOD)
    return tmp_path


def test_bad_files_become_errors_and_the_rest_is_extracted(tmp_path):
    root = _corpus(tmp_path)
    start = time.monotonic()
    result = extract_latex_tree(root, "bad", workers=2, file_budget_s=5.0)
    assert time.monotonic() - start < 30
    errors = _errors_by_file(result)
    labels = {r["label"]: r for r in result.statements.to_pylist()}
    # the good file, and the good parts of bad files, are extracted
    assert {"lemma-good", "lemma-b", "lemma-inner", "lemma-run"} <= set(labels)
    assert "theorem-open" not in labels
    reasons = {f: " | ".join(r["reason"] for r in rows) for f, rows in errors.items()}
    assert "unbalanced braces" in reasons["braces.tex"] and "not closed" in reasons["braces.tex"]
    assert any(r["line"] == 4 for r in errors["braces.tex"])  # the runaway inline `$`
    assert "environment theorem never ends" in reasons["noend.tex"]
    assert "equation never ends" in reasons["noend.tex"]
    assert "runaway" in reasons["runaway.tex"] and len(errors["runaway.tex"]) == 1
    assert labels["lemma-run"]["body_normalised"] == "$\\a$ and $\\a + 1$"
    assert "binary" in reasons["garbage.tex"]
    assert "too large" in reasons["huge.tex"]
    assert "\\end{theorem} without a matching" in reasons["mismatch.tex"]
    assert "lemma never ends" in reasons["mismatch.tex"]
    assert "mismatch.tex" in {r["file"] for r in result.statements.to_pylist()}
    assert "a-good.tex" not in errors
    formulas = [r["latex"] for r in result.formulas.to_pylist() if r["file"] == "braces.tex"]
    assert "z" in formulas  # scanning resumes after the broken inline formula


def test_time_budget_per_file_is_enforced(tmp_path):
    # 200k inline formulas: far more work than a 0.05 s budget allows
    (tmp_path / "slow.tex").write_text("$x$ " * 200_000)
    (tmp_path / "ok.tex").write_text(GOOD)
    start = time.monotonic()
    result = extract_latex_tree(tmp_path, "slow", workers=1, file_budget_s=0.05)
    assert time.monotonic() - start < 20
    reasons = [r["reason"] for r in result.errors.to_pylist() if r["file"] == "slow.tex"]
    assert reasons and "time budget" in reasons[0]
    assert result.statements.column("file").to_pylist() == ["ok.tex"]


def _hang(path_str: str, rel: str, ctx_index: int):
    """Stands in for the per-file extractor: hangs on one file, as a pathological input could."""
    from mathindex.latex import tree

    if rel == "hang.tex":
        time.sleep(3600)
    return tree._extract_one(path_str, rel, ctx_index)


def test_a_hung_worker_is_killed_and_the_rest_goes_on(tmp_path):
    from mathindex.latex import tree

    for name in ("a.tex", "hang.tex", "z.tex"):
        (tmp_path / name).write_text(GOOD)
    start = time.monotonic()
    result = tree._run_pool(
        _hang,
        [(str(tmp_path / n), n, 0) for n in ("a.tex", "hang.tex", "z.tex")],
        ([tree._merge([])], tree.LabelResolver({}, False, frozenset()), "h", 1.0, 1 << 20, tree.CorpusRoot.of(tmp_path)),
        workers=2,
        hard_s=1.5,
        failed=lambda rel, reason: tree._failed_tables("h", rel, reason),
    )
    assert time.monotonic() - start < 20
    assert result[0][0].num_rows == 1 and result[2][0].num_rows == 1
    assert "hard time limit" in result[1][2].column("reason")[0].as_py()


def test_missing_tags_file_is_an_error_row(tmp_path):
    (tmp_path / "a.tex").write_text(GOOD)
    result = extract_latex_tree(tmp_path, "t", tmp_path / "no-such-tags", workers=1)
    assert result.statements.num_rows == 1
    assert "tags file unreadable" in result.errors.column("reason")[0].as_py()


def test_errors_per_file_are_capped(tmp_path):
    (tmp_path / "many.tex").write_text("\\begin{equation} a\n" * 1000 + GOOD)
    result = extract_latex_tree(tmp_path, "m", workers=1)
    reasons = result.errors.column("reason").to_pylist()
    assert len(reasons) == 201 and reasons[-1] == "800 further errors in this file not listed"
    assert result.statements.num_rows == 1
