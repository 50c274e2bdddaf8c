"""Index keys of a declaration's telescope, and the constants its statement mentions.

Keys are strings with a one-letter kind: `c:` a constant (full name), `s:` a symbol (operator or
constant's last component) anywhere, `p:` a parent>child head pair anywhere, `h:` the conclusion's
head, `y:` a hypothesis's head, `e:` the conclusion's shape (equal up to renaming)."""

from __future__ import annotations

import hashlib
import re
from functools import cached_property

from mathindex.formal.normal import head, shape_key
from mathindex.lookups import ByLast

# Notation the grammar turns into operators, as the Lean constants Loogle would name.
NOTATION = {
    "add": "HAdd.hAdd", "mul": "HMul.hMul", "pow": "HPow.hPow", "inv": "Inv.inv", "neg": "Neg.neg",
    "frac": "HDiv.hDiv", "le": "LE.le", "lt": "LT.lt", "eq": "Eq", "neq": "Ne", "iff": "Iff",
    "and": "And", "or": "Or", "not": "Not", "in": "Membership.mem", "notin": "Membership.mem",
    "subseteq": "HasSubset.Subset", "subset": "HasSSubset.SSubset", "cup": "Union.union",
    "cap": "Inter.inter", "setminus": "SDiff.sdiff", "mid": "Dvd.dvd", "exists": "Exists",
    "compose": "Function.comp", "factorial": "Nat.factorial", "lambda": None, "forall": None,
}
# Leaves whose last component is ambiguous but whose notation is not: `√`, `π`, `∑'`, `∑ x ∈ s`.
DEFAULT_OF = {
    "sqrt": "Real.sqrt", "pi": "Real.pi", "tsum": "tsum", "tprod": "tprod", "sum": "Finset.sum",
    "prod": "Finset.prod", "iSup": "iSup", "iInf": "iInf", "iUnion": "Set.iUnion", "iInter": "Set.iInter",
    "univ": "Finset.univ", "range": "Finset.range", "card": "Finset.card", "exp": "Real.exp",
    "log": "Real.log", "sin": "Real.sin", "cos": "Real.cos",
}
# The number systems' notation as the constants Loogle names (`ℕ` mentions `Nat`), and the namespace
# a value of that type opens for dot notation (`n.divisors` with `n : ℕ` is `Nat.divisors`).
SORT_CONSTANTS = {"bbN": "Nat", "bbZ": "Int", "bbQ": "Rat", "bbR": "Real", "bbC": "Complex"}
WRITTEN_SORTS = {"ℕ": "Nat", "ℤ": "Int", "ℚ": "Rat", "ℝ": "Real", "ℂ": "Complex"}  # as a query names them
_SORTS = frozenset({"Type", "Sort", "Prop"})
_SORT_NAMES = frozenset(SORT_CONSTANTS.values())
NOTATION_CONSTANTS = sorted({v for v in NOTATION.values() if v} | set(DEFAULT_OF.values()) | set(SORT_CONSTANTS.values()))


def tree_keys(hyps: list[tuple], concl: tuple | None) -> set[str]:
    """s:, p:, h:, y: and e: keys of a telescope."""
    keys: set[str] = set()
    trees = ([concl] if concl is not None else []) + hyps
    for t in trees:
        _walk(t, keys)
    if concl is not None:
        keys.add("h:" + head(concl))
        keys.add("e:" + shape_hash(concl))
    for h in hyps:
        keys.add("y:" + head(h))
    return keys


