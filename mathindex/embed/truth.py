"""The ground truth of a vector index's recall figure: the exact neighbours of a sample of its rows.

`VectorIndex.build` and `update` measure recall@10 of the HNSW graph against exact inner-product
search over every live vector, for a sample of the rows as queries. On whole Mathlib the exact
search is most of an update's cost (1,000 queries x 389 k vectors: 12-30 s on 2 cores) although a
nightly appends a handful of vectors. So the truth is written beside the index (`TRUTH_FILE`: each
query's text id and sha256, its TRUTH_K exact neighbours and their scores) and an update carries
it: a query keeps its list less the rows that left, merged with its exact scores against the
appended vectors, cut after its last survivor (below it an unlisted old row might rank higher): exact,
as long as at least `k` + 1 entries remain; queries that are new, whose text changed, or whose list
ran short are searched exactly again.

The sample is chosen by content (`recall_sample`: the rows whose seeded text hash is smallest), so
a small change to the corpus changes only the few queries it touches."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.embed.vector_rows import ADD_ROWS, VectorRows, as_rows

TRUTH_FILE = "recall_truth.parquet"
TRUTH_K = 32  # neighbours kept per query: rows can leave before a list is too short to stay exact
TRUTH = pa.schema([
    pa.field("text_id", pa.int64(), nullable=False),  # the query row's text id
    pa.field("sha256", pa.string()),  # its text's sha256 (a changed text is a new query)
    pa.field("neighbours", pa.list_(pa.int64()), nullable=False),  # exact top TRUTH_K + 1 text ids, the query's own among them
    pa.field("scores", pa.list_(pa.float32()), nullable=False),  # their inner products, descending
])


def recall_sample(ids: np.ndarray, shas: list[str | None], n: int, seed: int) -> np.ndarray:
    """Positions (ascending) of the `n` rows whose text hash, mixed with the seed, is smallest (ties
    by text id): the first 64 bits of each text's sha256 xor a seed-derived mask, so the order is a
    seeded draw that a small change to the rows leaves almost as it was. Rows without a text hash (an
    index built before hashes were stored) are drawn by a seeded generator instead."""
    if n >= len(ids):
        return np.arange(len(ids))
    if any(s is None for s in shas):
        return np.sort(np.random.default_rng(seed).choice(len(ids), size=n, replace=False))
    mask = np.frombuffer(hashlib.sha256(f"recall sample {seed}".encode()).digest()[:8], dtype=">u8")[0]
    keys = np.frombuffer(bytes.fromhex("".join(s[:16] for s in shas)), dtype=">u8").astype(np.uint64) ^ np.uint64(mask)
    order = np.lexsort((np.asarray(ids, dtype=np.int64), keys))[:n]
    return np.sort(order)


def exact_neighbours(vectors: "np.ndarray | VectorRows", queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, row numbers) of the exact top-k inner-product neighbours: `IndexFlatIP`'s search
    (the same `knn_inner_product`, the same bytes) on `vectors` where they lie, without the
    index's copy of every vector. Rows given as `VectorRows` are searched a block at a time, the
    blocks' lists merged in FAISS's own result heap."""
    import faiss  # on first use, as in vector_index.py: a server sets OMP_NUM_THREADS before FAISS loads

    if not isinstance(vectors, VectorRows):
        return faiss.knn(queries, vectors, k, faiss.METRIC_INNER_PRODUCT)
    if len(vectors) <= ADD_ROWS:
        return faiss.knn(queries, vectors.take(np.arange(len(vectors))), k, faiss.METRIC_INNER_PRODUCT)
    heap = faiss.ResultHeap(len(queries), k, keep_max=True)
    for start, block in vectors.blocks():
        scores, rows = faiss.knn(queries, block, min(k, len(block)), faiss.METRIC_INNER_PRODUCT)
        heap.add_result(scores, np.where(rows < 0, -1, rows + start))
    heap.finalize()
    return heap.D, heap.I


