"""The embed stage in bounded memory (issue 32): the cache's key-only mask (`contains`) and its
chunked reads (`read`) agree with `lookup`; the index read from the cache in small chunks has the
same bytes as one built from one array; the exact recall search gives IndexFlatIP's results; a
release's index reads its vectors a block at a time."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow as pa

from mathindex.embed import embedder as embedder_module
from mathindex.embed import truth, vector_index, vector_rows
from mathindex.embed.embedder import EmbeddingCache, cache_texts, embed_texts, text_keys
from mathindex.embed.truth import exact_neighbours
from mathindex.embed.vector_index import INDEX_FILES, VectorIndex, embed_and_index
from mathindex.embed.vector_rows import VectorRows

DIM = 8


class SeededEmbedder:
    """A unit vector per text from its hash: deterministic, any dimension, no model."""

    name, revision, dim = "seeded-test-embedder", "r1", DIM

    def __init__(self):
        self.encoded: list[str] = []

    def encode(self, texts):
        self.encoded += texts
        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little") for t in texts]
        v = np.stack([np.random.default_rng(s).standard_normal(DIM) for s in seeds]).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _keys(texts: list[str]) -> np.ndarray:
    return np.array([hashlib.sha256(t.encode()).digest() for t in texts], dtype="S32")


def _cache_in_shards(tmp_path, texts: list[str], shard: int) -> EmbeddingCache:
    cache = EmbeddingCache(tmp_path, SeededEmbedder.name, SeededEmbedder.revision, DIM)
    for start in range(0, len(texts), shard):
        part = texts[start : start + shard]
        cache.add(_keys(part), SeededEmbedder().encode(part))
    return cache


def test_contains_and_read_agree_with_lookup(tmp_path):
    stored = [f"text {i}" for i in range(50)]
    cache = _cache_in_shards(tmp_path, stored, 7)
    assert len(cache.shards()) == 8
    rng = np.random.default_rng(0)
    asked = [stored[i] for i in rng.integers(0, 50, 80)] + [f"absent {i}" for i in range(5)]
    asked = [asked[i] for i in rng.permutation(len(asked))]  # repeats, absent keys, any order
    keys = _keys(asked)
    found, vectors = cache.lookup(keys)
    assert np.array_equal(cache.contains(keys), found) and found.sum() == 80
    for chunk in (1, 3, 1000):
        out = np.full((len(keys), DIM), -9, dtype=np.float32)
        assert np.array_equal(cache.read(keys, out, chunk), found)
        assert out[found].tobytes() == vectors.tobytes() and np.all(out[~found] == -9)
    empty = EmbeddingCache(tmp_path / "none", SeededEmbedder.name, SeededEmbedder.revision, DIM)
    assert not empty.contains(keys).any() and not empty.lookup(keys)[0].any()


def test_text_keys_are_the_hashes_slice_by_slice(monkeypatch):
    texts = [f"t{i}" for i in range(10)]
    monkeypatch.setattr(embedder_module, "KEY_SLICE", 3)
    hexes = pa.table({"text": texts, "sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts]})
    assert text_keys(hexes).tobytes() == text_keys(pa.table({"text": texts})).tobytes() == _keys(texts).tobytes()


def test_cache_texts_embeds_what_is_missing_and_reads_nothing_back(tmp_path):
    cache = _cache_in_shards(tmp_path, ["a", "b"], 1)
    fake = SeededEmbedder()
    stats = cache_texts(pa.table({"text": ["a", "c", "c", "dd"]}), fake, tmp_path)
    assert sorted(fake.encoded) == ["c", "dd"] and (stats.rows, stats.distinct, stats.cached, stats.embedded) == (4, 3, 1, 2)
    assert cache.contains(_keys(["a", "b", "c", "dd"])).all()


def test_the_index_read_from_the_cache_in_small_chunks_is_the_one_built_from_one_array(tmp_path, monkeypatch):
    texts = [f"statement number {i}" for i in range(300)]
    ids = np.arange(300, dtype=np.int64)[::-1] * 3  # given out of id order
    table = pa.table({"text_id": ids, "text": texts, "sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts]})
    _cache_in_shards(tmp_path / "cache", texts[::2], 17)  # half cached, in many shards
    monkeypatch.setattr(embedder_module, "READ_ROWS", 5)
    from_cache, stats = embed_and_index(table, SeededEmbedder(), tmp_path / "cache", tmp_path / "a", recall_queries=50)
    assert (stats.cached, stats.embedded) == (150, 150)
    whole = SeededEmbedder().encode(texts)  # one array, every row embedded in memory
    assert embed_texts(table, SeededEmbedder(), None).tobytes() == whole.tobytes()
    from_array = VectorIndex.build(whole, ids, SeededEmbedder(), tmp_path / "b", recall_queries=50,
                                   content_key=from_cache.sidecar["content_key"], shas=table.column("sha256").to_pylist())
    for name in INDEX_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert from_array.sidecar["count"] == 300


def test_the_exact_search_gives_index_flat_ips_bytes():
    import faiss  # as the index modules: loaded where used

    x = np.random.default_rng(3).standard_normal((2000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x[1500:] = x[:500]  # exact ties
    for queries in (x[:7], x[::3]):  # under and over FAISS's BLAS threshold (20 queries)
        flat = faiss.IndexFlatIP(32)
        flat.add(x)
        want = flat.search(queries, 33)
        got = exact_neighbours(x, queries, 33)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


def test_the_content_key_hashed_a_slice_at_a_time_is_the_whole_join(monkeypatch):
    shas = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(10)]
    table = pa.table({"text_id": np.arange(10, dtype=np.int64), "sha256": shas})
    info = {"name": "m", "revision": "r", "dim": DIM}
    whole = hashlib.sha256(json.dumps({"embedder": info, "options": {}}, sort_keys=True).encode())
    whole.update(np.arange(10, dtype=np.int64).tobytes())
    whole.update("\n".join(shas).encode())
    monkeypatch.setattr(vector_index, "KEY_SLICE", 3)
    assert vector_index.content_key(table, info, {}) == whole.hexdigest()


def test_a_release_index_reads_the_cache_a_block_at_a_time_with_the_whole_arrays_results(tmp_path, monkeypatch):
    import faiss  # as the index modules: loaded where used

    texts = [f"lemma {i} about rings" for i in range(600)]
    table = pa.table({"text_id": np.arange(600, dtype=np.int64), "text": texts,
                      "sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts]})
    monkeypatch.setattr(vector_rows, "ADD_ROWS", 128)
    monkeypatch.setattr(truth, "ADD_ROWS", 128)
    taken: list[int] = []
    take = VectorRows.take
    monkeypatch.setattr(VectorRows, "take", lambda self, positions: taken.append(len(positions)) or take(self, positions))
    built, _ = embed_and_index(table, SeededEmbedder(), tmp_path / "cache", tmp_path / "a", recall_queries=100)
    assert taken and max(taken) <= 128  # never every vector at once
    whole = SeededEmbedder().encode(texts)
    again = VectorIndex.build(whole, table.column("text_id").to_numpy(), SeededEmbedder(), tmp_path / "b",
                              recall_queries=100, content_key=built.sidecar["content_key"],
                              shas=table.column("sha256").to_pylist())
    for name in INDEX_FILES:  # the cache read in blocks, the array cut in blocks: one index
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert again.sidecar["flat_float32_bytes"] == whole.nbytes and again.sidecar["recall_at_10"] > 0.9
    scores, rows = exact_neighbours(VectorRows.of_array(whole), whole[::9], 20)  # five blocks merged
    want = faiss.knn(whole[::9], whole, 20, faiss.METRIC_INNER_PRODUCT)
    assert np.array_equal(rows, want[1]) and np.allclose(scores, want[0], atol=1e-6)
