"""Schemas of the formal channel (mathindex.formal): one row per Lean declaration, and the key
table of the `formal/` postings directory."""

from __future__ import annotations

import pyarrow as pa

from mathindex.schemas.columns import column, described

# `formal_statements`: row `doc` is posting id `doc`. Trees are the normal form of
# mathindex.formal.normal as compact JSON (the FORMULA_TREES encoding, plus ["#b", i] for a bound
# variable); a declaration whose type does not parse has a null conclusion and only its constants.
FORMAL_STATEMENTS = described(
    "One row per Lean declaration as the formal channel sees it: normalised conclusion and hypotheses, constants.",
    [
        column("doc", pa.int32(), "posting id of the formal index", nullable=False),
        column("name", pa.string(), "the declaration's full name", nullable=False),
        column("kind", pa.string(), "declaration kind", nullable=False),
        column("module", pa.string(), "Lean module name", nullable=False),
        column("signature", pa.string(), "as declared (binders and type)", nullable=False),
        column("conclusion_head", pa.string(), "head symbol of the conclusion; null when the type does not parse"),
        column("hypothesis_heads", pa.list_(pa.string()), "head symbols of the hypotheses", nullable=False),
        column("constants", pa.list_(pa.string()), "full names the statement mentions", nullable=False),
        column("size", pa.int32(), "nodes in conclusion and hypotheses (specificity)", nullable=False),
        column("conclusion", pa.string(), "normal-form tree of the conclusion, compact JSON; null when it does not parse"),
        column("hypotheses", pa.string(), "JSON list of the hypotheses' trees", nullable=False),
    ],
)

# formal/keys.parquet: key -> postings[start : start + count] of formal/postings.npy (sorted docs)
FORMAL_KEYS = pa.schema(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("start", pa.int64(), nullable=False),
        pa.field("count", pa.int32(), nullable=False),
    ]
)
# formal/vocabulary.parquet: every constant name queries may use
FORMAL_VOCABULARY = pa.schema([pa.field("name", pa.string(), nullable=False)])
# formal/notations.parquet: a constant leaf one notation alone prints -> the declaration it stands for
# (formal.notation.NotationMap.context_free), applied to query patterns as to statements
FORMAL_NOTATIONS = pa.schema([pa.field("leaf", pa.string(), nullable=False), pa.field("target", pa.string(), nullable=False)])
