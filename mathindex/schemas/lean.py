"""Schemas of the Lean extraction tables: `declarations` and `dependencies`."""

from __future__ import annotations

import pyarrow as pa

DECLARATIONS = pa.schema(
    [
        pa.field("decl_id", pa.string(), nullable=False),  # sha256(corpus, module, full_name, line_start)[:16]
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("full_name", pa.string(), nullable=False),  # the Lean name a user can #check
        pa.field("kind", pa.string(), nullable=False),  # theorem, lemma, def, instance, field, constructor, ...
        pa.field("signature", pa.string(), nullable=False),  # binders and type, up to :=, where or |
        pa.field("type", pa.string()),  # after the top-level `:`; null when there is none
        pa.field("docstring", pa.string()),
        pa.field("attributes", pa.list_(pa.string()), nullable=False),
        pa.field("module", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),  # relative to the corpus root, `/` separators
        pa.field("line_start", pa.int32(), nullable=False),  # 1-based, first line of the source block
        pa.field("line_end", pa.int32(), nullable=False),
        pa.field("is_private", pa.bool_(), nullable=False),
        pa.field("is_protected", pa.bool_(), nullable=False),
        # source, instance_name (generated instance name), deriving, to_additive, to_dual, reassoc,
        # simps, field, parent_projection, constructor, alias, irreducible_def (the `_def` lemma)
        pa.field("origin", pa.string(), nullable=False),
        pa.field("statement_group", pa.string(), nullable=False),  # id of the source block it came from
        pa.field("variables", pa.string(), nullable=False),  # `variable` binders in scope the statement uses
    ]
)

# values of `dependencies.role`
ROLE_STATEMENT = "statement"
ROLE_PROOF = "proof"

DEPENDENCIES = pa.schema(
    [
        pa.field("corpus", pa.string(), nullable=False),
        pa.field("full_name", pa.string(), nullable=False),  # the declaration whose statement or proof names target
        pa.field("target", pa.string(), nullable=False),  # a constant as written (or resolved, see resolved)
        pa.field("resolved", pa.bool_(), nullable=False),  # true when target is a full name found in the corpus
        # statement: named by the signature; proof: named only by the proof or definition body (a
        # target both name is one statement row); (corpus, full_name, target) is unique
        pa.field("role", pa.string(), nullable=False),
    ]
)
