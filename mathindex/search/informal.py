"""The `informal` channel: prose queries' first candidates re-ordered by their informal renderings.

The vector index embeds a node's name_signature, docstring and description; its informal rendering
(`embedding_texts` facet `informal`) is in the lexical index only, since embedding all 300 k of them
was two thirds of a release's embedding cost (issue 10, third session). At query time the engine
embeds the renderings of a prose query's first candidates only (without the glosses of used
constants, `embed.rules.without_context`), with the release's own embedder, and lists them by
cosine to the query vector: a list the fusion weighs like any channel's. A LaTeX statement has no
informal rendering; its own prose (`latex_body`) stands in, so that a corpus's LaTeX nodes are not
left out of the list (on the sample they were, and its natural queries fell 78.8 -> 68.5 nDCG@10).
Vectors are kept per name (LRU), so candidates that recur across queries are embedded once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from mathindex.embed.rules import _CONTEXT  # without_context's pattern: one owner of what a gloss is

FACETS = ("informal", "latex_body")  # a node's text: the first of these it has
# `embed.rules.without_context` as a polars (Rust regex) pattern: the first gloss and all after it
_GLOSSES = _CONTEXT.pattern + "(?s:.*)$"
CACHE_SIZE = 20_000  # vectors kept (384 float32 each: about 30 MB)


class InformalReranker:
    """Informal renderings by node name (from an `embedding_texts` table) and `encode` (texts ->
    unit vectors, the query's embedder); `rerank(query_vector, names)` lists the names that have a
    rendering by cosine, best first."""

    def __init__(self, texts: Path, encode: Callable[[list[str]], np.ndarray], cache_size: int = CACHE_SIZE):
        table = (pl.scan_parquet(texts).filter(pl.col("facet").is_in(FACETS))
                 .with_columns(pref=pl.col("facet").replace_strict(FACETS, range(len(FACETS)), return_dtype=pl.Int8),
                               text=pl.when(pl.col("facet") == FACETS[0]).then(pl.col("text").str.replace(_GLOSSES, ""))
                               .otherwise(pl.col("text")))
                 .sort("pref", "name").unique("name", keep="first", maintain_order=True)
                 .select("name", "text").collect())
        self.row = dict(zip(table.get_column("name").to_list(), range(table.height)))
        self.texts = table.get_column("text").to_arrow()  # one Arrow string array, not 300 k Python strings
        self.encode = encode
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the server ranks from several threads

    def __len__(self) -> int:
        return len(self.row)

    def text(self, name: str) -> str | None:
        """The text the channel embeds for `name` (an informal rendering without its glosses, else
        a LaTeX statement's body), None when it has neither."""
        i = self.row.get(name)
        return None if i is None else self.texts[i].as_py()

    def vectors(self, names: list[str]) -> np.ndarray:
        """Unit vectors of the renderings of `names` (each must have one), from the cache or embedded now."""
        with self._lock:
            known = {n: self._vectors[n] for n in names if n in self._vectors}
        todo = [n for n in dict.fromkeys(names) if n not in known]
        if todo:
            known.update(zip(todo, self.encode([self.text(n) for n in todo])))
        with self._lock:
            for n in names:
                self._vectors[n] = known[n]
                self._vectors.move_to_end(n)
            while len(self._vectors) > self.cache_size:
                self._vectors.popitem(last=False)
        return np.stack([known[n] for n in names])

    def rerank(self, query_vector: np.ndarray, names: list[str]) -> list[tuple[str, float]]:
        """(name, cosine) of the names with a rendering, best first (ties by name)."""
        have = [n for n in dict.fromkeys(names) if n in self.row]
        if not have:
            return []
        sims = self.vectors(have) @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
        return sorted(zip(have, (float(s) for s in sims)), key=lambda x: (-x[1], x[0]))
