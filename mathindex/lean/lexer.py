"""Lean 4 lexical syntax: comment and string blanking, identifiers and keywords.

`blank(text)` returns text of the same length in which every comment and string body is replaced by
spaces (newlines kept), so offsets and line numbers stay valid and later regexes see only code.
`idents(text)` lists the identifiers of (blanked) code text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# `--` line comment, `/-` block comment, `"` string, or a char literal such as '"' or '\''.
_START = re.compile(r"--|/-|\"|'(?:\\.|[^\\'\n])'")  # no look-behind: keeps the fast scan
_IDENT_TAIL = re.compile(r"[\w'!?.]")
_BLOCK = re.compile(r"/-|-/")
_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
_NOT_NL = re.compile(r"[^\n]")

# One name component: «quoted» or a letter-like character then word characters, `'`, `!`, `?`.
ATOM = r"(?:«[^»\n]*»|[^\W\dλΠΣ¹²³⁰-⁹₀-₉][\w'!?]*)"
NAME = re.compile(ATOM + r"(?:\." + ATOM + r")*")
# a name starting where no identifier character, `.`, `'`, `!` or `?` comes before it: not `inl` of
# `.inl`, not `ar` of `foo.2.bar`, not `_` of `?_`
_IDENT = re.compile(r"(?<![\w.'!?])" + NAME.pattern)
KEYWORDS = {
    "fun", "λ", "let", "have", "show", "from", "by", "at", "if", "then", "else", "do", "match",
    "with", "Type", "Sort", "Prop", "forall", "exists", "in", "where", "deriving", "extends",
    "open", "this", "calc", "return", "mut", "for", "unless", "try", "catch", "finally", "Type*",
    "Sort*", "_",
}
# A variable-like identifier: one letter (Latin, Greek, script) plus digits, subscripts, primes.
LOCALISH = re.compile(r"^[^\W\d_][\d₀-₉'ₐ-ₜᵢ-ᵪⱼ]*$")


def idents(text: str) -> list[str]:
    """Identifiers in code text, in order, as written (with dots)."""
    return _IDENT.findall(text)


def mentions(text: str) -> set[str]:
    """Identifiers in `text` plus the heads of dotted ones (`G.Adj` mentions `G`)."""
    ids = set(_IDENT.findall(text))
    ids.update([i.split(".", 1)[0] for i in ids if "." in i])
    return ids


@dataclass(frozen=True)
class DocComment:
    """A `/-- ... -/` doc comment: offsets of the whole comment and its stripped body."""

    start: int
    end: int
    text: str


@dataclass
class Blanked:
    """Blanked text plus the doc comments and lexical problems (offset, reason) found on the way."""

    text: str
    docs: list[DocComment] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


def _spaces(segment: str) -> str:
    if "\n" not in segment:
        return " " * len(segment)
    return "\n".join(" " * len(line) for line in segment.split("\n"))


def _block_end(text: str, start: int) -> int:
    """Offset just past the `-/` closing the (nested) block comment opened at `start`; -1 if none."""
    depth = 0
    for m in _BLOCK.finditer(text, start):
        if m.group() == "/-":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return -1


def blank(text: str) -> Blanked:
    """Blank comments and string bodies of `text`; doc comments are recorded, never raised on."""
    out: list[str] = []
    result = Blanked(text="")
    pos = 0
    n = len(text)
    while pos < n:
        m = _START.search(text, pos)
        if m is None:
            break
        tok = m.group()
        s = m.start()
        if tok[0] == "'" and s > 0 and _IDENT_TAIL.match(text, s - 1):
            out.append(text[pos : s + 1])  # a prime ending a name, not a char literal
            pos = s + 1
            continue
        out.append(text[pos:s])
        if tok == "--":
            e = text.find("\n", s)
            e = n if e < 0 else e
            out.append(_spaces(text[s:e]))
            pos = e
        elif tok == "/-":
            e = _block_end(text, s)
            if e < 0:
                result.problems.append((s, "unterminated block comment"))
                e = n
            body = text[s:e]
            if body.startswith("/--") and not body.startswith("/--/") and e > s + 4:
                doc = body[3:-2] if body.endswith("-/") else body[3:]
                result.docs.append(DocComment(s, e, doc.strip()))
            out.append(_spaces(body))
            pos = e
        elif tok == '"':
            m2 = _STRING_END.match(text, s + 1)
            if m2 is None:
                result.problems.append((s, "unterminated string literal"))
                out.append('"' + _spaces(text[s + 1 :]))
                pos = n
            else:
                out.append('"' + _spaces(text[s + 1 : m2.end() - 1]) + '"')
                pos = m2.end()
        else:  # char literal: keep its length, hide its content
            out.append("'" + "x" * (len(tok) - 2) + "'")
            pos = m.end()
    out.append(text[pos:])
    result.text = "".join(out)
    return result
