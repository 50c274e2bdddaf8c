"""The lexical channel: BM25 over one document per node, saved with the release in bm25s's format
(search/bm25.py writes it, and reads it back without bm25s)."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.search.bm25 import Bm25Files, save_bm25s
from mathindex.names import shared_names
from mathindex.channel import Channel, ChannelContext, Hits, Query
from mathindex.search.kinds import lexical_text
from mathindex.search.symbols import SymbolMap, release_symbols
from mathindex.search.text import tokens
from mathindex.search.token_cache import cached_tokens
from mathindex.store.layout import ReleaseLayout

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
NODE_FILE = "nodes.parquet"
# Anserini's defaults for short documents (k1 0.9, b 0.4) rather than bm25s's (1.5, 0.75): on the
# whole-Mathlib release, MathlibQR dev nDCG@10 48.6 -> 49.4 and R@10 63.2 -> 64.7, both folds
# (bench/experiments/ranking_prior.py folds; neighbours 0.7/0.4, 1.2/0.4, 0.9/0.3, 0.9/0.5 all lower).
BM25_K1, BM25_B = 0.9, 0.4


def build_lexical_index(node_names: list[str], documents: list[str], out_dir: Path, cache_dir: Path | None = None) -> None:
    """Indexes documents (row-aligned with node names) into out_dir; with no documents (a corpus
    without statements) only the empty names file is written, and the index answers nothing. With
    `cache_dir`, each document's tokens are kept in the token cache `build_text_index` uses (keyed
    by the document's sha256), so a rebuild tokenises only documents it has not seen."""
    if cache_dir is None:
        docs = pl.Series("tokens", [" ".join(tokens(d)) for d in documents], dtype=pl.String)
    else:
        rows = pl.DataFrame({"key": [hashlib.sha256(d.encode("utf-8")).hexdigest() for d in documents],
                             "text": documents}, schema={"key": pl.String, "text": pl.String})
        docs = rows.join(cached_tokens(rows, cache_dir, informal=None), on="key", how="left",
                         maintain_order="left").get_column("tokens")
    _write(node_names, docs, out_dir)


def build_text_index(texts: pa.Table, out_dir: Path, cache_dir: Path | None = None) -> int:
    """The release's lexical index: one document per node name, every text of the node in facet
    order (an informal rendering without its glosses of other constants, `informal.rules.without_context`).
    Each distinct text is tokenised once, in this process, and its tokens kept in the token cache
    under `cache_dir` (`CacheLayout.tokens`: keyed by the text's sha256, in a folder per digest of
    the tokenizer's code, `cache.codes.TOKENS`), so that a rebuild tokenises only the texts it has
    not seen. Returns the number of documents."""
    rows = text_rows(texts)
    return write_text_index(rows, cached_tokens(rows.select("key", "text"), cache_dir, informal_texts(rows)), out_dir)


def text_rows(texts: pa.Table) -> pl.DataFrame:
    """(name, facet, text, sha256, key) of `texts` (embedding_texts rows); `key` is the token cache's:
    the text's sha256, `:informal` appended for a rendering (its glosses are stripped first)."""
    return pl.from_arrow(texts.select(["name", "facet", "text", "sha256"])).with_columns(
        key=pl.col("sha256") + pl.when(pl.col("facet") == "informal").then(pl.lit(":informal")).otherwise(pl.lit("")))


def informal_texts(rows: pl.DataFrame) -> pl.Series:
    """Which of `text_rows` are renderings, whose glosses are stripped before tokenising."""
    return rows.get_column("facet") == "informal"


def write_text_index(rows: pl.DataFrame, known: pl.DataFrame, out_dir: Path) -> int:
    """The lexical index of `text_rows` from `known` (key, tokens: a row for each of their keys, in
    any order): a document per name, its texts' tokens in facet order. Returns the number of
    documents."""
    docs = (rows.join(known, on="key", how="left").sort(["name", "facet"])
            .group_by("name", maintain_order=True)
            .agg(pl.col("tokens").filter(pl.col("tokens") != "").str.join(" ")))
    _write(docs.get_column("name").to_list(), docs.get_column("tokens"), out_dir)
    return docs.height


def _write(node_names: list[str], docs: pl.Series, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"name": pa.array(node_names, pa.string())}), out_dir / NODE_FILE)
    if not len(docs):
        return  # bm25s cannot index zero documents (max() of an empty vocabulary)
    save_bm25s(out_dir, docs, BM25_K1, BM25_B)


class LexicalIndex:
    """A saved BM25 index and the node names its rows stand for."""

    def __init__(self, out_dir: Path, shared: dict[str, str] | None = None):
        """`shared`: name -> the str object to hold a name as (the engine's), if any."""
        self.names = shared_names(pq.read_table(out_dir / NODE_FILE).column("name").to_pylist(), shared)
        self.retriever = Bm25Files(out_dir) if self.names else None

    def scores(self, query: str) -> np.ndarray | None:
        """BM25 score of every document (row-aligned with `names`); None when no query token is
        indexed (or the corpus had no documents)."""
        if self.retriever is None:
            return None
        q = [t for t in tokens(query) if t in self.retriever.vocab_dict]
        if not q:
            return None
        return self.retriever.get_scores(q)

    def coverage(self, query: str) -> float | None:
        """The share of the query's distinct tokens that the index knows; None for a query without
        tokens (or an empty corpus)."""
        q = set(tokens(query))
        if self.retriever is None or not q:
            return None
        return sum(t in self.retriever.vocab_dict for t in q) / len(q)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        scores = self.scores(query)
        if scores is None:
            return []
        docs, values = top_positive(scores, k)
        return [(self.names[d], s) for d, s in zip(docs.tolist(), values.tolist())]


class LexicalChannel(Channel):
    """BM25 over one document per node. A formula-like query is searched as `kinds.lexical_text`
    gives it, with the words its LaTeX commands map to (`symbols`, search/symbols.py) appended."""

    name = "lexical"

    def __init__(self, index: LexicalIndex, symbols: SymbolMap | None = None):
        self.index, self.symbols = index, symbols

    @classmethod
    def open(cls, context: ChannelContext) -> LexicalChannel:
        """The release's index, and its symbol map (or `context.symbols`'s; none without either)."""
        return cls(LexicalIndex(ReleaseLayout(context.release).lexical, context.shared),
                   release_symbols(context.release, context.symbols))

    def hits(self, query: Query, k: int) -> Hits:
        """Every query; the share of its tokens the index knows is kept in `query.coverage`."""
        text = lexical_text(query.text) if query.latex else query.text
        words = self.symbols.words_of(query.text) if self.symbols is not None and query.latex else []  # of the commands typed
        query.coverage = self.index.coverage(text)
        return self.search(" ".join([text, *words]), k)

    def search(self, query: str, k: int) -> Hits:
        return self.index.search(query, k)


def top_positive(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc ids, scores) of the k best positive scores, best first, ties by doc id. Selects among the
    positive scores only: bm25s's argpartition over every document (mostly zeros) took 8 ms of the
    8.5 ms of a whole-Mathlib query; this takes well under 1 ms."""
    docs = np.flatnonzero(scores > 0)  # ascending ids
    values = scores[docs]
    if len(docs) > k:
        kth = -np.partition(-values, k - 1)[k - 1]  # the k-th best score
        above = np.flatnonzero(values > kth)
        keep = np.concatenate([above, np.flatnonzero(values == kth)[: k - len(above)]])  # ties at the cut: lowest ids
        docs, values = docs[keep], values[keep]
    order = np.lexsort((docs, -values))
    return docs[order], values[order]
