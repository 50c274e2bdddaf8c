"""One normal form for the operator trees of Lean statements and of query patterns.

The grammar (mathindex.formula.grammar) already maps notation onto one vocabulary; this adds what
pattern search needs on top, the same way for both sides:

- binder names are ignored: a variable bound by `fun`, `∀`/`∃` inside a term or a big operator
  becomes ("#b", i), its de Bruijn index (so a closed subterm reads the same in any context);
- big operators become applications of their constant: `∑ x ∈ s, f x` and `Finset.sum s f`,
  `∑' x, f x` and `tsum f`, `⨆ i, f i` and `iSup f` (then η-reduced: `fun x => f x` is `f`);
- `∫ x in s, f x` is `integral s f`; `fun x => _` is `_`; `Nat.factorial n` is `n !`;
- `x⁻¹`, `x ^ (-1)` and `x^{-1}` are one ("inv", x); type ascriptions `(e : T)` are `e`;
  `¬ a = b` is `a ≠ b`; `√x` is `sqrt x`; `π` is the constant `pi`;
- a query's `_` becomes ("_",), its `?x` and its free variables (`x`, `f`) become ("?", "x")
  (see `MVAR`): a pattern written with letters matches up to renaming.
"""

from __future__ import annotations

from mathindex.formula.grammar import ASSOCIATIVE

MVAR = "MVAR__"  # a query's `?x` is rewritten to the identifier MVAR__x before parsing
WILD = ("_",)
_RELS = frozenset({"eq", "neq", "le", "lt", "in", "notin", "subseteq", "subset", "mid", "iff"})
_NOT = {"eq": "neq", "in": "notin", "mid": "nmid"}
_BIGOP_FN = {"sup": "iSup", "inf": "iInf", "bigcup": "iUnion", "bigcap": "iInter"}
_LEAF_RENAME = {"\u221a": "sqrt", "\u03c0": "pi"}
_MINUS_ONE = ("neg", ("#n", "1"))
MAX_DEPTH = 400


class TooDeep(ValueError):
    """A tree nested deeper than MAX_DEPTH (left out of the formal index)."""


def normalise(tree: tuple, query: bool = False) -> tuple:
    """The normal form of a grammar tree; `query` turns `_` and MVAR__x leaves into pattern holes."""
    return _Normaliser(query).node(tree, {}, 0, 0)


