"""The nodes table built with polars equals the row-by-row build it replaced, and PageRank
without a networkx graph equals networkx's, bit for bit."""

from __future__ import annotations

import random

import networkx as nx
import polars as pl
import pyarrow as pa

from mathindex.schemas.latex import LATEX_STATEMENTS
from mathindex.schemas.lean import DECLARATIONS, DEPENDENCIES
from mathindex.schemas.search import NODES
from mathindex.names import hit_name
from mathindex.search.nodes import build_nodes, statement_title
from mathindex.search.prior import pagerank, reference_signals


def row_by_row(declarations: pa.Table, statements: pa.Table, dependencies: pa.Table) -> pa.Table:
    """The build as it was (dict per row, networkx PageRank)."""
    import re

    stacks = re.compile(r"^stacks\s+([0-9A-Z]{4})\b")
    rows: dict[str, dict] = {}
    decls = declarations.sort_by([("corpus", "ascending"), ("file", "ascending"), ("line_start", "ascending")])
    for d in decls.to_pylist():
        nid = f"lean:{d['full_name']}"
        if nid not in rows:
            rows[nid] = {"node_id": nid, "name": d["full_name"], "kind": d["kind"], "corpus": d["corpus"],
                         "title": (d["signature"] or "")[:300], "file": d["file"], "line": d["line_start"],
                         "aliases": [m.group(1) for a in d["attributes"] or [] if (m := stacks.match(a))]}
    for s in statements.to_pylist():
        rows.setdefault(s["node_id"], {
            "node_id": s["node_id"], "name": hit_name(s["tag"], s["full_label"] or s["label"], s["statement_id"]),
            "kind": s["kind"], "corpus": s["corpus"], "title": statement_title(s["title"], s["body_normalised"] or s["body"]),
            "file": s["file"], "line": s["line_start"],
            "aliases": list(dict.fromkeys(a for a in (s["label"], s["full_label"], s["tag"]) if a))})
    ordered = [rows[k] for k in sorted(rows)]
    edges = (pl.from_arrow(dependencies.select(["full_name", "target", "resolved"]))
             .filter(pl.col("resolved") & (pl.col("full_name") != pl.col("target"))).select(["full_name", "target"])
             .unique().sort(["full_name", "target"]))
    degree = dict(edges.group_by("target").len().iter_rows())
    graph = nx.DiGraph()
    graph.add_edges_from(edges.iter_rows())
    rank = nx.pagerank(graph, alpha=0.85)
    for r in ordered:
        r["in_degree"], r["pagerank"] = int(degree.get(r["name"], 0)), float(rank.get(r["name"], 0.0))
    return pa.Table.from_pylist(ordered, schema=NODES)


def corpus(seed: int) -> tuple[pa.Table, pa.Table, pa.Table]:
    rng = random.Random(seed)
    names = [f"N{i % 70}.lemma_{i}" for i in range(200)] + ["Dup.name"] * 3  # a name declared thrice
    decls = []
    for i, n in enumerate(names):
        row = {c.name: None for c in DECLARATIONS}
        row.update(corpus=rng.choice(["mathlib", "other"]), full_name=n, kind=rng.choice(["theorem", "def"]),
                   signature="(x : ℕ) : x = x " * rng.randint(0, 40), attributes=rng.choice(
                       [[], ["simp"], ["stacks 00DV", "simp"], ["stacks 0ABC extra", "stacks zz"]]),
                   file=f"F{rng.randint(0, 5)}.lean", line_start=rng.randint(1, 50), decl_id=f"d{i}")
        decls.append(row)
    statements = []
    for i in range(30):
        row = {c.name: None for c in LATEX_STATEMENTS}
        row.update(statement_id=f"s{i}", node_id=f"tex:stacks:s{i % 25}", corpus="stacks", kind="lemma",
                   title=rng.choice([None, "", "A title"]), label=rng.choice([None, "", f"lem-{i}"]),
                   full_label=rng.choice([None, f"file-lem-{i}"]), tag=rng.choice([None, f"00{i:02d}"]),
                   body=rng.choice(["  a \n body\twith  space ", "x" * 400]), file="a.tex", line_start=i + 1)
        statements.append(row)
    deps = []
    for _ in range(900):
        row = {c.name: None for c in DEPENDENCIES}
        row.update(full_name=rng.choice(names), target=rng.choice(names + ["Outside.x"]), resolved=rng.random() < 0.9)
        deps.append(row)
    return (pa.Table.from_pylist(decls, schema=DECLARATIONS), pa.Table.from_pylist(statements, schema=LATEX_STATEMENTS),
            pa.Table.from_pylist(deps, schema=DEPENDENCIES))


def test_polars_nodes_equal_the_row_by_row_build():
    for seed in (0, 1, 2):
        decls, statements, deps = corpus(seed)
        assert build_nodes(decls, statements, deps).equals(row_by_row(decls, statements, deps))


def test_pagerank_is_networkx_pagerank_bit_for_bit():
    rng = random.Random(5)
    edges = sorted({(f"n{rng.randint(0, 300)}", f"n{rng.randint(0, 300)}") for _ in range(2000)})
    edges = [(u, v) for u, v in edges if u != v]
    graph = nx.DiGraph()
    graph.add_edges_from(edges)
    expected = nx.pagerank(graph, alpha=0.85)
    ours = pagerank(pl.DataFrame({"full_name": [u for u, _ in edges], "target": [v for _, v in edges]}))
    assert dict(ours.iter_rows()) == expected  # exact float equality
    assert reference_signals(["n1"], None) == ([0], [0.0])
