"""The SymPy worker process of formula/canonical.py (`CanonicalWorker`): a fresh interpreter that
reads batches of (index, spec) from one pipe and answers (index, status, canonical form) per item
on another. The only module that imports SymPy, so that no other process loads it."""

from __future__ import annotations

from multiprocessing.connection import Connection

import sympy as sp


def _build(spec: tuple) -> object:
    """A SymPy expression from a spec (the spec is small and shallow)."""
    tag = spec[0]
    if tag == "s":
        return sp.Symbol(spec[1])
    if tag == "n":
        return sp.Rational(spec[1])
    if tag == "add":
        return sp.Add(*(_build(c) for c in spec[1:]))
    if tag == "mul":
        return sp.Mul(*(_build(c) for c in spec[1:]))
    if tag == "neg":
        return -_build(spec[1])
    if tag == "frac":
        return _build(spec[1]) / _build(spec[2])
    if tag == "pow":
        return sp.Pow(_build(spec[1]), _build(spec[2]))
    if tag == "bound":
        _, kind, var, lo, hi, body = spec
        cls = sp.Sum if kind == "Sum" else sp.Product
        return cls(sp.expand(_build(body)), (sp.Symbol(var), _build(lo), _build(hi)))
    raise ValueError(f"unknown spec {tag}")


def canonical_of(spec: tuple) -> str:
    """The canonical key: relations as `Op(p, 0)` with p = expanded numerator, primitive, sign-fixed."""
    tag = spec[0]
    if tag == "and":
        return "And(" + ", ".join(sorted(canonical_of(c) for c in spec[1:])) + ")"
    if tag == "rel":
        _, op, lhs, rhs = spec
        diff = _build(lhs) - _build(rhs)
        if op in ("Eq", "Ne"):
            num, _den = sp.fraction(sp.together(diff))
            poly = sp.expand(num)
            if poly == 0:  # an identity: its key is the common expanded form of both sides
                side = sp.expand(sp.together(_build(lhs)))
                return f"Identity({sp.sstr(side, order='lex')})" if op == "Eq" else "Ne(0, 0)"
            _c, poly = poly.as_content_primitive()
            if poly.could_extract_minus_sign():
                poly = -poly
            return f"{op}({sp.sstr(poly, order='lex')}, 0)"
        poly = sp.expand(diff)  # Lt / Le: lhs - rhs < 0, only a positive content may be divided
        c, prim = poly.as_content_primitive()
        if c > 0:
            poly = prim
        return f"{op}({sp.sstr(poly, order='lex')}, 0)"
    expr = _build(spec)
    return sp.sstr(sp.expand(sp.together(expr)), order="lex")


def main(rfd: int, wfd: int) -> None:
    """Entry point of the worker interpreter: the pipes' file descriptors (parent -> child, child -> parent)."""
    serve(Connection(rfd, writable=False), Connection(wfd, readable=False))


def serve(rx: Connection, tx: Connection) -> None:
    """Worker loop: says `ready` (SymPy is loaded), then receives lists of (index, spec) and answers
    (index, status, canonical) per item until the pipe closes or a None arrives."""
    tx.send(("ready",))
    while True:
        try:
            batch = rx.recv()
        except EOFError:
            return
        if batch is None:
            return
        for idx, spec in batch:
            try:
                out = (idx, "ok", canonical_of(spec))
            except Exception as exc:  # noqa: BLE001 - any SymPy failure is an `error` status
                out = (idx, "error", f"{type(exc).__name__}: {exc}"[:200])
            tx.send(out)
