"""An index's vectors read a block at a time (issue 32: the flow never holds every vector at once).

`VectorIndex.build` and `update` and the exact search of the recall truth (`embed.truth`) take the
rows as a `VectorRows`: unit float32 vectors in row order, read by position. A release reads them
from the embedding cache (`of_cache`: the texts' keys, one block of ADD_ROWS rows at a time, about
100 MB at dimension 384), so its flow holds the int8 graph and one block, never the 590 MB float32
array of whole Mathlib's 384 k texts. Tests and benchmarks hand in an array (`of_array`); the two
give the same index bytes, block for block."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from mathindex.embed.base import EmbedderError

ADD_ROWS = 65_536  # rows per block: one HNSW add, one exact-search step


class VectorRows:
    """`n` vectors of dimension `dim`; `read(positions)` gives their float32 rows."""

    def __init__(self, n: int, dim: int, read: Callable[[np.ndarray], np.ndarray]):
        self.n, self.dim, self._read = int(n), int(dim), read

    @classmethod
    def of_array(cls, vectors: np.ndarray) -> "VectorRows":
        vectors = np.asarray(vectors)
        if vectors.ndim != 2:
            raise ValueError(f"vectors have shape {vectors.shape}, not (rows, dimension)")
        return cls(len(vectors), vectors.shape[1], lambda positions: vectors[positions])

    @classmethod
    def of_cache(cls, cache, keys: np.ndarray) -> "VectorRows":
        """The vectors of S32 `keys` in the embedding cache `cache` (`embed.embedder.EmbeddingCache`);
        a key the cache lacks is a one-line EmbedderError when its block is read."""
        def read(positions: np.ndarray) -> np.ndarray:
            out = np.empty((len(positions), cache.dim), dtype=np.float32)
            found = cache.read(keys[positions], out)
            if not found.all():
                raise EmbedderError(f"{int((~found).sum())} vectors of {cache.name} missing from the cache in "
                                    f"{cache.dir} (removed while the index was built?)")
            return out

        return cls(len(keys), cache.dim, read)

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        """The bytes of the rows as one float32 array (what a flat index would hold)."""
        return self.n * self.dim * 4

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The rows at `positions` as one contiguous float32 array."""
        positions = np.asarray(positions, dtype=np.int64)
        return np.ascontiguousarray(self._read(positions), dtype=np.float32).reshape(len(positions), self.dim)

    def blocks(self, size: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, rows) for consecutive blocks of `size` (ADD_ROWS) rows, in row order."""
        size = size or ADD_ROWS
        for start in range(0, self.n, size):
            yield start, self.take(np.arange(start, min(start + size, self.n)))

    def permuted(self, order: np.ndarray) -> "VectorRows":
        """The rows in the order `order` (positions into these rows)."""
        order = np.asarray(order, dtype=np.int64)
        return VectorRows(len(order), self.dim, lambda positions: self._read(order[positions]))

    def column_range(self) -> tuple[np.ndarray, np.ndarray]:
        """(per-dimension minimum, maximum) over every row, a block at a time."""
        low = np.full(self.dim, np.inf, dtype=np.float32)
        high = np.full(self.dim, -np.inf, dtype=np.float32)
        for _, block in self.blocks():
            np.minimum(low, block.min(axis=0), out=low)
            np.maximum(high, block.max(axis=0), out=high)
        return low, high


def as_rows(vectors: "np.ndarray | VectorRows") -> VectorRows:
    return vectors if isinstance(vectors, VectorRows) else VectorRows.of_array(vectors)
