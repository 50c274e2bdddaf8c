"""Lexical normalisation of names, prose and formulas for BM25.

Identifiers split into words and stemmed (`Nat.Prime.two_le` -> nat prime two le, `groups` -> group), LaTeX symbol macros become
the Unicode symbols Lean writes (`\\sqcup` -> ⊔, `\\le` -> ≤), and mathematical symbols are tokens
of their own, so a LaTeX query meets a Lean statement on the same tokens.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer  # PyStemmer: Snowball stemmers in C
from latex2mathml.symbols_parser import convert_symbol

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_MACRO = re.compile(r"\\([A-Za-z]+)")
_WORD = re.compile(r"[^\W_]+|[\u2190-\u21FF\u2200-\u22FF\u27C0-\u27EF\u2980-\u2AFF⁻¹√]", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of and or to in on for is are be by with that this it its as at from if then any every "
    "all each there such which we let".split()
)


@lru_cache(maxsize=1)
def _stemmer():
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stemWord(word)


@lru_cache(maxsize=4096)
def _symbol(name: str) -> str:
    """The Unicode character of a LaTeX symbol macro, else the macro's name as a word."""
    code = convert_symbol("\\" + name)
    return chr(int(code, 16)) if code else f" {name} "


def tokens(text: str) -> list[str]:
    """Lowercased, Snowball-stemmed word tokens and symbol tokens, stopwords dropped."""
    text = _MACRO.sub(lambda m: _symbol(m.group(1)), text or "")
    out = []
    for word in _WORD.findall(text):
        for part in _CAMEL.split(word):
            low = part.lower()
            if low and low not in STOPWORDS:
                out.append(_stem(low) if low.isalpha() else low)
    return out
