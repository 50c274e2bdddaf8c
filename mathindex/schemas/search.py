"""The search tables: `nodes` (one row per searchable node, a Lean declaration or a LaTeX statement),
`latex_symbols` and `same_as` (nodes that state one fact)."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

NODES = described(
    "One row per searchable node: a Lean declaration (lean:<full_name>) or a LaTeX statement (tex:<corpus>:<statement_id>).",
    [
        column("node_id", pa.string(), "lean:<full_name> or tex:<corpus>:<statement_id>", nullable=False),
        column("name", pa.string(), "the hit name benchmarks compare with gold (Lean full name; LaTeX tag, label or id)", nullable=False),
        column("kind", pa.string(), "declaration kind or statement kind (theorem, lemma, definition, ...)", nullable=False),
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("title", pa.string(), "signature for Lean, title or first line for LaTeX"),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line", pa.int32(), "1-based first line; null when unknown"),
        column("aliases", pa.list_(pa.string()), "other names that resolve to it: label, tag, short names, external identifiers (doi:10.1007/..., wikidata:Q11518)", nullable=False),
        column("in_degree", pa.int32(), "declarations that reference it (search/prior.py)", nullable=False),
        column("pagerank", pa.float64(), "PageRank over the same references", nullable=False),
    ],
)

LATEX_SYMBOLS = described(
    "LaTeX command -> Lean name word, mined from the corpus's own docstrings and module docs (search/symbols.py).",
    [
        column("command", pa.string(), "a LaTeX control sequence as written, e.g. \\binom or \\|", nullable=False),
        column("word", pa.string(), "a lowercase word of a Lean name (choose, totient, norm)", nullable=False),
        column("pair_docs", pa.int64(), "documents with both the command and the word", nullable=False),
        column("command_docs", pa.int64(), "documents with the command", nullable=False),
        column("word_docs", pa.int64(), "documents with the word", nullable=False),
        column("pmi", pa.float64(), "log(N * pair_docs / (command_docs * word_docs)), N the documents with any command", nullable=False),
    ],
)

SAME_AS = described(
    "One row per pair of nodes that state one fact: a Lean declaration whose attribute cites a tag (`@[stacks 0BQX]`) "
    "and the LaTeX statement of that tag in this release (search/sameas.py); search folds a pair that both answer into one hit.",
    [
        column("node_id", pa.string(), "the citing Lean declaration's node id (lean:<full_name>)", nullable=False),
        column("name", pa.string(), "its hit name (the Lean full name)", nullable=False),
        column("target_node_id", pa.string(), "the cited statement's node id (tex:<corpus>:<statement_id>)", nullable=False),
        column("target", pa.string(), "its hit name (the tag)", nullable=False),
        column("via", pa.string(), "the attribute that says so: stacks (kerodon once a release has a Kerodon corpus)", nullable=False),
        column("tag", pa.string(), "the tag as the attribute writes it", nullable=False),
        column("file", pa.string(), "the declaration's file, relative to its corpus root", nullable=False),
        column("line", pa.int32(), "1-based first line of the declaration (where the attribute is)", nullable=False),
    ],
)
