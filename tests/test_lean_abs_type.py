"""A type that opens with an absolute value on its own line is a type, not a match arm."""

from mathindex.lean import extract_lean_tree


def test_absolute_value_at_line_start_is_the_type(tmp_path):
    (tmp_path / "A.lean").write_text(
        "theorem abs_le {f : ℕ → ℤ} (s : Finset ℕ) :\n    |∑ i ∈ s, f i| ≤ ∑ i ∈ s, |f i| := by\n  sorry\n\n"
        "def fib : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => n\n"
    )
    rows = {r["full_name"]: r for r in extract_lean_tree(tmp_path, "t").declarations.to_pylist()}
    assert rows["abs_le"]["type"] == "|∑ i ∈ s, f i| ≤ ∑ i ∈ s, |f i|"
    assert rows["fib"]["type"] == "ℕ → ℕ"
