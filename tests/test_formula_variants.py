"""The seeded rewrite rules of the formula variant suite (bench/common/formula_variants.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from bench.common.formula_variants import RULES, apply_rule
from mathindex.formula.grammar import parse_latex

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_suite_file_names_known_rules_and_enough_formulas() -> None:
    suite = yaml.safe_load((BENCH / "suites/formula_variants.yaml").read_text(encoding="utf-8"))
    assert suite["sample"]["formulas"] >= 500 and isinstance(suite["seed"], int)
    for rule in suite["rules"]:
        assert all(part in RULES for part in rule["name"].split("+"))


def test_rules_are_seeded() -> None:
    s = r"\sum_{i=1}^{n} a_i b_i = \frac{x}{y} + z"
    for name in RULES:
        assert apply_rule(name, s, random.Random(7)) == apply_rule(name, s, random.Random(7))


@pytest.mark.parametrize(
    ("rule", "src", "expected"),
    [
        ("commute", "a + b = c", "c = a + b"),
        ("commute", r"f : X \to Y", None),  # no top-level commutative operator to reverse
        ("frac_slash", r"\frac{a+b}{c}", "(a+b)/c"),
        ("frac_slash", "x/y", r"\frac{x}{y}"),
        ("cdot", r"a \cdot b", "a b"),
        ("cdot", "2ab", r"2a \cdot b"),
        ("left_right", r"\left( a \right)", "( a )"),
        ("left_right", "f(x)", r"f\left(x\right)"),
        ("spacing_font", r"\mathcal{F}=G", r"\mathscr{F}\;=\;G"),
    ],
)
def test_rule_examples(rule: str, src: str, expected: str | None) -> None:
    assert apply_rule(rule, src, random.Random(1)) == expected


def test_rename_is_a_bijection_that_keeps_structure() -> None:
    s = r"\alpha x + y = \mathcal{F}(x)"
    v = apply_rule("rename", s, random.Random(3))
    assert v is not None and v != s
    assert "\\mathcal{" in v
    from mathindex.formula.paths import path_tokens

    assert sorted(path_tokens(parse_latex(s))) == sorted(path_tokens(parse_latex(v)))


def test_notation_variants_parse_to_the_same_tree() -> None:
    s = r"\left(a + b\right) \cdot \frac{c}{d} = \mathcal{F}"
    for rule in ("frac_slash", "left_right", "spacing_font"):
        v = apply_rule(rule, s, random.Random(2))
        assert v is not None
        assert parse_latex(v) == parse_latex(s), (rule, v)
