"""User definitions of a TeX document: macros, theorem environments, comment environments, inputs.

Definitions are parsed from comment-stripped text; `MacroSet.expand` rewrites a copy of a text
with simple user macros expanded, under hard limits on passes and output length.
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass, field

from mathindex.latex.texscan import ScanError, bracket_group, brace_group, skip_space

DEF_COMMAND = re.compile(
    r"\\(newcommand|renewcommand|providecommand|DeclareRobustCommand|def|gdef|edef|xdef|let"
    r"|DeclareMathOperator|newtheorem|declaretheorem|spnewtheorem|newenvironment|renewenvironment"
    r"|excludecomment|input|include|subfile)(?![a-zA-Z@])(\*?)"
)
_CSNAME = re.compile(r"\\([a-zA-Z@]+|.)", re.S)
_PARAMS = re.compile(r"\s*((?:#[1-9])*)\s*\{")
_COMPLEX = re.compile(r"\\(?:def|gdef|edef|newcommand|renewcommand|if[a-zA-Z]*|csname|expandafter|futurelet|@ifnextchar|@ifstar|afterassignment|let)(?![a-zA-Z@])")
_ARGREF = re.compile(r"#(#|[1-9])")
_FILENAME = re.compile(r"\s*\{?\s*([^{}\s\\]+)\s*\}?")

# Printed-name words (lower case, no accents) to the resolved kind.
KIND_WORDS = {
    "theorem": "theorem", "theorems": "theorem", "theoreme": "theorem", "satz": "theorem", "teorema": "theorem",
    "lemma": "lemma", "lemmas": "lemma", "lemmata": "lemma", "lemme": "lemma", "hilfssatz": "lemma",
    "proposition": "proposition", "propositions": "proposition", "proposizione": "proposition",
    "proposicion": "proposition",
    "corollary": "corollary", "corollaries": "corollary", "corollaire": "corollary", "korollar": "corollary",
    "folgerung": "corollary", "corolario": "corollary",
    "definition": "definition", "definitions": "definition", "definicion": "definition", "definizione": "definition",
    "remark": "remark", "remarks": "remark", "remarque": "remark", "bemerkung": "remark", "observacion": "remark",
    "example": "example", "examples": "example", "exemple": "example", "beispiel": "example", "ejemplo": "example",
    "exercise": "exercise", "exercises": "exercise", "exercice": "exercise", "aufgabe": "exercise",
    "situation": "situation", "conjecture": "conjecture", "conjectures": "conjecture", "vermutung": "conjecture",
    "claim": "claim", "fact": "fact", "facts": "fact", "observation": "observation", "question": "question",
    "problem": "problem", "problems": "problem", "notation": "notation", "hypothesis": "hypothesis",
    "assumption": "assumption", "assumptions": "assumption", "axiom": "axiom", "axioms": "axiom", "note": "note",
    "construction": "construction", "convention": "convention", "conventions": "convention",
    "property": "property", "properties": "property", "algorithm": "algorithm", "criterion": "criterion",
    "principle": "principle", "condition": "condition", "case": "case", "summary": "summary",
    "answer": "answer", "setup": "setup", "setting": "setup", "addendum": "addendum", "scholium": "scholium",
}
# Environment names that are theorem-like even without a definition in the document.
DEFAULT_ENVS = {w: k for w, k in KIND_WORDS.items() if w.isascii() and k == w} | {"remarks": "remark"}
# Abbreviated environment names, used when a definition gives no recognisable printed name.
ENV_ABBREVIATIONS = {
    "thm": "theorem", "theo": "theorem", "thrm": "theorem", "lem": "lemma", "lemm": "lemma", "prop": "proposition",
    "pro": "proposition", "cor": "corollary", "coro": "corollary", "corr": "corollary", "defn": "definition",
    "dfn": "definition", "defi": "definition", "def": "definition", "rem": "remark", "rmk": "remark",
    "rema": "remark", "ex": "example", "exa": "example", "exmp": "example", "eg": "example", "exer": "exercise",
    "conj": "conjecture", "clm": "claim", "obs": "observation", "nota": "notation", "ass": "assumption",
    "hyp": "hypothesis", "quest": "question", "prob": "problem", "constr": "construction", "ax": "axiom",
}
COMMENT_ENVS_DEFAULT = frozenset({"comment", "verbatim", "verbatim*", "Verbatim", "lstlisting", "minted", "alltt"})


def kind_of(printed: str, env: str) -> str:
    """Resolved kind of a theorem-like environment from its printed name, else from its env name."""
    plain = unicodedata.normalize("NFKD", printed).encode("ascii", "ignore").decode().lower()
    for word in re.findall(r"[a-z]+", plain):
        if word in KIND_WORDS:
            return KIND_WORDS[word]
    base = env.rstrip("*").lower()
    if base in KIND_WORDS:
        return KIND_WORDS[base]
    stem = re.sub(r"[^a-z]", "", base)
    if stem in ENV_ABBREVIATIONS:
        return ENV_ABBREVIATIONS[stem]
    if stem in KIND_WORDS:
        return KIND_WORDS[stem]
    words = re.findall(r"[a-z]+", plain)
    return words[-1] if words else (stem or "statement")


@dataclass(frozen=True)
class Macro:
    """A simple user macro: `nargs` arguments (the first optional when `default` is set)."""

    name: str
    nargs: int
    default: str | None
    body: str
    overrides: bool  # \renewcommand, \def: replaces an earlier definition


@dataclass
class FileDefs:
    """Definitions found in one file, in source order."""

    macros: list[Macro] = field(default_factory=list)
    theorems: list[tuple[str, str, str | None]] = field(default_factory=list)  # (env, printed, counter)
    env_aliases: list[tuple[str, str]] = field(default_factory=list)  # (env, inner env it begins)
    comment_envs: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (offset, reason)


def _csname(text: str, pos: int) -> tuple[str, int]:
    """Control-sequence name at pos, given as `\\name` or `{\\name}`."""
    pos = skip_space(text, pos)
    if text.startswith("{", pos):
        inner, end = brace_group(text, pos)
        m = _CSNAME.match(inner.strip())
        if not m:
            raise ScanError("macro name expected", pos)
        return m.group(1), end
    m = _CSNAME.match(text, pos)
    if not m:
        raise ScanError("macro name expected", pos)
    return m.group(1), m.end()


def _opt(text: str, pos: int) -> tuple[str | None, int]:
    p = skip_space(text, pos)
    if text.startswith("[", p):
        return bracket_group(text, p)
    return None, pos


def _req(text: str, pos: int) -> tuple[str, int]:
    p = skip_space(text, pos)
    if text.startswith("{", p):
        return brace_group(text, p)
    m = _CSNAME.match(text, p)
    if m:
        return m.group(0), m.end()
    if p < len(text):
        return text[p], p + 1
    raise ScanError("argument expected at end of file", pos)


def _simple(body: str, nargs: int) -> bool:
    if _COMPLEX.search(body):
        return False
    return all(g == "#" or int(g) <= nargs for g in _ARGREF.findall(body))


def parse_definition(text: str, pos: int, cmd: str, star: str, defs: FileDefs) -> int:
    """Parses the definition command `cmd` whose name ends at pos; records it in defs; returns its end."""
    if cmd in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand"):
        name, pos = _csname(text, pos)
        n, pos = _opt(text, pos)
        default, pos = _opt(text, pos)
        body, pos = _req(text, pos)
        nargs = int(n) if n and n.strip().isdigit() else 0
        if name[0].isalpha() and _simple(body, nargs):
            defs.macros.append(Macro(name, nargs, default, body, cmd in ("renewcommand", "DeclareRobustCommand")))
        return pos
    if cmd in ("def", "gdef", "edef", "xdef"):
        name, pos = _csname(text, pos)
        m = _PARAMS.match(text, pos)
        if m is None:  # delimited parameters: skip the body, do not expand
            brace = text.find("{", pos, pos + 2000)
            if brace < 0:
                raise ScanError(f"\\{cmd}\\{name}: body not found", pos)
            return brace_group(text, brace)[1]
        nargs = len(m.group(1)) // 2
        body, end = brace_group(text, m.end() - 1)
        if name[0].isalpha() and _simple(body, nargs):
            defs.macros.append(Macro(name, nargs, None, body, True))
        return end
    if cmd == "let":
        _, pos = _csname(text, pos)
        p = skip_space(text, pos)
        if text.startswith("=", p):
            pos = p + 1
        return _csname(text, pos)[1]
    if cmd == "DeclareMathOperator":
        name, pos = _csname(text, pos)
        body, pos = _req(text, pos)
        defs.macros.append(Macro(name, 0, None, f"\\operatorname{star}{{{body}}}", False))
        return pos
    if cmd in ("newtheorem", "spnewtheorem"):
        env, pos = _req(text, pos)
        counter, pos = _opt(text, pos)
        printed, pos = _req(text, pos)
        within, pos = _opt(text, pos)
        if cmd == "spnewtheorem":
            pos = _req(text, _req(text, pos)[1])[1]
        defs.theorems.append((env.strip(), printed.strip(), counter))
        return pos
    if cmd == "declaretheorem":
        opts, pos = _opt(text, pos)
        env, pos = _req(text, pos)
        after, pos = _opt(text, pos)
        options = ",".join(o for o in (opts, after) if o)
        named = re.search(r"(?:^|,)\s*(?:name|title)\s*=\s*\{?([^,}]*)", options)
        printed = named.group(1).strip() if named else env.strip().capitalize()
        shared = re.search(r"(?:sibling|numberlike|sharenumber)\s*=\s*\{?([^,}]*)", options)
        defs.theorems.append((env.strip(), printed, shared.group(1).strip() if shared else None))
        return pos
    if cmd in ("newenvironment", "renewenvironment"):
        env, pos = _req(text, pos)
        _, pos = _opt(text, pos)
        _, pos = _opt(text, pos)
        begin, pos = _req(text, pos)
        _, pos = _req(text, pos)
        if re.fullmatch(r"\s*\\comment\s*", begin):
            defs.comment_envs.append(env.strip())
        else:
            inner = re.search(r"\\begin\s*\{([^{}]+)\}", begin)
            if inner:
                defs.env_aliases.append((env.strip(), inner.group(1).strip()))
        return pos
    if cmd == "excludecomment":
        env, pos = _req(text, pos)
        defs.comment_envs.append(env.strip())
        return pos
    # input / include / subfile
    m = _FILENAME.match(text, pos)
    if m and m.group(1):
        defs.inputs.append(m.group(1))
        return m.end()
    return pos


def scan_definitions(text: str, budget_s: float = 30.0) -> FileDefs:
    """All definitions in one comment-stripped text; malformed ones become (offset, reason) errors.
    Past budget_s the scan stops with an error (definitions found so far are kept)."""
    defs = FileDefs()
    pos = 0
    deadline = time.monotonic() + budget_s
    count = 0
    while True:
        m = DEF_COMMAND.search(text, pos)
        if m is None:
            return defs
        count += 1
        if count % 64 == 0 and time.monotonic() > deadline:
            defs.errors.append((m.start(), f"definition scan stopped: time budget {budget_s:g} s exceeded"))
            return defs
        try:
            pos = parse_definition(text, m.end(), m.group(1), m.group(2), defs)
        except ScanError as exc:
            defs.errors.append((m.start(), f"\\{m.group(1)}: {exc}"))
            pos = m.end()
        pos = max(pos, m.end())


class ExpansionError(RuntimeError):
    """Macro expansion exceeded its limits (a runaway or recursive macro)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"macro expansion limit exceeded (runaway macro \\{name}?)")
        self.name = name


