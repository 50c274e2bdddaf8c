"""Schemas of the LaTeX/XML extraction stage: `latex_statements` and `formulas`."""

from __future__ import annotations

import pyarrow as pa

LATEX_STATEMENTS = pa.schema(
    [
        pa.field("statement_id", pa.string(), nullable=False),  # sha256(corpus|file|line_start|env)[:16]
        pa.field("node_id", pa.string(), nullable=False),  # tex:<corpus>:<statement_id>
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),  # latex | xml
        pa.field("env", pa.string(), nullable=False),  # environment name as written (xml: element/kind)
        pa.field("kind", pa.string(), nullable=False),  # resolved: theorem, lemma, definition, ...
        pa.field("title", pa.string()),  # optional argument / title
        pa.field("label", pa.string()),  # \label as written
        pa.field("full_label", pa.string()),  # corpus-unique label (file-qualified where the corpus does so)
        pa.field("tag", pa.string()),  # through the tags file
        pa.field("body", pa.string(), nullable=False),  # original LaTeX (comments and slogan removed)
        pa.field("body_normalised", pa.string(), nullable=False),  # user macros expanded, labels dropped
        pa.field("proof", pa.string()),  # the proof that follows, original LaTeX
        pa.field("cites", pa.list_(pa.string()), nullable=False),  # refs in the proof: tag when known, else full label
        pa.field("bib_cites", pa.list_(pa.string()), nullable=False),  # \cite keys in statement and proof
        pa.field("section_path", pa.list_(pa.string()), nullable=False),  # titles, outermost first
        pa.field("file", pa.string(), nullable=False),  # relative to the corpus root, '/' separators
        pa.field("line_start", pa.int32(), nullable=False),  # 1-based line of \begin
        pa.field("line_end", pa.int32(), nullable=False),  # 1-based line of \end
        pa.field("slogan", pa.string()),
    ]
)

FORMULAS = pa.schema(
    [
        pa.field("formula_id", pa.string(), nullable=False),  # sha256(corpus|file|source|position)[:16]
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("node_id", pa.string()),  # owning statement's node id, null outside statements
        pa.field("statement_id", pa.string()),
        pa.field("source", pa.string(), nullable=False),  # latex | xml | lean (plain string)
        pa.field("file", pa.string(), nullable=False),
        pa.field("line", pa.int32(), nullable=False),  # 1-based line where the formula starts
        pa.field("position", pa.int32(), nullable=False),  # 0-based ordinal within the file
        pa.field("display", pa.string(), nullable=False),  # inline | display | environment name (align*)
        pa.field("latex", pa.string(), nullable=False),  # original text between the delimiters
        pa.field("latex_normalised", pa.string(), nullable=False),  # user macros expanded
        pa.field("role", pa.string()),  # statement | proof; null outside statements
        pa.field("label", pa.string()),  # full label of a labelled display formula (\label inside it)
        pa.field("tag", pa.string()),  # its tag through the tags file
    ]
)
