"""Lean 4 bracket and binder syntax, the one parser of it: the bracket pairs, splitting at top level,
the type colon, binder groups (`(a b : T)`, `{x}`, `[C α]`, `⦃y⦄`, `{{y}}`) and quantifier binders.
The scanner reads groups as `VarBinder`s; the embedding rules (`mathindex.informal.rules`) and the
telescopes (`mathindex.formal.telescope`) read the `Group`s themselves."""

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


@dataclass(frozen=True)
class Group:
    """One bracketed binder group as written: its opening bracket (`⦃` for `{{`), the stripped text
    inside, and that text split at its first top-level type colon (`head` is all of it without one)."""

    bracket: str
    inner: str
    head: str
    colon: bool
    after: str  # the text after the type colon, "" without one

    @property
    def names(self) -> tuple[str, ...]:
        """The words before the type colon, all the words without one: `(a b : T)` -> (a, b)."""
        return tuple(self.head.split())

    @property
    def type(self) -> str | None:
        """The text after the type colon, stripped; None without a colon or with nothing after it."""
        return self.after.strip() or None


def _group_at(text: str, pos: int) -> tuple[Group, int]:
    """The group whose bracket opens at `pos`, and the offset of its closing bracket (-1: not closed,
    the group runs to the end of `text`). `{{x : T}}` is the strict-implicit `⦃x : T⦄`."""
    close = matching(text, pos)
    bracket = "⦃" if text.startswith("{{", pos) else text[pos]
    inner = text[pos + 1 : len(text) if close < 0 else close].strip()
    if bracket == "⦃" and inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1].strip()
    head, colon, after = split_colon(inner)
    return Group(bracket, inner, head, colon, after), close


def leading_groups(text: str) -> tuple[list[Group], int]:
    """The closed binder groups at the start of `text` (a signature, a `variable` line) and the
    offset where they stop: at the first text that is not a group, or at a group never closed."""
    out: list[Group] = []
    pos = 0
    while True:
        pos = _WS.match(text, pos).end()
        if pos >= len(text) or text[pos] not in BINDER_OPEN:
            return out, pos
        group, close = _group_at(text, pos)
        if close < 0:
            return out, pos
        out.append(group)
        pos = close + 1


def groups(text: str) -> list[Group]:
    """The top-level binder groups anywhere in `text`, other text skipped; a group that is not
    closed runs to the end of `text`."""
    out: list[Group] = []
    pos = 0
    while (m := _NEXT_GROUP.search(text, pos)) is not None:
        group, close = _group_at(text, m.start())
        out.append(group)
        if close < 0:
            break
        pos = close + 1
    return out


_NEXT_GROUP = re.compile("[" + re.escape(BINDER_OPEN) + "]")


def var_binder(group: Group) -> VarBinder:
    """The scanner's reading of a group: an instance binder is named only as `[inst : C α]` (one
    name), else it is anonymous and all of its text is its type; a group without a colon has type ""."""
    if group.bracket == "[":
        if group.colon and _HEAD_NAME.fullmatch(group.head):
            names, typ = (group.head.strip(),), group.after.strip()
        else:
            names, typ = (), group.inner
    else:
        names, typ = group.names, group.after.strip()
    return VarBinder(names, group.bracket, typ, frozenset(mentions(_UNIVERSE.sub(r"\1", typ))))


def parse_binders(text: str) -> tuple[list[VarBinder], int]:
    """Binder groups at the start of `text` (`(a b : T)`, `{x}`, `[C α]`, `⦃y⦄`); returns them and the end offset."""
    found, end = leading_groups(text)
    return [var_binder(g) for g in found], end


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
