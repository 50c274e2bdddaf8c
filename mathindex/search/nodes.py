"""Searchable nodes (Lean declarations and LaTeX statements) and their lexical documents."""

from __future__ import annotations

import re

import pyarrow as pa

from mathindex.schemas.common import table
from mathindex.schemas.search import NODES
from mathindex.search.prior import reference_signals

_STACKS_ATTR = re.compile(r"^stacks\s+([0-9A-Z]{4})\b")


def lean_node_id(full_name: str) -> str:
    return f"lean:{full_name}"


def hit_name(tag: str | None, label: str | None, statement_id: str) -> str:
    """A LaTeX statement's hit name: its tag, else its corpus-unique label, else its statement id."""
    return tag or label or statement_id


def build_nodes(declarations: pa.Table | None, statements: pa.Table | None,
                dependencies: pa.Table | None = None) -> pa.Table:
    """One row per node; a Lean name declared twice (e.g. `private` in two files) keeps its first
    occurrence by (corpus, file, line). `in_degree` and `pagerank` come from `dependencies`."""
    rows: dict[str, dict] = {}
    if declarations is not None and declarations.num_rows:
        cols = ["full_name", "kind", "corpus", "signature", "file", "line_start", "attributes"]
        decls = declarations.select(cols).sort_by([("corpus", "ascending"), ("file", "ascending"), ("line_start", "ascending")])
        for d in decls.to_pylist():
            nid = lean_node_id(d["full_name"])
            if nid in rows:
                continue
            tags = [m.group(1) for a in d["attributes"] or [] if (m := _STACKS_ATTR.match(a))]
            rows[nid] = {
                "node_id": nid,
                "name": d["full_name"],
                "kind": d["kind"],
                "corpus": d["corpus"],
                "title": (d["signature"] or "")[:300],
                "file": d["file"],
                "line": d["line_start"],
                "aliases": tags,
            }
    if statements is not None and statements.num_rows:
        cols = ["node_id", "statement_id", "kind", "corpus", "title", "label", "full_label", "tag", "file", "line_start", "body"]
        for s in statements.select(cols).to_pylist():
            rows.setdefault(
                s["node_id"],
                {
                    "node_id": s["node_id"],
                    "name": hit_name(s["tag"], s["full_label"] or s["label"], s["statement_id"]),
                    "kind": s["kind"],
                    "corpus": s["corpus"],
                    "title": s["title"] or " ".join((s["body"] or "").split())[:300],
                    "file": s["file"],
                    "line": s["line_start"],
                    "aliases": list(dict.fromkeys(a for a in (s["label"], s["full_label"], s["tag"]) if a)),
                },
            )
    ordered = [rows[k] for k in sorted(rows)]
    degree, rank = reference_signals([r["name"] for r in ordered], dependencies)
    for r, d, pr in zip(ordered, degree, rank):
        r["in_degree"], r["pagerank"] = d, pr
    return table(ordered, NODES)


def node_documents(texts: pa.Table) -> tuple[list[str], list[str]]:
    """(names, documents): every text of a node joined, one document per node name; an informal
    rendering comes without its glosses of the constants it uses (those are other nodes' words)."""
    from mathindex.embed.rules import without_context  # here: mathindex.embed imports this module

    docs: dict[str, list[str]] = {}
    t = texts.select(["name", "facet", "text"]).sort_by([("name", "ascending"), ("facet", "ascending")])
    for name, facet, text in zip(*(t.column(c).to_pylist() for c in ("name", "facet", "text"))):
        docs.setdefault(name, []).append(without_context(text) if facet == "informal" else text)
    names = sorted(docs)
    return names, ["\n".join(docs[n]) for n in names]