def exact_truth(vectors: "np.ndarray | VectorRows", ids: np.ndarray, shas: list[str | None], sample: np.ndarray) -> pa.Table:
    """The TRUTH table of the sample's rows, searched exactly over every vector."""
    if not len(sample):
        return _table([], [], [], [])
    rows = as_rows(vectors)
    k = min(TRUTH_K + 1, len(rows))
    scores, found = exact_neighbours(rows, rows.take(sample), k)
    return _table(ids[sample], [shas[i] for i in sample], ids[found], scores)


def carried_truth(previous: Path, vectors: "np.ndarray | VectorRows", ids: np.ndarray, shas: list[str | None], sample: np.ndarray,
                  appended: np.ndarray, left: set[int], k: int) -> tuple[pa.Table, int]:
    """(the TRUTH table of today's sample, how many queries were searched exactly again) from the
    previous index's truth file: `appended` are positions of `vectors` added since, `left` the text
    ids whose old rows left (deleted or replaced by a changed text). Without a truth file every query
    is searched exactly."""
    path = Path(previous) / TRUTH_FILE
    if not path.is_file():
        return exact_truth(vectors, ids, shas, sample), len(sample)
    old = pq.read_table(path)
    vectors = as_rows(vectors)
    queries = vectors.take(sample)
    before = {int(t): (s, n, d) for t, s, n, d in zip(old.column("text_id").to_numpy(), old.column("sha256").to_pylist(),
                                                      old.column("neighbours").to_pylist(), old.column("scores").to_pylist())}
    new_scores = queries @ vectors.take(appended).T if len(appended) else np.zeros((len(sample), 0), np.float32)
    new_ids = ids[appended]
    width = min(TRUTH_K + 1, len(vectors))
    lists: list[tuple[np.ndarray, np.ndarray] | None] = []
    for q, pos in enumerate(sample):
        got = before.get(int(ids[pos]))
        if got is None or got[0] != shas[pos]:
            lists.append(None)
            continue
        kept = [(i, s) for i, s in zip(got[1], got[2]) if i not in left]
        if len(kept) < min(k + 1, width):
            lists.append(None)  # too few survivors to know the top k + 1 exactly
            continue
        cand_ids = np.concatenate([np.asarray([i for i, _ in kept], np.int64), new_ids])
        cand_scores = np.concatenate([np.asarray([s for _, s in kept], np.float32), new_scores[q]])
        order = np.lexsort((cand_ids, -cand_scores))
        # exact down to the last survivor: a survivor the old list did not hold scores below it, so
        # an appended vector ranked after it might not be in its true place
        last = int(np.flatnonzero(order < len(kept))[-1])
        order = order[: min(width, last + 1)]
        lists.append((cand_ids[order], cand_scores[order]))
    redo = [q for q, got in enumerate(lists) if got is None]
    if redo:
        s, r = exact_neighbours(vectors, queries[redo], width)
        for j, q in enumerate(redo):
            lists[q] = (ids[r[j]], s[j])
    return _table(ids[sample], [shas[i] for i in sample], [n for n, _ in lists], [d for _, d in lists]), len(redo)


def neighbour_matrix(truth: pa.Table, k: int) -> np.ndarray:
    """The truth's first k + 1 neighbour ids per query as a matrix (-1 where a list is shorter)."""
    out = np.full((truth.num_rows, k + 1), -1, dtype=np.int64)
    for q, row in enumerate(truth.column("neighbours").to_pylist()):
        out[q, : min(len(row), k + 1)] = row[: k + 1]
    return out


def write_truth(truth: pa.Table, path: Path) -> None:
    pq.write_table(truth, path, compression="zstd")


def _table(query_ids, query_shas, neighbours, scores) -> pa.Table:
    return pa.table({"text_id": np.asarray(query_ids, np.int64), "sha256": list(query_shas),
                     "neighbours": [np.asarray(n, np.int64) for n in neighbours],
                     "scores": [np.asarray(s, np.float32) for s in scores]}, schema=TRUTH)
