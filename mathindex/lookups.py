"""String look-ups that open cheaply: a sorted list of distinct keys searched by bisect instead of a
dict built over every key (a dict of the 400 k formal keys or 311 k constant names of whole Mathlib
cost 0.2-0.85 s of a one-query CLI's open), and names by their last dotted component. Low level:
imports nothing of mathindex."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def is_sorted_distinct(keys: Sequence[str]) -> bool:
    """Whether `keys` ascend strictly (Python's str order: code points)."""
    return all(map(operator.lt, keys, itertools.islice(keys, 1, None)))


class SortedKeys:
    """Distinct strings in ascending order, each with its position (`index`): a dict's look-up by
    bisect, without the dict. Built from any list (sorted here when it is not already)."""

    def __init__(self, keys: list[str]):
        self.keys = keys if is_sorted_distinct(keys) else sorted(set(keys))

    def index(self, key: str) -> int | None:
        """The key's position, or None."""
        i = bisect.bisect_left(self.keys, key)
        return i if i < len(self.keys) and self.keys[i] == key else None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.index(key) is not None

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)


def last_component(name: str) -> str:
    """`Nat.Prime.two_le` -> `two_le` (the whole name when it has no dot)."""
    return name.rsplit(".", 1)[-1]


class ByLast:
    """`names` by their last dotted component (`last_component`), as positions or names, in the
    names' order: a dict of lists (`get`, `[]`, `in`, iteration over the distinct last components)
    made as one Arrow sort (0.15 s over whole Mathlib's 311 k constants against 0.3-0.5 s for the dict)."""

    def __init__(self, names: Sequence[str]):
        self._names = names
        lasts = pa.array([last_component(n) for n in names], pa.string())
        order = pc.sort_indices(lasts)  # stable: equal lasts keep their names' order
        self._lasts: list[str] = lasts.take(order).to_pylist()
        self._order = order.to_numpy().astype(np.int64)

    def positions(self, last: str) -> np.ndarray:
        """The positions of the names whose last component is `last`, ascending (empty: none)."""
        lo = bisect.bisect_left(self._lasts, last)
        hi = bisect.bisect_right(self._lasts, last, lo)
        return self._order[lo:hi]

    def get(self, last: str, default: list[str] | None = None) -> list[str] | None:
        """The names whose last component is `last`, in order; `default` when there is none."""
        at = self.positions(last)
        return [self._names[i] for i in at.tolist()] if at.size else default

    def __getitem__(self, last: str) -> list[str]:
        found = self.get(last)
        if found is None:
            raise KeyError(last)
        return found

    def __contains__(self, last: object) -> bool:
        if not isinstance(last, str):
            return False
        i = bisect.bisect_left(self._lasts, last)
        return i < len(self._lasts) and self._lasts[i] == last

    def __iter__(self) -> Iterator[str]:
        """Every distinct last component, ascending."""
        return iter(dict.fromkeys(self._lasts))


def last_index_in(values: pa.Array | pa.ChunkedArray, keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """For each of `values`, the position of its last occurrence in `keys` (-1: none), as a dict
    `{key: position}` built over `keys` would give it, in Arrow (no Python object per key)."""
    n = len(keys)
    if n == 0:
        return np.full(len(values), -1, dtype=np.int64)
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    reversed_keys = keys.take(pa.array(np.arange(n - 1, -1, -1, dtype=np.int64)))
    first = pc.index_in(values, value_set=reversed_keys)  # the first in reverse: the last
    return (n - 1 - pc.fill_null(first, n).to_numpy(zero_copy_only=False)).astype(np.int64)
