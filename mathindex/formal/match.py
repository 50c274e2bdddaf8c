"""Pattern matching on normal-form trees: `_` matches anything, `?x` matches anything but the
same subterm at every occurrence, everything else matches itself.

Two relaxations follow how Lean terms are written: a pattern application may give fewer
arguments than the statement (`HasDerivAt f` matches `HasDerivAt f f' x`), and a pattern under an
associative operator may match a contiguous run of its operands (`_ * (_ ^ _)` matches inside
`a * b ^ n * c`). Bindings are immutable dicts: a failed branch leaves nothing behind."""

from __future__ import annotations

from typing import Iterator

from mathindex.formula.grammar import ASSOCIATIVE

Env = dict


def match(p: tuple, t: tuple, env: Env) -> Env | None:
    """The bindings under which pattern `p` matches term `t` (extending `env`), or None."""
    tag = p[0]
    if tag == "_":
        return env
    if tag == "?":
        bound = env.get(p[1])
        if bound is None:
            return {**env, p[1]: t}
        return env if bound == t else None
    if tag[0] == "#":
        return env if p == t else None
    if t[0] != tag:
        return None
    kids_p, kids_t = p[1:], t[1:]
    if len(kids_p) == len(kids_t):
        return _all(kids_p, kids_t, env)
    if tag == "apply" and len(kids_p) < len(kids_t):
        return _all(kids_p, kids_t[:len(kids_p)], env)
    if tag in ASSOCIATIVE and len(kids_p) < len(kids_t):
        k = len(kids_p)
        for start in range(len(kids_t) - k + 1):
            got = _all(kids_p, kids_t[start:start + k], env)
            if got is not None:
                return got
    return None


def _all(ps: tuple, ts: tuple, env: Env) -> Env | None:
    for a, b in zip(ps, ts):
        env = match(a, b, env)
        if env is None:
            return None
    return env


def subterms(t: tuple) -> Iterator[tuple]:
    """Every subterm, the root first (pre-order, iterative)."""
    stack = [t]
    while stack:
        x = stack.pop()
        yield x
        if x[0][0] != "#" and x[0] not in ("?", "_"):
            stack.extend(reversed(x[1:]))


def match_anywhere(p: tuple, t: tuple, env: Env) -> Env | None:
    """The first subterm of `t` that `p` matches (root first); only subterms with the pattern's
    operator (and applied head) are tried."""
    tag = p[0]
    if tag in ("_", "?") or tag[0] == "#":
        return next((g for g in (match(p, s, env) for s in subterms(t)) if g is not None), None)
    phead = p[1] if tag == "apply" and p[1][0] == "#c" else None
    stack = [t]
    while stack:
        x = stack.pop()
        xt = x[0]
        if xt[0] == "#" or xt in ("?", "_"):
            continue
        if xt == tag and (phead is None or x[1] == phead):
            got = match(p, x, env)
            if got is not None:
                return got
        stack.extend(x[:0:-1])
    return None


def match_hypotheses(pats: list[tuple], hyps: list[tuple], env: Env, used: frozenset = frozenset()) -> Env | None:
    """Each pattern against a different hypothesis, in any order (backtracking)."""
    if not pats:
        return env
    first, rest = pats[0], pats[1:]
    for i, h in enumerate(hyps):
        if i in used:
            continue
        got = match(first, h, env)
        if got is not None:
            done = match_hypotheses(rest, hyps, got, used | {i})
            if done is not None:
                return done
    return None


def match_telescope(p_hyps: list[tuple], p_concl: tuple, hyps: list[tuple], concl: tuple) -> Env | None:
    """A `⊢` pattern: the conclusion at its root, the pattern's hypotheses among the statement's."""
    env = match(p_concl, concl, {})
    if env is None:
        return None
    return match_hypotheses(p_hyps, hyps, env)
