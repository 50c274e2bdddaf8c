"""The lexical channel: BM25 (bm25s) over one document per node, saved with the release."""

from __future__ import annotations

import logging
from pathlib import Path

import bm25s
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.search.text import tokens

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG
NODE_FILE = "nodes.parquet"
# Anserini's defaults for short documents (k1 0.9, b 0.4) rather than bm25s's (1.5, 0.75): on the
# whole-Mathlib release, MathlibQR dev nDCG@10 48.6 -> 49.4 and R@10 63.2 -> 64.7, both folds
# (bench/ranking_prior.py folds; neighbours 0.7/0.4, 1.2/0.4, 0.9/0.3, 0.9/0.5 all lower).
BM25_K1, BM25_B = 0.9, 0.4


def build_lexical_index(node_names: list[str], documents: list[str], out_dir: Path) -> None:
    """Indexes documents (row-aligned with node names) into out_dir; with no documents (a corpus
    without statements) only the empty names file is written, and the index answers nothing."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"name": pa.array(node_names, pa.string())}), out_dir / NODE_FILE)
    if not documents:
        return  # bm25s cannot index zero documents (max() of an empty vocabulary)
    corpus = [tokens(d) or ["∅"] for d in documents]
    # bm25s numbers the vocabulary in set order, which follows PYTHONHASHSEED: number it here,
    # sorted, so that two builds of the same documents write the same bytes
    vocab = {t: i for i, t in enumerate(sorted({t for doc in corpus for t in doc}))}
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index(([[vocab[t] for t in doc] for doc in corpus], vocab), show_progress=False)
    retriever.save(str(out_dir), show_progress=False)


class LexicalIndex:
    """A saved BM25 index and the node names its rows stand for."""

    def __init__(self, out_dir: Path):
        self.names = pq.read_table(out_dir / NODE_FILE).column("name").to_pylist()
        self.retriever = bm25s.BM25.load(str(out_dir), show_progress=False, mmap=True) if self.names else None

    def scores(self, query: str) -> np.ndarray | None:
        """BM25 score of every document (row-aligned with `names`); None when no query token is
        indexed (or the corpus had no documents)."""
        if self.retriever is None:
            return None
        q = [t for t in tokens(query) if t in self.retriever.vocab_dict]
        if not q:
            return None
        return self.retriever.get_scores(q)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        scores = self.scores(query)
        if scores is None:
            return []
        docs, values = top_positive(scores, k)
        return [(self.names[int(d)], float(s)) for d, s in zip(docs, values)]


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
