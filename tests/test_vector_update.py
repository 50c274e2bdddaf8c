"""Updating a release's vector index with the texts a nightly changed, instead of rebuilding it."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathindex.embed.vector_index import IDS_FILE, INDEX_FILE, SIDECAR_FILE, VectorIndex, embed_and_index
from mathindex.embed.texts import text_id, text_sha256
from mathindex.schemas.embed import EMBEDDING_TEXTS

INFO = {"name": "test-model", "revision": "r1", "dim": 32}


def unit(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, INFO["dim"])).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def sha(i: int, version: int = 0) -> str:
    return hashlib.sha256(f"text {i} v{version}".encode()).hexdigest()


@pytest.fixture()
def base(tmp_path):
    """1,000 vectors with their text hashes, built into tmp_path/a."""
    x, ids = unit(1000, 1), np.arange(1000, dtype=np.int64) * 31 - 500
    shas = [sha(i) for i in range(1000)]
    VectorIndex.build(x, ids, INFO, tmp_path / "a", recall_queries=200, shas=shas)
    return x, ids, shas


def changed(x, ids, shas):
    """Row 3's text changed (a new vector, the same id), row 7 removed, one text added."""
    x2, ids2, shas2 = x.copy(), ids.copy(), list(shas)
    x2[3] = unit(1, 99)[0]
    shas2[3] = sha(3, 1)
    keep = np.ones(len(ids), dtype=bool)
    keep[7] = False
    x2, ids2, shas2 = x2[keep], ids2[keep], [s for s, k in zip(shas2, keep) if k]
    return (np.vstack([x2, unit(1, 100)]), np.append(ids2, 10**9), shas2 + [sha(10**9)])


def test_an_update_tombstones_changed_and_removed_rows_and_appends_new_ones(base, tmp_path):
    x, ids, shas = base
    x2, ids2, shas2 = changed(x, ids, shas)
    updated = VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "b", recall_queries=200)
    assert updated is not None
    side = updated.sidecar
    assert (side["count"], side["rows"], side["deleted"]) == (1000, 1002, 2)
    assert side["update"]["appended"] == 2 and side["update"]["deleted"] == 2 and side["recall_at_10"] >= 0.9
    index = VectorIndex.open(tmp_path / "b", INFO)
    assert index.count == 1000
    found, _ = index.search(np.vstack([x[7], x[3], x2[3], x2[-1]]), 5)
    assert ids[7] not in found[0]  # a removed text is never found
    assert found[1][0] != ids[3]  # the old vector of a changed text is gone: only its new one is there
    assert found[2][0] == ids[3] and found[3][0] == 10**9
    rows = pq.read_table(tmp_path / "b" / IDS_FILE)
    assert rows.column("deleted").to_pylist().count(True) == 2
    assert rows.column("sha256").to_pylist()[-2:] == [sha(3, 1), sha(10**9)]  # appended in id order
    # the same update again gives the same bytes
    VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "c", recall_queries=200)
    for f in (INDEX_FILE, IDS_FILE, SIDECAR_FILE):
        assert (tmp_path / "b" / f).read_bytes() == (tmp_path / "c" / f).read_bytes()


def test_updates_stop_at_the_limit_and_for_old_or_other_indexes(base, tmp_path):
    x, ids, shas = base
    x2, ids2, shas2 = changed(x, ids, shas)
    assert VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "b", limit=0.003) is None
    assert not (tmp_path / "b").exists()
    # change accumulates across updates: 4 rows now, 4 + 2 after the next, over 0.5 % of 1,000
    VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "b", limit=0.005, recall_queries=100)
    x3, shas3 = x2.copy(), list(shas2)
    x3[0], shas3[0] = unit(1, 7)[0], sha(0, 1)
    assert VectorIndex.update(tmp_path / "b", x3, ids2, shas3, INFO, tmp_path / "c", limit=0.005) is None
    assert VectorIndex.update(tmp_path / "b", x3, ids2, shas3, INFO, tmp_path / "c", limit=0.05) is not None
    assert json.loads((tmp_path / "c" / SIDECAR_FILE).read_text())["update"]["changed_since_build"] == 6
    assert VectorIndex.update(tmp_path / "a", x2, ids2, shas2, {**INFO, "revision": "r2"}, tmp_path / "d") is None
    assert VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "d", M=16) is None
    old = pq.read_table(tmp_path / "a" / IDS_FILE).select(["row", "text_id"])  # written before updates existed
    pq.write_table(old, tmp_path / "a" / IDS_FILE)
    assert VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "d") is None


