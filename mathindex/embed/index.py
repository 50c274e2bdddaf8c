"""The FAISS int8 HNSW vector index: `IDMap2,HNSW<M>,SQ8` with inner product on unit vectors.

A built index is a directory with `vector.index`, the row-aligned `vector_ids.parquet` and the
sidecar `vector.json` (embedder name, revision, dim; M, efConstruction, efSearch; recall@10 against
exact search measured at build time; memory). It opens only with an embedder of the same name and
dimension, and its API returns ids and scores, never vectors.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.schemas.embed import VECTOR_IDS

log = logging.getLogger(__name__)

INDEX_FILE, IDS_FILE, SIDECAR_FILE = "vector.index", "vector_ids.parquet", "vector.json"
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
    import faiss

    return faiss.downcast_index(faiss.downcast_index(index).index)


def exact_neighbours(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of the exact top-k inner-product neighbours (`IndexFlatIP`)."""
    import faiss

    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    return flat.search(queries, k)[1]


def recall_at_k(approx_ids: np.ndarray, exact_ids: np.ndarray, self_ids: np.ndarray, k: int) -> float:
    """Mean |approx ∩ exact| / k over queries, each query's own id removed from both lists."""
    total = 0.0
    for a, e, s in zip(approx_ids, exact_ids, self_ids):
        e_set = [x for x in e if x != s and x != -1][:k]
        a_set = {x for x in a if x != s and x != -1}
        total += len(a_set.intersection(e_set)) / max(1, len(e_set))
    return total / max(1, len(approx_ids))


