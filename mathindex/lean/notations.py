"""Notation commands of Lean source: which symbols a library prints for which constant.

`notation "φ" => Nat.totient`, `prefix:100 "√" => Real.sqrt`, `infixl:65 " +ᵥ " => HVAdd.hVAdd`,
`scoped[NNReal] notation "ℝ≥0" => NNReal`, `local notation "‖" x "‖" => Fintype.card x`: a row per
command (schemas/lean.py NOTATIONS) with its quoted atoms and the head constant of its right-hand
side as written. Commands are found in the lexer's blanked text (comments and docstrings cannot
match) at the start of a line; the atoms are read from the original text at the same offsets.
Macros, `syntax` and `macro_rules` are not read: they name no single constant.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from mathindex.corpusfiles import CorpusRoot, Refused, list_files, max_bytes_for, read_file
from mathindex.lean.lexer import blank
from mathindex.schemas.common import table
from mathindex.schemas.lean import NOTATIONS

_COMMAND = re.compile(
    r"^(?:@\[[^\]\n]*\]\s*)?(?:(?P<scope>scoped|local)(?:\[[\w.]+\])?\s+)?"
    r"(?P<kind>notation3|notation|prefix|infixl|infixr|infix|postfix)(?![\w.'])", re.M)
_NEXT_COMMAND = re.compile(r"^\S", re.M)  # a command ends where the next line starts in column 0
_ATOM = re.compile(r'"((?:[^"\\]|\\.)*)"')
# the head of a right-hand side: skip `fun x =>`/`(`/`@`, then a dotted identifier
_HEAD = re.compile(r"^(?:\s|\(|@|fun\s[^=]*=>)*(?P<name>[^\W\d][\w.'!?₀-₉ₐ-ₜ]*)")
_KEYWORDS = frozenset({"fun", "by", "if", "let", "have", "show", "match", "do"})


def file_notations(text: str) -> list[dict]:
    """(line, kind, scope, atoms, target) of each notation command in one file's text."""
    code = blank(text).text
    out = []
    for m in _COMMAND.finditer(code):
        nxt = _NEXT_COMMAND.search(code, m.end())
        end = nxt.start() if nxt else len(code)
        arrow = code.find("=>", m.end(), end)
        if arrow < 0:
            continue
        atoms = [a.strip() for a in _ATOM.findall(text[m.end():arrow])]
        atoms = [a for a in atoms if a]
        if not atoms:
            continue
        head = _HEAD.match(code[arrow + 2:end])
        target = head.group("name").rstrip(".") if head and head.group("name") not in _KEYWORDS else None
        out.append({"line": code.count("\n", 0, m.start()) + 1, "kind": m.group("kind"),
                    "scope": m.group("scope") or "global", "atoms": atoms, "target": target})
    return out


def extract_notations(root: Path, corpus: str) -> pa.Table:
    """Every notation command of the .lean files under root (NOTATIONS, in file and line order);
    a file that cannot be read or decoded is skipped (the declaration extraction reports it)."""
    rows = []
    confined = CorpusRoot.of(Path(root))
    for rel, path in list_files(Path(root), (".lean",)):
        try:  # the one reader of corpus files: confined to the root, no FIFO, device or link out, capped
            text = read_file(confined, path, max_bytes_for(path)).decode("utf-8")
        except (Refused, OSError, UnicodeDecodeError):
            continue
        rows.extend({"corpus": corpus, "file": rel, **r} for r in file_notations(text))
    return table(rows, NOTATIONS)