def tree_facts(hyps: list[tuple], concl: tuple | None) -> tuple[set[str], set[str], int]:
    """(tree_keys, leaf_symbols, total size) of a telescope in one walk over its trees (the
    build's pass; the three functions it stands for stay the reference and are what queries use)."""
    keys: set[str] = set()
    symbols: set[str] = set()
    n = 0
    stack = ([concl] if concl is not None else []) + list(hyps)
    add_key, add_symbol, push, pop = keys.add, symbols.add, stack.extend, stack.pop
    while stack:
        x = pop()
        n += 1
        tag = x[0]
        if tag == "#c":
            add_key("s:" + x[1])
            add_symbol(x[1])
            continue
        if tag == "#n":
            add_key("s:#" + x[1])
            continue
        if tag[0] == "#" or tag == "?" or tag == "_":
            continue
        if tag == "apply":
            h = head(x[1])
            args = x[2:]
            if h != "*":
                add_key("s:" + h)
        else:
            h = tag
            args = x[1:]
            add_key("s:" + tag)
            add_symbol(tag)
        if h != "*":
            for a in args:
                ah = head(a)
                if ah != "*":
                    add_key(f"p:{h}>{ah}")
        push(x[1:])
    if concl is not None:
        add_key("h:" + head(concl))
        add_key("e:" + shape_hash(concl))
    for h in hyps:
        add_key("y:" + head(h))
    return keys, symbols, n


def free_names(hyps: list[tuple], concl: tuple | None, declared: dict[str, str]) -> set[str]:
    """The variable leaves of a telescope that no binder of the statement declares: in Mathlib,
    where names are never bound implicitly, notation such as `φ` or `𝓝` (`notations.NotationMap`)."""
    free: set[str] = set()
    stack = ([concl] if concl is not None else []) + list(hyps)
    while stack:
        x = stack.pop()
        tag = x[0]
        if tag == "#v":
            if x[1] not in declared:
                free.add(x[1])
        elif tag[0] != "#" and tag != "?" and tag != "_":
            stack.extend(x[1:])
    return free


_DOT = re.compile(r"(?<![\w.'])([^\W\d][\w']*)\.([^\W\d][\w'!?]*)")


def text_hints(texts: list[str], declared: dict[str, str]) -> set[str]:
    """Constants the statement's texts name that its trees lose: `Type.field` for each `x.field`
    written on a name `x` declared of a type headed by a constant (`n.divisors` with `n : ℕ` gives
    `Nat.divisors`, `s.card` with `s : Finset α` `Finset.card`: the trees cannot tell `p.Prime`
    from `Prime p`), and the number systems written anywhere (`∑' n : ℕ` mentions `Nat`)."""
    hints = {const for sym, const in WRITTEN_SORTS.items() if any(sym in text for text in texts)}
    for text in texts:
        if "." not in text:
            continue
        for m in _DOT.finditer(text):
            typ = declared.get(m.group(1))
            if typ is not None and (typ in SORT_CONSTANTS or typ[:1].isupper()):
                hints.add(f"{SORT_CONSTANTS.get(typ, typ)}.{m.group(2)}")
    return hints


def shape_hash(t: tuple) -> str:
    return hashlib.sha1(shape_key(t).encode("utf-8")).hexdigest()[:16]


def _walk(t: tuple, keys: set[str]) -> None:
    stack = [t]
    while stack:
        x = stack.pop()
        tag = x[0]
        if tag == "#c":
            keys.add("s:" + x[1])
            continue
        if tag == "#n":
            keys.add("s:#" + x[1])
            continue
        if tag[0] == "#" or tag in ("?", "_"):
            continue
        if tag == "apply":
            h = head(x[1])
            args = x[2:]
            if h != "*":
                keys.add("s:" + h)
        else:
            h = tag
            args = x[1:]
            keys.add("s:" + tag)
        if h != "*":
            for a in args:
                ah = head(a)
                if ah != "*":
                    keys.add(f"p:{h}>{ah}")
        stack.extend(x[1:])


def pattern_keys(t: tuple) -> set[str]:
    """The s: and p: keys every statement matching pattern `t` somewhere must have."""
    keys: set[str] = set()
    _walk(t, keys)
    return keys


def leaf_symbols(trees: list[tuple]) -> set[str]:
    """Constant last components and operators used by the trees."""
    out: set[str] = set()
    stack = list(trees)
    while stack:
        x = stack.pop()
        tag = x[0]
        if tag == "#c":
            out.add(x[1])
        elif tag[0] != "#" and tag not in ("?", "_"):
            if tag != "apply":
                out.add(tag)
            stack.extend(x[1:])
    return out


