"""The FAISS int8 HNSW vector index: `IDMap2,HNSW<M>,SQ8` with inner product on unit vectors.

A built index is a directory with `vector.index`, the row-aligned `vector_ids.parquet` and the
sidecar `vector.json` (embedder name, revision, dim; M, efConstruction, efSearch; recall@10 against
exact search measured at build time; memory). It opens only with an embedder of the same name and
dimension, and its API returns ids and scores, never vectors.

FAISS is imported where it is used, not at the top: its OpenMP runtime reads OMP_NUM_THREADS once,
when it is loaded, and the server sets that first (serve/app.py `configure_runtime`), after
importing the modules that import this one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.embed import truth as recall_truth
from mathindex.embed.embedder import (KEY_SLICE, EmbeddingCache, EmbedStats, cache_texts, embed_texts, queries_fit,
                                      text_keys)
from mathindex.embed.vector_rows import VectorRows
from mathindex.schemas.embed import VECTOR_IDS

log = logging.getLogger(__name__)

INDEX_FILE, IDS_FILE, SIDECAR_FILE = "vector.index", "vector_ids.parquet", "vector.json"
TRUTH_FILE = recall_truth.TRUTH_FILE  # the recall figure's exact neighbours (embed.truth), carried by updates
INDEX_FILES = (INDEX_FILE, IDS_FILE, TRUTH_FILE, SIDECAR_FILE)  # an index directory's files, the sidecar last
EF_SEARCH_LADDER = (16, 32, 48, 64, 96, 128, 192, 256, 384, 512)
PLATEAU = 0.002  # when no efSearch reaches the target, recall within this of the best counts as the best


class IndexMismatchError(Exception):
    """The index was built by another embedder (name or dimension), or its files are missing."""


def embedder_info(embedder: Any) -> dict:
    """name, revision and dim of an embedder object or an info dict."""
    if isinstance(embedder, dict):
        return {"name": str(embedder["name"]), "revision": str(embedder.get("revision", "")), "dim": int(embedder["dim"])}
    return {"name": embedder.name, "revision": embedder.revision, "dim": int(embedder.dim)}


def _hnsw(index):
    import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

    return faiss.downcast_index(faiss.downcast_index(index).index)


def recall_at_k(approx_ids: np.ndarray, exact_ids: np.ndarray, self_ids: np.ndarray, k: int) -> float:
    """Mean |approx ∩ exact| / k over queries, each query's own id removed from both lists."""
    total = 0.0
    for a, e, s in zip(approx_ids, exact_ids, self_ids):
        e_set = [x for x in e if x != s and x != -1][:k]
        a_set = {x for x in a if x != s and x != -1}
        total += len(a_set.intersection(e_set)) / max(1, len(e_set))
    return total / max(1, len(approx_ids))


# An index is updated in place of a rebuild (`VectorIndex.update`) while the rows it deleted and
# appended since its last full build stay within this share of its live rows; past it, a nightly
# rebuilds the graph, so that tombstones and late insertions never make up much of it.
UPDATE_LIMIT = 0.05
RECALL_K = 10  # the sidecar's recall@10


