"""The formula grammar: operator trees, normalisation of notations, Lean terms, bad input."""

from __future__ import annotations

import time

import pytest

from mathindex.formula.api import analyse, describe_formula
from mathindex.formula.grammar import (
    ParseError,
    from_json,
    parse_latex,
    parse_lean,
    tree_json,
    tree_text,
)
from mathindex.formula.paths import path_tokens


def text(src: str) -> str:
    return tree_text(parse_latex(src))


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (r"\sum_{d \mid n} \varphi(d) = n", "(eq (sum (mid d n) _ (apply phi d)) n)"),
        (r"\frac{a}{b} + c", "(add (frac a b) c)"),
        (r"f : X \to Y", "(typed f (to X Y))"),
        (r"\{x \in X \mid f(x) = 0\}", "(setb (in x X) (eq (apply f x) 0))"),
        (r"a - b", "(add a (neg b))"),
        (r"x > y", "(lt y x)"),
        (r"a < b \leq c", "(and (lt a b) (le b c))"),
        (r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}", "(matrix (row a b) (row c d))"),
        (r"a &= b \\ &= c", "(eq a b c)"),
        (r"\lim_{n \to \infty} a_n = 0", "(eq (lim (to n 'inf) _ (sub a n)) 0)"),
        (r"|x|", "(abs x)"),
        (r"\sqrt[3]{x}", "(root x 3)"),
        (r"\mathbb{Z}/n\mathbb{Z}", "(frac 'bbZ (mul n 'bbZ))"),
        (r"\operatorname{Hom}(X, Y)", "(apply 'Hom X Y)"),
        (r"H^i(X, \mathcal{F}) = 0 \text{ for } i > 0",
         "(textsep (eq (apply (pow H i) X cal:F) 0) \"for\" (lt 0 i))"),
    ],
)
def test_operator_trees(src: str, expected: str) -> None:
    assert text(src) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (r"\frac{a}{b}", "a/b"),
        (r"a \cdot b", "a b"),
        (r"\left( a + b \right)^2", "(a+b)^2"),
        (r"\mathcal{F}", r"\mathscr{F}"),
        (r"x\,+\;y", "x + y"),
        (r"\bigl[ a, b \bigr]", "[a,b]"),
        (r"\dfrac{1}{2}", r"\frac12"),
    ],
)
def test_notations_that_mean_the_same_give_the_same_tree(a: str, b: str) -> None:
    assert parse_latex(a) == parse_latex(b)


def test_renaming_a_variable_never_changes_the_tree_shape() -> None:
    from mathindex.formula.paths import path_tokens

    a = path_tokens(parse_latex(r"f(X) = \pi^{-1}(f(Y))"))
    b = path_tokens(parse_latex(r"a(W) = \xi^{-1}(a(Z))"))
    assert sorted(a) == sorted(b)


def test_commuted_operands_share_path_tokens() -> None:
    assert sorted(path_tokens(parse_latex("a + b = c"))) == sorted(path_tokens(parse_latex("c = b + a")))
    # a rank marker under a non-commutative operator keeps numerator and denominator apart
    assert sorted(path_tokens(parse_latex(r"\frac{x}{2}"))) != sorted(path_tokens(parse_latex(r"\frac{2}{x}")))


def test_path_tokens_anonymise_variables_and_keep_constants() -> None:
    toks = path_tokens(parse_latex(r"x^2 + \pi"))
    assert "V/pow#0" in toks and "N2/pow#1" in toks
    assert not any(t.startswith("x") for t in toks)


def test_lean_terms_share_the_vocabulary() -> None:
    lean = parse_lean("∑ d ∈ n.divisors, φ d = n")
    assert tree_text(lean) == "(eq (sum (in d (apply 'divisors n)) _ (apply phi d)) n)"
    latex = parse_latex(r"\sum_{d \mid n} \varphi(d) = n")
    shared = set(path_tokens(lean)) & set(path_tokens(latex))
    assert {"V/apply#1", "V/eq"} <= shared
    assert tree_text(parse_lean("∀ (n : ℕ), 0 < n → n.factorial ≠ 0")) == (
        "(forall (typed n 'bbN) (to (lt 0 n) (neq (apply 'factorial n) 0)))")
    assert tree_text(parse_lean("a⁻¹ * a = 1")) == "(eq (mul (inv a) a) 1)"


def test_json_round_trip() -> None:
    tree = parse_latex(r"\sum_{i=1}^n \frac{1}{i^2} \le \frac{\pi^2}{6}")
    assert from_json(tree_json(tree)) == tree


