"""The grammar's depth-bounded Pratt parser: token list -> operator tree (see `symbols` for the tree
vocabulary). Prefix positions dispatch through a table (`_PREFIX`) instead of one long if-chain."""

from __future__ import annotations

from mathindex.formula.symbols import (
    ACCENTS,
    ASSOCIATIVE,
    BIGOPS,
    BLACKBOARD,
    CLOSERS,
    COMMUTATIVE,
    CONSTANT_MACROS,
    EMPTY,
    FONTS,
    FONT_CLASS,
    FUNCTION_MACROS,
    GREEK,
    INFIX,
    JUXT_BP,
    LINE_ENVS,
    MINUS_ONE,
    MUL_BP,
    STACKERS,
    SWITCHES,
    RDOT,
    RELOPS,
    REL_BP,
    REL_NAMES,
    SCRIPT_BP,
    SUBSCRIPT_DIGITS,
    SWAP,
    UNARY_BP,
)
from mathindex.formula.tokens import MAX_DEPTH, tokenize, tokenize_lean
from mathindex.formula.optree import strip_parens, with_font

MAX_CHARS = 20_000  # longer inputs are not parsed by the grammar
MAX_REPAIRS = 8  # tokens a partial tree may drop
PARTIAL_MAX_TOKENS = 3_000  # longer token lists get no partial tree (each repair is a new parse)
PARTIAL_WORK_TOKENS = 12_000  # tokens all the attempts of one partial tree may parse together


class ParseError(ValueError):
    """The grammar rejected the input (the caller tries a partial tree, then the MathML layout tree).
    `pos` is the index of the token it stumbled on, when there is one to blame."""

    def __init__(self, message: str, pos: int | None = None) -> None:
        super().__init__(message)
        self.pos = pos



def is_leaf(node: tuple) -> bool:
    return node[0][0] == "#"


def flat(op: str, a: tuple, b: tuple) -> tuple:
    if op in ASSOCIATIVE:
        left = a[1:] if a[0] == op else (a,)
        right = b[1:] if b[0] == op else (b,)
        return (op, *left, *right)
    return (op, a, b)


