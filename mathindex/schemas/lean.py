"""Schemas of the Lean extraction tables: `declarations`, `dependencies`, `descriptions` and `citations`."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

DECLARATIONS = described(
    "One row per Lean declaration found in the Lean corpora (including generated names such as instances and simps lemmas).",
    [
        column("decl_id", pa.string(), "sha256(corpus, module, full_name, line_start)[:16]; unique", nullable=False),
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("full_name", pa.string(), "the Lean name a user can #check", nullable=False),
        column("kind", pa.string(), "theorem, lemma, def, instance, structure, field, constructor, ...", nullable=False),
        column("signature", pa.string(), "binders and type, up to :=, where or |", nullable=False),
        column("type", pa.string(), "what follows the top-level colon; null when there is none"),
        column("docstring", pa.string(), "the /-- -/ doc comment; null when there is none"),
        column("attributes", pa.list_(pa.string()), "attributes as written (simp, ext, to_additive, ...)", nullable=False),
        column("module", pa.string(), "Lean module name (Mathlib.Algebra.Group.Basic)", nullable=False),
        column("file", pa.string(), "path relative to the corpus root, / separators", nullable=False),
        column("line_start", pa.int32(), "1-based first line of the source block", nullable=False),
        column("line_end", pa.int32(), "1-based last line of the source block", nullable=False),
        column("is_private", pa.bool_(), "declared private", nullable=False),
        column("is_protected", pa.bool_(), "declared protected", nullable=False),
        # source, instance_name (generated instance name), deriving, to_additive, to_dual, reassoc,
        # simps, field, parent_projection, constructor, alias, irreducible_def (the `_def` lemma)
        column("origin", pa.string(), "how the name arose: source, instance_name, to_additive, simps, field, ...", nullable=False),
        column("statement_group", pa.string(), "id of the source block the declaration came from", nullable=False),
        column("variables", pa.string(), "`variable` binders in scope that the statement uses", nullable=False),
    ],
)

# values of `dependencies.role`
ROLE_STATEMENT = "statement"
ROLE_PROOF = "proof"

DEPENDENCIES = described(
    "One row per constant a declaration names; (corpus, full_name, target) is unique.",
    [
        column("corpus", pa.string(), "corpus name", nullable=False),
        column("full_name", pa.string(), "the declaration whose statement or proof names target", nullable=False),
        column("target", pa.string(), "a constant as written (or resolved, see resolved)", nullable=False),
        column("resolved", pa.bool_(), "true when target is a full name found in the corpus", nullable=False),
        # statement: named by the signature; proof: named only by the proof or definition body (a
        # target both name is one statement row)
        column("role", pa.string(), "statement (named by the signature) or proof (only by the proof or body)", nullable=False),
    ],
)

DESCRIPTIONS = described(
    "One row per English description of a declaration written outside its docstring: a module doc's "
    "bullet (\"Main statements\") or an entry of the library's curated lists (docs/100.yaml, undergrad.yaml, ...).",
    [
        column("decl_id", pa.string(), "the declaration described (declarations.decl_id)", nullable=False),
        column("full_name", pa.string(), "its full name", nullable=False),
        column("source", pa.string(), "module_doc, or the curated list's path (docs/100.yaml, ...)", nullable=False),
        column("text", pa.string(), "the description (a module doc's is prefixed with its title)", nullable=False),
        column("file", pa.string(), "the file the description is in, relative to the corpus root", nullable=False),
        column("line", pa.int32(), "1-based line of a module doc bullet; null for the curated lists"),
    ],
)

CITATIONS = described(
    "One row per (declaration, citation, external identifier): a docstring or module doc citing a work of the corpus's "
    "bibliography ([serre1973]) or writing an identifier (an arXiv or DOI URL), and a curated list's entry (a "
    "Wikidata QID of docs/1000.yaml, a number of docs/100.yaml) naming the declaration (lean/citations.py).",
    [
        column("node_id", pa.string(), "the citing declaration's node (lean:<full_name>)", nullable=False),
        column("full_name", pa.string(), "its full name", nullable=False),
        column("via", pa.string(), "docstring, module_doc (credited to what the module doc describes) or the list's path",
               nullable=False),
        column("key", pa.string(), "the bibliography key cited; null for a list entry or an identifier written out"),
        column("kind", pa.string(), "wikidata, freek, oeis, arxiv, doi, mr, zbl or zbmath (mathindex/identifiers.py); "
               "null for a cited work without an identifier"),
        column("identifier", pa.string(), "the identifier in normal form (Q11518, 2106.01234, 10.1007/..., MR0344216)"),
        column("file", pa.string(), "where the citation is written, relative to the corpus root", nullable=False),
        column("line", pa.int32(), "its 1-based line (a docstring's: its declaration's line); null when unknown"),
    ],
)

NOTATIONS = described(
    "One row per notation command of a Lean corpus (notation, notation3, prefix, infix, infixl, infixr, "
    "postfix; global, scoped or local): the symbols it prints and the constant behind them (lean/notations.py).",
    [
        column("corpus", pa.string(), "the corpus name", nullable=False),
        column("file", pa.string(), "the file, relative to the corpus root", nullable=False),
        column("line", pa.int32(), "1-based line of the command", nullable=False),
        column("kind", pa.string(), "notation, notation3, prefix, infix, infixl, infixr or postfix", nullable=False),
        column("scope", pa.string(), "global, scoped or local", nullable=False),
        column("atoms", pa.list_(pa.string()), "the quoted atoms, stripped, in order (`‖`, `‖`)", nullable=False),
        column("target", pa.string(), "the head constant of the right-hand side as written (Nat.totient); null if none"),
    ],
)
