"""A declaration as a telescope: its hypotheses (signature binders, the `variable`s it uses, the
∀-binders and →-premises of its type) and its conclusion, as normal-form trees.

Instance binders (`[CommRing R]`) are left out: Loogle's instance arguments are implicit, and the
classes they name are constants of the statement already (the dependencies table)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from mathindex.formal.normal import additive, binder_parts, normalise
from mathindex.formula.grammar import ParseError, parse_lean
from mathindex.lean.binders import leading_groups

log = logging.getLogger(__name__)
_SORT = re.compile(r"^(?:Prop|Sort\*?|Type\*?|Type _|(?:Type|Sort)\b.*)$")  # universes: not hypotheses
MAX_BINDER_NAMES = 3  # `(a b c d : R)` gives at most three hypotheses of type R


@dataclass
class Telescope:
    hypotheses: list[tuple]
    conclusion: tuple


class TelescopeBuilder:
    """Parses binder types once per distinct text (they repeat: `ℝ`, `Finset ι`, `0 < ε`)."""

    def __init__(self, query: bool = False):
        self.query = query
        self.cache: dict[str, tuple | None] = {}
        self.groups: dict[str, list[tuple]] = {}  # `variable` lines repeat across a file

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
        if text in self.groups:
            return self.groups[text]
        hyps = self._binder_hypotheses(text)
        if len(self.groups) < 100_000:
            self.groups[text] = hyps
        return hyps

    def _binder_hypotheses(self, text: str) -> list[tuple]:
        hyps: list[tuple] = []
        for b in leading_groups(text)[0]:
            if b.bracket == "[" or b.type is None or _SORT.match(b.type):
                continue
            tree = self.term(b.type)
            if tree is not None:
                hyps.extend([tree] * max(1, min(len(b.names), MAX_BINDER_NAMES)))
        return hyps

    def of_declaration(self, signature: str, type_: str, variables: str, to_additive: bool = False) -> Telescope | None:
        """None when the type does not parse. `to_additive`: the statement is the additive twin of
        the multiplicative text the extractor recorded (normal.additive)."""
        try:
            tree = parse_lean(type_)
            hyps = self.binder_hypotheses(variables or "") + self.binder_hypotheses(signature or "")
            if to_additive:
                tree, hyps = additive(tree), [additive(h) for h in hyps]
            return split(tree, hyps, self.query)
        except (ParseError, ValueError, RecursionError):
            return None
        except Exception:  # noqa: BLE001 - as above: the declaration keeps its constants only
            log.debug("statement not normalised: %r", type_[:200], exc_info=True)
            return None


def split(tree: tuple, hyps: list[tuple], query: bool = False) -> Telescope:
    """Peels ∀-binders and →-premises off a grammar tree into normal-form hypotheses."""
    raw: list[tuple] = []
    while True:
        op = tree[0]
        if op == "forall" and len(tree) == 3:
            raw.extend(_binder_hypotheses(tree[1]))
            tree = tree[2]
        elif op in ("to", "implies") and len(tree) == 3:
            raw.append(tree[1])
            tree = tree[2]
        else:
            break
    out = list(hyps)
    for h in raw:
        out.append(normalise(h, query))
    return Telescope(out, normalise(tree, query))


def _binder_hypotheses(b: tuple) -> list[tuple]:
    """`∀ x y : T` gives T (once per name, at most three), `∀ ε > 0` gives `0 < ε`, `∀ x ∈ s` `x ∈ s`."""
    out: list[tuple] = []
    items = b[1:] if b[0] == "bind" else (b,)
    for x in items:
        if x[0] == "typed":
            if not (x[-1][0] == "#c" and x[-1][1] in ("Type", "Sort", "Prop")) and x[-1][0] != "mul":
                out.extend([x[-1]] * max(1, min(len(x) - 2, MAX_BINDER_NAMES)))
        elif x[0][0] != "#":
            _, conds, _ = binder_parts(x)
            out.extend(conds)
    return out
