"""Leaf-to-root path tokens: variables anonymised, constants kept, a rank marker under
non-commutative operators. Also the symbols of a tree (names, for the symbol-identity score)."""

from __future__ import annotations

from mathindex.formula.grammar import COMMUTATIVE

MAX_PATH = 8  # steps kept in the leaf-to-root token (the root's path when the leaf is not deeper)
MAX_RANK = 9


def leaf_label(node: tuple) -> str | None:
    """The path label of a leaf: V for a variable, constants and numbers kept; None for empty."""
    tag = node[0]
    if tag == "#v":
        name = node[1]
        return "V" + name[: name.index(":")] if ":" in name else "V"
    if tag == "#n":
        return "N" + node[1]
    if tag == "#c":  # Re / re, Hom / hom: names compared without case
        return "C" + node[1].lower()
    if tag == "#t":
        return "T"
    return None


def path_tokens(tree: tuple) -> list[str]:
    """Per leaf, in leaf order: the paths of 1 and 2 steps up, and the full path to the root."""
    out: list[str] = []
    # stack of (node, steps): steps = tuple of step labels from the root down to node's parent
    stack: list = [(tree, ())]
    while stack:
        node, steps = stack.pop()
        tag = node[0]
        if tag[0] == "#":
            label = leaf_label(node)
            if label is None:
                continue
            n = len(steps)
            if n == 0:
                out.append(label)
                continue
            up = steps[::-1]
            out.append(label + "/" + up[0])
            if n >= 2:
                out.append(label + "/" + up[0] + "/" + up[1])
            if n >= 3:
                out.append(label + "//" + "/".join(up[:MAX_PATH]))
            continue
        comm = tag in COMMUTATIVE
        kids = node[1:]
        for rank in range(len(kids) - 1, -1, -1):
            step = tag if comm else f"{tag}#{min(rank, MAX_RANK)}"
            stack.append((kids[rank], (steps + (step,))[-MAX_PATH:]))  # bounded: deep trees stay linear
    return out


def symbols(tree: tuple) -> list[str]:
    """Sorted distinct names of variables, constants and numbers (the symbol-identity signal)."""
    seen: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        tag = node[0]
        if tag[0] == "#":
            if len(node) > 1 and tag != "#t":
                seen.add(tag[1] + node[1])
            continue
        stack.extend(node[1:])
    return sorted(seen)
