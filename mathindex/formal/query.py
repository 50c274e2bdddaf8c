"""The Loogle query language, parsed into terms: constants (`Real.sqrt`), quoted name fragments
(`"differ"`), patterns with holes (`_ * (_ ^ _)`, `Real.sqrt ?a * Real.sqrt ?a`), conclusion
patterns (`⊢ tsum _ = _ * tsum _`, `|- _ < _ → tsum _ < tsum _`), separated by top-level commas.

Bad input raises FormalQueryError (a one-line message and the 0-based position in the query) or
UnknownConstant (with the closest known names); never a traceback, never a silent empty result."""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from mathindex.formal.keys import WRITTEN_SORTS
from mathindex.formal.normal import MVAR, WILD, normalise
from mathindex.formal.notation import rename_leaves
from mathindex.formal.telescope import TelescopeBuilder, split
from mathindex.formula.grammar import ParseError, parse_lean
from mathindex.lean.binders import BINDER_OPEN, leading_groups
from mathindex.lookups import ByLast, SortedKeys

_IDENT = r"[A-Za-z_\u03b1-\u03c9\u0391-\u03a9\u1d00-\u1dbf\u2100-\u214f][A-Za-z0-9_'!?\u03b1-\u03c9\u0391-\u03a9\u2080-\u2089\u2090-\u209c]*"
IDENT_RE = re.compile(rf"^{_IDENT}(?:\.{_IDENT})*$")
IDENT_IN = re.compile(rf"(?<![\w.?']){_IDENT}(?:\.{_IDENT})*")  # a dotted name inside a text
_MVAR_RE = re.compile(r"\?([A-Za-z_][A-Za-z0-9_']*)")
_BINDERS = re.compile(r"[∀∃∑∏⨆⨅⋃⋂λ∫]|\bfun\b")
_PAIRS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄"}
_CLOSERS = {v: k for k, v in _PAIRS.items()}


class FormalQueryError(ValueError):
    """A malformed query; `position` is the 0-based character offset of the problem."""

    def __init__(self, message: str, position: int, query: str = ""):
        self.position = position
        self.query = query
        super().__init__(f"{message} at position {position + 1}")


class UnknownConstant(ValueError):
    """A constant the release does not know; `suggestions` are the closest known names, looked for
    (`Vocabulary.suggest`, up to a few hundred ms over whole Mathlib) only when the message or the
    suggestions are read: the fused channel catches the error and reads neither."""

    def __init__(self, name: str, suggestions: list[str] | Callable[[], list[str]]):
        self.name = name
        self._suggestions = suggestions
        super().__init__(name)

    @property
    def suggestions(self) -> list[str]:
        if callable(self._suggestions):
            self._suggestions = self._suggestions()
        return self._suggestions

    def __str__(self) -> str:
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        return f"unknown constant {self.name}{hint}"


