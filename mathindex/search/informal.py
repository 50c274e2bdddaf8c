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
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from mathindex.embed.rules import without_context

FACETS = ("informal", "latex_body")  # a node's text: the first of these it has
CACHE_SIZE = 20_000  # vectors kept (384 float32 each: about 30 MB)


class InformalReranker:
    """Informal renderings by node name (from an `embedding_texts` table) and an embedder;
    `rerank(query_vector, names)` lists the names that have a rendering by cosine, best first."""

    def __init__(self, texts: Path, embedder, cache_size: int = CACHE_SIZE):
        table = pq.read_table(texts, columns=["name", "facet", "text"], filters=[("facet", "in", list(FACETS))])
        self.names = table.column("name").to_pylist()
        self.row: dict[str, int] = {}
        rank = {f: i for i, f in enumerate(FACETS)}
        facets = table.column("facet").to_pylist()
        for i, (n, f) in enumerate(zip(self.names, facets)):
            if n not in self.row or rank[f] < rank[facets[self.row[n]]]:
                self.row[n] = i
        self.informal = [f == FACETS[0] for f in facets]
        self.texts = table.column("text").combine_chunks()
        self.embedder = embedder
        self.cache_size = cache_size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # the server ranks from several threads

    def __len__(self) -> int:
        return len(self.row)

    def text(self, name: str) -> str | None:
        """The text the channel embeds for `name` (an informal rendering without its glosses, else
        a LaTeX statement's body), None when it has neither."""
        i = self.row.get(name)
        if i is None:
            return None
        text = self.texts[i].as_py()
        return without_context(text) if self.informal[i] else text

    def vectors(self, names: list[str]) -> np.ndarray:
        """Unit vectors of the renderings of `names` (each must have one), from the cache or embedded now."""
        with self._lock:
            known = {n: self._vectors[n] for n in names if n in self._vectors}
        todo = [n for n in dict.fromkeys(names) if n not in known]
        if todo:
            known.update(zip(todo, self.embedder.encode([self.text(n) for n in todo])))
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
