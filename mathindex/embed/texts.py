"""Embedding texts: several facets per searchable node, each with its sha256 and a stable int64 id."""

from __future__ import annotations

import hashlib
import logging

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from mathindex.informal.rules import name_words, strip_header
from mathindex.lean.descriptions import description_texts
from mathindex.schemas.embed import EMBEDDING_TEXTS
from mathindex.textfold import folded
from mathindex.names import LEAN_PREFIX, hit_name

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 4000  # far beyond the model's token limit (256 MiniLM tokens); longer texts are cut

# The facets the vector index embeds. `informal` (the rule renderings, with their glosses of the
# constants used) stays in embedding_texts, where the lexical index reads it, but is not embedded:
# it is two thirds of Mathlib's embedding tokens, and on the MathlibQR dev candidate pool
# (bench/embedder_pool.py --facets) leaving it out moved the embedding channel by +0.17 nDCG@10 and
# -0.21 R@10 with the bundled model.
# `description`: what module docs and the library's curated lists say of a declaration
# (lean/descriptions.py), about 10 k Mathlib texts.
# `members`: a structure's or class's fields, or an inductive type's constructors, with their
# statements, in source order (`member_texts`): what a query describing a definition by its axioms
# ("F(id) = id and F(g ∘ f) = F g ∘ F f" for `CategoryTheory.Functor`) says, which no one member states.
EMBEDDED_FACETS = ("name_signature", "docstring", "description", "members", "latex_body", "slogan")


def text_sha256(text: str) -> str:
    """sha256 hex of a text's UTF-8 bytes: the embedding cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_id(node_id: str, facet: str) -> int:
    """The FAISS id of (node, facet): signed int64 of the first 8 bytes of sha256(node_id NUL facet)."""
    digest = hashlib.sha256(f"{node_id}\0{facet}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _clean(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value if v)
    return " ".join(str(value).split())


def _col(table: pa.Table | None, name: str) -> list:
    if table is None or name not in table.column_names:
        return [None] * (0 if table is None else table.num_rows)
    return table.column(name).to_pylist()


def _clean_expr(col: str) -> pl.Expr:
    """`_clean` as a polars expression (`textfold.folded`)."""
    return folded(pl.col(col))


def embedded_texts(texts: pa.Table) -> pa.Table:
    """The rows of an EMBEDDING_TEXTS table whose facet the vector index embeds (EMBEDDED_FACETS)."""
    return texts.filter(pc.is_in(texts["facet"], value_set=pa.array(EMBEDDED_FACETS, pa.string())))


def latex_facets(kind: str, title: str, body: str, slogan: str) -> list[tuple[str, str]]:
    """(facet, text) pairs of a LaTeX statement: latex_body (kind and title prefixed) and slogan."""
    head = " ".join(p for p in (_clean(kind).capitalize(), f"({_clean(title)})" if _clean(title) else "") if p)
    body = _clean(body)
    return [("latex_body", f"{head}. {body}" if head and body else body), ("slogan", slogan)]


def embedding_texts(
    declarations: pa.Table | None, informalisations: pa.Table | None, statements: pa.Table | None,
    descriptions: pa.Table | None = None,
) -> pa.Table:
    """EMBEDDING_TEXTS for Lean declarations (`lean:<full_name>`) and LaTeX statements (their node_id).

    Empty facets are left out; texts longer than MAX_TEXT_CHARS are cut and flagged `truncated`.
    Rows are unique by (node_id, facet) (first declaration by (full_name, decl_id) wins) and sorted by
    them. Lean rows are shaped with polars (Mathlib has 255 k declarations); the name_signature
    facet's header rules (`rules.strip_header`, `rules.name_words`) run once per declaration.
    """
    parts = []
    if declarations is not None and declarations.num_rows:
        parts.append(_lean_rows(declarations, informalisations, descriptions))
    if statements is not None and statements.num_rows:
        parts.append(_latex_rows(statements))
    if not parts:
        return EMBEDDING_TEXTS.empty_table()
    rows = (pl.concat(parts, how="vertical")
            .with_columns(text=_clean_expr("text"))
            .filter(pl.col("text") != "")
            .sort("rank", maintain_order=True)
            .unique(["node_id", "facet"], keep="first", maintain_order=True)
            .sort(["node_id", "facet"])
            .with_columns(truncated=pl.col("text").str.len_chars() > MAX_TEXT_CHARS,
                          text=pl.col("text").str.slice(0, MAX_TEXT_CHARS)))
    node_ids, facets = rows.get_column("node_id").to_list(), rows.get_column("facet").to_list()
    table = rows.with_columns(
        text_id=pl.Series([text_id(n, f) for n, f in zip(node_ids, facets)], dtype=pl.Int64),
        sha256=pl.Series([text_sha256(t) for t in rows.get_column("text").to_list()], dtype=pl.String),
    ).to_arrow().select(EMBEDDING_TEXTS.names).cast(EMBEDDING_TEXTS)
    truncated = int(pc.sum(table.column("truncated")).as_py() or 0)
    if truncated:
        log.warning("%d embedding texts were longer than %d characters and were cut", truncated, MAX_TEXT_CHARS)
    return table


LEAN_FACETS = ("name_signature", "informal", "docstring", "description", "members")  # a declaration's facets, in order
MEMBERS_OF = {"field": ("structure", "class"), "constructor": ("inductive", "coinductive")}  # member kind -> parent kinds


def _lean_rows(declarations: pa.Table, informalisations: pa.Table | None, descriptions: pa.Table | None) -> pl.DataFrame:
    """(node_id, name, facet, text, rank) per Lean declaration and facet, `rank` the iteration order
    of LEAN_FACETS over declarations sorted by (full_name, decl_id): the first of a node wins."""
    cols = ["decl_id", "full_name", "kind", "signature", "type", "docstring"]
    d = (pl.from_arrow(declarations.select(cols))
         .sort([pl.col("full_name").fill_null(""), pl.col("decl_id").fill_null("")], maintain_order=True)
         .filter(pl.col("full_name").fill_null("") != "")
         .with_columns(kind=_clean_expr("kind"), signature=_clean_expr("signature"), type=_clean_expr("type"),
                       docstring=_clean_expr("docstring")))
    if informalisations is not None and informalisations.num_rows:  # a dict of decl_id -> text: the last row wins
        informal = pl.from_arrow(informalisations.select(["decl_id", "text"])).unique("decl_id", keep="last", maintain_order=True)
        d = d.join(informal.rename({"text": "informal"}), on="decl_id", how="left", maintain_order="left")
    else:
        d = d.with_columns(informal=pl.lit(None, pl.String))
    described = description_texts(descriptions)
    d = d.with_columns(description=pl.Series([described.get(i) for i in d.get_column("decl_id").to_list()], dtype=pl.String))
    d = d.join(member_texts(declarations), on="full_name", how="left", maintain_order="left")
    name_sig = [_name_signature(*r) for r in zip(*(d.get_column(c).to_list() for c in ("full_name", "kind", "signature", "type")))]
    d = d.with_columns(name_signature=pl.Series(name_sig, dtype=pl.String), node_id=pl.lit(LEAN_PREFIX) + pl.col("full_name"),
                       pos=pl.int_range(pl.len(), dtype=pl.Int64))
    return pl.concat([
        d.select("node_id", name="full_name", facet=pl.lit(facet), text=pl.col(facet).fill_null(""),
                 rank=pl.col("pos") * len(LEAN_FACETS) + k)
        for k, facet in enumerate(LEAN_FACETS)
    ])


def member_texts(declarations: pa.Table) -> pl.DataFrame:
    """(full_name, members) of each structure and class with fields, and each inductive type with
    constructors: `kind name where` and its members as written, in source order (`field signature`,
    `| constructor signature`), joined by `;`. Parent projections (`toParent`) are no members: their
    signature is the parent's."""
    # a table with fewer columns than DECLARATIONS (tests): members by kind, in name order
    defaults = {"origin": pl.col("kind"), "file": pl.lit(None, pl.String), "line_start": pl.lit(None, pl.Int64)}
    have = declarations.column_names
    d = pl.from_arrow(declarations.select([c for c in ("full_name", "kind", "signature", *defaults) if c in have]))
    d = d.with_columns(**{c: default for c, default in defaults.items() if c not in have})
    parents = d.select("full_name", parent_kind="kind").unique("full_name", keep="first", maintain_order=True)
    belongs = pl.any_horizontal([(pl.col("kind") == kind) & pl.col("parent_kind").is_in(list(of))
                                 for kind, of in MEMBERS_OF.items()])
    members = (d.filter(pl.col("origin").is_in(list(MEMBERS_OF)) & (pl.col("kind") == pl.col("origin"))
                        & (_clean_expr("signature") != ""))
               .with_columns(parent=pl.col("full_name").str.replace(r"\.[^.]+$", ""),
                             short=pl.col("full_name").str.extract(r"([^.]+)$"))
               .join(parents, left_on="parent", right_on="full_name", how="inner")
               .filter(belongs)
               .sort(["parent", "file", "line_start", "full_name"], nulls_last=True)
               .with_columns(member=pl.when(pl.col("kind") == "field")
                             .then(pl.col("short") + " " + _clean_expr("signature"))
                             .otherwise(pl.lit("| ") + _clean_expr("signature"))))
    return (members.group_by("parent", maintain_order=True)
            .agg(pl.col("parent_kind").first(), pl.col("member").str.join("; "))
            .select(full_name="parent", members=pl.col("parent_kind") + " " + pl.col("parent") + " where "
                    + pl.col("member")))


