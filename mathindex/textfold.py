"""Python's whitespace folding, `" ".join(s.split())`, as a polars expression: the one place that
says what counts as whitespace when a table transform folds text."""

from __future__ import annotations

import polars as pl

# what str.split() splits on: Unicode White_Space (Rust regex's \s) plus U+001C..U+001F, which
# str.isspace() counts too
PY_WHITESPACE = r"[\s\x1c-\x1f]+"


def folded(expr: pl.Expr) -> pl.Expr:
    """Runs of whitespace as one space, ends trimmed, null as ""."""
    return expr.fill_null("").str.replace_all(PY_WHITESPACE, " ").str.strip_chars(" ")
