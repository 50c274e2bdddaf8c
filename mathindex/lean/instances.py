"""Lean 4's generated names for anonymous instances, computed from source text.

Follows `Lean.Elab.Command.NameGen.mkBaseNameWithSuffix`: "inst" + the words of the instance type
(each constant's last name component, capitalised; sorts as Type/Prop/Sort; arrows as Forall) +
"Of" + words for each binder the type does not depend on; every constant (and every constant that
is a prefix of the current namespace) is mentioned once. A module suffix is added when no
mentioned constant is from the current project (Lean ≥ 4.2x: `_<project>`, e.g. `_mathlib`).
Without an elaborator, which binders the type depends on is a heuristic (see `_dependent`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mathindex.lean.lexer import KEYWORDS, LOCALISH, NAME
from mathindex.lean.binders import matching, split_top

# notation -> constants it elaborates to (in visiting order), and whether it needs instances
_NOTATION: dict[str, tuple[tuple[str, ...], bool]] = {
    "ℕ": (("Nat",), False), "ℤ": (("Int",), False), "ℚ": (("Rat",), False),
    "ℝ": (("Real",), False), "ℂ": (("Complex",), False), "ℝ≥0": (("NNReal",), False),
    "ℝ≥0∞": (("ENNReal",), False), "ℕ∞": (("ENat",), False), "ℕ+": (("PNat",), False),
    "×": (("Prod",), False), "⊕": (("Sum",), False), "⊕'": (("PSum",), False),
    "≃": (("Equiv",), False), "≃o": (("OrderIso",), True), "→o": (("OrderHom",), True),
    "↪o": (("OrderEmbedding",), True), "↪": (("Function.Embedding",), False),
    "→*": (("MonoidHom",), True), "→+": (("AddMonoidHom",), True), "→+*": (("RingHom",), True),
    "≃*": (("MulEquiv",), True), "≃+": (("AddEquiv",), True), "≃+*": (("RingEquiv",), True),
    "→ₗ": (("LinearMap", "RingHom.id"), True), "≃ₗ": (("LinearEquiv", "RingHom.id"), True),
    "→ₐ": (("AlgHom",), True), "≃ₐ": (("AlgEquiv",), True),
    "→L": (("ContinuousLinearMap", "RingHom.id"), True), "→₀": (("Finsupp",), True),
    "≃ₜ": (("Homeomorph",), True), "→ᵇ": (("BoundedContinuousFunction",), True),
    "≤": (("LE.le",), True), "<": (("LT.lt",), True), "≥": (("GE.ge",), True), ">": (("GT.gt",), True),
    "=": (("Eq",), False), "≠": (("Ne",), False), "∈": (("Membership.mem",), True),
    "∉": (("Not", "Membership.mem"), True), "⊆": (("HasSubset.Subset",), True),
    "∧": (("And",), False), "∨": (("Or",), False), "↔": (("Iff",), False), "¬": (("Not",), False),
    "+": (("HAdd.hAdd",), True), "*": (("HMul.hMul",), True), "-": (("HSub.hSub",), True),
    "/": (("HDiv.hDiv",), True), "•": (("HSMul.hSMul",), True), "^": (("HPow.hPow",), True),
    "∣": (("Dvd.dvd",), True), "⊤": (("Top.top",), True), "⊥": (("Bot.bot",), True),
    "∅": (("EmptyCollection.emptyCollection",), True), "ᵒᵈ": (("OrderDual",), False),
    "ᵐᵒᵖ": (("MulOpposite",), False), "ᵃᵒᵖ": (("AddOpposite",), False), "ᵒᵖ": (("Opposite",), False),
    "[X]": (("Polynomial",), True), "C(": (("ContinuousMap",), True),
    "⟶": (("Quiver.Hom",), True), "⥤": (("CategoryTheory.Functor",), True),
    "≅": (("CategoryTheory.Iso",), True), "≌": (("CategoryTheory.Equivalence",), True),
    "⋙": (("CategoryTheory.Functor.comp",), True),
}
_SORTS = {"Type": "Type", "Prop": "Prop", "Sort": "Sort"}
_TOKEN = re.compile(
    r"ℝ≥0∞|ℝ≥0|ℕ∞|ℕ\+|ℕ|ℤ|ℚ|ℝ|ℂ|⊕'|→ₗ|≃ₗ|→ₐ|≃ₐ|→L|→₀|≃ₜ|→ᵇ|→\+\*|≃\+\*|→\*|→\+|≃\*|≃\+|≃o|→o|↪o|↪|≃|"
    r"ᵒᵈ|ᵐᵒᵖ|ᵃᵒᵖ|ᵒᵖ|\[X\]|C\(|⟶|⥤|≅|≌|⋙|[×⊕≤<≥>=≠∈∉⊆∧∨↔¬+*/•^∣⊤⊥∅-]|\d+|"
    r"(?:Type|Sort)\*?|Prop|" + NAME.pattern
)
_LOWER_WORD = re.compile(r"[a-z]")


@dataclass
class Lookup:
    """Corpus-wide facts for naming: does a full name exist, its module, does it take instances."""

    exists: Callable[[str], bool]
    module_of: Callable[[str], str | None]
    needs_instances: Callable[[str], bool]
    is_prop_class: Callable[[str], bool] = lambda name: False
    binder_text: Callable[[str], str] = lambda name: ""


def resolve(name: str, namespace: str, opens: list[str], exists: Callable[[str], bool]) -> str | None:
    """The full name an identifier refers to, trying namespace prefixes, the root and `open`s."""
    if name.startswith("_root_."):
        name = name[7:]
        return name if exists(name) else None
    parts = namespace.split(".") if namespace else []
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i]) + "." + name
        if exists(cand):
            return cand
    if exists(name):
        return name
    for o in opens:
        if exists(o + "." + name):
            return o + "." + name
    return None


class _Namer:
    def __init__(self, hint: dict, module: str, lookup: Lookup):
        self.ns = hint["ns"]
        self.opens = hint["opens"]
        self.lookup = lookup
        self.module = module
        self.locals = {n for _, names, _ in hint["binders"] for n in names}
        self.seen: set[str] = set()
        self.consts: set[str] = set()

    def const_key(self, written: str) -> tuple[str, str]:
        full = resolve(written, self.ns, self.opens, self.lookup.exists) or written
        return full, full.split(".")[-1]

    def word(self, key: str, last: str) -> str:
        if key in self.seen:
            return ""
        self.seen.add(key)
        self.consts.add(key)
        last = last.strip("«»")
        # Lean's String.capitalize upper-cases ASCII only (`ι` stays `ι`)
        return (last[0].upper() if "a" <= last[:1] <= "z" else last[:1]) + last[1:]

    def words(self, text: str, omit_top: bool = False) -> str:
        """Name words of a type expression in visiting order: arrows become Forall, binder
        constructs (∀, fun) contribute their body, bracketed groups are visited in place.
        `omit_top`: leading foralls whose domain gives no word are dropped (binder types)."""
        text = text.strip()
        m = _BINDER_HEAD.match(text)
        if m:
            body_at = _binder_body(text, m.end())
            if body_at is not None:
                self.locals.update(_binder_names(text[m.end():body_at[0]]))
                rest = self.words(text[body_at[1]:], omit_top)
                return ("Forall" + rest) if m.group(1) in ("∀", "Π") and not omit_top else rest
        arrows = split_top(text.replace("→", "\x00"), "\x00") if "→" in text else [text]
        if len(arrows) > 1:
            out = ""
            for part in arrows[:-1]:
                p = part.strip()
                if p.startswith("(") and ":" in p and p.endswith(")"):  # (x : T) → ...: dependent
                    self.locals.update(_binder_names(p[1:-1].split(":")[0]))
                    w = ""
                else:
                    w = self.words(part)
                if omit_top and not w:
                    continue
                omit_top = False
                out += "Forall" + w
            return out + self.words(arrows[-1])
        out: list[str] = []
        pos = 0
        while True:
            m = _TOKEN_OR_PAREN.search(text, pos)
            if m is None:
                break
            tok = m.group()
            pos = m.end()
            if tok == "(":
                end = matching(text, m.start())
                if end < 0:
                    continue
                inner = _NAMED_ARG.sub("", text[m.end():end])
                dot = _DOT_FIELD.match(text, end + 1)
                if dot:  # (e).F is F applied to e: F is visited first
                    last = dot.group(1).split(".")[-1]
                    out.append(self.word("." + last, last))
                    pos = dot.end()
                else:
                    pos = end + 1
                out.append(self.words(inner))
                continue
            if tok == ")" or tok in ("=>", "↦"):
                continue
            if tok in ("fun", "λ", "∀", "Π"):  # a binder construct: its body runs to the group end
                body_at = _binder_body(text, m.end())
                if body_at is not None:
                    self.locals.update(_binder_names(text[m.end():body_at[0]]))
                    out.append(("Forall" if tok in ("∀", "Π") else "") + self.words(text[body_at[1]:]))
                    break
                continue
            out.append(self.token_word(tok))
        return "".join(out)

    def token_word(self, tok: str) -> str:
        if tok in _NOTATION:
            return "".join(self.word(c, c.split(".")[-1]) for c in _NOTATION[tok][0])
        if tok.rstrip("*") in _SORTS:
            s = _SORTS[tok.rstrip("*")]
            seen = s in self.seen
            self.seen.add(s)
            return "" if seen else s
        if tok.isdigit():
            return self.word("OfNat.ofNat", "OfNat")
        if tok in KEYWORDS or tok in self.locals:
            return ""
        head = tok.split(".")[0]
        if head in self.locals or (LOCALISH.match(head) and "." in tok):
            last = tok.split(".")[-1]  # x.foo: a projection or dot-call on a local
            return self.word("." + last, last) if "." in tok else ""
        if LOCALISH.match(tok):
            return ""
        key, last = self.const_key(tok)
        return self.word(key, last)


_NAMED_ARG = re.compile(r"^\s*[\w']+\s*:=")  # (x := e) passes e
_DOT_FIELD = re.compile(r"\.(" + NAME.pattern + r")")
_BINDER_HEAD = re.compile(r"(∀|Π|fun|λ)\s+")
_TOKEN_OR_PAREN = re.compile(r"[()]|=>|↦|∀|Π|" + _TOKEN.pattern)


def _binder_body(text: str, start: int) -> tuple[int, int] | None:
    """(end of binders, start of body) of `∀ x y, body` or `fun x => body`; None if not found."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch in "([{⦃⟨":
            depth += 1
        elif ch in ")]}⦄⟩":
            depth -= 1
        elif depth == 0:
            if ch == ",":
                return i, i + 1
            if ch == "↦":
                return i, i + 1
            if text.startswith("=>", i):
                return i, i + 2
    return None


def _binder_names(text: str) -> set[str]:
    return {w.strip("()[]{}⦃⦄") for w in re.split(r"[\s:]+", text.split(":")[0]) if w.strip("()[]{}⦃⦄")}


def _needs(text: str, namer: _Namer) -> bool:
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in _NOTATION:
            if _NOTATION[tok][1]:
                return True
        elif NAME.fullmatch(tok) and tok not in namer.locals and not LOCALISH.match(tok):
            full = resolve(tok, namer.ns, namer.opens, namer.lookup.exists)
            if full and namer.lookup.needs_instances(full):
                return True
    return False


def _mentions(text: str) -> set[str]:
    return {m.group() for m in NAME.finditer(text)} | {
        p for m in NAME.finditer(text) for p in m.group().split(".")[:1]
    }


def _dependent(i: int, binders: list, typ: str, namer: _Namer) -> bool:
    """Whether the rest of the type depends on binder i: its name is used later, or it is an
    instance binder over variables that a later part needing instances mentions."""
    bracket, names, btype = binders[i]
    later = [b[2] for b in binders[i + 1:]] + [typ]
    if names:
        if any(n in _mentions(x) for x in later for n in names):
            return True
    if bracket != "[":
        return False
    head = NAME.match(btype.strip())
    cls = resolve(head.group(), namer.ns, namer.opens, namer.lookup.exists) if head else None
    if cls and namer.lookup.is_prop_class(cls):
        # a Prop-valued mixin (IsScalarTower, Fact, ...): used only where a later constant asks for it
        tag = "[" + cls.rpartition(".")[2]
        for x in later:
            for m in _TOKEN.finditer(x):
                tok = m.group()
                if NAME.fullmatch(tok) and tok not in namer.locals and not LOCALISH.match(tok):
                    full = resolve(tok, namer.ns, namer.opens, namer.lookup.exists)
                    if full and full != cls and tag in namer.lookup.binder_text(full):
                        return True
        return False
    vars_ = {v for v in _mentions(btype) if v in namer.locals or LOCALISH.match(v)}
    for x in later:
        if vars_ & _mentions(x) and _needs(x, namer):
            return True
    return False


def instance_name(hint: dict, module: str, lookup: Lookup) -> str:
    """The generated (unqualified) name of an anonymous instance with this hint."""
    namer = _Namer(hint, module, lookup)
    parts = namer.ns.split(".") if namer.ns else []
    for i in range(1, len(parts) + 1):
        p = ".".join(parts[:i])
        if lookup.exists(p):
            namer.seen.add(p)
            namer.consts.add(p)
    typ = hint["type"]
    binders = hint["binders"]
    concl = namer.words(typ)
    ofs: list[str] = []
    for i in range(len(binders) - 1, -1, -1):
        bracket, names, btype = binders[i]
        if not btype or _dependent(i, binders, typ, namer):
            continue
        w = namer.words(btype, omit_top=True)
        if w:
            ofs.append("Of" + w)
    name = "inst" + concl + "".join(reversed(ofs))
    project = module.split(".")[0]
    mods = [lookup.module_of(c) for c in namer.consts]
    if any(m is not None and m.split(".")[0] == project for m in mods):
        return name  # mentions a constant of this project (or module): no suffix
    return name + "_" + _decap(project)


def _decap(s: str) -> str:
    return s[:1].lower() + s[1:]
