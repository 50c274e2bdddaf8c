"""Citations of a Lean corpus: which declarations cite which works and external identifiers.

Three places say so, all in the corpus itself:

- docstrings citing a key of the corpus's bibliography (BIB_FILES: Mathlib's `docs/references.bib`),
  as `[serre1973]` or Mathlib's `[Serre, *A course in arithmetic*][serre1973]`, or writing an
  identifier out (an arXiv or DOI URL, `OEIS A000045`: `identifiers.in_text`);
- module docs (`/-! ... -/`), the same, credited to the declarations the file's module docs describe
  (the `descriptions` rows of that file), else to the file's first declaration;
- the title lists' entries (`descriptions.read_list_entries`): a Wikidata QID of `docs/1000.yaml`, a
  number of `docs/100.yaml`, for each declaration the entry names.

A cited work gives one row per identifier of its entry (`identifiers.from_bib`), or one row without
an identifier. A key that is not in the bibliography is no citation (`[x]` is also Markdown).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.bibtex import Bibliography, parse_bib
from mathindex.corpusfiles import CorpusRoot, Refused, max_bytes_for, read_file
from mathindex.identifiers import Identifier, from_bib, in_text, normal
from mathindex.lean.descriptions import SOURCE_MODULE_DOC, TITLE_LISTS, TOPIC_LISTS, ListEntry, module_docs
from mathindex.names import lean_node_id
from mathindex.schemas.lean import CITATIONS

log = logging.getLogger(__name__)

BIB_FILES = ("docs/references.bib",)  # a Lean corpus's bibliography, relative to its root
# files under a Lean corpus root that the corpus-wide pass reads beside the `*.lean` files (pinned
# with them: sources.input_files)
ROOT_FILES = TITLE_LISTS + TOPIC_LISTS + BIB_FILES
VIA_DOCSTRING = "docstring"
_KEY = re.compile(r"\[([^\[\]\s,;]+)\]")


@dataclass(frozen=True)
class Mention:
    """A work or identifier cited in a text: the line (1-based, in the file where known), the
    bibliography key (None for an identifier written out) and the identifier (None for a work
    whose entry has none)."""

    line: int
    key: str | None
    identifier: Identifier | None


def read_bibliography(root: Path) -> Bibliography:
    """The entries of the corpus's bibliography files (BIB_FILES) that exist, read through
    corpusfiles (a refused file is skipped with a warning)."""
    confined, bib = CorpusRoot.of(root), Bibliography()
    for rel in BIB_FILES:
        path = Path(root) / rel
        if not path.exists():
            continue
        try:
            parsed = parse_bib(read_file(confined, path, max_bytes_for(path)).decode("utf-8", errors="replace"))
        except Refused as exc:
            log.warning("citations: %s skipped: %s", rel, exc)
            continue
        if parsed.skipped:
            log.warning("citations: %s: %d entries do not parse; skipped", rel, parsed.skipped)
        for key, entry in parsed.entries.items():
            bib.entries.setdefault(key, entry)
    return bib


def mentions(text: str, bib: Bibliography, first_line: int = 1) -> list[Mention]:
    """The citations of one text (a docstring, a module doc) whose first line is `first_line`."""
    out: list[Mention] = []
    if "[" in text and bib.entries:
        for m in _KEY.finditer(text):
            entry = bib.entries.get(m.group(1))
            if entry is not None:
                line = first_line + text.count("\n", 0, m.start())
                out.extend(Mention(line, entry.key, i) for i in from_bib(entry.fields) or [None])
    out.extend(Mention(first_line + text.count("\n", 0, offset), None, i) for offset, i in in_text(text))
    return list(dict.fromkeys(out))


def module_doc_mentions(text: str, bib: Bibliography) -> list[Mention]:
    """The citations of every module doc of one Lean file, at their lines."""
    return [m for line, body in module_docs(text) for m in mentions(body, bib, line)]


def citations_table(declarations: pa.Table, described: pa.Table, bib: Bibliography,
                    module_doc: dict[str, list[Mention]], entries: list[ListEntry]) -> pa.Table:
    """CITATIONS rows: each declaration's docstring citations (at its line), each file's module doc
    citations (`module_doc`: file -> mentions) credited as the module docstring says, and each
    title list entry with a declaration of the corpus."""
    decls = declarations.select(["full_name", "docstring", "file", "line_start"]).to_pylist()
    rows: list[tuple] = []
    for d in decls:
        if d["docstring"]:
            rows.extend((d["full_name"], VIA_DOCSTRING, m, d["file"], d["line_start"]) for m in mentions(d["docstring"], bib))
    credited = _credited(decls, described, set(module_doc))
    for file, found in module_doc.items():
        rows.extend((name, SOURCE_MODULE_DOC, m, file, m.line) for name in credited.get(file, []) for m in found)
    names = {d["full_name"] for d in decls}
    for e in entries:
        identifier = normal(e.scheme, e.key)
        rows.extend((name, e.list, Mention(e.line or 0, None, identifier), e.list, e.line)
                    for name in e.decls if name in names and identifier is not None)
    table = pa.table({
        "node_id": [lean_node_id(r[0]) for r in rows], "full_name": [r[0] for r in rows], "via": [r[1] for r in rows],
        "key": [r[2].key for r in rows], "kind": [r[2].identifier.kind if r[2].identifier else None for r in rows],
        "identifier": [r[2].identifier.value if r[2].identifier else None for r in rows],
        "file": [r[3] for r in rows], "line": [r[4] for r in rows],
    }, schema=CITATIONS)
    table = pl.from_arrow(table).unique(maintain_order=True).to_arrow().cast(CITATIONS)
    log.info("citations: %d rows, %d declarations, %d bibliography keys cited", table.num_rows,
             len(set(table.column("full_name").to_pylist())), len(set(k for k in table.column("key").to_pylist() if k)))
    return table


def _credited(decls: list[dict], described: pa.Table, files: set[str]) -> dict[str, list[str]]:
    """file -> the declarations its module doc citations are credited to: those its module docs
    describe (`descriptions`), else its first declaration."""
    out: dict[str, list[str]] = {}
    if described is not None and described.num_rows:
        rows = described.select(["full_name", "source", "file"]).to_pylist()
        for r in rows:
            if r["source"] == SOURCE_MODULE_DOC and r["file"] in files and r["full_name"] not in out.setdefault(r["file"], []):
                out[r["file"]].append(r["full_name"])
    first: dict[str, tuple[int, str]] = {}
    for d in decls:
        if d["file"] in files and d["file"] not in out and (d["file"] not in first or d["line_start"] < first[d["file"]][0]):
            first[d["file"]] = (d["line_start"], d["full_name"])
    out.update((file, [name]) for file, (_, name) in first.items())
    return out


__all__ = ["BIB_FILES", "ROOT_FILES", "Mention", "citations_table", "mentions", "module_doc_mentions",
           "read_bibliography"]
