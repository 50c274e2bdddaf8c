"""Embedding texts: several facets per searchable node, each with its sha256 and a stable int64 id."""

from __future__ import annotations

import hashlib
import logging

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.embed.rules import name_words, strip_header
from mathindex.schemas.embed import EMBEDDING_TEXTS
from mathindex.search.nodes import hit_name

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 4000  # far beyond the model's token limit (256 MiniLM tokens); longer texts are cut

# The facets the vector index embeds. `informal` (the rule renderings, with their glosses of the
# constants used) stays in embedding_texts, where the lexical index reads it, but is not embedded:
# it is two thirds of Mathlib's embedding tokens, and on the MathlibQR dev candidate pool
# (bench/embedder_pool.py --facets) leaving it out moved the embedding channel by +0.17 nDCG@10 and
# -0.21 R@10 with the bundled model.
# `description`: what module docs and the library's curated lists say of a declaration
# (lean/descriptions.py), about 10 k Mathlib texts.
EMBEDDED_FACETS = ("name_signature", "docstring", "description", "latex_body", "slogan")


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


class _Columns:
    """EMBEDDING_TEXTS rows accumulated column-wise (no per-row dicts); first (node_id, facet) wins."""

    def __init__(self) -> None:
        self.cols: dict[str, list] = {f.name: [] for f in EMBEDDING_TEXTS}
        self.seen: set[tuple[str, str]] = set()

    def add(self, node_id: str, name: str, facet: str, text: str) -> None:
        text = _clean(text)
        if not text or (node_id, facet) in self.seen:
            return
        self.seen.add((node_id, facet))
        truncated = len(text) > MAX_TEXT_CHARS
        if truncated:
            text = text[:MAX_TEXT_CHARS]
        for key, value in (("text_id", text_id(node_id, facet)), ("node_id", node_id), ("name", name),
                           ("facet", facet), ("text", text), ("sha256", text_sha256(text)), ("truncated", truncated)):
            self.cols[key].append(value)

    def table(self) -> pa.Table:
        t = pa.table(self.cols, schema=EMBEDDING_TEXTS)
        return t.take(pc.sort_indices(t, sort_keys=[("node_id", "ascending"), ("facet", "ascending")]))


def embedded_texts(texts: pa.Table) -> pa.Table:
    """The rows of an EMBEDDING_TEXTS table whose facet the vector index embeds (EMBEDDED_FACETS)."""
    return texts.filter(pc.is_in(texts["facet"], value_set=pa.array(EMBEDDED_FACETS, pa.string())))


def lean_facets(full_name: str, kind: str, signature: str, type_: str, docstring: str, informal: str,
                description: str = "") -> list[tuple[str, str]]:
    """(facet, text) pairs of a Lean declaration: name_signature (Lean header + name words), informal,
    docstring, description (module docs and curated lists)."""
    sig = strip_header(_clean(signature), full_name) or (f": {_clean(type_)}" if _clean(type_) else "")
    name_sig = " ".join(p for p in (kind, full_name, sig, f"-- {name_words(full_name)}") if p)
    return [("name_signature", name_sig), ("informal", informal), ("docstring", docstring), ("description", description)]


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
    Rows are unique by (node_id, facet) (first declaration by decl_id wins) and sorted by them.
    """
    from mathindex.lean.descriptions import description_texts

    out = _Columns()
    informal = {}
    if informalisations is not None:
        informal = dict(zip(_col(informalisations, "decl_id"), _col(informalisations, "text")))
    described = description_texts(descriptions)
    if declarations is not None and declarations.num_rows:
        cols = [_col(declarations, c) for c in ("decl_id", "full_name", "kind", "signature", "type", "docstring")]
        for i in sorted(range(declarations.num_rows), key=lambda i: (cols[1][i] or "", cols[0][i] or "")):
            decl_id, full_name, kind, sig, typ, doc = (c[i] for c in cols)
            if not full_name:
                continue
            node_id = f"lean:{full_name}"
            for facet, text in lean_facets(full_name, _clean(kind), _clean(sig), _clean(typ), _clean(doc),
                                           informal.get(decl_id) or "", described.get(decl_id) or ""):
                out.add(node_id, full_name, facet, text)
    if statements is not None and statements.num_rows:
        label_col = "full_label" if "full_label" in statements.column_names else "label"
        cols = [_col(statements, c) for c in ("node_id", "statement_id", "kind", "title", label_col, "tag", "body", "body_normalised", "slogan")]
        for node_id, sid, kind, title, label, tag, body, body_norm, slogan in zip(*cols):
            if not node_id:
                continue
            name = hit_name(tag, label, sid or node_id)  # the same name as the node's (search.nodes)
            for facet, text in latex_facets(kind, title, body_norm or body, slogan):
                out.add(node_id, name, facet, text)
    table = out.table()
    truncated = sum(table.column("truncated").to_pylist())
    if truncated:
        log.warning("%d embedding texts were longer than %d characters and were cut", truncated, MAX_TEXT_CHARS)
    return table