class _Normaliser:
    __slots__ = ("query",)

    def __init__(self, query: bool):
        self.query = query

    def leaf(self, t: tuple, scope: dict, depth: int) -> tuple:
        tag = t[0]
        if tag == "#v" or tag == "#c":
            name = t[1]
            if name in scope:
                return ("#b", depth - scope[name] - 1)
            if self.query:
                if name == "_":
                    return WILD
                if name.startswith(MVAR):
                    return ("?", name[len(MVAR):])
                if tag == "#v" and name != "pi":  # a query's free variable is a hole, bound consistently
                    return ("?", name)
            if name == "pi":
                return ("#c", "pi")
            return ("#c", _LEAF_RENAME.get(name, name)) if tag == "#c" else t
        return t

    def node(self, t: tuple, scope: dict, depth: int, level: int) -> tuple:
        if level > MAX_DEPTH:
            raise TooDeep("tree too deep")
        op = t[0]
        if op[0] == "#":
            return self.leaf(t, scope, depth)
        if op == "typed" and len(t) == 3:
            return self.node(t[1], scope, depth, level + 1)
        if op in ("coe", "paren") and len(t) == 2:
            return self.node(t[1], scope, depth, level + 1)
        if op in ("lambda", "forall", "exists") and len(t) == 3:
            return self.binder(op, t[1], t[2], scope, depth, level)
        if op in ("sum", "prod", "sup", "inf", "bigcup", "bigcap", "int") and len(t) == 4 and t[1] != ("#e",):
            return self.bigop(op, t[1], t[3], scope, depth, level)
        kids = [self.node(k, scope, depth, level + 1) for k in t[1:]]
        return _simplify(op, kids)

    def binder(self, op: str, binders: tuple, body: tuple, scope: dict, depth: int, level: int) -> tuple:
        """`fun`/`∀`/`∃` inside a term: one nested binder per name, conditions kept as children."""
        names, conds, _ = binder_parts(binders)
        inner = dict(scope)
        for i, n in enumerate(names):
            inner[n] = depth + i
        d2 = depth + len(names)
        kids = [self.node(c, inner, d2, level + 1) for c in conds] + [self.node(body, inner, d2, level + 1)]
        if op == "lambda" and not conds and kids[-1] == WILD:
            return WILD  # `fun x => _`: any function, as `_`
        if op == "lambda" and not conds and len(names) == 1:
            return eta(("lambda", kids[-1]))
        node = (op, *kids)
        for _ in range(len(names) - 1):
            node = (op, node)
        return node if names else (op, *kids)

    def bigop(self, op: str, binders: tuple, body: tuple, scope: dict, depth: int, level: int) -> tuple:
        """`∑ x ∈ s, f x` -> apply(sum, s, f); `∑' x, f x` -> apply(tsum, f); `⨆ i, f i` -> apply(iSup, f)."""
        names, conds, primed = binder_parts(binders)
        args: list[tuple] = []
        if op == "int":  # `∫ x in s, f x` -> apply(integral, s, f); `∫ x in a..b` keeps `a..b` as its set
            fn = "integral"
            ranged = [c for c in conds if c[0] == "in" and len(c) == 3 and names and _name_of(c[1]) == names[0]]
            if ranged:
                conds = [x for x in conds if x is not ranged[0]]
                args.append(self.node(ranged[0][2], scope, depth, level + 1))
        elif op in ("sum", "prod"):
            fn = ("t" + op) if primed else op
            if not primed and names:
                ranged = [c for c in conds if c[0] in ("in", "lt") and len(c) == 3 and _name_of(c[1]) == names[0]]
                if ranged:
                    c = ranged[0]
                    conds = [x for x in conds if x is not c]
                    s = self.node(c[2], scope, depth, level + 1)
                    args.append(s if c[0] == "in" else ("apply", ("#c", "range"), s))
                else:
                    args.append(("#c", "univ"))
        else:
            fn = _BIGOP_FN[op]
        lam = self.binder("lambda", ("bind", *[("#v", n) for n in names], *conds), body, scope, depth, level) \
            if names else self.node(body, scope, depth, level + 1)
        return ("apply", ("#c", fn), *args, lam)


def binder_parts(b: tuple) -> tuple[list[str], list[tuple], bool]:
    """(bound names, conditions such as `x ∈ s` or `0 < ε`, primed `∑'`) of a binder tree."""
    names: list[str] = []
    conds: list[tuple] = []
    primed = False
    stack = [b]
    while stack:
        x = stack.pop(0)
        tag = x[0]
        if tag in ("#v", "#c"):
            if x[1] == "prime":
                primed = True
            elif tag == "#v" or len(x[1]) <= 12:
                names.append(x[1])
        elif tag == "typed":
            stack[:0] = list(x[1:-1])
        elif tag == "bind":
            stack[:0] = list(x[1:])
        elif tag == "sub" and len(x) == 3 and x[1][0] == "#v" and x[2][0] in ("#n", "#v"):  # s₁
            names.append(x[1][1] + "_" + x[2][1])
        elif len(x) == 3 and tag[0] != "#":
            var = _name_of(x[1]) or _name_of(x[2])
            if var and var not in names:
                names.append(var)
            conds.append(x)
    return names, conds, primed


def _name_of(t: tuple) -> str | None:
    """A binder's variable: a variable leaf, or a short or `_`-prefixed identifier (`_x`, `hx`)."""
    if t[0] == "#v" or (t[0] == "#c" and (t[1].startswith("_") or len(t[1]) <= 3)):
        return t[1]
    return None


def eta(lam: tuple) -> tuple:
    """η-reduction of a one-binder lambda whose body applies something to that binder last."""
    body = lam[1]
    if body[0] == "apply" and body[-1] == ("#b", 0) and not any(_mentions(k, 0) for k in body[1:-1]):
        kids = [_shift(k, 0) for k in body[1:-1]]
        return kids[0] if len(kids) == 1 else ("apply", *kids)
    return lam