class Vocabulary:
    """Every constant name a release knows (declarations and the targets their statements name),
    with lookup by full name, by last component and by spelling."""

    def __init__(self, names: list[str], notation: dict[str, str] | None = None):
        """`names`: any list (a release's vocabulary file is sorted already: then no sort);
        `notation`: constant leaf -> the declaration one notation alone prints with it
        (formal/notations.parquet), rewritten in patterns as the build rewrites statements."""
        self.notation = notation or {}
        self.full = SortedKeys(names)  # `name in full`: membership by bisect
        self.names = self.full.keys

    @cached_property
    def by_last(self) -> ByLast:
        """The full names by last component, in order; made when first asked (a full name's look-up needs none)."""
        return ByLast(self.names)

    def resolve(self, name: str) -> list[str]:
        """[name] when it is a full name (`ℕ` is `Nat`); else every full name ending in `.name`; else []."""
        name = WRITTEN_SORTS.get(name, name)
        if name in self.full:
            return [name]
        last = name.rsplit(".", 1)[-1]
        return [n for n in self.by_last.get(last, []) if n.endswith("." + name)]

    def known_component(self, name: str) -> bool:
        return name in self.full or name.rsplit(".", 1)[-1] in self.by_last

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Close spellings (difflib) among names sharing the namespace or the first letters."""
        prefix = name.rsplit(".", 1)[0] + "." if "." in name else ""
        pool = [x for x in self._around(prefix, name) if x != name]
        found = _closest(name, pool, n)
        if not found:
            last = name.rsplit(".", 1)[-1]
            lasts = difflib.get_close_matches(last, list(self.by_last), n=n, cutoff=0.75)
            found = [self.by_last[x][0] for x in lasts]
        return found

    def _around(self, prefix: str, name: str) -> list[str]:
        key = prefix + name[len(prefix):len(prefix) + 2] if prefix else name[:2]
        lo = bisect.bisect_left(self.names, key)
        hi = bisect.bisect_left(self.names, key + "\uffff")
        pool = self.names[lo:hi]
        if len(pool) > 20_000:
            pool = pool[:20_000]
        return pool


def _closest(name: str, pool: list[str], n: int, cutoff: float = 0.6) -> list[str]:
    """The best difflib matches, and only those nearly as close as the best (within 0.1)."""
    scored = []
    for x in pool:
        m = difflib.SequenceMatcher(None, name, x)
        if m.real_quick_ratio() >= cutoff and m.quick_ratio() >= cutoff and (r := m.ratio()) >= cutoff:
            scored.append((r, x))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [x for r, x in scored[:n] if r >= scored[0][0] - 0.1]


@dataclass
class Term:
    """One comma-separated filter of a query."""

    kind: str  # constant | fragment | pattern | conclusion
    text: str
    start: int
    constants: list[list[str]] = field(default_factory=list)  # alternatives per named constant
    fragment: str = ""
    tree: tuple | None = None  # pattern: the whole term
    hypotheses: list[tuple] = field(default_factory=list)  # pattern / conclusion: its telescope
    conclusion: tuple | None = None


def split_terms(query: str) -> list[tuple[str, int]]:
    """(term text, start offset) at top-level commas; a binder's own comma (`∀ x, p x`,
    `∑ i ∈ s, f i`) stays inside its term. Unbalanced brackets and quotes raise FormalQueryError."""
    terms: list[tuple[str, int]] = []
    stack: list[tuple[str, int]] = []
    start, pending, i = 0, 0, 0
    while i < len(query):
        c = query[i]
        if c == '"':
            j = query.find('"', i + 1)
            if j < 0:
                raise FormalQueryError("unterminated name fragment (missing closing \")", i, query)
            i = j + 1
            continue
        if c in _PAIRS:
            stack.append((c, i))
        elif c in _CLOSERS:
            if not stack or stack[-1][0] != _CLOSERS[c]:
                raise FormalQueryError(f"unmatched {c!r}", i, query)
            stack.pop()
        elif _BINDERS.match(query, i):
            pending += 1
        elif c == "," and not stack:
            if pending:
                pending -= 1
            else:
                terms.append((query[start:i], start))
                start = i + 1
        i += 1
    if stack:
        c, pos = stack[-1]
        raise FormalQueryError(f"unclosed {c!r}", pos, query)
    terms.append((query[start:], start))
    return terms


def parse_query(query: str, vocab: Vocabulary) -> list[Term]:
    """The terms of a Loogle query; raises FormalQueryError / UnknownConstant on bad input."""
    if not query.strip():
        raise FormalQueryError("empty query", 0, query)
    out = []
    for text, start in split_terms(query):
        lead = len(text) - len(text.lstrip())
        body, at = text.strip(), start + lead
        if not body:
            raise FormalQueryError("empty term between commas", start, query)
        out.append(parse_term(body, at, vocab, query))
    return out


def parse_term(body: str, at: int, vocab: Vocabulary, query: str = "") -> Term:
    if body.startswith('"'):
        if len(body) < 2 or not body.endswith('"') or '"' in body[1:-1]:
            raise FormalQueryError("a name fragment is one quoted string", at, query)
        if len(body) == 2:
            raise FormalQueryError("empty name fragment", at, query)
        return Term("fragment", body, at, fragment=body[1:-1])
    if IDENT_RE.match(body) and body != "_":
        return Term("constant", body, at, constants=[_resolve(body, vocab)])
    conclusion = body.startswith("⊢") or body.startswith("|-")
    if conclusion:
        skip = 1 if body.startswith("⊢") else 2
        inner = body[skip:]
        at += skip + len(inner) - len(inner.lstrip())
        body = inner.strip()
        if not body:
            raise FormalQueryError("⊢ needs a pattern after it", at, query)
    term = pattern_term(body, at, vocab, query, strict=True)
    if conclusion:
        term.kind = "conclusion"
    return term


def pattern_term(body: str, at: int, vocab: Vocabulary | None, query: str = "", strict: bool = True) -> Term:
    """A pattern's normal-form tree and telescope; named constants resolved when `vocab` is given
    (`strict`: an unknown dotted or long name raises UnknownConstant, else it is left out)."""
    constants = named_constants(body, vocab, strict) if vocab is not None else []
    text = _MVAR_RE.sub(lambda m: MVAR + m.group(1), body)
    try:
        raw = parse_lean(text)
    except ParseError as exc:
        raise FormalQueryError(f"malformed pattern: {exc}", at + offending_position(body, str(exc)), query) from None
    tele = split(raw, [], query=True)
    whole = tele.conclusion if not tele.hypotheses else normalise(raw, query=True)
    if _has_empty(whole):  # checked after normalising: a big operator's empty limit slot is no error
        raise FormalQueryError("malformed pattern: an operator lacks an operand", at + _dangling(body), query)
    term = Term("pattern", body, at, constants=constants, tree=whole, hypotheses=tele.hypotheses,
                conclusion=tele.conclusion)
    return _notation(term, vocab.notation) if vocab is not None and vocab.notation else term


def _notation(term: Term, notation: dict[str, str]) -> Term:
    """The term with its constant leaves that stand for a notation's declaration renamed as the
    build renames them (`cexp` is `Complex.exp`: `exp`), and that declaration among its constants."""
    leaves = {x[1] for x in _leaves([term.tree, *term.hypotheses]) if x[0] == "#c"} & notation.keys()
    if not leaves:
        return term
    last = {leaf: notation[leaf].rsplit(".", 1)[-1] for leaf in leaves}
    term.tree = rename_leaves(term.tree, last)
    term.conclusion = rename_leaves(term.conclusion, last)
    term.hypotheses = [rename_leaves(h, last) for h in term.hypotheses]
    term.constants = term.constants + [[notation[leaf]] for leaf in sorted(leaves)]
    return term


CARD_LEAF = "card"  # the leaf a statement's `#s` becomes (`Finset.card`, `Fintype.card`, `Nat.card`: formal.notation)


def card_reading(term: Term) -> Term | None:
    """The term with each `|x|` read as a cardinality (`card x`), or None when it has no `|x|`.
    People write `|s|` for the size of a finite set where Mathlib writes `#s`; Loogle mode keeps
    the bars as written, the fused channel scores both readings (`FormalSearch._score_piece`)."""
    if not any(x[0] == "abs" for x in _nodes([term.tree, *term.hypotheses])):
        return None
    return Term(term.kind, term.text, term.start, constants=term.constants, fragment=term.fragment,
                tree=_abs_as_card(term.tree), hypotheses=[_abs_as_card(h) for h in term.hypotheses],
                conclusion=_abs_as_card(term.conclusion))


def _abs_as_card(t):
    if t is None or t[0][0] == "#" or t[0] in ("?", "_"):
        return t
    kids = tuple(_abs_as_card(k) if isinstance(k, tuple) else k for k in t[1:])
    return ("apply", ("#c", CARD_LEAF), *kids) if t[0] == "abs" else (t[0], *kids)


def _nodes(trees: list[tuple]):
    stack = [t for t in trees if t is not None]
    while stack:
        x = stack.pop()
        yield x
        if x[0][0] != "#" and x[0] not in ("?", "_"):
            stack.extend(k for k in x[1:] if isinstance(k, tuple))


def _leaves(trees: list[tuple]):
    stack = list(trees)
    while stack:
        x = stack.pop()
        if x[0] in ("#v", "#c"):
            yield x
        elif x[0][0] != "#" and x[0] not in ("?", "_"):
            stack.extend(k for k in x[1:] if isinstance(k, tuple))


def signature_term(text: str, vocab: Vocabulary | None) -> Term:
    """`(binders) : type` or `: type` as a pattern: the binders' types and the type's premises are
    its hypotheses, the type's conclusion its conclusion (free names are holes)."""
    text = text.strip()
    groups, end = leading_groups(text)
    rest = text[end:]
    if rest and rest[0] in BINDER_OPEN:  # the groups stopped at one never closed
        raise FormalQueryError("unclosed binder", end, text)
    if not rest.startswith(":") or rest.startswith(":="):
        raise FormalQueryError("a signature needs `: type`", end, text)
    binders = text[:end]
    hyps = TelescopeBuilder(query=True).binder_hypotheses(binders) if groups else []
    body = rest[1:].strip()
    constants = named_constants(body, vocab, strict=False) if vocab is not None else []
    try:
        raw = parse_lean(_MVAR_RE.sub(lambda m: MVAR + m.group(1), body))
    except ParseError as exc:
        raise FormalQueryError(f"malformed pattern: {exc}", len(text) - len(body), text) from None
    tele = split(raw, hyps, query=True)
    return Term("pattern", text, 0, constants=constants, tree=tele.conclusion, hypotheses=tele.hypotheses,
                conclusion=tele.conclusion)


