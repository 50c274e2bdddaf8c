"""The numpy BM25 builder writes bm25s's files byte for byte, and the release's lexical index
caches tokens by text content."""

from __future__ import annotations

import random

import bm25s
import pyarrow as pa
import pytest

from mathindex.cache.layout import CacheLayout
from mathindex.cache.codes import TOKENS
from mathindex.embed.texts import text_id, text_sha256
from mathindex.schemas.embed import EMBEDDING_TEXTS
from mathindex.search.lexical import BM25_B, BM25_K1, LexicalIndex, build_lexical_index, build_text_index
from mathindex.search.text import tokens

FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json", "params.index.json")


def bm25s_reference(documents: list[str], out_dir) -> None:
    """What the lexical index was before: bm25s's own build over sorted-vocabulary token ids."""
    corpus = [tokens(d) or ["∅"] for d in documents]
    vocab = {t: i for i, t in enumerate(sorted({t for doc in corpus for t in doc}))}
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index(([[vocab[t] for t in doc] for doc in corpus], vocab), show_progress=False)
    retriever.save(str(out_dir), show_progress=False)


def random_documents(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["group", "ring", "field", "prime", "Nat.succ_le", "\\sqcup", "≤", "ideal", "x⁻¹", "compact", "the", "of",
             "Hausdorff", "module", "finite", "CommRing", "Real.sqrt", "integral", "domain", "limit"]
    docs = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(n)]
    return docs + ["", "the of a"]  # no tokens at all, only stopwords


@pytest.mark.parametrize("seed", [0, 1])
def test_numpy_builder_writes_bm25s_files_byte_for_byte(tmp_path, seed):
    docs = random_documents(300, seed)
    bm25s_reference(docs, tmp_path / "ref")
    build_lexical_index([f"n{i}" for i in range(len(docs))], docs, tmp_path / "ours")
    for f in FILES:
        assert (tmp_path / "ours" / f).read_bytes() == (tmp_path / "ref" / f).read_bytes(), f
    index = LexicalIndex(tmp_path / "ours")
    assert index.search("prime ideal of a ring", 3)


def texts_table(rows: list[tuple[str, str, str]]) -> pa.Table:
    return pa.Table.from_pylist([
        {"text_id": text_id(f"lean:{n}", f), "node_id": f"lean:{n}", "name": n, "facet": f, "text": t,
         "sha256": text_sha256(t), "truncated": False} for n, f, t in rows], schema=EMBEDDING_TEXTS)


ROWS = [
    ("Nat.add_comm", "name_signature", "theorem Nat.add_comm (n m : ℕ) : n + m = m + n"),
    ("Nat.add_comm", "docstring", "Addition of natural numbers is commutative."),
    ("Nat.add_comm", "informal", "For all natural numbers n and m, n + m = m + n. Here ℕ: the natural numbers. "),
    ("Real.sqrt_nonneg", "name_signature", "theorem Real.sqrt_nonneg (x : ℝ) : 0 ≤ √x"),
    ("Real.sqrt_nonneg", "docstring", "Addition of natural numbers is commutative."),  # a text two nodes share
    ("Empty.thing", "docstring", "the of a"),
]


def test_text_index_equals_the_joined_documents_and_tokenises_each_text_once(tmp_path, monkeypatch):
    from mathindex.informal.rules import without_context
    from mathindex.search import token_cache

    table = texts_table(ROWS)
    docs: dict[str, list[str]] = {}
    for n, f, t in sorted(ROWS, key=lambda r: (r[0], r[1])):
        docs.setdefault(n, []).append(without_context(t) if f == "informal" else t)
    names = sorted(docs)
    bm25s_reference(["\n".join(docs[n]) for n in names], tmp_path / "ref")
    calls = []
    monkeypatch.setattr(token_cache, "tokens", lambda text: calls.append(text) or tokens(text))
    assert build_text_index(table, tmp_path / "a", tmp_path / "cache") == 3
    assert len(calls) == 5  # the shared docstring once
    for f in FILES:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "ref" / f).read_bytes(), f
    assert LexicalIndex(tmp_path / "a").names == names
    calls.clear()
    build_text_index(table, tmp_path / "b", tmp_path / "cache")
    assert calls == []  # every text from the cache
    for f in FILES:
        assert (tmp_path / "b" / f).read_bytes() == (tmp_path / "a" / f).read_bytes()
    changed = texts_table(ROWS[:-1] + [("Empty.thing", "docstring", "A new docstring about groups.")])
    build_text_index(changed, tmp_path / "c", tmp_path / "cache")
    assert calls == ["A new docstring about groups."]
    assert LexicalIndex(tmp_path / "c").search("groups", 1)[0][0] == "Empty.thing"


def test_an_unreadable_cache_shard_is_skipped_and_rebuilt(tmp_path, caplog):
    table = texts_table(ROWS)
    build_text_index(table, tmp_path / "a", tmp_path / "cache")
    shards = list(CacheLayout(tmp_path / "cache").tokens(TOKENS.digest()).glob("*.parquet"))
    assert len(shards) == 1
    shards[0].write_bytes(b"not parquet")
    build_text_index(table, tmp_path / "b", tmp_path / "cache")
    assert "skipping damaged" in caplog.text
    for f in FILES:
        assert (tmp_path / "b" / f).read_bytes() == (tmp_path / "a" / f).read_bytes()


def test_documents_tokens_come_from_the_cache_on_a_rebuild(tmp_path, monkeypatch):
    from mathindex.search import token_cache

    docs = random_documents(50, 3)
    names = [f"n{i}" for i in range(len(docs))]
    build_lexical_index(names, docs, tmp_path / "plain")
    calls = []
    monkeypatch.setattr(token_cache, "tokens", lambda text: calls.append(text) or tokens(text))
    build_lexical_index(names, docs, tmp_path / "a", tmp_path / "cache")
    assert len(calls) == len(set(docs))
    calls.clear()
    build_lexical_index(names, docs[:-1] + ["a changed document about rings"], tmp_path / "b", tmp_path / "cache")
    assert calls == ["a changed document about rings"]
    for f in FILES:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "plain" / f).read_bytes(), f


@pytest.mark.parametrize("seed", [0, 1])
def test_the_files_read_without_bm25s_score_as_bm25s_does(tmp_path, seed):
    """`Bm25Files` (what the lexical channel reads) against `bm25s.BM25.load(mmap=True)`: the same
    float32 scores, bit for bit, for queries with repeated and unknown tokens."""
    import numpy as np

    from mathindex.search.bm25 import Bm25Files

    documents = random_documents(150, seed)
    build_lexical_index([f"n{i}" for i in range(len(documents))], documents, tmp_path / "lex")
    ours, theirs = Bm25Files(tmp_path / "lex"), bm25s.BM25.load(str(tmp_path / "lex"), mmap=True)
    assert ours.vocab_dict == theirs.vocab_dict
    rng = random.Random(seed)
    vocab = sorted(t for t in ours.vocab_dict if t)  # "" (bm25s's empty token) is past the matrix: both refuse it
    for _ in range(40):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 8))]
        query += query[:2]
        want = theirs.get_scores(query)
        got = ours.get_scores(query + ["not-a-token"])
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))