@dataclass
class VectorIndex:
    """An opened int8 HNSW index plus its id map and sidecar; `search` gives (ids, scores)."""

    out_dir: Path
    sidecar: dict
    _index: Any

    @classmethod
    def build(
        cls, vectors: np.ndarray, ids: np.ndarray, embedder_info_: Any, out_dir: Path, M: int = 32,
        ef_construction: int = 80, ef_search: int | None = None, target_recall: float = 0.99,
        recall_queries: int = 1000, seed: int = 0, content_key: str | None = None,
    ) -> "VectorIndex":
        """Build, measure recall@10 against exact search on `recall_queries` sampled vectors, and save.

        Vectors are added in ascending id order whatever order they come in: the same (id, vector)
        set always gives the same HNSW graph and the same bytes. With `ef_search=None` the smallest efSearch on EF_SEARCH_LADDER that reaches `target_recall`
        is chosen (when none does, the smallest within PLATEAU of the best recall, and a warning is
        logged). Files are written to temporaries and renamed.
        """
        import faiss

        info = embedder_info(embedder_info_)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if vectors.ndim != 2 or vectors.shape[1] != info["dim"]:
            raise IndexMismatchError(f"vectors have shape {vectors.shape}, embedder {info['name']} has dimension {info['dim']}")
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        if len(np.unique(ids)) != len(ids):
            raise ValueError("ids are not unique")
        order = np.argsort(ids, kind="stable")  # one add order (by id), one graph, whoever calls
        vectors, ids = vectors[order], ids[order]
        t0 = time.perf_counter()
        index = faiss.index_factory(info["dim"], f"IDMap2,HNSW{M},SQ8", faiss.METRIC_INNER_PRODUCT)
        _hnsw(index).hnsw.efConstruction = ef_construction
        if len(vectors):
            index.train(vectors)
            index.add_with_ids(vectors, ids)
        build_s = time.perf_counter() - t0
        recall, chosen, tried = cls._measure(index, vectors, ids, ef_search, target_recall, recall_queries, seed)
        _hnsw(index).hnsw.efSearch = chosen
        if recall < target_recall:
            log.warning("recall@10 %.4f is below the target %.2f at every efSearch tried", recall, target_recall)
        data = faiss.serialize_index(index).tobytes()
        sidecar = {
            "embedder": info, "metric": "inner_product", "normalised": True,
            "factory": f"IDMap2,HNSW{M},SQ8", "M": M, "ef_construction": ef_construction, "ef_search": chosen,
            "count": int(len(ids)), "recall_at_10": recall, "recall_by_ef_search": tried,
            "recall_queries": int(min(recall_queries, len(ids))), "recall_seed": seed,
            "index_bytes": len(data), "flat_float32_bytes": int(vectors.nbytes),
            "memory_ratio_to_flat": (len(data) / vectors.nbytes) if vectors.nbytes else None,
            "build_seconds": round(build_s, 3), "content_key": content_key,
        }
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        log.info("built %s vectors in %.1f s; recall@10 %.4f at efSearch %d", len(ids), build_s, recall, chosen)
        sidecar.pop("build_seconds")  # wall-clock time stays out of the files, so rebuilds compare equal
        # every file goes to a temporary first; renames come last, the sidecar (what `open` reads) last of all
        ids_table = pa.table({"row": np.arange(len(ids), dtype=np.int64), "text_id": ids}, schema=VECTOR_IDS)
        tmp_ids = out_dir / f".{IDS_FILE}.tmp"
        pq.write_table(ids_table, tmp_ids)
        tmp_index = out_dir / f".{INDEX_FILE}.tmp"
        tmp_index.write_bytes(data)
        tmp_side = out_dir / f".{SIDECAR_FILE}.tmp"
        tmp_side.write_text(json.dumps(sidecar, indent=2, sort_keys=True) + "\n")
        os.replace(tmp_index, out_dir / INDEX_FILE)
        os.replace(tmp_ids, out_dir / IDS_FILE)
        os.replace(tmp_side, out_dir / SIDECAR_FILE)
        return cls(out_dir, sidecar, index)

    @staticmethod
    def _measure(index, vectors, ids, ef_search, target, n_queries, seed) -> tuple[float, int, dict]:
        """(recall@10, chosen efSearch, {efSearch: recall}) on a seeded sample of the indexed vectors."""
        if len(vectors) < 2:
            return 1.0, ef_search or EF_SEARCH_LADDER[0], {}
        rng = np.random.default_rng(seed)
        sample = np.sort(rng.choice(len(vectors), size=min(n_queries, len(vectors)), replace=False))
        queries = vectors[sample]
        k = min(10, len(vectors) - 1)
        exact = ids[exact_neighbours(vectors, queries, k + 1)]
        tried: dict[str, float] = {}
        ladder = [ef_search] if ef_search else list(EF_SEARCH_LADDER)
        chosen = ladder[-1]
        for ef in ladder:
            _hnsw(index).hnsw.efSearch = ef
            approx = index.search(queries, k + 1)[1]
            tried[str(ef)] = round(recall_at_k(approx, exact, ids[sample], k), 5)
            if tried[str(ef)] >= target:
                chosen = ef
                break
        else:  # target out of reach: the smallest efSearch within PLATEAU of the best recall seen
            best = max(tried.values())
            chosen = min(int(ef) for ef, r in tried.items() if r >= best - PLATEAU)
        return tried[str(chosen)], chosen, tried

    @classmethod
    def open(cls, out_dir: Path, embedder: Any, mmap: bool = True) -> "VectorIndex":
        """Open a built index; IndexMismatchError when `embedder` differs in name or dimension."""
        import faiss

        out_dir = Path(out_dir)
        side = out_dir / SIDECAR_FILE
        if not side.is_file() or not (out_dir / INDEX_FILE).is_file():
            raise IndexMismatchError(f"no vector index in {out_dir}")
        sidecar = json.loads(side.read_text())
        built, given = sidecar["embedder"], embedder_info(embedder)
        if built["name"] != given["name"] or int(built["dim"]) != given["dim"]:
            raise IndexMismatchError(
                f"vector index in {out_dir} was built with {built['name']} (dim {built['dim']}), "
                f"not {given['name']} (dim {given['dim']}); re-embed with `mathindex reembed`"
            )
        if given["revision"] and built.get("revision") and built["revision"] != given["revision"]:
            log.warning("vector index revision %s differs from embedder revision %s", built["revision"][:12], given["revision"][:12])
        flags = faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY if mmap else 0
        index = faiss.read_index(str(out_dir / INDEX_FILE), flags)
        _hnsw(index).hnsw.efSearch = int(sidecar["ef_search"])
        return cls(out_dir, sidecar, index)

    @property
    def count(self) -> int:
        return int(self._index.ntotal)

    def search(self, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64, scores float32), each (n_queries, k), best first; -1 ids pad missing hits."""
        q = np.ascontiguousarray(np.atleast_2d(query_vectors), dtype=np.float32)
        dim = int(self.sidecar["embedder"]["dim"])
        if q.shape[1] != dim:
            raise IndexMismatchError(f"query vectors have dimension {q.shape[1]}, index has {dim}")
        if self.count == 0:
            return np.full((len(q), k), -1, dtype=np.int64), np.zeros((len(q), k), dtype=np.float32)
        scores, ids = self._index.search(q, k)
        return ids.astype(np.int64), scores.astype(np.float32)


def content_key(texts: pa.Table, info: dict, index_options: dict) -> str:
    """sha256 of everything an index build depends on: the embedder, the index options and the
    (text_id, text sha256) rows in order. Equal keys mean an identical index can be reused."""
    import hashlib

    h = hashlib.sha256(json.dumps({"embedder": info, "options": index_options}, sort_keys=True).encode())
    h.update(np.ascontiguousarray(texts.column("text_id").to_numpy(), dtype=np.int64).tobytes())
    h.update("\n".join(texts.column("sha256").to_pylist()).encode())
    return h.hexdigest()


def reuse_index(previous: Path, key: str, out_dir: Path) -> bool:
    """Link (or copy) the index files of `previous` into `out_dir` when its sidecar has content key
    `key`; False (nothing written) otherwise. Published files are never modified in place (every
    write is a temporary renamed over), so hard links are safe; the caller checks the files against
    their release's manifest first (`tasks.embed.reusable_index`), so damage is never linked on."""
    import shutil

    side = Path(previous) / SIDECAR_FILE
    try:
        if json.loads(side.read_text()).get("content_key") != key:
            return False
    except (OSError, ValueError):
        return False
    if not all((Path(previous) / f).is_file() for f in (INDEX_FILE, IDS_FILE)):
        return False
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (INDEX_FILE, IDS_FILE, SIDECAR_FILE):  # the sidecar (what `open` reads) last
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
    The reembed flow passes an existing release's `embedding_texts` table and a new embedder. Texts
    are taken in text_id order, whatever order the table has, so both flows build the same index.
    """
    from mathindex.embed.embedder import EmbedStats, embed_texts

    t0 = time.perf_counter()
    texts = texts.sort_by("text_id")  # the release flow's (node_id, facet) order and a table's are one
    stats = EmbedStats(rows=texts.num_rows)
    key = content_key(texts, embedder_info(embedder), index_options)
    if previous is not None and reuse_index(previous, key, out_dir):
        stats.index_reused, stats.seconds = True, time.perf_counter() - t0
        log.info("vector index reused from %s (same texts, embedder and options)", previous)
        return VectorIndex.open(out_dir, embedder), stats
    vectors = embed_texts(texts, embedder, cache_dir, stats)
    index = VectorIndex.build(vectors, texts.column("text_id").to_numpy(), embedder, out_dir,
                              content_key=key, **index_options)
    return index, stats