class _Parser:
    """One parse over a token list; `lean` switches juxtaposition of identifiers to application."""

    __slots__ = ("toks", "i", "n", "depth", "lean")

    def __init__(self, toks: list[str], lean: bool) -> None:
        self.toks = toks
        self.i = 0
        self.n = len(toks)
        self.depth = 0
        self.lean = lean

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < self.n else None

    def next(self) -> str:
        if self.i >= self.n:
            raise ParseError("unexpected end of formula")
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, *options: str) -> str:
        """Consumes one of `options`; at the end of the input a missing closer is taken as typed
        (a closing brace or bracket forgotten at the end of a hand-typed formula)."""
        t = self.peek()
        if t not in options:
            if t is None and options[0] in _AUTOCLOSE:
                return options[0]
            raise ParseError(f"expected {options[0]!r}, found {t!r}", self.i)
        self.i += 1
        return t

    # -- expressions -----------------------------------------------------------------------

    def expr(self, rbp: int, stops: frozenset) -> tuple:
        """The expression at the cursor whose operators bind tighter than `rbp`, up to a token of
        `stops` or a closer: a prefix (`nud`), then infix operators, stacked arrows, words between
        formulas, scripts, postfix marks, restrictions `f|_A` and juxtaposition, in that order."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ParseError("nesting too deep")
        t = self.peek()
        if t is None or t in stops or t in CLOSERS or t == "," or t == ";" or (
                t == "|" and self.lean and not self._bar_closes()):
            self.depth -= 1
            return EMPTY
        self.i += 1
        left = self.nud(t, stops)
        while True:
            t = self.peek()
            if t is None or t in stops:
                break
            inf = INFIX.get(t)
            if inf is not None:
                lbp = inf[0]
                if lbp <= rbp:
                    break
                self.i += 1
                left = self.led(t, inf, left, stops)
                continue
            if t in STACKERS:
                stacked = self._stacked_infix()
                if stacked is not None:  # A \stackrel{f}{\to} B, a \overset{def}{=} b
                    tok, label, j = stacked
                    if INFIX[tok][0] <= rbp:
                        break
                    self.i = j
                    left = self.led(tok, INFIX[tok], left, stops, label)
                    continue
            if t[:2] == "\x00t" and len(t) > 3:
                # words between formulas: `a = 0 \text{ for } i > 0`
                if rbp >= 2:
                    break
                self.i += 1
                right = self.expr(2, stops)
                left = ("textsep", left, ("#t", t[2:]), right)
                continue
            if t == "^" or t == "_":
                if SCRIPT_BP <= rbp:
                    break
                left = self.scripts(left)
                continue
            if t == "'" or t == "!" or t == "\\inv" or t == "\\dagger" or t == "\\ast_post":
                self.i += 1
                left = ("prime" if t == "'" else "factorial" if t == "!" else "inv" if t == "\\inv"
                        else "dagger", left)
                continue
            if self.lean and t == "." and self.i + 1 < self.n and self.toks[self.i + 1][:2] == "\x00l":
                # `(chartAt H x).source`: a field of a parenthesised term
                self.i += 2
                left = ("apply", ("#c", self.toks[self.i - 1][2:].split(".")[-1]), left)
                continue
            if (t == "\\|" or (t == "|" and self.lean and self._bar_closes())) and t not in stops \
                    and JUXT_BP > rbp:
                right = self.expr(JUXT_BP, stops)  # `max ‖q‖ ‖r‖`: a norm opens here
                left = self.juxt(left, right)
                continue
            if t in CLOSERS or t == "&" or t == "\\\\" or t.startswith("\\end{") or t == "|" or t == "\\|":
                if t == "|" and self.i + 1 < self.n and self.toks[self.i + 1] in ("_", "^"):
                    self.i += 1  # f|_A, F|_a^b: the restriction (evaluation) with its scripts
                    sub, sup = self.script_parts()
                    left = ("restrict", left, *(x for x in (sub, sup) if x is not None))
                    continue
                if t == "|" and "|" not in stops:
                    # `a | b` used as "divides" / "such that"
                    if REL_BP <= rbp:
                        break
                    self.i += 1
                    left = self.led("\\mid", INFIX["\\mid"], left, stops)
                    continue
                break
            if JUXT_BP <= rbp:
                break
            before = self.i
            right = self.expr(JUXT_BP, stops)
            if right is EMPTY:
                if self.i == before:
                    break
                continue  # `{}`, `\hline`: consumed, nothing to multiply by
            left = self.juxt(left, right)
        self.depth -= 1
        return left

    def _bar_closes(self) -> bool:
        """Lean: does the `|` at the cursor open |x| (another `|` follows at the same depth)?
        If not, it separates, as in `μ[t | s]`."""
        depth = 0
        for j in range(self.i + 1, min(self.n, self.i + 200)):
            t = self.toks[j]
            if t in ("(", "[", "{", "\\{", "\\langle"):
                depth += 1
            elif t in (")", "]", "}", "\\}", "\\rangle"):
                depth -= 1
                if depth < 0:
                    return False
            elif t == "|" and depth == 0:
                return True
        return False

    def juxt(self, left: tuple, right: tuple) -> tuple:
        """Juxtaposition: application after a function-like head, else multiplication."""
        if self.lean:
            if left[0] == "apply":
                return (*left, right)
            if left[0] in ("#v", "#c") or left[0] in ("sub",):
                return ("apply", left, right)
            return flat("mul", left, right)
        if left[0] == "mul" and right[0] in ("paren", "tuple"):  # 2f(x): mul(2, apply(f, x))
            last = self.juxt(left[-1], right)
            if last[0] == "apply":
                return (*left[:-1], last)
        head = left
        while head[0] in ("sub", "pow", "prime") and len(head) > 1:  # \Ext^1_A(M, N), f'(x)
            head = head[1]
        if head[0] == "#c" and head[1][:1].isalpha() and len(head[1]) > 1 and head[1] not in (
                "inf", "dots", "empty", "partial", "nabla", "hbar", "aleph"):
            return ("apply", left, *(right[1:] if right[0] == "tuple" else (right,)))
        if right[0] == "tuple" and head[0] == "#v":  # C(X, Y): application to several arguments
            return ("apply", left, *right[1:])
        if right[0] == "bracket" and head[0] == "#v":  # k[x], μ[t | s]
            return ("apply", left, right)
        if right[0] == "paren" and head[0] == "#v":
            # f(x), a(W), \xi_{V/R}(m): application whatever the letter, so that renaming a
            # variable never changes the tree (an explicit \cdot keeps a product)
            return ("apply", left, right[1])
        if right[0] == "paren":
            right = right[1]
        if left[0] == "paren":
            left = left[1]
        return flat("mul", left, right)

    def led(self, t: str, inf: tuple, left: tuple, stops: frozenset, label: tuple | None = None) -> tuple:
        """The node of infix token `t` (already consumed) with `left`; `label` is a stacked label
        (`\\stackrel{f}{\\to}`), kept on arrows and dropped on relations (`\\overset{def}{=}`)."""
        lbp, op, kind = inf
        if left[0] == "paren":
            left = left[1]
        if kind == "over":  # {a \\over b}: everything before and after, up to the group's end
            return (op, left, self.expr(0, stops))
        if label is not None:
            if kind == "rel":
                label = None
        elif t in ("\\xrightarrow", "\\xleftarrow", "\\xhookrightarrow", "\\xmapsto"):
            if self.peek() == "[":
                self.i += 1
                self.expr(0, frozenset({"]"}))
                self.expect("]")
            label = self.arg()
        elif kind != "seq" and self.peek() in ("_", "^"):
            # an operator with scripts: \otimes_R, \times_S, \to^{f}, \otimes^{\mathbf{L}}
            label = self.scripts(("#c", "op"))
        if kind == "seq":
            right = self.expr(lbp, stops)
            if left[0] == "seq":
                return (*left, right)
            return ("seq", left, right)
        if kind == "r":
            right = self.expr(lbp - 1, stops)
        else:
            right = self.expr(lbp, stops)
        if right[0] == "paren":
            right = right[1]
        if op == "sub":
            return flat("add", left, ("neg", right))
        if op == "pipe":
            return (*left, right) if left[0] == "apply" else ("apply", left, right)
        if op == "rpipe":
            return ("apply", right, left)
        if op == "rcompose":  # f ≫ g = g ∘ f
            return flat("compose", right, left)
        if op in SWAP:
            op = SWAP[op]
            node = (op, right, left)
        elif kind == "rel" and left[0] == op and op in COMMUTATIVE and label is None:
            return (*left, right)  # a = b = c: eq(a, b, c)
        elif kind == "rel" and left[0] in RELOPS and len(left) >= 3:
            # a chain a < b <= c: and(lt(a, b), le(b, c))
            return ("and", left, (op, left[-1], right))
        elif kind == "rel" and left[0] == "and" and left[-1][0] in RELOPS:
            return (*left, (op, left[-1][-1], right))
        else:
            node = flat(op, left, right)
        if label is not None:
            node = (*node, label)
        return node

    def scripts(self, base: tuple) -> tuple:
        """`base` with the `_`/`^` scripts at the cursor: sub, pow, or inv for `^{-1}`."""
        sub, sup = self.script_parts()
        if sub is not None:
            base = ("sub", base, sub)
        if sup == MINUS_ONE:  # x^{-1} is the inverse, as Lean's x⁻¹: one operator for both
            base = ("inv", base)
        elif sup is not None:
            base = ("pow", base, sup)
        return base

    def script_parts(self) -> tuple:
        """(subscript, superscript) at the cursor, each None when absent, in either order."""
        sub = sup = None
        while True:
            t = self.peek()
            if t == "_" and sub is None:
                self.i += 1
                sub = self.arg()
            elif t == "^" and sup is None:
                self.i += 1
                sup = self.arg()
            else:
                break
        return sub, sup

    def arg(self) -> tuple:
        """A macro argument or script: a braced group or one token."""
        t = self.peek()
        if t is None:
            raise ParseError("missing argument", self.i)
        if t == "{":
            self.i += 1
            e = self.expr(0, _BRACE_STOPS)
            self.expect("}")
            return e
        if t[0].isdigit() and len(t) > 1:  # \frac12, x^23: one digit only
            self.toks[self.i] = t[1:]
            return ("#n", t[0])
        self.i += 1
        if t in INFIX or t in CLOSERS or t in ("^", "_", "&", "\\\\"):
            if t in ("'",):
                return ("#c", "prime")
            return ("#c", t.lstrip("\\"))
        return self.nud(t, frozenset(), scripts=False)

    # -- prefix positions -----------------------------------------------------------------

    def nud(self, t: str, stops: frozenset, scripts: bool = True) -> tuple:
        """The tree of token `t` in prefix position: marked tokens, letters and numbers inline,
        the rest through `_PREFIX` (token -> handler, whether scripts may follow), then by the
        token's first character."""
        c = t[0]
        if c == "\x00":
            kind, body = t[1], t[2:]
            if kind == "l":
                if body == "if":
                    return self.ite(stops)
                node = self.lean_ident(body)
            elif kind == "t":
                node = ("#t", body)
            elif kind == "b":
                node = ("#c", "bb" + body)
            elif kind == "v":
                node = ("#v", body)
            else:  # named operator \mathrm{word}
                node = ("#c", body) if len(body) > 1 else ("#v", body)
        elif c.isalpha() and len(t) == 1:
            node = ("#v", t)
        elif c.isdigit():
            node = ("#n", t)
        else:
            entry = _PREFIX.get(t)
            if entry is not None:
                node = entry[0](self, t, stops)
                if not entry[1]:
                    return node
            elif t.startswith("\\begin{"):
                node = self.environment(t[7:-1])
            elif c == "\\":
                name = t[1:].rstrip("*")
                node = ("#c", name) if len(name) > 1 else ("#v", name)
            elif c.isalpha():  # unicode letters
                node = ("#v", t)
            else:
                node = ("#c", t)
        if scripts:
            nxt = self.peek()
            if nxt == "_" or nxt == "^":
                node = self.scripts(node)
        return node

    # -- prefix handlers (the values of _PREFIX): (self, token, stops) -> tree -------------

    def _nud_paren(self, t: str, stops: frozenset) -> tuple:
        inner = self.expr(0, _PAREN_STOPS)
        self.expect(")", "]", RDOT)
        return ("tuple", *inner[1:]) if inner[0] == "seq" else ("paren", inner)

    def _nud_bracket(self, t: str, stops: frozenset) -> tuple:
        inner = self.expr(0, _BRACK_STOPS)
        self.expect("]", ")", RDOT)
        return ("bracket", *(inner[1:] if inner[0] == "seq" else (inner,)))

    def _nud_group(self, t: str, stops: frozenset) -> tuple:
        switch = self.peek()
        if switch in SWITCHES:  # {\\bf M}, {\\cal F}_x: the switch sets the rest of the group
            self.i += 1
            inner = self.expr(0, _BRACE_STOPS)
            self.expect("}")
            return with_font(inner, SWITCHES[switch]) if SWITCHES[switch] else inner
        inner = self.expr(0, _BRACE_STOPS)
        self.expect("}")
        return inner if inner[0] != "paren" else inner[1]

    def _nud_set(self, t: str, stops: frozenset) -> tuple:
        return self.set_braces()

    def _nud_bars(self, t: str, stops: frozenset) -> tuple:
        if t == "|" and self.peek() == "|":  # ||f||: a norm typed with two bars
            start = self.i
            try:
                self.i += 1
                inner = self.expr(0, _ABS_STOPS)
                self.expect("|")
                self.expect("|")
                return ("abs", inner)
            except ParseError:
                self.i = start
        inner = self.expr(0, _ABS_STOPS if t == "|" else _NORM_STOPS)
        if self.peek() == RDOT:
            self.i += 1
            return ("restrict", inner)
        self.expect(t)
        return ("abs", inner)  # |x| and ‖x‖: one magnitude operator for search

    def _nud_delims(self, t: str, stops: frozenset) -> tuple:
        close = _DELIM_CLOSE[t]
        inner = self.expr(0, frozenset({close, RDOT}))
        self.expect(close, RDOT)
        return (_DELIM_OP[t], *(inner[1:] if inner[0] == "seq" else (inner,)))

    def _nud_greek(self, t: str, stops: frozenset) -> tuple:
        return ("#v", GREEK[t])

    def _nud_bigop(self, t: str, stops: frozenset) -> tuple:
        return self.bigop(BIGOPS[t], stops)

    def _nud_frac(self, t: str, stops: frozenset) -> tuple:
        return ("frac", self.arg(), self.arg())

    def _nud_binom(self, t: str, stops: frozenset) -> tuple:
        return ("binom", self.arg(), self.arg())

    def _nud_substack(self, t: str, stops: frozenset) -> tuple:
        """`\\substack{x \\to c \\\\ x \\in A}`: the conditions of a limit, one per line."""
        self.expect("{")
        rows = [self.expr(0, _BRACE_STOPS)]
        while self.peek() == "\\\\":
            self.i += 1
            rows.append(self.expr(0, _BRACE_STOPS))
        self.expect("}")
        rows = [r for r in rows if r is not EMPTY]
        return EMPTY if not rows else rows[0] if len(rows) == 1 else ("and", *rows)

    def _stacked_infix(self) -> tuple | None:
        """(infix token, label, index after) when the stacker at the cursor puts its label over an
        infix operator (`\\stackrel{f}{\\to}`, `\\overset{\\sim}{\\longrightarrow}`), else None."""
        start = self.i
        try:
            self.i += 1
            label = self.arg()
            j = self.i
            toks = self.toks
            if j + 2 < self.n and toks[j] == "{" and toks[j + 1] in INFIX and toks[j + 2] == "}":
                return toks[j + 1], label, j + 3
            if j < self.n and toks[j] in INFIX:
                return toks[j], label, j + 1
            return None
        except ParseError:
            return None
        finally:
            self.i = start

    def _nud_sqrt(self, t: str, stops: frozenset) -> tuple:
        if self.peek() == "[":
            self.i += 1
            idx = self.expr(0, frozenset({"]"}))
            self.expect("]")
            return ("root", self.arg(), idx)
        return ("sqrt", self.arg())

    def _nud_accent(self, t: str, stops: frozenset) -> tuple:
        return (ACCENTS[t], self.arg())

    def _nud_font(self, t: str, stops: frozenset) -> tuple:
        a = self.arg()
        cls = FONT_CLASS.get(t, "")
        return with_font(a, cls) if cls else a

    def _nud_stack(self, t: str, stops: frozenset) -> tuple:
        over = self.arg()
        base = self.arg()
        if base[0] == "#c" and base[1] in REL_NAMES:
            return ("#c", base[1])
        return (base[0], *base[1:], over) if base[0] in RELOPS or base[0] == "#c" else ("stack", base, over)

    def _nud_mathbb(self, t: str, stops: frozenset) -> tuple:
        a = self.arg()
        return ("#c", "bb" + (a[1] if is_leaf(a) and len(a) > 1 else "?"))

    def _nud_blackboard(self, t: str, stops: frozenset) -> tuple:
        return ("#c", "bb" + BLACKBOARD[t])

    def _nud_not(self, t: str, stops: frozenset) -> tuple:
        return ("not", self.expr(UNARY_BP, stops))

    def _nud_sign(self, t: str, stops: frozenset) -> tuple:
        inner = self.expr(UNARY_BP, stops)
        if inner is EMPTY:
            return ("#c", t.lstrip("\\"))
        if t == "+":
            return inner
        return ("neg" if t == "-" else t[1:], inner)

    def _nud_binder(self, t: str, stops: frozenset) -> tuple:
        return self.binder(_BINDER_OPS.get(t, "exists"), stops)

    def _nud_xymatrix(self, t: str, stops: frozenset) -> tuple:
        return self.xymatrix()

    def _nud_pmod(self, t: str, stops: frozenset) -> tuple:
        return ("mod", self.arg())

    def _nud_xy_arrow(self, t: str, stops: frozenset) -> tuple:
        return self.xy_arrow()

    def _nud_constant(self, t: str, stops: frozenset) -> tuple:
        return ("#c", CONSTANT_MACROS[t])

    def _nud_function(self, t: str, stops: frozenset) -> tuple:
        return ("#c", t[1:])

    def _nud_infix(self, t: str, stops: frozenset) -> tuple:
        """An operator in prefix position: a partial formula such as `\\to` or `= 0`."""
        lbp, op, kind = INFIX[t]
        right = self.expr(lbp, stops) if kind != "seq" else EMPTY
        if t in ("\\xrightarrow", "\\xleftarrow"):
            right = self.arg()
        if right is EMPTY:
            return ("#c", op)
        return (SWAP.get(op, op), EMPTY, right)

    def _nud_inv(self, t: str, stops: frozenset) -> tuple:
        return ("#c", "inv")

    def _nud_coe(self, t: str, stops: frozenset) -> tuple:
        return ("coe", self.expr(UNARY_BP, stops))

    def _nud_card(self, t: str, stops: frozenset) -> tuple:  # Lean `#s`: the cardinality, |s| in LaTeX
        return ("abs", self.expr(SCRIPT_BP, stops))

    def _nud_unexpected(self, t: str, stops: frozenset) -> tuple:
        raise ParseError(f"unexpected {t}", self.i - 1)

    def _nud_unbalanced(self, t: str, stops: frozenset) -> tuple:
        raise ParseError(f"unbalanced {t}", self.i - 1)

    def _nud_rule(self, t: str, stops: frozenset) -> tuple:
        return EMPTY

    def _nud_prime(self, t: str, stops: frozenset) -> tuple:
        return ("#c", "prime")

    def _nud_script(self, t: str, stops: frozenset) -> tuple:
        self.i -= 1
        return self.scripts(EMPTY)

    def _nud_punct(self, t: str, stops: frozenset) -> tuple:
        return ("#c", t.lstrip("\\"))

    def lean_ident(self, name: str) -> tuple:
        """A Lean identifier: `n.divisors` is the application of `divisors` to `n`."""
        parts = name.split(".")
        if len(parts) == 1:
            return _lean_atom(name)
        if parts[0][:1].isupper() and len(parts[0]) > 1:  # Nat.card, Finset.sum: a qualified constant
            return ("#c", parts[-1])
        node = _lean_atom(parts[0])
        for field in parts[1:]:
            field = {"1": "fst", "2": "snd"}.get(field, field)
            node = ("apply", ("#c", field), node)
        return node

    def ite(self, stops: frozenset) -> tuple:
        """Lean `if c then a else b` (also `if h : c then ...`)."""
        cond = self.expr(0, _THEN)
        self.expect("\x00lthen")
        yes = self.expr(0, _ELSE)
        self.expect("\x00lelse")
        no = self.expr(2, stops)
        return ("ite", cond, yes, no)

    def set_braces(self) -> tuple:
        elem = self.expr(0, _SETB_STOPS)
        t = self.peek()
        if t in ("\\mid", "|", ":", "\\colon"):
            self.i += 1
            if self.lean and t == ":":  # Lean `{b : B | p b}`
                typ = self.expr(0, _SETB_STOPS)
                elem = ("typed", elem, typ)
                if self.peek() in ("|", "\\mid"):
                    self.i += 1
            cond = self.expr(0, _SETB_COND_STOPS)
            self.expect("\\}", RDOT)
            return ("setb", elem, cond)
        if t == RDOT or t is None:
            if t == RDOT:
                self.i += 1
            return ("cases", elem)
        self.expect("\\}")
        return ("set", *(elem[1:] if elem[0] == "seq" else (elem,))) if elem is not EMPTY else ("set",)

    def bigop(self, op: str, stops: frozenset) -> tuple:
        lo = hi = EMPTY
        while True:
            t = self.peek()
            if t == "_":
                self.i += 1
                lo = self.arg()
            elif t == "^":
                self.i += 1
                hi = self.arg()
            else:
                break
        binders = None
        if self.lean or (self.peek() is not None and self._lean_binder_ahead()):
            binders = self.lean_binders()
            if self.peek() == ",":
                self.i += 1
            lo = binders
        if op in ("lim", "sup", "inf", "max", "min", "limsup", "liminf", "colim", "argmax", "argmin"):
            body = self.expr(MUL_BP - 1, stops)
        else:
            body = self.expr(MUL_BP - 1, stops)
        if body[0] == "paren":
            body = body[1]
        if lo is EMPTY and hi is EMPTY and body is EMPTY:
            return ("#c", op)
        return (op, lo, hi, body)

    def _lean_binder_ahead(self) -> bool:
        # `\sum x \in s, f x` written without scripts (unicode LaTeX / Lean)
        j = self.i
        n = min(self.n, j + 12)
        depth = 0
        while j < n:
            t = self.toks[j]
            if t in ("(", "{", "["):
                depth += 1
            elif t in (")", "}", "]"):
                depth -= 1
            elif t == "," and depth == 0:
                return self.toks[self.i][:2] == "\x00l" or self.toks[self.i].isalpha()
            j += 1
        return False

    def lean_binders(self, ends: frozenset = frozenset({","})) -> tuple:
        """Binders up to the comma (or `=>`/`↦` of a lambda): `x y : T`, `(x : T)`, `{x}`,
        `[C x]`, `d ∈ s`, `x < n`."""
        names: list[tuple] = []
        conds: list[tuple] = []
        while True:
            t = self.peek()
            if t is None or t in ends:
                break
            if t in ("(", "{", "[", "\u2983", "\\{"):
                self.i += 1
                close = {"(": ")", "{": "}", "[": "]", "\u2983": "\u2984", "\\{": "\\}"}[t]
                inner = self.expr(0, frozenset({close}))
                self.expect(close)
                conds.append(inner)
                continue
            if t in INFIX and t not in (",",):
                lbp, op, kind = INFIX[t]
                self.i += 1
                right = self.expr(lbp if kind != "r" else lbp - 1, ends)
                if op == "typed":
                    conds.append(("typed", *names, right) if names else right)
                    names = []
                else:
                    var = names.pop() if names else EMPTY
                    conds.append((SWAP.get(op, op), var, right) if op not in SWAP else (SWAP[op], right, var))
                continue
            self.i += 1
            node = self.nud(t, ends, scripts=False)
            names.append(node)
        items = conds + names
        if not items:
            return EMPTY
        return items[0] if len(items) == 1 else ("bind", *items)

    def binder(self, op: str, stops: frozenset) -> tuple:
        if self.lean or self._lean_binder_ahead():
            b = self.lean_binders(_LAMBDA_ENDS if op == "lambda" else _COMMA_STOPS)
            if self.peek() == ",":
                self.i += 1
            if op == "lambda" and self.peek() in ("=>", "\\mapsto"):
                self.i += 1
        else:
            b = self.expr(8, stops | _QUANT_STOPS)
            if self.peek() in (",", ":", "\\colon", "."):
                self.i += 1
        if op == "lambda" and self.peek() in ("=>", "\\mapsto"):
            self.i += 1
        body = self.expr(2, stops)
        return (op, b, body)

    def environment(self, name: str) -> tuple:
        """`\\begin{name} … \\end{name}`: aligned environments as one relation chain over their
        lines, cases and matrices as rows of cells; an environment left open ends with the input."""
        base = name.rstrip("*")
        if base in ("array", "tabular") and self.peek() == "{":
            depth = 0
            while self.i < self.n:
                t = self.next()
                depth += t == "{"
                depth -= t == "}"
                if depth == 0:
                    break
        if base in ("alignat", "alignedat") and self.peek() == "{":
            self.arg()
        end = "\\end{" + name + "}"
        stops = frozenset({"&", "\\\\", end})
        rows: list[tuple] = []
        cells: list[tuple] = []
        lines = base in LINE_ENVS
        while True:
            cell = self.expr(0, stops)
            t = self.next() if self.i < self.n else end  # an environment left open at the end
            if lines:
                if t == "&":
                    cells.append(cell)
                    continue
                cells.append(cell)
                rows.append(_joined(cells))
                cells = []
            else:
                cells.append(cell)
                if t == "&":
                    continue
                rows.append(("row", *cells))
                cells = []
            if t == "\\\\":
                if self.peek() == "[":  # \\[2pt]
                    while self.i < self.n and self.next() != "]":
                        pass
                if self.peek() == end:
                    self.i += 1
                    break
                continue
            if t == end:
                break
            raise ParseError(f"unexpected {t} in {name}", self.i - 1)
        while rows and rows[-1] in (EMPTY, ("row", EMPTY)):
            rows.pop()
        if lines:
            merged = rows[0] if rows else EMPTY
            for r in rows[1:]:
                merged = _join_cells(merged, r, line=True)
            return merged
        op = {"cases": "cases", "dcases": "cases", "vmatrix": "det", "Vmatrix": "norm"}.get(base, "matrix")
        return (op, *rows)

    def xymatrix(self) -> tuple:
        """`\\xymatrix{A \\ar[r]^f & B}`: a matrix of objects whose arrows are ("arrow", dir, label)."""
        while self.peek() not in ("{", None):  # @C=1em, @R=..., @!
            self.i += 1
        self.expect("{")
        stops = frozenset({"&", "\\\\", "}", "\\ar", "\\arrow"})
        rows: list[tuple] = []
        cells: list[tuple] = []
        while True:
            obj = self.expr(0, stops)  # the object, then its arrows
            arrows = []
            while self.peek() in ("\\ar", "\\arrow"):
                self.i += 1
                arrows.append(self.xy_arrow())
            cell = ("cell", obj, *arrows) if arrows else obj
            t = self.next()
            cells.append(cell)
            if t == "&":
                continue
            rows.append(("row", *cells))
            cells = []
            if t == "}":
                break
        return ("diagram", *rows)

    def xy_arrow(self) -> tuple:
        direction = ""
        while self.peek() == "@":  # \ar@{->>}, \ar@<1ex>
            self.i += 1
            if self.peek() in ("{", "<", "("):
                opener = self.next()
                close = {"{": "}", "<": ">", "(": ")"}[opener]
                depth = 1
                while self.i < self.n and depth:  # balanced: \ar@{^{(}->}
                    t = self.next()
                    depth += (t == opener) - (t == close)
            elif self.peek() is not None and self.peek() not in ("[",):
                self.i += 1
        if self.peek() == "[":
            self.i += 1
            parts = []
            while self.i < self.n and self.peek() != "]":
                parts.append(self.next())
            self.expect("]")
            direction = "".join(parts)
        label = EMPTY
        while self.peek() in ("^", "_", "|"):
            self.i += 1
            while self.peek() in ("<", ">", "-", "(", ")", "|"):  # ^-{f}, ^<(0.3){f}
                self.i += 1
            label = self.arg()
        return ("arrow", ("#c", direction or "?"), label)