def _name_signature(full_name: str, kind: str, signature: str, type_: str) -> str:
    """The name_signature facet (Lean header + name words) from already cleaned fields."""
    sig = strip_header(signature, full_name) or (f": {type_}" if type_ else "")
    return " ".join(p for p in (kind, full_name, sig, f"-- {name_words(full_name)}") if p)


def _latex_rows(statements: pa.Table) -> pl.DataFrame:
    """(node_id, name, facet, text, rank) per LaTeX statement and facet, row by row (a few thousand
    statements per corpus); ranks after every Lean row's, in table order."""
    label_col = "full_label" if "full_label" in statements.column_names else "label"
    cols = [_col(statements, c) for c in ("node_id", "statement_id", "kind", "title", label_col, "tag", "body", "body_normalised", "slogan")]
    out: dict[str, list] = {"node_id": [], "name": [], "facet": [], "text": [], "rank": []}
    for node_id, sid, kind, title, label, tag, body, body_norm, slogan in zip(*cols):
        if not node_id:
            continue
        name = hit_name(tag, label, sid or node_id)  # the same name as the node's (search.nodes)
        for facet, text in latex_facets(kind, title, body_norm or body, slogan):
            for key, value in (("node_id", node_id), ("name", name), ("facet", facet), ("text", _clean(text)),
                               ("rank", 2**62 + len(out["rank"]))):
                out[key].append(value)
    return pl.DataFrame(out, schema={"node_id": pl.String, "name": pl.String, "facet": pl.String, "text": pl.String,
                                     "rank": pl.Int64})