@pytest.mark.parametrize(
    "src",
    [
        "{" * 10_000 + "x" + "}" * 10_000,  # deep braces, over the length cap
        "{" * 5_000 + "x" + "}" * 5_000,  # deep braces under the length cap
        "(" * 3_000 + "x",  # unbalanced
        r"\left( x + y",  # unbalanced \left
        r"\foo{a}{b} + \bar",  # unknown macro
        "x + " * 25_000,  # 100 k characters
        r"\frac{",
        "",
        "}}}}",
        r"\begin{pmatrix} a & b",
        "+" * 15_000,
        "a & b \\\\ " * 2_000,  # 2 000 aligned lines
        "|" * 4_000,
        "\\left(" * 2_000,
        "∀ x, " * 3_000 + "p",
    ],
)
def test_bad_input_gets_a_status_in_bounded_time(src: str) -> None:
    t0 = time.perf_counter()
    tree, parser, status, reason = analyse(src)
    assert time.perf_counter() - t0 < 2.0
    assert parser in ("grammar", "mathml", "tokens")
    assert status in ("ok", "partial", "fallback", "error")
    assert tree_text(tree)  # printable, no recursion error
    path_tokens(tree)


def test_deep_nesting_is_rejected_not_recursed() -> None:
    with pytest.raises(ParseError):
        parse_latex("{" * 9_000 + "x" + "}" * 9_000)


def test_unknown_macro_parses_as_a_constant() -> None:
    assert text(r"\Spec(R) \to \Spec(A)") == "(to (apply 'Spec R) (apply 'Spec A))"
    assert text(r"\weirdmacro + 1") == "(add 'weirdmacro 1)"


def test_mathml_fallback_records_its_parser() -> None:
    d = describe_formula(r"a \over b \over c \choose d")
    assert d["parser"] in ("grammar", "mathml", "tokens")
    d = describe_formula("{" * 70 + "x" + "}" * 70)  # deeper than the grammar goes: no partial tree
    assert d["status"] == "fallback" and d["parser"] == "mathml" and d["reason"]


def test_describe_formula_keys() -> None:
    d = describe_formula(r"(a+b)^2 = a^2 + 2ab + b^2")
    assert {"tree", "tree_text", "path_tokens", "canonical", "canonical_status", "parser",
            "status"} <= set(d)
    assert d["parser"] == "grammar" and d["status"] == "ok"
    assert d["tree"]["op"] == "eq" and d["tree"]["comm"] is True
    assert d["canonical_status"] == "ok"
    assert d["canonical"] == "Identity(a**2 + 2*a*b + b**2)"


@pytest.mark.parametrize(
    ("lean", "latex"),
    [
        ("⨆ i, ⨅ j, f i j ≤ ⨅ j, ⨆ i, f i j", r"\sup_i \inf_j f(i, j) \le \inf_j \sup_i f(i, j)"),
        ("f f.lfp = f.lfp", r"f(\mathrm{lfp}\,f) = \mathrm{lfp}\,f"),
        ("‖⟪x, y⟫‖ ≤ ‖x‖ * ‖y‖", r"|\langle x, y \rangle| \le \|x\| \cdot \|y\|"),
        ("μ[t | s] = 𝓝 x", r"\mu[t \mid s] = \mathcal{N}(x)"),
        ("x ∉ s", r"x \not\in s"),
    ],
)
def test_lean_and_latex_meet_in_one_tree(lean: str, latex: str) -> None:
    assert parse_lean(lean) == parse_latex(latex)


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("f ≫ g = h", "(eq (compose g f) h)"),
        ("{b : B | b ^ n = 1}", "(setb (typed b B) (eq (pow b n) 1))"),
        ("if n = 0 then 0 else f n", "(ite (eq n 0) 0 (apply f n))"),
        ("HasSum (fun n : ℤ ↦ f n) a", "(apply 'HasSum (lambda (typed n 'bbZ) (apply f n)) a)"),
        ("Function.Injective <| algebraMap A B", "(apply 'Injective (apply 'algebraMap A B))"),
        ("f i.1 i.2", "(apply f (apply 'fst i) (apply 'snd i))"),
        ("(chartAt H x).source ∈ 𝓝 x", "(in (apply 'source (apply 'chartAt H x)) (apply cal:N x))"),
        ("μ[s ∩ t | s] = 1", "(eq (apply mu (bracket (mid (cap s t) s))) 1)"),
        ("#s ≤ |t|", "(le (abs s) (abs t))"),
    ],
)
def test_lean_constructs(src: str, expected: str) -> None:
    assert tree_text(parse_lean(src)) == expected
