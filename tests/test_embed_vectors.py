"""Embedder, embedding cache and the int8 HNSW index with the bundled MiniLM (loaded once)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from mathindex.embed import (
    EmbedderError,
    EmbeddingCache,
    EmbedStats,
    IndexMismatchError,
    SentenceTransformerEmbedder,
    VectorIndex,
    embed_and_index,
    embed_texts,
    text_id,
    text_sha256,
)
from mathindex.schemas.embed import EMBEDDING_TEXTS

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXTS = [
    "Addition of natural numbers is commutative.",
    "theorem Nat.add_comm (n m : ℕ) : n + m = m + n",
    "The real exponential function is positive.",
    "Every finite integral domain is a field.",
    "Addition of natural numbers is commutative.",  # a duplicate text
    "A compact subset of a Hausdorff space is closed. " * 60,  # long: past the 256-token limit
    "x",
]


def texts_table(texts: list[str]) -> pa.Table:
    rows = [{"text_id": text_id(f"n{i}", "f"), "node_id": f"n{i}", "name": f"n{i}", "facet": "f", "text": t,
             "sha256": text_sha256(t), "truncated": False} for i, t in enumerate(texts)]
    return pa.Table.from_pylist(rows, schema=EMBEDDING_TEXTS)


@pytest.fixture(scope="module")
def embedder():
    return SentenceTransformerEmbedder(progress=False)


def test_embedder_identity(embedder):
    assert embedder.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert embedder.dim == 384 and len(embedder.revision) == 64


def test_encode_matches_bare_sentence_transformers(embedder):
    ours = embedder.encode(TEXTS)
    bare = embedder.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * bare).sum(axis=1).min() >= 0.9999


def test_token_budget_batches_cover_every_row_once(embedder):
    embedder_small = SentenceTransformerEmbedder.__new__(SentenceTransformerEmbedder)
    embedder_small.batch_tokens, embedder_small.max_batch = 100, 4
    lengths = [10, 50, 3, 3, 3, 3, 3, 90, 20]
    batches = SentenceTransformerEmbedder.batches(embedder_small, lengths)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    assert [len(b) for b in batches] == [1, 2, 4, 2]  # 90 alone; 50+20; then 4 a batch
    assert all(len(b) * max(lengths[i] for i in b) <= 100 or len(b) == 1 for b in batches)


def test_cache_reuse_and_incremental_embedding(embedder, tmp_path):
    table = texts_table(TEXTS)
    s1 = EmbedStats()
    v1 = embed_texts(table, embedder, tmp_path, s1)
    assert (s1.rows, s1.distinct, s1.cached, s1.embedded) == (7, 6, 0, 6)
    assert np.array_equal(v1[0], v1[4])
    s2 = EmbedStats()
    v2 = embed_texts(table, embedder, tmp_path, s2)
    assert (s2.cached, s2.embedded) == (6, 0) and np.array_equal(v1, v2)
    changed = texts_table(TEXTS[:3] + ["Every finite integral domain is a field!"] + TEXTS[4:])
    s3 = EmbedStats()
    v3 = embed_texts(changed, embedder, tmp_path, s3)
    assert (s3.cached, s3.embedded) == (5, 1)
    assert np.array_equal(v3[[0, 1, 2, 4, 5, 6]], v1[[0, 1, 2, 4, 5, 6]])
    cache = EmbeddingCache(tmp_path, embedder.name, embedder.revision, embedder.dim)
    assert len(cache.shards()) == 2
    cache.compact()
    assert len(cache.shards()) == 1
    s4 = EmbedStats()
    assert np.array_equal(embed_texts(changed, embedder, tmp_path, s4), v3) and s4.embedded == 0


def test_bad_inputs(embedder, tmp_path):
    with pytest.raises(ValueError, match="1 empty text"):
        embed_texts(texts_table(["fine", ""]), embedder, None)
    huge = "integral " * 120_000  # about 1 MB
    v = embed_texts(texts_table([huge, huge[:4000]]), embedder, None)
    assert float(v[0] @ v[1]) > 0.9999  # cut to the model's limit either way
    with pytest.raises(EmbedderError, match="does not exist: /nonexistent/model"):
        SentenceTransformerEmbedder("/nonexistent/model")
    (tmp_path / "empty-model").mkdir()
    with pytest.raises(EmbedderError, match=r"no weights \(model.safetensors or pytorch_model.bin\)"):
        SentenceTransformerEmbedder(str(tmp_path / "empty-model"))


def random_unit(n: int, d: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_index_build_search_open_and_refuse(embedder, tmp_path):
    # clustered vectors, so that the neighbourhoods are meaningful
    centres = random_unit(40, 384, 1)
    x = centres[np.arange(3000) % 40] + 0.35 * random_unit(3000, 384, 2)
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    ids = np.arange(3000, dtype=np.int64) * 7919 - 10_000
    built = VectorIndex.build(x, ids, embedder, tmp_path / "a", M=32, ef_construction=80, recall_queries=200)
    side = built.sidecar
    assert side["embedder"]["name"] == embedder.name and side["embedder"]["dim"] == 384
    assert side["M"] == 32 and side["ef_construction"] == 80 and side["recall_at_10"] >= 0.9
    # efSearch is the first rung reaching 0.99, or when (as with these near-tied synthetic clusters,
    # where 8-bit codes reorder ties) none does, the first within 0.002 of the best recall
    tried = side["recall_by_ef_search"]
    assert side["recall_at_10"] == tried[str(side["ef_search"])]
    if side["recall_at_10"] < 0.99:
        assert len(tried) == 10 and side["recall_at_10"] >= max(tried.values()) - 0.002
        assert all(r < max(tried.values()) - 0.002 for ef, r in tried.items() if int(ef) < side["ef_search"])
    assert side["memory_ratio_to_flat"] < 0.5
    index = VectorIndex.open(tmp_path / "a", embedder)
    found, scores = index.search(x[:5], 10)
    assert found.shape == (5, 10) and scores.dtype == np.float32
    assert found[:, 0].tolist() == ids[:5].tolist()  # each vector finds itself first
    assert np.all(np.diff(scores, axis=1) <= 1e-6)
    assert not any(isinstance(getattr(index, a, None), np.ndarray) for a in dir(index) if not a.startswith("_"))
    # same input, same bytes
    VectorIndex.build(x, ids, embedder, tmp_path / "b", M=32, ef_construction=80, recall_queries=200)
    for f in ("vector.index", "vector_ids.parquet", "vector.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    with pytest.raises(IndexMismatchError, match="built with sentence-transformers/all-MiniLM-L6-v2 \\(dim 384\\)"):
        VectorIndex.open(tmp_path / "a", {"name": "other-model", "revision": "r", "dim": 384})
    with pytest.raises(IndexMismatchError, match="not sentence-transformers/all-MiniLM-L6-v2 \\(dim 768\\)"):
        VectorIndex.open(tmp_path / "a", {"name": embedder.name, "revision": embedder.revision, "dim": 768})
    with pytest.raises(IndexMismatchError, match="no vector index"):
        VectorIndex.open(tmp_path / "missing", embedder)
    # a bf16 index takes its model's fp32 queries (embedder.query_encoding); no other model's, nor int8's
    rounded = {"name": embedder.name + "+bf16", "revision": embedder.revision, "dim": 384}
    VectorIndex.build(x, ids, rounded, tmp_path / "bf16", M=32, ef_construction=80, recall_queries=200)
    assert VectorIndex.open(tmp_path / "bf16", embedder).search(x[:1], 1)[0][0, 0] == ids[0]
    for other in ("other-model", embedder.name + "+onnx-int8"):
        with pytest.raises(IndexMismatchError, match=r"built with .*\+bf16"):
            VectorIndex.open(tmp_path / "bf16", {"name": other, "revision": "r", "dim": 384})
    with pytest.raises(IndexMismatchError, match="shape \\(3000, 8\\), embedder .* has dimension 384"):
        VectorIndex.build(x[:, :8], ids, embedder, tmp_path / "c")


def test_index_from_real_embeddings(embedder, tmp_path):
    table = texts_table(TEXTS[:4] + TEXTS[5:])
    index, stats = embed_and_index(table, embedder, tmp_path / "cache", tmp_path)
    assert (stats.rows, stats.embedded) == (6, 6)
    q = embedder.encode(["commutativity of addition on naturals"])
    ids, _ = VectorIndex.open(tmp_path, embedder).search(q, 2)
    assert set(ids[0].tolist()) == {text_id("n0", "f"), text_id("n1", "f")}
    assert index.count == 6


def test_an_index_is_reused_only_for_the_same_texts_embedder_and_options(embedder, tmp_path):
    table = texts_table(TEXTS[:4])
    embed_and_index(table, embedder, tmp_path / "cache", tmp_path / "a")
    _, same = embed_and_index(table, embedder, tmp_path / "cache", tmp_path / "b", tmp_path / "a")
    assert same.index_reused and (tmp_path / "b" / "vector.index").read_bytes() == (tmp_path / "a" / "vector.index").read_bytes()
    changed = texts_table(TEXTS[:3] + ["Every finite integral domain is a division ring."])
    _, other = embed_and_index(changed, embedder, tmp_path / "cache", tmp_path / "c", tmp_path / "a")
    assert not other.index_reused and (other.cached, other.embedded) == (3, 1)
    _, options = embed_and_index(table, embedder, tmp_path / "cache", tmp_path / "d", tmp_path / "a", M=16)
    assert not options.index_reused and VectorIndex.open(tmp_path / "d", embedder).sidecar["M"] == 16


@pytest.mark.slow  # two worker processes, each loading torch and the model: ~15 s
def test_worker_processes_give_the_same_vectors(embedder):
    pooled = SentenceTransformerEmbedder(workers=2, parallel_min=1, batch_tokens=512, progress=False)
    try:
        ours = pooled.encode(TEXTS)
    finally:
        pooled.close()
    bare = embedder.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert (ours * bare).sum(axis=1).min() >= 0.9999


class FakeEmbedder:
    """A deterministic stand-in at the process boundary: vector = (len, 1, 0) normalised."""

    name, revision, dim = "fake", "r1", 3

    def __init__(self, dim_out: int = 3):
        self.dim_out, self.calls = dim_out, []

    def encode(self, texts):
        self.calls.append(list(texts))
        v = np.array([[len(t), 1, 0, 0][: self.dim_out] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_embed_texts_contract_with_a_fake_embedder(tmp_path):
    plain = pa.table({"text": ["a", "bb", "a"]})  # no sha256 column: computed
    fake = FakeEmbedder()
    v = embed_texts(plain, fake, tmp_path)
    assert sorted(fake.calls[0]) == ["a", "bb"] and len(fake.calls) == 1 and np.array_equal(v[0], v[2])
    again = FakeEmbedder()
    assert np.array_equal(embed_texts(texts_table(["a", "bb"]), again, tmp_path), v[:2]) and again.calls == []
    with pytest.raises(EmbedderError, match=r"returned shape \(1, 4\), expected \(1, 3\)"):
        embed_texts(pa.table({"text": ["ccc"]}), FakeEmbedder(dim_out=4), None)


class InterruptedEmbedder(FakeEmbedder):
    """Fails on its `fail_on`-th encode call, like a run killed part way."""

    def __init__(self, fail_on: int):
        super().__init__()
        self.fail_on = fail_on

    def encode(self, texts):
        if len(self.calls) + 1 == self.fail_on:
            raise KeyboardInterrupt
        return super().encode(texts)


def test_chunks_are_cached_as_they_finish_so_an_interrupted_run_resumes(tmp_path):
    texts = pa.table({"text": ["x" * n for n in range(1, 8)]})
    broken = InterruptedEmbedder(fail_on=3)
    with pytest.raises(KeyboardInterrupt):
        embed_texts(texts, broken, tmp_path, chunk_texts=3)
    assert broken.calls == [["x", "xx", "xxx"], ["x" * 4, "x" * 5, "x" * 6]]  # shortest first
    resumed, stats = FakeEmbedder(), EmbedStats()
    v = embed_texts(texts, resumed, tmp_path, stats, chunk_texts=3)
    assert resumed.calls == [["x" * 7]] and (stats.cached, stats.embedded) == (6, 1)
    assert np.array_equal(v, FakeEmbedder().encode(texts.column("text").to_pylist()))


def test_int8_embedder_has_its_own_name_and_close_vectors(tmp_path):
    from mathindex.embed import SentenceTransformerEmbedder
    from tests.models import cut_minilm

    path = cut_minilm(tmp_path / "minilm-1layer", 1)
    fp32 = SentenceTransformerEmbedder(str(path), progress=False)
    int8 = SentenceTransformerEmbedder(str(path), progress=False, int8=True)
    assert int8.name == fp32.name + "+int8" and int8.revision == fp32.revision
    texts = ["theorem Nat.add_comm (n m : ℕ) : n + m = m + n", "a lattice is a poset with joins and meets"]
    a, b = fp32.encode(texts), int8.encode(texts)
    assert a.shape == b.shape == (2, 384)
    cos = (a * b).sum(axis=1)
    assert (cos > 0.9).all() and not np.allclose(a, b)  # quantised, yet close


def test_bf16_embedder_has_its_own_name_and_near_fp32_vectors(tmp_path):
    """bf16 (torch autocast) is another model name, runs torch whatever backend was asked, and its
    vectors are within rounding of fp32's; the engine reads the precision back from the name."""
    from mathindex.embed import SentenceTransformerEmbedder
    from mathindex.embed.embedder import EMBED_BACKEND, EmbedderError, precision_of, query_encoding
    from tests.models import cut_minilm

    path = cut_minilm(tmp_path / "minilm-1layer", 1)
    fp32 = SentenceTransformerEmbedder(str(path), progress=False)
    bf16 = SentenceTransformerEmbedder(str(path), progress=False, bf16=True, backend="onnx", onnx_dir=tmp_path / "onnx")
    assert bf16.name == fp32.name + "+bf16" and bf16.revision == fp32.revision and bf16.backend == "torch"
    assert precision_of(bf16.name) == ("bf16", "torch") and precision_of(fp32.name)[0] == "fp32"
    assert query_encoding(bf16.name) == query_encoding(fp32.name) == ("fp32", EMBED_BACKEND)  # queries at fp32
    assert query_encoding(fp32.name + "+onnx-int8") == ("int8", "onnx")
    texts = ["theorem Nat.add_comm (n m : ℕ) : n + m = m + n", "a lattice is a poset with joins and meets"]
    a, b = fp32.encode(texts), bf16.encode(texts)
    cos = (a * b).sum(axis=1)
    assert (cos > 0.999).all() and not np.array_equal(a, b)  # rounded products, yet the same vectors to 1e-3
    with pytest.raises(EmbedderError, match="bf16 or int8"):
        SentenceTransformerEmbedder(str(path), progress=False, bf16=True, int8=True)
