"""The corpus's notation commands (lean/notations.py) as the constants behind a statement's leaves:
`φ n` is `Nat.totient n`, `𝓝 x` is `nhds x`, `cexp z` is `Complex.exp z`.

A one-atom notation whose atom the grammar reads as a leaf maps that leaf to the declaration its
right-hand side names. A statement's undeclared variable leaves (`keys.free_names`) and its
constant leaves no declaration is named after are resolved through the map: a `local` notation
only in its own file; among several, the one of the statement's own file, else the one alone
outside `local`, else the one whose namespace the statement's name or constants share. Trees
then carry the target's last component, as the grammar writes the constant spelled out
(`Nat.totient n` is `apply(totient, n)`), so a pattern naming the constant matches the notation."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from mathindex.formal.keys import NOTATION, SORT_CONSTANTS, ConstantResolver
from mathindex.formal.normal import normalise
from mathindex.formula.grammar import ParseError, parse_lean
from mathindex.lean.binders import matching

_SKIP = frozenset(NOTATION) | frozenset(SORT_CONSTANTS) | {"Type", "Sort", "Prop"}
# Prefix atoms the grammar reads as an operator shared with other notation (`#s` and `|x|` are both
# `abs`): a statement's text writes them as a leaf of their own before it is parsed, and the map
# resolves that leaf like any other (`#s` is `Finset.card s` in `Finset`, `Cardinal.mk` in `Cardinal`).
PREFIX_ATOMS = {"#": "hashNOTATION"}
_PREFIX = re.compile(r"(?<![\w#'\"])#(?=[(\w{])")
_OPERAND = re.compile(r"[\w.'!?₀-₉ₐ-ₜ]+")


def prefix_notation(text: str) -> str:
    """`text` with each PREFIX_ATOMS atom and its operand written as an application of its leaf, in
    parentheses (`b ^ #(range n)` -> `b ^ (hashNOTATION (range n))`: the grammar reads `b ^ f s`
    as `(b ^ f) * s`)."""
    if "#" not in text:
        return text
    out, last = [], 0
    for m in _PREFIX.finditer(text):
        if m.start() < last:
            continue
        start = m.end()
        end = matching(text, start) + 1 if text[start] in "({" else start + len(_OPERAND.match(text, start).group())
        if end <= start:  # an unclosed bracket: left as written
            continue
        out.append(f"{text[last:m.start()]}({PREFIX_ATOMS['#']} {prefix_notation(text[start:end])})")
        last = end
    return "".join(out) + text[last:]


@dataclass(frozen=True)
class Candidate:
    target: str  # the declaration's full name
    scope: str  # global, scoped or local
    corpus: str
    file: str


def atom_leaf(atom: str) -> tuple[str, str] | None:
    """The leaf (`#v`/`#c`, name) the grammar makes of a notation atom: the atom itself, or the
    spelled name of a letter (`φ` is `phi`, `𝓝` `cal:N`); None when the grammar reads an operator
    or a piece of the atom (`+ᵥ`), or for a single Latin letter (a statement's `L`, `X`, `I` are
    as often pieces of other notation, `→L[R]`, as the notation's own)."""
    text = atom.strip()
    try:
        tree = normalise(parse_lean(text))
    except (ParseError, ValueError, RecursionError):
        return None
    if tree[0] not in ("#v", "#c") or len(tree) != 2:
        return None
    if tree[1] != text and not (len(text) == 1 and text.isalpha()):
        return None
    return None if len(tree[1]) == 1 and tree[1].isascii() else (tree[0], tree[1])


class NotationMap:
    """leaf name -> the declarations one-atom notations print with it."""

    def __init__(self, notations: pa.Table | None, resolver: ConstantResolver):
        self.resolver = resolver
        self.by_leaf: dict[str, list[Candidate]] = {}
        self.kinds: dict[str, str] = {}  # leaf name -> `#v` or `#c`
        if notations is None or notations.num_rows == 0:
            return
        cols = {c: notations.column(c).to_pylist() for c in ("atoms", "target", "scope", "corpus", "file", "kind")}
        for atoms, target, scope, corpus, file, kind in zip(*cols.values()):
            if not target or len(atoms) != 1:
                continue
            leaf = ("#c", PREFIX_ATOMS[atoms[0].strip()]) if atoms[0].strip() in PREFIX_ATOMS and kind == "prefix" \
                else atom_leaf(atoms[0])
            full = self._target(target)
            if leaf is None or full is None or leaf[1] in _SKIP:
                continue
            if leaf[0] == "#c" and leaf[1] in resolver.by_last:  # `sqrt`, `exp`: the grammar's own names
                continue
            self.kinds[leaf[1]] = leaf[0]
            cands = self.by_leaf.setdefault(leaf[1], [])
            cand = Candidate(full, scope, corpus, file)
            if cand not in cands:
                cands.append(cand)

    def _target(self, target: str) -> str | None:
        """A right-hand side's head as a full name: itself, else the shortest name ending in it
        when it is dotted (`Measure.AbsolutelyContinuous`), else the one name ending in it."""
        if target in self.resolver.full:
            return target
        last = target.rsplit(".", 1)[-1]
        found = [n for n in self.resolver.by_last.get(last, ()) if n.endswith("." + target)]
        if "." not in target:
            return found[0] if len(found) == 1 else None
        return min(found, key=lambda n: (len(n), n)) if found else None

    def __bool__(self) -> bool:
        return bool(self.by_leaf)

    def context_free(self) -> dict[str, str]:
        """Constant leaves one non-local notation alone prints (a query's `cexp`: no file, no namespace)."""
        out = {}
        for leaf, cands in self.by_leaf.items():
            shared = {c.target for c in cands if c.scope != "local"}
            if len(shared) == 1 and self.kinds[leaf] == "#c":
                out[leaf] = shared.pop()
        return out

    def resolve(self, leaves: set[str], where: tuple[str, str, str], namings: list[list[str]]) -> dict[str, str]:
        """leaf -> full name, for the leaves of one statement the map knows; `where`: the
        statement's (name, corpus, file); `namings`: constants it names (its statement's, then its
        proof's), each list a tier that may break a tie between namespaces."""
        out = {}
        for leaf in leaves:
            cands = self.by_leaf.get(leaf)
            if cands:
                found = self._choose(cands, where, namings)
                if found:
                    out[leaf] = found
        return out

    def tied(self, leaves: set[str], where: tuple[str, str, str]) -> bool:
        """Whether a leaf of the statement has several non-local notations and none of its own file
        (the namespaces of the statement's proof may decide)."""
        for leaf in leaves:
            cands = self.by_leaf.get(leaf, ())
            if not any(c.corpus == where[1] and c.file == where[2] for c in cands) \
                    and len({c.target for c in cands if c.scope != "local"}) > 1:
                return True
        return False

    @staticmethod
    def _choose(cands: list[Candidate], where: tuple[str, str, str], namings: list[list[str]]) -> str | None:
        name, corpus, file = where
        here = [c.target for c in cands if c.corpus == corpus and c.file == file]
        if here:
            return here[0]
        targets = sorted({c.target for c in cands if c.scope != "local"})
        if len(targets) <= 1:
            return targets[0] if targets else None
        spaces = {name.split(".")[0]}
        for named in namings:
            spaces |= {c.split(".")[0] for c in named if "." in c}
            shared = [t for t in targets if "." in t and t.split(".")[0] in spaces]
            if len(shared) == 1:
                return shared[0]
            if shared:
                return None
        return None


def rename_leaves(t, names: dict[str, str]):
    """The tree (JSON lists or tuples) with each `#v`/`#c` leaf in `names` made the constant
    `names[leaf]` (a last component)."""
    tag = t[0]
    if tag in ("#v", "#c"):
        new = names.get(t[1])
        return ("#c", new) if new is not None else tuple(t)
    if tag[0] == "#" or tag in ("?", "_"):
        return tuple(t)
    return (tag, *(rename_leaves(k, names) if isinstance(k, (list, tuple)) else k for k in t[1:]))
