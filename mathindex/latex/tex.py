"""Extraction of one LaTeX file: theorem-like statements, proofs, slogans, labels, refs and formulas.

`extract_tex_text` is a pure function of (text, document context); every malformed construct becomes
an error tuple and scanning goes on. Work is bounded by a deadline checked while scanning.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

from mathindex.latex.macros import COMMENT_ENVS_DEFAULT, ExpansionError, FileDefs, MacroSet, parse_definition
from mathindex.latex.texscan import Lines, ScanError, brace_balance, brace_group, bracket_group, skip_space
from mathindex.names import tex_node_id

DISPLAY_ENVS = frozenset(
    base + star
    for base in ("equation", "align", "gather", "multline", "eqnarray", "flalign", "alignat", "displaymath", "math")
    for star in ("", "*")
)
SECTION_LEVELS = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}
SLOGAN_ENV = "slogan"
# A proof belongs to the last statement when at most this many non-blank characters of text (and no
# section or other statement) separate them; a second proof right after the first is appended.
MAX_PROOF_GAP = 2000

_TOKEN = re.compile(
    r"\\(?P<be>begin|end)\s*\{(?P<env>[^{}\n]{1,80})\}"
    r"|\\(?P<sec>part|chapter|section|subsection|subsubsection)(?![a-zA-Z@])\*?"
    r"|\\label\s*\{(?P<label>[^{}\n]{0,300})\}"
    r"|\\(?:ref|eqref|cref|Cref|autoref|nameref|pageref|vref|labelcref)\*?\s*\{(?P<refs>[^{}\n]{0,1000})\}"
    r"|\\cite[a-zA-Z]*\*?\s*(?:\[[^\]\n]*\]\s*){0,2}\{(?P<keys>[^{}]{0,2000})\}"
    r"|\\(?P<def>newcommand|renewcommand|providecommand|DeclareRobustCommand|def|gdef|edef|xdef|let"
    r"|DeclareMathOperator|newtheorem|declaretheorem|spnewtheorem|newenvironment|renewenvironment)"
    r"(?![a-zA-Z@])(?P<star>\*?)"
    r"|(?P<math>\$\$|\$|\\\(|\\\[)"
    r"|\\[\\$]"
)
# `$...$` without a nested `$` and without a blank line: the common case, matched in one step.
_INLINE_FAST = re.compile(r"[^$\\\n]*+(?:(?:\\.|\n(?![ \t\r]*\n))[^$\\\n]*+)*+\$", re.S)
_INLINE = re.compile(r"\\.|[{}$]|\n[ \t\r]*\n", re.S)
_DOLLARS = re.compile(r"\\.|\$\$|\$|\n[ \t\r]*\n", re.S)
_ESCAPE = re.compile(r"\\.", re.S)
_LABEL = re.compile(r"\\label\s*\{[^{}]*\}")
_LABEL_NAME = re.compile(r"\\label\s*\{([^{}]*)\}")
_GAP_NOISE = re.compile(r"\\(?:noindent|medskip|smallskip|bigskip|par|newline|vskip\s*\S+|vspace\*?\s*\{[^}]*\})|\s")
_WS = re.compile(r"\s+")
_STRUCTURAL_BODY = re.compile(r"\s*(?:\\(?:begin|end)\s*\{[^{}]+\}|\\\[|\\\]|\$\$)\s*")
_BLANK_RUN = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


_FORMULA_COLUMNS = (
    "formula_id", "node_id", "statement_id", "line", "position", "display", "latex", "latex_normalised", "role",
    "label", "tag",
)


class FileTimeout(RuntimeError):
    """The per-file time budget ran out."""


@dataclass(frozen=True)
class DocContext:
    """What one document (a connected group of \\input files) defines: macros, theorem kinds, comment envs."""

    macros: dict
    theorem_kinds: dict  # env name -> resolved kind
    comment_envs: frozenset = COMMENT_ENVS_DEFAULT


@dataclass(frozen=True)
class LabelResolver:
    """Maps labels as written in a file to corpus-unique labels and tags (Stacks: `<file>-<label>`)."""

    tags: dict  # full label -> tag
    file_prefixed: bool
    stems: frozenset

    def full_label(self, label: str, stem: str) -> str:
        """The corpus-unique form of a label defined in file `stem`."""
        return f"{stem}-{label}" if self.file_prefixed else label

    def ref_name(self, label: str, stem: str) -> str:
        """What a \\ref{label} in file `stem` points to: its tag when known, else its full label."""
        if not self.file_prefixed:
            return self.tags.get(label, label)
        local = f"{stem}-{label}"
        if local in self.tags:
            return self.tags[local]
        if label in self.tags:
            return self.tags[label]
        for i, ch in enumerate(label):
            if ch == "-" and label[:i] in self.stems:
                return label
        return local


@dataclass
class _Frame:
    env: str
    begin: int  # offset of \begin
    content: int  # offset where the content starts
    line: int
    role: str  # statement | proof | other
    stmt: "_Statement | None" = None


@dataclass
class _Statement:
    statement_id: str
    env: str
    kind: str
    title: str | None
    line_start: int
    section_path: list
    content: int
    label: str | None = None
    slogan: str | None = None
    cut: list = field(default_factory=list)  # (start, end) spans removed from the body (slogans)
    body: str = ""
    line_end: int = 0
    proof: str | None = None
    refs: list = field(default_factory=list)
    keys: list = field(default_factory=list)
    end: int = 0


@dataclass
class TexResult:
    """Rows of one file: statements as dicts, formulas as dicts or as columns, (line, reason) errors."""

    statements: list
    formulas: list
    errors: list


def short_id(*parts: object) -> str:
    """First 16 hex chars of sha256 over the '|'-joined parts."""
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:16]


def expand_structural(text: str, macros: dict) -> str:
    """text with argument-less macros that only open or close math or an environment
    (`\\def\\beq{\\begin{equation}}`) replaced by their body, so the scanner sees the structure."""
    names = {n: m.body.strip() for n, m in macros.items() if m.nargs == 0 and _STRUCTURAL_BODY.fullmatch(m.body)}
    if not names:
        return text
    alt = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    pattern = re.compile(r"(\\(?:[gex]?def|let|(?:re)?newcommand\*?|providecommand\*?)\s*\{?\s*)?\\(" + alt + r")(?![a-zA-Z@])")
    return pattern.sub(lambda m: m.group(0) if m.group(1) else names[m.group(2)], text)


def blank_comment_envs(text: str, envs: frozenset) -> str:
    """Text with every comment-like environment (verbatim, comment, ...) replaced by its newlines."""
    names = sorted(e for e in envs if e != SLOGAN_ENV)
    if not names:
        return text
    alt = "|".join(re.escape(n) for n in names)
    pattern = re.compile(r"\\begin\s*\{(" + alt + r")\}.*?\\end\s*\{\1\}", re.S)
    return pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)


class _Scanner:
    def __init__(self, text: str, rel: str, corpus: str, ctx: DocContext, resolver: LabelResolver, deadline: float):
        self.text = text
        self.rel = rel
        self.stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        self.corpus = corpus
        self.ctx = ctx
        self.macros = MacroSet(ctx.macros)
        self.resolver = resolver
        self.deadline = deadline
        self.lines = Lines(text)
        self.stack: list[_Frame] = []
        self.sections: list[tuple[int, str]] = []
        self.statements: list[_Statement] = []
        self.formulas: dict[str, list] = {name: [] for name in _FORMULA_COLUMNS}
        self.id_prefix = hashlib.sha256(f"{corpus}|{rel}|latex|".encode())
        self.errors: list[tuple[int | None, str]] = []
        self.last_closed: _Statement | None = None
        self.ticks = 0
        self.no_end: dict[str, int] = {}  # env -> offset after which no \end{env} exists

    # -- helpers -------------------------------------------------------------------------------
    def error(self, offset: int | None, reason: str) -> None:
        self.errors.append((None if offset is None else self.lines.line(offset), reason))

    def normalise(self, text: str, offset: int) -> str:
        while True:
            try:
                return self.macros.expand(text)
            except ExpansionError as exc:
                self.error(offset, str(exc))
                self.macros.drop(exc.name)

    def owner(self) -> tuple[_Statement | None, str | None]:
        for frame in reversed(self.stack):
            if frame.role in ("statement", "proof") and frame.stmt is not None:
                return frame.stmt, frame.role
        return None, None

    def add_formula(self, start: int, latex: str, display: str) -> None:
        stmt, role = self.owner()
        cols = self.formulas
        position = len(cols["position"])
        sid = stmt.statement_id if stmt else None
        hasher = self.id_prefix.copy()
        hasher.update(str(position).encode())
        cols["formula_id"].append(hasher.hexdigest()[:16])
        cols["node_id"].append(tex_node_id(self.corpus, sid) if sid else None)
        cols["statement_id"].append(sid)
        cols["line"].append(self.lines.line(start))
        cols["position"].append(position)
        cols["display"].append(display)
        cols["latex"].append(latex.strip())
        normalised = self.normalise(latex, start)
        cols["latex_normalised"].append((_LABEL.sub("", normalised) if "\\label" in normalised else normalised).strip())
        cols["role"].append(role)
        label = _LABEL_NAME.search(latex) if display != "inline" and "\\label" in latex else None
        full = self.resolver.full_label(label.group(1).strip(), self.stem) if label else None
        cols["label"].append(full)
        cols["tag"].append(self.resolver.tags.get(full) if full else None)

    def formula_columns(self) -> dict[str, list]:
        """The FORMULAS columns of this file (constant columns filled in)."""
        n = len(self.formulas["position"])
        return {"corpus": [self.corpus] * n, "source": ["latex"] * n, "file": [self.rel] * n, **self.formulas}

    # -- math ----------------------------------------------------------------------------------
    def inline_math(self, start: int) -> int:
        """Scans `$...$` from the opening dollar; returns the offset after the closing one."""
        fast = _INLINE_FAST.match(self.text, start + 1)
        if fast is not None:
            content = self.text[start + 1 : fast.end() - 1]
            if "{" not in content and "}" not in content or content.count("{") == content.count("}"):
                self.add_formula(start, content, "inline")
                return fast.end()
        depth, nested = 0, False
        for m in _INLINE.finditer(self.text, start + 1):
            tok = m.group(0)
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
            elif tok == "$":
                if depth <= 0 and not nested:
                    self.add_formula(start, self.text[start + 1 : m.start()], "inline")
                    return m.end()
                nested = not nested
            elif tok[0] == "\n":
                break
        self.error(start, "inline math `$` not closed before the end of the paragraph")
        return start + 1

    def display_dollars(self, start: int) -> int:
        for m in _DOLLARS.finditer(self.text, start + 2):
            tok = m.group(0)
            if tok == "$$":
                self.add_formula(start, self.text[start + 2 : m.start()], "display")
                return m.end()
            if tok[0] == "\n":
                break
        self.error(start, "display math `$$` not closed before the end of the paragraph")
        return start + 2

    def bracket_math(self, start: int, opener: str) -> int:
        closer = "\\)" if opener == "\\(" else "\\]"
        for m in _ESCAPE.finditer(self.text, start + 2, start + 200_000):
            tok = m.group(0)
            if tok == closer:
                self.add_formula(start, self.text[start + 2 : m.start()], "inline" if opener == "\\(" else "display")
                return m.end()
            if tok in ("\\(", "\\["):
                break
        self.error(start, f"math `{opener}` never closed by `{closer}`")
        return start + 2

    def find_end(self, env: str, pos: int) -> re.Match | None:
        """The next `\\end{env}` after pos; remembers a miss, so unclosed envs cost one scan each."""
        if self.no_end.get(env, len(self.text) + 1) <= pos:
            return None
        found = re.compile(r"\\end\s*\{" + re.escape(env) + r"\}").search(self.text, pos)
        if found is None:
            self.no_end[env] = min(pos, self.no_end.get(env, pos))
        return found

    # -- environments --------------------------------------------------------------------------
    def begin(self, m: re.Match, env: str) -> int:
        text = self.text
        if env in DISPLAY_ENVS:
            e = self.find_end(env, m.end())
            if e is None:
                self.error(m.start(), f"environment {env} never ends")
                return m.end()
            self.add_formula(m.start(), text[m.end() : e.start()], env)
            return e.end()
        if env == SLOGAN_ENV:
            e = self.find_end(SLOGAN_ENV, m.end())
            if e is None:
                self.error(m.start(), "environment slogan never ends")
                return m.end()
            stmt, role = self.owner()
            target = stmt if stmt is not None and role == "statement" else self.last_closed
            if target is not None:
                target.slogan = _WS.sub(" ", text[m.end() : e.start()]).strip()
                if role == "statement":
                    target.cut.append((m.start(), e.end()))
            return e.end()
        kind = self.ctx.theorem_kinds.get(env)
        line = self.lines.line(m.start())
        if kind is not None:
            pos = m.end()
            title = None
            p = skip_space(text, pos)
            if text.startswith("[", p):
                try:
                    title, pos = bracket_group(text, p)
                    title = _WS.sub(" ", title).strip()
                except ScanError as exc:
                    self.error(p, f"{env}: {exc}")
            stmt = _Statement(
                statement_id=short_id(self.corpus, self.rel, line, env),
                env=env,
                kind=kind,
                title=title,
                line_start=line,
                section_path=[t for _, t in self.sections],
                content=pos,
            )
            self.last_closed = None
            self.stack.append(_Frame(env, m.start(), pos, line, "statement", stmt))
            return pos
        if env == "proof":
            pos = m.end()
            p = skip_space(text, pos)
            if text.startswith("[", p):
                try:
                    pos = bracket_group(text, p)[1]
                except ScanError as exc:
                    self.error(p, f"proof: {exc}")
            target = None
            if self.last_closed is not None:
                gap = _GAP_NOISE.sub("", text[self.last_closed.end : m.start()])
                if len(gap) <= MAX_PROOF_GAP:
                    target = self.last_closed
            self.stack.append(_Frame(env, m.start(), pos, line, "proof", target))
            return pos
        self.stack.append(_Frame(env, m.start(), m.end(), line, "other"))
        return m.end()

    def end(self, m: re.Match, env: str) -> int:
        idx = len(self.stack) - 1
        while idx >= 0 and self.stack[idx].env != env:
            idx -= 1
        if idx < 0:
            self.error(m.start(), f"\\end{{{env}}} without a matching \\begin")
            return m.end()
        while len(self.stack) > idx + 1:
            frame = self.stack.pop()
            self.error(frame.begin, f"environment {frame.env} begun here is closed by \\end{{{env}}}")
        frame = self.stack.pop()
        if frame.role == "statement" and frame.stmt is not None:
            stmt = frame.stmt
            stmt.body = self.cut_body(stmt, frame.content, m.start())
            stmt.line_end = self.lines.line(m.start())
            stmt.end = m.end()
            if brace_balance(stmt.body) != 0:
                self.error(frame.begin, f"{env}: unbalanced braces in the body")
            self.statements.append(stmt)
            self.last_closed = stmt
        elif frame.role == "proof" and frame.stmt is not None:
            proof = self.text[frame.content : m.start()].strip()
            frame.stmt.proof = proof if frame.stmt.proof is None else frame.stmt.proof + "\n\n" + proof
            frame.stmt.end = m.end()
        return m.end()

    def cut_body(self, stmt: _Statement, start: int, stop: int) -> str:
        parts, pos = [], start
        for a, b in stmt.cut:
            parts.append(self.text[pos:a])
            pos = b
        parts.append(self.text[pos:stop])
        return _BLANK_RUN.sub("\n\n", "".join(parts)).strip()

    def section(self, m: re.Match) -> int:
        level = SECTION_LEVELS[m.group("sec")]
        pos = skip_space(self.text, m.end())
        try:
            if self.text.startswith("[", pos):
                pos = skip_space(self.text, bracket_group(self.text, pos)[1])
            if not self.text.startswith("{", pos):
                return m.end()
            title, end = brace_group(self.text, pos, limit=5000)
        except ScanError as exc:
            self.error(m.start(), f"\\{m.group('sec')}: {exc}")
            return m.end()
        while self.sections and self.sections[-1][0] >= level:
            self.sections.pop()
        self.sections.append((level, _WS.sub(" ", title).strip()))
        self.last_closed = None
        return end

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> None:
        text, pos = self.text, 0
        search = _TOKEN.search
        while True:
            m = search(text, pos)
            if m is None:
                break
            self.ticks += 1
            if self.ticks % 2048 == 0 and time.monotonic() > self.deadline:
                raise FileTimeout("time budget per file exceeded")
            pos = m.end()
            kind = m.lastgroup
            if m.group("be"):
                env = m.group("env").strip()
                pos = self.begin(m, env) if m.group("be") == "begin" else self.end(m, env)
            elif kind == "label":
                frame = self.stack[-1] if self.stack else None
                if frame is not None and frame.role == "statement" and frame.stmt.label is None:
                    frame.stmt.label = m.group("label").strip()
            elif kind == "refs":
                stmt, role = self.owner()
                if stmt is not None and role == "proof":
                    stmt.refs.extend(r.strip() for r in m.group("refs").split(",") if r.strip())
            elif kind == "keys":
                stmt, _ = self.owner()
                if stmt is not None:
                    stmt.keys.extend(k.strip() for k in m.group("keys").split(",") if k.strip())
            elif m.group("sec"):
                pos = self.section(m)
            elif m.group("def"):
                try:
                    pos = max(pos, parse_definition(text, m.end(), m.group("def"), m.group("star"), FileDefs()))
                except ScanError as exc:
                    self.error(m.start(), f"\\{m.group('def')}: {exc}")
            elif m.group("math"):
                tok = m.group("math")
                if tok == "$":
                    pos = self.inline_math(m.start())
                elif tok == "$$":
                    pos = self.display_dollars(m.start())
                else:
                    pos = self.bracket_math(m.start(), tok)
        for frame in self.stack:
            self.error(frame.begin, f"environment {frame.env} never ends")

    def statement_rows(self) -> list[dict]:
        rows = []
        resolver, stem = self.resolver, self.stem
        for s in sorted(self.statements, key=lambda s: (s.line_start, s.statement_id)):
            full = resolver.full_label(s.label, stem) if s.label else None
            cites = list(dict.fromkeys(resolver.ref_name(r, stem) for r in s.refs))
            rows.append(
                {
                    "statement_id": s.statement_id,
                    "node_id": tex_node_id(self.corpus, s.statement_id),
                    "corpus": self.corpus,
                    "source": "latex",
                    "env": s.env,
                    "kind": s.kind,
                    "title": s.title,
                    "label": s.label,
                    "full_label": full,
                    "tag": resolver.tags.get(full) if full else None,
                    "body": s.body,
                    "body_normalised": _WS.sub(" ", _LABEL.sub("", self.normalise(s.body, s.content))).strip(),
                    "proof": s.proof,
                    "cites": cites,
                    "bib_cites": list(dict.fromkeys(s.keys)),
                    "section_path": s.section_path,
                    "file": self.rel,
                    "line_start": s.line_start,
                    "line_end": s.line_end,
                    "slogan": s.slogan,
                }
            )
        return rows


def extract_tex_text(
    text: str, rel: str, corpus: str, ctx: DocContext, resolver: LabelResolver, budget_s: float = 30.0
) -> TexResult:
    """Statements, formulas and (line, reason) errors of one comment-stripped file text."""
    text = expand_structural(text, ctx.macros)
    text = blank_comment_envs(text, ctx.comment_envs)
    scanner = _Scanner(text, rel, corpus, ctx, resolver, time.monotonic() + budget_s)
    try:
        scanner.run()
        statements = scanner.statement_rows()
    except FileTimeout as exc:
        return TexResult([], [], scanner.errors + [(None, f"{exc} ({budget_s:g} s); file skipped")])
    return TexResult(statements, scanner.formula_columns(), scanner.errors)
