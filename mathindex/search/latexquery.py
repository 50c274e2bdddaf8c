"""A LaTeX query's text for the word channels (lexical, embedding): its mathematics written the way
the corpus writes it.

Mathlib's statements print Unicode (`ω f ϕ (s₁ ∪ s₂)`, `Sylow p G`, `ℝ`) and its informalisations
read that Unicode as English (informal/rules.py `english`: ∪ -> union, ∅ -> the empty set), while a
LaTeX query writes `\\omega(s_1 \\cup s_2)`, `\\mathrm{Sylow}_p(G)` and `\\mathbb{R}`, which the
embedder and BM25 see as `mathrm`, `mathbb` and backslashed words. `unicode_math` rewrites each
`$…$` piece (the whole query when it has TeX but no `$`) with the formula grammar's and
latex2mathml's symbols (search/symbols.py `keys_of`): font and text wrappers dropped around their
argument, `\\mathbb{R}` -> ℝ, a script or fraktur letter beside its Unicode letters
(`\\mathcal{N}` -> N 𝒩 𝓝, as Lean prints the neighbourhood filter `𝓝 x`), `\\cup` -> ∪, `\\varphi` -> φ,
spacing and sizing commands dropped, commands without a symbol kept as their name (`\\gcd` -> gcd); `english_math` then reads the
Unicode as the informaliser does. Prose outside the pieces is kept as typed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pyarrow.parquet as pq

from mathindex.formula.symbols import ACCENTS, BLACKBOARD, FONT_CLASS, FONTS, SKIP_MACROS, SUBSCRIPT_DIGITS, math_alphabet
from mathindex.informal.rules import english
from mathindex.latex.macros import MacroSet, query_macros
from mathindex.search.symbols import keys_of
from mathindex.store.layout import ReleaseLayout

# $$…$$, $…$, \(…\) and \[…\]: the math pieces of a query
_PIECE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
# a font, text, operator or accent wrapper around a group: its argument stands (`\mathrm{lfp}` -> lfp)
_WRAPPERS = sorted({f.lstrip("\\") for f in (*FONTS, *ACCENTS)} | {"text", "textrm", "textsf", "texttt", "mbox", "mathbb",
                                                      "mathds", "mathbbm", "Bbb"}, key=len, reverse=True)
_WRAPPED = re.compile(r"\\(" + "|".join(re.escape(w) for w in _WRAPPERS) + r")(?![A-Za-z])\s*(\{([^{}]*)\}|([A-Za-z]))")
_BLACKBOARD_FONTS = frozenset({"mathbb", "mathds", "mathbbm", "Bbb"})
# script and fraktur letters (`\\mathcal{N}`, `\\mathfrak{m}`): Lean prints them as Unicode letters (`𝓝 x`,
# `𝒫 s`, `𝔪`); the font classes are the formula grammar's (FONT_CLASS, `math_alphabet`)
_LETTER_CLASSES = {f.lstrip("\\"): c for f, c in FONT_CLASS.items() if c in ("cal", "frak")}
# `\frac{x+y}{2}` -> frac (x+y)/(2): no symbol, so its name stays a word, as for any such command
_FRACTION = re.compile(r"\\([dt]?frac)\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
# `s_1`, `x_{12}` -> s₁, x₁₂ and `^{-1}` -> ⁻¹, as Lean writes them (the grammar's subscript table, read back)
_SUBSCRIPT = re.compile(r"_(?:\{(\d+)\}|(\d))")
_TO_SUBSCRIPT = {v: k for k, v in SUBSCRIPT_DIGITS.items()}
_INVERSE = re.compile(r"\^\{?-1\}?")
_SIZERS = re.compile(r"\\(?:left|right|middle|[bB]igg?[lrm]?)(?![A-Za-z])\s*\.?")
_COMMAND = re.compile(r"\\([A-Za-z]+|[|{}#%&_,;:! ])")
_SKIPPED = frozenset(m.lstrip("\\") for m in SKIP_MACROS if m.startswith("\\")) | {",", ";", ":", "!", " "}
_ESCAPED = {"{": "{", "}": "}", "#": "#", "%": "%", "&": "&", "_": "_"}


def math_pieces(query: str) -> list[tuple[int, int, str]]:
    """(start, end, LaTeX) of each math piece; the whole query as one piece when it has TeX
    (a backslash) but no delimiters."""
    pieces = [(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _PIECE.finditer(query)]
    if not pieces and "\\" in query:
        return [(0, len(query), query)]
    return pieces


@lru_cache(maxsize=4096)
def _symbol(command: str) -> str:
    """The Unicode a command stands for (search/symbols.py `keys_of`: the formula grammar's tables,
    then latex2mathml), else its name as a word."""
    key = keys_of([command])[command]
    return key if not key.startswith("\\") else f" {command[1:]} "


def _blackboard(letters: str) -> str:
    """`\\mathbb{R}` -> ℝ (the grammar's blackboard table read back through its Unicode one)."""
    command = "\\" + letters
    return _symbol(command).strip() if command in BLACKBOARD and len(letters) == 1 else letters


@lru_cache(maxsize=1)
def _math_letters() -> dict[str, str]:
    """`cal:N` -> `𝒩 𝓝`: the Unicode letters of each font-classed letter, by the formula grammar's
    `math_alphabet` read back (the Mathematical Alphanumeric Symbols and the letterlike ones)."""
    out: dict[str, list[str]] = {}
    for cp in [*range(0x1D400, 0x1D5A0), *range(0x2100, 0x2150)]:
        name = math_alphabet(chr(cp))
        if name is not None and unicodedata.category(chr(cp)) != "Cn":  # the alphabets' holes are unassigned
            out.setdefault(name, []).append(chr(cp))
    return {name: " ".join(chars) for name, chars in out.items()}


def _script(font: str, letters: str) -> str:
    """`\\mathcal{N}` -> N 𝒩 𝓝: a single script or fraktur letter with the Unicode letters Lean may
    print for it (`𝓝 x` is the neighbourhood filter), else the argument as typed."""
    forms = _math_letters().get(f"{_LETTER_CLASSES[font]}:{letters}") if len(letters) == 1 else None
    return f" {letters} {forms} " if forms else letters


def unicode_formula(latex: str, script_letters: bool = True) -> str:
    """One piece of LaTeX with its commands as the Unicode (or words) the corpus prints; a script
    or fraktur letter also as its Unicode letters unless `script_letters` is False."""
    s = latex

    def unwrap(m: re.Match) -> str:
        font, argument = m.group(1), m.group(3) if m.group(3) is not None else m.group(4)
        if font in _BLACKBOARD_FONTS:
            return _blackboard(argument)
        return _script(font, argument) if script_letters and font in _LETTER_CLASSES else argument

    for _ in range(4):  # nested wrappers (`\mathrm{\mathbf{x}}`), innermost first
        s, n = _WRAPPED.subn(unwrap, s)
        if not n:
            break
    s = _FRACTION.sub(r" \1 (\2)/(\3) ", s)
    s = _SUBSCRIPT.sub(lambda m: (m.group(1) or m.group(2)).translate(_TO_SUBSCRIPT), s)
    s = _INVERSE.sub("⁻¹", s)
    s = _SIZERS.sub(" ", s)

    def command(m: re.Match) -> str:
        name = m.group(1)
        if name in _SKIPPED:
            return " "
        if name in _ESCAPED:
            return _ESCAPED[name]
        return _symbol("\\" + name)

    s = _COMMAND.sub(command, s)
    s = s.replace("{", "").replace("}", "")
    return " ".join(s.split())


def unicode_math(query: str, script_letters: bool = True) -> str:
    """The query with each math piece as `unicode_formula` writes it (`$` signs dropped)."""
    out, last = [], 0
    for start, end, latex in math_pieces(query):
        out.append(query[last:start])
        out.append(unicode_formula(latex, script_letters))
        last = end
    out.append(query[last:])
    return " ".join("".join(out).split())


def english_math(query: str) -> str:
    """The query with each math piece in Unicode and then read as the informaliser reads Lean
    (informal/rules.py `english`: `s₁ ∪ s₂ = ∅` -> s₁ union s₂ equals the empty set)."""
    out, last = [], 0
    for start, end, latex in math_pieces(query):
        out.append(query[last:start])
        out.append(english(unicode_formula(latex)))
        last = end
    out.append(query[last:])
    return " ".join("".join(out).split())


def release_macros(release: Path) -> MacroSet | None:
    """The LaTeX corpora's macros (latex/macros.py `query_macros`) from the release's `latex_macros`
    table, which queries are expanded with; None for a release without one or without macros."""
    path = ReleaseLayout(release).table("latex_macros")
    return query_macros(pq.read_table(path).to_pylist()) if path.exists() else None