class Fake:
    """A deterministic 32-dimensional embedder: the vector is a seeded function of the text."""

    name, revision, dim = INFO["name"], INFO["revision"], INFO["dim"]

    def encode(self, texts):
        return np.vstack([unit(1, int(text_sha256(t)[:8], 16))[0] for t in texts])


def texts_table(texts: dict[str, str]) -> pa.Table:
    rows = [{"text_id": text_id(n, "f"), "node_id": n, "name": n, "facet": "f", "text": t, "sha256": text_sha256(t),
             "truncated": False} for n, t in texts.items()]
    return pa.Table.from_pylist(rows, schema=EMBEDDING_TEXTS)


def test_embed_and_index_updates_the_previous_index_when_few_texts_changed(tmp_path):
    texts = {f"n{i}": f"statement number {i}" for i in range(400)}
    _, first = embed_and_index(texts_table(texts), Fake(), tmp_path / "cache", tmp_path / "a")
    assert not first.index_updated and first.embedded == 400
    texts["n5"] = "a statement that changed"
    index, stats = embed_and_index(texts_table(texts), Fake(), tmp_path / "cache", tmp_path / "b", tmp_path / "a")
    assert stats.index_updated and not stats.index_reused and stats.embedded == 1
    assert index.search(Fake().encode(["a statement that changed"]), 1)[0][0][0] == text_id("n5", "f")
    # the next no-change nightly reuses the updated index as it is
    _, again = embed_and_index(texts_table(texts), Fake(), tmp_path / "cache", tmp_path / "c", tmp_path / "b")
    assert again.index_reused and (tmp_path / "c" / INDEX_FILE).read_bytes() == (tmp_path / "b" / INDEX_FILE).read_bytes()
    # many changes: rebuilt from scratch, the same bytes as a cold build of the same texts
    many = {n: t + " (revised)" for n, t in texts.items()}
    _, rebuilt = embed_and_index(texts_table(many), Fake(), tmp_path / "cache", tmp_path / "d", tmp_path / "b")
    _, cold = embed_and_index(texts_table(many), Fake(), tmp_path / "cache", tmp_path / "e")
    assert not rebuilt.index_updated and not cold.index_updated
    assert (tmp_path / "d" / INDEX_FILE).read_bytes() == (tmp_path / "e" / INDEX_FILE).read_bytes()


def test_an_update_carries_the_recall_truth_and_it_equals_an_exact_search(base, tmp_path):
    """The recall figure's exact neighbours are carried through an update (only the queries a change
    touches are searched again), and what is carried is what exact search over the new rows gives."""
    from mathindex.embed.truth import TRUTH_FILE, exact_truth, recall_sample

    x, ids, shas = base
    x2, ids2, shas2 = changed(x, ids, shas)
    updated = VectorIndex.update(tmp_path / "a", x2, ids2, shas2, INFO, tmp_path / "b", recall_queries=200)
    searched = updated.sidecar["update"]["recall_queries_searched"]
    assert 0 <= searched < 20, "the update searched most recall queries again"
    carried = pq.read_table(tmp_path / "b" / TRUTH_FILE)
    fresh = exact_truth(x2, ids2, shas2, recall_sample(ids2, shas2, 200, 0))
    assert carried.column("text_id").to_pylist() == fresh.column("text_id").to_pylist()
    for got, want in zip(carried.column("neighbours").to_pylist(), fresh.column("neighbours").to_pylist()):
        assert len(got) >= 11 and got[:11] == want[:11]
    # the sample is chosen by content: the first build's queries are today's, but for the change
    before = set(pq.read_table(tmp_path / "a" / TRUTH_FILE).column("text_id").to_pylist())
    assert len(before ^ set(carried.column("text_id").to_pylist())) <= 4
