"""Searchable nodes (Lean declarations and LaTeX statements) and their lexical documents."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from mathindex.identifiers import CREDITED, Identifier
from mathindex.informal.rules import without_context
from mathindex.latex.plain import TITLE_CHARS, plain_statement
from mathindex.lean.descriptions import SOURCE_MODULE_DOC
from mathindex.names import LEAN_PREFIX, hit_name, lean_node_id
from mathindex.schemas.common import ERRORS, error_row
from mathindex.schemas.search import NODES
from mathindex.search.prior import reference_signals
from mathindex.search.sameas import STACKS_ALIAS


def build_nodes(declarations: pa.Table | None, statements: pa.Table | None,
                dependencies: pa.Table | None = None, citations: pa.Table | None = None) -> pa.Table:
    """One row per node, sorted by node_id; a Lean name declared twice (e.g. `private` in two files)
    keeps its first occurrence by (corpus, file, line). `in_degree` and `pagerank` come from
    `dependencies`; a node's external identifiers (`citations`) join its aliases as `kind:value`. Declarations are shaped with polars (255 k in Mathlib); LaTeX statements, a few
    thousand per corpus, row by row."""
    parts = []
    if declarations is not None and declarations.num_rows:
        parts.append(_declaration_nodes(declarations))
    if statements is not None and statements.num_rows:
        parts.append(_statement_nodes(statements))
    nodes = pl.concat(parts, how="vertical") if parts else pl.from_arrow(NODES.empty_table()).drop("in_degree", "pagerank")
    nodes = nodes.unique("node_id", keep="first", maintain_order=True).sort("node_id")
    cited = identifier_aliases(citations)
    if cited:
        extra = pl.Series([cited.get(n, []) for n in nodes.get_column("node_id").to_list()], dtype=pl.List(pl.Utf8))
        nodes = nodes.with_columns(aliases=pl.concat_list(pl.col("aliases"), extra))
    degree, rank = reference_signals(nodes.get_column("name").to_list(), dependencies)
    nodes = nodes.with_columns(in_degree=pl.Series(degree, dtype=pl.Int64), pagerank=pl.Series(rank, dtype=pl.Float64))
    return nodes.to_arrow().select(NODES.names).cast(NODES)


def identifier_aliases(citations: pa.Table | None) -> dict[str, list[str]]:
    """node_id -> the aliases of its external identifiers, sorted, each once: `Identifier.alias`
    where its docstring or a curated list names it, `credited_alias` where only its file's module
    doc cites the work (the resolver ranks those after)."""
    out: dict[str, set[str]] = {}
    if citations is None or citations.num_rows == 0:
        return {}
    t = citations.select(["node_id", "via", "kind", "identifier"])
    for node, via, kind, value in zip(*(t.column(c).to_pylist() for c in t.column_names)):
        if kind and value:
            found = Identifier(kind, value)
            out.setdefault(node, set()).add(found.credited_alias if via == SOURCE_MODULE_DOC else found.alias)
    for node, aliases in out.items():  # a node that carries an identifier itself needs no credit for it
        aliases -= {a + CREDITED for a in aliases}
    return {node: sorted(aliases) for node, aliases in out.items()}


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


def names_in_several_corpora(declarations: pa.Table) -> pa.Table:
    """Error rows for the full names that more than one Lean corpus declares (a Lean node id is the
    name alone, `names.lean_node_id`, so such a name is one node): one row per declaration of a
    corpus after the first by name, whose row the node is built from (`build_nodes`)."""
    d = pl.from_arrow(declarations.select(["full_name", "corpus", "file", "line_start"]))
    shared = d.group_by("full_name").agg(pl.col("corpus").n_unique().alias("n")).filter(pl.col("n") > 1)
    if shared.is_empty():
        return ERRORS.empty_table()
    d = d.join(shared.select("full_name"), on="full_name").sort(["full_name", "corpus", "file", "line_start"])
    rows, owner = [], {}
    for name, corpus, file, line in d.iter_rows():
        first = owner.setdefault(name, (corpus, file, line))
        if corpus != first[0]:
            rows.append(error_row(corpus, file, line, "extract_lean", f"{name} is declared in corpus {first[0]} too "
                                  f"({first[1]}:{first[2]}); its node {lean_node_id(name)} is built from that one"))
    return pa.Table.from_pylist(rows, schema=ERRORS)