def named_constants(body: str, vocab: Vocabulary, strict: bool = True) -> list[list[str]]:
    """The known constants a Lean text names, one list of alternatives per name as written: a
    root name when the vocabulary has it, a dotted one by `Vocabulary.resolve`; bare names that
    are not constants are variables (`strict`: an unknown dotted or long name raises UnknownConstant)."""
    constants = []
    for m in IDENT_IN.finditer(_MVAR_RE.sub(" ", body)):
        name = m.group(0)
        if name in ("fun", "if", "then", "else", "_") or name.startswith("_") or name in WRITTEN_SORTS:
            continue  # `(-1 : ℤ)`, `∑' n : ℕ`: the trees keep no types, nor do the constants a pattern requires
        if "." not in name:  # a root constant, else a variable or a last component (tree keys)
            if name in vocab.full:
                constants.append([name])
            elif strict and len(name) >= 4 and not vocab.known_component(name):
                raise UnknownConstant(name, lambda: vocab.suggest(name))
            continue
        found = vocab.resolve(name)
        if found:
            constants.append(found)
        elif strict:
            raise UnknownConstant(name, lambda: vocab.suggest(name))
    return constants


def _resolve(name: str, vocab: Vocabulary) -> list[str]:
    found = vocab.resolve(name)
    if not found:
        raise UnknownConstant(name, lambda: vocab.suggest(name))
    return found


