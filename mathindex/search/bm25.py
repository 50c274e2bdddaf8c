"""BM25 score matrices built with numpy, saved in bm25s's own format, and read back without bm25s
(`Bm25Files`: what `bm25s.BM25.load(mmap=True).get_scores` computes, in the same steps; importing
bm25s, and scipy.sparse under it, was 0.2 s of every CLI query's CPU).

bm25s builds its matrix with a Python loop over documents (a `Counter` per document): about 30 s
for the 300 k documents of whole Mathlib. `bm25s_matrix` computes the same float32 scores
(Lucene's BM25, as `bm25s.BM25(method="lucene")`) with array operations, in the same dtype steps, so
the saved files are byte-identical to bm25s's (tests/test_bm25.py compares them).
"""

from __future__ import annotations

import math
from pathlib import Path

import json

import numpy as np
import polars as pl

EMPTY_DOC = "∅"  # the token of a document without any (bm25s cannot index an empty one)


def token_ids(docs: pl.Series) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """(vocabulary: token -> id in sorted token order, flat token ids, document lengths) of
    documents given as space-joined token strings ("" for a document without tokens, which gets
    EMPTY_DOC). Sorted numbering: the same documents give the same ids whatever PYTHONHASHSEED is."""
    toks = docs.fill_null("").replace("", EMPTY_DOC).str.split(" ")
    lengths = toks.list.len().to_numpy().astype(np.int64)
    flat = toks.explode()
    vocab = flat.unique().sort()
    ids = flat.cast(pl.Enum(vocab.to_list())).to_physical().to_numpy().astype(np.int64)
    return {t: i for i, t in enumerate(vocab.to_list())}, ids, lengths


def bm25s_matrix(ids: np.ndarray, lengths: np.ndarray, n_vocab: int, k1: float, b: float,
                 dtype: str = "float32") -> dict:
    """bm25s's `scores` dict (data, indices, indptr: a CSC matrix documents x vocabulary; num_docs)
    for documents whose flat token ids are `ids`, `lengths[d]` of them for document d."""
    n_docs = len(lengths)
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    pairs, tf = np.unique((doc << 32) | ids, return_counts=True)  # (doc, token) sorted, with counts
    pair_doc, pair_tok = pairs >> 32, pairs & 0xFFFFFFFF
    df = np.bincount(pair_tok, minlength=n_vocab)
    idf = np.zeros(n_vocab, dtype=dtype)
    for tok in np.flatnonzero(df):  # math.log per token, as bm25s computes it (numpy's log may round apart)
        idf[tok] = math.log(1 + (n_docs - int(df[tok]) + 0.5) / (int(df[tok]) + 0.5))
    avg = lengths.mean()
    # bm25s, per document: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf) with l_d a Python int and
    # l_avg numpy's float64 mean: the denominator is float64, and so is the quotient
    denom = k1 * ((1 - b) + b * lengths.astype(np.float64) / avg)
    tf32 = tf.astype(dtype)
    tfc = tf32 / (denom[pair_doc] + tf32)
    scores = (idf[pair_tok] * tfc).astype(dtype)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_tok, minlength=n_vocab), out=indptr[1:])
    order = np.argsort((pair_tok << 32) | pair_doc)
    return {"data": scores[order], "indices": pair_doc[order].astype(np.int32), "indptr": indptr, "num_docs": n_docs}


def save_bm25s(out_dir: Path, docs: pl.Series, k1: float, b: float) -> None:
    """Builds and saves (bm25s format) the BM25 index of `docs` (space-joined token strings)."""
    import bm25s  # heavy (scipy.sparse, 0.2 s): only a build writes its format; queries read it with Bm25Files

    vocab, ids, lengths = token_ids(docs)
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.scores = bm25s_matrix(ids, lengths, len(vocab), k1, b, retriever.dtype)
    vocab[""] = len(vocab)  # bm25s's `create_empty_token`, added after the matrix is built
    retriever.vocab_dict = vocab
    retriever.unique_token_ids_set = set(vocab.values())
    retriever.nonoccurrence_array = None  # only BM25L and BM25+ have one
    retriever.save(str(out_dir), show_progress=False)


# bm25s's file names in a saved index (`BM25.save`), and its methods with a non-occurrence array
FILES = {"data": "data.csc.index.npy", "indices": "indices.csc.index.npy", "indptr": "indptr.csc.index.npy",
         "vocab": "vocab.index.json", "params": "params.index.json", "nonoccurrence": "nonoccurrence_array.index.npy"}
NONOCCURRENCE_METHODS = ("bm25l", "bm25+")


class Bm25Files:
    """A saved bm25s index, its arrays memory-mapped, scored as `bm25s.BM25.get_scores` scores it:
    each query token's column added into a zero vector in query order (`np.add.at`), in the index's
    dtype, plus the non-occurrence scores of the methods that have them."""

    def __init__(self, out_dir: Path):
        out_dir = Path(out_dir)
        params = json.loads((out_dir / FILES["params"]).read_text(encoding="utf-8"))
        self.vocab_dict: dict[str, int] = json.loads((out_dir / FILES["vocab"]).read_text(encoding="utf-8"))
        self.dtype, self.int_dtype = np.dtype(params.get("dtype", "float32")), np.dtype(params.get("int_dtype", "int32"))
        self.num_docs = params["num_docs"]
        self.data, self.indices, self.indptr = (np.load(out_dir / FILES[k], mmap_mode="r") for k in ("data", "indices", "indptr"))
        self.nonoccurrence = (np.load(out_dir / FILES["nonoccurrence"]) if params.get("method") in NONOCCURRENCE_METHODS
                              else None)

    def get_scores(self, query_tokens: list[str]) -> np.ndarray:
        """Every document's score for `query_tokens` (the tokens the vocabulary lacks left out; a
        token listed twice counts twice)."""
        ids = np.asarray([self.vocab_dict[t] for t in query_tokens if t in self.vocab_dict], dtype=self.int_dtype)
        if int(ids.max(initial=0)) >= len(self.indptr) - 1:
            raise ValueError(f"token id {int(ids.max())} is past the index's {len(self.indptr) - 1} tokens")
        starts, ends = self.indptr[ids], self.indptr[ids + 1]
        scores = np.zeros(self.num_docs, dtype=self.dtype)
        for start, end in zip(starts, ends):
            np.add.at(scores, self.indices[start:end], self.data[start:end])
        if self.nonoccurrence is not None:
            scores += self.nonoccurrence[ids].sum()
        return scores
