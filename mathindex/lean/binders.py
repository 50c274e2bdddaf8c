"""Lean 4 bracket and binder syntax, for the scanner, the proof-reference pass and the embedding
rules (`mathindex.informal.rules`): the bracket pairs, splitting at top level, binder groups
(`(a b : T)`, `{x}`, `[C α]`, `⦃y⦄`, `{{y}}`), the type colon, quantifier binders."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mathindex.lean.lexer import ATOM, KEYWORDS, LOCALISH, NAME, mentions

BRACKETS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "⟮": "⟯", "⟦": "⟧"}
OPEN = "".join(BRACKETS)
CLOSE = "".join(BRACKETS.values())
BINDER_OPEN = "([{⦃"  # the brackets a binder group can open with
OPENERS = re.compile("[" + re.escape(OPEN) + "]")
CLOSERS = re.compile("[" + re.escape(CLOSE) + "]")
_BR = re.compile("[" + re.escape(OPEN + CLOSE) + "]")
_BR_OR_COMMA = re.compile("[" + re.escape(OPEN + CLOSE) + ",]")
# the type colon: not `:=`, not either colon of `::`
_BR_OR_COLON = re.compile("[" + re.escape(OPEN + CLOSE) + "]|(?<!:):(?![=:])")
_WS = re.compile(r"\s*")
_HEAD_NAME = re.compile(r"\s*" + ATOM + r"\s*")
_UNIVERSE = re.compile(r"\b(Type|Sort)\s*(?:\*|_|\([^()]*\)|[\w.]+(?:\s*\+\s*\d+)?)")

# a quantifier, big operator or `fun` and the names it binds, up to `,`, `:`, `=>`, `↦` or a relation
BINDER_INTRO = re.compile(r"(?:∀|∃!?|fun|λ|⨆|⨅|∑|∏|⋃|⋂|∫⁻?|Π|Σ|∃ᶠ|∀ᶠ)\s+([^,:=↦]*?)\s*(?:,|:|=>|↦|∈|∉|<|≤|>|≥|⊆|≠)")
# a typed binder group: its names and the first word of its type
BINDER_TYPED = re.compile(r"[({⦃\[]\s*([^(){}\[\]⦃⦄:]+?)\s*:(?!=)\s*([^\s(){}\[\]⦃⦄,]*)")
# an innermost binder group
BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|⦃[^⦃⦄]*⦄")


@dataclass
class VarBinder:
    """One binder group: names (empty for an anonymous `[C x]`), bracket, type, its identifiers."""

    names: tuple[str, ...]
    bracket: str
    type: str
    idents: frozenset[str]


def type_head(typ: str) -> str | None:
    """The constant a binder type is headed by (`SimpleGraph V` -> `SimpleGraph`), if any."""
    m = NAME.match(typ.strip())
    if not m or m.group() in KEYWORDS or LOCALISH.match(m.group()):
        return None
    return m.group()


def _top_level(text: str, pat: re.Pattern):
    """The matches of `pat` (brackets or separators) that are separators outside every bracket."""
    depth = 0
    for m in pat.finditer(text):
        ch = m.group()
        if ch in OPEN:
            depth += 1
        elif ch in CLOSE:
            depth -= 1
        elif depth == 0:
            yield m


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split `text` at `sep` characters outside brackets."""
    if sep not in text:
        return [text]
    pat = _BR_OR_COMMA if sep == "," else re.compile("[" + re.escape(OPEN + CLOSE + sep) + "]")
    out, last = [], 0
    for m in _top_level(text, pat):
        out.append(text[last : m.start()])
        last = m.end()
    out.append(text[last:])
    return out


def split_colon(text: str) -> tuple[str, bool, str]:
    """`text` split at its first top-level type colon: (before, found, after)."""
    m = next(_top_level(text, _BR_OR_COLON), None)
    return (text[: m.start()], True, text[m.end() :]) if m else (text, False, "")


def matching(text: str, pos: int) -> int:
    """Offset of the bracket closing the one at `pos`, or -1."""
    depth = 0
    for m in _BR.finditer(text, pos):
        if m.group() in OPEN:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def groups(text: str) -> list[tuple[str, str]]:
    """The top-level binder groups anywhere in `text`, as (opening bracket, inner text); a group
    that is not closed runs to the end of `text`."""
    out = []
    pos = 0
    while True:
        m = _NEXT_GROUP.search(text, pos)
        if m is None:
            return out
        i = matching(text, m.start())
        end = len(text) if i < 0 else i
        out.append((m.group(), text[m.start() + 1 : end]))
        pos = end + 1


_NEXT_GROUP = re.compile("[" + re.escape(BINDER_OPEN) + "]")


def parse_binders(text: str) -> tuple[list[VarBinder], int]:
    """Binder groups at the start of `text` (`(a b : T)`, `{x}`, `[C α]`, `⦃y⦄`); returns them and the end offset."""
    out: list[VarBinder] = []
    pos = 0
    n = len(text)
    while True:
        pos = _WS.match(text, pos).end()
        if pos >= n or text[pos] not in BINDER_OPEN:
            return out, pos
        opener = text[pos]
        if text.startswith("{{", pos):
            opener = "⦃"
        i = matching(text, pos)
        if i < 0:
            return out, pos
        inner = text[pos + 1 : i].strip()
        if opener == "⦃" and inner.startswith("{") and inner.endswith("}"):
            inner = inner[1:-1].strip()
        pos = i + 1
        head, colon, typ = split_colon(inner)
        if opener == "[":
            if colon and _HEAD_NAME.fullmatch(head):
                names: tuple[str, ...] = (head.strip(),)
            else:
                names, typ = (), inner
        elif colon:
            names = tuple(head.split())
        else:
            names, typ = tuple(inner.split()), ""
        out.append(VarBinder(names, opener, typ.strip(), frozenset(mentions(_UNIVERSE.sub(r"\1", typ)))))


def parse_binders_anywhere(text: str) -> list[VarBinder]:
    """Binder groups anywhere in `text` (for `include`/`omit`, which mix names and binders)."""
    out: list[VarBinder] = []
    for m in BRACKETED.finditer(text):
        out.extend(parse_binders(m.group())[0])
    return out


def format_binder(b: VarBinder, names: tuple[str, ...] | None = None) -> str:
    """A binder as Lean source text, optionally restricted to some of its names."""
    names = b.names if names is None else names
    if b.bracket == "[" and not b.names:
        return f"[{b.type}]"
    if not b.type:
        return f"{b.bracket}{' '.join(names)}{BRACKETS[b.bracket]}"
    return f"{b.bracket}{' '.join(names)} : {b.type}{BRACKETS[b.bracket]}"