class ConstantResolver:
    """The full names a statement's leaves stand for: its own namespaces first (`sqrt` in
    `Real.sqrt_le` is `Real.sqrt`), then the root, the notation defaults, the namespaces of the
    types its statement names (`card` beside `Finset` is `Finset.card`), then a unique name."""

    def __init__(self, names: list[str], written: list[str] = (), lazy: bool = False):
        """`names`: the corpus's declarations; `written`: constants statements name that it does
        not declare (`Nat.gcd`, `Int.natAbs`: Lean core), known to the namespace lookups too.
        `lazy` (a query-time ranker, which resolves a goal's few leaves): the names by last
        component are one sorted index (`lookups.ByLast`, 0.15 s over whole Mathlib against 0.4 s
        for the dict), made at the first leaf that needs it; else a dict made now (the build
        resolves millions of leaves)."""
        self.declared = set(names)
        self.full = self.declared | set(written)
        self.roots = {n.split(".", 1)[0] for n in names if "." in n}  # namespaces the corpus declares into
        self._lazy = lazy
        if not lazy:
            _ = self.by_last

    @cached_property
    def by_last(self) -> dict[str, list[str]] | ByLast:
        """Last name component -> the names that end in it, in order."""
        names = sorted(self.full)
        if self._lazy:
            return ByLast(names)
        table: dict[str, list[str]] = {}
        for n in names:
            table.setdefault(n.rsplit(".", 1)[-1], []).append(n)
        return table

    def constants(self, decl_name: str, symbols: set[str], named: list[str], hints: list[str] = ()) -> set[str]:
        """The statement's constants: those its dependencies name (less dotted ones of no known
        namespace: `h.le`, `X.eval`), its leaves resolved, and its text hints (`text_hints`) that
        name a declaration; never the declaration itself."""
        out = {n for n in named if "." not in n or n in self.declared or n.split(".", 1)[0] in self.roots}
        for hint in hints:
            found = hint if hint in _SORT_NAMES else self.receiver(hint)
            if found:
                out.add(found)
        spaces = _prefixes(decl_name)
        types = list(dict.fromkeys(n for n in named if n[:1].isupper()))  # as named: a set's order follows PYTHONHASHSEED
        written = {n.rsplit(".", 1)[-1] for n in named}  # `sqrt` written out is not `√`
        for s in symbols:
            op_const = NOTATION.get(s)
            if op_const:
                out.add(op_const)
                continue
            if s in NOTATION:
                continue
            if s in _SORTS:
                continue
            if s in SORT_CONSTANTS:
                out.add(SORT_CONSTANTS[s])
                continue
            found = self._leaf(s, spaces, types, s in written, decl_name)
            if found:
                out.add(found)
        out.discard(decl_name)
        return out

    def in_namespace(self, leaf: str, decl_name: str) -> str | None:
        """`leaf` as a declaration of one of the namespaces `decl_name` is declared in (`X` in
        `Polynomial.eval_X` is `Polynomial.X`), or None."""
        for ns in _prefixes(decl_name):
            if f"{ns}.{leaf}" in self.full and f"{ns}.{leaf}" != decl_name:
                return f"{ns}.{leaf}"
        return None

    def receiver(self, hint: str) -> str | None:
        """The declaration a `Type.field` hint names: `Type.field` itself, else the shortest name
        ending in `.Type.field` (`Measure.restrict` is `MeasureTheory.Measure.restrict`)."""
        if hint in self.full:
            return hint
        field = hint.rsplit(".", 1)[-1]
        found = [n for n in self.by_last.get(field, ()) if n.endswith("." + hint)]
        return min(found, key=lambda n: (len(n), n)) if found else None

    def _leaf(self, s: str, spaces: list[str], types: list[str], written: bool, decl_name: str = "") -> str | None:
        for ns in spaces:
            if f"{ns}.{s}" in self.full and f"{ns}.{s}" != decl_name:
                return f"{ns}.{s}"
        if s in self.declared:  # a root name the corpus declares (`sqrt` written in a proof is no evidence)
            return s
        if s in DEFAULT_OF and not written:
            return DEFAULT_OF[s]
        for t in types:
            if f"{t}.{s}" in self.full:
                return f"{t}.{s}"
        cands = self.by_last.get(s)
        return cands[0] if cands and len(cands) == 1 else None


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")[:-1]
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
