"""Training pairs for the embedder, mined from a release's own tables.

Each pair is (anchor, positive, negative): an anchor written the way people ask (a docstring, an
English rendering, a Stacks label and section, a slogan), the text the index holds for the same
node (a Lean `name_signature`, a LaTeX `latex_body`), and a hard negative: the same facet of
another node from the same module or .tex file. Pairs never cross sources.

No benchmark query reaches training: the targets of every suite are held out, and a pair is
dropped when any of its texts contains the text of any query (case-insensitive) of any suite the
project ships or reads (`evaluation.suites.project_suite_queries`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from pathlib import Path

import polars as pl
import pyarrow as pa

from mathindex.errors import PairError
from mathindex.names import LEAN_PREFIX, lean_node_id
from mathindex.schemas import table_specs
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import release_order

PAIRS = pa.schema(
    [
        pa.field("kind", pa.string(), nullable=False),  # docstring | description | informal | label | slogan
        pa.field("node_id", pa.string(), nullable=False),
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("positive", pa.string(), nullable=False),
        pa.field("negative", pa.string()),  # null when the module has no other node
    ]
)
NEEDED = {"embedding_texts": ("node_id", "name", "facet", "text"),
          "declarations": ("full_name", "module", "docstring"),
          "latex_statements": ("node_id", "file", "title", "label", "section_path", "slogan")}
MIN_ANCHOR_CHARS = 16
_INFORMAL_HEAD = re.compile(r"^\S+ [^\s(]+ \([^)]*\): ")


def read_release_tables(release: Path) -> dict[str, pl.DataFrame]:
    """The tables the miner needs, read with only their needed columns; a one-line error when absent."""
    release = Path(release)
    if release.is_file():
        raise PairError(f"{release} is a file; give a release directory")
    if not release.is_dir():
        raise PairError(f"release directory does not exist: {release}")
    out = {}
    for name, cols in NEEDED.items():
        path = ReleaseLayout(release).table(name)
        if not path.is_file():
            raise PairError(f"release {release} lacks the {name} table the pair miner needs")
        out[name] = pl.read_parquet(path, columns=list(cols))
    return out


def run_tables(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The tables the miner needs from a release run's own (in memory, before they are written),
    with only their needed columns, in the order the release will hold them
    (`store.tables.release_order`): mined, they give the pairs `read_release_tables` would give of
    the written release."""
    specs = table_specs()
    return {name: release_order(tables[name], specs[name], list(cols)) for name, cols in NEEDED.items()}


def frames(tables: dict[str, pa.Table]) -> dict[str, pl.DataFrame]:
    """`run_tables`' tables as the miner reads them (polars)."""
    return {name: pl.from_arrow(t) for name, t in tables.items()}


def _label_words(label: str | None) -> str:
    """`lemma-flat-base-change` -> `flat base change` (the environment prefix dropped)."""
    words = re.split(r"[-_:\s]+", label or "")
    if words and words[0] in {"lemma", "theorem", "proposition", "definition", "remark", "example",
                              "section", "subsection", "situation", "exercise", "equation", "item"}:
        words = words[1:]
    return " ".join(w for w in words if w)


def informal_statement(text: str) -> str:
    """A rule informalisation without its `Kind Name (name words): ` head and its `Uses …` glosses."""
    text = _INFORMAL_HEAD.sub("", text, count=1)
    return text.split(". Uses ", 1)[0].strip()


def _neighbour_negatives(df: pl.DataFrame, group: str, seed: int) -> pl.DataFrame:
    """Adds `negative`: the positive of another row of the same group, chosen by a seeded rotation."""
    key = pl.col("node_id").map_elements(lambda s: _stable(f"{seed}\0{s}"), return_dtype=pl.UInt64)
    df = df.with_columns(_key=key).sort([group, "_key"])
    n = pl.len().over(group)
    pos = pl.int_range(pl.len()).over(group)
    shift = (pl.col("_key") % pl.max_horizontal(n - 1, 1)).cast(pl.Int64) + 1
    idx = ((pos + shift) % n).cast(pl.Int64)
    negative = pl.col("positive").gather(idx).over(group)
    df = df.with_columns(negative=pl.when(n > 1).then(negative).otherwise(None))
    return df.drop("_key")


def _stable(s: str) -> int:
    return int.from_bytes(hashlib.sha256(s.encode("utf-8")).digest()[:8], "big")