class MacroSet:
    """Simple user macros of one document, expandable in a copy of a text under hard limits."""

    MAX_PASSES = 24

    def __init__(self, macros: dict[str, Macro]) -> None:
        self.macros = dict(macros)
        self._compile()

    def _compile(self) -> None:
        names = sorted(self.macros, key=lambda s: (-len(s), s))
        self._pattern = (
            re.compile(r"\\(" + "|".join(re.escape(n) for n in names) + r")(?![a-zA-Z@])") if names else None
        )

    def drop(self, name: str) -> None:
        """Forgets a macro (after it ran away), so later texts keep it unexpanded."""
        if self.macros.pop(name, None) is not None:
            self._compile()

    def expand(self, text: str) -> str:
        """text with every simple user macro expanded; ExpansionError past the limits."""
        if self._pattern is None or "\\" not in text:
            return text
        limit = min(20 * len(text) + 4000, 4_000_000)
        last = ""
        for _ in range(self.MAX_PASSES):
            out: list[str] = []
            pos = 0
            changed = False
            for m in self._pattern.finditer(text):
                if m.start() < pos:
                    continue
                macro = self.macros[m.group(1)]
                last = macro.name
                args: list[str] = []
                end = m.end()
                try:
                    if macro.default is not None:
                        opt, end = _opt(text, end)
                        args.append(macro.default if opt is None else opt)
                    while len(args) < macro.nargs:
                        arg, end = _req(text, end)
                        args.append(arg)
                except ScanError:
                    continue
                out.append(text[pos : m.start()])
                out.append(_ARGREF.sub(lambda a: "#" if a.group(1) == "#" else args[int(a.group(1)) - 1], macro.body))
                if end < len(text) and macro.nargs == 0 and text[end].isalpha() and macro.body[-1:].isalpha():
                    out.append(" ")
                pos = end
                changed = True
            if not changed:
                return text
            out.append(text[pos:])
            text = "".join(out)
            if len(text) > limit:
                raise ExpansionError(last)
        if self._pattern.search(text):
            raise ExpansionError(last)
        return text


def query_macros(rows: list[dict]) -> MacroSet | None:
    """The macros a query is expanded with, from a release's `latex_macros` rows (LATEX_MACROS):
    for each name the definition most document groups use (ties: the first row, the table's order);
    None when there are none."""
    chosen: dict[str, dict] = {}
    for r in rows:
        best = chosen.get(r["name"])
        if best is None or r["documents"] > best["documents"]:
            chosen[r["name"]] = r
    if not chosen:
        return None
    return MacroSet({n: Macro(n, int(r["nargs"]), r["default_value"], r["body"], False) for n, r in chosen.items()})


def expand_query(macros: MacroSet | None, query: str) -> str:
    """`query` with the corpus's macros expanded (as its statements were); unchanged when there are
    none or the expansion runs away."""
    if macros is None:
        return query
    try:
        return macros.expand(query)
    except ExpansionError:
        return query