def _mentions(t: tuple, idx: int) -> bool:
    if t[0] == "#b":
        return t[1] == idx
    if t[0][0] == "#" or t[0] in ("?", "_"):
        return False
    inner = idx + 1 if t[0] in ("lambda", "forall", "exists") else idx
    return any(_mentions(k, inner) for k in t[1:])


def _shift(t: tuple, cut: int) -> tuple:
    """Indices of variables bound outside the removed binder move down by one."""
    if t[0] == "#b":
        return ("#b", t[1] - 1) if t[1] > cut else t
    if t[0][0] == "#" or t[0] in ("?", "_"):
        return t
    inner = cut + 1 if t[0] in ("lambda", "forall", "exists") else cut
    return (t[0], *[_shift(k, inner) for k in t[1:]])


def _simplify(op: str, kids: list[tuple]) -> tuple:
    """Local rewrites after the children are normal: inverse, negated relations, flattening."""
    if op == "pow" and len(kids) == 2:
        e = kids[1]
        if e == _MINUS_ONE or (e[0] == "set" and len(e) == 2 and e[1] == _MINUS_ONE):
            return ("inv", kids[0])
    if op in _RELS and len(kids) == 2 and kids[0][0] == "not" and len(kids[0]) == 2:
        return _simplify("not", [(op, kids[0][1], kids[1])])  # the grammar reads `¬a = b` as (¬a) = b
    if op == "not" and len(kids) == 1 and kids[0][0] in _NOT and len(kids[0]) == 3:
        return (_NOT[kids[0][0]], *kids[0][1:])
    if op == "apply" and kids and kids[0][0] == "apply":
        return ("apply", *kids[0][1:], *kids[1:])
    if op == "apply" and len(kids) == 2 and kids[0] == ("#c", "factorial"):
        return ("factorial", kids[1])  # `Nat.factorial n` is `n !`
    if op in ASSOCIATIVE:
        flat: list[tuple] = []
        for k in kids:
            flat.extend(k[1:] if k[0] == op else (k,))
        kids = flat
    return (op, *kids)


def head(t: tuple) -> str:
    """The head symbol: an operator, an applied constant, a constant or `*` (a variable or hole)."""
    op = t[0]
    if op == "apply":
        return head(t[1]) if t[1][0] != "apply" else "*"
    if op == "#c":
        return t[1]
    if op == "#n":
        return "#" + t[1]
    if op[0] == "#" or op in ("?", "_"):
        return "*"
    return op


def size(t: tuple) -> int:
    n, stack = 0, [t]
    while stack:
        x = stack.pop()
        n += 1
        if x[0][0] != "#" and x[0] not in ("?", "_"):
            stack.extend(x[1:])
    return n


def shape_key(t: tuple) -> str:
    """The tree with free variables renamed in order of first occurrence (a query's holes too):
    equal keys are equal up to renaming."""
    names: dict = {}
    out: list[str] = []
    stack: list = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
            continue
        tag = x[0]
        if tag == "#v" or tag == "?":
            out.append("v%d" % names.setdefault((tag, x[1]), len(names)))
        elif tag[0] == "#":
            out.append(tag + ":" + (x[1] if len(x) > 1 else "") if tag != "#b" else "b%d" % x[1])
        elif tag == "_":
            out.append("_")
        else:
            out.append("(" + tag)
            stack.append(")")
            stack.extend(reversed(x[1:]))
    return " ".join(out)


ADDITIVE_OPS = {"mul": "add", "prod": "sum", "inv": "neg"}


def additive(t: tuple) -> tuple:
    """The additive form of a `@[to_additive]` statement's grammar tree (the extractor keeps the
    multiplicative text): ∏ -> ∑, * -> +, ⁻¹ -> -, / -> -, a ^ n -> n • a, 1 -> 0. Applied before
    `normalise`, where `∏` is still an operator: a written `H.prod K` may stay `prod` additively."""
    op = t[0]
    if op == "#n":
        return ("#n", "0") if t[1] == "1" else t
    if op[0] == "#":
        return t
    kids = [additive(k) for k in t[1:]]
    if op == "frac" and len(kids) == 2:
        return ("add", kids[0], ("neg", kids[1]))
    if op == "pow" and len(kids) == 2:
        return ("mul", kids[1], kids[0])  # `•` reads as multiplication in the grammar
    return (ADDITIVE_OPS.get(op, op), *kids)
