"""Schemas of the LaTeX/XML extraction stage: `latex_statements` and `formulas`."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

LATEX_STATEMENTS = described(
    "One row per theorem-like environment (theorem, lemma, definition, ...) of the LaTeX and XML corpora.",
    [
        column("statement_id", pa.string(), "sha256(corpus|file|line_start|env)[:16]; unique", nullable=False),
        column("node_id", pa.string(), "tex:<corpus>:<statement_id>", nullable=False),
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("source", pa.string(), "latex or xml", nullable=False),
        column("env", pa.string(), "environment name as written (xml: element or kind)", nullable=False),
        column("kind", pa.string(), "resolved kind: theorem, lemma, definition, ...", nullable=False),
        column("title", pa.string(), "the optional argument or title; null when none"),
        column("label", pa.string(), "\\label as written; null when none"),
        column("full_label", pa.string(), "corpus-unique label (file-qualified where the corpus does so)"),
        column("tag", pa.string(), "tag through the tags file (Stacks 00DV); null when none"),
        column("body", pa.string(), "original LaTeX (comments and slogan removed)", nullable=False),
        column("body_normalised", pa.string(), "body with user macros expanded and labels dropped", nullable=False),
        column("proof", pa.string(), "the proof that follows, original LaTeX; null when none"),
        column("cites", pa.list_(pa.string()), "references in the proof: tag when known, else full label", nullable=False),
        column("bib_cites", pa.list_(pa.string()), "\\cite keys in statement and proof", nullable=False),
        column("section_path", pa.list_(pa.string()), "section titles, outermost first", nullable=False),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line_start", pa.int32(), "1-based line of \\begin", nullable=False),
        column("line_end", pa.int32(), "1-based line of \\end", nullable=False),
        column("slogan", pa.string(), "the statement's slogan (Stacks); null when none"),
    ],
)

FORMULAS = described(
    "One row per formula: math of the LaTeX and XML sources, and Lean statements (source lean) so a LaTeX query can find them.",
    [
        column("formula_id", pa.string(), "sha256(corpus|file|source|position)[:16]; unique", nullable=False),
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("node_id", pa.string(), "the owning statement's node id; null outside statements"),
        column("statement_id", pa.string(), "the owning LaTeX statement; null outside statements and for Lean"),
        column("source", pa.string(), "latex, xml or lean", nullable=False),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line", pa.int32(), "1-based line where the formula starts", nullable=False),
        column("position", pa.int32(), "0-based ordinal within the file", nullable=False),
        column("display", pa.string(), "inline, display or the environment name (align*)", nullable=False),
        column("latex", pa.string(), "original text between the delimiters", nullable=False),
        column("latex_normalised", pa.string(), "latex with user macros expanded", nullable=False),
        column("role", pa.string(), "statement or proof; null outside statements"),
        column("label", pa.string(), "full label of a labelled display formula (\\label inside it)"),
        column("tag", pa.string(), "its tag through the tags file"),
    ],
)

LATEX_MACROS = described(
    "One row per simple user macro of a LaTeX corpus (\\newcommand, \\def, \\DeclareMathOperator ...), each "
    "distinct definition once: what its statements were expanded with, so a query typed with the macros is too.",
    [
        column("corpus", pa.string(), "the corpus name", nullable=False),
        column("name", pa.string(), "the control sequence without its backslash (Spec)", nullable=False),
        column("nargs", pa.int32(), "number of arguments", nullable=False),
        column("default_value", pa.string(), "default of the optional first argument; null when none"),
        column("body", pa.string(), "the replacement text, #1 ... #9 for the arguments", nullable=False),
        column("documents", pa.int32(), "document groups (files joined by \\input) defining it so", nullable=False),
    ],
)