_AUTOCLOSE = frozenset({"}", ")", "]", "\\}", "|", "\\|", "\\rangle", "\\rfloor", "\\rceil"})
_DELIM_CLOSE = {"\\langle": "\\rangle", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"}
_DELIM_OP = {"\\langle": "angle", "\\lfloor": "floor", "\\lceil": "ceil"}
_BINDER_OPS = {"\\forall": "forall", "\\exists": "exists", "\\nexists": "nexists", "\\lambda_kw": "lambda"}


def _prefix_table() -> dict[str, tuple]:
    """token -> (handler, scripts may follow); the first entry for a token wins, so the order
    below is the precedence among tables that share a token (`\\circ` is a constant before it is
    an infix operator)."""
    table: dict[str, tuple] = {}
    p = _Parser

    def put(tokens, handler, scripts: bool = True) -> None:
        for tok in tokens:
            table.setdefault(tok, (handler, scripts))

    put(["("], p._nud_paren)
    put(["["], p._nud_bracket)
    put(["{"], p._nud_group)
    put(["\\{"], p._nud_set)
    put(["|", "\\|"], p._nud_bars)
    put(_DELIM_CLOSE, p._nud_delims)
    put(GREEK, p._nud_greek)
    put(BIGOPS, p._nud_bigop, scripts=False)
    put(["\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\nicefrac", "\\sfrac"], p._nud_frac)
    put(["\\binom", "\\dbinom", "\\tbinom"], p._nud_binom)
    put(["\\substack"], p._nud_substack)
    put(["\\sqrt"], p._nud_sqrt)
    put(ACCENTS, p._nud_accent)
    put(FONTS, p._nud_font)
    put(["\\overset", "\\underset", "\\stackrel"], p._nud_stack)
    put(["\\mathbb", "\\Bbb"], p._nud_mathbb)
    put(BLACKBOARD, p._nud_blackboard)
    put(["\\neg", "\\lnot", "\\not"], p._nud_not, scripts=False)
    put(["-", "\\pm", "\\mp", "+"], p._nud_sign, scripts=False)
    put(["\\forall", "\\exists", "\\nexists", "\\exists!", "\\lambda_kw", "\\Pi_kw"], p._nud_binder, scripts=False)
    put(["\\xymatrix", "\\xy"], p._nud_xymatrix)
    put(["\\pmod", "\\pod"], p._nud_pmod)
    put(["\\ar", "\\arrow"], p._nud_xy_arrow)
    put(CONSTANT_MACROS, p._nud_constant)
    put(FUNCTION_MACROS, p._nud_function)
    put(INFIX, p._nud_infix, scripts=False)
    put(["\\inv"], p._nud_inv)
    put(["\\uparrow"], p._nud_coe, scripts=False)
    put(["#"], p._nud_card, scripts=False)
    # backslash tokens past this point take the generic macro leaf in `nud`, except these
    put(["\\right", "\\left", "\\\\", "\\end"], p._nud_unexpected)
    put(["\\hline", "\\cline", "\\noalign"], p._nud_rule, scripts=False)
    put(["&"], p._nud_unexpected)
    put([c for c in CLOSERS if c[0] != "\\"], p._nud_unbalanced)
    put(["'"], p._nud_prime)
    put(["^", "_"], p._nud_script, scripts=False)
    put(["@", "$", "?", ".", '"'], p._nud_punct)
    return table


_PREFIX = _prefix_table()


def _lean_atom(name: str) -> tuple:
    base = name.rstrip("\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089")
    if base and base != name:  # s₁ -> sub(s, 1), as LaTeX s_1
        return ("sub", _lean_atom(base), ("#n", name[len(base):].translate(SUBSCRIPT_DIGITS)))
    if name in GREEK:
        return ("#v", GREEK[name])
    if len(name) == 1 or (len(name) <= 3 and name[1:].isdigit()) or name.endswith("'") and len(name) <= 3:
        return ("#v", name)
    if name in ("true", "True", "false", "False"):
        return ("#c", name.lower())
    return ("#c", name)


def _joined(cells: list[tuple]) -> tuple:
    """One row's aligned cells (`a &= b &= c`) joined left to right into one tree."""
    merged = cells[0]
    for c in cells[1:]:
        merged = _join_cells(merged, c)
    return merged


def _join_cells(a: tuple, b: tuple, line: bool = False) -> tuple:
    """Joins aligned cells: `a &= b` and continued lines `\\\\ &= c` into one relation chain."""
    if a is EMPTY:
        return b
    if b is EMPTY:
        return a
    if b[0] in RELOPS and len(b) == 3 and b[1] is EMPTY:
        prev = a[-1] if a[0] in RELOPS else a
        if a[0] == "and" and a[-1][0] in RELOPS:
            prev = a[-1][-1]
            return (*a, (b[0], prev, b[2]))
        if a[0] in RELOPS:
            if a[0] == b[0] and a[0] in COMMUTATIVE:
                return (*a, b[2])
            return ("and", a, (b[0], prev, b[2]))
        return (b[0], a, b[2])
    if b[0] == "add" and line and a[0] in RELOPS:
        return (*a[:-1], flat("add", a[-1], b))
    return ("lines", a, b) if line else flat("mul", a, b)



_PAREN_STOPS = frozenset({")", "]", RDOT})
_BRACK_STOPS = frozenset({"]", ")", RDOT})
_BRACE_STOPS = frozenset({"}"})
_ABS_STOPS = frozenset({"|", RDOT})
_NORM_STOPS = frozenset({"\\|", RDOT})
_SETB_STOPS = frozenset({"\\}", "\\mid", "|", ":", "\\colon", RDOT})
_SETB_COND_STOPS = frozenset({"\\}", RDOT})
_COMMA_STOPS = frozenset({","})
_THEN = frozenset({"\x00lthen"})
_ELSE = frozenset({"\x00lelse"})
_LAMBDA_ENDS = frozenset({",", "=>", "\\mapsto"})
_QUANT_STOPS = frozenset({",", ":", "\\colon", "."})


def join_broken_parens(toks: list[str]) -> list[str]:
    """`toks` without the `&` and `\\\\` that lie inside a parenthesis or bracket closed later at
    the same environment level (`\\left( a + b \\\\ & + c \\right)` across aligned lines);
    an environment or a braced group opened inside the parenthesis (`(\\xymatrix{A & B})`) keeps
    its own cells."""
    stack: list[tuple[bool, list[int]]] = []  # (is a parenthesis, breaks seen at this level)
    drop: list[int] = []
    for i, t in enumerate(toks):
        if t == "(" or t == "[":
            stack.append((True, []))
        elif t == ")" or t == "]":
            if stack and stack[-1][0]:
                drop.extend(stack.pop()[1])
        elif t == "&" or t == "\\\\":
            if stack and stack[-1][0]:
                stack[-1][1].append(i)
        elif t == "{" or t[:7] == "\\begin{":
            stack.append((False, []))
        elif t == "}" or t[:5] == "\\end{":
            while stack and stack[-1][0]:
                stack.pop()
            if stack:
                stack.pop()
    if not drop:
        return toks
    gone = set(drop)
    return [t for i, t in enumerate(toks) if i not in gone]


def parse_tokens(toks: list[str], lean: bool = False) -> tuple:
    """The operator tree of a token list; raises ParseError when the grammar rejects it."""
    while toks and toks[-1] in (".", ",", ";", "\\\\"):
        toks = toks[:-1]
    if not toks:
        raise ParseError("empty formula")
    p = _Parser(toks, lean)
    stops = frozenset({"&", "\\\\"})
    rows: list[tuple] = []
    cells: list[tuple] = []
    while True:
        cell = p.expr(0, stops)
        t = p.peek()
        if t is None:
            cells.append(cell)
            break
        if t == "&":
            p.i += 1
            cells.append(cell)
            continue
        if t == "\\\\":
            p.i += 1
            cells.append(cell)
            rows.append(_joined(cells))
            cells = []
            if p.peek() == "[":
                while p.i < p.n and p.next() != "]":
                    pass
            continue
        raise ParseError(f"unexpected {t!r}", p.i)
    rows.append(_joined(cells))
    tree = rows[0]
    for r in rows[1:]:
        tree = _join_cells(tree, r, line=True)
    if tree is EMPTY:
        raise ParseError("empty formula")
    return strip_parens(tree)



def parse_partial_tokens(toks: list[str], lean: bool = False) -> tuple[tuple, list[str]]:
    """A partial operator tree of a token list the grammar rejects, and the repairs made: the token
    the grammar stumbles on is dropped (or an empty group added for an argument missing at the end),
    at most MAX_REPAIRS times and within PARTIAL_WORK_TOKENS tokens parsed in all. ParseError when that gives no tree, for an error with no token to
    blame (nesting too deep, nothing left), or for more than PARTIAL_MAX_TOKENS tokens."""
    if len(toks) > PARTIAL_MAX_TOKENS:
        raise ParseError(f"no partial tree for more than {PARTIAL_MAX_TOKENS} tokens")
    toks = list(toks)
    repairs: list[str] = []
    attempts = min(MAX_REPAIRS + 1, max(1, PARTIAL_WORK_TOKENS // max(len(toks), 1)))
    for _ in range(attempts):
        try:
            tree = parse_tokens(list(toks), lean)
        except ParseError as exc:
            if exc.pos is None:
                raise
            if exc.pos >= len(toks):
                toks.extend(("{", "}"))
                repairs.append("added {} at the end")
            else:
                repairs.append(f"dropped {toks[exc.pos]!r} at token {exc.pos}")
                del toks[exc.pos]
            continue
        if not _has_leaf(tree):  # `\sqrt` alone: nothing a search could match
            raise ParseError("the partial tree holds nothing but empty slots")
        return tree, repairs
    raise ParseError(f"no partial tree after {len(repairs)} repairs")


def _has_leaf(tree: tuple) -> bool:
    """True when some leaf of `tree` is not an empty slot."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node[0][0] == "#":
            if node[0] != "#e":
                return True
        else:
            stack.extend(node[1:])
    return False


def parse_partial(src: str, lean: bool = False) -> tuple[tuple, list[str]]:
    """`parse_partial_tokens` of a LaTeX formula (or, with `lean`, a Lean term)."""
    if len(src) > MAX_CHARS:
        raise ParseError(f"formula longer than {MAX_CHARS} characters")
    src = src.replace("\x00", "")
    return parse_partial_tokens(tokenize_lean(src) if lean else _latex_tokens(src), lean)


def _latex_tokens(src: str) -> list[str]:
    """The tokens the grammar parses: `tokenize`, and line breaks inside parentheses joined (only
    looked for when the source has an `&` or `\\\\` at all)."""
    toks = tokenize(src)
    return join_broken_parens(toks) if "&" in src or "\\\\" in src else toks


def parse_latex(src: str) -> tuple:
    """The operator tree of a LaTeX formula; raises ParseError when the grammar rejects it."""
    if len(src) > MAX_CHARS:
        raise ParseError(f"formula longer than {MAX_CHARS} characters")
    return parse_tokens(_latex_tokens(src.replace("\x00", "")), lean=False)


def parse_lean(src: str) -> tuple:
    """The operator tree of a Lean statement type, in the same vocabulary as parse_latex."""
    if len(src) > MAX_CHARS:
        raise ParseError(f"statement longer than {MAX_CHARS} characters")
    return parse_tokens(tokenize_lean(src.replace("\x00", "")), lean=True)

