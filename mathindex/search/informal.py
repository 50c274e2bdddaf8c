"""The `informal` channel: prose queries' first candidates re-ordered by their informal renderings.

The vector index embeds a node's name_signature, docstring and description; its informal rendering
(`embedding_texts` facet `informal`) is in the lexical index only, since embedding all 300 k of them
was two thirds of a release's embedding cost (issue 10, third session). At query time the engine
embeds the renderings of a prose query's first candidates only (without the glosses of used
constants, `informal.rules.without_context`), with the release's own embedder, and lists them by
cosine to the query vector: a list the fusion weighs like any channel's. A LaTeX statement has no
informal rendering; its own prose (`latex_body`) stands in, so that a corpus's LaTeX nodes are not
left out of the list (on the sample they were, and its natural queries fell 78.8 -> 68.5 nDCG@10).
Vectors are kept per name (LRU), so candidates that recur across queries are embedded once, and,
given the release root's embedding cache (`embed.embedder.EmbeddingCache` of the release's embedder),
they are looked up there by the sha256 of the text and new ones written back in shards of
FLUSH_AT (and at `flush`): a rendering is embedded once per model. The release's embed stage embeds
every rendering into that store (`embed_renderings`, `tasks.embed.warm_renderings`), so the bench
stage and the server find them there; the LRU and the write-back serve releases built before.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from mathindex.embed.channel import encode_on_one_thread
from mathindex.embed.embedder import EmbeddingCache, cache_texts
from mathindex.informal.rules import GLOSS_PATTERN  # without_context's pattern: one owner of what a gloss is
from mathindex.names import shared_names
from mathindex.search import weights as settings
from mathindex.channel import Channel, ChannelContext, Hits, Query
from mathindex.store.layout import ReleaseLayout

FACETS = ("informal", "latex_body")  # a node's text: the first of these it has
# `informal.rules.without_context` as a polars (Rust regex) pattern: the first gloss and all after it
_GLOSSES = GLOSS_PATTERN.pattern + "(?s:.*)$"
CACHE_SIZE = 20_000  # vectors kept (384 float32 each: about 30 MB)
FLUSH_AT = 256  # new vectors written back to the store as one shard
REFRESH_SECONDS = 60.0  # on a miss, shards other processes added since are looked for at most this often

log = logging.getLogger(__name__)


class InformalReranker(Channel):
    """Informal renderings by node name (from an `embedding_texts` table) and `encode` (texts ->
    unit vectors, the query's embedder); `rerank(query_vector, names)` lists the names that have a
    rendering by cosine, best first. As a channel it re-ranks a prose query's first
    `weights.INFORMAL_DEPTH` fused candidates."""

    name = "informal"
    needs = ("embedding",)

    def __init__(self, texts: Path, encode: Callable[[list[str]], np.ndarray], cache_size: int = CACHE_SIZE,
                 store=None, shared: dict[str, str] | None = None, lazy: bool = False):
        """`store`: an EmbeddingCache of the same embedder as `encode`, or None (the LRU only).
        `shared`: name -> the str object to key a name with (the engine's), if any. `lazy` (a
        one-query engine): the renderings of the names asked are read as they are asked, with a
        filter on their names (reading every rendering was 0.55 s of a prose CLI search's CPU on
        whole Mathlib, the filtered read 0.1 s): the same texts, so the same ranks."""
        self._texts_file, self._lazy = texts, lazy
        self._looked: set[str] = set()  # with `lazy`: the names whose rendering was looked for
        self._text: dict[int, str] = {}  # row -> its text, once asked (a polars cut of 30 costs 0.15-0.5 ms)
        if lazy:
            self.row: dict[str, int] = {}
            self._raw, self._glossed = pa.array([], pa.string()), np.zeros(0, dtype=bool)
        else:
            table = rendering_rows(pl.scan_parquet(texts))
            self.row = dict(zip(shared_names(table.get_column("name").to_list(), shared), range(table.height)))
            # one Arrow string array, not 300 k Python strings; each rendering's glosses are cut as it is
            # asked for (`texts`): cutting all 300 k of whole Mathlib was 0.35 s of a CLI search's CPU
            self._raw = table.get_column("text").to_arrow()
            self._glossed = table.get_column("glossed").to_numpy()
        self.encode = encode
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the server ranks from several threads
        self.store = store
        self._reader = store.reader() if store is not None else None
        self._pending: dict[bytes, np.ndarray] = {}  # encoded here, not yet in the store
        self._refreshed = time.monotonic()
        self.stats = {"lru": 0, "store": 0, "encoded": 0}
        if store is not None:  # what is pending when the reranker goes (or the process ends) is kept
            weakref.finalize(self, _write, store, self._pending, self._lock)

    @classmethod
    def open(cls, context: ChannelContext) -> InformalReranker | None:
        """Over the release's renderings, with the embedding channel's embedder, its vectors kept in
        the root's embedding cache (a rendering is embedded once per model); None without that
        channel or without renderings (a sample without them)."""
        vector = context.opened.get("embedding")
        if vector is None:
            return None
        embedder = vector.embedder
        store = EmbeddingCache(context.cache_dir, embedder.name, embedder.revision, embedder.dim)
        reranker = cls(ReleaseLayout(context.release).table("embedding_texts"),
                       lambda texts: encode_on_one_thread(embedder, texts), store=store, shared=context.shared,
                       lazy=context.lazy)
        return reranker if reranker.has_renderings() else None

    def has_renderings(self) -> bool:
        """Whether the release has any rendering (with `lazy`, its facet column is read for it)."""
        if not self._lazy:
            return len(self.row) > 0
        facets = pl.scan_parquet(self._texts_file).filter(pl.col("facet").is_in(FACETS)).select(pl.len()).collect()
        return facets.item() > 0

    def _look_up(self, names: list[str]) -> None:
        """With `lazy`: the renderings of those of `names` not looked for yet, read (rendering_rows
        over the rows of those names: each name's own row, its text cut now)."""
        with self._lock:
            new = [n for n in dict.fromkeys(names) if n not in self._looked]
            if not self._lazy or not new:
                return
            found = _cut(rendering_rows(pl.scan_parquet(self._texts_file).filter(pl.col("name").is_in(new))))
            for name, text in zip(found.get_column("name").to_list(), found.get_column("text").to_list()):
                row = len(self.row)
                self.row[name], self._text[row] = row, text
            self._looked.update(new)

    @classmethod
    def runs(cls, query: Query) -> bool:
        """Prose queries with a vector (the embedding channel's, which runs before) only."""
        return bool(settings.INFORMAL_DEPTH) and query.vector is not None and query.kind == "words"

    def hits(self, query: Query, k: int) -> Hits | None:
        """Re-ranks the head, so `k` is not read."""
        if not self.runs(query):
            return None
        return self.rerank(query.vector[0], query.head(settings.INFORMAL_DEPTH))

    def __len__(self) -> int:
        return len(self.row)

    def text(self, name: str) -> str | None:
        """The text the channel embeds for `name` (an informal rendering without its glosses, else
        a LaTeX statement's body), None when it has neither."""
        self._look_up([name])
        return self.texts([name])[0] if name in self.row else None

    def texts(self, names: list[str]) -> list[str]:
        """`text` of each of `names` (each must have one), the glosses of those not asked before cut
        in one pass."""
        rows = [self.row[n] for n in names]
        new = [i for i in dict.fromkeys(rows) if i not in self._text]
        if new:
            raw = [self._raw[i].as_py() for i in new]
            cut = [j for j, i in enumerate(new) if self._glossed[i]]
            if cut:
                for j, text in zip(cut, without_glosses(pl.Series([raw[j] for j in cut], dtype=pl.String)).to_list()):
                    raw[j] = text
            self._text.update(zip(new, raw))  # the same texts whichever thread writes them
        return [self._text[i] for i in rows]

    def vectors(self, names: list[str]) -> np.ndarray:
        """Unit vectors of the renderings of `names` (each must have one), from the cache or embedded now."""
        with self._lock:
            known = {n: self._vectors[n] for n in names if n in self._vectors}
        todo = [n for n in dict.fromkeys(names) if n not in known]
        self.stats["lru"] += len(names) - len(todo)
        if todo and self._reader is not None:
            todo = self._from_store(todo, known)
        if todo:
            new = self.encode(self.texts(todo))
            known.update(zip(todo, new))
            self.stats["encoded"] += len(todo)
            if self.store is not None:
                self._keep(todo, new)
        with self._lock:
            for n in names:
                self._vectors[n] = known[n]
                self._vectors.move_to_end(n)
            while len(self._vectors) > self.cache_size:
                self._vectors.popitem(last=False)
        return np.stack([known[n] for n in names])

    def _keys(self, names: list[str]) -> list[bytes]:
        return [hashlib.sha256(t.encode("utf-8")).digest() for t in self.texts(names)]

    def _from_store(self, names: list[str], known: dict) -> list[str]:
        """Fills `known` with the store's vectors of `names` (and this process's unwritten ones);
        returns the names it has not."""
        keys = self._keys(names)
        with self._lock:
            pending = {n: self._pending[k] for n, k in zip(names, keys) if k in self._pending}
        known.update(pending)
        rest = [(n, k) for n, k in zip(names, keys) if n not in pending]
        if not rest:
            return []
        want = np.array([k for _, k in rest], dtype="S32")
        found, vectors = self._reader.get(want)
        if not found.all() and time.monotonic() - self._refreshed > REFRESH_SECONDS:
            self._refreshed = time.monotonic()
            self._reader.refresh()
            found, vectors = self._reader.get(want)
        for (n, _), ok, v in zip(rest, found, vectors):
            if ok:
                known[n] = v
        self.stats["store"] += int(found.sum()) + len(pending)
        return [n for (n, _), ok in zip(rest, found) if not ok]

    def _keep(self, names: list[str], vectors: np.ndarray) -> None:
        with self._lock:
            for key, v in zip(self._keys(names), vectors):
                self._pending[key] = np.asarray(v, dtype=np.float32)
            full = len(self._pending) >= FLUSH_AT
        if full:
            self.flush()

    def flush(self) -> None:
        """Writes the vectors encoded here and not yet stored into the store, as one shard."""
        if self.store is not None and _write(self.store, self._pending, self._lock):
            self._reader.refresh()

    def warm(self, embedder, limit: int = 0) -> dict:
        """Embeds every rendering not yet in the store (the first `limit` by name, 0: all) with
        `embedder` (`embed_renderings`), so that no query embeds one. Returns its counts."""
        if self.store is None or self._lazy:
            raise ValueError("the informal channel has no store to warm" if self.store is None else
                             "a lazy informal channel reads only the renderings asked for: nothing to warm")
        raw = pl.DataFrame({"text": self._raw, "glossed": self._glossed})
        texts = _cut(raw if not limit else raw.head(limit)).get_column("text").to_arrow()
        counts = embed_renderings(texts, embedder, self.store.root)
        self._reader.refresh()
        return counts

    def rerank(self, query_vector: np.ndarray, names: list[str]) -> list[tuple[str, float]]:
        """(name, cosine) of the names with a rendering, best first (ties by name)."""
        self._look_up(names)
        have = [n for n in dict.fromkeys(names) if n in self.row]
        if not have:
            return []
        sims = self.vectors(have) @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        return sorted(zip(have, (float(s) for s in sims)), key=lambda x: (-x[1], x[0]))


def rendering_texts(texts: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """(name, text) of what the channel embeds per node, from an `embedding_texts` table: its
    informal rendering without the glosses, else its LaTeX body; one row per name, sorted by name."""
    return _cut(rendering_rows(texts)).sort("pref", "name").select("name", "text")


def rendering_rows(texts: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
    """`rendering_texts` with each rendering's glosses still in (`glossed`: the rows whose glosses
    `without_glosses` cuts) and its facet's preference (`pref`), in no order: sorting 690 k names
    was a third of the channel's open on whole Mathlib."""
    return (texts.lazy().filter(pl.col("facet").is_in(FACETS))
            .with_columns(pref=pl.col("facet").replace_strict(FACETS, range(len(FACETS)), return_dtype=pl.Int8))
            .sort("pref", maintain_order=True).unique("name", keep="first", maintain_order=True)
            .select("name", "text", "pref", glossed=pl.col("facet") == FACETS[0]).collect())


def without_glosses(texts: pl.Series) -> pl.Series:
    """Informal renderings without their glosses (`informal.rules.without_context`, in polars)."""
    return texts.str.replace(_GLOSSES, "")


def _cut(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` (text, glossed) with the glossed ones' glosses cut."""
    return rows.with_columns(text=pl.when(pl.col("glossed")).then(without_glosses(rows.get_column("text")))
                             .otherwise(pl.col("text")))


def embed_renderings(texts: pa.Array | pa.ChunkedArray, embedder, cache_dir: Path) -> dict:
    """Embeds the renderings `texts` not yet in the embedding cache under `cache_dir` (the one the
    channel reads: keyed by the text's sha256, per model) with `embedder`: the embed stage's
    `cache_texts`, its worker pool chunk by chunk, each chunk stored as done, so an interrupted run
    resumes; no vector is read back. Returns its counts (renderings, distinct, cached, embedded, seconds)."""
    stats = cache_texts(pa.table({"text": texts}), embedder, cache_dir)
    return {"renderings": stats.rows, "distinct": stats.distinct, "cached": stats.cached,
            "embedded": stats.embedded, "seconds": round(stats.seconds, 1)}


def _write(store, pending: dict, lock) -> bool:
    """Moves `pending` (sha256 -> vector) into `store` as one shard; a store that cannot be written
    (a read-only root) is logged once per call and the vectors stay in memory only."""
    with lock:
        if not pending:
            return False
        keys = np.array(list(pending), dtype="S32")
        vectors = np.stack(list(pending.values()))
        pending.clear()
    try:
        store.add(keys, vectors)
    except OSError as exc:
        log.warning("informal channel: %d rendering vectors not written to %s (%s)", len(keys), store.dir, exc)
        return False
    return True
