"""Schemas of the formal channel (mathindex.formal): one row per Lean declaration, and the key
table of the `formal/` postings directory."""

from __future__ import annotations

import pyarrow as pa

# `formal_statements`: row `doc` is posting id `doc`. Trees are the normal form of
# mathindex.formal.normal as compact JSON (the FORMULA_TREES encoding, plus ["#b", i] for a bound
# variable); a declaration whose type does not parse has a null conclusion and only its constants.
FORMAL_STATEMENTS = pa.schema(
    [
        pa.field("doc", pa.int32(), nullable=False),
        pa.field("name", pa.string(), nullable=False),  # the declaration's full name
        pa.field("kind", pa.string(), nullable=False),
        pa.field("module", pa.string(), nullable=False),
        pa.field("signature", pa.string(), nullable=False),  # as declared (binders and type)
        pa.field("conclusion_head", pa.string()),  # head symbol of the conclusion
        pa.field("hypothesis_heads", pa.list_(pa.string()), nullable=False),
        pa.field("constants", pa.list_(pa.string()), nullable=False),  # full names the statement mentions
        pa.field("size", pa.int32(), nullable=False),  # nodes in conclusion and hypotheses (specificity)
        pa.field("conclusion", pa.string()),
        pa.field("hypotheses", pa.string(), nullable=False),  # JSON list of trees
    ]
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
