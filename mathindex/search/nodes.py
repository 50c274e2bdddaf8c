"""Searchable nodes (Lean declarations and LaTeX statements) and their lexical documents."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from mathindex.informal.rules import without_context
from mathindex.latex.plain import TITLE_CHARS, plain_statement
from mathindex.names import LEAN_PREFIX, hit_name
from mathindex.schemas.search import NODES
from mathindex.search.prior import reference_signals
from mathindex.search.sameas import STACKS_ALIAS


def build_nodes(declarations: pa.Table | None, statements: pa.Table | None,
                dependencies: pa.Table | None = None) -> pa.Table:
    """One row per node, sorted by node_id; a Lean name declared twice (e.g. `private` in two files)
    keeps its first occurrence by (corpus, file, line). `in_degree` and `pagerank` come from
    `dependencies`. Declarations are shaped with polars (255 k in Mathlib); LaTeX statements, a few
    thousand per corpus, row by row."""
    parts = []
    if declarations is not None and declarations.num_rows:
        parts.append(_declaration_nodes(declarations))
    if statements is not None and statements.num_rows:
        parts.append(_statement_nodes(statements))
    nodes = pl.concat(parts, how="vertical") if parts else pl.from_arrow(NODES.empty_table()).drop("in_degree", "pagerank")
    nodes = nodes.unique("node_id", keep="first", maintain_order=True).sort("node_id")
    degree, rank = reference_signals(nodes.get_column("name").to_list(), dependencies)
    nodes = nodes.with_columns(in_degree=pl.Series(degree, dtype=pl.Int64), pagerank=pl.Series(rank, dtype=pl.Float64))
    return nodes.to_arrow().select(NODES.names).cast(NODES)


def _declaration_nodes(declarations: pa.Table) -> pl.DataFrame:
    cols = ["full_name", "kind", "corpus", "signature", "file", "line_start", "attributes"]
    decls = pl.from_arrow(declarations.select(cols)).sort(["corpus", "file", "line_start"], nulls_last=True, maintain_order=True)
    return decls.select(
        node_id=pl.lit(LEAN_PREFIX) + pl.col("full_name"),
        name=pl.col("full_name"),
        kind=pl.col("kind"),
        corpus=pl.col("corpus"),
        title=pl.col("signature").fill_null("").str.slice(0, 300),
        file=pl.col("file"),
        line=pl.col("line_start"),
        aliases=pl.col("attributes").fill_null([]).list.eval(
            pl.element().str.extract(STACKS_ALIAS, 1)).list.drop_nulls(),
    )


def _statement_nodes(statements: pa.Table) -> pl.DataFrame:
    cols = ["node_id", "statement_id", "kind", "corpus", "title", "label", "full_label", "tag", "file", "line_start", "body"]
    cols += ["body_normalised"] if "body_normalised" in statements.column_names else []
    rows = [{
        "node_id": s["node_id"],
        "name": hit_name(s["tag"], s["full_label"] or s["label"], s["statement_id"]),
        "kind": s["kind"],
        "corpus": s["corpus"],
        "title": statement_title(s["title"], s.get("body_normalised") or s["body"]),
        "file": s["file"],
        "line": s["line_start"],
        "aliases": list(dict.fromkeys(a for a in (s["label"], s["full_label"], s["tag"]) if a)),
    } for s in statements.select(cols).to_pylist()]
    schema = pa.schema([f for f in NODES if f.name not in ("in_degree", "pagerank")])
    return pl.from_arrow(pa.Table.from_pylist(rows, schema=schema))


def statement_title(title: str | None, body: str | None) -> str:
    """A LaTeX statement's title as reading text (latex/plain.py): its own title, else its body's
    opening (user macros expanded where the body is `body_normalised`), never a \\label."""
    return plain_statement(title or "", TITLE_CHARS) or plain_statement(body or "", TITLE_CHARS)


def node_documents(texts: pa.Table) -> tuple[list[str], list[str]]:
    """(names, documents): every text of a node joined, one document per node name; an informal
    rendering comes without its glosses of the constants it uses (those are other nodes' words)."""
    docs: dict[str, list[str]] = {}
    t = texts.select(["name", "facet", "text"]).sort_by([("name", "ascending"), ("facet", "ascending")])
    for name, facet, text in zip(*(t.column(c).to_pylist() for c in ("name", "facet", "text"))):
        docs.setdefault(name, []).append(without_context(text) if facet == "informal" else text)
    names = sorted(docs)
    return names, ["\n".join(docs[n]) for n in names]