def _has_empty(t: tuple) -> bool:
    stack = [t]
    while stack:
        x = stack.pop()
        if not isinstance(x, tuple) or not x:  # a binder's name (`typed` nodes carry strings)
            continue
        if x == ("#e",):
            return True
        if x[0] and x[0][0] != "#":
            stack.extend(x[1:])
    return False


def offending_position(body: str, message: str) -> int:
    """Where the token a grammar message quotes first occurs in the pattern (else 0)."""
    m = re.search(r"'([^']+)'", message)
    if m:
        tok = m.group(1).lstrip("\\")
        pos = body.find(tok)
        if pos >= 0:
            return pos
    return len(body) - 1 if "end" in message else 0


def _dangling(body: str) -> int:
    """The operator without an operand: the last non-space character, when it is an operator."""
    stripped = body.rstrip()
    if stripped and not (stripped[-1].isalnum() or stripped[-1] in "_)]}⟩'"):
        return len(stripped) - 1
    m = re.search(r"[(\[{,]\s*[*+/^=<>≤≥∣∈∪∩•]|[*+/^=<>≤≥∣∈∪∩•]\s*[)\]},]", body)
    if m:
        return m.start() + (1 if body[m.start()] in "([{," else 0)
    m = re.match(r"\s*[*+/^=<>≤≥∣∈∪∩•]", body)
    return m.end() - 1 if m else 0


__all__ = ["FormalQueryError", "Term", "UnknownConstant", "Vocabulary", "WILD", "named_constants", "parse_query", "pattern_term", "signature_term", "split_terms"]
