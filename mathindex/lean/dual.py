"""The statement of a `@[to_dual]` twin, written from its source's text.

Lean's `to_dual` states the twin in the order dual of its source: `≤` and `<` reverse, `⊔`/`⊓`,
`⊤`/`⊥` and `⨆`/`⨅` swap, and so do the constants the dual word table names (`max`/`min`,
`sSup`/`sInf`, `IsLUB`/`IsGLB`, `upperBounds`/`lowerBounds`, `Ici`/`Iic`, `atTop`/`atBot`,
`succ`/`pred`, ...). The extractor reads only the source's text, so `min_le_min` would show, embed
and match `max a b ≤ max c d`. `dual_statement` writes the twin's own:

- a reversed relation keeps its operands and flips its symbol (`le_max_left : a ≤ max a b` gives
  `min_le_left : a ≥ min a b`, the proposition Mathlib states as `min a b ≤ a`);
- identifiers translate component by component through `names.dual_name` (Mathlib's own guess,
  which names the twins), except one-letter variables and keywords; a name `@[to_dual foo]` gives
  explicitly translates through `explicit`;
- two-argument intervals swap their arguments (`Ico a b` is `Ioc b a`) when both are a name or a
  bracketed group.

The token rule cannot state every dual: category-theory duals reverse arrows (`⟶`, `≫`, `⥤`), and
a statement that names the order dual itself (`toDual`, `ofDual`, `ᵒᵈ`) or an interval it cannot
swap would come out wrong. For those `dual_statement` returns None and the twin keeps its source's
text, as before.
"""

from __future__ import annotations

import re

from mathindex.lean import names
from mathindex.lean.lexer import ATOM, KEYWORDS, LOCALISH, NAME

_SYMBOLS = {"≤": "≥", "≥": "≤", "<": ">", ">": "<", "<=": ">=", ">=": "<=",
            "⊔": "⊓", "⊓": "⊔", "⊤": "⊥", "⊥": "⊤", "⨆": "⨅", "⨅": "⨆"}
# ASCII operators that contain `<` or `>` without being an order: kept as written
_KEEP = r"<->|<-|->|=>|<\||\|>|<;>|<\$>|<\*>|<\*|\*>|>>=|>>|<<|<\|>"
_NAME_TOKEN = r"(?<![\w.'!?])" + NAME.pattern
_TOKEN = re.compile(rf"({_KEEP})|(<=|>=|[≤≥<>⊔⊓⊤⊥⨆⨅])|({_NAME_TOKEN})")
# where the token rule cannot reach: a category's arrows, covering relations, the order dual named
_UNTRANSLATABLE = re.compile(r"[⟶≫⥤⟹⋙⋖⩿]|ᵒᵈ|\b(?:toDual|ofDual|OrderDual)\b")
_ARG = rf"(?:{ATOM}(?:\.{ATOM})*|\((?:[^()]|\([^()]*\))*\))"
_INTERVAL = re.compile(rf"(?<![\w'!?])((?:{ATOM}\.)*)(Icc|Ico|Ioc|Ioo)\s+({_ARG})\s+({_ARG})(?![\w'!?.])")
_ANY_INTERVAL = re.compile(rf"(?<![\w'!?])(?:{ATOM}\.)*(?:Icc|Ico|Ioc|Ioo)(?![\w'!?])")


def dual_name(written: str, explicit: dict[str, str] | None = None) -> str:
    """A constant's name as the order dual writes it: `explicit` (source -> twin names), else the
    guess of `names.dual_name` on each component; keywords and one-letter variables stay."""
    if explicit and written in explicit:
        return explicit[written]
    if written in KEYWORDS or LOCALISH.match(written):
        return written
    return ".".join(c if LOCALISH.match(c) else names.dual_name(c) for c in written.split("."))


def _token(m: re.Match, explicit: dict[str, str]) -> str:
    keep, symbol, name = m.groups()
    if keep:
        return keep
    if symbol:
        return _SYMBOLS[symbol]
    return dual_name(name, explicit)


def _swap_intervals(text: str) -> str | None:
    """`Ico a b` -> `Ico b a` (the name itself translates with the other identifiers); None when
    some interval is applied to anything but two names or bracketed groups."""
    swapped = _INTERVAL.sub(lambda m: f"{m.group(1)}{m.group(2)} {m.group(4)} {m.group(3)}", text)
    if len(_ANY_INTERVAL.findall(text)) != len(_INTERVAL.findall(text)):
        return None
    return swapped


def dual_statement(text: str, explicit: dict[str, str] | None = None) -> str | None:
    """The order dual of a statement's text (a signature, a type or variable binders), or None when
    the token rule cannot state it (see the module's docstring)."""
    if not text:
        return text
    if _UNTRANSLATABLE.search(text):
        return None
    swapped = _swap_intervals(text)
    if swapped is None:
        return None
    table = explicit or {}
    return _TOKEN.sub(lambda m: _token(m, table), swapped)
