"""Lexical normalisation of names and prose for BM25: identifiers split into words."""

from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+|[∀∃∑∏∫∞≤≥≠∈∉⊆⊂∪∩∣→↔⁻¹√]", re.UNICODE)
STOPWORDS = frozenset(
    "a an the of and or to in on for is are be by with that this it its as at from if then any every "
    "all each there such which we let".split()
)


def tokens(text: str) -> list[str]:
    """Lowercased word tokens: `Nat.Prime.two_le` -> nat prime two le; `IsCyclic` -> is cyclic."""
    out = []
    for word in _WORD.findall(text or ""):
        for part in _CAMEL.split(word):
            low = part.lower()
            if low and low not in STOPWORDS:
                out.append(low)
    return out
