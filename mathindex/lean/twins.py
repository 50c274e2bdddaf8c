"""The statement of a generated twin (`@[to_dual]`, `@[to_additive]`), written from its source's text.

The extractor reads only the source's text, so a twin would show, embed and match its source's
statement: `min_le_min` as `max a b ≤ max c d`, `Finset.sum_comm` as a product. `twin_statement`
writes the twin's own by a token rule, and None where the rule cannot state it faithfully (the twin
then keeps its source's text).

`to_dual` states the source in the order dual:
- a reversed relation keeps its operands and flips its symbol (`le_max_left : a ≤ max a b` gives
  `min_le_left : a ≥ min a b`, the proposition Mathlib states as `min a b ≤ a`); `⊔`/`⊓`, `⊤`/`⊥`
  and `⨆`/`⨅` swap;
- identifiers translate component by component through `names.dual_name` (Mathlib's own guess,
  which names the twins: `max`/`min`, `sSup`/`sInf`, `IsLUB`/`IsGLB`, `Ici`/`Iic`, `atTop`/`atBot`);
- two-argument intervals swap their arguments (`Ico a b` is `Ioc b a`) when both are a name or a
  bracketed group.
- None for category-theory duals (arrows reverse: `⟶`, `≫`, `⥤`), covering relations, statements
  that name the order dual itself (`toDual`, `ofDual`, `ᵒᵈ`) and intervals it cannot swap.

`to_additive` states the source additively: `*` is `+`, `∏` is `∑`, `→*` is `→+`, `≃*` is `≃+`, and
identifiers translate through `names.additive_name` (`Monoid` → `AddMonoid`, `Finset.prod` →
`Finset.sum`, `mul_one` → `add_zero`). None where a token does not say what it becomes: a numeral
`1` (the monoid's one becomes `0`, a natural number's stays), `^` (`a ^ n` is `n • a`: its operands
move), `⁻¹`, `/` and `•`, which is a third of Mathlib's twins.

In both, a name that `@[to_dual foo]` or `@[to_additive foo]` gives explicitly translates through
`explicit` (source name -> twin name); keywords and one-letter variables stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mathindex.lean import names
from mathindex.lean.lexer import ATOM, KEYWORDS, LOCALISH, NAME

_NAME_TOKEN = r"(?<![\w.'!?])" + NAME.pattern
_ARG = rf"(?:{ATOM}(?:\.{ATOM})*|\((?:[^()]|\([^()]*\))*\))"
_INTERVAL = re.compile(rf"(?<![\w'!?])((?:{ATOM}\.)*)(Icc|Ico|Ioc|Ioo)\s+({_ARG})\s+({_ARG})(?![\w'!?.])")
_ANY_INTERVAL = re.compile(rf"(?<![\w'!?])(?:{ATOM}\.)*(?:Icc|Ico|Ioc|Ioo)(?![\w'!?])")


@dataclass(frozen=True)
class _Rule:
    symbols: dict[str, str]  # operator -> its twin's
    keep: str  # operators that contain a symbol's characters without being it: kept as written
    refuse: re.Pattern  # a text this matches cannot be stated by the rule
    guess: Callable[[str], str]  # one name component -> its twin's (names.py)
    swap_intervals: bool = False

    def token(self) -> re.Pattern:
        symbols = "|".join(re.escape(s) for s in sorted(self.symbols, key=len, reverse=True))
        return re.compile(rf"({self.keep})|({symbols})|({_NAME_TOKEN})")


_RULES = {
    "to_dual": _Rule(
        symbols={"≤": "≥", "≥": "≤", "<": ">", ">": "<", "<=": ">=", ">=": "<=",
                 "⊔": "⊓", "⊓": "⊔", "⊤": "⊥", "⊥": "⊤", "⨆": "⨅", "⨅": "⨆"},
        keep=r"<->|<-|->|=>|<\||\|>|<;>|<\$>|<\*>|<\*|\*>|>>=|>>|<<|<\|>",
        refuse=re.compile(r"[⟶≫⥤⟹⋙⋖⩿]|ᵒᵈ|\b(?:toDual|ofDual|OrderDual)\b"),
        guess=names.dual_name, swap_intervals=True),
    "to_additive": _Rule(
        symbols={"*": "+", "∏": "∑", "→*": "→+", "≃*": "≃+", "→ₙ*": "→ₙ+"},
        keep=r"Type\*|Sort\*|<\*>|<\*|\*>|→\*₀|≃\*o|\*ᵐᵒᵖ",
        refuse=re.compile(r"(?<![\w.'₀-₉])1(?![\w.₀-₉])|[\^/•∣]|⁻¹|→\*₀|≃\*o"),
        guess=names.additive_name),
}
_TOKENS = {kind: rule.token() for kind, rule in _RULES.items()}


def twin_name(kind: str, written: str, explicit: dict[str, str] | None = None) -> str:
    """A constant's name as the `kind` twin writes it: `explicit` (source -> twin names), else the
    guess of names.py on each component; keywords and one-letter variables stay."""
    if explicit and written in explicit:
        return explicit[written]
    if written in KEYWORDS or LOCALISH.match(written):
        return written
    guess = _RULES[kind].guess
    return ".".join(c if LOCALISH.match(c) else guess(c) for c in written.split("."))


def _swap_intervals(text: str) -> str | None:
    """`Ico a b` -> `Ico b a` (the name itself translates with the other identifiers); None when
    some interval is applied to anything but two names or bracketed groups."""
    swapped = _INTERVAL.sub(lambda m: f"{m.group(1)}{m.group(2)} {m.group(4)} {m.group(3)}", text)
    if len(_ANY_INTERVAL.findall(text)) != len(_INTERVAL.findall(text)):
        return None
    return swapped


def twin_statement(kind: str, text: str, explicit: dict[str, str] | None = None) -> str | None:
    """The `kind` twin's statement text (a signature, a type or variable binders) from its source's,
    or None when the token rule cannot state it (see the module's docstring)."""
    if not text:
        return text
    rule = _RULES[kind]
    if rule.refuse.search(text):
        return None
    if rule.swap_intervals:
        text = _swap_intervals(text)
        if text is None:
            return None

    def token(m: re.Match) -> str:
        keep, symbol, name = m.groups()
        if keep:
            return keep
        if symbol:
            return rule.symbols[symbol]
        return twin_name(kind, name, explicit)

    return _TOKENS[kind].sub(token, text)
