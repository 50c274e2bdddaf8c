"""BM25 score matrices built with numpy, saved in bm25s's own format (bm25s loads and queries them).

bm25s builds its matrix with a Python loop over documents (a `Counter` per document): about 30 s
for the 300 k documents of whole Mathlib. `bm25s_matrix` computes the same float32 scores
(Lucene's BM25, as `bm25s.BM25(method="lucene")`) with array operations, in the same dtype steps, so
the saved files are byte-identical to bm25s's (tests/test_bm25.py compares them).
"""

from __future__ import annotations

import math
from pathlib import Path

import bm25s
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
    vocab, ids, lengths = token_ids(docs)
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.scores = bm25s_matrix(ids, lengths, len(vocab), k1, b, retriever.dtype)
    vocab[""] = len(vocab)  # bm25s's `create_empty_token`, added after the matrix is built
    retriever.vocab_dict = vocab
    retriever.unique_token_ids_set = set(vocab.values())
    retriever.nonoccurrence_array = None  # only BM25L and BM25+ have one
    retriever.save(str(out_dir), show_progress=False)
