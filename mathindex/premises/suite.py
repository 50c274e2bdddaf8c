"""The premise benchmark: goals from the theorems of one part of the split, gold from their proofs.

For each theorem (or lemma) written in a file of the part, the goal is its type, the context its
`variable`s and binders, and the gold set the corpus declarations its proof names (resolved
`proof` rows of `dependencies`, the theorem itself left out). Theorems with no such premise, and
names declared twice (private names in two files), are dropped. The suite is written in the
project's suite format (`evaluation/suites.py`), with `context` and `theorem` per query."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.lean.binders import split_colon
from mathindex.premises.goal import GoalError, check_goal
from mathindex.premises.split import SEED, TEST, split_files
from mathindex.schemas.lean import ROLE_PROOF

THEOREM_KINDS = ("theorem", "lemma")
HEADLINE = ("recall@10", "recall@32", "mrr@32")
STYLE = "premise"


def proof_premises(declarations: pa.Table, dependencies: pa.Table) -> pl.DataFrame:
    """(full_name, premises): the sorted corpus declarations each proof names, self left out."""
    names = pl.from_arrow(declarations.select(["full_name"])).unique()
    deps = pl.from_arrow(dependencies.select(["full_name", "target", "resolved", "role"]))
    return (
        deps.filter((pl.col("role") == ROLE_PROOF) & pl.col("resolved") & (pl.col("full_name") != pl.col("target")))
        .join(names, left_on="target", right_on="full_name", how="semi")
        .group_by("full_name")
        .agg(pl.col("target").unique().sort().alias("premises"))
    )


def theorem_goals(declarations: pa.Table, parts: dict[str, str], part: str) -> pl.DataFrame:
    """(full_name, file, line_start, goal, context) of the theorems written in `part`'s files, each
    name declared once."""
    cols = ["full_name", "kind", "origin", "file", "line_start", "signature", "type", "variables"]
    d = pl.from_arrow(declarations.select(cols))
    once = d.group_by("full_name").len().filter(pl.col("len") == 1).select("full_name")
    in_part = [f for f, p in parts.items() if p == part]
    t = d.join(once, on="full_name", how="semi").filter(
        pl.col("kind").is_in(THEOREM_KINDS) & (pl.col("origin") == "source") & pl.col("type").is_not_null()
        & pl.col("file").is_in(in_part)
    )
    contexts = [" ".join(x for x in (v or "", split_colon(s or "")[0]) if x.strip()).strip()
                for v, s in zip(t["variables"].to_list(), t["signature"].to_list())]
    return t.with_columns(goal=pl.col("type").str.strip_chars(), context=pl.Series(contexts, dtype=pl.String)).select(
        ["full_name", "file", "line_start", "goal", "context"]).sort(["file", "line_start", "full_name"])


def suite_rows(declarations: pa.Table, dependencies: pa.Table, parts: dict[str, str], part: str,
               premises: pl.DataFrame | None = None) -> pl.DataFrame:
    """(full_name, file, line_start, goal, context, premises) of `part`'s theorems with a non-empty
    gold set, by name: everything a suite is made of (`build_suite` drops the goals the grammar
    refuses). `premises`: proof_premises of the same tables, when the caller has it."""
    premises = proof_premises(declarations, dependencies) if premises is None else premises
    # sorted: a polars join keeps no row order, and the suite file must be byte-identical between builds
    return theorem_goals(declarations, parts, part).join(premises, on="full_name").sort("full_name")


def build_suite(declarations: pa.Table, dependencies: pa.Table, seed: int = SEED, part: str = TEST,
                name: str = "premises") -> dict:
    """The suite (a JSON-ready dict) of `part`'s theorems with a non-empty gold set."""
    parts = split_files(declarations.column("file").to_pylist(), seed)
    goals = suite_rows(declarations, dependencies, parts, part)
    queries, rejected = [], 0
    for r in goals.iter_rows(named=True):
        try:  # a goal `mathindex premises` refuses (the grammar lacks `⋂₀`, `⋃₀`) is no benchmark query
            check_goal(r["goal"], r["context"])
        except GoalError:
            rejected += 1
            continue
        queries.append({"id": r["full_name"], "style": STYLE, "query": r["goal"], "context": r["context"],
                        "theorem": r["full_name"], "file": r["file"], "line": r["line_start"], "gold": r["premises"]})
    return {"suite": name, "k": 32, "headline": list(HEADLINE), "seed": seed, "part": part,
            "files": sum(1 for p in parts.values() if p == part), "rejected_goals": rejected, "queries": queries}


def write_suite(suite: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(suite, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return path
