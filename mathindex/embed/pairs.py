"""Training pairs for the embedder, mined from a release's own tables.

Each pair is (anchor, positive, negative): an anchor written the way people ask (a docstring, an
English rendering, a module doc's sentence, a Stacks statement, a Stacks label and section, a
slogan), the text the index holds for the same node (a Lean `name_signature`, a LaTeX
`latex_body`), and a hard negative: the same facet of another node from the same module or .tex
file (or the engine's near-miss: `search.negatives`). Pairs cross sources only where a Lean
declaration says it states a Stacks tag (`stacks`).

The kinds (KINDS): `docstring`, `description` (module-doc bullets and the curated lists' titles:
`lean.descriptions`), `informal` (the rule rendering) and `module_doc` (a module doc's sentence
naming the declaration: `lean.moduledocs`) to the Lean statement; `stacks` (the LaTeX statement of
the tag a declaration's `@[stacks TAG]` cites: `search.sameas`) to the Lean statement; `label` and
`slogan` to the LaTeX statement. `module_doc` and `stacks` read inputs the miner's tables do not
hold (EXTRA: the sentences, the same_as edges); the caller gives them when those kinds are wanted.

No benchmark query reaches training: the targets of every suite are held out, and a pair is
dropped when any of its texts contains the text of any query (case-insensitive) of any suite the
project ships or reads (`evaluation.suites.project_suite_queries`), whatever its kind.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Collection
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.errors import PairError, SourceError
from mathindex.lean.moduledocs import module_doc_sentences
from mathindex.names import LEAN_PREFIX, lean_node_id
from mathindex.schemas import table_specs
from mathindex.sources import pin_source, sources_from_dirs
from mathindex.store.integrity import read_manifest
from mathindex.store.layout import ReleaseLayout
from mathindex.store.tables import release_order

log = logging.getLogger(__name__)

PAIRS = pa.schema(
    [
        pa.field("kind", pa.string(), nullable=False),  # one of KINDS
        pa.field("node_id", pa.string(), nullable=False),
        pa.field("anchor", pa.string(), nullable=False),
        pa.field("positive", pa.string(), nullable=False),
        pa.field("negative", pa.string()),  # null when the module has no other node
    ]
)
KINDS = ("docstring", "description", "informal", "module_doc", "stacks", "label", "slogan")
NEEDED = {"embedding_texts": ("node_id", "name", "facet", "text"),
          "declarations": ("full_name", "module", "docstring"),
          "latex_statements": ("node_id", "file", "title", "label", "section_path", "slogan")}
# inputs beside the tables, given by the caller for one kind each (KIND_INPUT): module doc sentences
# (`lean.moduledocs.module_doc_sentences`) and the same_as edges (`search.sameas.same_as_table`)
EXTRA = {"module_docs": ("full_name", "text"), "same_as": ("node_id", "target_node_id")}
KIND_INPUT = {"module_doc": "module_docs", "stacks": "same_as"}
MIN_ANCHOR_CHARS = 16
# the nodes a pair's texts come from, carried while mining for the leak guard (not in PAIRS):
# the anchor's (a stacks pair's Stacks statement; else the pair's own node) and the negative's
NODES = ("anchor_node", "negative_node")
_MINED = [*(f.name for f in PAIRS), *NODES]
_INFORMAL_HEAD = re.compile(r"^\S+ [^\s(]+ \([^)]*\): ")


def read_release_tables(release: Path, kinds: Collection[str] | None = None) -> dict[str, pl.DataFrame]:
    """The tables the miner needs, read with only their needed columns; a one-line error when absent.
    With `stacks` among `kinds` (None: every kind) the release's same_as table too, when it has one;
    with `module_doc`, the sentences of its Lean corpora's module docs (`release_lean_roots`)."""
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
    wanted = set(KINDS if kinds is None else kinds)
    same_as = ReleaseLayout(release).table("same_as")
    if "stacks" in wanted and same_as.is_file():
        out["same_as"] = pl.read_parquet(same_as, columns=list(EXTRA["same_as"]))
    if "module_doc" in wanted and (roots := release_lean_roots(release)):
        path = ReleaseLayout(release).table("declarations")
        decls = pq.read_table(path, columns=["decl_id", "corpus", "full_name", "file"])
        out["module_docs"] = pl.from_arrow(module_doc_sentences(roots, decls))
    return out


