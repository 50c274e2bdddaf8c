"""Self-describing schemas: fields and schemas that carry their one-line description (`comment`
metadata), which travels with the Parquet files into `search.duckdb`'s comments."""

from __future__ import annotations

import pyarrow as pa

COMMENT = "comment"


def column(name: str, type_: pa.DataType, comment: str, nullable: bool = True) -> pa.Field:
    """A pyarrow field carrying its one-line description (`comment` metadata)."""
    return pa.field(name, type_, nullable=nullable, metadata={COMMENT: comment})


def described(comment: str, fields: list[pa.Field]) -> pa.Schema:
    """A pyarrow schema carrying its table's one-line description (`comment` metadata)."""
    return pa.schema(fields, metadata={COMMENT: comment})


def comment_of(item: pa.Field | pa.Schema) -> str | None:
    """The description `column` or `described` put on a field or schema, or None."""
    raw = (item.metadata or {}).get(COMMENT.encode())
    return raw.decode() if raw is not None else None
