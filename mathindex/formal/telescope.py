"""A declaration as a telescope: its hypotheses (signature binders, the `variable`s it uses, the
∀-binders and →-premises of its type) and its conclusion, as normal-form trees.

Instance binders (`[CommRing R]`) are left out: Loogle's instance arguments are implicit, and the
classes they name are constants of the statement already (the dependencies table)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from mathindex.formal.normal import additive, binder_parts, head, normalise
from mathindex.formal.notation import prefix_notation
from mathindex.formula.grammar import ParseError, parse_lean
from mathindex.lean.binders import leading_groups

log = logging.getLogger(__name__)
_SORT = re.compile(r"^(?:Prop|Sort\*?|Type\*?|Type _|(?:Type|Sort)\b.*)$")  # universes: not hypotheses
MAX_BINDER_NAMES = 3  # `(a b c d : R)` gives at most three hypotheses of type R


@dataclass
class Telescope:
    hypotheses: list[tuple]
    conclusion: tuple
    declared: dict[str, str] = field(default_factory=dict)  # a bound name -> its type's head (`n : ℕ`: bbN)


class TelescopeBuilder:
    """Parses binder types once per distinct text (they repeat: `ℝ`, `Finset ι`, `0 < ε`)."""

    def __init__(self, query: bool = False):
        self.query = query
        self.cache: dict[str, tuple | None] = {}
        self.groups: dict[str, tuple[list[tuple], dict[str, str]]] = {}  # `variable` lines repeat across a file

    def term(self, text: str) -> tuple | None:
        if text in self.cache:
            return self.cache[text]
        try:
            tree = normalise(parse_lean(text), self.query)
        except (ParseError, ValueError, RecursionError):
            tree = None
        except Exception:  # noqa: BLE001 - a grammar or normaliser bug leaves one binder out, logged
            log.debug("binder type not normalised: %r", text[:200], exc_info=True)
            tree = None
        if len(self.cache) < 200_000:
            self.cache[text] = tree
        return tree

    def binder_hypotheses(self, text: str) -> list[tuple]:
        return self.binders(text)[0]

    def binders(self, text: str) -> tuple[list[tuple], dict[str, str]]:
        """(hypotheses, bound name -> its type's head) of binder groups (`(n : ℕ) {s : Finset α}`)."""
        if text in self.groups:
            return self.groups[text]
        got = self._binders(text)
        if len(self.groups) < 100_000:
            self.groups[text] = got
        return got

    def _binders(self, text: str) -> tuple[list[tuple], dict[str, str]]:
        hyps: list[tuple] = []
        declared: dict[str, str] = {}
        for b in leading_groups(text)[0]:
            if b.bracket == "[" or b.type is None or _SORT.match(b.type):
                for name in b.names if b.bracket != "[" else ():
                    self._declare(declared, name, "*")
                continue
            tree = self.term(b.type)
            for name in b.names:
                self._declare(declared, name, head(tree) if tree is not None else "*")
            if tree is not None:
                hyps.extend([tree] * max(1, min(len(b.names), MAX_BINDER_NAMES)))
        return hyps, declared

    def _declare(self, declared: dict[str, str], name: str, typ: str) -> None:
        """`name` as written (what dot notation in the text uses) and as the grammar's leaf (`ε` is
        `epsilon` in the trees)."""
        declared[name] = typ
        leaf = self.term(name)
        if leaf is not None and leaf[0] in ("#v", "#c"):
            declared[leaf[1]] = typ

    def of_declaration(self, signature: str, type_: str, variables: str, to_additive: bool = False) -> Telescope | None:
        """None when the type does not parse. `to_additive`: the statement is the additive twin of
        the multiplicative text the extractor recorded (normal.additive)."""
        try:
            tree = parse_lean(prefix_notation(type_))
            var_hyps, var_names = self.binders(prefix_notation(variables or ""))
            sig_hyps, sig_names = self.binders(prefix_notation(signature or ""))
            hyps = var_hyps + sig_hyps
            if to_additive:
                tree, hyps = additive(tree), [additive(h) for h in hyps]
            tele = split(tree, hyps, self.query)
            tele.declared = {**var_names, **sig_names, **tele.declared}
            return tele
        except (ParseError, ValueError, RecursionError):
            return None
        except Exception:  # noqa: BLE001 - as above: the declaration keeps its constants only
            log.debug("statement not normalised: %r", type_[:200], exc_info=True)
            return None


def split(tree: tuple, hyps: list[tuple], query: bool = False) -> Telescope:
    """Peels ∀-binders and →-premises off a grammar tree into normal-form hypotheses."""
    raw: list[tuple] = []
    declared: dict[str, str] = {}
    while True:
        tree = arrows_outermost(tree)
        op = tree[0]
        if op == "forall" and len(tree) == 3:
            raw.extend(_binder_hypotheses(tree[1], declared))
            tree = tree[2]
        elif op in ("to", "implies") and len(tree) == 3:
            raw.append(tree[1])
            tree = tree[2]
        else:
            break
    out = list(hyps)
    for h in raw:
        out.append(normalise(h, query))
    return Telescope(out, normalise(tree, query), declared)


_LOGIC = {"and": 35, "or": 30, "to": 25, "implies": 25}  # Lean's precedences: `A → B ∨ C` is `A → (B ∨ C)`


def arrows_outermost(t: tuple) -> tuple:
    """A chain of ∧, ∨ and → re-associated by Lean's precedences (the grammar binds → tighter
    than ∨ and ∧: it reads `p ∣ a → p ∣ b ∨ p ∣ c` as `(p ∣ a → p ∣ b) ∨ p ∣ c`); all three
    associate to the right. The grammar keeps no parentheses, so a written `a ∨ (b → c)` is read
    as `(a ∨ b) → c`: far rarer in statements than the premise before a disjunction."""
    if t[0] not in _LOGIC or len(t) < 3:
        return t
    seq: list = []
    stack: list = [t]
    while stack:  # in order: operands and operators, left to right
        x = stack.pop()
        if isinstance(x, str):
            seq.append(x)
        elif x[0] in _LOGIC and len(x) >= 3:
            for i, k in reversed(list(enumerate(x[1:]))):
                stack.append(k)
                if i:
                    stack.append(x[0])
        else:
            seq.append(x)
    out, pos = _climb(seq, 0, 0)
    return out


def _climb(seq: list, pos: int, floor: int) -> tuple[tuple, int]:
    """Precedence climbing over `seq` from `pos`: (tree, next position)."""
    lhs, pos = seq[pos], pos + 1
    while pos < len(seq) and _LOGIC[seq[pos]] >= floor:
        op = seq[pos]
        rhs, pos = _climb(seq, pos + 1, _LOGIC[op])
        lhs = (op, lhs, rhs)
    return lhs, pos


def _binder_hypotheses(b: tuple, declared: dict[str, str]) -> list[tuple]:
    """`∀ x y : T` gives T (once per name, at most three), `∀ ε > 0` gives `0 < ε`, `∀ x ∈ s` `x ∈ s`;
    the names it binds go into `declared` with their type's head (`*` when unknown)."""
    out: list[tuple] = []
    items = b[1:] if b[0] == "bind" else (b,)
    for x in items:
        if x[0] == "typed":
            typ = x[-1]
            # `{n p : ℕ}` reads as the application `n p`: its leaves are the names
            names = [leaf for n in x[1:-1] for leaf in (n[1:] if n[0] == "apply" else (n,)) if leaf[0] in ("#v", "#c")]
            for name in names:
                declared[name[1]] = head(typ) if typ[0] != "mul" else "*"
            if not (typ[0] == "#c" and typ[1] in ("Type", "Sort", "Prop")) and typ[0] != "mul":
                out.extend([typ] * max(1, min(len(names), MAX_BINDER_NAMES)))
        elif x[0] in ("#v", "#c"):
            declared[x[1]] = "*"
        else:
            names, conds, _ = binder_parts(x)
            declared.update((n, "*") for n in names)
            out.extend(conds)
    return out
