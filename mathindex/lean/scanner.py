"""Per-file Lean 4 command scanner: declarations, scopes, variables and raw naming hints.

`scan_file` works on one file's text and never raises for bad input: problems become
`errors` rows. Rows that need corpus-wide knowledge (generated instance names, `@[to_additive]`
twins) carry raw hints in `_`-prefixed keys that `mathindex.lean.finalise` resolves.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import time
from dataclasses import dataclass, field

from mathindex.lean.binders import (
    BINDER_INTRO,
    BINDER_TYPED,
    BRACKETED,
    CLOSERS,
    OPENERS,
    VarBinder,
    format_binder,
    parse_binders,
    parse_binders_anywhere,
    split_colon,
    split_top,
    type_head,
)
from mathindex.lean.lexer import ATOM, KEYWORDS, LOCALISH, NAME, blank, idents
from mathindex.lean.proof_refs import proof_references
from mathindex.schemas.common import error_row

STAGE = "extract_lean"

_NAME_U = re.compile(NAME.pattern + r"(?:\.\{[^}\n]*\})?")
_CMD_START = re.compile(r"^(?:@\[|(?![\w'.]+[ \t]*::)[A-Za-z_#])", re.M)  # not a `mk ::` line
_WS = re.compile(r"\s*")
_MUTUAL = re.compile(r"^mutual[ \t]*$", re.M)
_END_LINE = re.compile(r"^end\b", re.M)
# a line that is not blank: its indentation and, when it opens a command, where that starts
_INDENTED_LINE = re.compile(r"^([ \t]*)(?=\S)((?:@\[|(?![\w'.]+[ \t]*::)[A-Za-z_#]))?", re.M)
_MODIFIER = re.compile(
    r"(private|protected|noncomputable|partial|unsafe|nonrec|scoped|local|public|meta)\b(?:\[[^\]\n]*\])?\s*"
)
_WORD = re.compile(r"#?[A-Za-z_][\w!?]*")
_BRACKET = re.compile(r"[\[\]]")
# top-level ends of a signature: `:=`, `where`, `deriving`, a match arm `|` (at a line start, or
# inline as in `: P → Q | ⟨x, h⟩ => …`, told from `|x|` by the `=>` before any other `|`)
_SIG_END = re.compile(
    r":=|:(?!=)|(?<![\w.'])(?:where|deriving)(?![\w'!?])|\n[ \t]*\||(?<=\s)\|(?=\s*[^\s|][^\n|]*=>)"
)
_PRIORITY = re.compile(r"\(\s*priority\s*:=[^)]*\)\s*")
_IN_SUFFIX = re.compile(r"\bin\s*$")
_CTOR_LINE = re.compile(r"^[ \t]*\|[ \t]*(" + ATOM + r")", re.M)
_CTOR_MODS = re.compile(r"(?:(?:protected|private)\s+)*")
# a field line: `name binders* : type`, or a bracketed group `(a b : type)` declaring several
_FIELD_LINE = re.compile(
    r"^([ \t]+)(?:(?:private|protected)\s+)?(?:(" + ATOM + r")(?:[ \t]+(?:" + ATOM + r"|[(\[{⦃][^\n]*?))*?[ \t]*:(?!=)"
    r"|[(\[{⦃]\s*((?:" + ATOM + r"\s+)*" + ATOM + r")\s*:(?!=))",
    re.M,
)
# a named constructor, `mk' ::`, with binder updates as in `toLp (p) ::`
_MK_BINDERS = r"(?:[ \t]*[(\[{][^\n]*?[)\]}])*"
_MK_INLINE = re.compile(r"[ \t]*(" + ATOM + r")" + _MK_BINDERS + r"[ \t]*::")
_MK_LINE = re.compile(r"^[ \t]*(?:(?:private|protected)\s+)?(" + ATOM + r")" + _MK_BINDERS + r"[ \t]*::", re.M)


def continued(t: str, line_end: int, z: int, indent: int, stop: str | None = None) -> int:
    """Where a member (a structure field, an inductive type's constructor) whose first line ends at
    `line_end` and is indented `indent` columns ends: past its continuation lines (blank, or indented
    deeper; a multi-line field type), before the first line indented `indent` columns or less, or
    beginning with `stop` (the next `|` constructor), and never past `z`."""
    end = last = line_end
    while end < z:
        nxt = t.find("\n", end + 1)
        nxt = z if nxt < 0 or nxt > z else nxt
        line = t[end + 1 : nxt].expandtabs()
        body = line.lstrip()
        if body and (len(line) - len(body) <= indent or (stop is not None and body.startswith(stop))):
            break
        end = nxt
        if body:
            last = nxt
    return last


DECL_KINDS = {
    "theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "axiom",
    "opaque", "irreducible_def", "alias", "coinductive",
}

TIME_BUDGET_S = 20.0


@dataclass
class Scope:
    """A namespace, section or mutual block with the variables, includes and omits made inside it."""

    kind: str
    name: str
    parts: list[str]
    variables: list[VarBinder] = field(default_factory=list)
    included: set[str] = field(default_factory=set)
    omitted: set[str] = field(default_factory=set)
    opens: list[str] = field(default_factory=list)
    overrides: dict[str, str] = field(default_factory=dict)  # binder updates: name -> bracket


def clean_name(name: str) -> str:
    """Lean's name from a name as written: `_root_.` removed, needless «» quotes dropped."""
    if "«" in name:
        parts = re.findall(r"«[^»]*»|[^.«»]+", name)
        out = []
        for p in parts:
            inner = p[1:-1] if p.startswith("«") else p
            out.append(inner if re.fullmatch(r"[^\W\d][\w'!?]*", inner) else "«" + inner + "»")
        name = ".".join(out)
    return re.sub(r"\.\{[^}]*\}$", "", name) if ".{" in name else name


_DERIVING = re.compile(r"(?<![\w.])deriving\s+((?:[\w.']+\s*,\s*)*[\w.']+)")
_DERIVING_CMD = re.compile(r"instance\s+((?:[\w.']+\s*,\s*)*[\w.']+)\s+for\s+((?:[\w.'«»]+\s*,\s*)*[\w.'«»]+)")
# `extends A ≃+* B`: the parent structure behind an arrow notation (projection `toRingEquiv`)
_PARENT_STRUCTURES = {
    "≃": "Equiv", "≃*": "MulEquiv", "≃+": "AddEquiv", "≃+*": "RingEquiv", "→*": "MonoidHom",
    "→+": "AddMonoidHom", "→+*": "RingHom", "→ₙ*": "MulHom", "→ₙ+": "AddHom",
    "→*₀": "MonoidWithZeroHom", "→ₙ+*": "NonUnitalRingHom", "→ₗ": "LinearMap",
    "≃ₗ": "LinearEquiv", "→ₐ": "AlgHom", "≃ₐ": "AlgEquiv", "→ₙₐ": "NonUnitalAlgHom",
    "→o": "OrderHom", "≃o": "OrderIso", "↪o": "OrderEmbedding", "↪": "Embedding",
    "→L": "ContinuousLinearMap", "≃L": "ContinuousLinearEquiv", "≃ₜ": "Homeomorph",
    "→⋆ₐ": "StarAlgHom", "≃⋆ₐ": "StarAlgEquiv", "→⋆ₙₐ": "NonUnitalStarAlgHom",
    "≃ᵢ": "IsometryEquiv", "→₀": "Finsupp", "⟶": "Hom", "≅": "Iso", "⥤": "Functor",
}
_PARENT_NOTATION = re.compile("|".join(re.escape(k) for k in sorted(_PARENT_STRUCTURES, key=len, reverse=True)))
_ATTR_OPTION = re.compile(r"\(\s*attr\s*:=\s*([^()]*(?:\([^()]*\)[^()]*)*)\)")


class _VarState:
    """Variables in scope, precomputed once per change of scope, variable, include or omit."""

    def __init__(self, binders: list[VarBinder], included: set[str], omitted: set[str],
                 overrides: dict[str, str] | None = None):
        self.binders = binders
        self.omitted = omitted
        self.overrides = overrides or {}
        self.memo: dict[frozenset[str], tuple[str, set[str]]] = {}
        self.formatted: dict[tuple[frozenset[str], frozenset[int]], str] = {}
        self.latest: dict[str, int] = {}
        for i, b in enumerate(binders):
            for n in b.names:
                self.latest[n] = i
        self.deps = {n: [d for d in binders[i].idents if d in self.latest and d not in omitted and d != n]
                     for n, i in self.latest.items()}
        self.included_named = [n for n in included if n in self.latest and n not in omitted]
        self.heads = {n: type_head(binders[i].type) for n, i in self.latest.items()}
        self.insts = [
            (i, frozenset(x for x in b.idents if x in self.latest))
            for i, b in enumerate(binders)
            if b.bracket == "[" and "[" + b.type + "]" not in omitted
            and not any(n in omitted for n in b.names)
            and (not b.names or self.latest.get(b.names[0]) == i)
        ]


@dataclass
class Header:
    """The parsed head of one command: attributes, modifiers, keyword and where the rest starts."""

    attrs: list[str]
    attr_spans: list[tuple[int, int]]
    modifiers: list[str]
    keyword: str
    rest: int


class FileScanner:
    """Scans one file. Holds scope state; `run()` returns (decl rows, dep rows, error rows)."""

    def __init__(self, text: str, corpus: str, module: str, file: str, budget_s: float = TIME_BUDGET_S):
        self.raw = text
        self.corpus, self.module, self.file = corpus, module, file
        self.deadline = time.monotonic() + budget_s
        self.decls: list[dict] = []
        self.deps: list[dict] = []
        self.errors: list[dict] = []
        self.scopes: list[Scope] = [Scope("root", "", [])]
        self.pending_vars: list[VarBinder] = []
        self.pending_overrides: dict[str, str] = {}
        self.pending_include: set[str] = set()
        self.pending_omit: set[str] = set()
        self.pending_open: list[str] = []
        self.local_names: set[str] = set()
        self._vstate: _VarState | None = None
        self.last_type: tuple[dict, str] | None = None
        self._opens_cache: str | None = None
        self._ns_cache: str | None = None

    # -- helpers -----------------------------------------------------------------------------
    def code_end(self, a: int, z: int) -> int:
        """Offset just past the last non-blank character of [a, z) (a when there is none)."""
        lo = max(a, z - 512)
        w = self.text[lo:z].rstrip()
        if w or lo == a:
            return lo + len(w)
        return a + len(self.text[a:z].rstrip())

    def line_of(self, off: int) -> int:
        return bisect.bisect_left(self.nl, off) + 1

    def error(self, off: int | None, reason: str) -> None:
        line = None if off is None else self.line_of(off)
        self.errors.append(error_row(self.corpus, self.file, line, STAGE, reason))

    @property
    def namespace(self) -> str:
        """The current namespace (`A.B`), cached until a scope opens or closes."""
        if self._ns_cache is None:
            self._ns_cache = ".".join(p for s in self.scopes for p in s.parts)
        return self._ns_cache

    def doc_before(self, off: int) -> str | None:
        i = bisect.bisect_right(self.doc_ends, off) - 1
        if i < 0:
            return None
        d = self.docs[i]
        if self.text[d.end : off].strip():
            return None
        return d.text

    def docs_within(self, a: int, b: int) -> list[str]:
        i = bisect.bisect_left(self.doc_starts, a)
        out = []
        while i < len(self.docs) and self.docs[i].end <= b:
            out.append(self.docs[i].text)
            i += 1
        return out

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> tuple[list[dict], list[dict], list[dict]]:
        b = blank(self.raw)
        self.text = t = b.text
        self.nl = [m.start() for m in re.finditer("\n", t)]
        self.docs = b.docs
        self.doc_ends = [d.end for d in b.docs]
        self.doc_starts = [d.start for d in b.docs]
        for off, reason in b.problems:
            self.error(off, reason)
        starts = [m.start() for m in _CMD_START.finditer(t)]
        if "mutual" in t:
            starts = sorted({*starts, *mutual_member_starts(t)})
        starts.append(len(t))
        recognised = 0
        a = None
        for i in range(len(starts) - 1):
            if time.monotonic() > self.deadline:
                self.error(starts[i], "time budget exceeded; rest of file skipped")
                break
            a = starts[i] if a is None else a
            z = starts[i + 1]
            h = self.header(a, z, quiet=True)
            if (h is None or h.keyword == "") and i + 2 < len(starts) and (h is None or not t[h.rest:z].strip()):
                continue  # attributes or modifiers on their own line(s): the command goes on below
            if h is None:
                self.error(a, "unterminated attribute list")
                a = None
                continue
            try:
                recognised += self.command(a, z, h)
            except (ValueError, IndexError, KeyError, RecursionError) as exc:  # defensive: bad input
                self.error(a, f"could not parse command: {type(exc).__name__}: {exc}")
            a = None
        if recognised == 0 and t.strip():  # some code, yet no command: not Lean
            self.error(0, "no Lean command found; not a Lean source file?")
        return self.decls, self.deps, self.errors

    def header(self, a: int, z: int, quiet: bool = False) -> Header | None:
        """Attributes, modifiers and keyword of the command in [a, z); keyword "" when the
        segment ends before one; None when an attribute list is not closed inside it."""
        t = self.text
        pos = a
        attrs: list[str] = []
        spans: list[tuple[int, int]] = []
        while t.startswith("@[", pos):
            depth = 0
            end = -1
            for m in _BRACKET.finditer(t, pos + 1, z):
                depth += 1 if m.group() == "[" else -1
                if depth == 0:
                    end = m.end()
                    break
            if end < 0:
                if not quiet:
                    self.error(pos, "unterminated attribute list")
                return None
            spans.append((pos, end))
            attrs.extend(x.strip() for x in split_top(t[pos + 2 : end - 1]) if x.strip())
            pos = _WS.match(t, end).end()
        mods = []
        while True:
            m = _MODIFIER.match(t, pos)
            if not m:
                break
            mods.append(m.group(1))
            pos = m.end()
        if pos >= z:
            return Header(attrs, spans, mods, "", pos)
        m = _WORD.match(t, pos)
        if not m:
            return Header(attrs, spans, mods, "", pos)
        kw = m.group()
        pos = _WS.match(t, m.end()).end()
        if kw == "class" and t.startswith(("inductive", "abbrev"), pos):
            m2 = _WORD.match(t, pos)
            kw = "class " + m2.group()
            pos = _WS.match(t, m2.end()).end()
        return Header(attrs, spans, mods, kw, pos)

    def command(self, a: int, z: int, h: Header) -> int:
        kw = h.keyword
        t = self.text
        body = t[h.rest : z]
        if kw in ("namespace", "section", "end", "mutual", "variable", "include", "omit"):
            self._vstate = None
        if kw in ("namespace", "section", "end", "mutual", "open"):
            self._opens_cache = None
            self._ns_cache = None
        if kw in ("namespace", "section", "end", "mutual"):
            name_m = NAME.match(body)
            name = name_m.group() if name_m else ""
            parts = clean_name(name).split(".") if name else []
            if kw == "namespace":
                if not name:
                    self.error(a, "namespace without a name")
                    return 1
                for p in parts:
                    self.scopes.append(Scope("namespace", p, [p]))
            elif kw == "section":
                if not parts:
                    self.scopes.append(Scope("section", "", []))
                for p in parts:
                    self.scopes.append(Scope("section", p, []))
            elif kw == "mutual":
                self.scopes.append(Scope("mutual", "", []))
            else:
                self.end_scope(a, parts)
            return 1
        if kw in DECL_KINDS or kw.startswith("class "):
            self.declaration(a, z, h)
            self.clear_pending()
            return 1
        if kw == "variable":
            binders, end = parse_binders(body)
            if _IN_SUFFIX.search(body[end:].strip() or ""):
                known = {n for sc in self.scopes for v in sc.variables for n in v.names}
                for b in binders:
                    if b.names and not b.type and all(n in known for n in b.names):
                        self.pending_overrides.update((n, b.bracket) for n in b.names)
                    else:
                        self.pending_vars.append(b)
            else:
                self.update_variables(binders)
            return 1
        if kw in ("include", "omit"):
            names: set[str] = set()
            for bnd in parse_binders_anywhere(body):
                names.update(bnd.names)
                if bnd.bracket == "[":
                    names.add("[" + bnd.type + "]")
            names.update(idents(BRACKETED.sub(" ", body)))
            names.discard("in")
            is_in = bool(_IN_SUFFIX.search(body.strip()))
            if kw == "include":
                (self.pending_include if is_in else self.scopes[-1].included).update(names)
            else:
                (self.pending_omit if is_in else self.scopes[-1].omitted).update(names)
            return 1
        if kw == "open":
            opened = [n for n in idents(body.split("in\n")[0]) if n not in ("in", "scoped", "hiding", "renaming")]
            if _IN_SUFFIX.search(body.strip()):
                self.pending_open.extend(opened)
            else:
                self.scopes[-1].opens.extend(opened)
            return 1
        if kw == "deriving":
            m = _DERIVING_CMD.match(body)
            if m is None and self.last_type is not None:  # a `deriving C` line below a type
                mc = re.match(r"((?:[\w.']+\s*,\s*)*[\w.']+)", body)
                if mc:
                    self.derived(self.last_type[0], [c.strip() for c in mc.group(1).split(",")],
                                 [self.last_type[1]])
            if m:
                line = self.line_of(a)
                base = {
                    "corpus": self.corpus, "kind": "instance", "signature": "", "type": None,
                    "docstring": None, "attributes": [], "module": self.module, "file": self.file,
                    "line_start": line, "line_end": self.line_of(max(a, self.code_end(a, z) - 1)),
                    "is_private": False, "is_protected": False,
                    "statement_group": _sha(f"{self.corpus}\0{self.file}\0{line}"), "variables": "",
                }
                types = [x.strip() for x in m.group(2).split(",")]
                ns, opens = self.namespace, self.opens()
                self.derived(base, [c.strip() for c in m.group(1).split(",")],
                             [n for n in types])
                for r in self.decls:
                    if r.get("origin") == "deriving" and r["line_start"] == line and r.get("_inst"):
                        r["_inst"]["resolve_type"] = [r["_inst"]["type"].split(" ", 1)[1].removeprefix("_root_."), ns, opens]
            return 1
        if kw == "attribute":
            self.attribute_command(a, z, h)
            return 1
        if kw in ("example",):
            self.clear_pending()
            return 1
        if kw in _OTHER_COMMANDS or kw in _HASH_COMMANDS:
            return 1
        return 0

    def clear_pending(self) -> None:
        if self.pending_open:
            self._opens_cache = None
        if self.pending_vars or self.pending_include or self.pending_omit or self.pending_overrides:
            self._vstate = None
        self.pending_vars = []
        self.pending_include = set()
        self.pending_omit = set()
        self.pending_open = []
        self.pending_overrides = {}

    def end_scope(self, off: int, parts: list[str]) -> None:
        """`end A.B` closes one scope per name component (checking names); `end` closes one."""
        for p in reversed(parts or [""]):
            if len(self.scopes) == 1:
                self.error(off, f"`end {'.'.join(parts)}` without an open namespace or section")
                return
            top = self.scopes[-1]
            if top.kind != "mutual" and p != top.name:
                self.error(off, f"`end {'.'.join(parts)}` closes `{top.kind} {top.name}`")
            self.scopes.pop()

    def update_variables(self, binders: list[VarBinder]) -> None:
        """A `variable` command: new binders, or binder updates such as `variable {α}` (which
        change the bracket of a variable in place, until the current scope ends)."""
        known = {n for s in self.scopes for v in s.variables for n in v.names}
        for b in binders:
            if b.names and not b.type and all(n in known for n in b.names):
                for n in b.names:
                    self.scopes[-1].overrides[n] = b.bracket
            else:
                self.scopes[-1].variables.append(b)

    # -- declarations ------------------------------------------------------------------------
    def full_name(self, written: str) -> str:
        name = clean_name(written)
        if name.startswith("_root_."):
            return name[len("_root_."):]
        ns = self.namespace
        return f"{ns}.{name}" if ns else name

    def scan_signature(self, start: int, z: int) -> tuple[int, int | None, str]:
        """End of the signature starting at `start` (top-level `:=`, `where`, `|` or `deriving`),
        the offset of its top-level `:` (or None), and the terminator found."""
        t = self.text
        depth = 0
        last = start
        colon = None
        for m in _SIG_END.finditer(t, start, z):
            if m.start() > last:
                seg = t[last : m.start()]
                depth += len(OPENERS.findall(seg)) - len(CLOSERS.findall(seg))
            last = m.start()
            if depth > 0:
                continue
            tok = m.group()
            if tok == ":":
                if colon is None:
                    colon = m.start()
                continue
            if tok == ":=":
                return m.start(), colon, ":="
            if tok[-1] == "|":
                if colon is not None and not t[colon + 1 : m.start()].strip():
                    continue  # `theorem foo :⏎ |x| ≤ …`: an absolute value opens the type, not a match arm
                return m.start(), colon, "|"
            return m.start(), colon, tok
        seg = t[last:z]
        depth += len(OPENERS.findall(seg)) - len(CLOSERS.findall(seg))
        return z, colon, "" if depth <= 0 else "unbalanced"

    def declaration(self, a: int, z: int, h: Header) -> None:
        """One declaration command in [a, z): its row (name, signature, type, the `variable`s it
        uses, the constants its signature names in `_deps` and those only its body names in
        `_proof_deps`), then the rows Lean generates from it (`generated`)."""
        t = self.text
        kw = h.keyword
        pos = h.rest
        if kw == "instance":
            m = _PRIORITY.match(t, pos)
            if m:
                pos = m.end()
        if kw == "alias":
            self.alias(a, z, h, pos)
            return
        m = _NAME_U.match(t, pos)
        written = None
        if m and m.group() not in ("where", "extends"):
            written = m.group()
            pos = m.end()
        elif kw != "instance":
            self.error(a, f"`{kw}` without a name")
            return
        sig_end, colon, term = self.scan_signature(pos, z)
        if term == "unbalanced":
            self.error(a, f"unbalanced brackets in the signature of `{written or kw}` (truncated?)")
        sig = " ".join(t[pos:sig_end].split())
        typ = " ".join(t[colon + 1 : sig_end].split()) if colon is not None else None
        if typ == "" and term not in ("where", "deriving", "|"):
            self.error(a, f"`{kw} {written or ''}` has an empty type after `:`; not Lean?")
            return
        if term in ("", "unbalanced") and kw in _NEEDS_BODY:
            self.error(a, f"`{kw} {written or ''}` has no `:=`, `where` or `|` body; truncated or not Lean?")
            return
        seg_end = self.code_end(a, z)
        line_start, line_end = self.line_of(a), self.line_of(max(a, seg_end - 1))
        group = _sha(f"{self.corpus}\0{self.file}\0{line_start}")
        binders_text = t[pos:colon] if colon is not None else t[pos:sig_end]
        if written is None:
            own_binders, _ = parse_binders(binders_text)
            bound = {n for bnd in own_binders for n in bnd.names}
        else:
            own_binders = []
            bound = set()
        heads: dict[str, str | None] = {}
        for m in BINDER_TYPED.finditer(binders_text):
            head = type_head(m.group(2))
            for n in m.group(1).split():
                bound.add(n)
                heads[n] = head
        for mb in BINDER_INTRO.finditer(sig):
            bound.update(x.strip("()[]{}⦃⦄") for x in mb.group(1).split())
        sig_idents = idents(sig)
        mentioned = set(sig_idents)
        mentioned.update([i.split(".", 1)[0] for i in sig_idents if "." in i])
        variables, var_names = self.used_variables(mentioned - bound, kw)
        doc = self.doc_before(a)
        is_private = "private" in h.modifiers
        is_protected = "protected" in h.modifiers
        ns = self.namespace
        if written is None:
            full = None  # anonymous instance: named in finalise
        else:
            full = self.full_name(written)
            if "." in written and not written.startswith("_root_."):
                ns = full.rpartition(".")[0]  # Lean elaborates `def A.b` inside `namespace A`
        kind = "class" if kw.startswith("class ") else kw
        base = {
            "corpus": self.corpus, "kind": kind, "signature": sig, "type": typ, "docstring": doc,
            "attributes": h.attrs, "module": self.module, "file": self.file,
            "line_start": line_start, "line_end": line_end, "is_private": is_private,
            "is_protected": is_protected, "statement_group": group, "variables": variables,
            "_ns": ns, "_opens": self.opens_json(),
        }
        row = dict(base, full_name=full or "", origin="source")
        if full is None:
            row["origin"] = "instance_name"
            row["_inst"] = self.instance_hint(own_binders, binders_text, typ or "")
        deps = self.dependencies(sig_idents, bound, var_names, heads)
        row["_deps"] = deps
        self.decls.append(row)
        if full:
            self.local_names.add(full)
        first_generated = len(self.decls)
        self.generated(row, base, h, kw, sig_end, term, z, written)
        row["_proof_deps"] = self.proof_dependencies(
            kind, sig_end, term, seg_end, bound | var_names, heads, deps, self.decls[first_generated:])

    def proof_dependencies(self, kind: str, sig_end: int, term: str, seg_end: int, bound: set[str],
                           heads: dict[str, str | None], statement: list[str], members: list[dict]) -> list[str]:
        """Constants the body after the signature names (`proof_refs`), none of `statement`; the
        fields and constructors a structure or inductive type declares are not references."""
        if term in ("", "unbalanced", "deriving") or seg_end <= sig_end:
            return []
        start = sig_end + len(term) if term in (":=", "where") else sig_end
        defined = {m["full_name"].rpartition(".")[2] for m in members
                   if m.get("origin") in ("field", "constructor", "parent_projection")}
        return proof_references(self.text[start:seg_end], bound | defined, heads, self.var_state().heads,
                                statement, type_like=kind in _TYPE_KINDS)

    def dependencies(self, sig_idents: list[str], bound: set[str], var_names: set[str],
                     heads: dict[str, str | None]) -> list[str]:
        """Constants a statement mentions, as written; `x.f` on a local `x : T …` becomes `T.f`."""
        out: dict[str, None] = {}
        for d in sig_idents:
            if d in KEYWORDS:
                continue
            head, dot, rest = d.partition(".")
            if head in bound or head in var_names:
                if not dot:
                    continue
                t = heads.get(head) if head in heads else self.var_state().heads.get(head)
                if t:
                    out[t + "." + rest] = None
                continue
            if not LOCALISH.match(d):
                out[d] = None
        return list(out)

    def generated(self, row: dict, base: dict, h: Header, kw: str, sig_end: int, term: str,
                  z: int, written: str | None) -> None:
        """Names Lean or Mathlib generate from this declaration: fields, constructors, twins."""
        full = row["full_name"]
        t = self.text
        for attr, span in self.attr_entries(h):
            self.twin_from_attr(row, base, attr, span)
        if kw == "irreducible_def" and full:
            m = re.search(r"\(\s*lemma\s*:=\s*(" + NAME.pattern + r")\s*\)", base["signature"])
            lemma = self.full_name(m.group(1)) if m else full + "_def"
            self.decls.append(dict(base, full_name=lemma, kind="theorem", origin="irreducible_def",
                                   signature="", type=None, _deps=[full], docstring=None))
        if not full:
            return
        if kw in ("structure", "inductive", "class inductive", "coinductive"):
            m = _DERIVING.search(t, sig_end, z)
            if m:
                self.derived(base, [c.strip() for c in m.group(1).split(",")], [full])
        if kw in ("structure", "class") and term in ("where", ":=", "") :
            self.structure_members(base, full, sig_end, term, z)
            self.last_type = (base, full)
        elif kw in ("inductive", "class inductive", "coinductive"):
            for m in _CTOR_LINE.finditer(t, sig_end, z):
                eol = t.find("\n", m.start(1))
                eol = z if eol < 0 or eol > z else eol
                lead = t[m.start() : t.index("|", m.start())]  # the line's indent: `^[ \t]*\|`
                eol = continued(t, eol, z, len(lead.expandtabs()), stop="|")
                line = self.line_of(m.start(1))
                for k, part in enumerate(split_top(t[m.start(1):eol], "|")):
                    mods = _CTOR_MODS.match(part.strip())
                    nm = NAME.match(part.strip(), mods.end())
                    if not nm:
                        continue
                    ctor = clean_name(nm.group())
                    self.decls.append(dict(base, full_name=f"{full}.{ctor}", kind="constructor",
                                           origin="constructor", line_start=line, line_end=self.line_of(eol),
                                           docstring=self.doc_before(m.start()) if k == 0 else None,
                                           is_protected="protected" in mods.group(),
                                           is_private="private" in mods.group(),
                                           signature=" ".join(part[mods.end():].split()),
                                           type=None, _deps=[]))
        self.last_type = (base, full)

    def derived(self, base: dict, classes: list[str], types: list[str]) -> None:
        """Instances made by `deriving C` (named by the instance-name rule, e.g. instReprFoo)."""
        for typ in types:
            for c in classes:
                if not c:
                    continue
                hint = {"ns": self.namespace, "opens": self.opens(), "binders": [],
                        "type": f"{c} _root_.{typ}"}
                self.decls.append(dict(base, full_name="", kind="instance", origin="deriving",
                                       signature=f": {c} {typ}", type=f"{c} {typ}", docstring=None,
                                       attributes=[], is_protected=False, _inst=hint, _deps=[c, typ]))

    def structure_members(self, base: dict, full: str, sig_end: int, term: str, z: int) -> None:
        t = self.text
        sig = base["signature"]
        ext = re.search(r"(?<![\w.])extends\b(.*?)(?::(?!=)|$)", sig, re.S)
        if ext:
            for parent in split_top(ext.group(1)):
                p = parent.strip()
                m = re.match(r"(" + ATOM + r")\s*:\s*(.*)", p)
                if m and m.group(1).startswith("to"):
                    pname = m.group(1)
                else:
                    arrow = _PARENT_NOTATION.search(p)
                    pm = NAME.match(p)
                    if arrow:
                        pname = "to" + _PARENT_STRUCTURES[arrow.group()]
                    elif pm:
                        pname = "to" + clean_name(pm.group()).split(".")[-1]
                    else:
                        continue
                self.decls.append(dict(base, full_name=f"{full}.{pname}", kind="field",
                                       origin="parent_projection", docstring=None, _deps=[]))
        ctor = "mk"
        if term == "where":
            body_start = sig_end + len("where")
            mk = _MK_INLINE.match(t, body_start) or _MK_LINE.search(t, body_start, z)
            base_indent = None
            for m in _FIELD_LINE.finditer(t, body_start, z):
                simple = m.group(2) is not None
                name_at = m.start(2) if simple else m.start(3)
                names = [m.group(2)] if simple else m.group(3).split()
                line_end = t.find("\n", name_at)
                line_end = z if line_end < 0 or line_end > z else line_end
                if mk and mk.start(1) == name_at:
                    continue
                indent = len(m.group(1).expandtabs())
                j = bisect.bisect_left(self.doc_starts, m.start(1))
                if j < len(self.docs) and self.docs[j].start < name_at:
                    indent = self.docs[j].start - m.start(1)
                    doc = self.docs[j].text
                else:
                    doc = self.doc_before(m.start(1))
                if base_indent is None:
                    base_indent = indent
                if indent != base_indent:
                    continue
                line = self.line_of(name_at)
                line_end = continued(t, line_end, z, len(m.group(1).expandtabs()))
                rest = t[name_at + len(m.group(2)) if simple else m.end() - 1 : line_end]
                fsig = " ".join(split_top(rest.replace(":=", "\x00"), "\x00")[0].split())
                if not simple and fsig.endswith(")"):
                    fsig = fsig[:-1].rstrip()
                colon_at = split_colon(fsig)
                protected = bool(re.match(r"[ \t]*protected\b", t[m.start(1):name_at]))
                for fname in names:
                    self.decls.append(dict(base, full_name=f"{full}.{clean_name(fname)}", kind="field",
                                           origin="field", line_start=line, line_end=self.line_of(line_end),
                                           docstring=doc,
                                           signature=fsig,
                                           type=colon_at[2].strip() if colon_at[1] else None,
                                           is_protected=protected, _deps=[]))
            if mk:
                ctor = clean_name(mk.group(1))
        self.decls.append(dict(base, full_name=f"{full}.{ctor}", kind="constructor", origin="constructor",
                               docstring=None, _deps=[]))

    def attr_entries(self, h: Header):
        t = self.text
        for span in h.attr_spans:
            for x in split_top(t[span[0] + 2 : span[1] - 1]):
                if x.strip():
                    yield x.strip(), span

    def twin_from_attr(self, row: dict, base: dict, attr: str, span: tuple[int, int]) -> None:
        """`@[to_additive ...]`, `@[to_dual ...]`, `@[reassoc]`: record the generated twin."""
        word = attr.split()[0] if attr.split() else ""
        if word in ("to_additive", "to_additive?", "to_dual", "to_dual?"):
            rest = attr[len(word):].strip()
            if re.match(r"(existing|self|none)\b", rest):
                return
            rest = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", " ", rest).strip()
            m = re.match(NAME.pattern, rest)
            tgt = m.group() if m else ""
            docs = self.docs_within(span[0], span[1])
            origin = "to_additive" if word.startswith("to_additive") else "to_dual"
            self.decls.append(dict(base, full_name="", origin=origin, docstring=docs[0] if docs else None,
                                   _twin=(row["full_name"], tgt, origin), _inst=row.get("_inst"),
                                   _deps=[]))
            inner = _ATTR_OPTION.search(attr)
            for extra in split_top(inner.group(1)) if inner else []:
                extra = extra.strip()
                if extra.split()[:1] in (["ext"], ["reassoc"], ["simps"], ["simps!"]):
                    self.twin_from_attr(row, base, extra, span)  # on the source
                    before = len(self.decls)
                    self.twin_from_attr({"full_name": "", "_inst": None}, base, extra, span)
                    for r in self.decls[before:]:  # and on the twin, once it is named
                        src, tgt, kind = r["_twin"]
                        r["_twin"] = ("", tgt, kind + "@" + origin)
        elif word == "reassoc":
            self.decls.append(dict(base, full_name="", origin="reassoc", docstring=None, signature="",
                                   _twin=(row["full_name"], "", "reassoc"), _inst=row.get("_inst"),
                                   _deps=[]))
        elif word == "ext" and "iff := false" not in attr:
            # Lean's @[ext]: a structure gets `S.ext` and `S.ext_iff`; a theorem `foo` gets `foo_iff`
            kinds = ["ext_struct", "ext_struct_iff"] if base["kind"] in ("structure", "class") else ["ext"]
            for k in kinds:
                self.decls.append(dict(base, full_name="", kind="theorem", origin="ext", docstring=None,
                                       signature="", type=None, _twin=(row["full_name"], "", k),
                                       _inst=row.get("_inst"), _deps=[]))
        elif word in ("simps", "simps!", "simps?", "simps!?"):
            # only explicit projection lists: `@[simps apply symm_apply]` -> foo_apply, foo_symm_apply
            rest = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", " ", attr[len(word):])
            for proj in rest.split():
                if proj[0] in "-+" or not NAME.fullmatch(proj):
                    continue
                self.decls.append(dict(base, full_name="", kind="theorem", origin="simps", docstring=None,
                                       signature="", type=None, _twin=(row["full_name"], proj, "simps"),
                                       _inst=row.get("_inst"), _deps=[]))

    def attribute_command(self, a: int, z: int, h: Header) -> None:
        t = self.text
        pos = h.rest
        if not t.startswith("[", pos):
            return
        end = t.find("]", pos)
        depth = 0
        for m in _BRACKET.finditer(t, pos, z):
            depth += 1 if m.group() == "[" else -1
            if depth == 0:
                end = m.end()
                break
        attrs = [x.strip() for x in split_top(t[pos + 1 : end - 1]) if x.strip()]
        targets = idents(t[end:z])
        line = self.line_of(a)
        for attr in attrs:
            word = attr.split()[0] if attr.split() else ""
            if word not in ("to_additive", "to_dual", "reassoc"):
                continue
            for target in targets:
                base = {
                    "corpus": self.corpus, "kind": "theorem", "signature": "", "type": None,
                    "docstring": None, "attributes": [attr], "module": self.module, "file": self.file,
                    "line_start": line, "line_end": self.line_of(max(a, self.code_end(a, z) - 1)),
                    "is_private": False, "is_protected": False,
                    "statement_group": _sha(f"{self.corpus}\0{self.file}\0{line}"), "variables": "",
                }
                resolve = (target, self.namespace, self.opens())
                if word == "reassoc":
                    self.decls.append(dict(base, full_name="", origin="reassoc", _deps=[],
                                           _twin=("", "", "reassoc"), _resolve=resolve))
                    continue
                before = len(self.decls)
                self.twin_from_attr({"full_name": ""}, base, attr, (pos, end))
                for r in self.decls[before:]:
                    r["_resolve"] = resolve

    def opens(self) -> list[str]:
        return [o for s in self.scopes for o in s.opens] + self.pending_open

    def opens_json(self) -> str:
        """`opens()` as JSON, cached until a scope, `open` or pending `open` changes."""
        if self._opens_cache is None:
            self._opens_cache = json.dumps(self.opens(), ensure_ascii=False)
        return self._opens_cache

    def alias(self, a: int, z: int, h: Header, pos: int) -> None:
        t = self.text
        body = t[pos:z]
        head = body.split(":=")[0]
        names = idents(head.strip().strip("⟨⟩"))
        line_start = self.line_of(a)
        seg_end = self.code_end(a, z)
        target = idents(body.split(":=", 1)[1]) if ":=" in body else []
        group = _sha(f"{self.corpus}\0{self.file}\0{line_start}")
        for n in names:
            if n == "_":
                continue
            full = self.full_name(n)
            self.decls.append({
                "corpus": self.corpus, "full_name": full, "kind": "alias", "signature": "",
                "type": None, "docstring": self.doc_before(a), "attributes": h.attrs,
                "module": self.module, "file": self.file, "line_start": line_start,
                "line_end": self.line_of(max(a, seg_end - 1)), "is_private": "private" in h.modifiers,
                "is_protected": "protected" in h.modifiers, "origin": "alias",
                "statement_group": group, "variables": "", "_deps": target[:1],
            })

    def var_state(self) -> "_VarState":
        if self._vstate is None:
            overrides: dict[str, str] = {}
            for sc in self.scopes:
                overrides.update(sc.overrides)
            overrides.update(self.pending_overrides)
            self._vstate = _VarState(
                [v for sc in self.scopes for v in sc.variables] + self.pending_vars,
                set().union(*(sc.included for sc in self.scopes)) | self.pending_include,
                set().union(*(sc.omitted for sc in self.scopes)) | self.pending_omit,
                overrides,
            )
        return self._vstate

    def used_variables(self, mentioned: set[str], kw: str) -> tuple[str, set[str]]:
        """The `variable` binders a statement uses: mentioned ones and their dependencies,
        included ones, instance binders over used variables; minus omitted ones."""
        st = self.var_state()
        if not st.binders:
            return "", set()
        key = frozenset(mentioned.intersection(st.latest))
        hit = st.memo.get(key)
        if hit is None:
            hit = st.memo[key] = self._used_variables(st, key)
        return hit

    def _used_variables(self, st: "_VarState", mentioned: frozenset[str]) -> tuple[str, set[str]]:
        latest, omitted = st.latest, st.omitted
        todo = [n for n in mentioned if n in latest and n not in omitted] + st.included_named
        used: set[str] = set()
        while todo:
            n = todo.pop()
            if n in used:
                continue
            used.add(n)
            todo.extend(d for d in st.deps[n] if d not in used)
        used_inst: set[int] = set()
        changed = True
        while changed:
            changed = False
            for idx, vs in st.insts:
                if idx not in used_inst and vs <= used:
                    used_inst.add(idx)
                    changed = True
                    for n in st.binders[idx].names:
                        if latest.get(n) == idx and n not in used:
                            used.add(n)
        fkey = (frozenset(used), frozenset(used_inst))
        text = st.formatted.get(fkey)
        if text is None:
            text = st.formatted[fkey] = self._format_used(st, used, used_inst)
        return text, used

    @staticmethod
    def _format_used(st: "_VarState", used: set[str], used_inst: set[int]) -> str:
        latest = st.latest
        out = []
        for i, b in enumerate(st.binders):
            if b.bracket == "[":
                if i in used_inst:
                    out.append(format_binder(b))
                continue
            keep = [n for n in b.names if n in used and latest.get(n) == i]
            while keep:  # consecutive names with the same (possibly updated) bracket share a group
                br = st.overrides.get(keep[0], b.bracket)
                k = 1
                while k < len(keep) and st.overrides.get(keep[k], b.bracket) == br:
                    k += 1
                out.append(format_binder(VarBinder(b.names, br, b.type, b.idents), tuple(keep[:k])))
                keep = keep[k:]
        return " ".join(out)

    def instance_hint(self, binders: list[VarBinder], binders_text: str, typ: str) -> dict:
        """Raw material for Lean's instance-name rule: namespace, opens, binder and type text."""
        return {
            "ns": self.namespace,
            "opens": self.opens(),
            "binders": [[b.bracket, list(b.names), b.type] for b in binders],
            "type": typ,
        }


_TYPE_KINDS = {"structure", "class", "inductive", "coinductive"}  # (`class inductive` is kind class)
_NEEDS_BODY = {"theorem", "lemma", "def", "abbrev", "instance", "irreducible_def"}
_HASH_COMMANDS = {
    "#check", "#eval", "#print", "#reduce", "#synth", "#exit", "#lint", "#help", "#guard",
    "#guard_msgs", "#guard_expr", "#find", "#where", "#align", "#align_import", "#noalign",
    "#adaptation_note", "#min_imports", "#simp", "#norm_num", "#conv", "#whnf", "#time",
    "#find_home", "#explode", "#count_heartbeats", "#test", "#sample", "#long_names",
    "#help_tactic", "#version", "#import_path", "#redundant_imports", "#list_linters",
}
_OTHER_COMMANDS = {
    "import", "module", "universe", "set_option", "notation", "notation3", "infix", "infixl",
    "infixr", "prefix", "postfix", "macro", "macro_rules", "syntax", "elab", "elab_rules",
    "initialize", "builtin_initialize", "deriving", "run_cmd", "assert_not_exists",
    "assert_not_imported", "library_note", "add_decl_doc", "initialize_simps_projections",
    "compile_inductive", "suppress_compilation", "unseal", "seal", "export", "declare_syntax_cat",
    "register_option", "register_simp_attr", "scoped", "local", "attribute", "noncomputable",
    "lemma", "irreducible_def", "open", "public", "private",
}


def mutual_member_starts(text: str) -> list[int]:
    """Offsets of the commands of each `mutual` block whose members are indented (as Lean core
    writes them): every line at the indentation of the block's first line that opens a command.
    Members at column 0 are command starts already."""
    out: list[int] = []
    for m in _MUTUAL.finditer(text):
        end = _END_LINE.search(text, m.end())
        stop = end.start() if end else len(text)
        base = None
        for s in _INDENTED_LINE.finditer(text, m.end(), stop):
            indent = len(s.group(1).expandtabs())
            if base is None:
                if not s.group(2):  # the block's first line is not a command: nothing to add
                    break
                base = indent
            if indent == base and s.group(2):
                out.append(s.start(2))
    return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def scan_file(text: str, corpus: str, module: str, file: str, budget_s: float = TIME_BUDGET_S):
    """Declarations, dependency names and errors of one Lean file (raw rows, see module doc)."""
    return FileScanner(text, corpus, module, file, budget_s).run()