def mine_lean(tables: dict[str, pl.DataFrame], seed: int) -> pl.DataFrame:
    """docstring, description (module docs, curated lists) and informal statement -> name_signature,
    negatives from the same module."""
    texts = tables["embedding_texts"].filter(pl.col("node_id").str.starts_with(LEAN_PREFIX))
    facets = texts.pivot(on="facet", index=["node_id", "name"], values="text", aggregate_function="first")
    for facet in ("name_signature", "informal", "docstring", "description"):
        if facet not in facets.columns:
            facets = facets.with_columns(pl.lit(None, pl.String).alias(facet))
    modules = tables["declarations"].select(name="full_name", module="module").unique("name", keep="first")
    facets = facets.join(modules, on="name", how="left").filter(pl.col("name_signature").is_not_null())
    facets = facets.with_columns(positive=pl.col("name_signature"), module=pl.col("module").fill_null(""))
    doc = facets.filter(pl.col("docstring").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("docstring"), anchor=pl.col("docstring"))
    informal = facets.filter(pl.col("informal").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("informal"),
        anchor=pl.col("informal").map_elements(informal_statement, return_dtype=pl.String))
    described = facets.filter(pl.col("description").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("description"), anchor=pl.col("description"))
    both = pl.concat([doc, described, informal])
    return _neighbour_negatives(facets.select("node_id", "module", "positive"), "module", seed).select(
        "node_id", "negative").join(both, on="node_id").select([f.name for f in PAIRS])


def mine_latex(tables: dict[str, pl.DataFrame], seed: int) -> pl.DataFrame:
    """Stacks-style label words + title + section -> latex_body, and slogan -> latex_body; negatives from the same file."""
    texts = tables["embedding_texts"].filter(pl.col("facet") == "latex_body").select("node_id", positive="text")
    st = tables["latex_statements"].join(texts, on="node_id")
    if not st.height:
        return pl.DataFrame(schema=pl.Schema(PAIRS))
    section = pl.col("section_path").list.join(", ") if st.schema["section_path"] == pl.List(pl.String) else pl.col("section_path")
    label = pl.concat_str([pl.col("title").fill_null(""), pl.col("label").map_elements(_label_words, return_dtype=pl.String),
                           section.fill_null("")], separator=" — ")
    st = _neighbour_negatives(st.with_columns(file=pl.col("file").fill_null("")), "file", seed)
    lab = st.select("node_id", "positive", "negative", kind=pl.lit("label"),
                    anchor=label.str.replace_all(r"^( — )+|( — )+$", "").str.replace_all(r"( — )+", " — "))
    slogan = st.filter(pl.col("slogan").is_not_null()).select("node_id", "positive", "negative", kind=pl.lit("slogan"),
                                                              anchor=pl.col("slogan"))
    return pl.concat([lab, slogan]).select([f.name for f in PAIRS])


def drop_leaks(pairs: pl.DataFrame, queries: list[str], targets: set[str]) -> tuple[pl.DataFrame, dict]:
    """Drops pairs of held-out target nodes and pairs any of whose texts contains a query's text."""
    lowered = sorted({" ".join(q.lower().split()) for q in queries if q.strip()})
    before = pairs.height
    pairs = pairs.filter(~pl.col("node_id").is_in([lean_node_id(t) for t in targets] + sorted(targets)))
    held = before - pairs.height
    leak = pl.lit(False)
    if lowered:
        for col in ("anchor", "positive", "negative"):
            text = pl.col(col).fill_null("").str.replace_all(r"\s+", " ").str.to_lowercase()
            leak = leak | text.str.contains_any(lowered)
    clean = pairs.filter(~leak)
    return clean, {"held_out_targets": held, "query_overlap": pairs.height - clean.height}


def mine_pairs(tables: dict[str, pl.DataFrame], queries: list[str], targets: set[str], seed: int = 0,
               kinds: Collection[str] | None = None) -> tuple[pa.Table, dict]:
    """Every pair the release gives (of `kinds` only, when given), leak-free, with counts per kind;
    sorted by (kind, node_id, anchor)."""
    pairs = pl.concat([mine_lean(tables, seed), mine_latex(tables, seed)])
    if kinds is not None:
        pairs = pairs.filter(pl.col("kind").is_in(sorted(kinds)))
    pairs = pairs.with_columns(pl.col(c).str.replace_all(r"\s+", " ").str.strip_chars() for c in ("anchor", "positive", "negative"))
    pairs = pairs.filter((pl.col("anchor").str.len_chars() >= MIN_ANCHOR_CHARS) & (pl.col("anchor") != pl.col("positive")))
    pairs, dropped = drop_leaks(pairs, queries, targets)
    pairs = pairs.unique(["kind", "anchor", "positive"], keep="first").sort(["kind", "node_id", "anchor"])
    counts = {k: int(v) for k, v in pairs.group_by("kind").len().sort("kind").iter_rows()}
    if not pairs.height:
        raise PairError("the release gives no training pairs (no docstrings, informalisations or LaTeX statements left)")
    return pairs.to_arrow().cast(PAIRS), {"pairs": counts, "dropped": dropped}