def release_lean_roots(release: Path) -> dict[str, Path]:
    """Lean corpus name -> its root, as the release's manifest pins them (none without a manifest,
    or for a root that is gone). A corpus whose files are no longer those it was pinned with is
    read as it is now, with a warning: its sentences still name only declarations the release holds."""
    if not ReleaseLayout(release).is_release():
        return {}
    roots = {}
    for pin in read_manifest(Path(release)).corpora:
        if pin.kind != "lean":
            continue
        try:
            (source,) = sources_from_dirs([Path(pin.path)], [])
            now = pin_source(source).sha256
        except SourceError as exc:
            log.warning("module_doc pairs: corpus %s left out: %s", pin.name, exc)
            continue
        if now != pin.sha256:
            log.warning("module_doc pairs: corpus %s at %s changed since the release (sha256 %s, pinned %s); "
                        "its module docs are read as they are now", pin.name, pin.path, now[:12], pin.sha256[:12])
        roots[pin.name] = Path(pin.path)
    return roots


def run_tables(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The tables the miner needs from a release run's own (in memory, before they are written),
    with only their needed columns, in the order the release will hold them
    (`store.tables.release_order`): mined, they give the pairs `read_release_tables` would give of
    the written release. The EXTRA inputs in `tables` come along (a sorted table as it is)."""
    specs = table_specs()
    out = {name: release_order(tables[name], specs[name], list(cols)) for name, cols in NEEDED.items()}
    for name, cols in EXTRA.items():  # given for the kinds that read them (KIND_INPUT)
        if name in tables:
            t = tables[name]
            out[name] = release_order(t, specs[name], list(cols)) if name in specs else t.select(list(cols))
    return out


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
    """Adds `negative` (and `negative_node`, its node): the positive of another row of the same
    group, chosen by a seeded rotation."""
    key = pl.col("node_id").map_elements(lambda s: _stable(f"{seed}\0{s}"), return_dtype=pl.UInt64)
    df = df.with_columns(_key=key).sort([group, "_key"])
    n = pl.len().over(group)
    pos = pl.int_range(pl.len()).over(group)
    shift = (pl.col("_key") % pl.max_horizontal(n - 1, 1)).cast(pl.Int64) + 1
    idx = ((pos + shift) % n).cast(pl.Int64)
    negative, negative_node = pl.col("positive").gather(idx).over(group), pl.col("node_id").gather(idx).over(group)
    df = df.with_columns(negative=pl.when(n > 1).then(negative).otherwise(None),
                         negative_node=pl.when(n > 1).then(negative_node).otherwise(None))
    return df.drop("_key")


def _stable(s: str) -> int:
    return int.from_bytes(hashlib.sha256(s.encode("utf-8")).digest()[:8], "big")


def _lean_facets(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """One row per Lean node with a name_signature: its facets' texts, module and `positive` (the name_signature)."""
    texts = tables["embedding_texts"].filter(pl.col("node_id").str.starts_with(LEAN_PREFIX))
    facets = texts.pivot(on="facet", index=["node_id", "name"], values="text", aggregate_function="first")
    for facet in ("name_signature", "informal", "docstring", "description"):
        if facet not in facets.columns:
            facets = facets.with_columns(pl.lit(None, pl.String).alias(facet))
    modules = tables["declarations"].select(name="full_name", module="module").unique("name", keep="first")
    facets = facets.join(modules, on="name", how="left").filter(pl.col("name_signature").is_not_null())
    return facets.with_columns(positive=pl.col("name_signature"), module=pl.col("module").fill_null(""))


def mine_lean(tables: dict[str, pl.DataFrame], seed: int) -> pl.DataFrame:
    """docstring, description (module docs, curated lists) and informal statement -> name_signature,
    then module_doc and stacks (when their EXTRA inputs are given), negatives from the same module."""
    facets = _lean_facets(tables)
    doc = facets.filter(pl.col("docstring").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("docstring"), anchor=pl.col("docstring"))
    informal = facets.filter(pl.col("informal").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("informal"),
        anchor=pl.col("informal").map_elements(informal_statement, return_dtype=pl.String))
    described = facets.filter(pl.col("description").is_not_null()).select(
        "node_id", "module", "positive", kind=pl.lit("description"), anchor=pl.col("description"))
    both = pl.concat([doc, described, informal])
    negatives = _neighbour_negatives(facets.select("node_id", "module", "positive"), "module", seed).select(
        "node_id", "negative", "negative_node")
    mined = negatives.join(both, on="node_id").with_columns(anchor_node=pl.col("node_id")).select(_MINED)
    more = [f(tables, facets) for f in (_module_doc_pairs, _stacks_pairs)]
    more = [m for m in more if m is not None]
    if not more:
        return mined
    return pl.concat([mined, negatives.join(pl.concat(more), on="node_id").select(_MINED)])


def _module_doc_pairs(tables: dict[str, pl.DataFrame], facets: pl.DataFrame) -> pl.DataFrame | None:
    """A module doc's sentence (its declaration's name masked) -> the declaration's name_signature."""
    if "module_docs" not in tables:
        return None
    docs = tables["module_docs"].select(name="full_name", anchor="text")
    return facets.select("node_id", "name", "positive").join(docs, on="name").select(
        "node_id", "positive", "anchor", kind=pl.lit("module_doc"), anchor_node=pl.col("node_id"))


def _stacks_pairs(tables: dict[str, pl.DataFrame], facets: pl.DataFrame) -> pl.DataFrame | None:
    """The latex_body of the Stacks statement a declaration's `@[stacks TAG]` cites (a same_as edge)
    -> the declaration's name_signature."""
    if "same_as" not in tables:
        return None
    bodies = tables["embedding_texts"].filter(pl.col("facet") == "latex_body").select(
        target_node_id="node_id", anchor="text").unique("target_node_id", keep="first")
    edges = tables["same_as"].select("node_id", "target_node_id").join(bodies, on="target_node_id")
    return facets.select("node_id", "positive").join(edges, on="node_id").select(
        "node_id", "positive", "anchor", kind=pl.lit("stacks"), anchor_node=pl.col("target_node_id"))


def mine_latex(tables: dict[str, pl.DataFrame], seed: int) -> pl.DataFrame:
    """Stacks-style label words + title + section -> latex_body, and slogan -> latex_body; negatives from the same file."""
    texts = tables["embedding_texts"].filter(pl.col("facet") == "latex_body").select("node_id", positive="text")
    st = tables["latex_statements"].join(texts, on="node_id")
    if not st.height:
        return pl.DataFrame(schema={**pl.Schema(PAIRS), **{c: pl.String for c in NODES}})
    section = pl.col("section_path").list.join(", ") if st.schema["section_path"] == pl.List(pl.String) else pl.col("section_path")
    label = pl.concat_str([pl.col("title").fill_null(""), pl.col("label").map_elements(_label_words, return_dtype=pl.String),
                           section.fill_null("")], separator=" — ")
    st = _neighbour_negatives(st.with_columns(file=pl.col("file").fill_null("")), "file", seed)
    st = st.with_columns(anchor_node=pl.col("node_id"))
    lab = st.select("node_id", "positive", "negative", *NODES, kind=pl.lit("label"),
                    anchor=label.str.replace_all(r"^( — )+|( — )+$", "").str.replace_all(r"( — )+", " — "))
    slogan = st.filter(pl.col("slogan").is_not_null()).select("node_id", "positive", "negative", *NODES,
                                                              kind=pl.lit("slogan"), anchor=pl.col("slogan"))
    return pl.concat([lab, slogan]).select(_MINED)


def drop_leaks(pairs: pl.DataFrame, queries: list[str], targets: set[str]) -> tuple[pl.DataFrame, dict]:
    """Drops pairs any of whose texts comes from a held-out target node (`targets`: names or node
    ids; the pair's node, and its anchor's and negative's when the frame carries NODES) and pairs
    any of whose texts contains a query's text."""
    lowered = sorted({" ".join(q.lower().split()) for q in queries if q.strip()})
    before = pairs.height
    held_ids = [lean_node_id(t) for t in targets] + sorted(targets)
    held = pl.col("node_id").is_in(held_ids)
    for col in NODES:
        if col in pairs.columns:
            held = held | pl.col(col).fill_null("").is_in(held_ids)
    pairs = pairs.filter(~held)
    held = before - pairs.height
    leak = pl.lit(False)
    if lowered:
        for col in ("anchor", "positive", "negative"):
            text = pl.col(col).fill_null("").str.replace_all(r"\s+", " ").str.to_lowercase()
            leak = leak | text.str.contains_any(lowered)
    clean = pairs.filter(~leak)
    return clean, {"held_out_targets": held, "query_overlap": pairs.height - clean.height}


def held_out_nodes(texts: pl.DataFrame, targets: set[str]) -> set[str]:
    """The node ids of the held-out `targets` (names as suites write them: a Lean full name, a Stacks
    tag) among the embedding texts' (node_id, name), beside the names themselves."""
    named = texts.filter(pl.col("name").is_in(sorted(targets)))["node_id"].unique().to_list()
    return set(targets) | set(named)


def mine_pairs(tables: dict[str, pl.DataFrame], queries: list[str], targets: set[str], seed: int = 0,
               kinds: Collection[str] | None = None) -> tuple[pa.Table, dict]:
    """Every pair the release gives (of `kinds` only, when given; `module_doc` and `stacks` only
    when their EXTRA inputs are in `tables`), leak-free, with counts per kind; sorted by (kind,
    node_id, anchor)."""
    pairs = pl.concat([mine_lean(tables, seed), mine_latex(tables, seed)])
    if kinds is not None:
        pairs = pairs.filter(pl.col("kind").is_in(sorted(kinds)))
    pairs = pairs.with_columns(pl.col(c).str.replace_all(r"\s+", " ").str.strip_chars() for c in ("anchor", "positive", "negative"))
    pairs = pairs.filter((pl.col("anchor").str.len_chars() >= MIN_ANCHOR_CHARS) & (pl.col("anchor") != pl.col("positive")))
    pairs, dropped = drop_leaks(pairs, queries, held_out_nodes(tables["embedding_texts"], targets))
    pairs = pairs.unique(["kind", "anchor", "positive"], keep="first").sort(["kind", "node_id", "anchor"])
    counts = {k: int(v) for k, v in pairs.group_by("kind").len().sort("kind").iter_rows()}
    if not pairs.height:
        raise PairError("the release gives no training pairs (no docstrings, informalisations or LaTeX statements left)")
    return pairs.select([f.name for f in PAIRS]).to_arrow().cast(PAIRS), {"pairs": counts, "dropped": dropped}


def _unnamed(text: pl.Expr) -> pl.Expr:
    """A name_signature without its kind, name and name-words gloss (`theorem A.b (x : α) : P -- a b`
    -> `(x : α) : P`): two declarations with the same one state one fact under two names."""
    return text.str.replace(r"^\S+ \S+ ", "").str.replace(r" -- [^-]*$", "")


def engine_negatives(pairs: pa.Table, rows: Collection[int], hits: dict[str, list[str]], texts: pl.DataFrame,
                     queries: list[str], targets: set[str]) -> tuple[pa.Table, dict]:
    """`pairs` with the negative of each row in `rows` replaced by its anchor's best near-miss
    (`hits`: anchor -> names, best first, `search.negatives.near_misses`) that can be one: a node of
    the positive's source (a Lean statement for a Lean positive, a LaTeX one for a LaTeX positive)
    other than the pair's own, with a text (`texts`: the embedding texts' node_id, name, facet, text)
    that is not the positive's statement under another name (an alias: `_unnamed`), and that the leak guard keeps (`drop_leaks`: no held-out target, no query's
    text). A row without one keeps its same-module negative. Counts: replaced and kept."""
    df = pl.from_arrow(pairs).with_row_index("row")
    want = df.filter(pl.col("row").is_in(sorted(set(int(r) for r in rows))))
    ranked = pl.DataFrame({"anchor": list(hits), "name": list(hits.values())},
                          schema={"anchor": pl.String, "name": pl.List(pl.String)})
    ranked = ranked.explode("name").drop_nulls("name").with_columns(rank=pl.int_range(pl.len()).over("anchor"))
    facet = texts.filter(pl.col("facet").is_in(["name_signature", "latex_body"])).select(
        "name", candidate_node="node_id", candidate=pl.col("text").str.replace_all(r"\s+", " ").str.strip_chars())
    lean = pl.col("node_id").str.starts_with(LEAN_PREFIX)
    cand = (want.select("row", "kind", "node_id", "anchor", "positive").join(ranked, on="anchor")
            .join(facet.unique("name", keep="first"), on="name")
            .filter((pl.col("candidate_node") != pl.col("node_id"))
                    & (_unnamed(pl.col("candidate")) != _unnamed(pl.col("positive")))
                    & (lean == pl.col("candidate_node").str.starts_with(LEAN_PREFIX)))
            .select("row", "rank", "kind", "node_id", "anchor", "positive", negative="candidate",
                    negative_node="candidate_node"))
    cand, _ = drop_leaks(cand, queries, held_out_nodes(texts, targets))
    best = cand.sort(["row", "rank"]).unique("row", keep="first").select("row", new="negative")
    out = df.join(best, on="row", how="left").sort("row").with_columns(negative=pl.coalesce("new", "negative"))
    replaced = best.height
    return (out.select([f.name for f in PAIRS]).to_arrow().cast(PAIRS),
            {"replaced": replaced, "kept_module": want.height - replaced})
