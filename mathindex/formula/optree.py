"""Operator trees: the font helper the parser uses, paren stripping, and the printers (s-expression,
JSON form stored in FORMULA_TREES, the readable dict form) with their inverse. All iterative: trees
may be deep."""

from __future__ import annotations

from mathindex.formula.symbols import ASSOCIATIVE, COMMUTATIVE


def with_font(node: tuple, cls: str) -> tuple:
    """`node` with its plain variables put in font class `cls` (iterative; constants unchanged)."""
    if node[0] == "#v":
        return node if ":" in node[1] else ("#v", cls + ":" + node[1])
    if node[0][0] == "#":
        return node
    results: list = []
    stack: list = [(node, False)]
    while stack:
        n, done = stack.pop()
        if n[0][0] == "#":
            results.append(("#v", cls + ":" + n[1]) if n[0] == "#v" and ":" not in n[1] else n)
            continue
        if done:
            k = len(n) - 1
            kids = results[len(results) - k:]
            del results[len(results) - k:]
            results.append((n[0], *kids))
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in reversed(n[1:]))
    return results[0]



def strip_parens(tree: tuple) -> tuple:
    """Removes grouping-only ("paren", x) nodes, iteratively (the tree may be deep)."""
    results: list = []
    stack: list = [(tree, False)]
    while stack:
        node, done = stack.pop()
        while node[0] == "paren":
            node = node[1]
        if node[0][0] == "#":
            results.append(node)
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:]
            del results[len(results) - k:]
            op = node[0]
            if op in ASSOCIATIVE:
                flat: list = []
                for kid in kids:
                    if kid[0] == op:
                        flat.extend(kid[1:])
                    else:
                        flat.append(kid)
                kids = flat
            results.append((op, *kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]



def tree_text(tree: tuple) -> str:
    """One-line s-expression: (op child ...), variables bare, constants quoted with ', numbers bare."""
    out: list[str] = []
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
            continue
        tag = node[0]
        if tag[0] == "#":
            if tag == "#v":
                out.append(node[1])
            elif tag == "#n":
                out.append(node[1])
            elif tag == "#e":
                out.append("_")
            elif tag == "#t":
                out.append('"' + node[1].replace('"', "'") + '"')
            else:
                out.append("'" + node[1])
            continue
        out.append("(" + tag)
        stack.append(")")
        for child in reversed(node[1:]):
            stack.append(child)
            stack.append(" ")
    return "".join(out)


def tree_json(tree: tuple) -> list:
    """The compact JSON form stored in FORMULA_TREES.tree (lists instead of tuples)."""
    return _convert(tree, lambda n, kids: [n[0], *kids] if n[0][0] != "#" else list(n))


def tree_dict(tree: tuple) -> dict:
    """The readable nested form printed by `mathindex formula`: op, comm, args / var / const."""
    def leaf(n: tuple) -> dict:
        kind = {"#v": "var", "#c": "const", "#n": "num", "#t": "text", "#e": "empty"}[n[0]]
        return {kind: n[1] if len(n) > 1 else ""}

    return _convert(tree, lambda n, kids: leaf(n) if n[0][0] == "#" else
                    {"op": n[0], "comm": n[0] in COMMUTATIVE, "args": kids})


def _convert(tree: tuple, make) -> object:
    """Post-order conversion without recursion (trees may be deep after a MathML fallback)."""
    results: list = []
    stack: list = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if node[0][0] == "#":
            results.append(make(node, None))
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:] if k else []
            del results[len(results) - k:]
            results.append(make(node, kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]


def from_json(obj: list) -> tuple:
    """Inverse of tree_json."""
    results: list = []
    stack: list = [(obj, False)]
    while stack:
        node, done = stack.pop()
        if node[0][0] == "#":
            results.append(tuple(node))
            continue
        if done:
            k = len(node) - 1
            kids = results[len(results) - k:] if k else []
            del results[len(results) - k:]
            results.append((node[0], *kids))
            continue
        stack.append((node, True))
        for child in reversed(node[1:]):
            stack.append((child, False))
    return results[0]