@dataclass
class VectorIndex:
    """An opened int8 HNSW index plus its id map and sidecar; `search` gives (ids, scores).

    An updated index keeps the rows an update replaced or removed as tombstones (`deleted` in
    `vector_ids.parquet`, a count in the sidecar); searches skip them with a row selector."""

    out_dir: Path
    sidecar: dict
    _index: Any
    _live: "_LiveRows | None" = None

    @classmethod
    def build(
        cls, vectors: "np.ndarray | VectorRows", ids: np.ndarray, embedder_info_: Any, out_dir: Path, M: int = 32,
        ef_construction: int = 80, ef_search: int | None = None, target_recall: float = 0.99,
        recall_queries: int = 1000, seed: int = 0, content_key: str | None = None,
        shas: list[str] | None = None,
    ) -> "VectorIndex":
        """Build, measure recall@10 against exact search on `recall_queries` sampled vectors, and save.

        Vectors are added in ascending id order whatever order they come in, ADD_ROWS at a time
        (`vectors` may be `VectorRows` read from the embedding cache, so no float32 copy of every
        vector is held; the int8 quantiser is trained on each dimension's range, which is what
        training on every vector computes): the same (id, vector) set always gives the same HNSW
        graph and the same bytes. With `ef_search=None` the smallest
        efSearch on EF_SEARCH_LADDER that reaches `target_recall` is chosen (when none does, the
        smallest within PLATEAU of the best recall, and a warning is logged). `shas` (the texts'
        sha256, row-aligned with `vectors`) are stored with the ids, so that a later release can
        update the index instead of rebuilding it. Files are written to temporaries and renamed.
        """
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        info = embedder_info(embedder_info_)
        rows, ids = _checked(vectors, ids, info)
        shas = list(shas) if shas is not None else [None] * len(ids)
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # one add order (by id), one graph, whoever calls
            order = np.argsort(ids, kind="stable")
            rows, ids, shas = rows.permuted(order), ids[order], [shas[i] for i in order]
        t0 = time.perf_counter()
        index = faiss.index_factory(info["dim"], f"IDMap2,HNSW{M},SQ8", faiss.METRIC_INNER_PRODUCT)
        _hnsw(index).hnsw.efConstruction = ef_construction
        if len(rows):
            index.train(np.stack(rows.column_range()))  # SQ8's min-max ranges: the same as from every row
            for start, block in rows.blocks():
                index.add_with_ids(block, ids[start : start + len(block)])
        build_s = time.perf_counter() - t0
        built = cls(Path(out_dir), {}, index)
        sample = recall_truth.recall_sample(ids, shas, recall_queries, seed)
        truth = recall_truth.exact_truth(rows, ids, shas, sample)
        recall, chosen, tried = built._measure(rows.take(sample), ids[sample], truth, ef_search, target_recall)
        log.info("built %s vectors in %.1f s; recall@10 %.4f at efSearch %d", len(ids), build_s, recall, chosen)
        ids_table = pa.table({"row": np.arange(len(ids), dtype=np.int64), "text_id": ids, "sha256": shas,
                              "deleted": np.zeros(len(ids), dtype=bool)}, schema=VECTOR_IDS)
        sidecar = {
            "embedder": info, "metric": "inner_product", "normalised": True,
            "factory": f"IDMap2,HNSW{M},SQ8", "M": M, "ef_construction": ef_construction, "ef_search": chosen,
            "count": int(len(ids)), "rows": int(len(ids)), "deleted": 0, "recall_at_10": recall,
            "recall_by_ef_search": tried, "recall_queries": int(min(recall_queries, len(ids))), "recall_seed": seed,
            "flat_float32_bytes": rows.nbytes, "content_key": content_key, "update": None,
        }  # fmt: skip
        if recall < target_recall:
            log.warning("recall@10 %.4f is below the target %.2f at every efSearch tried", recall, target_recall)
        return built._save(ids_table, sidecar, truth)

    @classmethod
    def update(
        cls, previous: Path, vectors: "np.ndarray | VectorRows", ids: np.ndarray, shas: list[str], embedder_info_: Any,
        out_dir: Path, M: int = 32, ef_construction: int = 80, ef_search: int | None = None,
        target_recall: float = 0.99, recall_queries: int = 1000, seed: int = 0, content_key: str | None = None,
        limit: float = UPDATE_LIMIT,
    ) -> "VectorIndex | None":
        """The index of directory `previous` brought to the rows (`ids`, `shas`, `vectors`): rows
        whose text is gone or changed become tombstones, new texts are appended (in id order, on one
        thread, so the same update gives the same bytes), recall is measured again on the live rows
        and efSearch chosen again, as `build` does. None (nothing written) when `previous` cannot be
        updated: another embedder or index options, ids without text hashes (written before
        updates existed), or more change since its last full build than `limit` of the live rows."""
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        info = embedder_info(embedder_info_)
        rows, ids = _checked(vectors, ids, info)
        plan = _update_plan(Path(previous), ids, shas, info, M, ef_construction, limit)
        if plan is None:
            return None
        old, appended, removed, since_build = plan
        t0 = time.perf_counter()
        index = faiss.read_index(str(Path(previous) / INDEX_FILE))
        if len(appended):
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
            try:
                index.add_with_ids(rows.take(appended), ids[appended])
            finally:
                faiss.omp_set_num_threads(threads)
        deleted = old.column("deleted").to_numpy(zero_copy_only=False).copy()
        deleted[removed] = True
        row_count = len(deleted) + len(appended)
        ids_table = pa.concat_tables([
            old.set_column(old.schema.get_field_index("deleted"), "deleted", pa.array(deleted)).cast(VECTOR_IDS),
            pa.table({"row": np.arange(len(deleted), row_count, dtype=np.int64), "text_id": ids[appended],
                      "sha256": [shas[i] for i in appended], "deleted": np.zeros(len(appended), dtype=bool)},
                     schema=VECTOR_IDS),
        ]).combine_chunks()  # fmt: skip
        updated = cls(Path(out_dir), {}, index, _LiveRows.of(ids_table))
        sample = recall_truth.recall_sample(ids, shas, recall_queries, seed)
        left = set(old.column("text_id").to_numpy()[removed].tolist())
        truth, searched = recall_truth.carried_truth(previous, rows, ids, shas, sample, appended, left, RECALL_K)
        recall, chosen, tried = updated._measure(rows.take(sample), ids[sample], truth, ef_search, target_recall)
        log.info("updated the index of %s in %.1f s: %d vectors appended, %d deleted; recall@10 %.4f at efSearch %d",
                 previous, time.perf_counter() - t0, len(appended), len(removed), recall, chosen)
        prev_side = json.loads((Path(previous) / SIDECAR_FILE).read_text())
        sidecar = {
            **{k: prev_side[k] for k in ("embedder", "metric", "normalised", "factory", "M", "ef_construction")},
            "ef_search": chosen, "count": int(len(ids)), "rows": int(row_count), "deleted": int(deleted.sum()),
            "recall_at_10": recall, "recall_by_ef_search": tried, "recall_queries": int(min(recall_queries, len(ids))),
            "recall_seed": seed, "flat_float32_bytes": rows.nbytes, "content_key": content_key,
            "update": {"from": prev_side.get("content_key"), "appended": int(len(appended)),
                       "deleted": int(len(removed)), "changed_since_build": int(since_build), "limit": limit,
                       "recall_queries_searched": int(searched)},
        }  # fmt: skip
        return updated._save(ids_table, sidecar, truth)

    def _save(self, ids_table: pa.Table, sidecar: dict, truth: pa.Table) -> "VectorIndex":
        """Writes the index, its ids, the recall truth and the sidecar: every file to a temporary
        first, renames last, the sidecar (what `open` reads) last of all. No wall-clock time goes
        into the files, so rebuilds compare equal."""
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        _hnsw(self._index).hnsw.efSearch = int(sidecar["ef_search"])
        data = faiss.serialize_index(self._index).tobytes()
        vectors_bytes = sidecar["flat_float32_bytes"]
        sidecar = {**sidecar, "index_bytes": len(data),
                   "memory_ratio_to_flat": (len(data) / vectors_bytes) if vectors_bytes else None}
        out_dir = self.out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp_ids = out_dir / f".{IDS_FILE}.tmp"
        pq.write_table(ids_table, tmp_ids)
        tmp_index = out_dir / f".{INDEX_FILE}.tmp"
        tmp_index.write_bytes(data)
        tmp_truth = out_dir / f".{TRUTH_FILE}.tmp"
        recall_truth.write_truth(truth, tmp_truth)
        tmp_side = out_dir / f".{SIDECAR_FILE}.tmp"
        tmp_side.write_text(json.dumps(sidecar, indent=2, sort_keys=True) + "\n")
        os.replace(tmp_index, out_dir / INDEX_FILE)
        os.replace(tmp_ids, out_dir / IDS_FILE)
        os.replace(tmp_truth, out_dir / TRUTH_FILE)
        os.replace(tmp_side, out_dir / SIDECAR_FILE)
        self.sidecar = sidecar
        return self

    def _measure(self, queries, query_ids, truth: pa.Table, ef_search, target) -> tuple[float, int, dict]:
        """(recall@10, chosen efSearch, {efSearch: recall}) of the sample's query vectors against
        their exact neighbours (`truth`, embed.truth), each query's own row left out."""
        if truth.num_rows == 0 or len(truth.column("neighbours")[0]) < 2:
            return 1.0, ef_search or EF_SEARCH_LADDER[0], {}
        k = min(RECALL_K, len(truth.column("neighbours")[0]) - 1)
        exact = recall_truth.neighbour_matrix(truth, k)
        tried: dict[str, float] = {}
        ladder = [ef_search] if ef_search else list(EF_SEARCH_LADDER)
        chosen = ladder[-1]
        for ef in ladder:
            _hnsw(self._index).hnsw.efSearch = ef
            approx = self._search(queries, k + 1, ef)[0]
            tried[str(ef)] = round(recall_at_k(approx, exact, query_ids, k), 5)
            if tried[str(ef)] >= target:
                chosen = ef
                break
        else:  # target out of reach: the smallest efSearch within PLATEAU of the best recall seen
            best = max(tried.values())
            chosen = min(int(ef) for ef, r in tried.items() if r >= best - PLATEAU)
        return tried[str(chosen)], chosen, tried

    @classmethod
    def open(cls, out_dir: Path, embedder: Any, mmap: bool = True) -> "VectorIndex":
        """Open a built index; IndexMismatchError when `embedder` differs in name or dimension (a bf16
        index takes the queries of its model at fp32: `embedder.queries_fit`)."""
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        out_dir = Path(out_dir)
        side = out_dir / SIDECAR_FILE
        if not side.is_file() or not (out_dir / INDEX_FILE).is_file():
            raise IndexMismatchError(f"no vector index in {out_dir}")
        sidecar = json.loads(side.read_text())
        built, given = sidecar["embedder"], embedder_info(embedder)
        if not queries_fit(built["name"], given["name"]) or int(built["dim"]) != given["dim"]:
            raise IndexMismatchError(
                f"vector index in {out_dir} was built with {built['name']} (dim {built['dim']}), "
                f"not {given['name']} (dim {given['dim']}); re-embed with `mathindex reembed`"
            )
        if given["revision"] and built.get("revision") and built["revision"] != given["revision"]:
            log.warning("vector index revision %s differs from embedder revision %s", built["revision"][:12], given["revision"][:12])
        flags = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY if mmap else 0
        index = faiss.read_index(str(out_dir / INDEX_FILE), flags)
        _hnsw(index).hnsw.efSearch = int(sidecar["ef_search"])
        live = None
        if sidecar.get("deleted"):
            live = _LiveRows.of(pq.read_table(out_dir / IDS_FILE, columns=["text_id", "deleted"]))
        return cls(out_dir, sidecar, index, live)

    @property
    def count(self) -> int:
        """Live vectors (rows an update deleted are not counted)."""
        return int(self._index.ntotal) - (self._live.deleted if self._live is not None else 0)

    def search(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64, scores float32), each (n_queries, k), best first; -1 ids pad missing hits."""
        q = np.ascontiguousarray(np.atleast_2d(query_vectors), dtype=np.float32)
        dim = int(self.sidecar["embedder"]["dim"])
        if q.shape[1] != dim:
            raise IndexMismatchError(f"query vectors have dimension {q.shape[1]}, index has {dim}")
        if self.count == 0:
            return np.full((len(q), k), -1, dtype=np.int64), np.zeros((len(q), k), dtype=np.float32)
        return self._search(q, k, int(_hnsw(self._index).hnsw.efSearch))

    def _search(self, q: np.ndarray, k: int, ef: int) -> tuple[np.ndarray, np.ndarray]:
        if self._live is None:
            scores, ids = self._index.search(q, k)
            return ids.astype(np.int64), scores.astype(np.float32)
        return self._live.search(_hnsw(self._index), q, k, ef)


class _LiveRows:
    """The rows of an updated index that searches may return: a faiss row selector over the inner
    HNSW index (rows, not ids: a changed text's old and new vector share its id) and the row -> id map."""

    def __init__(self, text_ids: np.ndarray, deleted: np.ndarray):
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        self.text_ids = np.asarray(text_ids, dtype=np.int64)
        self.deleted = int(deleted.sum())
        self._bits = np.packbits(~deleted, bitorder="little")  # kept alive: the selector points into it
        self._selector = faiss.IDSelectorBitmap(len(deleted), faiss.swig_ptr(self._bits))

    @classmethod
    def of(cls, ids_table: pa.Table) -> "_LiveRows":
        return cls(ids_table.column("text_id").to_numpy(), ids_table.column("deleted").to_numpy(zero_copy_only=False))

    def search(self, hnsw, q: np.ndarray, k: int, ef: int) -> tuple[np.ndarray, np.ndarray]:
        import faiss  # on first use: see the module docstring (OMP_NUM_THREADS)

        params = faiss.SearchParametersHNSW()
        params.efSearch = ef
        params.sel = self._selector
        scores, rows = hnsw.search(q, k, params=params)
        ids = np.where(rows >= 0, self.text_ids[np.clip(rows, 0, None)], -1)
        return ids.astype(np.int64), scores.astype(np.float32)


def _checked(vectors: "np.ndarray | VectorRows", ids: np.ndarray, info: dict) -> tuple[VectorRows, np.ndarray]:
    """The vectors as `VectorRows` and the ids as int64, or a one-line error for a shape or id problem."""
    if not isinstance(vectors, VectorRows):
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != info["dim"]:
            raise IndexMismatchError(f"vectors have shape {vectors.shape}, embedder {info['name']} has dimension {info['dim']}")
        vectors = VectorRows.of_array(vectors)
    elif vectors.dim != info["dim"]:
        raise IndexMismatchError(f"vectors have dimension {vectors.dim}, embedder {info['name']} has dimension {info['dim']}")
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    if len(ids) != len(vectors):
        raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
    if len(np.unique(ids)) != len(ids):
        raise ValueError("ids are not unique")
    return vectors, ids


def _update_plan(previous: Path, ids: np.ndarray, shas: list[str], info: dict, M: int, ef_construction: int,
                 limit: float) -> tuple[pa.Table, np.ndarray, np.ndarray, int] | None:
    """(the previous ids table, positions of `ids` to append in id order, previous rows to delete,
    change since the last full build) when `previous` can be updated to these rows, else None with
    the reason logged."""
    try:
        side = json.loads((previous / SIDECAR_FILE).read_text())
        old = pq.read_table(previous / IDS_FILE)
    except (OSError, ValueError) as exc:
        log.info("index of %s not updatable: %s", previous, exc)
        return None
    if side.get("embedder") != info or (side.get("M"), side.get("ef_construction")) != (M, ef_construction):
        log.info("index of %s not updatable: another embedder or index options", previous)
        return None
    if "sha256" not in old.column_names or old.column("sha256").null_count:
        log.info("index of %s not updatable: its ids carry no text hashes (an older release)", previous)
        return None
    prev = pl.from_arrow(old.select(["row", "text_id", "sha256", "deleted"])).filter(~pl.col("deleted"))
    cur = pl.DataFrame({"text_id": ids, "sha256": pl.Series(shas, dtype=pl.String),
                        "pos": np.arange(len(ids), dtype=np.int64)})
    removed = prev.join(cur, on=["text_id", "sha256"], how="anti").get_column("row").sort().to_numpy()
    appended = cur.join(prev, on=["text_id", "sha256"], how="anti").sort("text_id").get_column("pos").to_numpy()
    since_build = int((side.get("update") or {}).get("changed_since_build", 0)) + len(removed) + len(appended)
    if since_build > limit * max(1, len(ids)):
        log.info("index of %s not updated: %d rows changed since its last full build, over %.0f %% of %d",
                 previous, since_build, 100 * limit, len(ids))
        return None
    return old, appended, removed, since_build


def content_key(texts: pa.Table, info: dict, index_options: dict) -> str:
    """sha256 of everything an index build depends on: the embedder, the index options and the
    (text_id, text sha256) rows in order. Equal keys mean an identical index can be reused."""
    h = hashlib.sha256(json.dumps({"embedder": info, "options": index_options}, sort_keys=True).encode())
    h.update(np.ascontiguousarray(texts.column("text_id").to_numpy(), dtype=np.int64).tobytes())
    shas = texts.column("sha256")
    for start in range(0, len(shas), KEY_SLICE):  # "\n".join of every sha256, a slice at a time
        h.update((("\n" if start else "") + "\n".join(shas.slice(start, KEY_SLICE).to_pylist())).encode())
    return h.hexdigest()


def reusable(previous: Path | None, key: str) -> bool:
    """Whether the index directory `previous` was built with content key `key` and has its files
    (what `reuse_index` links)."""
    if previous is None:
        return False
    try:
        if json.loads((Path(previous) / SIDECAR_FILE).read_text()).get("content_key") != key:
            return False
    except (OSError, ValueError):
        return False
    return all((Path(previous) / f).is_file() for f in (INDEX_FILE, IDS_FILE))


def reuse_index(previous: Path, key: str, out_dir: Path) -> bool:
    """Link (or copy) the index files of `previous` into `out_dir` when its sidecar has content key
    `key`; False (nothing written) otherwise. Published files are never modified in place (every
    write is a temporary renamed over), so hard links are safe; the caller checks the files against
    their release's manifest first (`tasks.embed.reusable_index`), so damage is never linked on."""
    if not reusable(previous, key):
        return False
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (f for f in INDEX_FILES if (Path(previous) / f).is_file()):  # the sidecar (what `open` reads) last
        tmp = out_dir / f".{name}.tmp"
        tmp.unlink(missing_ok=True)
        try:
            os.link(Path(previous) / name, tmp)
        except OSError:
            shutil.copy2(Path(previous) / name, tmp)
        os.replace(tmp, out_dir / name)
    return True


def embed_and_index(
    texts, embedder, cache_dir: Path | None, out_dir: Path, previous: Path | None = None, **index_options,
) -> tuple["VectorIndex", Any]:
    """Embed an EMBEDDING_TEXTS table (cache-aware) and build its index in `out_dir`: (index, EmbedStats).

    When `previous` (the vector directory of the last release) was built from the same texts, embedder
    and options, its index is reused as it is: a no-change rebuild neither embeds nor rebuilds HNSW.
    When a few texts changed (`UPDATE_LIMIT`), that index is updated: only the new texts are
    embedded and inserted, the old rows become tombstones (`VectorIndex.update`).
    The reembed flow passes an existing release's `embedding_texts` table and a new embedder. Texts
    are taken in text_id order, whatever order the table has, so both flows build the same index.
    """
    t0 = time.perf_counter()
    texts = texts.sort_by("text_id")  # the release flow's (node_id, facet) order and a table's are one
    stats = EmbedStats(rows=texts.num_rows)
    key = content_key(texts, embedder_info(embedder), index_options)
    if previous is not None and reuse_index(previous, key, out_dir):
        stats.index_reused, stats.seconds = True, time.perf_counter() - t0
        log.info("vector index reused from %s (same texts, embedder and options)", previous)
        return VectorIndex.open(out_dir, embedder), stats
    if cache_dir is None or not texts.num_rows:
        vectors = embed_texts(texts, embedder, cache_dir, stats)  # held in memory: no cache to read back from
    else:  # embedded into the cache, then read back a block at a time by the index build
        keys = text_keys(texts)
        cache_texts(texts, embedder, cache_dir, stats, keys=keys)
        vectors = VectorRows.of_cache(EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim), keys)
    ids, shas = texts.column("text_id").to_numpy(), texts.column("sha256").to_pylist()
    if previous is not None:
        index = VectorIndex.update(previous, vectors, ids, shas, embedder, out_dir, content_key=key, **index_options)
        if index is not None:
            stats.index_updated, stats.seconds = True, time.perf_counter() - t0
            return index, stats
    index = VectorIndex.build(vectors, ids, embedder, out_dir, content_key=key, shas=shas, **index_options)
    return index, stats
